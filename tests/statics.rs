//! Quasi-static equilibrium by load stepping (`solve_static`) against closed forms.

use saltus::elements::body::{PointMass, RigidBody};
use saltus::elements::force::{Attachment, SpringDamper, TorsionalSpring};
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;

const G: f64 = 9.81;

/// Point mass hanging from a fixed anchor by a linear spring: extension `m g / k`. The start
/// is pre-stretched by 1 cm so the spring's tension gives the lateral (geometric) stiffness a
/// static solve needs (at zero tension the lateral equilibrium is neutral: a singular problem).
#[test]
fn hanging_spring_extension() {
    let (m, k, l0) = (2.0, 500.0, 0.3);
    let mut model = Model::new();
    let p = model
        .add_node(NodeDef::point("p", Vector3::new(0.0, 0.0, -l0 - 0.01)))
        .unwrap();
    model
        .add_element("mass", PointMass::new(p, m).unwrap())
        .unwrap();
    let spring =
        SpringDamper::to_anchor(Attachment::point(p), Vector3::zeros(), k, 0.0, l0).unwrap();
    model.add_element("spring", spring).unwrap();
    let opts = StaticOptions {
        load_steps: 4,
        gravity: Vector3::new(0.0, 0.0, -G),
        ..Default::default()
    };
    let summary = solve_static(&mut model, &opts).unwrap();
    let z = model.nodes()[0].initial.x.z;
    let expected = -(l0 + m * G / k);
    eprintln!(
        "z = {z}, expected {expected}; iterations {:?}",
        summary.iterations
    );
    // Linear problem along the spring axis: Newton converges to round-off (1e-12 m).
    assert!((z - expected).abs() < 1e-12);
}

/// A bar hinged at the origin about y, with a torsional spring k at the hinge, released
/// horizontally: equilibrium angle φ below horizontal solves k φ = m g L cos φ (large rotation,
/// reached in load steps).
#[test]
fn hinged_bar_with_torsional_spring() {
    let (m, l, k) = (3.0, 0.8, 10.0);
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let bar = model
        .add_node(NodeDef::frame("bar", Vector3::new(l, 0.0, 0.0)))
        .unwrap();
    model
        .add_element(
            "bar",
            RigidBody::principal(bar, m, Vector3::new(1e-3, 0.16, 0.16)).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "hinge",
            RevoluteJoint::new(model.nodes(), ground, bar, Vector3::zeros(), Vector3::y()).unwrap(),
        )
        .unwrap();
    let r0 = [model.nodes()[0].initial.r, model.nodes()[1].initial.r];
    model
        .add_element(
            "spring",
            TorsionalSpring::new([ground, bar], r0, Vector3::y(), k, 0.0).unwrap(),
        )
        .unwrap();
    let opts = StaticOptions {
        load_steps: 10,
        gravity: Vector3::new(0.0, 0.0, -G),
        ..Default::default()
    };
    let summary = solve_static(&mut model, &opts).unwrap();

    // Bisection on k φ − m g L cos φ (monotone on [0, π/2]).
    let f = |phi: f64| k * phi - m * G * l * phi.cos();
    let (mut a, mut b) = (0.0, std::f64::consts::FRAC_PI_2);
    for _ in 0..200 {
        let c = 0.5 * (a + b);
        if f(c) > 0.0 {
            b = c
        } else {
            a = c
        }
    }
    let phi = 0.5 * (a + b);
    let x = model.nodes()[1].initial.x;
    let expected = Vector3::new(l * phi.cos(), 0.0, -l * phi.sin());
    eprintln!(
        "phi = {phi:.6} rad ({:.2}°), x = {x:?}; iterations {:?}",
        phi.to_degrees(),
        summary.iterations
    );
    assert!(phi > 1.0, "a large rotation is the point of the test");
    // Newton tolerance 1e-10 relative on O(10 N) residuals: positions to ~1e-10 m.
    assert!((x - expected).norm() < 1e-9, "{x} vs {expected}");
    assert!(summary.iterations.iter().all(|&i| i <= 10));
}

/// Statics needs no mass: a massless connector node between two springs in series, the end
/// node loaded by a force along the line. Both springs carry the load `F`, so
/// `ℓ₁ = ℓ₀ + F/k₁`, `ℓ₂ = ℓ₀ + F/k₂`. The springs start pre-stretched (tension gives the
/// lateral stiffness a static solve needs). A free node that no element reaches is an error.
#[test]
fn massless_connector_nodes_in_series_springs() {
    use saltus::elements::force::NodalLoad;
    let (k1, k2, l0, f) = (100.0, 200.0, 0.9, 50.0);
    let mut model = Model::new();
    let a = model
        .add_node(NodeDef::point("connector", Vector3::new(1.0, 0.0, 0.0)))
        .unwrap();
    let b = model
        .add_node(NodeDef::point("end", Vector3::new(2.0, 0.0, 0.0)))
        .unwrap();
    let s1 = SpringDamper::to_anchor(Attachment::point(a), Vector3::zeros(), k1, 0.0, l0);
    model.add_element("s1", s1.unwrap()).unwrap();
    let s2 = SpringDamper::between(Attachment::point(a), Attachment::point(b), k2, 0.0, l0);
    model.add_element("s2", s2.unwrap()).unwrap();
    let load = NodalLoad::on_point(b, Vector3::new(f, 0.0, 0.0)).unwrap();
    model.add_element("load", load).unwrap();
    // The dynamic check still requires mass on free nodes.
    assert!(model.validate().is_err());
    let opts = StaticOptions {
        load_steps: 5,
        ..Default::default()
    };
    solve_static(&mut model, &opts).unwrap();
    let (xa, xb) = (model.nodes()[0].initial.x, model.nodes()[1].initial.x);
    let (e1, e2) = (xa.x - (l0 + f / k1), xb.x - xa.x - (l0 + f / k2));
    // Converged when ‖r‖ ≤ 1e-10 Σ‖r_k‖ with Σ‖r_k‖ ≈ 4 F (three elements, two nodes): with
    // stiffnesses ≥ k₁ the positions are then within 1e-10 · 4 F / k₁ = 2e-10 m.
    let bound = 1e-10 * 4.0 * f / k1;
    assert!(e1.abs() < bound && e2.abs() < bound, "{e1:e} {e2:e}");
    assert!(xa.y.abs() < 1e-12 && xb.z.abs() < 1e-12);

    // A free node nothing reaches is named in the error.
    let mut model = Model::new();
    model
        .add_node(NodeDef::point("loose", Vector3::zeros()))
        .unwrap();
    let err = solve_static(&mut model, &StaticOptions::default()).unwrap_err();
    assert!(err.to_string().contains("`loose`"), "{err}");
}
