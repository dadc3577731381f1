//! `saltus-fuzz`: run the model-file mutation fuzzer (docs/fuzzing.md).
//!
//! ```text
//! saltus-fuzz [--execs N] [--seed S] [--out DIR] [--slow SECONDS] [--hang SECONDS] [SEED_DIR...]
//! ```
//!
//! Seed directories default to `models/`, `fuzz/seeds/` and `tests/bad_models/` of the
//! repository; crashing, slow and hanging inputs go to `--out` (default `fuzz/findings`).
//! Exits with status 1 if an input panicked.

use saltus_fuzz::{default_seed_dirs, load_seeds, run, Config};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut config = Config {
        execs: 1_000_000,
        out: Some(root.join("fuzz/findings")),
        report_every: Some(Duration::from_secs(10)),
        ..Config::default()
    };
    let mut dirs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> Result<String, String> {
            args.next().ok_or_else(|| format!("{name} needs a value"))
        };
        let parsed: Result<(), String> = match a.as_str() {
            "--execs" => value("--execs").and_then(|v| {
                config.execs = v.parse().map_err(|e| format!("--execs: {e}"))?;
                Ok(())
            }),
            "--seed" => value("--seed").and_then(|v| {
                config.seed = v.parse().map_err(|e| format!("--seed: {e}"))?;
                Ok(())
            }),
            "--out" => value("--out").map(|v| config.out = Some(PathBuf::from(v))),
            "--slow" => value("--slow").and_then(|v| {
                let s: f64 = v.parse().map_err(|e| format!("--slow: {e}"))?;
                config.slow = Duration::from_secs_f64(s);
                Ok(())
            }),
            "--hang" => value("--hang").and_then(|v| {
                let s: f64 = v.parse().map_err(|e| format!("--hang: {e}"))?;
                config.hang = Duration::from_secs_f64(s);
                Ok(())
            }),
            "-h" | "--help" => {
                println!(
                    "saltus-fuzz [--execs N] [--seed S] [--out DIR] [--slow SECONDS] \
                     [--hang SECONDS] [SEED_DIR...]"
                );
                return ExitCode::SUCCESS;
            }
            _ if a.starts_with('-') => Err(format!("unknown option `{a}`")),
            _ => {
                dirs.push(PathBuf::from(a));
                Ok(())
            }
        };
        if let Err(e) = parsed {
            eprintln!("saltus-fuzz: {e}");
            return ExitCode::from(2);
        }
    }
    if dirs.is_empty() {
        dirs = default_seed_dirs(&root);
    }
    let seeds = match load_seeds(&dirs) {
        Ok(s) if !s.is_empty() => s,
        Ok(_) => {
            eprintln!("saltus-fuzz: no .toml or .json seed in {dirs:?}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("saltus-fuzz: reading the seeds: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "saltus-fuzz: {} seeds, {} executions, seed {}",
        seeds.len(),
        config.execs,
        config.seed
    );
    let stats = run(seeds, &config);
    println!("saltus-fuzz: {}", stats.summary());
    for (t, input) in &stats.slow {
        println!(
            "slow: {:.3} s, {} bytes of {}",
            t.as_secs_f64(),
            input.bytes.len(),
            input.format
        );
    }
    for c in &stats.crashes {
        println!("panic: {}", c.message);
    }
    if stats.crashes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
