//! Benchmark: a steel cantilever (L = 1 m, 20 mm × 10 mm, clamped by a fixed root node) meshed
//! into N geometrically exact beam elements, set into motion by a suddenly applied tip force
//! (100 N transverse + 1 kN axial; static tip deflection 29 mm) — dynamic NSGA steps of
//! h = 1e-4 s, no gravity. Prints per N the set-up time (numbering, patterns, symbolic LU,
//! consistent initial accelerations), the wall time per step, per element and step and per
//! Newton iteration, the Newton iterations per subproblem (mean and max over the steps), the
//! line-search backtracks and the symbolic LU count (one per subproblem while the pattern
//! holds; the position and velocity corrections of an unconstrained cantilever have a zero
//! residual from the start and never factorize).
//!
//! Default options (`tol` 1e-8, `tol_f` 1e-6); `--tuned` uses the beam tests' `tol` 1e-6,
//! `tol_f` 1 N (a reference force far above the round-off floor of stiff elements).
//!
//! Run: `cargo bench --bench beam_cantilever` (N = 10, 100, 1000, 10000) or
//! `cargo bench --bench beam_cantilever -- 100 1000 --tuned`; `--threads=N` evaluates elements
//! on N threads (default 1).

#[path = "../tests/bench_models/mod.rs"]
mod bench_models;
mod common;
use bench_models::cantilever;
use saltus::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tuned = args.iter().any(|a| a == "--tuned");
    let sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() {
        vec![10, 100, 1000, 10000]
    } else {
        sizes
    };
    println!(
        "beam cantilever, h = 1e-4 s, {} tolerances",
        if tuned {
            "tuned (tol 1e-6, tol_f 1 N)"
        } else {
            "default (tol 1e-8, tol_f 1e-6 N)"
        }
    );
    println!(
        "{:>6} {:>6} {:>10} {:>10} {:>14} {:>12} {:>16} {:>10} {:>10} {:>9}",
        "N",
        "steps",
        "setup ms",
        "ms/step",
        "us/elem/step",
        "ms/iter",
        "mean s/p/v",
        "max s/p/v",
        "backtr.",
        "symbolic"
    );
    for n in sizes {
        let mut model = cantilever(n);
        let h = 1e-4;
        let steps = (20_000 / n).clamp(5, 50);
        let mut opts = NsgaOptions {
            h,
            t_end: steps as f64 * h,
            rho_inf: 0.8,
            gravity: Vector3::zeros(),
            threads: common::threads(),
            jacobian_reuse: common::jacobian_reuse(),
            ..NsgaOptions::default()
        };
        if tuned {
            opts.tol = 1e-6;
            opts.tol_f = 1.0;
        }
        let t0 = Instant::now();
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let setup = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        for _ in 0..steps {
            solver.step(&mut model).unwrap();
        }
        let wall = t1.elapsed().as_secs_f64();
        let s = solver.summary();
        let m = s.mean_iterations();
        let b = s.backtracks();
        println!(
            "{:>6} {:>6} {:>10.2} {:>10.3} {:>14.3} {:>12.4} {:>6.2}/{:.2}/{:.2} {:>4}/{}/{} {:>4}/{}/{} {:>9}",
            n,
            steps,
            1e3 * setup,
            1e3 * wall / steps as f64,
            1e6 * wall / (steps * n) as f64,
            1e3 * wall / s.iterations().iter().sum::<usize>().max(1) as f64,
            m[0],
            m[1],
            m[2],
            s.max_iterations()[0],
            s.max_iterations()[1],
            s.max_iterations()[2],
            b[0],
            b[1],
            b[2],
            format!("{:?}", s.symbolic_factorizations())
        );
    }
}
