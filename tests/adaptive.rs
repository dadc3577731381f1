//! Step halving (`adaptive`): a pendulum stepped with h = 1/12 s and only two Newton
//! iterations allowed fails without halving once it speeds up; with halving the run completes
//! by retrying exactly the failed steps as two half steps. Checked against the exact
//! (Jacobi elliptic) solution of the pendulum: the halved run's error lies between those of
//! uniform steps h/2 and h.

use saltus::elements::body::RigidBody;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;
use std::f64::consts::PI;

/// Step \[s\] (36 steps to `T_END`): large enough that two Newton iterations do not always
/// suffice (Newton starts from the linear or quadratic extrapolation of the last steps'
/// accelerations and joint reactions, which converges in one or two up to h = 3/38 s).
const H: f64 = 3.0 / 36.0;
/// Newton iteration cap of the capped runs.
const CAP: usize = 2;
const T_END: f64 = 3.0;
const G: f64 = 9.81;
const MASS: f64 = 2.0;
const L: f64 = 1.0;
/// Principal central moments of inertia of the bob \[kg m²\] (J = M L² + I_BOB about the hinge).
const I_BOB: f64 = 2e-3;

/// Pendulum released at rest from horizontal: bob at (L, 0, 0), hinge at the origin about y,
/// gravity −z (the solver's default).
fn pendulum() -> Model {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let bob = model
        .add_node(NodeDef::frame("bob", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    model
        .add_element(
            "bob",
            RigidBody::principal(bob, MASS, Vector3::new(I_BOB, I_BOB, I_BOB)).unwrap(),
        )
        .unwrap();
    let hinge =
        RevoluteJoint::new(model.nodes(), ground, bob, Vector3::zeros(), Vector3::y()).unwrap();
    model.add_element("hinge", hinge).unwrap();
    model
}

fn options(h: f64, max_iterations: usize, adaptive: bool) -> NsgaOptions {
    NsgaOptions {
        h,
        t_end: T_END,
        tol: 1e-10,
        gravity: Vector3::new(0.0, 0.0, -G),
        max_iterations,
        adaptive,
        // Full Newton: the iteration cap below is calibrated on Newton's iteration counts.
        jacobian_reuse: None,
        ..NsgaOptions::default()
    }
}

/// Run to `T_END`; the recorded results (kept also on failure) and the outcome.
fn run(
    h: f64,
    max_iterations: usize,
    adaptive: bool,
) -> (MemorySink, Result<RunSummary, SolveError>) {
    let mut model = pendulum();
    let mut solver = Nsga::new(&mut model, options(h, max_iterations, adaptive)).unwrap();
    let mut sink = MemorySink::default();
    let result = solver.run(&mut model, &mut sink, &mut |_| {});
    (sink, result)
}

/// Arithmetic–geometric mean of 1 and `b`.
fn agm(b: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, b);
    for _ in 0..40 {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    a
}

/// Jacobi elliptic function `sn(u | m)` by the descending Landen (AGM) scheme
/// (Abramowitz & Stegun 16.4): exact to round-off.
fn jacobi_sn(u: f64, m: f64) -> f64 {
    let (mut a, mut c) = (vec![1.0f64], vec![m.sqrt()]);
    let mut b = (1.0 - m).sqrt();
    while c.last().unwrap().abs() > 1e-17 && a.len() < 40 {
        let an = a.last().unwrap();
        let (a1, c1, b1) = (0.5 * (an + b), 0.5 * (an - b), (an * b).sqrt());
        a.push(a1);
        c.push(c1);
        b = b1;
    }
    let n = a.len() - 1;
    let mut phi = 2f64.powi(n as i32) * a[n] * u;
    for i in (1..=n).rev() {
        phi = 0.5 * (phi + (c[i] / a[i] * phi.sin()).asin());
    }
    phi.sin()
}

/// Exact bob position at `t`: with φ the angle from the downward vertical (φ(0) = 90°,
/// φ̇(0) = 0) and ω₀² = M g L/J, `sin(φ/2) = k sn(K − ω₀ t | k²)`, `k = sin 45°`.
fn exact_position(t: f64) -> Vector3<f64> {
    let j = MASS * L * L + I_BOB;
    let omega0 = (MASS * G * L / j).sqrt();
    let k = (PI / 4.0).sin();
    let m = k * k;
    let big_k = PI / (2.0 * agm((1.0 - m).sqrt()));
    let phi = 2.0 * (k * jacobi_sn(big_k - omega0 * t, m)).asin();
    Vector3::new(L * phi.sin(), 0.0, -L * phi.cos())
}

/// Distance of the bob's final position from the exact one \[m\].
fn final_error(sink: &MemorySink) -> f64 {
    let t = *sink.time.last().unwrap();
    assert!((t - T_END).abs() < 1e-12, "ended at {t}");
    (sink.nodes.last().unwrap()[1].x - exact_position(t)).norm()
}

#[test]
fn halving_recovers_non_converged_steps() {
    // The exact solution: released from rest at 90°, the bob is at the bottom after a quarter
    // period K/ω₀ (its own consistency, independent of the solver; to round-off of the AGM
    // and Landen evaluations, ~1e-15).
    let quarter =
        PI / (2.0 * agm((0.5f64).sqrt())) / (MASS * G * L / (MASS * L * L + I_BOB)).sqrt();
    assert!((exact_position(quarter) - Vector3::new(0.0, 0.0, -L)).norm() < 1e-12);
    assert!((exact_position(0.0) - Vector3::new(L, 0.0, 0.0)).norm() < 1e-12);

    // Without halving the CAP-iteration cap is fatal once the pendulum speeds up.
    let (plain, result) = run(H, CAP, false);
    let failed_step = match result {
        Err(SolveError::NonConvergence { step, .. }) => step,
        other => panic!("expected non-convergence, got {other:?}"),
    };
    assert!(failed_step > 1, "failed at step {failed_step}");

    // With halving the same run completes. Stepped by hand to see which nominal steps are
    // halved (the sink records nominal steps only).
    let mut model = pendulum();
    let mut solver = Nsga::new(&mut model, options(H, CAP, true)).unwrap();
    let mut bob = vec![solver.nodes()[1]];
    let mut halvings = vec![0];
    while solver.time() < T_END - 1e-9 * H {
        solver.step(&mut model).unwrap();
        bob.push(solver.nodes()[1]);
        halvings.push(solver.summary().halvings);
    }
    let s = solver.summary().clone();
    let nominal_steps = (T_END / H).round() as usize;
    assert_eq!(bob.len(), nominal_steps + 1);
    assert!((s.t - T_END).abs() < 1e-12, "{s:?}");
    // Each halving replaces one step by two: accepted steps = nominal + halvings.
    assert!(s.halvings > 0);
    assert_eq!(s.steps, nominal_steps + s.halvings, "{s:?}");
    // Up to the failing step both runs perform the same operations: identical states (to
    // round-off; the plain run recorded the initial state and steps 1 … failed_step − 1).
    assert_eq!(plain.time.len(), failed_step);
    for (k, (a, b)) in plain.nodes.iter().zip(&bob).enumerate() {
        let d = (a[1].x - b.x).norm() + (a[1].v - b.v).norm();
        assert!(d < 1e-14, "record {k}: {d:e}");
    }
    // The first halving is exactly the step the plain run failed on.
    let first_halved = halvings.iter().position(|&n| n > 0).unwrap();
    assert_eq!(first_halved, failed_step);
    let x_halved = bob.last().unwrap().x;

    // The cap binds: with an unlimited budget the same step size needs more than CAP iterations.
    let (uniform, result) = run(H, 50, false);
    let s_uniform = result.unwrap();
    assert!(
        s_uniform.max_iterations().iter().any(|&i| i > CAP),
        "{s_uniform:?}"
    );
    let (fine, result) = run(0.5 * H, 50, false);
    result.unwrap();

    let (e_h, e_half, e_adaptive) = (
        final_error(&uniform),
        final_error(&fine),
        (x_halved - exact_position(T_END)).norm(),
    );
    eprintln!(
        "plain run failed at step {failed_step}; halvings {}, steps {}; error at t = {T_END} s \
         against the exact solution: uniform h {e_h:.4e} m, uniform h/2 {e_half:.4e} m (ratio \
         {:.3}), halved run {e_adaptive:.4e} m; uniform-h Newton max {:?}",
        s.halvings,
        s.steps,
        e_h / e_half,
        s_uniform.max_iterations()
    );
    // The uniform runs are second order against the exact solution (the error at t is the
    // phase lag ∝ h² times the speed; its curvature term, ~a Δt²/2 with Δt ≈ 4e-2 s, is
    // ≲ 5 % of it at h and a quarter of that at h/2): ratio 4 within 5 %.
    assert!((e_h / e_half - 4.0).abs() < 0.2, "{e_h} / {e_half}");
    // Halved steps have 1/4 of the local (phase) error of full ones per unit time; the phase
    // lag of every step has the same sign (generalized-α lengthens the period), so the
    // mixed run's error lies strictly between the uniform h/2 and h errors.
    assert!(
        e_half < e_adaptive && e_adaptive < e_h,
        "{e_half} < {e_adaptive} < {e_h}"
    );
}
