//! Roller–crank with a flexible connecting rod and rolling resistance (validation case V06,
//! thesis Ch. 3.1.3 / A.6): the rigid roller–crank of V05 (`tests/roller_crank.rs`, same
//! assumed layout — crank pivot at the roller centre's height (0, r), crank vertical at t = 0,
//! roller at (√(l² − c²), r) — same initial velocities: crank 4 rad/s about Z, roller spin
//! 8 rad/s counter-clockwise, rod and roller with the rigid slider–crank velocities) with
//!
//! * the connecting rod modelled by 8 geometrically exact beam elements: A = 1.1323e-4 m²,
//!   I = 1.0685e-9 m⁴ (the spec's reconstruction of the OCR-damaged exponents; circular-type
//!   section: I₂ = I₃ = I, J = 2I, Cowper shear coefficient), E = 4.14e9 Pa, ρ = 7850 kg/m³,
//!   ν = 0.3 (rod mass ρ A l = 0.2667 kg, transverse inertia m l²/12 = 0.0020 kg m², as the
//!   rigid rod's 0.002), no structural damping. The beam's end nodes are frame nodes, joined
//!   by revolute joints (axis Z) to the crank at the crank pin and to the roller at its centre;
//!   the beam starts straight (undeformed) with the rigid rod's velocity field;
//! * rolling resistance ρ = 0.01 m (γ_s = 0) at the roller/plane contact, μ = 0.1, e_N = e_T = 0;
//! * h = 1e-3 s, ρ∞ = 0, T = 2 s, gravity −Y (9.8 m/s²), Newton tolerance 1e-8.
//!
//! The rigid model is run with the same contact data (rolling resistance included) as the
//! reference of the comparison; it is the V05 model plus rolling resistance.
//!
//! # What the runs show (assumed layout; numbers of the dev-profile run printed by the test)
//!
//! * Both runs complete with the contact closed throughout (min gap ≈ −4e-17 m, normal force
//!   ≥ 1 N: the roller never bounces — the thesis reports two bounces for its figure layout;
//!   reported, not asserted) and the joints satisfied to ≈ 2e-12.
//! * The roller starts rolling without slip (v_x = −0.4 m/s = −r ω). Since ρ = 0.01 m exceeds
//!   μ r = 0.005 m, the resisting couple ρN can always balance the friction moment once the spin
//!   has stopped: the spin is braked to zero (rigid 0.367 s, flexible 0.379 s) and then stays
//!   locked (rolling status "stick") while the roller slides. Its angular acceleration is
//!   therefore non-zero only before that time; the histories are compared on that window.
//! * Flexible vs rigid: the 25 ms trends of the roller's angular acceleration agree (RMS of
//!   their difference ≈ 2 rad/s² for RMS values ≈ 24 rad/s²), but the flexible history carries
//!   a ≈ 40 Hz oscillation (oscillatory content ≈ 4.5 vs 1.6 rad/s² rigid) and its features
//!   come later: spin stop +12 ms, roller reversals +2, +6, +17, +34 ms, crank reversals +17,
//!   +44 ms (part of this is the lighter rod, 0.2667 vs 0.3 kg).
//! * The straight rod released into gravity vibrates about its static sag (end-to-end rotation
//!   w l³ cos φ/(12 E I) = 4.2e-3 rad) at its first bending frequency (measured 40 Hz,
//!   pinned–pinned 38.9 Hz); that vibration modulates the contact force and the roller's
//!   angular acceleration. Its RMS (deformation minus a 51 ms moving average) falls from
//!   1.7e-3 rad in the first quarter to 8e-5 rad in the last; the total RMS only from 5.3e-3 to
//!   4.6e-3 rad (the quasi-static sag and inertial bending do not decay). The decay is mostly
//!   the numerical dissipation of ρ∞ = 0 at ω h ≈ 0.25: with ρ∞ = 1 (same model, not run here)
//!   the vibration RMS only falls from 2.4e-3 to 1.8e-3 rad, with ρ∞ = 0.5 to 1.55e-3 rad.
//!
//! # What is asserted
//!
//! Besides stability, exact enforcement, Newton counts and the decay of the vibration:
//!
//! * the rod's deformation is the quasi-static bending of a pinned–pinned beam under the loads
//!   the run measures (gravity and the d'Alembert force of the rod's mean acceleration): after
//!   low-passing both histories the end-to-end rotation matches `−q l³/(12 E I)·(1 − 1/n²)` to
//!   5.1e-5 rad for values up to 7e-3 rad (bound 1.7e-4 rad from the neglected dynamic
//!   amplification, axial force and filtered vibration);
//! * `stiffer_rod_approaches_the_rigid_limit`: with E × 10 and × 1000 the same holds (so the
//!   deformation scales as 1/E, to 0.07 %), and the motion approaches that of a rigid rod with
//!   the beam's mass and inertia (`Rod::BeamLimit`): 10× stiffer is 5.5–10.7× closer, down to
//!   an O(h) floor of the stiff limit that halves with h. The rigid limit also shows that the
//!   flexible run's later spin stop (+12 ms against the 0.3 kg rigid rod) is the lighter rod's
//!   doing: the 0.2667 kg rigid rod stops within ~1 ms of the flexible one (printed).
//!
//! # Solver note (rigid reference)
//!
//! With rolling resistance the rigid model — `tests/roller_crank.rs` with
//! `.resistance(0.01, 0.0)` added to the contact, nothing else changed — fails:
//! `NonConvergence { step: 511, t: 0.511, level: Velocity, iterations: 50, residual: 2.776e-3 }`
//! at the outer dead point (crank and rod aligned), where the sliding roller with locked spin
//! reverses. The same with `line_search: false` or `tol: 1e-5`, and with ρ = 0.005 m (step 502)
//! or `characteristic_mass: Some(0.1)`; it runs through with ρ = 0.004, 0.006 or 0.02 m or with
//! `characteristic_mass` 0.3–1 kg (default: the mean body mass, 0.173 kg). The rigid reference
//! therefore runs with `adaptive` (that one step retried as two half steps); the flexible model
//! runs without it and needs no halving.

