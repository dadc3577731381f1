//! Heavy symmetric top on a spherical joint, started exactly on a steady precession: the
//! measured precession rate against the analytic slow root of the steady-precession condition,
//! and constancy of the tilt (no nutation beyond the discretisation error).

use saltus::elements::body::RigidBody;
use saltus::elements::joints::SphericalJoint;
use saltus::prelude::*;
use std::f64::consts::PI;

const G: f64 = 9.81;
/// Mass \[kg\].
const M: f64 = 1.0;
/// Distance pivot → centre of mass along the symmetry axis \[m\].
const L: f64 = 0.1;
/// Transverse moment of inertia about the centre of mass \[kg m²\].
const I1: f64 = 5e-3;
/// Axial moment of inertia \[kg m²\].
const I3: f64 = 8e-3;
/// Spin: component of the angular velocity along the symmetry axis \[rad/s\].
const OMEGA3: f64 = 100.0;
/// Tilt of the symmetry axis from the vertical \[rad\].
const THETA: f64 = PI / 6.0;

/// Slow root of the steady-precession condition about the pivot.
///
/// With `e₃` the symmetry axis, `ω = Ω_p e_z + ψ̇ e₃`, `ω₃ = ω·e₃ = Ω_p cos θ + ψ̇` and the
/// transverse moment about the pivot `I₁' = I₁ + m l²`, the angular momentum about the pivot is
/// `L = I₁' Ω_p (e_z − cos θ e₃) + I₃ ω₃ e₃`. In steady precession everything turns rigidly
/// about `e_z` at `Ω_p`, so `dL/dt = Ω_p e_z × L = Ω_p (I₃ ω₃ − I₁' Ω_p cos θ) (e_z × e₃)`, and
/// the gravity moment about the pivot is `l e₃ × (−m g e_z) = m g l (e_z × e₃)`:
///
/// `m g l = Ω_p I₃ ω₃ − I₁' Ω_p² cos θ`.
///
/// Slow root in the cancellation-free form `Ω_p = 2 m g l / (I₃ω₃ + √((I₃ω₃)² − 4 I₁' cos θ m g l))`.
fn steady_precession_rate() -> f64 {
    let i1p = I1 + M * L * L;
    let a = I3 * OMEGA3;
    let disc = a * a - 4.0 * i1p * THETA.cos() * M * G * L;
    assert!(disc > 0.0, "spin too slow for steady precession");
    2.0 * M * G * L / (a + disc.sqrt())
}

/// The top: ground node fixed at the pivot (origin), body node at the centre of mass
/// `l e₃` with body z along `e₃ = (sin θ, 0, cos θ)`, on the steady precession.
fn top(omega_p: f64) -> Model {
    let r0 = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), THETA);
    let e3 = r0 * Vector3::z();
    let psi_dot = OMEGA3 - omega_p * THETA.cos();
    let omega = Vector3::z() * omega_p + e3 * psi_dot;
    let x_com = e3 * L;
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let body = model
        .add_node(
            NodeDef::frame("top", x_com)
                .rotation(r0)
                .velocity(omega.cross(&x_com))
                .angular_velocity(omega),
        )
        .unwrap();
    model
        .add_element(
            "top",
            RigidBody::principal(body, M, Vector3::new(I1, I1, I3)).unwrap(),
        )
        .unwrap();
    let pivot = SphericalJoint::new(model.nodes(), ground, body, Vector3::zeros()).unwrap();
    model.add_element("pivot", pivot).unwrap();
    model
}

struct Measured {
    /// Least-squares precession rate \[rad/s\].
    rate: f64,
    /// Largest |θ(t) − θ₀| \[rad\].
    tilt_dev: f64,
    /// Largest constraint violation |g| \[m\].
    max_g: f64,
    summary: RunSummary,
}

fn run(h: f64, t_end: f64, rho_inf: f64) -> Measured {
    let omega_p = steady_precession_rate();
    let mut model = top(omega_p);
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

    // Azimuth (unwrapped) and tilt of the symmetry axis.
    let mut phi: Vec<f64> = Vec::with_capacity(sink.time.len());
    let mut tilt_dev: f64 = 0.0;
    for n in &sink.nodes {
        let e3 = n[1].r * Vector3::z();
        let mut a = e3.y.atan2(e3.x);
        if let Some(&prev) = phi.last() {
            a += 2.0 * PI * ((prev - a) / (2.0 * PI)).round();
        }
        phi.push(a);
        tilt_dev = tilt_dev.max((e3.z.clamp(-1.0, 1.0).acos() - THETA).abs());
    }
    // Least-squares slope of φ(t).
    let n = phi.len() as f64;
    let tm = sink.time.iter().sum::<f64>() / n;
    let pm = phi.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (t, p) in sink.time.iter().zip(&phi) {
        sxy += (t - tm) * (p - pm);
        sxx += (t - tm) * (t - tm);
    }
    let max_g = sink
        .channel("pivot", "violation")
        .unwrap()
        .iter()
        .map(|v| v[0])
        .fold(0.0, f64::max);
    Measured {
        rate: sxy / sxx,
        tilt_dev,
        max_g,
        summary,
    }
}

