//! Options shared by the benchmark programs.

/// Thread count from a `--threads=N` argument; default 1, so figures are single-thread and
/// comparable with the peers' single-thread runs (`../shared/bench-peers`).
pub fn threads() -> usize {
    std::env::args()
        .find_map(|a| a.strip_prefix("--threads=").and_then(|v| v.parse().ok()))
        .unwrap_or(1)
}
