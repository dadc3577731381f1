//! Benchmark case (d) of `../shared/bench-peers`: the flexible slider-crank. A rigid crank
//! (r = 0.15 m, a steel rod of d = 6 mm: m = ρ A r, J = m r²/12) hinged to the ground and driven
//! to Ω = 150 rad/s by a half-cosine ramp over 0.05 s; a connecting rod (l = 0.30 m, steel,
//! d = 6 mm, E = 210 GPa, ν = 0.3, ρ = 7850 kg/m³, shear coefficient 0.9) of 8 geometrically
//! exact beam elements; its far end slides along x (a slider node on a prismatic joint, tied to
//! the rod end by a spherical joint). The peer's slider is massless; a free node must carry mass
//! here, so the slider has 1 mg (its inertia force ≤ 1e-6 kg · Ω²r ≈ 3e-3 N against ~100 N of rod
//! force: 3e-5 relative, below the 4 digits compared). No gravity, no damping,
//! ρ∞ = 0.9, h = 1e-4 s, T = 0.5 s. The peer (Exudyn) solves the planar model; ours is 3-D.
//!
//! Prints one JSON line: steps, wall time of the stepping loop, µs/step, the maximum midpoint
//! deflection of the rod relative to the chord of its ends (sampled every 10 steps, as the
//! peer's sensors; peer: 3.8669 mm) and the final slider position (peer: 0.191693 m).
//!
//! Run: `cargo bench --bench slider_crank -- [NE] [T] [H] [--full-newton]`.

#[path = "../tests/bench_models/mod.rs"]
mod bench_models;
mod common;
use bench_models::peer_slider_crank as model;
use saltus::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ne = args.first().map_or(8, |&n| n as usize);
    let t_end = args.get(1).copied().unwrap_or(0.5);
    let h = args.get(2).copied().unwrap_or(1e-4);
    let (mut model, rod) = model(ne);
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf: 0.9,
        gravity: Vector3::zeros(),
        threads: common::threads(),
        jacobian_reuse: common::jacobian_reuse(),
        ..NsgaOptions::default()
    };
    let steps = (t_end / h).round() as usize;
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let deflection = |s: &Nsga| bench_models::midpoint_deflection(s.nodes(), &rod);
    let mut max_deflection: f64 = 0.0;
    let t0 = Instant::now();
    for k in 1..=steps {
        solver.step(&mut model).unwrap();
        if k % 10 == 0 {
            max_deflection = max_deflection.max(deflection(&solver).abs());
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let s = solver.summary();
    println!(
        "{{\"case\": \"slider_crank\", \"code\": \"saltus\", \"NE\": {ne}, \"h\": {h:e}, \"T\": {t_end}, \
         \"steps\": {}, \"wall_s\": {wall:.6}, \"us_per_step\": {:.3}, \
         \"mid_defl_max_abs\": {max_deflection:.7e}, \"slider_x_final\": {:.7}, \
         \"iterations\": {:?}, \"factorizations\": {:?}}}",
        s.steps,
        1e6 * wall / s.steps.max(1) as f64,
        solver.nodes()[rod[ne].index()].x.x,
        s.iterations(),
        s.numeric_factorizations()
    );
}
