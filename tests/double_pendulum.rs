//! Double pendulum (two uniform rods on two revolute joints) released with both arms
//! horizontal — the chaotic regime. Checks the energy behaviour of the NSGA step:
//!
//! - ρ∞ = 1: the energy error is second order in h (three step sizes, maximum error over a
//!   horizon on which the motion is still predictable);
//! - ρ∞ = 0.5: the energy never exceeds E0 by more than the second-order error of the
//!   non-dissipative run, it decreases overall (by far more than that run drifts), and its
//!   step-to-step increases vanish at third order in h.
//!
//! Step-to-step monotonicity of the total energy *to round-off* (the wording) is not a
//! property of generalized-α with ρ∞ < 1, not even for a linear oscillator: the dissipated
//! quantity is a norm that involves the acceleration history, not the physical energy.
//! `linear_oscillator_matches_textbook_generalized_alpha` shows that the library reproduces the
//! textbook recurrence to round-off, including its physical-energy increases on some steps.

use saltus::core::Energy;
use saltus::elements::body::{PointMass, RigidBody};
use saltus::elements::force::{Attachment, SpringDamper};
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;

const G: f64 = 9.81;
/// Rod lengths \[m\] and masses \[kg\].
const L1: f64 = 1.0;
const L2: f64 = 1.0;
const M1: f64 = 1.0;
const M2: f64 = 1.0;
/// Rod radius \[m\] (only gives the rods a small positive axial inertia).
const ROD_RADIUS: f64 = 0.01;
/// Energy scale \[J\]: the weight of the pendulum times its length.
const E_SCALE: f64 = (M1 + M2) * G * (L1 + L2);

/// Uniform rod of mass `m` and length `l` along body x, node at its centre.
fn rod(node: NodeId, m: f64, l: f64) -> RigidBody {
    let transverse = m * l * l / 12.0;
    let axial = 0.5 * m * ROD_RADIUS * ROD_RADIUS;
    RigidBody::principal(node, m, Vector3::new(axial, transverse, transverse)).unwrap()
}

/// Both arms along +x (horizontal), at rest; hinges about y at x = 0 and x = L1; gravity −z.
fn double_pendulum() -> Model {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let a = model
        .add_node(NodeDef::frame("arm1", Vector3::new(0.5 * L1, 0.0, 0.0)))
        .unwrap();
    let b = model
        .add_node(NodeDef::frame(
            "arm2",
            Vector3::new(L1 + 0.5 * L2, 0.0, 0.0),
        ))
        .unwrap();
    model.add_element("arm1", rod(a, M1, L1)).unwrap();
    model.add_element("arm2", rod(b, M2, L2)).unwrap();
    let j1 = RevoluteJoint::new(model.nodes(), ground, a, Vector3::zeros(), Vector3::y()).unwrap();
    model.add_element("hinge1", j1).unwrap();
    let j2 = RevoluteJoint::new(
        model.nodes(),
        a,
        b,
        Vector3::new(L1, 0.0, 0.0),
        Vector3::y(),
    )
    .unwrap();
    model.add_element("hinge2", j2).unwrap();
    model
}