/// Precession rate from the initial steady state, over one full precession period, and the
/// tilt stays at θ₀.
///
/// ρ∞ = 1: the steady precession is a relative equilibrium of a conservative system, and seen
/// from the body the transverse angular velocity turns at the spin rate ψ̇ ≈ ω₃ (ψ̇h = 0.05),
/// so any algorithmic dissipation would act on exactly the motion being measured; with ρ∞ = 1
/// there is none and the only error left is the second-order phase error. (ρ∞ = 0.8 is run as
/// well: its extra damping at ωh = 0.05 is O((ωh)³) per step and must not change the result.)
#[test]
fn precession_rate_matches_steady_precession_and_tilt_is_constant() {
    let omega_p = steady_precession_rate();
    let period = 2.0 * PI / omega_p;
    let h = 5e-4;
    for rho_inf in [1.0, 0.8] {
        let m = run(h, period, rho_inf);
        let err = (m.rate - omega_p).abs() / omega_p;
        eprintln!(
            "ρ∞ {rho_inf}, h {h:e}: Ω_p {omega_p:.6} rad/s (period {period:.4} s), measured {:.6} rad/s, \
             relative error {err:.2e}, max |θ−θ₀| {:.2e} rad, max |g| {:.1e} m; {:?}",
            m.rate, m.tilt_dev, m.max_g, m.summary
        );
        // Generalized-α phase error O((ωh)²) with ω the fastest rate of the motion, the spin
        // ω₃ = 100 rad/s: (ω₃h)² = 2.5e-3, times the trapezoidal-rule frequency-error
        // constant ≈ 1/12 gives ≈ 2e-4. 1e-3 leaves a factor ~4 yet is tight enough to reject
        // a wrong steady-precession condition: using I₁ instead of I₁ + m l² shifts Ω_p by 1.4 %.
        assert!(err < 1e-3, "ρ∞ {rho_inf}: relative error {err:e}");
        // Exactly on the steady motion there is no nutation; a start off by δΩ nutates with
        // peak-to-peak tilt ≈ (δΩ/Ω_p)·2I₁'mgl sinθ/(I₃ω₃)² = (δΩ/Ω_p)·2.3e-2 rad. 1e-4 rad thus
        // admits the O(h²) start-up mismatch (δΩ/Ω_p ~ 2e-4 → 5e-6 rad) and rejects a 0.5 %
        // error in the initial precession rate (checked: it gives 1.3e-4 rad). The mean
        // precession rate of a fast top hardly depends on the start, so this is the check
        // that the initial state is the steady one.
        assert!(
            m.tilt_dev < 1e-4,
            "ρ∞ {rho_inf}: tilt deviation {:e}",
            m.tilt_dev
        );
        // The spherical joint is enforced exactly by the position correction: ≤ 1e-10 m.
        assert!(m.max_g <= 1e-10);
        assert_eq!(m.summary.symbolic_factorizations(), [1, 1, 1]);
    }
}

/// The precession-rate error is second order in h (ρ∞ = 1, three step sizes, one period).
#[test]
fn precession_rate_error_is_second_order() {
    let omega_p = steady_precession_rate();
    let period = 2.0 * PI / omega_p;
    let hs = [2e-3, 1e-3, 5e-4];
    let e: Vec<f64> = hs
        .iter()
        .map(|&h| (run(h, period, 1.0).rate - omega_p).abs() / omega_p)
        .collect();
    let p1 = (e[0] / e[1]).log2();
    let p2 = (e[1] / e[2]).log2();
    let es: Vec<String> = e.iter().map(|x| format!("{x:.3e}")).collect();
    eprintln!("h {hs:?}: relative precession-rate errors {es:?}, observed orders {p1:.3} {p2:.3}");
    // Generalized-α is second order; 1.9 allows for the slight pre-asymptotic behaviour at
    // ω₃h = 0.2 and for the O(h²)-small nutation in the least-squares slope.
    assert!(p1 >= 1.9 && p2 >= 1.9, "orders {p1} {p2}");
}