mod roller_crank_model;

use roller_crank_model::{roller_crank_model, Rod, AREA, E, INERTIA, LC, LR, MU, N_EL, R, RHO};
use saltus::prelude::*;
use std::f64::consts::PI;

/// Rolling-resistance length \[m\] (V06).
const ROLLING: f64 = 0.01;
const G: f64 = 9.8;
const H: f64 = 1e-3;
const T_END: f64 = 2.0;

/// Recorded histories of one run.
struct Run {
    time: Vec<f64>,
    /// Roller spin ω_z \[rad/s\].
    omega: Vec<f64>,
    /// Roller centre velocity v_x \[m/s\].
    vx: Vec<f64>,
    /// Crank angular velocity \[rad/s\].
    crank: Vec<f64>,
    /// Crank angle \[rad\] (continuous, from π/2 at t = 0).
    crank_angle: Vec<f64>,
    /// Roller centre x \[m\].
    x: Vec<f64>,
    /// Contact gap \[m\].
    gap: Vec<f64>,
    /// Normal contact impulse of the step [N s].
    normal_impulse: Vec<f64>,
    /// End-to-end rotation difference of the rod's end nodes about z \[rad\] (flexible only).
    deformation: Vec<f64>,
    /// Its quasi-static estimate under the measured loads \[rad\] (flexible only; see
    /// [`quasi_static_deformation`]).
    quasi_static: Vec<f64>,
    /// Largest axial force in the rod at the crank pin \[N\].
    axial_force: f64,
    worst_joint: f64,
    summary: RunSummary,
    wall: f64,
}

/// The roller–crank with a rigid or flexible rod; `adaptive` allows step halving.
fn simulate(rod: Rod, adaptive: bool) -> Run {
    simulate_to(rod, adaptive, T_END, H)
}