fn run(h: f64, t_end: f64, rho_inf: f64) -> (MemorySink, RunSummary) {
    let mut model = double_pendulum();
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

fn total(e: &Energy) -> f64 {
    e.kinetic + e.potential
}

fn energies(sink: &MemorySink) -> Vec<f64> {
    sink.energy.iter().map(total).collect()
}

/// Largest single-step energy increase max(E_{n+1} − E_n) \[J\] and the number of steps on
/// which the energy rose.
fn step_increases(e: &[f64]) -> (f64, usize) {
    let d = e.windows(2).map(|w| w[1] - w[0]);
    let ups = e.windows(2).filter(|w| w[1] > w[0]).count();
    (d.fold(f64::NEG_INFINITY, f64::max), ups)
}

/// Absolute angle \[rad\] of arm 2 at the last record (hinge 1 + hinge 2 relative angles).
fn final_arm2_angle(sink: &MemorySink) -> f64 {
    let a1 = sink.channel("hinge1", "angle").unwrap();
    let a2 = sink.channel("hinge2", "angle").unwrap();
    a1.last().unwrap()[0] + a2.last().unwrap()[0]
}

/// Horizon \[s\] of the convergence studies. It contains the first whip of the outer arm
/// (t ≈ 2 s, where the energy error and its step increments peak), and the motion is still
/// predictable on it: the final arm-2 angle converges at second order across the step sizes
/// (asserted below), i.e. the runs follow the same trajectory, so the maxima compared are
/// taken on the same event and their ratio is not polluted by chaotic divergence.
const HORIZON: f64 = 2.5;
const HS: [f64; 3] = [4e-3, 2e-3, 1e-3];

#[test]
fn energy_error_is_second_order_with_rho_one() {
    let mut drift = Vec::new();
    let mut angle = Vec::new();
    for h in HS {
        let (sink, summary) = run(h, HORIZON, 1.0);
        let e = energies(&sink);
        let d = e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max) / E_SCALE;
        eprintln!(
            "ρ∞ 1, h {h:e}: max |E − E0|/(m g L) {d:.3e}, arm-2 angle at {HORIZON} s {:.6} rad; \
             Newton max {:?}, mean {:.2?}, wall {:?}",
            final_arm2_angle(&sink),
            summary.max_iterations(),
            summary.mean_iterations(),
            summary.wall
        );
        drift.push(d);
        angle.push(final_arm2_angle(&sink));
    }
    let p1 = (drift[0] / drift[1]).log2();
    let p2 = (drift[1] / drift[2]).log2();
    let q = ((angle[0] - angle[1]) / (angle[1] - angle[2])).abs().log2();
    eprintln!("energy-error orders {p1:.3} {p2:.3}; arm-2 angle convergence order {q:.3}");
    // Predictability of the horizon (see HORIZON): a second-order trajectory error gives
    // q ≈ 2; once chaos takes over, the differences stop shrinking (q ≈ 0 or erratic).
    // 1.8 leaves room for the pre-asymptotic coarsest step.
    assert!(
        q >= 1.8,
        "trajectory not converging on the horizon: order {q}"
    );
    // Issue requirement: observed order ≥ 1.9 on three step sizes.
    assert!(p1 >= 1.9 && p2 >= 1.9, "orders {p1} {p2}");
}

/// Mean of `e − e[0]` over the first and over the last 10 % of the records \[J\].
fn window_means(e: &[f64]) -> (f64, f64) {
    let (n, k) = (e.len(), e.len() / 10);
    let mean = |w: &[f64]| w.iter().map(|x| x - e[0]).sum::<f64>() / w.len() as f64;
    (mean(&e[..k]), mean(&e[n - k..]))
}

/// ρ∞ = 0.5 over 10 s of chaotic motion (h = 2 ms), against the same run with ρ∞ = 1 as the
/// measure of the conservative (second-order) energy error: the dissipative run never gains
/// more energy than that error, and its energy decreases overall, by far more than the drift
/// of the conservative run.
#[test]
fn energy_decays_overall_with_rho_half() {
    let (h, t_end) = (2e-3, 10.0);
    let (sink1, _) = run(h, t_end, 1.0);
    let (sink, summary) = run(h, t_end, 0.5);
    let e1 = energies(&sink1);
    let e = energies(&sink);
    let n = e.len();
    let rise = |e: &[f64]| e.iter().map(|x| x - e[0]).fold(f64::NEG_INFINITY, f64::max);
    let (first1, last1) = window_means(&e1);
    let (first, last) = window_means(&e);
    let (up, ups) = step_increases(&e);
    eprintln!(
        "h {h:e}, {t_end} s: ρ∞ 1: max (E − E0) {:.2e} J, mean E − E0 over the first/last 10 % \
         {first1:.3e} / {last1:.3e} J; ρ∞ 0.5: max (E − E0) {:.2e} J, E(T) − E0 {:.3e} J, \
         first/last 10 % {first:.3e} / {last:.3e} J, largest step increase {up:.2e} J on {ups} \
         of {} steps; Newton max {:?}, mean {:.2?}, wall {:?}",
        rise(&e1),
        rise(&e),
        e[n - 1] - e[0],
        n - 1,
        summary.max_iterations(),
        summary.mean_iterations(),
        summary.wall
    );
    // "Non-increasing up to an allowance": the energy never exceeds E0 by more than the
    // largest energy gain of the non-dissipative scheme at the same h (its O(h²) error, here
    // 4.9e-4 J), plus round-off of the energy sum (terms ≤ E_SCALE ≈ 40 J, 1e-12·E_SCALE ≈ 1e3
    // ulps). A round-off-only allowance is unattainable (see the third-order test below).
    // (Measured: the ρ∞ = 0.5 energy never rises above E0 at all at this h.)
    assert!(rise(&e) <= rise(&e1).max(0.0) + 1e-12 * E_SCALE);
    // Strictly decreasing overall: the final energy and the mean over the last 10 % are below
    // E0 and below the mean over the first 10 %.
    assert!(e[n - 1] < e[0] && last < first && last < 0.0);
    // ... and the decrease is numerical dissipation, not a fluctuation of the second-order
    // error: ≥ 10× the drift of the window means of the ρ∞ = 1 run (measured ≈ 60×).
    let drift1 = (last1 - first1).abs();
    assert!(
        first - last >= 10.0 * drift1,
        "{:e} vs {drift1:e}",
        first - last
    );
}

