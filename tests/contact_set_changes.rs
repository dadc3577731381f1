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

/// Contact events of a hooked run: (time, "created"/"removed", contact id).
type Events = Vec<(f64, &'static str, u64)>;

/// The ball whose contact is created and removed by the pre-step hook, run into `sink`.
fn hooked_run(sink: &mut dyn ResultSink) -> (Events, RunSummary) {
    let (mut model, node) = ball(false);
    let mut solver = Nsga::new(&mut model, options()).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&events);
    let mut handle = None;
    solver.set_pre_step_hook(move |model, t, nodes| {
        let gap = nodes[node.index()].x.z - R;
        match handle {
            None if gap < MARGIN => {
                let h = model.add_element("floor", contact(node))?;
                handle = Some(h);
                log.lock().unwrap().push((t, "created", h.to_bits()));
            }
            Some(h) if gap > MARGIN => {
                model.remove_element(h)?;
                handle = None;
                log.lock().unwrap().push((t, "removed", h.to_bits()));
            }
            _ => {}
        }
        Ok(())
    });
    let summary = solver.run(&mut model, sink, &mut |_| {}).unwrap();
    let events = events.lock().unwrap().clone();
    (events, summary)
}

/// The run with the contact always present, and the handle of its contact element.
fn reference_run() -> (MemorySink, ElementId) {
    let (mut fixed, _) = ball(true);
    let floor = fixed.element_id("floor").unwrap();
    let mut reference = MemorySink::default();
    let mut solver = Nsga::new(&mut fixed, options()).unwrap();
    solver.run(&mut fixed, &mut reference, &mut |_| {}).unwrap();
    (reference, floor)
}

#[test]
fn contact_set_changes() {
    // Reference: contact always present.
    let (reference, _) = reference_run();
    // Contact created and removed by the pre-step hook.
    let mut changing = MemorySink::default();
    let (events, summary) = hooked_run(&mut changing);
    eprintln!("contact events: {events:?}");
    // Three bounces within 1.5 s: created, removed, created, removed, created, …
    assert!(events.len() >= 4, "{events:?}");
    assert_eq!(events[0].1, "created");
    assert_eq!(summary.topology_changes, events.len());
    let created = events.iter().filter(|e| e.1 == "created").count();
    for stage in &summary.stages {
        let symbolic = stage.symbolic_factorizations;
        if stage.name == "smooth" {
            // The contact does not take part in the smooth stage: its pattern never changes,
            // the initial analysis serves the whole run.
            assert_eq!(symbolic, 1, "stage {}", stage.name);
        } else {
            // One analysis for the initial pattern, then one at the first factorization after
            // a change: after every creation (the impact needs a Newton solve), not necessarily
            // after a removal (the lone ball's correction converges at its start check).
            assert!(
                symbolic > created && symbolic <= 1 + events.len(),
                "stage {}: {symbolic} analyses for {} changes",
                stage.name,
                events.len()
            );
        }
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

/// The per-step contact table follows the contacts that come and go: a row exactly at the
/// records where the hook's contact exists, with that contact's id, the ball as body a and the
/// plane as body b (−1), the gap of the recorded state, and the same impulses as the always
/// present contact of the reference run (whose own table row repeats its element channels).
/// The HDF5 file holds the same table.
#[test]
fn contact_table_follows_created_and_removed_contacts() {
    let (reference, floor) = reference_run();
    let path = std::env::temp_dir().join(format!("saltus_contact_table_{}.h5", std::process::id()));
    let mut file_sink = saltus::io::Hdf5Sink::create(&path).unwrap();
    let (events, _) = hooked_run(&mut file_sink);
    let mut changing = MemorySink::default();
    let (events_mem, _) = hooked_run(&mut changing);
    assert_eq!(events, events_mem);

    let impulse = reference.channel("floor", "impulse").unwrap();
    let position = reference.channel("floor", "position_multiplier").unwrap();
    let mut with_rows = 0;
    let mut worst_impulse: f64 = 0.0;
    for (k, rows) in changing.contacts.iter().enumerate() {
        let t = changing.time[k];
        // The contact present during the step that ended at t (hooks run before a step).
        let live = events
            .iter()
            .take_while(|e| e.0 < t - 1e-12)
            .last()
            .filter(|e| e.1 == "created");
        // Reference table: one row per record, equal to the element channels.
        let r = &reference.contacts[k];
        assert_eq!(r.len(), 1);
        // The id is the element handle: it names the contact element of the model.
        assert_eq!(ElementId::from_bits(r[0].contact), floor);
        assert_eq!(r[0].impulse.to_vec(), impulse[k]);
        assert_eq!(r[0].position_impulse.to_vec(), position[k]);
        match live {
            Some(&(_, _, id)) if k > 0 => {
                assert_eq!(rows.len(), 1, "record {k}");
                let row = &rows[0];
                assert_eq!(row.contact, id);
                assert_eq!((row.body_a, row.body_b), (0, -1));
                assert_eq!(row.normal, [0.0, 0.0, 1.0]);
                let ball = &changing.nodes[k][0];
                assert_eq!(row.gap, ball.x.z - R);
                // Contact point: on the plane below the centre (midway between the sphere's
                // lowest point and its projection); one rounding of z − r, hence 1e-15.
                assert!((row.point[2] - 0.5 * row.gap).abs() < 1e-15);
                for c in 0..3 {
                    worst_impulse = worst_impulse.max((row.impulse[c] - impulse[k][c]).abs());
                }
                with_rows += 1;
            }
            _ => assert!(rows.is_empty() || k == 0, "record {k}: {rows:?}"),
        }
    }
    assert!(with_rows > 100, "{with_rows} records with a contact");
    eprintln!("largest impulse difference {worst_impulse:e} N s");
    // Same equations as the always-present contact; at most round-off of the LU with extra
    // decoupled rows, as for the trajectories (impulses are O(1) N s): 1e-12.
    assert!(worst_impulse < 1e-12, "{worst_impulse:e}");

    // The HDF5 table: per-record counts and the same rows.
    let file = hdf5_metno::File::open(&path).unwrap();
    let count: Vec<u64> = file.dataset("contacts/count").unwrap().read_raw().unwrap();
    let expected: Vec<u64> = changing.contacts.iter().map(|r| r.len() as u64).collect();
    assert_eq!(count, expected);
    let ids: Vec<u64> = file
        .dataset("contacts/contact")
        .unwrap()
        .read_raw()
        .unwrap();
    let mem_ids: Vec<u64> = changing
        .contacts
        .iter()
        .flatten()
        .map(|r| r.contact)
        .collect();
    assert_eq!(ids, mem_ids);
    let gaps: Vec<f64> = file.dataset("contacts/gap").unwrap().read_raw().unwrap();
    let mem_gaps: Vec<f64> = changing.contacts.iter().flatten().map(|r| r.gap).collect();
    assert_eq!(gaps, mem_gaps);
    drop(file);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(path.with_extension("xdmf"));
}
