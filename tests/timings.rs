//! `NsgaOptions::timings`: where a run's time goes, per stage (`StageTimes`) and in the
//! contact detection (`RunSummary::detection`). The parts are measured inside the stages'
//! solves and do not overlap, so each stage's parts add up to no more than its total; with
//! the option off every time stays zero and the run is the same.

use saltus::elements::body::RigidBody;
use saltus::elements::contact::group::ContactGroup;
use saltus::prelude::*;
use saltus::solvers::RunSummary;
use saltus::solvers::StageTimes;
use std::time::Duration;

/// Eight spheres (R = 5 cm) dropped into an open box, contacts found at run time by a group,
/// run `t_end` with the contact solver `solver` first, step by step; the summary and the final
/// node states.
fn pile(timings: bool, solver: ContactSolver, t_end: f64) -> (RunSummary, Vec<NodeState>) {
    let (mut model, opts) = pile_model(timings, solver, t_end);
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    while solver.time() < t_end - 1e-12 {
        solver.step(&mut model).unwrap();
    }
    (solver.summary(), solver.nodes().to_vec())
}

/// The pile of [`pile`] and its options.
fn pile_model(timings: bool, solver: ContactSolver, t_end: f64) -> (Model, NsgaOptions) {
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
    (model, opts)
}

/// The sum of a stage's parts.
fn parts(t: &StageTimes) -> Duration {
    t.assembly + t.factorization + t.contact_linearization + t.sweeps
}

/// Every stage's parts fit in its total, and the parts each path uses were measured.
#[test]
fn the_parts_of_each_stage_add_up_to_at_most_its_total() {
    for solver in [ContactSolver::Newton, ContactSolver::GaussSeidel] {
        let (s, _) = pile(true, solver, 0.2);
        assert!(s.detection > Duration::ZERO, "{solver:?}: detection");
        for st in &s.stages {
            let t = &st.times;
            assert!(parts(t) <= t.total, "{solver:?}, {}: {t:?}", st.name);
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

/// Off by default: every time is zero; timing changes nothing else (the statistics and the
/// final states of the two runs are identical).
#[test]
fn without_timings_every_time_is_zero() {
    assert!(!NsgaOptions::default().timings);
    let ((off, q_off), (on, q_on)) = (
        pile(false, ContactSolver::GaussSeidel, 0.1),
        pile(true, ContactSolver::GaussSeidel, 0.1),
    );
    assert_eq!(off.detection, Duration::ZERO);
    for st in &off.stages {
        assert_eq!(st.times, StageTimes::default(), "{}", st.name);
    }
    // Everything but the times: wall clocks differ from run to run.
    let untimed = |s: &RunSummary| {
        let mut s = s.clone();
        s.wall = Duration::ZERO;
        s.detection = Duration::ZERO;
        for st in &mut s.stages {
            st.times = StageTimes::default();
        }
        format!("{s:?}")
    };
    assert_eq!(untimed(&off), untimed(&on));
    assert_eq!(q_off, q_on);
}

/// Through `Nsga::run`: the start-up solve of `Nsga::new` is not counted, so the detection and
/// the stages' totals fit in the run's wall time (the rest is the predictor, the rebuilds when
/// contacts appear or vanish, and the recording).
#[test]
fn the_stages_fit_in_the_wall_time_of_a_run() {
    let (mut model, opts) = pile_model(true, ContactSolver::Newton, 0.1);
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    for st in &solver.summary().stages {
        assert_eq!(
            st.times,
            StageTimes::default(),
            "{}: counted before the run",
            st.name
        );
    }
    let mut sink = MemorySink::default();
    let s = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    let stages: Duration = s.stages.iter().map(|st| st.times.total).sum();
    assert!(stages > Duration::ZERO);
    assert!(
        s.detection + stages <= s.wall,
        "detection {:?} + stages {stages:?} > wall {:?}",
        s.detection,
        s.wall
    );
}
