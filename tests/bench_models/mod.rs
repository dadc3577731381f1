//! The benchmark models, shared by `benches/` and the tests that run them
//! (`#[path = "../tests/bench_models/mod.rs"] mod bench_models;` in a bench).

#![allow(dead_code)]

use saltus::elements::beam::{BeamBuilder, BeamSpec};
use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::force::NodalLoad;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;

/// `n` rigid spheres (r = 5 cm, 0.2 kg) dropped at staggered heights 5–25 cm above a frictional
/// plane (μ = 0.3, e_N = 0.6, rolling and spinning resistance), each with its own contact.
pub fn balls(n: usize) -> Model {
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

/// A steel cantilever (L = 1 m, 20 mm × 10 mm, clamped by a fixed root node) in `n` geometrically
/// exact beam elements under a suddenly applied tip force (1 kN axial, 100 N transverse).
pub fn cantilever(n: usize) -> Model {
    let mut model = Model::new();
    let root = model
        .add_node(NodeDef::frame("root", Vector3::zeros()).fixed())
        .unwrap();
    let tip = model
        .add_node(NodeDef::frame("tip", Vector3::new(1.0, 0.0, 0.0)))
        .unwrap();
    let spec = BeamSpec::rectangular(2.1e11, 0.3, 7850.0, 0.02, 0.01);
    BeamBuilder::new("beam", spec)
        .line(&mut model, root, tip, n)
        .unwrap();
    let load = NodalLoad::on_frame(tip, Vector3::new(1000.0, 0.0, 100.0), Vector3::zeros());
    model.add_element("load", load.unwrap()).unwrap();
    model
}

/// Chain of `n` links of length `a` \[m\] and mass 1 kg along +x, hinges about y.
pub fn chain(n: usize, a: f64) -> Model {
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
