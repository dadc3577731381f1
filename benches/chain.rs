//! Benchmark: a chain of N rigid links connected by revolute joints, released horizontally
//! and falling under gravity (the first link hinged to the ground). Prints, per N, the wall
//! time per step and per Newton iteration, the iterations per subproblem and the number of
//! symbolic LU factorizations (one per subproblem while the pattern holds).
//!
//! Run: `cargo bench --bench chain` (all sizes) or `cargo bench --bench chain -- 10 100`;
//! `--json` prints one JSON line per size instead of the table (for `scripts/bench_peers.py`);
//! `--steps=K` runs K steps at every size (default `20 000 / N` clamped to 10 … 200), so that
//! sizes compare over the same stretch of motion (the fitted exponent of the cost in N);
//! `--repeats=R` runs each size R times from the same start and reports the fastest run (the
//! runs are identical; the minimum discards the machine's interruptions, which weigh most on
//! the small sizes' runs of a millisecond).

#[path = "../tests/bench_models/mod.rs"]
mod bench_models;
mod common;
use bench_models::chain;
use saltus::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if args.is_empty() {
        vec![10, 100, 1000, 10000]
    } else {
        args
    };
    let json = std::env::args().any(|a| a == "--json");
    let fixed_steps: Option<usize> =
        std::env::args().find_map(|a| a.strip_prefix("--steps=").and_then(|k| k.parse().ok()));
    let repeats: usize = std::env::args()
        .find_map(|a| a.strip_prefix("--repeats=").and_then(|k| k.parse().ok()))
        .unwrap_or(1)
        .max(1);
    if !json {
        println!(
            "{:>7} {:>7} {:>12} {:>14} {:>12} {:>10} {:>10}",
            "N", "steps", "ms/step", "us/iteration", "iter s/p/v", "symbolic", "numeric"
        );
    }
    for n in sizes {
        let steps = fixed_steps.unwrap_or((20_000 / n).clamp(10, 200));
        let h = 1e-3;
        let opts = NsgaOptions {
            h,
            t_end: steps as f64 * h,
            rho_inf: 0.8,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            threads: common::threads(),
            jacobian_reuse: common::jacobian_reuse(),
            ..NsgaOptions::default()
        };
        // The fastest of `repeats` identical runs (the last one's solver reports).
        let mut wall = f64::INFINITY;
        let mut last = None;
        for _ in 0..repeats {
            let mut model = chain(n, 0.1);
            let mut solver = Nsga::new(&mut model, opts.clone()).unwrap();
            let t0 = Instant::now();
            for _ in 0..steps {
                solver.step(&mut model).unwrap();
            }
            wall = wall.min(t0.elapsed().as_secs_f64());
            last = Some(solver);
        }
        let solver = last.expect("at least one run");
        let s = solver.summary();
        let iters: usize = s.iterations().iter().sum();
        let m = s.mean_iterations();
        if json {
            let tip = solver.nodes().last().map_or(0.0, |n| n.x.z);
            println!(
                "{{\"case\": \"chain\", \"code\": \"saltus\", \"N\": {n}, \"steps\": {}, \
                 \"wall_s\": {wall:.6}, \"us_per_step\": {:.3}, \"last_link_z\": {tip:.9}, \
                 \"factorizations\": {:?}}}",
                s.steps,
                1e6 * wall / steps as f64,
                s.numeric_factorizations()
            );
            continue;
        }
        println!(
            "{:>7} {:>7} {:>12.3} {:>14.1} {:>4.1}/{:.1}/{:.1} {:>10?} {:>10?}",
            n,
            steps,
            1e3 * wall / steps as f64,
            1e6 * wall / iters.max(1) as f64,
            m[0],
            m[1],
            m[2],
            s.symbolic_factorizations(),
            s.numeric_factorizations()
        );
    }
}
