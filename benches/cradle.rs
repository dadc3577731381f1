//! Benchmark case (b) of `../shared/bench-peers`: Newton's cradle, `N` spheres in a row
//! (m = 1 kg, R = 0.1 m, no gravity), frictionless contacts between neighbours with
//! restitution `e`, the first sphere starting 0.05 m (+ gap) before the others at 1 m/s, the
//! others at rest and touching (gap 0) or `GAP` apart. Same set-up as the peers' `cradle.py`.
//! Prints one JSON line (with the contact solver run first): µs/step, the last and first spheres' final velocities (exact with
//! e = 1: 1 and 0), the largest speed of the others, momentum and energy ratio, impact
//! problems.
//!
//! Run: `cargo bench --bench cradle -- [N] [GAP] [H] [T] [E] [--gauss-seidel]` (defaults 50 0
//! 1e-3 1 1; `--gauss-seidel`: `ContactSolver::GaussSeidel`, the contact-space sweeps before
//! the Newton, as for granular models — the spheres are free bodies).

#[path = "../tests/bench_models/mod.rs"]
mod bench_models;
mod common;

use bench_models::cradle;
use saltus::prelude::*;
use std::time::Instant;

const M: f64 = 1.0;
const R: f64 = 0.1;

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let arg = |i: usize, d: f64| args.get(i).copied().unwrap_or(d);
    let (n, gap, h, t_end, e) = (
        arg(0, 50.0) as usize,
        arg(1, 0.0),
        arg(2, 1e-3),
        arg(3, 1.0),
        arg(4, 1.0),
    );
    let mut model = cradle(n, M, R, gap, 0.05, e);
    let opts = NsgaOptions {
        h,
        t_end,
        gravity: Vector3::zeros(),
        threads: common::threads(),
        jacobian_reuse: common::jacobian_reuse(),
        contact_solver: if std::env::args().any(|a| a == "--gauss-seidel") {
            ContactSolver::GaussSeidel
        } else {
            ContactSolver::Newton
        },
        ..NsgaOptions::default()
    };
    let contact_solver = opts.contact_solver;
    let steps = (t_end / h).round() as usize;
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut problems = 0;
    let t0 = Instant::now();
    for _ in 0..steps {
        let stats = solver.step(&mut model).unwrap();
        problems = problems.max(stats.stages()[2].solves);
    }
    let wall = t0.elapsed().as_secs_f64();
    let v: Vec<f64> = solver.nodes().iter().map(|s| s.v.x).collect();
    let others = v[1..n - 1].iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    let energy: f64 = solver
        .nodes()
        .iter()
        .map(|s| 0.5 * M * s.v.norm_squared())
        .sum();
    println!(
        "{{\"case\": \"cradle\", \"code\": \"saltus\", \"N\": {n}, \"gap\": {gap}, \"e\": {e}, \"h\": {h:e}, \
         \"T\": {t_end}, \"contact_solver\": \"{contact_solver:?}\", \"steps\": {steps}, \"wall_s\": {wall:.6}, \"us_per_step\": {:.3}, \
         \"v_first\": {:.9}, \"v_last\": {:.9}, \"v_max_other\": {others:.3e}, \"momentum\": {:.9}, \
         \"energy_ratio\": {:.9}, \"max_impact_problems\": {problems}, \"iterations\": {:?}, \
         \"factorizations\": {:?}}}",
        1e6 * wall / steps.max(1) as f64,
        v[0],
        v[n - 1],
        M * v.iter().sum::<f64>(),
        energy / (0.5 * M),
        solver.summary().iterations(),
        solver.summary().numeric_factorizations(),
    );
}
