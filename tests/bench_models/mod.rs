//! The benchmark models, shared by `benches/` and the tests that run them
//! (`#[path = "../tests/bench_models/mod.rs"] mod bench_models;` in a bench).

#![allow(dead_code)]

use saltus::elements::beam::{BeamBuilder, BeamSpec};
use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::contact::spheres::SphereContact;
use saltus::elements::force::NodalLoad;
use saltus::elements::joints::{PrescribedRotation, PrismaticJoint, RevoluteJoint, SphericalJoint};
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

/// Newton's cradle: `n` spheres (mass `m` \[kg\], radius `r` \[m\]) on the x axis, `gap` \[m\]
/// apart (0: touching), the first one `lead` \[m\] further back and moving at 1 m/s along x,
/// frictionless sphere–sphere contacts with restitution `e` between neighbours (the
/// benchmark case (b) of `../shared/bench-peers`: m = 1, r = 0.1, lead = 0.05).
pub fn cradle(n: usize, m: f64, r: f64, gap: f64, lead: f64, e: f64) -> Model {
    let xs: Vec<f64> = (0..n)
        .map(|i| i as f64 * (2.0 * r + gap) - if i == 0 { lead } else { 0.0 })
        .collect();
    let vs: Vec<f64> = (0..n).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
    balls_on_x(&xs, &vs, m, r, e)
}

/// Spheres (mass `m` \[kg\], radius `r` \[m\]) on the x axis at `xs` \[m\] moving at `vs`
/// \[m/s\] along x (nodes `s{i}`, bodies `m{i}`), frictionless sphere–sphere contacts `c{i}`
/// with restitution `e` between neighbours.
pub fn balls_on_x(xs: &[f64], vs: &[f64], m: f64, r: f64, e: f64) -> Model {
    let mut model = Model::new();
    let mut ids = Vec::new();
    for (i, (&x, &v)) in xs.iter().zip(vs).enumerate() {
        let id = model
            .add_node(
                NodeDef::frame(format!("s{i}"), Vector3::new(x, 0.0, 0.0))
                    .velocity(Vector3::new(v, 0.0, 0.0)),
            )
            .unwrap();
        model
            .add_element(format!("m{i}"), RigidBody::sphere(id, m, r).unwrap())
            .unwrap();
        ids.push(id);
    }
    for i in 0..ids.len().saturating_sub(1) {
        let c = SphereContact::spheres(ids[i + 1], ids[i], r, r)
            .unwrap()
            .restitution(e, 0.0);
        model.add_element(format!("c{i}"), c).unwrap();
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

/// Case (d) of `../shared/bench-peers` (see `benches/slider_crank.rs`): the flexible
/// slider-crank with a rod of `ne` beam elements, and the rod's node ids (first to last).
pub fn peer_slider_crank(ne: usize) -> (Model, Vec<NodeId>) {
    // Crank and rod lengths, crank speed, ramp time, steel, rod diameter (SI).
    const R: f64 = 0.15;
    const L: f64 = 0.30;
    const OMEGA: f64 = 150.0;
    const RAMP: f64 = 0.05;
    const E: f64 = 2.1e11;
    const NU: f64 = 0.3;
    const RHO: f64 = 7850.0;
    const D: f64 = 0.006;
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let crank = model
        .add_node(NodeDef::frame("crank", Vector3::new(R / 2.0, 0.0, 0.0)))
        .unwrap();
    let area = std::f64::consts::PI * D * D / 4.0;
    let mc = RHO * area * R;
    let j = mc * R * R / 12.0;
    let crank_body = RigidBody::principal(crank, mc, Vector3::new(mc * D * D / 8.0, j, j));
    model
        .add_element("crank_body", crank_body.unwrap())
        .unwrap();
    let hinge = RevoluteJoint::new(model.nodes(), ground, crank, Vector3::zeros(), Vector3::z());
    model.add_element("main", hinge.unwrap()).unwrap();
    let drive = PrescribedRotation::new(model.nodes(), ground, crank, Vector3::z(), 0.0, OMEGA)
        .and_then(|d| d.with_ramp_time(RAMP));
    model.add_element("drive", drive.unwrap()).unwrap();

    let a = model
        .add_node(NodeDef::frame("rod_a", Vector3::new(R, 0.0, 0.0)))
        .unwrap();
    let b = model
        .add_node(NodeDef::frame("rod_b", Vector3::new(R + L, 0.0, 0.0)))
        .unwrap();
    let mut spec = BeamSpec::circular(E, NU, RHO, D / 2.0);
    spec.shear_coefficient = Some(0.9);
    let rod = BeamBuilder::new("rod", spec)
        .line(&mut model, a, b, ne)
        .unwrap();
    let pin = RevoluteJoint::new(
        model.nodes(),
        crank,
        a,
        Vector3::new(R, 0.0, 0.0),
        Vector3::z(),
    );
    model.add_element("crank_pin", pin.unwrap()).unwrap();

    let slider = model
        .add_node(NodeDef::frame("slider", Vector3::new(R + L, 0.0, 0.0)))
        .unwrap();
    let slider_body = RigidBody::principal(slider, 1e-6, Vector3::repeat(1e-12));
    model
        .add_element("slider_body", slider_body.unwrap())
        .unwrap();
    let x_b = Vector3::new(R + L, 0.0, 0.0);
    let guide = PrismaticJoint::new(model.nodes(), ground, slider, x_b, Vector3::x());
    model.add_element("guide", guide.unwrap()).unwrap();
    let ball = SphericalJoint::new(model.nodes(), slider, b, x_b);
    model.add_element("wrist", ball.unwrap()).unwrap();
    (model, rod.nodes)
}

/// In-plane deflection \[m\] of the rod's midpoint from the chord of its ends (signed, positive
/// to the left of the chord in the x–y plane), from the node states and the rod's node ids.
pub fn midpoint_deflection(nodes: &[NodeState], rod: &[NodeId]) -> f64 {
    let (first, mid, last) = (
        rod[0].index(),
        rod[rod.len() / 2].index(),
        rod[rod.len() - 1].index(),
    );
    let chord = nodes[last].x - nodes[first].x;
    let rel = nodes[mid].x - nodes[first].x;
    (chord.x * rel.y - chord.y * rel.x) / chord.norm()
}