/// ρ∞ = 0.5: the energy does rise on some steps, but those increases are the increments of the
/// second-order (conservative) energy error and vanish as h³ — numerical dissipation, which is
/// O(h⁴) per step for smooth motion, cannot mask them, so "non-increasing to round-off" is not
/// attainable; this is the strongest step-to-step statement that holds.
#[test]
fn step_energy_increases_with_rho_half_vanish_at_third_order() {
    let mut inc = Vec::new();
    for h in HS {
        let (sink, _) = run(h, HORIZON, 0.5);
        let e = energies(&sink);
        let (up, ups) = step_increases(&e);
        eprintln!(
            "ρ∞ 0.5, h {h:e}: largest step increase {up:.3e} J ({:.2e} of m g L) on {ups} of {} steps",
            up / E_SCALE,
            e.len() - 1
        );
        inc.push(up);
    }
    let p1 = (inc[0] / inc[1]).log2();
    let p2 = (inc[1] / inc[2]).log2();
    eprintln!("step-increase orders {p1:.3} {p2:.3}");
    // Increment of an O(h²) error over one step of length h: O(h³). 2.8 allows for the
    // pre-asymptotic coarsest step (the largest increase sits on the fast whip).
    assert!(p1 >= 2.8 && p2 >= 2.8, "orders {p1} {p2}");
    // And at h = 1 ms they are small: ≤ 1e-5 of m g L (measured ≈ 1.3e-6).
    assert!(inc[2] / E_SCALE <= 1e-5);
}