/// As [`simulate`], to `t_end` with step `h`.
fn simulate_to(rod: Rod, adaptive: bool, t_end: f64, h: f64) -> Run {
    let mut model = roller_crank_model(rod, ROLLING);
    let id = |name: &str| model.node_id(name).unwrap();
    let (crank, roller) = (id("crank"), id("roller"));
    let (rod_a, rod_b) = match rod {
        Rod::Rigid | Rod::BeamLimit => (id("rod"), id("rod")),
        Rod::Flexible | Rod::Stiffened(_) => (id("rod_a"), id("rod_b")),
    };
    let stiffness = match rod {
        Rod::Stiffened(f) => f,
        _ => 1.0,
    };
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf: 0.0,
        tol: 1e-8,
        gravity: Vector3::new(0.0, -G, 0.0),
        adaptive,
        // Full Newton: the iteration counts asserted below are those of Newton's method (the
        // thesis' solver); the default modified Newton is checked in tests/slider_crank.rs,
        // tests/beam_modes.rs and tests/custom_scheme.rs.
        jacobian_reuse: None,
        ..NsgaOptions::default()
    };
    let start = std::time::Instant::now();
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver
        .run(&mut model, &mut sink, &mut |_| {})
        .unwrap_or_else(|e| panic!("{rod:?} rod: {e:?}"));
    let wall = start.elapsed().as_secs_f64();

    let gap = sink
        .channel("ground_contact", "gap")
        .unwrap()
        .iter()
        .map(|g| g[0])
        .collect();
    let normal_impulse = sink
        .channel("ground_contact", "impulse")
        .unwrap()
        .iter()
        .map(|g| g[0])
        .collect();
    let mut worst_joint: f64 = 0.0;
    for j in ["bearing", "crank_pin", "wrist_pin"] {
        for v in sink.channel(j, "violation").unwrap() {
            worst_joint = worst_joint.max(v[0]).max(v[1]);
        }
    }
    let node = |id: NodeId, f: &dyn Fn(&NodeState) -> f64| -> Vec<f64> {
        sink.nodes.iter().map(|s| f(&s[id.index()])).collect()
    };
    // Both end nodes start with the identity rotation: their relative rotation is the rod's
    // end-to-end angular deformation (about z for the planar motion).
    let deformation = sink
        .nodes
        .iter()
        .map(|s| {
            (s[rod_a.index()].r.inverse() * s[rod_b.index()].r)
                .scaled_axis()
                .z
        })
        .collect();
    let pivot = Vector3::new(0.0, R, 0.0);
    let mut crank_angle: Vec<f64> = node(crank, &|s| {
        let c = s.x - pivot;
        c.y.atan2(c.x)
    });
    for k in 1..crank_angle.len() {
        let jump = crank_angle[k] - crank_angle[k - 1];
        crank_angle[k] -= 2.0 * PI * (jump / (2.0 * PI)).round();
    }
    let quasi_static = match rod {
        Rod::Rigid | Rod::BeamLimit => vec![0.0; sink.time.len()],
        _ => quasi_static_deformation(&sink, rod_a, rod_b, stiffness),
    };
    // Axial force at the crank-pin end of the rod: the joint's reaction on the rod along its
    // chord (the wrist-pin end is a rigid-body node for the rigid rods, so use the pin).
    let axial_force = sink
        .channel("crank_pin", "force")
        .unwrap()
        .iter()
        .zip(&sink.nodes)
        .map(|(f, s)| {
            let chord = match rod {
                Rod::Rigid | Rod::BeamLimit => s[roller.index()].x - s[rod_a.index()].x,
                _ => s[rod_b.index()].x - s[rod_a.index()].x,
            };
            Vector3::new(f[0], f[1], f[2]).dot(&chord.normalize()).abs()
        })
        .fold(0.0, f64::max);
    Run {
        time: sink.time.clone(),
        omega: node(roller, &|s| s.omega.z),
        vx: node(roller, &|s| s.v.x),
        crank: node(crank, &|s| s.omega.z),
        crank_angle,
        x: node(roller, &|s| s.x.x),
        quasi_static,
        axial_force,
        gap,
        normal_impulse,
        deformation,
        worst_joint,
        summary,
        wall,
    }
}

