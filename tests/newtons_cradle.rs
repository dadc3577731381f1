//! Multiple impacts within one step (`nsga.md` §9): Newton's cradle and the two-ball
//! head-on collision, against their analytic results.
//!
//! Equal rigid spheres on the x axis, touching, no gravity, frictionless sphere–sphere
//! contacts between neighbours; the first ball moves at `v₀ = 1 m/s`. With `e_N = 1` the
//! sequence of impact problems transmits the impulse ball to ball within one step: the last
//! ball leaves at `v₀` and the others stay at rest. With `e_N < 1` the result is the sequence
//! of pairwise Newton impacts (each problem with the velocities the previous one left), which
//! for equal masses has the closed form checked below. A single velocity problem with every
//! closed contact (simultaneous impacts) gives neither.

mod bench_models;

use saltus::elements::body::RigidBody;
use saltus::elements::contact::spheres::SphereContact;
use saltus::prelude::*;
use saltus::solvers::{ImpactSequence, DEFAULT_PERSISTENT_STEPS};

const R: f64 = 0.05;
const M: f64 = 0.2;
const V0: f64 = 1.0;

/// `n` touching balls along x, the first one moving at `V0`, contacts with restitution `e`.
fn cradle(n: usize, e: f64) -> Model {
    bench_models::cradle(n, M, R, 0.0, 0.0, e)
}

fn options(impacts: Option<ImpactSequence>) -> NsgaOptions {
    NsgaOptions {
        h: 1e-3,
        t_end: 5e-3,
        gravity: Vector3::zeros(),
        impacts,
        ..Default::default()
    }
}

/// Final x velocities, the largest number of impact problems in a step and the contacts
/// closed in that step (default options: the Newton first).
fn run(model: &mut Model, impacts: Option<ImpactSequence>) -> (Vec<f64>, usize, usize) {
    run_with(model, impacts, ContactSolver::Newton)
}

/// [`run`] with the contact solver run first.
fn run_with(
    model: &mut Model,
    impacts: Option<ImpactSequence>,
    contact_solver: ContactSolver,
) -> (Vec<f64>, usize, usize) {
    let opts = NsgaOptions {
        contact_solver,
        ..options(impacts)
    };
    let mut solver = Nsga::new(model, opts).unwrap();
    let (mut most, mut closed) = (0, 0);
    while solver.time() < 5e-3 - 1e-12 {
        let stats = solver.step(model).unwrap();
        if stats.stages()[2].solves > most {
            most = stats.stages()[2].solves;
            closed = stats.active_contacts;
        }
    }
    if contact_solver == ContactSolver::GaussSeidel {
        // The sweeps settle every position and velocity problem: the Newton never runs.
        let iterations = solver.summary().iterations();
        assert_eq!(iterations[1..], [0, 0], "Newton iterations");
    }
    (solver.nodes().iter().map(|s| s.v.x).collect(), most, closed)
}

/// Both contact solvers: the Newton first (default) and the contact-space Gauss–Seidel first
/// (free spheres: each problem's `A` is block diagonal; the chain's contacts are swept in
/// order).
const SOLVERS: [ContactSolver; 2] = [ContactSolver::Newton, ContactSolver::GaussSeidel];

#[test]
fn elastic_cradle_transmits_the_velocity_to_the_last_ball() {
    for (n, solver) in [3, 5, 50].into_iter().flat_map(|n| SOLVERS.map(|s| (n, s))) {
        let mut model = cradle(n, 1.0);
        let (v, problems, closed) = run_with(&mut model, Some(ImpactSequence::default()), solver);
        // The impulse passes contact by contact: n − 1 impact problems in the impact step,
        // where the position correction (ball 1 pushed into the chain) closed every contact.
        assert_eq!(problems, n - 1, "N = {n}, {solver:?}");
        assert_eq!(closed, n - 1, "N = {n}, {solver:?}");
        // 1e-8 m/s, the bound. Each problem is linear (μ = 0): the Newton stops at its
        // tolerance (1e-8 relative to the impulses' size m v₀, the multiplier block
        // regularized), and its error grows with the n − 1 problems of the chain (observed:
        // 1.5e-10 at N = 3, 4.9e-9 for the last ball at N = 50); the Gauss–Seidel's local
        // solves are exact for frictionless contacts (observed 1e-16 to 7e-13).
        for (i, vi) in v.iter().enumerate().take(n - 1) {
            assert!(vi.abs() < 1e-8, "N = {n}, {solver:?}: ball {i} at {vi} m/s");
        }
        assert!(
            (v[n - 1] - V0).abs() < 1e-8,
            "N = {n}, {solver:?}: last at {}",
            v[n - 1]
        );
    }
}

