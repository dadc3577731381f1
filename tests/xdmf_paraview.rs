//! The XDMF sidecars in a real ParaView: `RUN.xdmf` in the XDMF Reader and `RUN.xdmf3` in
//! both Xdmf3 readers show the nodes where `/nodes/position` has them, the beams as line
//! segments and the contacts at `/contacts/point`, at the first and the last frame.
//!
//! Needs `pvpython` (Debian `paraview`, `python3-paraview`) and `xvfb-run`; without them the
//! test prints why and returns. `SALTUS_XDMF_PNG=path.png` also renders the last frame of the
//! flexible crank (the picture in `docs/paraview.png`).

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{run_model, saltus_ok as saltus};

fn scratch(name: &str) -> PathBuf {
    common::scratch("xdmf", name)
}

/// Why ParaView cannot be used here, if it cannot.
fn paraview_missing() -> Option<String> {
    for tool in ["pvpython", "xvfb-run"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !found {
            return Some(format!(
                "`{tool}` not found (Debian: apt-get install paraview python3-paraview xvfb)"
            ));
        }
    }
    None
}

/// One block of a reader's output at one time.
#[derive(Debug)]
struct Block {
    name: String,
    points: usize,
    cells: usize,
    bounds: [f64; 6],
    arrays: Vec<String>,
    /// Body axes per point (`axis_1` … `axis_3`), the first 64 points.
    axes: Vec<Vec<[f64; 3]>>,
}

fn probe(file: &Path, reader: &str, times: &[f64], png: Option<&Path>) -> Vec<Vec<Block>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/xdmf/probe.py");
    let times: Vec<String> = times.iter().map(|t| format!("{t:e}")).collect();
    let mut cmd = Command::new("xvfb-run");
    cmd.args(["-a", "pvpython", script])
        .arg(file)
        .arg(reader)
        .arg(times.join(","));
    if let Some(p) = png {
        cmd.arg(p);
    }
    let o = cmd.output().expect("run pvpython");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{reader}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out: Vec<Vec<Block>> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| Block {
                    name: b["name"].as_str().unwrap_or("").to_string(),
                    points: b["points"].as_u64().unwrap() as usize,
                    cells: b["cells"].as_u64().unwrap() as usize,
                    bounds: std::array::from_fn(|i| b["bounds"][i].as_f64().unwrap()),
                    arrays: b["arrays"].as_object().unwrap().keys().cloned().collect(),
                    axes: ["axis_1", "axis_2", "axis_3"]
                        .iter()
                        .filter_map(|a| b["values"][a].as_array())
                        .map(|pts| {
                            pts.iter()
                                .map(|p| std::array::from_fn(|i| p[i].as_f64().unwrap()))
                                .collect()
                        })
                        .collect(),
                })
                .collect()
        })
        .collect();
    assert_eq!(out.len(), times.len(), "{reader}: {stdout}");
    out
}

