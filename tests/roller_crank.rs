//! Rigid roller–crank mechanism of the thesis (validation case V05, after Marques et al.):
//! crank (0.1 m, 0.12 kg, 0.002 kg m²) hinged to the ground, connecting rod (0.3 m, 0.3 kg,
//! 0.002 kg m²), spherical roller (r = 0.05 m, 0.1 kg, 0.001 kg m²) hinged to the rod and in
//! frictional contact (μ = 0.1, e_N = e_T = 0) with the ground plane y = 0 (perfect revolute
//! joints ground–crank, crank–rod, rod–roller); gravity −Y; initial
//! crank speed 4 rad/s about Z, roller spin 8 rad/s counter-clockwise; h = 1e-3 s, ρ∞ = 0,
//! T = 2 s. The thesis gives the layout only in a figure: here the crank pivot is at the roller
//! centre's height (0, r) and the crank starts vertical (θ = 90°), so the mechanism starts as an
//! offset-free slider–crank whose "slider" is the roller (the model is shared with
//! `tests/roller_crank_flexible.rs`, see `tests/roller_crank_model`). Checked: it runs stably to T with the
//! contact enforced exactly (no penetration while closed, joints to 1e-10), and the Newton
//! counts are of the thesis' order (max 1/3/2, mean 1/2/1).

mod roller_crank_model;

use roller_crank_model::{roller_crank_model, Rod};
use saltus::prelude::*;

#[test]
fn roller_crank_runs_with_exact_contact_and_few_iterations() {
    // V05: rigid rod, no rolling resistance (model in tests/roller_crank_model).
    let mut model = roller_crank_model(Rod::Rigid, 0.0);
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 2.0,
        rho_inf: 0.0,
        tol: 1e-8,
        gravity: Vector3::new(0.0, -9.8, 0.0),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let s = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    let gap: Vec<f64> = sink
        .channel("ground_contact", "gap")
        .unwrap()
        .iter()
        .map(|g| g[0])
        .collect();
    let min_gap = gap.iter().cloned().fold(f64::INFINITY, f64::min);
    let mut worst_joint: f64 = 0.0;
    for j in ["bearing", "crank_pin", "wrist_pin"] {
        for v in sink.channel(j, "violation").unwrap() {
            worst_joint = worst_joint.max(v[0]).max(v[1]);
        }
    }
    let lifted = gap.iter().filter(|g| **g > 1e-6).count();
    eprintln!(
        "min gap {min_gap:e}, steps with the roller lifted {lifted}, joint violation {worst_joint:e}; iterations mean {:?} max {:?}, backtracks {:?}",
        s.mean_iterations(),
        s.max_iterations(),
        s.backtracks()
    );
    // Roller angular acceleration on 0–0.2 s, where Marques' discontinuous friction model shows
    // spurious oscillations and the nonsmooth scheme must not: count the step-to-step
    // alternations of its increments (an oscillation at the step frequency alternates every
    // step).
    let roller_i = 3;
    let alpha: Vec<f64> = sink
        .nodes
        .windows(2)
        .take_while(|w| w[1][roller_i].x.x.is_finite())
        .zip(sink.time.windows(2))
        .filter(|(_, t)| t[1] <= 0.2)
        .map(|(w, t)| {
            (w[1][roller_i].omega_spatial().z - w[0][roller_i].omega_spatial().z) / (t[1] - t[0])
        })
        .collect();
    let d: Vec<f64> = alpha.windows(2).map(|w| w[1] - w[0]).collect();
    let alternations = d
        .windows(2)
        .filter(|w| w[0] * w[1] < 0.0 && w[0].abs() > 1e-6 && w[1].abs() > 1e-6)
        .count();
    eprintln!("roller angular acceleration on 0–0.2 s: {} samples, range [{:.3}, {:.3}] rad/s², {alternations} alternations",
        alpha.len(), alpha.iter().cloned().fold(f64::INFINITY, f64::min), alpha.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
    // A smooth history has a few extrema over 0.2 s; a spurious oscillation at the step
    // frequency would alternate at most of the 199 samples.
    assert!(alternations <= 5, "{alternations} alternations");
    // Exact enforcement: no penetration and joints to the Newton tolerance.
    assert!(min_gap >= -1e-10);
    assert!(worst_joint <= 1e-10);
    // The thesis reports max (1, 3, 2); with our layout and scaling allow a little more but
    // require the semi-smooth Newton to stay in the few-iterations regime.
    assert!(
        s.max_iterations()[0] <= 3 && s.max_iterations()[1] <= 6 && s.max_iterations()[2] <= 6,
        "{s:?}"
    );
}
