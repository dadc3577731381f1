//! Benchmark: a chain of N rigid links connected by revolute joints, released horizontally
//! and falling under gravity (the first link hinged to the ground). Prints, per N, the wall
//! time per step and per Newton iteration, the iterations per subproblem and the number of
//! symbolic LU factorizations (one per subproblem while the pattern holds).
//!
//! Run: `cargo bench --bench chain` (all sizes) or `cargo bench --bench chain -- 10 100`.

mod common;
use saltus::elements::body::RigidBody;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;
use std::time::Instant;

/// Chain of `n` links of length `a` \[m\] and mass 1 kg along +x, hinges about y.
fn chain(n: usize, a: f64) -> Model {
    let mut model = Model::new();
    let mut prev = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    for i in 0..n {
        let c = Vector3::new((i as f64 + 0.5) * a, 0.0, 0.0);
        let node = model
            .add_node(NodeDef::frame(format!("link{i}"), c))
            .unwrap();
        let inertia = Vector3::new(1e-4, (a * a) / 12.0, (a * a) / 12.0);
        model
            .add_element(
                format!("body{i}"),
                RigidBody::principal(node, 1.0, inertia).unwrap(),
            )
            .unwrap();
        let anchor = Vector3::new(i as f64 * a, 0.0, 0.0);
        let hinge = RevoluteJoint::new(model.nodes(), prev, node, anchor, Vector3::y()).unwrap();
        model.add_element(format!("hinge{i}"), hinge).unwrap();
        prev = node;
    }
    model
}

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
    println!(
        "{:>7} {:>7} {:>12} {:>14} {:>12} {:>10}",
        "N", "steps", "ms/step", "us/iteration", "iter s/p/v", "symbolic"
    );
    for n in sizes {
        let mut model = chain(n, 0.1);
        let steps = (20_000 / n).clamp(10, 200);
        let h = 1e-3;
        let opts = NsgaOptions {
            h,
            t_end: steps as f64 * h,
            rho_inf: 0.8,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            threads: common::threads(),
            ..NsgaOptions::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let t0 = Instant::now();
        for _ in 0..steps {
            solver.step(&mut model).unwrap();
        }
        let wall = t0.elapsed().as_secs_f64();
        let s = solver.summary();
        let iters: usize = s.iterations().iter().sum();
        let m = s.mean_iterations();
        println!(
            "{:>7} {:>7} {:>12.3} {:>14.1} {:>4.1}/{:.1}/{:.1} {:>10?}",
            n,
            steps,
            1e3 * wall / steps as f64,
            1e6 * wall / iters.max(1) as f64,
            m[0],
            m[1],
            m[2],
            s.symbolic_factorizations()
        );
    }
}
