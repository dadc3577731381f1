//! Benchmark: N independent balls (rigid spheres) dropped on a frictional plane, each with its
//! own sphere–plane contact (no ball–ball contact). Prints per N the wall time per step, the
//! Newton iterations per subproblem (mean and max) and the line-search backtracks, over a run
//! that contains the impacts (balls start at staggered heights so that impacts are spread).
//!
//! Run: `cargo bench --bench balls` (N = 10, 100, 1000) or `cargo bench --bench balls -- 100`.

#[path = "../tests/bench_models/mod.rs"]
mod bench_models;
mod common;
use bench_models::balls;
use saltus::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if args.is_empty() {
        vec![10, 100, 1000]
    } else {
        args
    };
    println!(
        "{:>6} {:>6} {:>10} {:>16} {:>12} {:>12} {:>9}",
        "N", "steps", "ms/step", "us/step/ball", "mean s/p/v", "max s/p/v", "backtr."
    );
    for n in sizes {
        let mut model = balls(n);
        let h = 1e-3;
        let steps = 400;
        let opts = NsgaOptions {
            h,
            t_end: steps as f64 * h,
            rho_inf: 0.8,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            threads: common::threads(),
            jacobian_reuse: common::jacobian_reuse(),
            ..NsgaOptions::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let t0 = Instant::now();
        for _ in 0..steps {
            solver.step(&mut model).unwrap();
        }
        let wall = t0.elapsed().as_secs_f64();
        let s = solver.summary();
        let m = s.mean_iterations();
        println!(
            "{:>6} {:>6} {:>10.3} {:>16.2} {:>4.2}/{:.2}/{:.2} {:>6}/{}/{} {:>9?}",
            n,
            steps,
            1e3 * wall / steps as f64,
            1e6 * wall / (steps * n) as f64,
            m[0],
            m[1],
            m[2],
            s.max_iterations()[0],
            s.max_iterations()[1],
            s.max_iterations()[2],
            s.backtracks()
        );
    }
}
