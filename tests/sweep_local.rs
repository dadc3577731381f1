//! `saltus sweep --local`: a 2 × 3 study of the bouncing ball (restitution × step size) gives
//! the same datasets, bit for bit, as single `saltus run`s of the same points; its index holds
//! the analytic rebound height; a killed sweep resumes with only the missing runs; invalid
//! points are refused before anything runs; a failing run does not stop the others.

mod common;

use common::{datasets, saltus, saltus_ok, scratch, svg_polylines};
use hdf5_metno as hdf5;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The shipped bouncing ball (V15, `models/bouncing_ball.toml`) shortened to 1 s: dropped
/// from 1 m above contact (centre at 1.1 m, radius 0.1 m), first impact at v1 = √(2 g · 1 m),
/// restitution 0.8, h = 1e-3.
fn ball() -> String {
    include_str!("../models/bouncing_ball.toml").replace("t_end = 1.5", "t_end = 1.0")
}

const RESTITUTIONS: [f64; 2] = [0.5, 0.8];
const STEPS: [f64; 3] = [1e-3, 2e-3, 4e-3];

/// A study of `ball()` over restitution × h, with the rebound height (maximum of z after the
/// first impact at 0.45 s) and the final velocity as reductions.
fn study(dir: &Path, extra: &str) -> PathBuf {
    std::fs::write(dir.join("ball.toml"), ball()).unwrap();
    let path = dir.join("bounce.toml");
    std::fs::write(
        &path,
        format!(
            r#"model = "ball.toml"
{extra}
[[parameter]]
path = "elements.floor.restitution"
values = {RESTITUTIONS:?}

[[parameter]]
path = "simulation.h"
values = {STEPS:?}

[[reduction]]
name = "rebound"
dataset = "nodes/position[ball].z"
op = "max"
window = [0.5, 1.0]

[[reduction]]
name = "vz_final"
dataset = "nodes/velocity[ball].z"
op = "final"
"#
        ),
    )
    .unwrap();
    path
}

