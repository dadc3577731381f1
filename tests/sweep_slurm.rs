//! `saltus sweep --slurm` on a one-machine Slurm cluster (`scripts/slurm-local.sh`: slurmctld
//! and slurmd on localhost): the same study as a job array gives the same index as the local
//! mode (wall times aside) and bit-identical results.
//!
//! Where the cluster cannot start here (Slurm or munge not installed, not root, daemons
//! failing), the test prints why and is skipped; `.ci/run` installs the packages so that CI
//! runs it.

mod common;

use common::{datasets, saltus_ok, scratch};
use std::path::Path;
use std::process::Command;

const STUDY: &str = r#"model = "MODELS/bouncing_ball.toml"

[[parameter]]
path = "elements.floor.restitution"
values = [0.5, 0.8]

[[parameter]]
path = "simulation.h"
values = [1e-3, 2e-3, 4e-3]

[[reduction]]
name = "rebound"
dataset = "nodes/position[ball].z"
op = "max"
window = [0.5, 1.5]
"#;

/// The index without its wall-time column (the one value that differs between two runs of a
/// point).
fn index_without_wall_time(folder: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(folder.join("index.csv")).unwrap();
    let head: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let wall = head.iter().position(|h| *h == "wall_time").unwrap();
    text.lines()
        .map(|l| {
            l.split(',')
                .enumerate()
                .filter(|(i, _)| *i != wall)
                .map(|(_, f)| f.to_string())
                .collect()
        })
        .collect()
}

/// Start the one-machine cluster; `Err(why)` where it cannot run here.
fn start_cluster() -> Result<String, String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm-local.sh");
    let out = Command::new("bash")
        .args([script, "start"])
        .output()
        .map_err(|e| format!("cannot run {script}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{script} start failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("export SLURM_CONF="))
        .map(str::to_string)
        .ok_or_else(|| format!("{script} start printed no SLURM_CONF: {stdout}"))
}

/// Stops the cluster when the test ends, passed or failed.
struct Stop;

impl Drop for Stop {
    fn drop(&mut self) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm-local.sh");
        let _ = Command::new("bash").args([script, "stop"]).status();
    }
}

#[test]
fn slurm_job_array_gives_the_local_index() {
    let conf = match start_cluster() {
        Ok(conf) => conf,
        Err(why) => {
            eprintln!("SKIPPED: no one-machine Slurm cluster here: {why}");
            return;
        }
    };
    let _stop = Stop;
    let study = STUDY.replace("MODELS", concat!(env!("CARGO_MANIFEST_DIR"), "/models"));
    let local = scratch("sweep_slurm", "local");
    let slurm = scratch("sweep_slurm", "slurm");
    for dir in [&local, &slurm] {
        std::fs::write(dir.join("bounce.toml"), &study).unwrap();
    }
    saltus_ok(&["sweep", "bounce.toml", "--local", "-q"], &local);
    let sweep = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_saltus"))
            .args(["sweep", "bounce.toml"])
            .args(args)
            .env("SLURM_CONF", &conf)
            .current_dir(&slurm)
            .output()
            .unwrap()
    };
    let out = sweep(&["--slurm", "--max-parallel", "2", "--time", "10:00"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        report.contains("submitted job array") && report.contains("(6 tasks of 6 runs;"),
        "{report}"
    );
    let job = std::fs::read_to_string(slurm.join("bounce/slurm/job")).unwrap();
    let job = job.trim();
    // Submitting again while the array is queued or running is refused.
    let again = sweep(&["--slurm"]);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        !again.status.success()
            && err.contains(&format!(
                "job array {job} of this study is still queued or running"
            )),
        "{again:?}"
    );
    // Collecting meanwhile says the array is not done.
    let early = sweep(&["--collect"]);
    let report = String::from_utf8_lossy(&early.stdout);
    assert!(
        report.contains(&format!("job array {job} is still queued or running")),
        "{early:?}"
    );
    // Wait for the array to leave the queue (accounting is off: squeue is the record).
    let start = std::time::Instant::now();
    loop {
        let q = Command::new("squeue")
            .args(["-h", "-o", "%i", "-j", job])
            .env("SLURM_CONF", &conf)
            .output()
            .unwrap();
        if q.stdout.trim_ascii().is_empty() {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 300,
            "job array {job} still queued after 300 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let out = sweep(&["--collect"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("6 runs: 6 ok, 0 failed"), "{out:?}");
    let script = std::fs::read_to_string(slurm.join("bounce/sweep.sbatch")).unwrap();
    assert!(
        script.contains("#SBATCH --array=0-5%2") && script.contains("#SBATCH --time=10:00"),
        "{script}"
    );
    // One output file per array task.
    let outputs = std::fs::read_dir(slurm.join("bounce/slurm"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "out")
        })
        .count();
    assert_eq!(outputs, 6);

    let (a, b) = (local.join("bounce"), slurm.join("bounce"));
    assert_eq!(index_without_wall_time(&a), index_without_wall_time(&b));
    for k in 0..6 {
        let name = format!("run-00{k}.h5");
        assert_eq!(datasets(&a.join(&name)), datasets(&b.join(&name)), "{name}");
    }

    // A lost run is resubmitted alone; --wait waits for it and collects.
    std::fs::remove_file(b.join("run-003.json")).unwrap();
    let out = sweep(&["--slurm", "--wait"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && report.contains("(1 task of 6 runs;")
            && report.contains("6 runs: 6 ok"),
        "{out:?}"
    );
    let script = std::fs::read_to_string(b.join("sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=3\n"), "{script}");
    assert_eq!(index_without_wall_time(&a), index_without_wall_time(&b));
    assert_eq!(
        datasets(&a.join("run-003.h5")),
        datasets(&b.join("run-003.h5"))
    );

    // Everything finished: a further submission submits nothing and collects.
    let out = sweep(&["--slurm"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("every run had finished"), "{out:?}");
}
