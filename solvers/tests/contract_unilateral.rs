//! Contract test: a unilateral contact (frictionless point–plane, spec `nsga.md` §7) and a
//! point mass written *outside* core, against the unchanged `Element` trait, integrated by the
//! NSGA solver. The contact owns one multiplier at position and velocity level, decides its
//! status from the augmented multiplier every Newton iterate, freezes the position status in
//! `level_converged`, and applies Newton's impact law with restitution `e` (spec §6).

mod common;

use common::{ToyMass, ToyPlaneContact};
use nalgebra::Vector3;
use saltus_core::{MemorySink, Model, NodeDef};
use saltus_solvers::{Nsga, NsgaOptions};

#[test]
fn bouncing_point_mass_through_unchanged_core() {
    let (m, e, z0, h) = (0.5, 0.8, 1.0, 1e-3);
    let g = 9.81;
    let mut model = Model::new();
    let n = model
        .add_node(NodeDef::point("ball", Vector3::new(0.0, 0.0, z0)))
        .unwrap();
    model.add_element("mass", ToyMass { node: [n], m }).unwrap();
    model
        .add_element(
            "floor",
            ToyPlaneContact {
                node: [n],
                restitution: e,
                closed: false,
            },
        )
        .unwrap();
    let opts = NsgaOptions {
        h,
        t_end: 2.5,
        rho_inf: 0.8,
        gravity: Vector3::new(0.0, 0.0, -g),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();

    let z: Vec<f64> = sink.nodes.iter().map(|n| n[0].x.z).collect();
    // No penetration: the position correction enforces g ≥ 0 exactly (to Newton tolerance).
    let min_gap = z.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(min_gap >= -1e-10, "penetration {min_gap}");

    // Apex heights h0·e^{2k}. The impact is resolved at the first step whose prediction
    // penetrates, so the ball is lifted by at most one step of travel v_impact·h per impact
    // (v_impact ≤ √(2 g z0) ≈ 4.43 m/s → 4.4e-3 m); the tolerance is that bound.
    let v_impact = (2.0 * g * z0).sqrt();
    let mut apexes = Vec::new();
    for i in 1..z.len() - 1 {
        if z[i] > z[i - 1] && z[i] >= z[i + 1] && z[i] > 1e-3 {
            apexes.push(z[i]);
        }
    }
    eprintln!("apexes {apexes:?}, min gap {min_gap:e}");
    assert!(apexes.len() >= 2, "apexes {apexes:?}");
    for (k, a) in apexes.iter().take(2).enumerate() {
        let expected = z0 * e.powi(2 * (k as i32 + 1));
        assert!(
            (a - expected).abs() <= v_impact * h,
            "apex {k}: {a} vs {expected}"
        );
    }
    // The velocity jump follows Newton's law: impulse ≈ m (1 + e) v_impact at the first impact.
    let imp = sink.channel("floor", "impulse").unwrap();
    let first = imp.iter().map(|v| v[0]).find(|v| *v > 0.0).unwrap();
    let expected = m * (1.0 + e) * v_impact;
    // The impulse of the step is m (1 + e) |v_n| plus the step's gravity impulse m g h, and the
    // pre-impact velocity v_n is within one step (g h) of the exact impact velocity: so
    // |impulse − m (1 + e) v_impact| ≤ m (1 + e) g h + m g h ≤ 2 m (1 + e) g h.
    assert!(
        (first - expected).abs() <= m * (1.0 + e) * g * h * 2.0,
        "impulse {first} vs {expected}"
    );
    // A point mass against a plane is linear in each status: a correction converges in one
    // Newton iteration, or two when the impact changes the contact's status (observed: 1).
    let stats = solver.summary();
    eprintln!("first impulse {first} (expected {expected}); stats {stats:?}");
    assert!(stats.max_iterations().iter().all(|&i| i <= 2), "{stats:?}");
    assert_eq!(stats.symbolic_factorizations(), [1, 1, 1]);
}

/// Pins the position-correction force weight `h²/2` (spec §5 unit test): mass 1 predicted to
/// penetrate the wall by `d`, mass 2 joined to it by a spring along the normal, no gravity.
/// After step 2: `U₁ = d` and `U₂ = (h²/2) k d / (m₂ + (h²/2) k)` exactly.
#[test]
fn position_correction_weight_is_half_h_squared() {
    let (m1, m2, k, h) = (1.0, 2.0, 5.0e4, 1e-2);
    let mut model = Model::new();
    let a = model
        .add_node(
            NodeDef::point("a", Vector3::new(0.0, 0.0, 0.01))
                .velocity(Vector3::new(0.0, 0.0, -2.0)),
        )
        .unwrap();
    let b = model
        .add_node(
            NodeDef::point("b", Vector3::new(0.0, 0.0, 0.51))
                .velocity(Vector3::new(0.0, 0.0, -2.0)),
        )
        .unwrap();
    model
        .add_element("ma", ToyMass { node: [a], m: m1 })
        .unwrap();
    model
        .add_element("mb", ToyMass { node: [b], m: m2 })
        .unwrap();
    model
        .add_element(
            "spring",
            common::ToySpringZ {
                nodes: [a, b],
                k,
                rest: 0.5,
            },
        )
        .unwrap();
    model
        .add_element(
            "wall",
            ToyPlaneContact {
                node: [a],
                restitution: 0.0,
                closed: false,
            },
        )
        .unwrap();
    let opts = NsgaOptions {
        h,
        t_end: h,
        gravity: Vector3::zeros(),
        tol: 1e-12,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    solver.step(&mut model).unwrap();
    let smooth = solver.smooth_nodes();
    let end = solver.nodes();
    let d = -smooth[0].x.z;
    assert!(
        d > 0.0,
        "the smooth prediction must penetrate, got z̃ = {}",
        smooth[0].x.z
    );
    let u1 = end[0].x.z - smooth[0].x.z;
    let u2 = end[1].x.z - smooth[1].x.z;
    let w = 0.5 * h * h;
    let expected = w * k * d / (m2 + w * k);
    // Both are linear solves of the converged Newton system: agreement to round-off
    // (relative 1e-9 allows for the 1e-12 Newton tolerance on O(1) residual terms).
    assert!((u1 - d).abs() <= 1e-9 * d, "U1 = {u1}, d = {d}");
    assert!(
        (u2 - expected).abs() <= 1e-9 * expected,
        "U2 = {u2}, expected {expected}"
    );
}