/// Quasi-static end-to-end rotation difference `θ_b − θ_a` \[rad\] of the rod (E scaled by
/// `stiffness`) under the loads it carries at each record: a beam pinned at both ends (the
/// revolute joints transmit no moment) under the distributed load `q = ρ A (g − a)·n` (gravity
/// and d'Alembert force, `n = z × e` the transverse direction, `e` along the chord from the
/// crank pin `a` to the wrist `b`). The rod's acceleration field is linear along it (rigid
/// motion), so its mean part `a_c = (a_a + a_b)/2` bends it symmetrically and the linear part
/// (angular acceleration) antisymmetrically — which rotates both ends equally and leaves
/// `θ_b − θ_a` unchanged. Uniform load `q`: `θ_b − θ_a = −q l³/(12 E I)`. The end accelerations
/// are central differences of the recorded end velocities (so any velocity jump is included).
///
/// Discretization: for `n` one-point-integrated elements (shear constraint
/// `(w₂ − w₁)/h_e = (θ₁ + θ₂)/2`) under a uniform load the end-rotation difference of the
/// pinned beam is exactly `(1 − 1/n²)` times the continuum value, whatever the shear stiffness
/// (direct solution of the linear element chain: the nodal rotations are the slopes minus
/// `(h_e²/12) w‴`); the factor is applied here.
fn quasi_static_deformation(sink: &MemorySink, a: NodeId, b: NodeId, stiffness: f64) -> Vec<f64> {
    let g = Vector3::new(0.0, -G, 0.0);
    let n_el = N_EL as f64;
    let compliance =
        RHO * AREA * LR.powi(3) / (12.0 * stiffness * E * INERTIA) * (1.0 - 1.0 / (n_el * n_el));
    let nodes = &sink.nodes;
    let last = nodes.len() - 1;
    (0..nodes.len())
        .map(|k| {
            // One-sided at the first and last record.
            let (i0, i1) = (k.saturating_sub(1), (k + 1).min(last));
            let dt = sink.time[i1] - sink.time[i0];
            let (sa, sb) = (&nodes[k][a.index()], &nodes[k][b.index()]);
            let acc = |id: NodeId| (nodes[i1][id.index()].v - nodes[i0][id.index()].v) / dt;
            let a_c = 0.5 * (acc(a) + acc(b));
            let n = Vector3::z().cross(&(sb.x - sa.x).normalize());
            -compliance * (g - a_c).dot(&n)
        })
        .collect()
}

/// Largest absolute difference of two histories on their common records.
fn max_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Largest absolute value.
fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Triangular (twice applied centred moving average over `2 w + 1` samples) low-pass filter:
/// transfer function `sinc²`, so a vibration with ≥ 1.8 periods in the `2 w + 1` samples is
/// attenuated to ≤ 1.3 % while slow trends pass.
fn smooth(v: &[f64], w: usize) -> Vec<f64> {
    let pass = |v: &[f64]| -> Vec<f64> {
        (0..v.len())
            .map(|i| {
                let (a, b) = (i.saturating_sub(w), (i + w + 1).min(v.len()));
                mean(&v[a..b])
            })
            .collect()
    };
    pass(&pass(v))
}

/// Deformation against its quasi-static estimate after [`smooth`] (51 ms windows ≈ 2 periods
/// of the rod's first bending mode at the V06 stiffness), skipping the first and last 50 ms
/// (truncated windows; the rod starts straight, i.e. 0 against a static value). Returns, on
/// the remaining records, (worst difference, largest filtered estimate, largest vibration =
/// deformation minus its filtered history).
fn quasi_static_agreement(r: &Run) -> (f64, f64, f64) {
    let w = 25;
    let (d, q) = (smooth(&r.deformation, w), smooth(&r.quasi_static, w));
    let inner = 2 * w..d.len() - 2 * w;
    let vibration: Vec<f64> = r.deformation[inner.clone()]
        .iter()
        .zip(&d[inner.clone()])
        .map(|(x, y)| x - y)
        .collect();
    (
        max_difference(&d[inner.clone()], &q[inner.clone()]),
        max_abs(&q[inner]),
        max_abs(&vibration),
    )
}

/// Bound on [`quasi_static_agreement`]'s worst difference for a run with E scaled by
/// `stiffness`, from what the quasi-static estimate neglects (relative to the estimate):
///
/// * dynamic amplification of a load varying at the crank speed Ω: `(Ω/ω₁)²`, ω₁ the
///   pinned–pinned first bending frequency `(π/l)² √(E I/(ρ A))` (245 rad/s for V06);
/// * the axial force N (P–δ): `|N|/N_cr`, `N_cr = π² E I/l²` (485 N for V06);
/// * the load's time discretization: central differences of the recorded velocities are
///   O(h²) accurate, 1e-3 (a misalignment by one step would cost ~7e-3);
///
/// plus the vibration the filter lets through: ≤ 1.3 % of its amplitude for a first bending
/// mode of 38–45 Hz in 51 ms windows (and less for the faster modes of stiffer rods), 1.5 %.
fn quasi_static_tolerance(r: &Run, stiffness: f64, scale: f64, vibration: f64) -> f64 {
    let ei = stiffness * E * INERTIA;
    let omega1 = (PI / LR).powi(2) * (ei / (RHO * AREA)).sqrt();
    let crank_speed = max_abs(&r.crank);
    let buckling = PI * PI * ei / (LR * LR);
    let relative = (crank_speed / omega1).powi(2) + r.axial_force / buckling + 1e-3;
    relative * scale + 0.015 * vibration
}