/// The rows of `index.csv` as (header, fields) maps.
fn index_rows(folder: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(folder.join("index.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    lines
        .map(|l| {
            // The test's fields hold no commas (no arrays, no errors).
            head.iter()
                .cloned()
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

fn read_f64(file: &hdf5::File, path: &str) -> Vec<f64> {
    file.dataset(path).unwrap().read_raw::<f64>().unwrap()
}

#[test]
fn sweep_local_matches_single_runs_and_the_analytic_rebound() {
    let dir = scratch("sweep_local", "grid");
    let path = study(&dir, "");
    let o = saltus_ok(&["sweep", "bounce.toml", "--local", "-j", "2", "-q"], &dir);
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains("6 runs: 6 ran now, 0 had finished before; 6 ok, 0 failed"),
        "{report}"
    );
    let folder = dir.join("bounce");
    let rows = index_rows(&folder);
    assert_eq!(rows.len(), 6);
    let h5 = hdf5::File::open(folder.join("index.h5")).unwrap();
    let rebound_h5 = read_f64(&h5, "reductions/rebound");
    let e_h5 = read_f64(&h5, "parameters/elements.floor.restitution");
    let v1 = (2.0f64 * 9.81 * 1.0).sqrt();
    for (k, row) in rows.iter().enumerate() {
        // Grid order: first parameter slowest.
        let (e, h) = (RESTITUTIONS[k / 3], STEPS[k % 3]);
        assert_eq!(row["run"], k.to_string());
        assert_eq!(row["status"], "ok");
        assert_eq!(row["elements.floor.restitution"].parse::<f64>().unwrap(), e);
        assert_eq!(row["simulation.h"].parse::<f64>().unwrap(), h);
        assert_eq!(e_h5[k], e);
        // Exact step count n = round(t_end / h).
        assert_eq!(row["steps"], format!("{}", (1.0 / h).round()));
        assert_eq!(row["t_final"].parse::<f64>().unwrap(), 1.0);

        // The same point run on its own, from a model written independently of the study.
        let single = ball()
            .replace("restitution = 0.8", &format!("restitution = {e:?}"))
            .replace("h = 1e-3", &format!("h = {h:?}"));
        let model = dir.join(format!("single-{k}.toml"));
        std::fs::write(&model, single).unwrap();
        let out = format!("single-{k}.h5");
        saltus_ok(
            &["run", model.to_str().unwrap(), "-o", &out, "--quiet"],
            &dir,
        );
        let swept = folder.join(format!("run-00{k}.h5"));
        let (a, b) = (datasets(&swept), datasets(&dir.join(&out)));
        assert!(a.len() > 10, "too few datasets: {}", a.len());
        assert_eq!(
            a, b,
            "run {k}: the sweep's datasets differ from a single run's"
        );

        // Reductions: exactly the maximum of the single run's history over the window …
        let f = hdf5::File::open(dir.join(&out)).unwrap();
        let t = read_f64(&f, "time");
        let z: Vec<f64> = read_f64(&f, "nodes/position")
            .chunks(3)
            .map(|p| p[2])
            .collect();
        let peak = t
            .iter()
            .zip(&z)
            .filter(|(t, _)| (0.5..=1.0).contains(*t))
            .map(|(_, z)| *z)
            .fold(f64::NEG_INFINITY, f64::max);
        let rebound: f64 = row["rebound"].parse().unwrap();
        assert_eq!(rebound, peak);
        assert_eq!(rebound_h5[k], peak);
        // … and the analytic rebound 0.1 m + e² · 1 m (rebound speed e v1). The impact is
        // resolved at a step, so the ball rebounds from a height off by at most one step's
        // travel at the impact speed: |Δz| ≤ v1 h.
        let exact = 0.1 + e * e;
        assert!(
            (rebound - exact).abs() <= v1 * h,
            "run {k} (e = {e}, h = {h}): rebound {rebound} m vs {exact} m"
        );
    }
    // h5py/MATLAB users get units on the reductions.
    let unit: String = h5
        .dataset("reductions/rebound")
        .unwrap()
        .attr("unit")
        .unwrap()
        .read_scalar::<hdf5::types::VarLenUnicode>()
        .unwrap()
        .to_string();
    assert_eq!(unit, "m");

    // The index plotted against h on a log axis: one curve per restitution, three points
    // each, equally spaced (h doubles), the e = 0.8 curve above the e = 0.5 one.
    let o = saltus_ok(
        &[
            "plot",
            "bounce/index.h5",
            "--x",
            "simulation.h",
            "--y",
            "rebound",
            "--log",
            "x",
            "-o",
            "r.svg",
        ],
        &dir,
    );
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains("2 curves of 6 runs (elements.floor.restitution = 0.5; elements.floor.restitution = 0.8)"),
        "{report}"
    );
    let svg = std::fs::read_to_string(dir.join("r.svg")).unwrap();
    // Units: the reduction's from its dataset, the parameter's from the documented keys.
    assert!(
        svg.contains("rebound [m]") && svg.contains("simulation.h [s]"),
        "axis labels"
    );
    let curves: Vec<Vec<(f64, f64)>> = svg_polylines(&svg)
        .into_iter()
        .filter(|c| c.len() == 3)
        .collect();
    assert_eq!(curves.len(), 2, "{curves:?}");
    for c in &curves {
        // Whole pixels: 1 px resolution.
        assert!(
            ((c[1].0 - c[0].0) - (c[2].0 - c[1].0)).abs() <= 1.0,
            "{c:?}"
        );
    }
    assert!(curves[1][0].1 < curves[0][0].1, "e = 0.8 rebounds higher");

    // Every point's model file runs on its own to the same results.
    saltus_ok(
        &["run", "bounce/run-004.toml", "-o", "again.h5", "-q"],
        &dir,
    );
    assert_eq!(
        datasets(&dir.join("again.h5")),
        datasets(&folder.join("run-004.h5"))
    );

    // A second sweep finds everything finished; a changed reduction needs no re-run.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("op = \"final\"", "op = \"min\"");
    std::fs::write(&path, text).unwrap();
    let o = saltus_ok(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains("0 ran now, 6 had finished before"),
        "{report}"
    );
    let vz_min: f64 = index_rows(&folder)[5]["vz_final"].parse().unwrap();
    // The impact speed, to one step's gravity increment: the minimum is now the velocity
    // just before the first impact.
    assert!((vz_min + v1).abs() < 9.81 * 4e-3, "{vz_min}");

    // A changed value makes the runs of the old value stale: only they are redone.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("values = [0.5, 0.8]", "values = [0.5, 0.7]");
    std::fs::write(&path, text).unwrap();
    let o = saltus_ok(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains("3 ran now, 3 had finished before"),
        "{report}"
    );
}

#[test]
fn a_killed_sweep_resumes_with_only_the_missing_runs() {
    let dir = scratch("sweep_local", "resume");
    // Small steps: each run takes long enough to be caught in the middle.
    study(&dir, "");
    let text = std::fs::read_to_string(dir.join("bounce.toml"))
        .unwrap()
        .replace(
            &format!("values = {STEPS:?}"),
            "values = [2e-5, 3e-5, 4e-5]",
        );
    std::fs::write(dir.join("bounce.toml"), text).unwrap();
    let folder = dir.join("bounce");
    let mut sweep = std::process::Command::new(env!("CARGO_BIN_EXE_saltus"))
        .args(["sweep", "bounce.toml", "--local", "-j", "1", "-q"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ok_runs = || -> Vec<usize> {
        (0..6)
            .filter(|k| {
                std::fs::read_to_string(folder.join(format!("run-00{k}.json")))
                    .is_ok_and(|s| s.contains("\"ok\""))
            })
            .collect()
    };
    let start = Instant::now();
    while ok_runs().len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "two runs did not finish in 120 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // A second sweep of the same study is refused while the first runs.
    let o = saltus(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(1)
            && err.contains("another `saltus sweep` of this study is running"),
        "{o:?}"
    );
    sweep.kill().unwrap(); // SIGKILL: no chance to clean up
    sweep.wait().unwrap();
    // The run in progress ends with the sweep (parent-death signal); give it a moment.
    std::thread::sleep(Duration::from_millis(300));
    let done = ok_runs();
    eprintln!("killed after runs {done:?} had finished");
    assert!(done.len() < 6, "the sweep finished before it was killed");
    let stamps: Vec<_> = done
        .iter()
        .map(|k| {
            std::fs::metadata(folder.join(format!("run-00{k}.h5")))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    // The index of the interrupted sweep tells finished from interrupted runs.
    saltus_ok(&["sweep", "bounce.toml", "--collect"], &dir);
    let rows = index_rows(&folder);
    let interrupted = rows.iter().filter(|r| r["status"] == "incomplete").count();
    let missing = rows.iter().filter(|r| r["status"] == "missing").count();
    // The run in progress when the sweep was killed (none if it was between two runs).
    assert!(interrupted <= 1, "{rows:?}");
    assert_eq!(done.len() + interrupted + missing, 6, "{rows:?}");

    let o = saltus_ok(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains(&format!(
            "{} ran now, {} had finished before; 6 ok",
            6 - done.len(),
            done.len()
        )),
        "{report}"
    );
    for (k, stamp) in done.iter().zip(stamps) {
        let now = std::fs::metadata(folder.join(format!("run-00{k}.h5")))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(now, stamp, "finished run {k} was run again");
    }
}

#[test]
fn invalid_points_are_refused_before_anything_runs() {
    let dir = scratch("sweep_local", "invalid");
    std::fs::write(dir.join("ball.toml"), ball()).unwrap();
    std::fs::write(
        dir.join("bad.toml"),
        "model = \"ball.toml\"\n[[parameter]]\npath = \"elements.floor.restitution\"\n\
         values = [0.5, 1.5]\n",
    )
    .unwrap();
    let o = saltus(&["sweep", "bad.toml", "--local", "-q"], &dir);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml: 1 of 2 points are invalid models; nothing was run")
            && err.contains(
                "point 1 (elements.floor.restitution = 1.5): element `floor`: parameter \
                 `restitution`"
            ),
        "{err}"
    );
    assert!(
        !dir.join("bad").exists(),
        "a refused study wrote its folder"
    );

    // Unknown paths name what exists.
    std::fs::write(
        dir.join("path.toml"),
        "model = \"ball.toml\"\n[[parameter]]\npath = \"elements.flor.mass\"\nvalues = [1.0]\n",
    )
    .unwrap();
    let o = saltus(&["sweep", "path.toml", "--local"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("path.toml: parameter 1 `elements.flor.mass`: no entry named `flor` in `elements` (names: ball_body, floor)"),
        "{err}"
    );

    // A study above its limit needs --yes.
    std::fs::write(
        dir.join("big.toml"),
        "model = \"ball.toml\"\nmax_runs = 2\n[[parameter]]\npath = \"simulation.t_end\"\n\
         values = [0.01, 0.02, 0.03]\n",
    )
    .unwrap();
    let o = saltus(&["sweep", "big.toml", "--local"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("3 runs, more than the limit of 2") && err.contains("--yes"),
        "{err}"
    );
    saltus_ok(&["sweep", "big.toml", "--local", "--yes", "-q"], &dir);
}

#[test]
fn a_failing_run_does_not_stop_the_others() {
    let dir = scratch("sweep_local", "failing");
    // One Newton iteration cannot converge the impact's position correction (without the
    // Gauss–Seidel fallback, which would finish it).
    let model = ball().replace("h = 1e-3", "h = 1e-3\ncontact_fallback = false");
    std::fs::write(dir.join("ball.toml"), model).unwrap();
    std::fs::write(
        dir.join("fail.toml"),
        "model = \"ball.toml\"\n[[parameter]]\npath = \"simulation.max_iterations\"\n\
         values = [1, 50, 1, 50]\n",
    )
    .unwrap();
    let o = saltus(&["sweep", "fail.toml", "--local", "-q"], &dir);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("2 ok, 2 failed"), "{report}");
    let text = std::fs::read_to_string(dir.join("fail/index.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    for (k, line) in lines[1..].iter().enumerate() {
        if k % 2 == 0 {
            assert!(
                line.starts_with(&format!("{k},failed,1,"))
                    && line.contains("did not converge in 1 iterations"),
                "{line}"
            );
            // How far it got: the first impact (0.4515 s, drop of 1 m) needs a second
            // iteration of the position correction, within the steps (h = 1e-3) after it.
            let f: Vec<&str> = line.split(',').collect();
            let (steps, t): (f64, f64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
            let impact = (2.0f64 / 9.81).sqrt();
            assert!(t >= impact - 1e-3 && t <= impact + 2e-3, "{line}");
            assert_eq!(steps, (t / 1e-3).round(), "{line}");
            assert!(
                f[6].is_empty(),
                "no Newton statistics of a failed run: {line}"
            );
        } else {
            assert!(line.starts_with(&format!("{k},ok,50,1000,1,")), "{line}");
        }
    }
    // Integer parameters stay integers in index.h5.
    let h5 = hdf5::File::open(dir.join("fail/index.h5")).unwrap();
    let ds = h5.dataset("parameters/simulation.max_iterations").unwrap();
    assert!(ds.dtype().unwrap().is::<i64>());
    assert_eq!(ds.read_raw::<i64>().unwrap(), [1, 50, 1, 50]);
    drop(h5);
    // Re-running retries only the failed runs.
    let o = saltus(&["sweep", "fail.toml", "--local", "-q"], &dir);
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains("2 ran now, 2 had finished before"),
        "{report}"
    );
}

#[test]
fn guards_against_lost_work_and_late_surprises() {
    let dir = scratch("sweep_local", "guards");
    study(&dir, "");
    let folder = dir.join("bounce");
    // A mistyped reduction is found on the first run's results, before the others run.
    let text = std::fs::read_to_string(dir.join("bounce.toml")).unwrap();
    std::fs::write(
        dir.join("bounce.toml"),
        text.replace("nodes/position[ball].z", "nodes/positon[ball].z"),
    )
    .unwrap();
    let o = saltus(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(1)
            && err.contains("no dataset `/nodes/positon`")
            && err.contains("checked on the results of run 0 before running the others"),
        "{o:?}"
    );
    assert!(folder.join("run-000.h5").is_file() && !folder.join("run-001.toml").exists());

    // Fixed, the study runs the other five; index.h5 records the parameters' study order.
    std::fs::write(dir.join("bounce.toml"), &text).unwrap();
    let o = saltus_ok(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    assert!(String::from_utf8_lossy(&o.stdout).contains("5 ran now, 1 had finished before"));
    let h5 = hdf5::File::open(folder.join("index.h5")).unwrap();
    let order: Vec<String> = h5
        .group("parameters")
        .unwrap()
        .attr("order")
        .unwrap()
        .read_raw::<hdf5::types::VarLenUnicode>()
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(order, ["elements.floor.restitution", "simulation.h"]);
    drop(h5);

    // A results file damaged after its run ended is run again.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(folder.join("run-002.h5"))
        .unwrap();
    f.set_len(1000).unwrap();
    drop(f);
    let o = saltus_ok(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1 ran now, 5 had finished before"),
        "{o:?}"
    );

    // Another study pointed at the same folder is refused.
    std::fs::write(
        dir.join("other.toml"),
        "model = \"ball.toml\"\nfolder = \"bounce\"\n[[parameter]]\npath = \"simulation.h\"\n\
         values = [1e-3]\n",
    )
    .unwrap();
    let o = saltus(&["sweep", "other.toml", "--local", "-q"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(1) && err.contains("holds the runs of the study"),
        "{o:?}"
    );
    // A window the runs never reach is an error, not an empty column.
    let late = text.replace("window = [0.5, 1.0]", "window = [5.0, 6.0]");
    std::fs::write(dir.join("bounce.toml"), late).unwrap();
    let o = saltus(&["sweep", "bounce.toml", "--local", "-q"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "reduction `rebound`: no record in its window (the run's records span [0, 1] s)"
        ),
        "{o:?}"
    );
}
