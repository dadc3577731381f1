//! The contact-space Gauss–Seidel fallback of the position and velocity stages
//! (`Stage::settle_contacts`, `NsgaOptions::contact_fallback`).
//!
//! 1. Where the semi-smooth Newton converges, the fallback — forced after one Newton iteration —
//!    gives the same motion: both pass the same residual test, so the two runs of a forming
//!    pile agree to the solver tolerance.
//! 2. Where the Newton cycles — a pile of 27 spheres settling in a box, whose hyperstatic
//!    clusters against the walls leave a contact exactly on the stick/slip boundary — the run
//!    fails without the fallback and gets through with it, the spheres neither penetrating
//!    each other nor the box.

use saltus::prelude::*;
use saltus::solvers::ImpactSequence;

#[path = "../benches/scenes/granular_column.rs"]
mod scene;
use scene::R;

/// Step size \[s\] of the benchmark case.
const H: f64 = 1e-3;

/// Run the column of `n` spheres to `t_end` with `opts`; the node states at the end, or the
/// error and the time reached.
fn run(
    n: usize,
    t_end: f64,
    opts: NsgaOptions,
) -> Result<(Vec<NodeState>, RunSummary, f64), (SolveError, f64)> {
    let (mut model, _, half) = scene::column(n);
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    while solver.time() < t_end - 0.5 * H {
        if let Err(e) = solver.step(&mut model) {
            return Err((e, solver.time()));
        }
    }
    Ok((solver.nodes().to_vec(), solver.summary(), half))
}

/// Largest difference between two runs' node states: positions \[m\], and velocities times
/// the step (what they move in one step).
fn largest_difference(a: &[NodeState], b: &[NodeState]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(a, b)| (a.x - b.x).amax().max((a.v - b.v).amax() * H))
        .fold(0.0, f64::max)
}

/// Largest penetration \[m\] of the spheres (radius `R`) into each other, the floor and the
/// walls of the box of half width `half`.
fn largest_penetration(nodes: &[NodeState], half: f64) -> f64 {
    let mut worst: f64 = 0.0;
    for (i, a) in nodes.iter().enumerate() {
        worst = worst.max(R - a.x.z);
        worst = worst.max(a.x.x.abs() + R - half);
        worst = worst.max(a.x.y.abs() + R - half);
        for b in &nodes[i + 1..] {
            worst = worst.max(2.0 * R - (a.x - b.x).norm());
        }
    }
    worst
}

fn options() -> NsgaOptions {
    NsgaOptions {
        h: H,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        threads: 1,
        // Full Newton in both runs of the comparison: one Newton iteration then really is one.
        jacobian_reuse: None,
        ..NsgaOptions::default()
    }
}

#[test]
fn fallback_reproduces_newton_on_a_forming_pile() {
    let (newton, sn, _) = run(8, 0.3, options()).unwrap();
    // One Newton iteration per solve: every correction with unsettled contacts is finished by
    // the Gauss–Seidel fallback.
    let forced = NsgaOptions {
        max_iterations: 1,
        ..options()
    };
    let (settled, ss, _) = run(8, 0.3, forced).unwrap();
    let count = |s: &RunSummary| [s.stage("position").settled, s.stage("velocity").settled];
    eprintln!(
        "settled solves: Newton run {:?}, forced run {:?}",
        count(&sn),
        count(&ss)
    );
    assert_eq!(count(&sn), [0, 0], "the Newton run needed no fallback");
    assert!(
        ss.stage("position").settled > 0 && ss.stage("velocity").settled > 0,
        "the forced run used the fallback at both levels: {:?}",
        count(&ss)
    );
    let worst = largest_difference(&newton, &settled);
    eprintln!("largest difference {worst:e} m");
    // Both runs solve every stage to the same residual test (tol = 1e-8 relative), so they may
    // differ by ~1e-8 of the motion per step, passed on by the impacts and stick–slip changes
    // of the 0.1 m fall (the same bound as for the warm start, tests/warm_start.rs).
    assert!(worst < 1e-7, "the runs differ by {worst:e} m");
}

#[test]
fn settled_pile_runs_through_with_the_fallback() {
    // The peers run this case with NSGS at tol 1e-4 (`../shared/bench-peers/siconos`); at
    // 1e-5 the full Newton alone stalls at t ≈ 0.41 s, as the pile settles.
    let opts = NsgaOptions {
        tol: 1e-5,
        ..options()
    };
    let t_end = 0.6;
    let without = run(
        27,
        t_end,
        NsgaOptions {
            contact_fallback: false,
            ..opts
        },
    );
    match &without {
        Err((SolveError::NonConvergence { .. }, t)) => eprintln!("Newton alone stops at t = {t}"),
        Err((e, _)) => panic!("unexpected error without the fallback: {e}"),
        Ok(_) => panic!("the Newton alone was expected to stall on this pile"),
    }
    let (nodes, summary, half) = run(27, t_end, opts).unwrap();
    let settled = [
        summary.stage("position").settled,
        summary.stage("velocity").settled,
    ];
    eprintln!("settled solves (position, velocity): {settled:?}");
    assert!(settled[0] + settled[1] > 0);
    // No penetration: the position stage enforces g_N ≥ 0 through rows κ g_N (κ = m ≈ 0.52 kg)
    // to its residual test, tol × reference ≈ 1e-5 × 1e-3 kg·m, i.e. ≈ 2e-8 m; bound 1e-7 m.
    let worst = largest_penetration(&nodes, half);
    eprintln!("largest penetration {worst:e} m");
    assert!(worst < 1e-7, "penetration {worst:e} m");
}