impl Run {
    /// Index of the record at time `t` (within 1e-9 s), if any.
    fn at(&self, t: f64) -> Option<usize> {
        let k = self.time.partition_point(|s| *s < t - 1e-9);
        (k < self.time.len() && (self.time[k] - t).abs() < 1e-9).then_some(k)
    }

    /// Roller angular acceleration [rad/s²] on the uniform grid `k h`, k = 1..=n, as the
    /// backward difference of the recorded spin (it includes the contact impulses, which the
    /// smooth acceleration `omegadot` of the NSGA split does not).
    fn alpha(&self, n: usize) -> Vec<f64> {
        (1..=n)
            .map(|k| {
                let i = self.at(k as f64 * H).expect("record on the grid");
                (self.omega[i] - self.omega[i - 1]) / (self.time[i] - self.time[i - 1])
            })
            .collect()
    }

    /// First time the roller's spin has stopped (|ω| < 1e-6 rad/s).
    fn spin_stop(&self) -> f64 {
        let k = self.omega.iter().position(|w| w.abs() < 1e-6).unwrap();
        self.time[k]
    }

    /// Times where `y` changes sign from `+` to `−` or back (linear interpolation).
    fn sign_changes(&self, y: &[f64]) -> Vec<f64> {
        (1..y.len())
            .filter(|&i| y[i - 1] * y[i] < 0.0)
            .map(|i| {
                let (t0, t1) = (self.time[i - 1], self.time[i]);
                t0 + (t1 - t0) * y[i - 1] / (y[i - 1] - y[i])
            })
            .collect()
    }

    /// Lift-off intervals (gap above 1e-9 m): (start, end, max gap).
    fn flights(&self) -> Vec<(f64, f64, f64)> {
        let mut out = Vec::new();
        let mut cur: Option<(f64, f64)> = None;
        for (t, g) in self.time.iter().zip(&self.gap) {
            match (&mut cur, *g > 1e-9) {
                (None, true) => cur = Some((*t, *g)),
                (Some(c), true) => c.1 = c.1.max(*g),
                (Some(c), false) => {
                    out.push((c.0, *t, c.1));
                    cur = None;
                }
                (None, false) => {}
            }
        }
        if let Some(c) = cur {
            out.push((c.0, *self.time.last().unwrap(), c.1));
        }
        out
    }
}