/// Linear oscillator (point mass on a zero-rest-length spring, no gravity): the library's
/// states match the textbook generalized-α recurrence (Chung–Hulbert coefficients, Arnold–Brüls
/// form with the α-history `a`) to round-off, and with ρ∞ = 0.5 the physical energy of both
/// rises on some steps — a property of the method, not of the library.
#[test]
fn linear_oscillator_matches_textbook_generalized_alpha() {
    let (m, k, x0, h, steps, rho) = (1.0, 100.0, 0.5, 0.01, 200, 0.5);
    let mut model = Model::new();
    let p = model
        .add_node(NodeDef::point("mass", Vector3::new(x0, 0.0, 0.0)))
        .unwrap();
    model
        .add_element("mass", PointMass::new(p, m).unwrap())
        .unwrap();
    let spring = SpringDamper::to_anchor(Attachment::point(p), Vector3::zeros(), k, 0.0, 0.0);
    model.add_element("spring", spring.unwrap()).unwrap();
    let opts = NsgaOptions {
        h,
        t_end: h * steps as f64,
        rho_inf: rho,
        tol: 1e-12,
        gravity: Vector3::zeros(),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();

    // Textbook recurrence for ẍ = −ω² x.
    let am = (2.0 * rho - 1.0) / (rho + 1.0);
    let af = rho / (rho + 1.0);
    let gamma = 0.5 + af - am;
    let beta = 0.25 * (gamma + 0.5) * (gamma + 0.5);
    let w2 = k / m;
    let (mut x, mut v, mut xdd) = (x0, 0.0, -w2 * x0);
    let mut a = xdd;
    let mut worst: f64 = 0.0;
    let mut e_ref = vec![0.5 * k * x * x];
    for n in 1..=steps {
        let a_star = (af * xdd - am * a) / (1.0 - am);
        let c = (1.0 - af) / (1.0 - am);
        let x_pred = x + h * v + h * h * (0.5 - beta) * a + h * h * beta * a_star;
        let xdd1 = -w2 * x_pred / (1.0 + w2 * h * h * beta * c);
        let a1 = a_star + c * xdd1;
        v += h * (1.0 - gamma) * a + h * gamma * a1;
        x = x_pred + h * h * beta * c * xdd1;
        a = a1;
        xdd = xdd1;
        e_ref.push(0.5 * m * v * v + 0.5 * k * x * x);
        let s = &sink.nodes[n][0];
        worst = worst
            .max((s.x.x - x).abs() / x0)
            .max((s.v.x - v).abs() / (x0 * w2.sqrt()));
        assert!(s.x.y.abs() + s.x.z.abs() < 1e-15);
    }
    let e = energies(&sink);
    let (up, ups) = step_increases(&e);
    let (up_ref, ups_ref) = step_increases(&e_ref);
    eprintln!(
        "linear oscillator ωh = 0.1, ρ∞ 0.5: max state deviation from the textbook recurrence \
         {worst:.2e}; largest step energy increase library {up:.3e} J ({ups} of {steps} steps), \
         textbook {up_ref:.3e} J ({ups_ref} steps); E(T)/E0 = {:.6}",
        e[steps] / e[0]
    );
    // Same recurrence up to the Newton tolerance (1e-12) and the O(1e-6 h) error of the
    // library's initial-acceleration solve: 1e-9 relative.
    assert!(worst < 1e-9, "deviation {worst:e}");
    // The physical energy rises on some steps in both, by a comparable amount (same method):
    // ≥ 1e-8 of E0, far above round-off (E0 = 12.5 J, ulp ≈ 2e-15 J).
    assert!(
        up_ref > 1e-8 * e_ref[0] && up > 1e-8 * e[0],
        "{up_ref:e} {up:e}"
    );
    assert!((up - up_ref).abs() <= 1e-6 * e[0]);
    // ... while decreasing overall.
    assert!(e[steps] < e[0]);
}

/// Velocity of the hinge point `p` \[m/s\] as carried by the body of node state `s`:
/// `ẋ + R Ω × (p − x)`.
fn point_velocity(s: &saltus::core::NodeState, p: Vector3<f64>) -> Vector3<f64> {
    s.v + (s.r * s.omega).cross(&(p - s.x))
}

/// Step and duration of the reuse tests below \[s\].
const REUSE_H: f64 = 1e-3;
const REUSE_T: f64 = 1.0;

/// The double pendulum swung for `REUSE_T` with steps `REUSE_H`, Newton tolerance 1e-10 and
/// the given `jacobian_reuse` (`None`: full Newton everywhere): its summary and records.
fn run_with_reuse(jacobian_reuse: Option<f64>) -> (RunSummary, MemorySink) {
    let mut model = double_pendulum();
    let opts = NsgaOptions {
        h: REUSE_H,
        t_end: REUSE_T,
        rho_inf: 0.8,
        tol: 1e-10,
        gravity: Vector3::new(0.0, 0.0, -G),
        jacobian_reuse,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    (summary, sink)
}

/// The velocity jump of a model without contacts starts from the position correction's
/// factorization (`Stage::newton_after`: the same `M` and joint rows `k G` at nearly the same
/// configuration) instead of assembling and factorizing its own matrix, and ends where full
/// Newton ends: the hinges' velocity constraints hold at every step as tightly, and the
/// motion is the same to the Newton tolerance.
#[test]
fn velocity_jump_reuses_the_position_correction_factorization() {
    let (h, t_end) = (REUSE_H, REUSE_T);
    let go = |jacobian_reuse: Option<f64>| {
        let (summary, sink) = run_with_reuse(jacobian_reuse);
        (summary.numeric_factorizations(), sink)
    };
    let (f_reuse, reuse) = go(NsgaOptions::default().jacobian_reuse);
    let (f_full, full) = go(None);
    println!("factorizations (smooth, position, velocity): reuse {f_reuse:?}, full {f_full:?}");
    let steps = (t_end / h).round() as usize;
    // Full Newton factorizes the velocity jump at every step but the few that converge at
    // their start check (released at rest).
    assert!(f_full[2] >= steps - 10, "{f_full:?}");
    // The arms swing at up to ~6 rad/s, and the donor's matrix differs from the velocity
    // stage's by h ∂f/∂v (gyroscopic terms) and the position correction's move of G: it
    // contracts the residual by 1e-7 … 1e-3, and is never refused here.
    assert_eq!(f_reuse[2], 0, "{f_reuse:?}");
    // Hinge velocity constraints after every step: both runs at round-off of velocities of
    // ~5 m/s (the velocity tolerance is 1e-10 relative; 1e3 ε · 5 ≈ 1e-12).
    let worst = |sink: &MemorySink| {
        sink.nodes.iter().fold(0.0_f64, |m, n| {
            let hinge1 = point_velocity(&n[1], Vector3::zeros());
            let p2 = n[1].x + n[1].r * Vector3::new(0.5 * L1, 0.0, 0.0);
            let hinge2 = point_velocity(&n[1], p2) - point_velocity(&n[2], p2);
            m.max(hinge1.norm()).max(hinge2.norm())
        })
    };
    let (w_reuse, w_full) = (worst(&reuse), worst(&full));
    println!("largest hinge velocity: reuse {w_reuse:e}, full Newton {w_full:e} m/s");
    assert!(
        w_reuse <= 1e-12 && w_full <= 1e-12,
        "{w_reuse:e}, {w_full:e}"
    );
    // The same motion: the runs differ by the Newton tolerance (1e-10 relative, coordinates
    // of ~1 m) per step, grown at most tenfold over 1 000 steps of a motion that is not yet
    // chaotic at 1 s (observed 6e-11 m).
    let dx = reuse
        .nodes
        .iter()
        .zip(&full.nodes)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(a, b)| (a.x - b.x).norm()))
        .fold(0.0_f64, f64::max);
    println!("largest position difference: {dx:e} m");
    assert!(dx <= 1e-9, "{dx:e}");
}

