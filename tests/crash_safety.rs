//! Result files that survive faults: the `saltus` program killed (SIGKILL) at seeded random
//! moments from right after its start to late in the run, and run on a full disk (a small
//! tmpfs, where this machine lets the test mount one). After each, the results file either
//! does not exist (killed, or the disk full, before the initial state was written) or opens
//! and holds the initial state and a whole number of records in every per-step dataset. A
//! model whose output dominates its run time puts many kills inside block writes and snapshot
//! copies, and its file is read while the run goes.

mod common;

use common::scratch;
use hdf5_metno as hdf5;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/slider_crank.toml")
}

/// Start `saltus run` of the slider–crank model to `t_end`, writing `out`.
fn spawn(out: &Path, t_end: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_saltus"))
        .arg("run")
        .arg(model())
        .arg("-o")
        .arg(out)
        .args(["--t-end", t_end, "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start saltus")
}

/// Every extendible dataset under `g` (path, first-axis length).
fn extendible(g: &hdf5::Group, out: &mut Vec<(String, usize)>) {
    for d in g.datasets().unwrap() {
        if d.is_resizable() {
            out.push((d.name(), d.shape()[0]));
        }
    }
    for sub in g.groups().unwrap() {
        extendible(&sub, out);
    }
}

/// Open the results file and check it: the initial state (t = 0) first, the time column
/// finite and strictly increasing, every per-step dataset (all extendible ones but the
/// contact tables, which have a row per contact) with one row per record and readable.
/// Returns the number of records.
fn check_file(path: &Path, what: &str) -> usize {
    let f = hdf5::File::open(path)
        .unwrap_or_else(|e| panic!("{what}: `{}` does not open: {e}", path.display()));
    let t: Vec<f64> = f
        .dataset("time")
        .and_then(|d| d.read_raw())
        .unwrap_or_else(|e| panic!("{what}: /time unreadable: {e}"));
    assert!(
        !t.is_empty(),
        "{what}: no record, not even the initial state"
    );
    assert_eq!(
        t[0], 0.0,
        "{what}: the first record is not the initial state"
    );
    assert!(
        t.iter().all(|t| t.is_finite()) && t.windows(2).all(|w| w[1] > w[0]),
        "{what}: /time not finite and strictly increasing"
    );
    let mut all = Vec::new();
    extendible(&f, &mut all);
    assert!(all.len() > 10, "{what}: per-step datasets missing: {all:?}");
    for (name, n) in &all {
        let d = f.dataset(name).unwrap();
        if name.starts_with("/contacts") || name.starts_with("/contact_forces") {
            d.read_raw::<f64>()
                .or_else(|_| d.read_raw::<u64>().map(|_| Vec::new()))
                .or_else(|_| d.read_raw::<i64>().map(|_| Vec::new()))
                .unwrap_or_else(|e| panic!("{what}: {name} unreadable: {e}"));
            continue;
        }
        assert_eq!(
            *n,
            t.len(),
            "{what}: {name} has {n} rows, /time {}",
            t.len()
        );
    }
    let pos: Vec<f64> = f.dataset("nodes/position").unwrap().read_raw().unwrap();
    assert!(pos.iter().all(|x| x.is_finite()), "{what}: positions");
    t.len()
}

/// A Python with h5py, if any (to open the file as users do: `h5py.File(path)`).
fn h5py_python() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import h5py"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `h5py.File(path)` with no special flag opens the file and reads `records` times.
fn check_h5py(python: &str, path: &Path, records: usize, what: &str) {
    let out = Command::new(python)
        .arg("-c")
        .arg(
            "import sys, h5py\n\
             f = h5py.File(sys.argv[1], 'r')\n\
             print(len(f['time'][...]))\n\
             f.visititems(lambda n, o: o[...] if isinstance(o, h5py.Dataset) else None)\n",
        )
        .arg(path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: h5py cannot read `{}`: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.trim(),
        records.to_string(),
        "{what}: h5py record count"
    );
}

/// Small seeded generator (xorshift64*) for reproducible kill moments.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// End time of the killed runs \[s\]: long enough that every kill (at most 2.5 s after the
/// start) comes before the run ends, with a wide margin for faster builds and machines (a
/// release build runs 30 s of this model in about 2 s).
const KILLED_T_END: &str = "300";

#[test]
fn crash_kill_at_random_moments_leaves_a_readable_file() {
    let dir = scratch("crash", "kill");
    let python = h5py_python();
    match python {
        Some(py) => println!("files also opened with h5py ({py})"),
        None => println!("h5py not found: the files are checked with the hdf5 crate only"),
    }

    // Calibration: when the file appears (the initial state is written), and how many
    // records a whole run writes.
    let out = dir.join("calibrate.h5");
    let start = Instant::now();
    let mut child = spawn(&out, KILLED_T_END);
    while !out.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_micros(500));
    }
    let appear = start.elapsed();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(out.exists(), "the results file never appeared");
    println!("the file appeared after {appear:?}");

    // Kill moments: half within twice the time the file takes to appear (process start,
    // file creation, layout, first record), the rest spread over 2.5 s (the wall-time
    // flushes, one a second, fall in there).
    // One moment drawn at random in each of 7 equal slices of either span.
    let mut rng = Rng(0x005E_ED0F_C4A5);
    let slices = 7;
    let mut moments: Vec<Duration> = (0..slices)
        .flat_map(|k| {
            let early = appear.mul_f64(2.0 * (k as f64 + rng.unit()) / slices as f64);
            let late = Duration::from_secs_f64(2.5 * (k as f64 + rng.unit()) / slices as f64);
            [early, late]
        })
        .collect();
    moments.sort();
    let mut missing = 0;
    for (i, &at) in moments.iter().enumerate() {
        let out = dir.join(format!("k{i}.h5"));
        let start = Instant::now();
        let mut child = spawn(&out, KILLED_T_END);
        if let Some(rest) = at.checked_sub(start.elapsed()) {
            std::thread::sleep(rest);
        }
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        let killed_at = start.elapsed();
        assert!(
            !status.success(),
            "kill {i} at {at:?}: the run finished first"
        );
        let what = format!("kill {i} at {killed_at:?}");
        if !out.exists() {
            // Only before the initial state is written; late kills must leave a file.
            assert!(
                killed_at < appear * 3 + Duration::from_millis(300),
                "{what}: no results file"
            );
            missing += 1;
            println!("{what}: killed before the initial state was written (no file)");
            continue;
        }
        let n = check_file(&out, &what);
        if killed_at > appear + Duration::from_millis(1500) {
            // The wall-time flush (1 s after the first record) has written more records.
            assert!(
                n > 1,
                "{what}: only {n} record after more than a flush interval"
            );
        }
        if let Some(py) = python {
            check_h5py(py, &out, n, &what);
        }
        println!("{what}: {n} records");
    }
    assert!(missing < moments.len(), "every kill came before the file");
}