fn rms(v: &[f64]) -> f64 {
    (v.iter().map(|x| x * x).sum::<f64>() / v.len().max(1) as f64).sqrt()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// `v` minus its centred moving average over `2 w + 1` samples (truncated at the ends): the
/// oscillatory content above ≈ 1/((2w + 1) h).
fn fluctuation(v: &[f64], w: usize) -> Vec<f64> {
    (0..v.len())
        .map(|i| {
            let (a, b) = (i.saturating_sub(w), (i + w + 1).min(v.len()));
            v[i] - mean(&v[a..b])
        })
        .collect()
}

#[test]
fn flexible_roller_crank_against_rigid() {
    let rigid = simulate(Rod::Rigid, true);
    let flex = simulate(Rod::Flexible, false);

    // --- Stability and exact enforcement ----------------------------------------------
    for (name, r) in [("rigid", &rigid), ("flexible", &flex)] {
        let min_gap = r.gap.iter().cloned().fold(f64::INFINITY, f64::min);
        let max_gap = r.gap.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let min_n = (1..r.time.len())
            .map(|i| r.normal_impulse[i] / (r.time[i] - r.time[i - 1]))
            .fold(f64::INFINITY, f64::min);
        println!(
            "{name:>8}: {} steps to t = {:.3} s in {:.2} s wall ({} halvings); min gap {min_gap:.2e} m, \
             max gap {max_gap:.2e} m, min normal force {min_n:.3} N, worst joint violation \
             {:.2e}; Newton iterations max {:?} mean {:.3?}, backtracks {:?}",
            r.summary.steps,
            r.summary.t,
            r.wall,
            r.summary.halvings,
            r.worst_joint,
            r.summary.max_iterations(),
            r.summary.mean_iterations(),
            r.summary.backtracks(),
        );
        assert!(
            (r.summary.t - T_END).abs() < 1e-9,
            "{name}: {:?}",
            r.summary
        );
        assert!(min_gap >= -1e-10, "{name}: penetration {min_gap:e}");
        assert!(r.worst_joint <= 1e-10, "{name}: joints {:e}", r.worst_joint);
        assert!(r.omega.iter().all(|w| w.is_finite()));
    }
    // Newton iterations per step (smooth, position, velocity) against the thesis (V06): at most
    // its maxima, and means that round to at most its means (it prints them as integers).
    // One exception: the flexible run's velocity maximum is 3, not the thesis' 1. Those
    // 3-iteration velocity problems are the reversals of the roller's sliding direction
    // (flexible run: t = 0.775, 1.082, 1.395, 1.530, 1.675 s, the instants where the roller's
    // v_x changes sign), the same events that take 3 in the rigid run, for which the thesis
    // itself reports a maximum of 3.
    let thesis = [
        ("rigid", &rigid, [1, 3, 3], [1.0, 2.0, 2.0]),
        ("flexible", &flex, [2, 3, 3], [2.0, 2.0, 1.0]),
    ];
    for (name, r, max_bound, mean_bound) in thesis {
        let (max, mean) = (r.summary.max_iterations(), r.summary.mean_iterations());
        for k in 0..3 {
            assert!(
                max[k] <= max_bound[k],
                "{name}: max {max:?} vs {max_bound:?}"
            );
            assert!(
                mean[k].round() <= mean_bound[k],
                "{name}: mean {mean:?} vs {mean_bound:?}"
            );
        }
    }
    // The flexible run needed no step halving (it ran without `adaptive`).
    assert_eq!(flex.summary.halvings, 0);

    // --- Bounces -----------------------------------------------------------------------
    for (name, r) in [("rigid", &rigid), ("flexible", &flex)] {
        let f = r.flights();
        println!(
            "{name:>8}: {} lift-off(s) (gap > 1e-9 m){}",
            f.len(),
            f.iter()
                .map(|(a, b, g)| format!(" [{a:.3}–{b:.3} s, max {g:.2e} m]"))
                .collect::<String>()
        );
    }

    // --- Roller angular acceleration ------------------------------------------------------
    let (stop_r, stop_f) = (rigid.spin_stop(), flex.spin_stop());
    println!(
        "roller spin stopped by rolling resistance (ρ = {ROLLING} m > μ r = {:.3} m) at {stop_r:.3} s \
         (rigid), {stop_f:.3} s (flexible): delay {:+.1} ms; locked afterwards (max |ω| after: \
         {:.1e}, {:.1e} rad/s)",
        MU * R,
        1e3 * (stop_f - stop_r),
        rigid.omega[rigid.at(stop_r).unwrap()..]
            .iter()
            .fold(0.0f64, |m, w| m.max(w.abs())),
        flex.omega[flex.at(stop_f).unwrap()..]
            .iter()
            .fold(0.0f64, |m, w| m.max(w.abs())),
    );
    // Window where the roller still spins in both models.
    let n = ((stop_r.min(stop_f) - 0.005) / H) as usize;
    let (ar, af) = (rigid.alpha(n), flex.alpha(n));
    let diff: Vec<f64> = ar.iter().zip(&af).map(|(a, b)| b - a).collect();
    // Oscillatory content: minus a 25 ms centred moving average; trend: the moving average.
    let (fr, ff) = (fluctuation(&ar, 12), fluctuation(&af, 12));
    let trend_diff: Vec<f64> = (0..n).map(|k| (af[k] - ff[k]) - (ar[k] - fr[k])).collect();
    println!(
        "roller angular acceleration (backward difference of ω) on 0–{:.3} s: RMS rigid {:.2}, \
         flexible {:.2} rad/s²; RMS of the difference {:.2} rad/s² (of the 25 ms trends {:.2}); \
         oscillatory content (minus the 25 ms moving average) rigid {:.3}, flexible {:.3} rad/s²",
        n as f64 * H,
        rms(&ar),
        rms(&af),
        rms(&diff),
        rms(&trend_diff),
        rms(&fr),
        rms(&ff),
    );
    println!("  window      rigid mean [min, max]          flexible mean [min, max]   (rad/s²)");
    let mut k0 = 0;
    while k0 < n {
        let k1 = (k0 + 50).min(n);
        let stats = |a: &[f64]| {
            let s = &a[k0..k1];
            let (lo, hi) = s
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                    (l.min(*v), h.max(*v))
                });
            format!("{:+7.2} [{:+7.2}, {:+7.2}]", mean(s), lo, hi)
        };
        println!(
            "  {:.3}–{:.3} s: {}   {}",
            k0 as f64 * H,
            k1 as f64 * H,
            stats(&ar),
            stats(&af)
        );
        k0 = k1;
    }
    // Features of the mechanism's motion: roller slip reversals and crank reversals.
    for (name, r) in [("rigid", &rigid), ("flexible", &flex)] {
        let vx: Vec<_> = r
            .sign_changes(&r.vx)
            .iter()
            .map(|t| format!("{t:.3}"))
            .collect();
        let cr: Vec<_> = r
            .sign_changes(&r.crank)
            .iter()
            .map(|t| format!("{t:.3}"))
            .collect();
        println!("{name:>8}: roller v_x sign changes at {vx:?} s; crank reversals at {cr:?} s");
    }

    // --- Rod angular deformation ------------------------------------------------------------
    let sag = RHO * AREA * G * LR.powi(3) * (1.0 - (LC / LR).powi(2)).sqrt() / (12.0 * E * INERTIA);
    let q = flex.time.len() / 4;
    let d = &flex.deformation;
    // Vibration about the quasi-static shape: minus a centred moving average over 51 ms ≈ 2
    // periods of the first bending mode (≈ 40 Hz).
    let vib = fluctuation(d, 25);
    let quarters: Vec<(f64, f64, f64)> = (0..4)
        .map(|i| {
            let s = &d[i * q..(i + 1) * q];
            (mean(s), rms(s), rms(&vib[i * q..(i + 1) * q]))
        })
        .collect();
    println!(
        "rod end-to-end rotation difference: static gravity sag w l³ cos φ/(12 E I) = {sag:.3e} rad; \
         max |Δθ| {:.3e} rad",
        d.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    );
    for (i, (m, r, v)) in quarters.iter().enumerate() {
        println!(
            "  quarter {} ({:.1}–{:.1} s): mean {m:+.3e}, RMS {r:.3e}, vibration RMS {v:.3e} rad",
            i + 1,
            i as f64 * 0.5,
            (i + 1) as f64 * 0.5
        );
    }
    let zc = flex.sign_changes(&vib[..200]);
    if zc.len() > 2 {
        println!(
            "  vibration frequency over 0–0.2 s: {:.1} Hz (pinned–pinned first bending {:.1} Hz)",
            (zc.len() - 1) as f64 / (2.0 * (zc[zc.len() - 1] - zc[0])),
            PI / (2.0 * LR * LR) * (E * INERTIA / (RHO * AREA)).sqrt()
        );
    }
    // The vibration excited by releasing the straight rod into gravity decays: last-quarter
    // RMS well below the first-quarter one (measured ≈ 1/20). With ρ∞ = 0 this is mostly the
    // integrator's numerical dissipation at ω h ≈ 0.25 (with ρ∞ = 1 the ratio is only ≈ 0.75,
    // module docs), so it checks the V06 setting, not the physical friction damping. The
    // total RMS contains the quasi-static bending (sag, inertia), which does not decay.
    assert!(
        quarters[3].2 < 0.5 * quarters[0].2,
        "vibration does not decay: {quarters:?}"
    );

    // --- Rod deformation against the quasi-static beam under the measured loads -------------
    let (miss, scale, vib) = quasi_static_agreement(&flex);
    println!(
        "rod deformation vs quasi-static pinned beam under the measured loads (both low-passed): \
         worst difference {miss:.2e} rad, largest estimate {scale:.2e} rad, largest vibration \
         {vib:.2e} rad; largest axial force {:.2} N (buckling load {:.0} N)",
        flex.axial_force,
        PI * PI * E * INERTIA / (LR * LR)
    );
    // What the estimate neglects (`quasi_static_tolerance`): here (13.6/245)² = 0.3 %
    // dynamic amplification, 5.8 N/485 N = 1.2 % axial force, 0.1 % load discretization, and
    // 1.5 % of the filtered vibration.
    let tolerance = quasi_static_tolerance(&flex, 1.0, scale, vib);
    println!("  bound {tolerance:.2e} rad");
    assert!(
        miss <= tolerance,
        "deformation {miss:e} off its quasi-static estimate by more than {tolerance:e}"
    );
}

