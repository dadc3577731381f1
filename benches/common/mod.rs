//! Options shared by the benchmark programs.

/// Thread count from a `--threads=N` argument; default 1, so figures are single-thread and
/// comparable with the peers' single-thread runs (`../shared/bench-peers`).
pub fn threads() -> usize {
    std::env::args()
        .find_map(|a| a.strip_prefix("--threads=").and_then(|v| v.parse().ok()))
        .unwrap_or(1)
}

/// Modified Newton factor: the default, `--theta=X`, or `None` (full Newton) with
/// `--full-newton`.
pub fn jacobian_reuse() -> Option<f64> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--full-newton") {
        return None;
    }
    args.iter()
        .find_map(|a| a.strip_prefix("--theta=").and_then(|v| v.parse().ok()))
        .or(Some(saltus::solvers::nsga::DEFAULT_JACOBIAN_REUSE))
}

/// Newton tolerance `tol_r` from a `--tol=X` argument; default [`NsgaOptions::default`]'s.
///
/// [`NsgaOptions::default`]: saltus::solvers::nsga::NsgaOptions
#[allow(dead_code)] // not every benchmark takes it
pub fn tolerance() -> f64 {
    std::env::args()
        .find_map(|a| a.strip_prefix("--tol=").and_then(|v| v.parse().ok()))
        .unwrap_or(saltus::solvers::nsga::NsgaOptions::default().tol)
}
