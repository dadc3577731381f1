//! # A granular pile: contacts found at run time, exact Coulomb friction, no penetration
//!
//! 27 glass-bead-like spheres (R = 5 cm, 1000 kg/m³) start on a jittered 3 × 3 × 3 lattice
//! and fall into an open square box. Every sphere–sphere and sphere–wall contact is created and
//! removed by one contact group as the spheres move (a broad phase over the group's members),
//! with Coulomb friction μ = 0.3 and no rebound (e = 0), enforced exactly at position and
//! velocity level by NSGA.
//!
//! A settling pile is the hard case for the semi-smooth Newton of the contact subproblems: a
//! sphere wedged in a corner against two walls and a neighbour has more contact rows than
//! degrees of freedom, and at rest one of its contacts can sit exactly between sticking and
//! slipping. A nonsmooth Gauss–Seidel over the contacts needs no such regularity: each contact
//! solves its own Signorini–Coulomb problem exactly with the others frozen. This program runs
//! it first (`NsgaOptions::contact_solver = ContactSolver::GaussSeidel`; the Newton finishes
//! a solve only if the sweeps do not pass the residual test); for free bodies it never
//! factorizes the contact network, and it costs a fraction of the Newton's iterations. The
//! default Newton, handing the solves it cannot finish to the same Gauss–Seidel
//! (`NsgaOptions::contact_fallback`), runs this pile more than 20 times slower per step and
//! stops at t ≈ 0.65 s, in a position solve neither finishes (0.79 s with
//! `persistent_steps = 1`; `docs/performance.md`, "The settled pile"). Granular codes run
//! such piles at relative tolerances of 1e-4 (Siconos' NSGS in `../shared/bench-peers`); this
//! program uses 1e-5. At the default 1e-8 the pile still stops once it settles
//! (`docs/performance.md`).
//!
//! The program prints the solver statistics (how many solves the Gauss–Seidel settled, in how
//! many sweeps), the number of contacts, the largest penetration between spheres and walls
//! (zero to the solver tolerance) and how fast the spheres still move.
//!
//! Run: `cargo run --release --example granular_pile` (under a second; writes
//! `out/granular_pile.h5` with every contact of every step in `/contacts`).

use saltus::core::fd::Rng;
use saltus::elements::body::RigidBody;
use saltus::elements::contact::group::ContactGroup;
use saltus::io::Hdf5Sink;
use saltus::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // ## 1. The spheres
    // Frame nodes (position and rotation: the spheres roll) on a lattice 1.1 diameters apart,
    // each shifted horizontally by up to ±4 mm so that the pile does not stack in columns.
    let (r, rho, n_side) = (0.05, 1000.0, 3);
    let mass = rho * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    let spacing = 0.11;
    let half = 0.5 * (n_side as f64 * spacing + 0.02);
    let mut model = Model::new();
    let mut rng = Rng::new(42);
    let mut spheres = Vec::new();
    for k in 0..n_side * n_side * n_side {
        let (ix, iy, iz) = (k % n_side, (k / n_side) % n_side, k / (n_side * n_side));
        let mut jitter = || 0.004 * rng.uniform();
        let x = Vector3::new(
            -half + 0.01 + spacing * (ix as f64 + 0.5) + jitter(),
            -half + 0.01 + spacing * (iy as f64 + 0.5) + jitter(),
            r + 0.01 + spacing * iz as f64,
        );
        let node = model.add_node(NodeDef::frame(format!("s{k}"), x))?;
        model.add_element(format!("sphere{k}"), RigidBody::sphere(node, mass, r)?)?;
        spheres.push(node);
    }

    // ## 2. The contacts
    // One group: its members touch each other and the five planes of the box (floor z = 0,
    // walls at x, y = ±half). Before every step it adds a contact element for each pair closer
    // than a margin and removes those that separated; each contact keeps its friction state.
    model.add_detector(
        ContactGroup::new("grains")
            .spheres(&spheres, r)
            .friction(0.3)
            .open_box(half),
    );

    // ## 3. The integrator
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 1.0,
        tol: 1e-5,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        contact_solver: ContactSolver::GaussSeidel,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts)?;

    // ## 4. Run, every step to HDF5 (node states, energies, the contact table)
    std::fs::create_dir_all("out")?;
    let mut sink = Hdf5Sink::create("out/granular_pile.h5")?;
    let summary = solver.run(&mut model, &mut sink, &mut |_| {})?;
    println!(
        "{} steps in {:.1} s; Newton iterations per step (mean/max): {}",
        summary.steps,
        summary.wall.as_secs_f64(),
        summary.describe()
    );

    // ## 5. Check the pile: no sphere inside another or inside the box, and how fast it moves
    let states = solver.nodes();
    let mut penetration: f64 = 0.0;
    for (i, a) in states.iter().enumerate() {
        penetration = penetration
            .max(r - a.x.z)
            .max(a.x.x.abs() + r - half)
            .max(a.x.y.abs() + r - half);
        for b in &states[i + 1..] {
            penetration = penetration.max(2.0 * r - (a.x - b.x).norm());
        }
    }
    let kinetic: f64 = states.iter().map(|s| 0.5 * mass * s.v.norm_squared()).sum();
    let fastest = states.iter().map(|s| s.v.norm()).fold(0.0, f64::max);
    let contacts = model
        .elements()
        .iter()
        .filter(|e| e.as_contact().is_some())
        .count();
    println!(
        "at t = {:.2} s: {contacts} contacts, largest penetration {penetration:.1e} m, \
         translational kinetic energy {kinetic:.2e} J, fastest sphere {fastest:.2e} m/s",
        solver.time(),
    );
    Ok(())
}