/// Bounds [xmin, xmax, ymin, ymax, zmin, zmax] of rows `rows` of a `[.., 3]` block.
fn bounds(p: &[[f64; 3]]) -> [f64; 6] {
    let mut b = [
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for q in p {
        for a in 0..3 {
            b[2 * a] = b[2 * a].min(q[a]);
            b[2 * a + 1] = b[2 * a + 1].max(q[a]);
        }
    }
    b
}

/// Record times, node positions of a record, and the contact points of a record.
struct Results {
    time: Vec<f64>,
    positions: ndarray::ArrayD<f64>,
    rotations: ndarray::ArrayD<f64>,
    counts: Vec<u64>,
    contact_points: ndarray::ArrayD<f64>,
    beams: usize,
}

fn read(path: &Path) -> Results {
    let f = hdf5_metno::File::open(path).unwrap();
    let beams = f
        .group("elements")
        .unwrap()
        .member_names()
        .unwrap()
        .iter()
        .filter(|n| {
            f.group(&format!("elements/{n}"))
                .unwrap()
                .attr("type")
                .unwrap()
                .read_scalar::<hdf5_metno::types::VarLenUnicode>()
                .unwrap()
                .as_str()
                == "beam"
        })
        .count();
    Results {
        time: f.dataset("time").unwrap().read_raw().unwrap(),
        positions: f.dataset("nodes/position").unwrap().read_dyn().unwrap(),
        rotations: f.dataset("nodes/rotation").unwrap().read_dyn().unwrap(),
        counts: f.dataset("contacts/count").unwrap().read_raw().unwrap(),
        contact_points: f.dataset("contacts/point").unwrap().read_dyn().unwrap(),
        beams,
    }
}

fn node_rows(r: &Results, k: usize) -> Vec<[f64; 3]> {
    (0..r.positions.shape()[1])
        .map(|i| std::array::from_fn(|a| r.positions[[k, i, a]]))
        .collect()
}

fn contact_rows(r: &Results, k: usize) -> Vec<[f64; 3]> {
    let first: u64 = r.counts[..k].iter().sum();
    (first..first + r.counts[k])
        .map(|row| std::array::from_fn(|a| r.contact_points[[row as usize, a]]))
        .collect()
}

fn assert_bounds(what: &str, got: &[f64; 6], want: &[f64; 6]) {
    for i in 0..6 {
        // ParaView stores points in f32: 1e-6 relative to the mechanism's size (~0.5 m).
        assert!(
            (got[i] - want[i]).abs() < 1e-6,
            "{what}: {got:?} vs {want:?}"
        );
    }
}

/// Check every reader on the sidecars of `h5` at its first and last record.
fn check_readers(h5: &Path, png: Option<&Path>) {
    let r = read(h5);
    let n = r.time.len();
    let ks = [0, n - 1];
    let times: Vec<f64> = ks.iter().map(|&k| r.time[k]).collect();
    let two = saltus_io::xdmf_path(h5);
    let three = saltus_io::xdmf3_path(h5);
    for (file, reader) in [
        (&two, "XDMFReader"),
        (&three, "Xdmf3ReaderS"),
        (&three, "Xdmf3ReaderT"),
    ] {
        let frames = probe(file, reader, &times, png.filter(|_| reader == "XDMFReader"));
        for (&k, blocks) in ks.iter().zip(&frames) {
            let what = |b: &str| format!("{reader} record {k} {b}");
            // The XDMF 2 reader names blocks after the grids; the Xdmf3 readers leave them
            // unnamed, so blocks are also told apart by their arrays.
            let find = |name: &str| {
                let array = match name {
                    "nodes" => Some("velocity"),
                    "contacts" => Some("normal"),
                    _ => None,
                };
                blocks.iter().find(|b| {
                    b.name.starts_with(name)
                        || (b.name.is_empty()
                            && match array {
                                Some(a) => b.arrays.iter().any(|x| x == a),
                                None => b.arrays.is_empty(),
                            })
                })
            };
            let nodes = find("nodes").unwrap_or_else(|| panic!("{}: {blocks:?}", what("nodes")));
            let want = node_rows(&r, k);
            assert_eq!(nodes.points, want.len(), "{}", what("nodes"));
            assert_eq!(nodes.cells, want.len(), "{}", what("nodes"));
            assert_bounds(&what("nodes"), &nodes.bounds, &bounds(&want));
            for a in [
                "velocity",
                "angular_velocity",
                "rotation",
                "axis_1",
                "axis_2",
                "axis_3",
            ] {
                assert!(
                    nodes.arrays.iter().any(|x| x == a),
                    "{}: {a}",
                    what("nodes")
                );
            }
            // Body axes: the columns of R of each node's quaternion (float32 in ParaView).
            assert_eq!(nodes.axes.len(), 3, "{}", what("axes"));
            for i in 0..want.len().min(64) {
                let q = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
                    r.rotations[[k, i, 0]],
                    r.rotations[[k, i, 1]],
                    r.rotations[[k, i, 2]],
                    r.rotations[[k, i, 3]],
                ));
                let m = q.to_rotation_matrix();
                for a in 0..3 {
                    for c in 0..3 {
                        let got = nodes.axes[a][i][c];
                        assert!(
                            (got - m[(c, a)]).abs() < 1e-6,
                            "{} node {i} axis {}: {got} vs {}",
                            what("axes"),
                            a + 1,
                            m[(c, a)]
                        );
                    }
                }
            }
            match find("beams") {
                Some(b) => assert_eq!(b.cells, r.beams, "{}", what("beams")),
                None => assert_eq!(r.beams, 0, "{}: no beams block", what("beams")),
            }
            let want = contact_rows(&r, k);
            match find("contacts") {
                Some(c) => {
                    assert_eq!(c.points, want.len(), "{}", what("contacts"));
                    assert_bounds(&what("contacts"), &c.bounds, &bounds(&want));
                    assert!(
                        c.arrays.iter().any(|x| x == "normal"),
                        "{}",
                        what("contacts")
                    );
                }
                None => assert!(want.is_empty(), "{}: no contacts block", what("contacts")),
            }
        }
    }
}

