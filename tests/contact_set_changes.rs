//! `contact_set_changes`: contact elements created and removed between steps by a pre-step
//! hook follow the trajectory of a model whose contact is always present.
//!
//! A rigid ball bounces (e_N = 0.5) and slides with friction on a plane. In the reference model
//! its sphere–plane contact exists throughout; in the other, a pre-step hook creates the contact
//! when the ball is within a margin of the plane and removes it once the ball has left it. An
//! open contact contributes nothing to the node equations (its multipliers are driven to zero),
//! so both runs solve the same equations for the nodes: the trajectories agree to round-off,
//! and every change of the element set costs exactly one symbolic factorization per stage.

use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::prelude::*;
use std::sync::{Arc, Mutex};

const R: f64 = 0.1;
/// Creation margin \[m\]: larger than the distance the ball travels in one step
/// (|v| h ≤ 3 m/s · 1e-3 s), so a contact exists before any impact.
const MARGIN: f64 = 0.02;

fn contact(node: NodeId) -> PlaneContact {
    PlaneContact::sphere(node, R, Vector3::zeros(), Vector3::z())
        .unwrap()
        .friction(0.3)
        .restitution(0.5, 0.0)
}

fn ball(with_contact: bool) -> (Model, NodeId) {
    let mut model = Model::new();
    let node = model
        .add_node(
            NodeDef::frame("ball", Vector3::new(0.0, 0.0, 0.5))
                .velocity(Vector3::new(0.8, 0.2, 0.0))
                .angular_velocity(Vector3::new(0.0, 0.0, 4.0)),
        )
        .unwrap();
    model
        .add_element("body", RigidBody::sphere(node, 1.0, R).unwrap())
        .unwrap();
    if with_contact {
        model.add_element("floor", contact(node)).unwrap();
    }
    (model, node)
}

fn options() -> NsgaOptions {
    NsgaOptions {
        h: 1e-3,
        t_end: 1.5,
        rho_inf: 0.8,
        ..Default::default()
    }
}

#[test]
fn contact_set_changes() {
    // Reference: contact always present.
    let (mut fixed, _) = ball(true);
    let mut reference = MemorySink::default();
    let mut solver = Nsga::new(&mut fixed, options()).unwrap();
    solver.run(&mut fixed, &mut reference, &mut |_| {}).unwrap();

    // Contact created and removed by the pre-step hook.
    let (mut model, node) = ball(false);
    let mut solver = Nsga::new(&mut model, options()).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&events);
    let mut handle = None;
    solver.set_pre_step_hook(move |model, t, nodes| {
        let gap = nodes[node.index()].x.z - R;
        match handle {
            None if gap < MARGIN => {
                handle = Some(model.add_element("floor", contact(node))?);
                log.lock().unwrap().push((t, "created"));
            }
            Some(h) if gap > MARGIN => {
                model.remove_element(h)?;
                handle = None;
                log.lock().unwrap().push((t, "removed"));
            }
            _ => {}
        }
        Ok(())
    });
    let mut changing = MemorySink::default();
    let summary = solver.run(&mut model, &mut changing, &mut |_| {}).unwrap();

    let events = events.lock().unwrap().clone();
    eprintln!("contact events: {events:?}");
    // Three bounces within 1.5 s: created, removed, created, removed, created, …
    assert!(events.len() >= 4, "{events:?}");
    assert_eq!(events[0].1, "created");
    assert_eq!(summary.topology_changes, events.len());
    for stage in &summary.stages {
        // One symbolic factorization for the initial pattern, one per change.
        assert_eq!(
            stage.symbolic_factorizations,
            1 + events.len(),
            "stage {}",
            stage.name
        );
    }

    assert_eq!(reference.nodes.len(), changing.nodes.len());
    let mut worst: f64 = 0.0;
    let mut lowest = f64::INFINITY;
    for (a, b) in reference.nodes.iter().zip(&changing.nodes) {
        let (a, b) = (&a[0], &b[0]);
        worst = worst
            .max((a.x - b.x).amax())
            .max((a.v - b.v).amax())
            .max((a.omega - b.omega).amax())
            .max(a.r.angle_to(&b.r));
        lowest = lowest.min(a.x.z - R);
    }
    eprintln!("max trajectory difference {worst:e}; lowest gap {lowest:e} m");
    // Same equations for the nodes; only the sparse LU sees extra decoupled rows: round-off.
    assert!(worst < 1e-12, "trajectories differ by {worst:e}");
    // The ball did reach the plane (impacts happened, the comparison is not vacuous).
    assert!(lowest.abs() < 1e-6, "lowest gap {lowest}");
}
