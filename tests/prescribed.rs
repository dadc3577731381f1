//! Prescribed nodes: a pendulum hung from a support moving at constant velocity is, by
//! Galilean invariance, the same motion as with a fixed support, shifted by `V t`. The NSGA
//! step is exact for uniform motion (its predictor integrates constant velocity exactly), so
//! the two runs agree to round-off.

use saltus::elements::body::RigidBody;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;
use saltus_core::PrescribedMotion;

fn run(support_velocity: Option<Vector3<f64>>) -> MemorySink {
    let v = support_velocity.unwrap_or_else(Vector3::zeros);
    let mut model = Model::new();
    let support = match support_velocity {
        Some(vel) => NodeDef::frame("support", Vector3::zeros()).prescribed(
            PrescribedMotion::ConstantVelocity {
                velocity: vel,
                angular_velocity: Vector3::zeros(),
            },
        ),
        None => NodeDef::frame("support", Vector3::zeros()).fixed(),
    };
    let support = model.add_node(support).unwrap();
    // The bob starts with the support's velocity (same relative initial conditions).
    let bob = model
        .add_node(NodeDef::frame("bob", Vector3::new(1.0, 0.0, 0.0)).velocity(v))
        .unwrap();
    model
        .add_element("bob", RigidBody::sphere(bob, 2.0, 0.05).unwrap())
        .unwrap();
    let hinge =
        RevoluteJoint::new(model.nodes(), support, bob, Vector3::zeros(), Vector3::y()).unwrap();
    model.add_element("hinge", hinge).unwrap();
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 1.0,
        tol: 1e-10,
        ..Default::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    sink
}

#[test]
fn moving_support_is_galilean_invariant() {
    let vel = Vector3::new(3.0, -1.0, 0.5);
    let fixed = run(None);
    let moving = run(Some(vel));
    let mut worst: f64 = 0.0;
    for (k, t) in moving.time.iter().enumerate() {
        let support = moving.nodes[k][0].x;
        assert!(
            (support - vel * *t).norm() < 1e-12,
            "support off its path at t = {t}"
        );
        let rel = moving.nodes[k][1].x - support;
        worst = worst.max((rel - fixed.nodes[k][1].x).norm());
    }
    eprintln!("largest difference of the relative motion: {worst:.2e} m");
    // Round-off accumulated over 1000 steps of O(1) positions (~1e-13) plus the Newton
    // tolerance (1e-10 relative on O(10) residuals): 1e-9 m.
    assert!(worst < 1e-9);
}

#[test]
fn model_file_prescribed_key() {
    let text = r#"
[[nodes]]
name = "belt"
position = [0.0, 0.0, 0.0]
velocity = [1.0, 0.0, 0.0]
prescribed = true
"#;
    let file = saltus::io::parse_str(text, saltus::io::Format::Toml, "belt.toml").unwrap();
    let n = &file.model.nodes()[0];
    assert!(n.fixed && n.motion.is_some());
    let bad = text.replace("prescribed = true", "prescribed = true\nfixed = true");
    let err = saltus::io::parse_str(&bad, saltus::io::Format::Toml, "belt.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("belt.toml") && err.contains("prescribed") && err.contains("belt"),
        "{err}"
    );
}
