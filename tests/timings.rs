//! `NsgaOptions::timings`: where a run's time goes, per stage (`StageTimes`) and in the
//! contact detection (`RunSummary::detection`). The parts are measured inside the stages'
//! solves and do not overlap, so each stage's parts add up to no more than its total; with
//! the option off no clock is read and every time stays zero.

use saltus::elements::body::RigidBody;
use saltus::elements::contact::group::ContactGroup;
use saltus::prelude::*;
use saltus::solvers::RunSummary;
use std::time::Duration;

/// Eight spheres (R = 5 cm) dropped into an open box, contacts found at run time by a group,
/// run `t_end` with the contact solver `solver` first.
fn pile(timings: bool, solver: ContactSolver, t_end: f64) -> RunSummary {
    let r = 0.05;
    let mut model = Model::new();
    let mut ids = Vec::new();
    for k in 0..8 {
        let (ix, iy, iz) = (k % 2, (k / 2) % 2, k / 4);
        let x = Vector3::new(
            -0.055 + 0.11 * ix as f64 + 0.003 * iz as f64,
            -0.055 + 0.11 * iy as f64,
            r + 0.01 + 0.11 * iz as f64,
        );
        let id = model.add_node(NodeDef::frame(format!("b{k}"), x)).unwrap();
        model
            .add_element(format!("m{k}"), RigidBody::sphere(id, 0.5, r).unwrap())
            .unwrap();
        ids.push(id);
    }
    model.add_detector(
        ContactGroup::new("grains")
            .spheres(&ids, r)
            .friction(0.3)
            .open_box(0.12),
    );
    let opts = NsgaOptions {
        t_end,
        tol: 1e-6,
        contact_solver: solver,
        timings,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    while solver.time() < t_end - 1e-12 {
        solver.step(&mut model).unwrap();
    }
    solver.summary()
}

/// Every stage's parts fit in its total, and the parts each path uses were measured.
#[test]
fn the_parts_of_each_stage_add_up_to_at_most_its_total() {
    for solver in [ContactSolver::Newton, ContactSolver::GaussSeidel] {
        let s = pile(true, solver, 0.2);
        assert!(s.detection > Duration::ZERO, "{solver:?}: detection");
        for st in &s.stages {
            let t = &st.times;
            let parts = t.assembly + t.factorization + t.contact_linearization + t.sweeps;
            assert!(parts <= t.total, "{solver:?}, {}: {t:?}", st.name);
            assert!(
                t.assembly > Duration::ZERO,
                "{solver:?}, {}: {t:?}",
                st.name
            );
        }
        let [smooth, position, velocity] = [0, 1, 2].map(|k| &s.stages[k].times);
        // The smooth stage has no contacts: no sweeps, no contact linearization.
        assert_eq!(smooth.sweeps + smooth.contact_linearization, Duration::ZERO);
        for (name, t, st) in [
            ("position", position, &s.stages[1]),
            ("velocity", velocity, &s.stages[2]),
        ] {
            // Sweeps were timed exactly when the stage swept.
            assert_eq!(
                t.sweeps > Duration::ZERO,
                st.settle_sweeps > 0,
                "{solver:?}, {name}: {t:?}, {} sweeps",
                st.settle_sweeps
            );
            // The Newton factorizes (the free spheres' Gauss–Seidel inverts the bodies' blocks).
            assert!(
                t.factorization > Duration::ZERO,
                "{solver:?}, {name}: {t:?}"
            );
        }
        if solver == ContactSolver::GaussSeidel {
            // The pile lands within 0.2 s: the sweeps ran at both correction stages.
            assert!(position.sweeps > Duration::ZERO && velocity.sweeps > Duration::ZERO);
            assert!(position.contact_linearization > Duration::ZERO);
        }
    }
}

/// Off by default: no clock is read, every time is zero; the run is the same.
#[test]
fn without_timings_every_time_is_zero() {
    assert!(!NsgaOptions::default().timings);
    let (off, on) = (
        pile(false, ContactSolver::GaussSeidel, 0.1),
        pile(true, ContactSolver::GaussSeidel, 0.1),
    );
    assert_eq!(off.detection, Duration::ZERO);
    for st in &off.stages {
        assert_eq!(st.times, Default::default(), "{}", st.name);
    }
    // Timing changes nothing else (the statistics of the two runs agree).
    let counts = |s: &RunSummary| {
        s.stages
            .iter()
            .map(|st| (st.iterations, st.settled, st.settle_sweeps))
            .collect::<Vec<_>>()
    };
    assert_eq!(counts(&off), counts(&on));
}
