//! `saltus plot`: time histories of a results file drawn to PNG and SVG, the drawn curve being
//! the dataset's values, and selectors that do not name a per-record series refused with the
//! file and the selector named.

use std::path::{Path, PathBuf};

mod common;
use common::{saltus, svg_polylines};

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli_plot", name)
}

/// Run the shipped slider–crank for 1.5 s (past its first stroke) into `dir/crank.h5`.
fn crank_results(dir: &Path) -> PathBuf {
    common::run_model(dir, "slider_crank", "crank.h5", "1.5")
}

/// The slider's x position, read straight from the file.
fn slider_x(path: &Path) -> Vec<f64> {
    let f = hdf5_metno::File::open(path).unwrap();
    let names: Vec<hdf5_metno::types::VarLenUnicode> =
        f.dataset("nodes/names").unwrap().read_raw().unwrap();
    let k = names.iter().position(|n| n.as_str() == "slider").unwrap();
    let p = f
        .dataset("nodes/position")
        .unwrap()
        .read_dyn::<f64>()
        .unwrap();
    (0..p.shape()[0]).map(|i| p[[i, k, 0]]).collect()
}

/// Pixel coordinates of the longest `<polyline>` of an SVG (the data curve; the legend's
/// sample line has two points).
fn longest_polyline(svg: &str) -> Vec<(f64, f64)> {
    svg_polylines(svg).into_iter().max_by_key(Vec::len).unwrap()
}

#[test]
fn cli_plot_draws_the_dataset_values_against_time() {
    let dir = scratch("values");
    let h5 = crank_results(&dir);
    let o = saltus(
        &[
            "plot",
            "crank.h5",
            "nodes/position[slider].x",
            "-o",
            "x.svg",
        ],
        &dir,
    );
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("1 series of 1501 records"), "{stdout}");
    let svg = std::fs::read_to_string(dir.join("x.svg")).unwrap();
    assert!(
        svg.contains("nodes/position[slider, x] [m]"),
        "legend with unit"
    );
    assert!(svg.contains("time [s]"));
    let x = slider_x(&h5);
    let pts = longest_polyline(&svg);
    assert_eq!(pts.len(), x.len(), "one vertex per record");
    // Pixels are an affine image of (t, x): fit the map on the extreme values and check every
    // vertex. plotters rounds to whole pixels, so 1 px is the resolution.
    let (imin, imax) = (0..x.len()).fold((0, 0), |(lo, hi), i| {
        (
            if x[i] < x[lo] { i } else { lo },
            if x[i] > x[hi] { i } else { hi },
        )
    });
    assert!(x[imax] - x[imin] > 0.1, "the slider moves");
    let scale = (pts[imax].1 - pts[imin].1) / (x[imax] - x[imin]);
    assert!(scale < 0.0, "larger values are drawn higher");
    for (i, (xi, p)) in x.iter().zip(&pts).enumerate() {
        let y = pts[imin].1 + scale * (xi - x[imin]);
        assert!((p.1 - y).abs() <= 1.0, "record {i}: y {} vs {y}", p.1);
    }
    // Time runs left to right at a constant pixel rate (uniform step).
    let dx = (pts[x.len() - 1].0 - pts[0].0) / (x.len() - 1) as f64;
    for (i, p) in pts.iter().enumerate() {
        assert!((p.0 - pts[0].0 - dx * i as f64).abs() <= 1.0, "record {i}");
    }
}

#[test]
fn cli_plot_writes_png_with_several_series() {
    let dir = scratch("png");
    crank_results(&dir);
    let o = saltus(
        &[
            "plot",
            "crank.h5",
            "nodes/position[slider]",
            "energy/total",
            "solver/iterations[smooth]",
            "--size",
            "640,400",
        ],
        &dir,
    );
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("crank.png: 5 series"), "{stdout}");
    let png = std::fs::read(dir.join("crank.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height, big-endian, at bytes 16..24.
    let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((w, h), (640, 400));
}

#[test]
fn cli_plot_refuses_what_is_not_a_time_history() {
    let dir = scratch("errors");
    crank_results(&dir);
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["nodes/position[nope].x"],
            &[
                "crank.h5",
                "nodes/position[nope].x",
                "no `nope` in `/nodes/names`",
                "slider",
            ],
        ),
        (
            &["nodes/nothing"],
            &["crank.h5", "no dataset `/nodes/nothing`"],
        ),
        (&["nodes/names"], &["not one per record"]),
        (&["nodes/position[0, 7]"], &["index 7 out of range"]),
        (&["nodes/position[0, q]"], &["`q`", "x, y, z"]),
        (
            &["energy/total", "-o", "crank.h5"],
            &["overwrite the results file"],
        ),
    ];
    for (args, needles) in cases {
        let mut all = vec!["plot", "crank.h5"];
        all.extend_from_slice(args);
        let o = saltus(&all, &dir);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        for n in needles {
            assert!(err.contains(n), "{args:?}: `{n}` missing from {err}");
        }
    }
    let o = saltus(&["plot", "crank.h5", "energy/total", "-o", "e.jpg"], &dir);
    assert!(String::from_utf8_lossy(&o.stderr).contains(".png or .svg"));
    let o = saltus(&["plot", "missing.h5", "energy/total"], &dir);
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.h5"));
    // The results file is untouched by the refused overwrite.
    assert!(hdf5_metno::File::open(dir.join("crank.h5")).is_ok());
}
