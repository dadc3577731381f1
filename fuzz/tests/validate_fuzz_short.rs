//! A short fuzzing run (10⁴ executions, fixed seed) of the model-file readers: no input may
//! panic or hang (docs/fuzzing.md has the long runs).

use saltus_fuzz::{default_seed_dirs, load_seeds, run, Config};
use std::path::Path;
use std::time::Duration;

#[test]
fn validate_fuzz_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let seeds = load_seeds(&default_seed_dirs(&root)).unwrap();
    assert!(seeds.len() >= 100, "{} seeds", seeds.len());
    let config = Config {
        execs: 10_000,
        seed: 20_261_125,
        hang: Duration::from_secs(60),
        ..Config::default()
    };
    let stats = run(seeds, &config);
    eprintln!("{}", stats.summary());
    let crashes: Vec<String> = stats
        .crashes
        .iter()
        .map(|c| {
            format!(
                "{}\n--- input ({}):\n{}",
                c.message,
                c.input.format,
                String::from_utf8_lossy(&c.input.bytes)
            )
        })
        .collect();
    assert!(crashes.is_empty(), "panics:\n{}", crashes.join("\n\n"));
    assert!(
        stats.accepted > 0 && stats.refused > 0,
        "{}",
        stats.summary()
    );
}