#[test]
fn xdmf_sidecars_load_in_paraview_readers() {
    if let Some(why) = paraview_missing() {
        println!("skipped: {why}");
        return;
    }
    // A flexible mechanism (beams as polylines, frame nodes) and a contact (point and normal).
    let dir = scratch("paraview");
    run_model(&dir, "flexible_crank", "crank.h5", "0.02");
    run_model(&dir, "bouncing_ball", "ball.h5", "0.6");
    let png = std::env::var_os("SALTUS_XDMF_PNG").map(PathBuf::from);
    check_readers(&dir.join("crank.h5"), png.as_deref());
    check_readers(&dir.join("ball.h5"), None);
}

#[test]
fn xdmf_command_regenerates_the_sidecars() {
    let dir = scratch("command");
    run_model(&dir, "bouncing_ball", "ball.h5", "0.3");
    let two = dir.join("ball.xdmf");
    let three = dir.join("ball.xdmf3");
    let before = std::fs::read_to_string(&two).unwrap();
    assert!(three.exists());
    std::fs::remove_file(&two).unwrap();
    std::fs::remove_file(&three).unwrap();
    saltus(&["xdmf", "ball.h5"], &dir);
    assert_eq!(
        std::fs::read_to_string(&two).unwrap(),
        before,
        "same sidecar as the run's"
    );
    let t3 = std::fs::read_to_string(&three).unwrap();
    assert!(
        t3.contains("ball.h5:/nodes/position|0 0 0:1 1 1:1 1 3:301 1 3"),
        "record 0 slab"
    );
    // Beyond MAX_FRAMES (250) records the frames thin out (every 2nd of 301) but end at the
    // last record.
    assert_eq!(before.matches("<Time ").count(), 151);
    assert!(before.contains("Name=\"record 300\""));
    let o = Command::new(env!("CARGO_BIN_EXE_saltus"))
        .args(["xdmf", "missing.h5"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.h5"));
}

/// The sidecars exist from the initial state on and follow the run: a run interrupted after
/// its first record can already be opened in ParaView.
#[test]
fn xdmf_sidecars_are_written_at_the_start_of_a_run() {
    use saltus::prelude::*;
    let dir = scratch("live");
    let h5 = dir.join("ball.h5");
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/models/bouncing_ball.toml");
    let mut file = saltus::io::load_model(model).unwrap();
    file.simulation.t_end = 0.05;
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    let mut solver = Nsga::new(&mut file.model, opts).unwrap();
    let mut sink = saltus::io::Hdf5Sink::create(&h5).unwrap();
    let two = saltus_io::xdmf_path(&h5);
    let mut frames_seen = Vec::new();
    solver
        .run(&mut file.model, &mut sink, &mut |_t| {
            if frames_seen.is_empty() {
                let text = std::fs::read_to_string(&two).expect("sidecar before the first step");
                frames_seen.push(text.matches("<Time ").count());
            }
        })
        .unwrap();
    assert_eq!(frames_seen, vec![1], "the initial state is the first frame");
    drop(sink);
    let text = std::fs::read_to_string(&two).unwrap();
    assert_eq!(
        text.matches("<Time ").count(),
        51,
        "every record at the end"
    );
}