/// Rigid limit of V06: the rod's stiffness scaled by 10 and 1000 on the first 0.4 s (the
/// roller's spin has not yet stopped), against one rigid body with the beam's mass and
/// inertia (`Rod::BeamLimit`).
///
/// * Deformation: for each stiffness the low-passed end-to-end rotation equals the
///   quasi-static estimate under the measured loads (as in the V06 test), so it scales as 1/E.
/// * Motion: the differences to the rigid limit (crank angle and speed, roller position and
///   spin) consist of an elastic part ∝ 1/E and an E-independent part: the straight rod's
///   initial accelerations are not those of the rigid rod, and a bending mode with ω h ≫ 1
///   (E × 1000: ω h ≈ 8) passes that initial layer to the mechanism over a time step instead
///   of over its own period — a discretization error of the stiff limit, O(h), which the
///   E × 1000 run measures (`d∞`). Checked: 10× stiffer is at least 4× closer, and no farther
///   than the elastic part scaled by 1/10 plus `d∞`; `d∞` shrinks when h is halved.
#[test]
fn stiffer_rod_approaches_the_rigid_limit() {
    let t_end = 0.4;
    let limit = simulate_to(Rod::BeamLimit, false, t_end, H);
    let runs: Vec<(f64, Run)> = [1.0, 10.0, 1000.0]
        .into_iter()
        .map(|f| (f, simulate_to(Rod::Stiffened(f), false, t_end, H)))
        .collect();
    // Crank angle, crank speed, roller x, roller spin.
    let names = [
        "crank angle [rad]",
        "crank speed [rad/s]",
        "roller x [m]",
        "roller spin [rad/s]",
    ];
    let difference = |r: &Run, q: &Run| -> [f64; 4] {
        assert_eq!(r.time.len(), q.time.len());
        [
            max_difference(&r.crank_angle, &q.crank_angle),
            max_difference(&r.crank, &q.crank),
            max_difference(&r.x, &q.x),
            max_difference(&r.omega, &q.omega),
        ]
    };
    let mut d = Vec::new();
    for (f, r) in &runs {
        let (miss, scale, vib) = quasi_static_agreement(r);
        let dk = difference(r, &limit);
        println!(
            "E × {f}: deformation max {:.3e} rad, vs its quasi-static estimate {miss:.2e} \
             (bound {:.2e}; scale {scale:.2e}, vibration {vib:.2e}, axial force {:.2} N); \
             difference to the rigid limit: {}; Newton max {:?}",
            max_abs(&r.deformation),
            quasi_static_tolerance(r, *f, scale, vib),
            r.axial_force,
            names
                .iter()
                .zip(&dk)
                .map(|(n, v)| format!("{n} {v:.2e}"))
                .collect::<Vec<_>>()
                .join(", "),
            r.summary.max_iterations()
        );
        // What the estimate neglects, as in the V06 test (`quasi_static_tolerance`).
        let tolerance = quasi_static_tolerance(r, *f, scale, vib);
        assert!(miss <= tolerance, "E × {f}: {miss:e} > {tolerance:e}");
        d.push(dk);
    }
    // The floor d∞ at h/2.
    let limit_half = simulate_to(Rod::BeamLimit, false, t_end, 0.5 * H);
    let stiff_half = simulate_to(Rod::Stiffened(1000.0), false, t_end, 0.5 * H);
    let floor_half = difference(&stiff_half, &limit_half);
    println!(
        "E × 1000 at h/2: difference to the rigid limit {}",
        floor_half
            .iter()
            .map(|v| format!("{v:.2e}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "roller spin stop: rigid limit (rod {:.4} kg) {:.3} s, flexible (E × 1) {:.3} s",
        roller_crank_model::beam_rod_mass(),
        limit.spin_stop(),
        runs[0].1.spin_stop()
    );
    for k in 0..4 {
        let (d1, d10, floor) = (d[0][k], d[1][k], d[2][k]);
        // 10× stiffer: the elastic part (≤ d1 + d∞) shrinks by 10, the floor stays.
        assert!(
            d10 <= 0.1 * (d1 + floor) + floor,
            "{}: {d10:e} vs {d1:e}, floor {floor:e}",
            names[k]
        );
        // … and the rod really approaches the rigid limit (measured 5.5–10.6×; 10 for a
        // purely elastic difference).
        assert!(d10 < d1 / 4.0, "{}: {d10:e} vs {d1:e}", names[k]);
        // The floor is a discretization error: first order or better in h (2 expected for
        // O(h); 1.5 allows the elastic part of E × 1000, ≤ 1e-3 of d1, and the nonsmooth
        // start).
        assert!(
            floor_half[k] < floor / 1.5,
            "{}: floor {floor:e} at h, {:e} at h/2",
            names[k],
            floor_half[k]
        );
    }
}