/// Unmounts the tmpfs when dropped.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn crash_full_disk_keeps_the_records_written_before() {
    let dir = scratch("crash", "disk");
    let python = h5py_python();
    // Sizes such that the disk fills before the initial state is written, right after it,
    // during the records, and at the end (the whole run's file is about 7 MB; the sink holds
    // a reserve of up to about 7 MB beside it).
    for size in ["1m", "4m", "7m", "11m"] {
        let mnt = dir.join(size);
        std::fs::create_dir_all(&mnt).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={size}"))
            .arg("tmpfs")
            .arg(&mnt)
            .stderr(Stdio::piped())
            .output();
        match mounted {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                println!(
                    "skipped: cannot mount a tmpfs ({})",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                return;
            }
            Err(e) => {
                println!("skipped: cannot run mount ({e})");
                return;
            }
        }
        let _mount = Mount(mnt.clone());
        let out = mnt.join("run.h5");
        let o = spawn(&out, "5").wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let what = format!("disk of {size}");
        println!("{what}: {}", err.trim());
        assert!(!o.status.success(), "{what}: the run did not fail");
        assert!(
            err.contains(&out.display().to_string()),
            "{what}: the message does not name the file: {err}"
        );
        if err.contains("no results written") {
            assert!(
                !out.exists(),
                "{what}: a file was left although none was kept"
            );
            assert!(!err.contains("kept in"), "{what}: claims results: {err}");
            assert_eq!(size, "1m", "{what}: nothing written");
            continue;
        }
        // "… `run.h5` keeps the N records written before …" or, if the disk filled only
        // at the XDMF sidecar, "results up to the failure kept in …".
        let n = check_file(&out, &what);
        if let Some(k) = err.find("keeps the ") {
            let kept: usize = err[k + 10..]
                .split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("{what}: record count in {err}"));
            assert_eq!(
                n, kept,
                "{what}: the file does not hold the records announced"
            );
        } else {
            assert!(err.contains("XDMF"), "{what}: unexpected failure: {err}");
        }
        assert!(!err.contains("may be unreadable"), "{what}: {err}");
        if let Some(py) = python {
            check_h5py(py, &out, n, &what);
        }
    }
}

