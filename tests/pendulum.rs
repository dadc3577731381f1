//! Simple pendulum on a revolute joint at 90° amplitude: period against the exact
//! elliptic-integral period (error ratio 4 per step halving, Richardson limit equal to the
//! exact period to 1e-9), energy drift order with ρ∞ = 1, and exact constraint satisfaction at
//! position and velocity level at every step.

use saltus::elements::body::RigidBody;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;
use std::f64::consts::PI;

const G: f64 = 9.81;
const L: f64 = 1.0;
const M: f64 = 2.0;
/// Radius of the bob (a small sphere: a physical pendulum, accounted for exactly).
const R: f64 = 0.05;

/// Complete elliptic integral of the first kind K(k) by the arithmetic–geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..30 {
        let (an, bn) = (0.5 * (a + b), (a * b).sqrt());
        a = an;
        b = bn;
    }
    PI / (2.0 * a)
}

/// Pendulum released from horizontal: bob at (L, 0, 0), hinge at the origin about y.
fn pendulum() -> Model {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let bob = model
        .add_node(NodeDef::frame("bob", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    model
        .add_element("bob", RigidBody::sphere(bob, M, R).unwrap())
        .unwrap();
    let hinge =
        RevoluteJoint::new(model.nodes(), ground, bob, Vector3::zeros(), Vector3::y()).unwrap();
    model.add_element("hinge", hinge).unwrap();
    model
}

fn run(h: f64, t_end: f64, rho_inf: f64) -> (MemorySink, RunSummary) {
    let mut model = pendulum();
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf,
        tol: 1e-10,
        gravity: Vector3::new(0.0, 0.0, -G),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    (sink, summary)
}

/// Exact period of the physical pendulum released at 90°.
fn exact_period() -> f64 {
    4.0 * elliptic_k((PI / 4.0).sin()) / omega0()
}

/// Small-amplitude angular frequency `√(M g L/J)` of the physical pendulum \[rad/s\].
fn omega0() -> f64 {
    let j = M * L * L + 0.4 * M * R * R;
    (M * G * L / j).sqrt()
}

/// Times at which x crosses 0 going from positive to negative (linear interpolation).
fn downward_crossings(sink: &MemorySink) -> Vec<f64> {
    let x: Vec<f64> = sink.nodes.iter().map(|n| n[1].x.x).collect();
    let mut out = Vec::new();
    for i in 1..x.len() {
        if x[i - 1] > 0.0 && x[i] <= 0.0 {
            let s = x[i - 1] / (x[i - 1] - x[i]);
            out.push(sink.time[i - 1] + s * (sink.time[i] - sink.time[i - 1]));
        }
    }
    out
}

/// Signed relative period error `(T_h − T)/T` of the run with step `h` (ρ∞ = 0.8), from the
/// first two downward crossings of the bottom, and the run's statistics.
fn period_error(h: f64, t_exact: f64) -> (f64, RunSummary) {
    let (sink, summary) = run(h, 2.2 * t_exact, 0.8);
    let c = downward_crossings(&sink);
    assert!(c.len() >= 2, "h = {h}: crossings {c:?}");
    ((c[1] - c[0]) / t_exact - 1.0, summary)
}

/// Period of the 90° pendulum against the exact elliptic-integral period at h = 2, 1 and
/// 0.5 ms (ρ∞ = 0.8).
///
/// Error model: generalized-α is second order, and its period error is an even function of
/// the step, `e(h) = C h² + O(h⁴)`: for the linear oscillator the principal root gives
/// `e = c(ρ∞) (ωh)² (1 − 0.07 (ωh)² + …)` with `c(0.8) = 0.0880` (`c(1) = 1/12`; from the
/// amplification matrix of the recursion in `nsga.md` §2). With ω₀h ≤ 6.3e-3 the `h⁴` term is
/// ~1e-5 relative, so successive error ratios are 4 up to the other error sources:
/// * zero-crossing interpolation: linear interpolation of `x = L sin φ` at the bottom, where
///   `ẍ = 0`, errs by `O(h³ φ̇³)` in time (≤ 2e-8 relative to T at h = 2 ms, ≤ 1e-3 of `e`);
/// * the Newton tolerance 1e-10 (relative residual): ≲ 1e-10 per step in the state, ≲ 1e-6
///   relative to `e` over 10⁴ steps.
///
/// The measured error constant (`e/(ω₀h)²` ≈ 0.24) is larger than the linear `c(0.8)`: at 90°
/// amplitude the motion is strongly anharmonic (the period is 18 % longer than 2π/ω₀).
#[test]
fn period_matches_elliptic_integral() {
    let t_exact = exact_period();
    let omega0 = omega0();
    let hs = [2e-3, 1e-3, 5e-4];
    let mut e = Vec::new();
    for &h in &hs {
        let (err, summary) = period_error(h, t_exact);
        eprintln!(
            "h = {h:.0e} s: relative period error {err:+.4e} (e/(ω₀h)² = {:.4}); {summary:?}",
            err / (omega0 * h).powi(2)
        );
        // One symbolic factorization per subproblem for the whole run (fixed pattern).
        assert_eq!(summary.symbolic_factorizations(), [1, 1, 1]);
        e.push(err);
    }
    let ratios = [e[0] / e[1], e[1] / e[2]];
    // Richardson extrapolation of the period to h → 0 from the two finest runs (h² error).
    let extrapolated = e[2] + (e[2] - e[1]) / 3.0;
    eprintln!(
        "exact period {t_exact:.9} s; error ratios {:.5} {:.5}; Richardson-extrapolated period \
         error {extrapolated:+.2e}",
        ratios[0], ratios[1]
    );
    // Generalized-α lengthens the period for every ρ∞ (the principal root lags).
    assert!(e.iter().all(|x| *x > 0.0), "{e:?}");
    // Second order: ratios 4 up to the error sources listed above (≤ 1e-3 of each error, so
    // ≤ 4 · 2e-3 = 0.008 on a ratio); measured 4.0014, 4.0013.
    assert!(
        ratios.iter().all(|r| (r - 4.0).abs() < 0.01),
        "ratios {ratios:?}"
    );
    // The error is the whole h² term: the extrapolated period equals the exact one up to the
    // remainder, ≤ (4/3) · 1e-3 · e(0.5 ms) ≈ 8e-10 by the same estimates; bound 1e-9 relative
    // (measured −2.5e-10).
    assert!(extrapolated.abs() < 1e-9, "{extrapolated:e}");
    // Size at h = 1 ms: an error constant e/(ω₀h)² below 1, i.e. within ~10× the linear
    // oscillator's c(0.8) = 0.088 (measured 0.242; the 0.1 % is 100× looser).
    assert!(e[1] < (omega0 * hs[1]).powi(2), "{}", e[1]);
}

#[test]
fn constraints_hold_at_position_and_velocity_level_every_step() {
    let (sink, _) = run(2e-3, 1.0, 0.8);
    let v = sink.channel("hinge", "violation").unwrap();
    let worst_g = v.iter().map(|r| r[0]).fold(0.0, f64::max);
    let worst_gdot = v.iter().map(|r| r[1]).fold(0.0, f64::max);
    eprintln!("max |g| = {worst_g:.2e}, max |g_q v| = {worst_gdot:.2e}");
    // Issue requirement: the position and velocity corrections enforce the joint exactly,
    // i.e. to the Newton tolerance: ≤ 1e-10 (m, rad, m/s, rad/s).
    assert!(worst_g <= 1e-10);
    assert!(worst_gdot <= 1e-10);
}

fn energy_drift(h: f64) -> f64 {
    let (sink, _) = run(h, 1.0, 1.0);
    let e0 = sink.energy[0].kinetic + sink.energy[0].potential;
    sink.energy
        .iter()
        .map(|e| (e.kinetic + e.potential - e0).abs())
        .fold(0.0, f64::max)
        / (M * G * L)
}

#[test]
fn energy_error_is_second_order_with_rho_one() {
    let hs = [4e-3, 2e-3, 1e-3];
    let d: Vec<f64> = hs.iter().map(|&h| energy_drift(h)).collect();
    let p1 = (d[0] / d[1]).log2();
    let p2 = (d[1] / d[2]).log2();
    eprintln!("energy drift {d:?}, observed orders {p1:.3} {p2:.3}");
    // Issue requirement: observed order ≥ 1.9 on three step sizes.
    assert!(p1 >= 1.9 && p2 >= 1.9, "orders {p1} {p2}");
}

#[test]
fn validate_hinge_angle_is_continuous_over_whole_turns() {
    // The pendulum without gravity, spun at ω = 10 rad/s: 3.2 turns in 2 s. The hinge's angle
    // output follows θ = ω t over the turns (no (−π, π] sawtooth), up to the integrator's
    // phase lag: the circular motion is an oscillation of frequency ω in x and z, which the
    // trapezoidal rule (ρ∞ = 1) lags by ω³ h² t / 12 = 1.67e-4 rad at t = 2 s.
    let mut model = pendulum();
    let omega = 10.0;
    let bob = model.node_id("bob").unwrap();
    model.nodes_mut()[bob.index()].initial.v = Vector3::new(0.0, 0.0, -omega * L);
    model.nodes_mut()[bob.index()].initial.omega = Vector3::new(0.0, omega, 0.0);
    let mut solver = Nsga::new(
        &mut model,
        NsgaOptions {
            h: 1e-3,
            t_end: 2.0,
            rho_inf: 1.0,
            gravity: Vector3::zeros(),
            ..Default::default()
        },
    )
    .unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    let angle = sink.channel("hinge", "angle").unwrap();
    let last = angle.last().unwrap()[0];
    let lag = omega.powi(3) * 1e-6 * 2.0 / 12.0;
    assert!((last.abs() - omega * 2.0).abs() < 1.1 * lag, "{last}");
    for (k, w) in angle.windows(2).enumerate() {
        assert!(
            (w[1][0] - w[0][0]).abs() < 0.02,
            "jump at record {k}: {w:?}"
        );
    }
}