#[test]
fn inelastic_cradle_gives_the_sequential_impact_result() {
    // Three balls, e < 1: impacts 1–2, 2–3, 1–2, then nothing approaches. For equal masses a
    // pairwise impact maps the velocities (a, b) to ((a + b)/2 ∓ e (a − b)/2), so (v₀ = 1)
    //   after 1–2: ((1 − e)/2, (1 + e)/2, 0)
    //   after 2–3: ((1 − e)/2, (1 − e²)/4, (1 + e)²/4)
    //   after 1–2: v₁,₂ = (s ∓ e w)/2 with s, w the sum and difference of the two above.
    for (e, solver) in [0.5, 0.8, 0.9]
        .into_iter()
        .flat_map(|e| SOLVERS.map(|s| (e, s)))
    {
        let mut model = cradle(3, e);
        let (v, problems, _) = run_with(&mut model, Some(ImpactSequence::default()), solver);
        let (a, b) = ((1.0 - e) / 2.0, (1.0 - e * e) / 4.0);
        let (s, w) = (a + b, a - b);
        let expected = [
            (s - e * w) / 2.0,
            (s + e * w) / 2.0,
            (1.0 + e) * (1.0 + e) / 4.0,
        ];
        assert_eq!(problems, 3, "e = {e}, {solver:?}");
        for i in 0..3 {
            // Linear problems, but the Newton stops at its tolerance (1e-8 relative to the
            // impulses' size m v₀; the multiplier block is regularized, so one iteration is
            // not exact), and the Gauss–Seidel at the same residual test: 1e-8 v₀ bounds the
            // error (observed 1.5e-10 to 2.3e-10 with the Newton, 2e-16 with the Gauss–Seidel).
            assert!(
                (v[i] - expected[i] * V0).abs() < 1e-8 * V0,
                "e = {e}, {solver:?}: ball {i}: {} vs {}",
                v[i],
                expected[i]
            );
        }
        // Momentum is conserved by every impact problem.
        assert!((v.iter().sum::<f64>() - V0).abs() < 1e-12);
    }
}

#[test]
fn simultaneous_impacts_do_not_give_the_cradle() {
    // One velocity problem with every closed contact (no sequence): the impulse is shared
    // by the chain instead of passed along it.
    let mut model = cradle(3, 1.0);
    let (v, problems, _) = run(&mut model, None);
    assert_eq!(problems, 1);
    assert!(v[0].abs() > 0.1 || (v[2] - V0).abs() > 0.1, "{v:?}");
    assert!((v.iter().sum::<f64>() - V0).abs() < 1e-12);
}

#[test]
fn head_on_collision_of_two_balls() {
    // Unequal balls approaching each other across a gap: one impact problem, velocities of the
    // Newton impact law with momentum conservation,
    //   v₁' = (m₁u₁ + m₂u₂ − m₂ e (u₁ − u₂))/(m₁ + m₂),
    //   v₂' = (m₁u₁ + m₂u₂ + m₁ e (u₁ − u₂))/(m₁ + m₂).
    let (m1, m2, r1, r2) = (0.3, 0.7, 0.04, 0.06);
    let (u1, u2, e) = (2.0, -0.5, 0.7);
    let mut model = Model::new();
    let a = model
        .add_node(NodeDef::frame("a", Vector3::zeros()).velocity(Vector3::new(u1, 0.0, 0.0)))
        .unwrap();
    let gap = 0.0123;
    let b = model
        .add_node(
            NodeDef::frame("b", Vector3::new(r1 + r2 + gap, 0.0, 0.0))
                .velocity(Vector3::new(u2, 0.0, 0.0)),
        )
        .unwrap();
    model
        .add_element("body_a", RigidBody::sphere(a, m1, r1).unwrap())
        .unwrap();
    model
        .add_element("body_b", RigidBody::sphere(b, m2, r2).unwrap())
        .unwrap();
    model
        .add_element(
            "contact",
            SphereContact::spheres(b, a, r2, r1)
                .unwrap()
                .restitution(e, 0.0),
        )
        .unwrap();
    let mut solver = Nsga::new(
        &mut model,
        NsgaOptions {
            h: 1e-3,
            t_end: 0.02,
            gravity: Vector3::zeros(),
            ..Default::default()
        },
    )
    .unwrap();
    let mut impacts = 0;
    while solver.time() < 0.02 - 1e-12 {
        let stats = solver.step(&mut model).unwrap();
        if stats.stages()[2].solves > 1 {
            impacts += 1;
        }
    }
    let p = m1 * u1 + m2 * u2;
    let v1 = (p - m2 * e * (u1 - u2)) / (m1 + m2);
    let v2 = (p + m1 * e * (u1 - u2)) / (m1 + m2);
    let s = solver.nodes();
    // One linear impact problem solved to the Newton tolerance (1e-8 relative, see above):
    // 1e-8 of the relative speed (observed ≈ 1e-10).
    let tol = 1e-8 * (u1 - u2);
    assert!((s[0].v.x - v1).abs() < tol, "{} vs {v1}", s[0].v.x);
    assert!((s[1].v.x - v2).abs() < tol, "{} vs {v2}", s[1].v.x);
    // Equal and opposite impulses: momentum to round-off.
    assert!((m1 * s[0].v.x + m2 * s[1].v.x - p).abs() < 1e-14);
    // One problem per step: the sequence ends at once after it.
    assert_eq!(impacts, 0);
}