/// `ContactSolver::GaussSeidel` on the forming pile of the first test: every correction with
/// contacts is settled by the Gauss–Seidel first, which passes the same residual test, so the
/// motion agrees with the Newton run to the same bound.
#[test]
fn gauss_seidel_first_reproduces_newton_on_a_forming_pile() {
    let (newton, _, _) = run(8, 0.3, options()).unwrap();
    let first = NsgaOptions {
        contact_solver: ContactSolver::GaussSeidel,
        ..options()
    };
    let (settled, summary, _) = run(8, 0.3, first).unwrap();
    let count = [
        summary.stage("position").settled,
        summary.stage("velocity").settled,
    ];
    eprintln!("settled solves (position, velocity): {count:?}");
    assert!(count[0] > 0 && count[1] > 0, "{count:?}");
    let worst = largest_difference(&newton, &settled);
    eprintln!("largest difference {worst:e} m");
    // As in the first test: both pass the residual test at tol = 1e-8.
    assert!(worst < 1e-7, "the runs differ by {worst:e} m");
}

/// The settling pile of the second test (27 spheres, tol 1e-5) with the Gauss–Seidel first:
/// it runs through, the Gauss–Seidel settles the solves (the Newton finishes few or none: in
/// this run none, since a velocity stage's sweeps go on through a plateau; the Newton taking
/// over is checked at tol 1e-8 below), and the spheres neither penetrate each other nor the
/// box.
#[test]
fn gauss_seidel_first_runs_the_settling_pile() {
    let opts = NsgaOptions {
        tol: 1e-5,
        contact_solver: ContactSolver::GaussSeidel,
        ..options()
    };
    let (nodes, summary, half) = run(27, 0.6, opts).unwrap();
    let (p, v) = (summary.stage("position"), summary.stage("velocity"));
    eprintln!(
        "settled solves (position, velocity): {:?} of {:?}, Newton iterations {:?}",
        [p.settled, v.settled],
        [p.solves, v.solves],
        [p.iterations, v.iterations]
    );
    assert!(p.settled > 0 && v.settled > 0);
    eprintln!(
        "skipped start checks (position, velocity): {:?}",
        [p.skipped_start_checks, v.skipped_start_checks]
    );
    // Once the pile rests on the floor, each step's first impact problem holds the loaded
    // contacts, whose gravity impulse is never solved at the start point: it settles without
    // the start check when the last step's first problem was settled (493 of the 600 steps
    // here), the later problems of a step never. At most: the first step checks, then runs of
    // 8 skips and a check, 8 ⌊599/9⌋ + 5 = 533 (more would mean a broken run counter or
    // skipped later problems).
    assert!(
        v.skipped_start_checks > 600 / 2 && v.skipped_start_checks <= 533,
        "velocity: {} start checks skipped in 600 steps",
        v.skipped_start_checks
    );
    assert!(p.skipped_start_checks > 600 / 2);
    // The Gauss–Seidel finishes nearly every solve that needs a correction (the others
    // converge at their start); the Newton would take over those whose sweeps stall, with
    // tens of iterations each. Newton first would iterate several times per solve.
    assert!(
        3 * (p.iterations + v.iterations) <= p.settled + v.settled,
        "Newton iterations {} for {} settled solves",
        p.iterations + v.iterations,
        p.settled + v.settled
    );
    // Bound as in the second test (the position rows' residual test, ≈ 2e-8 m).
    let worst = largest_penetration(&nodes, half);
    eprintln!("largest penetration {worst:e} m");
    assert!(worst < 1e-7, "penetration {worst:e} m");
}

/// At the default tolerance (tol 1e-8) the settling pile of 27 spheres stops at t ≈ 0.4 s with
/// either solver first (the sweeps' floor, `docs/performance.md`). With the Gauss–Seidel first
/// and step halving (`adaptive`), the steps that do not converge are retried as halves, and
/// the pile gets through; the spheres neither penetrate each other nor the box.
#[test]
fn gauss_seidel_first_with_halving_runs_the_pile_at_the_default_tolerance() {
    let opts = NsgaOptions {
        contact_solver: ContactSolver::GaussSeidel,
        adaptive: true,
        ..options()
    };
    assert_eq!(opts.tol, 1e-8);
    let (nodes, summary, half) = run(27, 0.6, opts).unwrap();
    let (p, v) = (summary.stage("position"), summary.stage("velocity"));
    eprintln!(
        "halvings {}, settled {:?}, Newton iterations {:?}",
        summary.halvings,
        [p.settled, v.settled],
        [p.iterations, v.iterations]
    );
    // Past the stop of the runs without halving, some steps were halved.
    assert!(summary.halvings > 0);
    // The Newton takes over the solves whose sweeps stall at this tolerance: its matrix then
    // needs the contacts' pattern, which a stage run Gauss–Seidel first builds only on demand
    // after each change of the contact set (`Stage::defer_contact_pattern`); those solves
    // pass the same residual test (measured: 1 899 position and 338 velocity iterations, 42
    // steps halved).
    assert!(p.iterations + v.iterations > 0);
    // The position rows' residual test at tol 1e-8: ≈ 2e-11 m (the bound of the second test
    // scaled by the tolerance); bound 1e-10 m.
    let worst = largest_penetration(&nodes, half);
    eprintln!("largest penetration {worst:e} m");
    assert!(worst < 1e-10, "penetration {worst:e} m");
}