/// A model whose output dominates its run time: `n` free point masses under gravity (one
/// record ≈ 22 doubles per node), so that block writes (resize, hyperslab writes, flush) take
/// much of the wall time and random kills land inside them.
fn heavy_output_model(dir: &Path, n: usize) -> PathBuf {
    let mut text = String::from("[simulation]\nt_end = 1000.0\nh = 1e-3\n");
    for i in 0..n {
        text.push_str(&format!(
            "[[nodes]]\nname = \"p{i}\"\nposition = [{}.0, 0.0, 0.0]\nkind = \"point\"\n",
            i
        ));
        text.push_str(&format!(
            "[[elements]]\ntype = \"point_mass\"\nname = \"m{i}\"\nnodes = [\"p{i}\"]\nmass = 1.0\n"
        ));
    }
    let path = dir.join("heavy.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A child process killed when dropped (also when the test fails half-way).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn crash_kill_inside_block_writes_leaves_the_last_snapshot() {
    let dir = scratch("crash", "kill_heavy");
    let model = heavy_output_model(&dir, 600);
    let python = h5py_python();
    let run = |out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_saltus"))
            .arg("run")
            .arg(&model)
            .arg("-o")
            .arg(out)
            .arg("--quiet")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start saltus")
    };
    let mut rng = Rng(0x0B10_C4ED);
    let kills = 10;
    let mut snapshots = 0;
    for i in 0..kills {
        let out = dir.join(format!("h{i}.h5"));
        let start = Instant::now();
        let mut child = Killed(run(&out));
        // Wait for the first snapshot, then read the file while the run writes (the run never
        // writes into it, so no lock stands in the way), then kill at a random later moment.
        while !out.exists() && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(out.exists(), "run {i}: no results file after 60 s");
        if i == 0 {
            let n = check_file(&out, "read while running");
            assert!(n >= 1);
        }
        std::thread::sleep(Duration::from_secs_f64(0.2 + 2.3 * rng.unit()));
        child.0.kill().unwrap(); // SIGKILL
        child.0.wait().unwrap();
        let what = format!("kill {i} after {:?}", start.elapsed());
        let n = check_file(&out, &what);
        if let Some(py) = python {
            check_h5py(py, &out, n, &what);
        }
        if n > 1 {
            snapshots += 1;
        }
        println!("{what}: {n} records");
        // Large files: keep the disk free (the written file is left as `.part` by the kill).
        for f in [
            out.clone(),
            out.with_extension("h5.part"),
            out.with_extension("h5.snapshot"),
        ] {
            let _ = std::fs::remove_file(f);
        }
    }
    // Most kills came after the wall-time snapshots (1 s) had added records.
    assert!(snapshots > 0, "no kill after a later snapshot");
}