#[test]
fn contact_table_records_each_contacts_own_pre_impact_velocity() {
    // In the impact step of a 3-ball elastic cradle the second contact is at rest at the step
    // start and approaches only after the first impact problem: the table's pre-impact rate
    // is the V⁻ of the problem in which each contact acted (−v₀ for both), not the step
    // start's (0 for the second), and the end-of-step rate is the separation +v₀ (e = 1) of
    // the last pair; the contact-force recovery needs exactly this approach speed.
    let mut model = cradle(3, 1.0);
    let mut solver = Nsga::new(&mut model, options(Some(ImpactSequence::default()))).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    let step = sink
        .contacts
        .iter()
        .position(|rows| rows.iter().any(|r| r.impulse[0] > 0.0))
        .expect("an impact step");
    let rows = &sink.contacts[step];
    assert_eq!(rows.len(), 2);
    for r in rows {
        // The Newton law is exact for μ = 0; Newton tolerance 1e-8 relative (as above).
        assert!(
            (r.normal_velocity[0] + V0).abs() < 1e-8,
            "{:?}",
            r.normal_velocity
        );
        assert!(r.impulse[0] > 0.0 && r.restitution == 1.0);
        assert!((r.radius - R / 2.0).abs() < 1e-15);
    }
    // After the step: balls 1–2 at rest together, ball 3 leaving at v₀.
    assert!(rows
        .iter()
        .any(|r| (r.normal_velocity[1] - V0).abs() < 1e-8));
    assert!(rows.iter().any(|r| r.normal_velocity[1].abs() < 1e-8));
    // The initial record has no step before it.
    assert!(sink.contacts[0]
        .iter()
        .all(|r| r.normal_velocity[0].is_nan()));
}

/// Two hits a few steps apart on one chain: ball A (1 m/s) hits the resting chain B–C–D, and
/// ball Z (1 m/s, 3 mm behind A) hits A three steps later, when A has stopped against B. Each
/// hit is a cradle of its own: after the first D leaves at 1 m/s, after the second C does,
/// and Z, A and B stay at rest. The chain's contacts carried the first hit's impulses, but
/// that is one load, not a resting one, and after it they carry none above `tol_v` (a closed
/// contact with a slightly negative rate and `Λ_N` ≈ 1e-16 has `σ_N > 0` without a load):
/// with a memory of persistent contacts of the previous step alone and with the default 10
/// steps (loaded in the previous step or twice in 10) they do not take part in the second
/// hit's first problem. (When any load within 10 steps counted, they did,
/// and the second hit's impulse was shared along the chain: Z −0.5 m/s, A, B and C 0.5 m/s,
/// as `simultaneous_impacts_do_not_give_the_cradle`.)
#[test]
fn a_second_hit_soon_after_the_first_is_still_a_cradle() {
    for persistent_steps in [1, DEFAULT_PERSISTENT_STEPS] {
        let xs = [-(2.0 * R + 3e-3), 0.0, 2.0 * R, 4.0 * R, 6.0 * R];
        let mut model = bench_models::balls_on_x(&xs, &[V0, V0, 0.0, 0.0, 0.0], M, R, 1.0);
        let t_end = 10e-3;
        let opts = NsgaOptions {
            t_end,
            ..options(Some(ImpactSequence {
                persistent_steps,
                ..Default::default()
            }))
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let mut most = 0;
        while solver.time() < t_end - 1e-12 {
            most = most.max(solver.step(&mut model).unwrap().stages()[2].solves);
        }
        let v: Vec<f64> = solver.nodes().iter().map(|s| s.v.x).collect();
        // Both hits pass the impulse contact by contact (3 problems each).
        assert_eq!(most, 3, "{persistent_steps} steps: {v:?}");
        // As in the elastic cradle above (the velocity tolerance leaves ~1e-10 m/s).
        for (i, (vi, expected)) in v.iter().zip([0.0, 0.0, 0.0, V0, V0]).enumerate() {
            assert!(
                (vi - expected).abs() < 1e-8,
                "{persistent_steps} steps: ball {i}: {vi} (all {v:?})"
            );
        }
    }
}