/// The position correction starts with the matrix of first-order joint kinematics
/// (`Tolerance::first_order_constraints`: without the joints' curvature `Σ_j M_j H_j`) and
/// refines with its factorization: on the swinging double pendulum it never falls back to
/// exact Newton, the hinges' position constraints end at round-off as with exact Newton, and
/// the velocity jump, whose matrix is then the position correction's up to the correction's
/// move of `G`, converges with one correction per step.
#[test]
fn position_correction_starts_with_first_order_joint_kinematics() {
    let (summary, first_order) = run_with_reuse(NsgaOptions::default().jacobian_reuse);
    let (exact_summary, exact) = run_with_reuse(None);
    let (position, velocity) = (summary.stage("position"), summary.stage("velocity"));
    println!("position: {position:?}\nvelocity: {velocity:?}");
    // Every position solve starts first-order (full Newton: none), and none falls back.
    assert_eq!(position.first_order_solves, position.solves, "{position:?}");
    assert_eq!(exact_summary.stage("position").first_order_solves, 0);
    assert_eq!(position.first_order_fallbacks, 0, "{position:?}");
    // One factorization per correction that moves (a few steps converge at their start
    // check), refining corrections on top: at most one per solve here (the first-order matrix
    // contracts by ~1e-5 per correction at these loads and rates).
    assert!(
        position.numeric_factorizations <= position.solves,
        "{position:?}"
    );
    assert!(position.iterations <= 2 * position.solves, "{position:?}");
    // The velocity jump: one correction with the donated factorization per solve.
    assert_eq!(velocity.numeric_factorizations, 0, "{velocity:?}");
    assert!(velocity.iterations <= velocity.solves, "{velocity:?}");
    // Hinge position constraints after every step: at the round-off of coordinates of ~1 m in
    // both runs (the position rows' floor is 1e3 ε |x| ≈ 2e-13 m per row).
    let worst = |sink: &MemorySink| {
        sink.nodes.iter().fold(0.0_f64, |m, n| {
            let hinge1 = n[1].x - n[1].r * Vector3::new(0.5 * L1, 0.0, 0.0);
            let p1 = n[1].x + n[1].r * Vector3::new(0.5 * L1, 0.0, 0.0);
            let p2 = n[2].x - n[2].r * Vector3::new(0.5 * L2, 0.0, 0.0);
            m.max(hinge1.norm()).max((p1 - p2).norm())
        })
    };
    let (w_first, w_exact) = (worst(&first_order), worst(&exact));
    println!("largest hinge gap: first-order start {w_first:e}, exact Newton {w_exact:e} m");
    assert!(
        w_first <= 1e-12 && w_exact <= 1e-12,
        "{w_first:e}, {w_exact:e}"
    );
    // (The two runs follow the same motion to 1e-9 m: the test above compares them.)
}
