//! The velocity jump's frozen forces (`BaseTerms::frozen_force`): NSGA's velocity stage holds
//! the configuration, so a force of the configuration alone is evaluated once per stage and
//! copied at its other assemblies. Whole runs with it and without it must agree bit for bit.
//!
//! A chain of three rigid links hinged to the ground, each pulled by an undamped spring to a
//! fixed anchor (attached off the link's centre, so the springs follow the rotations too),
//! falls under gravity. The same model runs twice: with the springs as they are
//! (`Dependence::CONFIGURATION`: the stage takes their frozen forces) and with the same
//! springs declaring a velocity dependence (`Dependence::ALL`: evaluated at every
//! assembly). Their force evaluations are counted, so the test also shows that the cache was
//! taken.

mod bench_models;

use bench_models::chain;
use saltus::core::physics::{Dependence, Force, ForceTerms, PhysicsState};
use saltus::core::{Element, ElementError, NodeId};
use saltus::elements::force::{Attachment, SpringDamper};
use saltus::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// An undamped spring whose force evaluations are counted, optionally declaring a velocity
/// dependence it does not have.
#[derive(Debug)]
struct Counted {
    spring: SpringDamper,
    velocity_dependent: bool,
    calls: Arc<AtomicUsize>,
}

impl Force for Counted {
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.spring.force(s, out)
    }

    fn dependence(&self) -> Dependence {
        if self.velocity_dependent {
            Dependence::ALL
        } else {
            self.spring.dependence()
        }
    }

    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        self.spring.potential_energy(s)
    }
}

impl Element for Counted {
    fn type_name(&self) -> &'static str {
        "counted_spring"
    }

    fn nodes(&self) -> &[NodeId] {
        self.spring.nodes()
    }

    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }
}

/// Run the sprung chain for 300 steps; the final node states, the Newton iterations per stage
/// and the springs' force evaluations.
fn run(velocity_dependent: bool) -> (Vec<NodeState>, Vec<usize>, usize) {
    let mut model = chain(3, 0.3);
    let calls = Arc::new(AtomicUsize::new(0));
    let links: Vec<NodeId> = (0..3)
        .map(|i| model.node_id(&format!("link{i}")).unwrap())
        .collect();
    for (i, &link) in links.iter().enumerate() {
        let anchor = Vector3::new(0.3 * i as f64 + 0.1, 0.05, 0.4);
        let spring = SpringDamper::to_anchor(
            Attachment::frame(link, Vector3::new(0.1, 0.0, 0.02)),
            anchor,
            40.0 + 10.0 * i as f64,
            0.0,
            0.3,
        )
        .unwrap();
        assert_eq!(spring.dependence(), Dependence::CONFIGURATION);
        let counted = Counted {
            spring,
            velocity_dependent,
            calls: calls.clone(),
        };
        model.add_element(format!("spring{i}"), counted).unwrap();
    }
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 0.3,
        threads: 1,
        ..Default::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    for _ in 0..300 {
        solver.step(&mut model).unwrap();
    }
    let iterations = solver.summary().iterations().to_vec();
    (
        solver.nodes().to_vec(),
        iterations,
        calls.load(Ordering::Relaxed),
    )
}

#[test]
fn frozen_forces_change_nothing_and_are_taken() {
    saltus::link();
    let (frozen, it_frozen, calls_frozen) = run(false);
    let (fresh, it_fresh, calls_fresh) = run(true);
    assert_eq!(it_frozen, it_fresh, "Newton iterations per stage");
    for (k, (a, b)) in frozen.iter().zip(&fresh).enumerate() {
        // Bit for bit: the same evaluations in the same order.
        assert!(
            a.x == b.x && a.r == b.r && a.v == b.v && a.omega == b.omega,
            "node {k}: {a:?} against {b:?}"
        );
    }
    // The links moved: a real run, not a model at rest.
    assert!(frozen[1].x.z < -0.01, "{:?}", frozen[1].x);
    // One evaluation per spring and velocity stage instead of one per assembly.
    eprintln!("spring force evaluations: {calls_frozen} with frozen forces, {calls_fresh} without");
    assert!(
        calls_frozen < calls_fresh,
        "frozen forces not taken: {calls_frozen} against {calls_fresh} evaluations"
    );
}
