//! Helpers shared by the command-line tests: run the `saltus` binary in a scratch directory.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run `saltus ARGS` in `dir`.
pub fn saltus(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saltus"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run saltus")
}

/// Run `saltus ARGS` in `dir` and require success.
pub fn saltus_ok(args: &[&str], dir: &Path) -> Output {
    let o = saltus(args, dir);
    assert!(o.status.success(), "{args:?}: {o:?}");
    o
}

/// A fresh, empty directory `target/tmp/GROUP/NAME`.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run the shipped model `models/MODEL.toml` to `t_end` into `dir/OUT`.
pub fn run_model(dir: &Path, model: &str, out: &str, t_end: &str) -> PathBuf {
    let path = format!("{}/models/{model}.toml", env!("CARGO_MANIFEST_DIR"));
    saltus_ok(&["run", &path, "-o", out, "--t-end", t_end, "--quiet"], dir);
    dir.join(out)
}
