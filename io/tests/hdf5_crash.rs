//! Crash safety of `Hdf5Sink`: a run that aborts keeps its flushed steps.
//!
//! In its own test binary: the child process inherits the open file descriptors (and the HDF5
//! file locks) of every file other tests of the same binary have open when it is spawned.

mod common;

use common::*;
use saltus_core::ResultSink;
use saltus_io::Hdf5Sink;

/// Child half of [`interrupted_run_keeps_flushed_steps`]: only active when the environment
/// variable is set; records 4 steps with `flush_every = 2`, then aborts the process (no
/// destructors, no HDF5 close).
#[test]
fn crash_child() {
    let Ok(path) = std::env::var("SALTUS_IO_CRASH_CHILD") else {
        return;
    };
    let mut sink = Hdf5Sink::create(&path).unwrap().with_flush_every(2);
    sink.begin(&layout()).unwrap();
    record_steps(&mut sink, 0..4);
    std::process::abort();
}

#[test]
fn interrupted_run_keeps_flushed_steps() {
    let path = tmp("crash.h5");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["crash_child", "--exact", "--test-threads=1", "--nocapture"])
        .env("SALTUS_IO_CRASH_CHILD", &path)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the child should have aborted");
    check_file(&path, 4);
}
