//! Benchmark: N independent balls (rigid spheres) dropped on a frictional plane, each with its
//! own sphere–plane contact (no ball–ball contact). Prints per N the wall time per step, the
//! Newton iterations per subproblem (mean and max) and the line-search backtracks, over a run
//! that contains the impacts (balls start at staggered heights so that impacts are spread).
//!
//! Run: `cargo bench --bench balls` (N = 10, 100, 1000) or `cargo bench --bench balls -- 100`.

mod common;
use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::prelude::*;
use std::time::Instant;

fn balls(n: usize) -> Model {
    let r = 0.05;
    let mut model = Model::new();
    let side = (n as f64).sqrt().ceil() as usize;
    for i in 0..n {
        let (ix, iy) = (i % side, i / side);
        let x = Vector3::new(
            3.0 * r * ix as f64,
            3.0 * r * iy as f64,
            r + 0.05 + 0.2 * ((i * 7) % 11) as f64 / 11.0,
        );
        let node = model
            .add_node(NodeDef::frame(format!("ball{i}"), x).velocity(Vector3::new(0.5, 0.0, 0.0)))
            .unwrap();
        model
            .add_element(format!("body{i}"), RigidBody::sphere(node, 0.2, r).unwrap())
            .unwrap();
        let c = PlaneContact::sphere(node, r, Vector3::zeros(), Vector3::z())
            .unwrap()
            .friction(0.3)
            .restitution(0.6, 0.0)
            .resistance(0.001, 0.0005);
        model.add_element(format!("floor{i}"), c).unwrap();
    }
    model
}

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
