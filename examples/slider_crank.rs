//! # A driven slider–crank, built in code
//!
//! The mechanism of the built-in default model (`models/slider_crank.toml`), written with
//! typed builders instead of a model file: crank `r = 0.1 m` hinged to the ground and driven
//! by a prescribed rotation `θ(t) = θ₀ + ω t`, connecting rod `l = 0.3 m` with spherical joints
//! at both ends (a revolute pair at each end plus the prismatic guide would be redundant in 3-D),
//! slider on a prismatic joint along x. Because the crank angle is imposed and every joint is
//! enforced exactly at position level, the slider follows the closed-form kinematics
//! `x_s = r cos θ + √(l² − r² sin² θ)` to round-off, whatever the step size.
//!
//! Run: `cargo run --release --example slider_crank` (writes `out/slider_crank.h5`).

use saltus::elements::body::RigidBody;
use saltus::elements::joints::{PrescribedRotation, PrismaticJoint, RevoluteJoint, SphericalJoint};
use saltus::io::Hdf5Sink;
use saltus::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (r, l, omega) = (0.1, 0.3, 2.0 * std::f64::consts::PI);

    // Nodes at the centres of mass, all on the x axis (θ = 0), with the exact kinematic
    // velocities of the driven motion at θ = 0 (crank spinning at ω).
    let mut model = Model::new();
    let ground = model.add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())?;
    let crank = model.add_node(
        NodeDef::frame("crank", Vector3::new(r / 2.0, 0.0, 0.0))
            .velocity(Vector3::new(0.0, omega * r / 2.0, 0.0))
            .angular_velocity(Vector3::new(0.0, 0.0, omega)),
    )?;
    // At θ = 0 the pin moves at ω r along y and the slider is at rest: the rod turns about its
    // wrist end at −ω r / l, its centre moving at ω r / 2.
    let rod = model.add_node(
        NodeDef::frame("rod", Vector3::new(r + l / 2.0, 0.0, 0.0))
            .velocity(Vector3::new(0.0, omega * r / 2.0, 0.0))
            .angular_velocity(Vector3::new(0.0, 0.0, -omega * r / l)),
    )?;
    let slider = model.add_node(NodeDef::frame("slider", Vector3::new(r + l, 0.0, 0.0)))?;

    model.add_element(
        "crank_body",
        RigidBody::principal(crank, 0.5, Vector3::new(1e-4, 5e-4, 5e-4))?,
    )?;
    model.add_element(
        "rod_body",
        RigidBody::principal(rod, 1.0, Vector3::new(2e-4, 7.5e-3, 7.5e-3))?,
    )?;
    model.add_element(
        "slider_body",
        RigidBody::principal(slider, 2.0, Vector3::new(1e-3, 1e-3, 1e-3))?,
    )?;

    let z = Vector3::z();
    model.add_element(
        "main_bearing",
        RevoluteJoint::new(model.nodes(), ground, crank, Vector3::zeros(), z)?,
    )?;
    model.add_element(
        "motor",
        PrescribedRotation::new(model.nodes(), ground, crank, z, 0.0, omega)?,
    )?;
    model.add_element(
        "crank_pin",
        SphericalJoint::new(model.nodes(), crank, rod, Vector3::new(r, 0.0, 0.0))?,
    )?;
    model.add_element(
        "wrist_pin",
        SphericalJoint::new(model.nodes(), rod, slider, Vector3::new(r + l, 0.0, 0.0))?,
    )?;
    model.add_element(
        "slide",
        PrismaticJoint::new(
            model.nodes(),
            ground,
            slider,
            Vector3::new(r + l, 0.0, 0.0),
            Vector3::x(),
        )?,
    )?;

    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 2.0,
        rho_inf: 0.8,
        gravity: Vector3::new(0.0, -9.81, 0.0),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts)?;
    std::fs::create_dir_all("out")?;
    let mut sink = Hdf5Sink::create("out/slider_crank.h5")?;
    let summary = solver.run(&mut model, &mut sink, &mut |_| {})?;

    let theta = omega * solver.time();
    let exact = r * theta.cos() + (l * l - r * r * theta.sin().powi(2)).sqrt();
    let x = solver.nodes()[slider.index()].x.x;
    println!(
        "{} steps; Newton iterations mean {:?}, max {:?}",
        summary.steps,
        summary.mean_iterations(),
        summary.max_iterations()
    );
    println!(
        "slider at t = {:.3} s: {x:.12} m, closed form {exact:.12} m",
        solver.time()
    );
    Ok(())
}