/// In a resting pile the contacts' loads flicker from step to step (gaps and impulses at the
/// tolerance). With the previous step's load alone deciding which closed contacts are
/// persistent (`persistent_steps = 1`), the ones that dropped out come back as approaching
/// contacts in later impact problems of the same step; with a memory of 10 steps (the
/// default: loaded in the previous step or twice in the last 10) they stay in the first
/// problem. Fewer problems, and the
/// same guarantee: no penetration beyond the position test's.
#[test]
fn contacts_loaded_in_recent_steps_stay_in_the_first_impact_problem() {
    let run_with = |persistent_steps| {
        let opts = NsgaOptions {
            tol: 1e-4,
            contact_solver: ContactSolver::GaussSeidel,
            impacts: Some(ImpactSequence {
                persistent_steps,
                ..Default::default()
            }),
            ..options()
        };
        run(100, 1.0, opts).unwrap()
    };
    let (short, s_short, half) = run_with(1);
    let (long, s_long, _) = run_with(10);
    let problems = [&s_short, &s_long].map(|s| s.stage("velocity").solves);
    eprintln!("impact problems in {} steps: {problems:?}", s_long.steps);
    // Measured 2 308 → 1 985 impact problems (−14 %). Asserted: a clear reduction, at least
    // 5 % (the memory's bit window is checked exactly by core's `history_tests`).
    assert!(20 * problems[1] < 19 * problems[0], "{problems:?}");
    for nodes in [&short, &long] {
        // The position rows' residual test at tol 1e-4: ≈ 2e-7 m (the second test's bound
        // scaled by the tolerance); bound 1e-6 m.
        let worst = largest_penetration(nodes, half);
        eprintln!("largest penetration {worst:e} m");
        assert!(worst < 1e-6, "penetration {worst:e} m");
    }
}

/// A column of three spheres resting on the floor from the start: every step's first velocity
/// problem holds the loaded contacts, whose gravity impulse `m g h` the start point (the
/// smooth velocities) lacks, so its start check would fail at every step even where the
/// warm-started impulses are exact and one sweep settles it. It settles without that check
/// after the last step's first problem was settled, all but every 9th (after a run of 8) and
/// the first step's (`StageSummary::skipped_start_checks`), and the column stays at rest to
/// round-off.
#[test]
fn a_resting_column_settles_its_first_impact_problems_without_start_checks() {
    let mut model = Model::new();
    let mut ids = Vec::new();
    for k in 0..3 {
        let x = Vector3::new(0.0, 0.0, R * (1 + 2 * k) as f64);
        let id = model.add_node(NodeDef::frame(format!("s{k}"), x)).unwrap();
        model
            .add_element(
                format!("m{k}"),
                saltus::elements::body::RigidBody::sphere(id, scene::mass(), R).unwrap(),
            )
            .unwrap();
        ids.push(id);
    }
    model.add_detector(scene::group(&ids, 0.5));
    let steps = 200;
    let opts = NsgaOptions {
        t_end: steps as f64 * H,
        contact_solver: ContactSolver::GaussSeidel,
        ..options()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    for _ in 0..steps {
        solver.step(&mut model).unwrap();
    }
    let v = solver.summary().stage("velocity").clone();
    eprintln!(
        "velocity: {} solves, {} settled, {} skipped start checks, {} sweeps",
        v.solves, v.settled, v.skipped_start_checks, v.settle_sweeps
    );
    // Every first problem is settled: the first step checks, then runs of 8 skips and a check,
    // exactly (a broken run counter, or a skipped later problem, would change the count).
    let runs = 8 * ((steps - 1) / 9) + ((steps - 1) % 9).min(8);
    assert_eq!(v.skipped_start_checks, runs);
    assert_eq!(v.iterations, 0);
    for (k, n) in solver.nodes().iter().enumerate() {
        let z = R * (1 + 2 * k) as f64;
        // Exactly at rest: the column starts touching and at rest, every correction lands on
        // the exact solution (zero gaps, zero rates), and only round-off is left — a few ulps
        // of the heights (≈ 3e-17 m observed), nothing near the tolerances (tol 1e-8).
        assert!(
            (n.x.z - z).abs() < 1e-14 && n.x.xy().norm() < 1e-14,
            "sphere {k} at {:?}",
            n.x
        );
        assert!(n.v.amax() < 1e-14, "sphere {k} moves at {:?}", n.v);
    }
}
