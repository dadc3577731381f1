//! Benchmark case (a) of `../shared/bench-peers`: a rigid ball (m = 1 kg, R = 0.1 m, centre
//! released from rest at z = 1 m) bouncing on the plane z = 0 with Newton restitution e = 0.9,
//! frictionless, g = 9.81 m/s², for T = 10 s. Prints one JSON line: steps, wall time of the
//! stepping loop, µs/step and the physical outputs the peer prints — the first apex (highest
//! centre after t = 0.5 s; exact 0.1 + 0.9² · 0.9 = 0.829 m) and the final state.
//!
//! Run: `cargo bench --bench bouncing_ball -- [H] [T] [--hdf5] [--full-newton]`
//! (defaults h = 5e-3, T = 10). `--hdf5` records every step into an HDF5 file (in the system's
//! temporary directory, removed afterwards); the recording is inside the timed loop.

mod common;
use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::io::Hdf5Sink;
use saltus::prelude::*;
use std::time::Instant;

const M: f64 = 1.0;
const R: f64 = 0.1;
const Z0: f64 = 1.0;
const E: f64 = 0.9;
const G: f64 = 9.81;

fn model() -> Model {
    let mut model = Model::new();
    let b = model
        .add_node(NodeDef::frame("ball", Vector3::new(0.0, 0.0, Z0)))
        .unwrap();
    model
        .add_element("ball", RigidBody::sphere(b, M, R).unwrap())
        .unwrap();
    let floor = PlaneContact::sphere(b, R, Vector3::zeros(), Vector3::z())
        .unwrap()
        .restitution(E, 0.0);
    model.add_element("floor", floor).unwrap();
    model
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let h = args.first().copied().unwrap_or(5e-3);
    let t_end = args.get(1).copied().unwrap_or(10.0);
    let hdf5 = std::env::args().any(|a| a == "--hdf5");
    let mut model = model();
    let opts = NsgaOptions {
        h,
        t_end,
        gravity: Vector3::new(0.0, 0.0, -G),
        threads: common::threads(),
        jacobian_reuse: common::jacobian_reuse(),
        ..NsgaOptions::default()
    };
    let steps = (t_end / h).round() as usize;
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let path = std::env::temp_dir().join(format!("saltus-bench-ball-{}.h5", std::process::id()));
    let mut sink = hdf5.then(|| Hdf5Sink::create(&path).unwrap().with_xdmf(false));
    let t0 = Instant::now();
    if let Some(sink) = sink.as_mut() {
        sink.begin(solver.layout()).unwrap();
        solver.record(&model, sink).unwrap();
    }
    let mut apex = f64::NEG_INFINITY;
    for _ in 0..steps {
        solver.step(&mut model).unwrap();
        if let Some(sink) = sink.as_mut() {
            solver.record(&model, sink).unwrap();
        }
        if solver.time() > 0.5 {
            apex = apex.max(solver.nodes()[0].x.z);
        }
    }
    if let Some(sink) = sink.as_mut() {
        sink.finish().unwrap();
    }
    let wall = t0.elapsed().as_secs_f64();
    if hdf5 {
        std::fs::remove_file(&path).ok();
    }
    let s = solver.summary();
    let ball = &solver.nodes()[0];
    // JSON has no infinity: no apex after 0.5 s (a run shorter than that) is null.
    let apex = if apex.is_finite() {
        format!("{apex:.6}")
    } else {
        "null".to_string()
    };
    println!(
        "{{\"case\": \"bouncing_ball\", \"code\": \"saltus\", \"h\": {h:e}, \"T\": {t_end}, \
         \"output\": \"{}\", \"steps\": {}, \"wall_s\": {wall:.6}, \"us_per_step\": {:.4}, \
         \"zmax_after_first_impact\": {apex}, \"z_final\": {:.6}, \"vz_final\": {:.6}, \
         \"iterations\": {:?}, \"factorizations\": {:?}}}",
        if hdf5 { "hdf5 every step" } else { "none" },
        s.steps,
        1e6 * wall / s.steps.max(1) as f64,
        ball.x.z,
        ball.v.z,
        s.iterations(),
        s.numeric_factorizations()
    );
}
