//! Simple pendulum on a revolute joint at 90° amplitude: period against the exact
//! elliptic-integral period, energy drift order with ρ∞ = 1, and exact constraint
//! satisfaction at position and velocity level at every step.

use saltus::elements::body::RigidBody;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;
use std::f64::consts::PI;

const G: f64 = 9.81;
const L: f64 = 1.0;
const M: f64 = 2.0;
/// Radius of the bob (a small sphere: a physical pendulum, accounted for exactly).
const R: f64 = 0.05;

/// Complete elliptic integral of the first kind K(k) by the arithmetic–geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..30 {
        let (an, bn) = (0.5 * (a + b), (a * b).sqrt());
        a = an;
        b = bn;
    }
    PI / (2.0 * a)
}

/// Pendulum released from horizontal: bob at (L, 0, 0), hinge at the origin about y.
fn pendulum() -> Model {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let bob = model
        .add_node(NodeDef::frame("bob", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    model
        .add_element("bob", RigidBody::sphere(bob, M, R).unwrap())
        .unwrap();
    let hinge =
        RevoluteJoint::new(model.nodes(), ground, bob, Vector3::zeros(), Vector3::y()).unwrap();
    model.add_element("hinge", hinge).unwrap();
    model
}

fn run(h: f64, t_end: f64, rho_inf: f64) -> (MemorySink, RunSummary) {
    let mut model = pendulum();
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf,
        tol: 1e-10,
        gravity: Vector3::new(0.0, 0.0, -G),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    (sink, summary)
}

/// Exact period of the physical pendulum released at 90°.
fn exact_period() -> f64 {
    let j = M * L * L + 0.4 * M * R * R;
    let omega0 = (M * G * L / j).sqrt();
    4.0 * elliptic_k((PI / 4.0).sin()) / omega0
}

/// Times at which x crosses 0 going from positive to negative (linear interpolation).
fn downward_crossings(sink: &MemorySink) -> Vec<f64> {
    let x: Vec<f64> = sink.nodes.iter().map(|n| n[1].x.x).collect();
    let mut out = Vec::new();
    for i in 1..x.len() {
        if x[i - 1] > 0.0 && x[i] <= 0.0 {
            let s = x[i - 1] / (x[i - 1] - x[i]);
            out.push(sink.time[i - 1] + s * (sink.time[i] - sink.time[i - 1]));
        }
    }
    out
}

#[test]
fn period_matches_elliptic_integral() {
    let t_exact = exact_period();
    let (sink, summary) = run(1e-3, 2.2 * t_exact, 0.8);
    let c = downward_crossings(&sink);
    assert!(c.len() >= 2, "crossings {c:?}");
    let period = c[1] - c[0];
    let err = (period - t_exact).abs() / t_exact;
    eprintln!("period {period:.6} s, exact {t_exact:.6} s, relative error {err:.2e}; {summary:?}");
    // Issue requirement: 0.1 %. The crossing interpolation is O(h²) and generalized-α
    // period elongation O((ωh)²) ≈ 1e-5 here, far inside it.
    assert!(err < 1e-3);
    assert_eq!(summary.symbolic_factorizations(), [1, 1, 1]);
}

#[test]
fn constraints_hold_at_position_and_velocity_level_every_step() {
    let (sink, _) = run(2e-3, 1.0, 0.8);
    let v = sink.channel("hinge", "violation").unwrap();
    let worst_g = v.iter().map(|r| r[0]).fold(0.0, f64::max);
    let worst_gdot = v.iter().map(|r| r[1]).fold(0.0, f64::max);
    eprintln!("max |g| = {worst_g:.2e}, max |g_q v| = {worst_gdot:.2e}");
    // Issue requirement: the position and velocity corrections enforce the joint exactly,
    // i.e. to the Newton tolerance: ≤ 1e-10 (m, rad, m/s, rad/s).
    assert!(worst_g <= 1e-10);
    assert!(worst_gdot <= 1e-10);
}

fn energy_drift(h: f64) -> f64 {
    let (sink, _) = run(h, 1.0, 1.0);
    let e0 = sink.energy[0].kinetic + sink.energy[0].potential;
    sink.energy
        .iter()
        .map(|e| (e.kinetic + e.potential - e0).abs())
        .fold(0.0, f64::max)
        / (M * G * L)
}

#[test]
fn energy_error_is_second_order_with_rho_one() {
    let hs = [4e-3, 2e-3, 1e-3];
    let d: Vec<f64> = hs.iter().map(|&h| energy_drift(h)).collect();
    let p1 = (d[0] / d[1]).log2();
    let p2 = (d[1] / d[2]).log2();
    eprintln!("energy drift {d:?}, observed orders {p1:.3} {p2:.3}");
    // Issue requirement: observed order ≥ 1.9 on three step sizes.
    assert!(p1 >= 1.9 && p2 >= 1.9, "orders {p1} {p2}");
}
