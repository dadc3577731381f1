//! Crash safety of `Hdf5Sink`: a run that aborts keeps every record written before the abort
//! (the initial state at once, then a block per flush interval), and no buffered one.
//!
//! In its own test binary: the child process inherits the open file descriptors (and the HDF5
//! file locks) of every file other tests of the same binary have open when it is spawned.

mod common;

use common::*;
use saltus_core::ResultSink;
use saltus_io::Hdf5Sink;
use std::time::Duration;

/// Child half of the tests below, run by them in a child process (ignored otherwise: it is
/// not a test of its own): records the steps of `SALTUS_IO_CRASH_MODE` into the file
/// `SALTUS_IO_CRASH_CHILD`, then aborts the process (no destructors, no HDF5 close).
#[test]
#[ignore = "the child process of the crash tests; they run it with --ignored"]
fn crash_child() {
    let path = std::env::var("SALTUS_IO_CRASH_CHILD").expect("run by the crash tests");
    let hour = Duration::from_secs(3600);
    let mode = std::env::var("SALTUS_IO_CRASH_MODE").unwrap();
    let sink = Hdf5Sink::create(&path).unwrap();
    let mut sink = match mode.as_str() {
        // written after record 0 (the first) and records 1, 3 (the 2nd and 4th)
        "every2" => sink.with_flush_every(2).with_flush_interval(hour),
        // written after record 0 only
        "buffered" => sink.with_flush_interval(hour),
        // written after record 0 and after the sleep at record 3
        _ => sink.with_flush_interval(Duration::from_millis(300)),
    };
    sink.begin(&layout()).unwrap();
    match mode.as_str() {
        "every2" => record_steps(&mut sink, 0..4),
        "buffered" => record_steps(&mut sink, 0..10),
        _ => {
            record_steps(&mut sink, 0..3);
            std::thread::sleep(Duration::from_millis(350));
            record_steps(&mut sink, 3..6);
        }
    }
    std::process::abort();
}

/// Run [`crash_child`] in `mode`, writing `name`; returns the file.
fn aborted_run(name: &str, mode: &str) -> std::path::PathBuf {
    let path = tmp(name);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "crash_child",
            "--exact",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("SALTUS_IO_CRASH_CHILD", &path)
        .env("SALTUS_IO_CRASH_MODE", mode)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the child should have aborted");
    path
}

fn records_on_disk(path: &std::path::Path) -> usize {
    let file = hdf5_metno::File::open(path).unwrap();
    file.dataset("time").unwrap().shape()[0]
}

/// `with_flush_every(2)`: the 4 records are on disk.
#[test]
fn interrupted_run_keeps_flushed_steps() {
    let path = aborted_run("crash.h5", "every2");
    check_file(&path, 4);
}

/// Without a write trigger after the initial state, the abort keeps record 0 exactly (the
/// other 9 were buffered); with a flush interval, it keeps every record up to the first
/// record after the interval (record 3). The records after it are lost unless the child
/// stalled for a whole interval (then they are on disk as well).
#[test]
fn interrupted_buffered_run_keeps_the_initial_state_and_each_interval() {
    let path = aborted_run("crash_buffered.h5", "buffered");
    check_file(&path, 1);

    let path = aborted_run("crash_interval.h5", "interval");
    let n = records_on_disk(&path);
    assert!((4..=6).contains(&n), "{n} records on disk");
    check_file(&path, n);
}
