//! Thesis Annex A sphere–plane examples (spec `validation-cases.md` V01–V04, V07) with the
//! thesis data: sphere r = 0.5 m, M = 1309 kg, I = 131 kg m², g = 9.8 m/s², Y vertical, floor
//! y = 0 with normal +Y, sphere resting on it, ρ∞ = 0.8, Newton tolerance 10⁻⁵ (the spec's
//! reading of the thesis value).
//!
//! Structure of the discrete solutions used by the tolerances below: the sphere has an
//! isotropic inertia, so the smooth subproblem is linear (gyroscopic term zero) and the smooth
//! rotation and horizontal translation see no force; friction and the resistance couples act
//! only as impulses of the velocity jump. Hence (a) while a status is fixed and the slip and
//! rotation directions do not turn (V01–V04, V07's rolling phase) the impulses per step are
//! exactly μΛ_N, ρΛ_N, γ_sΛ_N with Λ_N = M g h, so velocities at the grid points are the exact
//! piecewise-linear ones; (b) in the step where a status changes (slip → roll,
//! rotation → stop) the scheme picks the impulse that reaches the new state at the end of the
//! step, which for these linear impulse–momentum relations is the exact grid value too; (c)
//! a rotation driven only by a resistance couple (V02, V03: no friction, so no position-level
//! tangential correction) follows `Δθ = h ω_n` (left rectangles), an O(h) error
//! `ω₀h/2 + O(h²)`; (d) events are read on the output grid, i.e. at the first step end at or
//! after the exact instant.

use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::prelude::*;

const G: f64 = 9.8;
/// Sphere radius \[m\], mass \[kg\], central inertia \[kg m²\] (thesis values; ⅖Mr² = 130.9).
const R: f64 = 0.5;
const M: f64 = 1309.0;
const J: f64 = 131.0;
/// Thesis Newton tolerance (spec: "1075" → 10⁻⁵, the only readable value).
const TOL: f64 = 1e-5;
/// Time-grid round-off (t accumulates `t += h`).
const EPS_T: f64 = 1e-9;

/// Floor and optional wall contact data of one run.
#[derive(Clone, Copy)]
struct Setup {
    v0: Vector3<f64>,
    /// Initial spatial angular velocity \[rad/s\].
    w0: Vector3<f64>,
    mu: f64,
    rho: f64,
    gamma_s: f64,
    /// Wall at X = 1 m (normal −X, e_N = e_T = 1) with this friction coefficient.
    wall_mu: Option<f64>,
    h: f64,
    t_end: f64,
}

impl Setup {
    fn new(h: f64, t_end: f64) -> Self {
        Self {
            v0: Vector3::zeros(),
            w0: Vector3::zeros(),
            mu: 0.0,
            rho: 0.0,
            gamma_s: 0.0,
            wall_mu: None,
            h,
            t_end,
        }
    }
}

struct Sim {
    sink: MemorySink,
    summary: RunSummary,
    h: f64,
    wall: bool,
}

impl Sim {
    fn run(c: Setup) -> Sim {
        let mut model = Model::new();
        let b = model
            .add_node(
                NodeDef::frame("sphere", Vector3::new(0.0, R, 0.0))
                    .velocity(c.v0)
                    .angular_velocity(c.w0),
            )
            .unwrap();
        model
            .add_element(
                "sphere",
                RigidBody::principal(b, M, Vector3::new(J, J, J)).unwrap(),
            )
            .unwrap();
        let floor = PlaneContact::sphere(b, R, Vector3::zeros(), Vector3::y())
            .unwrap()
            .friction(c.mu)
            .resistance(c.rho, c.gamma_s);
        model.add_element("floor", floor).unwrap();
        if let Some(mu_w) = c.wall_mu {
            let wall = PlaneContact::sphere(b, R, Vector3::new(1.0, 0.0, 0.0), -Vector3::x())
                .unwrap()
                .friction(mu_w)
                .restitution(1.0, 1.0);
            model.add_element("wall", wall).unwrap();
        }
        let opts = NsgaOptions {
            h: c.h,
            t_end: c.t_end,
            rho_inf: 0.8,
            tol: TOL,
            gravity: Vector3::new(0.0, -G, 0.0),
            ..Default::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let mut sink = MemorySink::default();
        let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
        Sim {
            sink,
            summary,
            h: c.h,
            wall: c.wall_mu.is_some(),
        }
    }

    fn len(&self) -> usize {
        self.sink.time.len()
    }
    fn t(&self, k: usize) -> f64 {
        self.sink.time[k]
    }
    fn node(&self, k: usize) -> NodeState {
        self.sink.nodes[k][0]
    }
    fn v(&self, k: usize) -> Vector3<f64> {
        self.node(k).v
    }
    /// Spatial angular velocity.
    fn w(&self, k: usize) -> Vector3<f64> {
        self.node(k).omega_spatial()
    }
    /// Rotation vector of the sphere (log of its rotation).
    fn theta(&self, k: usize) -> Vector3<f64> {
        self.node(k).r.scaled_axis()
    }
    fn channel(&self, element: &str, output: &str) -> Vec<Vec<f64>> {
        self.sink.channel(element, output).unwrap()
    }
    /// Floor slip speed `|v + ω × (−r e_Y)|` from the element output.
    fn slip(&self) -> Vec<f64> {
        self.channel("floor", "slip_velocity")
            .iter()
            .map(|s| s[0].hypot(s[1]))
            .collect()
    }
    fn first(&self, from: usize, pred: impl Fn(usize) -> bool) -> Option<usize> {
        (from..self.len()).find(|&k| pred(k))
    }
    /// First record at rest (translation and rotation).
    fn stop(&self) -> Option<usize> {
        self.first(0, |k| self.v(k).norm() < 1e-8 && self.w(k).norm() < 1e-8)
    }
    fn min_gap(&self) -> f64 {
        let mut names = vec!["floor"];
        if self.wall {
            names.push("wall");
        }
        names
            .iter()
            .flat_map(|e| self.channel(e, "gap"))
            .map(|g| g[0])
            .fold(f64::INFINITY, f64::min)
    }

    /// Common checks: no penetration and Newton iteration counts, printed next to the thesis'.
    fn check_common(&self, name: &str, thesis: Option<([usize; 3], [usize; 3])>) {
        let s = &self.summary;
        let mean = s.mean_iterations();
        let min_gap = self.min_gap();
        eprintln!(
            "{name}: h = {} s, {} steps, wall-clock {:?}; Newton (smooth, position, velocity) max {:?} \
             mean [{:.3}, {:.3}, {:.3}] backtracks {:?}; thesis max/mean {:?}; min gap {min_gap:e} m",
            self.h, s.steps, s.wall, s.max_iterations(), mean[0], mean[1], mean[2], s.backtracks(), thesis
        );
        // No penetration: the position-level normal law is linear on its active set, so the
        // semi-smooth Newton iterate that has found the set closes g_N to round-off (the
        // tolerance 10⁻⁵ alone would only bound it by ~10⁻⁵ of the O(g h²) smooth drop;
        // measured ≥ −5e-14 m).
        assert!(min_gap >= -1e-10, "{name}: penetration {min_gap:e}");
        // Smooth subproblem: isotropic inertia and constant gravity make its solution the
        // constant acceleration g, which is where Newton starts (the last step's smooth
        // acceleration): converged at the start, no iteration.
        assert_eq!(s.max_iterations()[0], 0, "{name}: smooth iterations");
        // Nonsmooth subproblems: piecewise linear (semi-smooth Newton), one iteration while the
        // statuses are fixed and a few at a status change. Upper bound: the thesis' worst Annex A
        // count (7, V07); a mean above the thesis' worst mean (3, V07 velocity) would be a
        // regression.
        for l in 1..3 {
            assert!(
                s.max_iterations()[l] <= 7,
                "{name}: {:?}",
                s.max_iterations()
            );
            assert!(mean[l] <= 3.0, "{name}: {mean:?}");
        }
    }
}

/// V01 — sphere thrown sliding, v₀ = (1.5, 0, 1.5) m/s, μ = 0.25, h = 10⁻² s, T = 1 s.
#[test]
fn v01_sliding_then_rolling() {
    let h = 1e-2;
    let v0 = Vector3::new(1.5, 0.0, 1.5);
    let mu = 0.25;
    let sim = Sim::run(Setup {
        v0,
        mu,
        ..Setup::new(h, 1.0)
    });
    // Newton (smooth, position, velocity), tol 1e-5: measured max (1, 1, 2), mean (1, 1, 1.01);
    // thesis max (1, 2, 2), mean (1, 1, 1).
    sim.check_common("V01", Some(([1, 2, 2], [1, 1, 1])));
    let s0 = v0.norm();
    // Exact with I = 131: angular momentum about the contact point is conserved (friction and
    // normal force act at it, gravity's lever arm is vertical): M r v + I ω = M r v₀ with
    // v = rω ⇒ v_f = v₀ k/(1 + k), k = M r²/I; slip ends at t* = v₀/(μ g (1 + k)).
    let k = M * R * R / J;
    let t_star = s0 / (mu * G * (1.0 + k));
    let v_f = s0 * k / (1.0 + k);
    // Thesis formulas (I = ⅖ M r² = 130.9): 0.24738 s, 1.5152 m/s, 3.03 rad/s.
    let (t_thesis, v_thesis, w_thesis) = (
        2.0 * s0 / (7.0 * mu * G),
        5.0 * s0 / 7.0,
        5.0 * s0 / (7.0 * R),
    );
    let slip = sim.slip();
    let k_roll = sim.first(0, |k| slip[k] < 1e-8).expect("never rolls");
    let t_roll = sim.t(k_roll);
    let last = sim.len() - 1;
    let (v_end, w_end) = (sim.v(last).norm(), sim.w(last).norm());
    // Grid values against the exact piecewise solution (sliding: v = v₀(1 − μgt/|v₀|),
    // ω = μMgr t/I about (1, 0, −1)/√2; rolling afterwards, constant).
    let axis = Vector3::new(1.0, 0.0, -1.0).normalize();
    let mut err: f64 = 0.0;
    for k in 0..sim.len() {
        let t = sim.t(k).min(t_star);
        let v = v0 * (1.0 - mu * G * t / s0);
        let w = axis * (mu * M * G * R * t / J);
        err = err
            .max((sim.v(k) - v).norm())
            .max(R * (sim.w(k) - w).norm());
    }
    // Displacement and rotation at T (spec: compared quantities ‖u‖, ‖θ‖), reported only: with
    // friction the position correction also acts tangentially (incremental-slip gap), so the
    // simple left-rectangle bound (c) does not apply and no bound is derived here.
    let t_end = sim.t(last);
    let u_exact = s0 * t_star - 0.5 * mu * G * t_star * t_star + v_f * (t_end - t_star);
    let th_exact = 0.5 * mu * M * G * R / J * t_star * t_star + v_f / R * (t_end - t_star);
    let u = (sim.node(last).x - Vector3::new(0.0, R, 0.0)).norm();
    let th = sim.theta(last).norm();
    eprintln!(
        "V01: rolling from {t_roll:.4} s (exact I=131: {t_star:.5}, thesis {t_thesis:.5}); \
         |v| = {v_end:.6} (exact {v_f:.6}, thesis {v_thesis:.4}); |ω| = {w_end:.5} (exact {:.5}, \
         thesis {w_thesis:.4}); max grid error {err:.2e} m/s; |u(1)| = {u:.5} (exact {u_exact:.5}); \
         |θ(1)| = {th:.5} (exact {th_exact:.5})",
        v_f / R
    );
    // Event read at the first step end after t* (d).
    assert!(t_roll >= t_star - EPS_T && t_roll < t_star + h + EPS_T);
    // Thesis value: t* differs by 1.5e-4 s (I = 131 vs 130.9), still within one step.
    assert!((t_roll - t_thesis).abs() <= h);
    // (a), (b): grid values exact up to the Newton tolerance, 10⁻⁵ relative on O(1) velocities.
    assert!(err < 1e-4, "grid error {err}");
    assert!((v_end - v_f).abs() < 1e-4 && (w_end - v_f / R).abs() < 2e-4);
    // Thesis numbers (rounded, and with I = 130.9: |v| differs by 3.2e-4 m/s, |ω| by 6.4e-4).
    assert!((v_end - v_thesis).abs() < 5e-4 && (w_end - w_thesis).abs() < 1e-3);
    assert!((w_end - 3.03).abs() < 5e-3);
    // Rolling without slip until the end.
    assert!((k_roll..sim.len()).all(|k| slip[k] < 1e-8));
}

/// V02 — rotation about X only, ω₀ = 0.4 rad/s, μ = 0, ρ = 0.01 m, h = 10⁻² s.
#[test]
fn v02_rolling_resistance_stops_the_rotation() {
    let h = 1e-2;
    let (w0, rho) = (0.4, 0.01);
    let sim = Sim::run(Setup {
        w0: Vector3::new(w0, 0.0, 0.0),
        rho,
        ..Setup::new(h, 1.0)
    });
    // Newton: measured max (1, 1, 1), mean (1, 1, 1); thesis max (1, 1, 3), mean (1, 1, 1).
    sim.check_common("V02", Some(([1, 1, 3], [1, 1, 1])));
    let alpha = rho * M * G / J;
    let t_stop = w0 / alpha; // 0.40848 s
    let th_max = w0 * t_stop - 0.5 * alpha * t_stop * t_stop; // 0.08170 rad
                                                              // The formulas against the thesis' numbers (0.408 s, 0.0816 rad), to a unit of their last
                                                              // printed digit (it truncates: 0.0816 for 0.08170).
    assert!((t_stop - 0.408).abs() < 1e-3 && (th_max - 0.0816).abs() < 1e-4);
    resistance_checks("V02", &sim, 0, w0, alpha, t_stop, th_max);
    // Frictionless: the centre does not move (the vertical velocity g h ≈ 0.1 m/s gained in each
    // smooth step is cancelled by the linear normal law of the velocity jump to round-off,
    // measured ~1e-11 m/s).
    assert!((0..sim.len()).all(|k| sim.v(k).norm() < 1e-9));
}

/// V03 — spin about Y (vertical) only, ω₀ = 1 rad/s, γ_s = 0.0167 m, μ = ρ = 0, h = 10⁻² s.
#[test]
fn v03_spinning_resistance_stops_the_spin() {
    let h = 1e-2;
    let (w0, gamma) = (1.0, 0.0167);
    let sim = Sim::run(Setup {
        w0: Vector3::new(0.0, w0, 0.0),
        gamma_s: gamma,
        ..Setup::new(h, 1.0)
    });
    // Newton: measured max (1, 1, 1), mean (1, 1, 1); thesis max (1, 1, 2), mean (1, 1, 1).
    sim.check_common("V03", Some(([1, 1, 2], [1, 1, 1])));
    let alpha = gamma * M * G / J;
    let t_stop = w0 / alpha; // 0.61149 s
    let th_max = w0 * t_stop - 0.5 * alpha * t_stop * t_stop; // 0.30574 rad
                                                              // The formulas against the thesis' numbers: t_stop = 0.61149 s to its last digit; its
                                                              // θ_max = 0.3055 rad is 2.4e-4 below what its own formula gives (0.30574), so within 5e-4.
    assert!((t_stop - 0.61149).abs() < 1e-5 && (th_max - 0.3055).abs() < 5e-4);
    resistance_checks("V03", &sim, 1, w0, alpha, t_stop, th_max);
}

/// Uniform deceleration `α` of the rotation about axis `i` from `w0` to rest at `t_stop`.
fn resistance_checks(
    name: &str,
    sim: &Sim,
    i: usize,
    w0: f64,
    alpha: f64,
    t_stop: f64,
    th_max: f64,
) {
    let h = sim.h;
    let k_stop = sim.stop().expect("never stops");
    let t_num = sim.t(k_stop);
    let th = sim.theta(sim.len() - 1)[i];
    let mut err: f64 = 0.0;
    for k in 0..sim.len() {
        err = err.max((sim.w(k)[i] - (w0 - alpha * sim.t(k)).max(0.0)).abs());
    }
    // (c): θ_N = h Σ ω_k over the K = ⌈t_stop/h⌉ moving steps; with ε = K h − t_stop this is
    // θ_max + ω₀h/2 + αε(h − ε)/2 (left rectangles of a linear decay).
    let n = (t_stop / h).ceil();
    let th_disc = h * (n * w0 - alpha * h * n * (n - 1.0) / 2.0);
    eprintln!(
        "{name}: stop at {t_num:.4} s (analytic {t_stop:.5}); θ_max = {th:.5} rad (analytic \
         {th_max:.5}, discrete left-rectangle value {th_disc:.5}); max |ω − (ω₀ − αt)⁺| = {err:.2e}"
    );
    // (d): stop read at the first step end after t_stop.
    assert!(t_num >= t_stop - EPS_T && t_num < t_stop + h + EPS_T);
    // (a), (b): exact linear decay at the grid points, to the Newton tolerance.
    assert!(err < 1e-5 * w0.max(1.0), "{err}");
    // (c): the rotation is the left-rectangle sum (to the Newton tolerance), whose distance to
    // θ_max is ω₀h/2 + O(αh²).
    assert!((th - th_disc).abs() < 1e-6, "{th} vs {th_disc}");
    assert!((th - th_max).abs() <= 0.5 * w0 * h + 0.125 * alpha * h * h + 1e-6);
    // Stays at rest after the stop.
    assert!((k_stop..sim.len()).all(|k| sim.w(k).norm() < 1e-8));
}

/// Exact planar motion of V04: forward speed v and forward-rolling rate w (about −Z) of a sphere
/// with Coulomb friction μ and rolling resistance ρ (couple ρMg opposing w while w > 0, static
/// up to ρMg when w = 0), from a state with v − r w ≥ 0 (as in all three cases).
fn v04_exact(v0: f64, w0: f64, mu: f64, rho: f64, t: f64) -> (f64, f64) {
    // Rolling deceleration: M v̇ = −F, I ẇ = F r − ρMg, v̇ = r ẇ ⇒ a = ρMg/(r(M + I/r²)).
    let a = rho * M * G / (R * (M + J / (R * R)));
    let f_roll = M * a; // friction needed to keep rolling
    let wdot_slide = (mu * M * G * R - rho * M * G) / J; // while sliding forward, w > 0
    if (v0 - R * w0).abs() < 1e-12 && f_roll <= mu * M * G {
        // Case I: rolls all along.
        let v = (v0 - a * t).max(0.0);
        return (v, v / R);
    }
    // Sliding forward: v̇ = −μg, ẇ = wdot_slide, until slip closes (t_s) or w reaches 0 (t_w).
    let slip_rate = -mu * G - R * wdot_slide;
    let t_s = if slip_rate < 0.0 {
        (v0 - R * w0) / -slip_rate
    } else {
        f64::INFINITY
    };
    let t_w = if wdot_slide < 0.0 {
        w0 / -wdot_slide
    } else {
        f64::INFINITY
    };
    if t_s <= t_w {
        // Case II: slide, then roll.
        if t < t_s {
            return (v0 - mu * G * t, w0 + wdot_slide * t);
        }
        let v = (v0 - mu * G * t_s - a * (t - t_s)).max(0.0);
        (v, v / R)
    } else {
        // Case III: the rotation stops first and stays stopped (μMgr < ρMg); v keeps
        // decelerating at μg to rest.
        assert!(mu * M * G * R <= rho * M * G);
        ((v0 - mu * G * t).max(0.0), (w0 + wdot_slide * t).max(0.0))
    }
}

/// V04 — Acary & Bourrier cases I–III: v_x(0) = 2.5 m/s, ρ = 0.04 m, ω₀ about −Z.
/// Step size not stated in the thesis; h = 10⁻² s as V01–V03.
#[test]
fn v04_rolling_and_sliding_cases() {
    let h = 1e-2;
    let (v0, rho) = (2.5, 0.04);
    // (case, ω₀, μ)
    for (case, w0, mu) in [("I", 5.0, 0.2), ("II", 2.5, 0.2), ("III", 5.0, 0.05)] {
        let sim = Sim::run(Setup {
            v0: Vector3::new(v0, 0.0, 0.0),
            w0: Vector3::new(0.0, 0.0, -w0),
            mu,
            rho,
            ..Setup::new(h, 6.0)
        });
        let name = format!("V04-{case}");
        // Newton: measured max I (1, 1, 2), II and III (1, 2, 2); means ≤ (1, 1.005, 1.008).
        // Not reported in the thesis for V04.
        sim.check_common(&name, None);
        // The motion stays planar.
        let mut off: f64 = 0.0;
        for k in 0..sim.len() {
            let (v, w) = (sim.v(k), sim.w(k));
            off = off
                .max(v.y.abs())
                .max(v.z.abs())
                .max(R * w.x.abs())
                .max(R * w.y.abs());
        }
        // The vertical velocity g h ≈ 0.1 m/s gained in each smooth step is cancelled by the
        // (linear) normal law of the velocity jump to round-off (measured ~1e-11 m/s).
        assert!(off < 1e-9, "{name}: out-of-plane motion {off:e}");
        // (a), (b): grid values against the exact piecewise solution.
        let mut err: f64 = 0.0;
        for k in 0..sim.len() {
            let (v, w) = v04_exact(v0, w0, mu, rho, sim.t(k));
            err = err
                .max((sim.v(k).x - v).abs())
                .max(R * (-sim.w(k).z - w).abs());
        }
        let slip = sim.slip();
        let k_stop = sim.stop().expect("never stops");
        let t_stop = sim.t(k_stop);
        let within = |t: f64, exact: f64| t >= exact - EPS_T && t < exact + h + EPS_T;
        match case {
            "I" => {
                // a = ρMg/(r(M + I/r²)) = 0.5599 m/s²; friction needed 0.56 M < μMg.
                let a = rho * M * G / (R * (M + J / (R * R)));
                let t_exact = v0 / a; // 4.465 s
                let rolls = (0..sim.len()).all(|k| slip[k] < 1e-8);
                eprintln!(
                    "V04-I: a = {a:.4} m/s²; pure rolling all along: {rolls}; stop at {t_stop:.3} s \
                     (analytic {t_exact:.3}); max grid error {err:.2e}"
                );
                assert!(rolls);
                assert!(within(t_stop, t_exact));
                assert!((t_exact - 4.465).abs() < 5e-4);
            }
            "II" => {
                let wdot = (mu * M * G * R - rho * M * G) / J;
                let t_s = (v0 - R * w0) / (mu * G + R * wdot); // 0.2552 s
                let (v_s, w_s) = (v0 - mu * G * t_s, w0 + wdot * t_s); // 2.000, 4.000
                let a = rho * M * G / (R * (M + J / (R * R)));
                let t_exact = t_s + v_s / a; // 3.827 s
                let k_roll = sim.first(0, |k| slip[k] < 1e-8).unwrap();
                let t_roll = sim.t(k_roll);
                let w_peak = (0..sim.len()).map(|k| -sim.w(k).z).fold(0.0, f64::max);
                eprintln!(
                    "V04-II: slip ends at {t_roll:.3} s (analytic {t_s:.4}) with v = {:.4}, ω = {:.4} \
                     (analytic at t_s: {v_s:.4}, {w_s:.4}); peak ω {w_peak:.4}; stop at {t_stop:.3} s \
                     (analytic {t_exact:.3}); max grid error {err:.2e}",
                    sim.v(k_roll).x,
                    -sim.w(k_roll).z
                );
                assert!(within(t_roll, t_s));
                assert!((t_s - 0.2552).abs() < 5e-5);
                // The thesis reports the end of slip at 0.256 s (its step is not stated): the
                // simulated instant lies on our grid of h = 1e-2 s, within one step of it.
                assert!((t_roll - 0.256).abs() <= h + 1e-9, "{t_roll}");
                assert!((v_s - 2.000).abs() < 5e-4 && (w_s - 4.000).abs() < 5e-4);
                // The angular velocity peaks at the end of slip (thesis); on the grid the peak
                // is within one step of rate change (max(ω̇_slide, a/r)·h) of w_s.
                assert!((w_peak - w_s).abs() <= wdot.max(a / R) * h);
                assert!(within(t_stop, t_exact));
                assert!((t_exact - 3.827).abs() < 5e-4);
                assert!((k_roll..sim.len()).all(|k| slip[k] < 1e-8));
            }
            _ => {
                let wdot = (mu * M * G * R - rho * M * G) / J; // −1.469 rad/s²
                let t_w = w0 / -wdot; // 3.404 s
                let v_w = v0 - mu * G * t_w; // 0.832 m/s
                let t_v = v0 / (mu * G); // 5.102 s
                let k_w = sim.first(0, |k| sim.w(k).norm() < 1e-8).unwrap();
                let t_w_num = sim.t(k_w);
                let slides =
                    (1..k_stop).all(|k| slip[k] > 0.0 && sim.v(k).x - R * -sim.w(k).z > 0.0);
                eprintln!(
                    "V04-III: ω̇ = {wdot:.4} rad/s²; ω = 0 at {t_w_num:.3} s (analytic {t_w:.3}, v there \
                     {v_w:.4}; numerical v at that step {:.4}); v = 0 at {t_stop:.3} s (analytic {t_v:.3}); \
                     slides forward throughout: {slides}; max grid error {err:.2e}",
                    sim.v(k_w).x
                );
                assert!((wdot + 1.469).abs() < 5e-4);
                assert!(within(t_w_num, t_w));
                assert!((t_w - 3.404).abs() < 5e-4 && (v_w - 0.832).abs() < 5e-4);
                // The rotation stays stopped while the sphere slides on (μMgr < ρMg).
                assert!((k_w..sim.len()).all(|k| sim.w(k).norm() < 1e-8));
                assert!(slides);
                assert!(within(t_stop, t_v));
                assert!((t_v - 5.102).abs() < 5e-4);
            }
        }
        // Exact at the grid points up to the Newton tolerance (10⁻⁵ relative on O(1) m/s).
        assert!(err < 1e-4, "{name}: grid error {err}");
    }
}

/// Exact reference of V07 with a frictionless wall (e_T then has no effect): (impact time,
/// pure-rolling onset, velocity there, full stop).
///
/// Before the impact the sphere slides along d = (1, 0, 1)/√2 with v̇ = −μg d and, about
/// (1, 0, −1)/√2, I ω̇ = μMgr − ρMg (friction moment minus rolling resistance); it reaches the wall
/// (x = 0.5 m) at x(t) = 1.5t − ½(μg/√2)t² = 0.5 while still sliding. The impact (e_N = 1, no
/// wall friction) reverses v_x and leaves ω unchanged; the floor has no impulsive force. Then
/// sliding with friction −μMg ŝ (slip s = (v_x + rω_z, v_z − rω_x)) and rolling-resistance couple
/// −ρMg ω̂_T, integrated by RK4 with dt = 10⁻⁶ s (error ≪ 10⁻⁶ s), until s = 0; no spin is ever
/// induced, so γ_s plays no role. Finally pure rolling (friction needed M a < μMg) decelerating
/// at a = ρMg/(r(M + I/r²)) in a straight line to rest.
fn v07_reference(mu: f64, rho: f64) -> (f64, f64, Vector3<f64>, f64) {
    let s0 = 1.5 * 2f64.sqrt();
    let c = mu * G / 2f64.sqrt();
    let t_imp = (1.5 - (1.5 * 1.5 - 2.0 * c * 0.5).sqrt()) / c;
    let wdot = (mu * M * G * R - rho * M * G) / J;
    assert!(
        t_imp < s0 / (mu * G + R * wdot),
        "slip would end before the impact"
    );
    let (sv, sw) = (s0 - mu * G * t_imp, wdot * t_imp);
    let q = 1.0 / 2f64.sqrt();
    // State [v_x, v_z, ω_x, ω_z] just after the impact.
    let mut y = [-sv * q, sv * q, sw * q, -sw * q];
    let slip = |y: &[f64; 4]| (y[0] + R * y[3], y[1] - R * y[2]);
    let f = |y: &[f64; 4]| {
        let (sx, sz) = slip(y);
        let sn = sx.hypot(sz);
        let (fx, fz) = (-mu * M * G * sx / sn, -mu * M * G * sz / sn);
        let wn = y[2].hypot(y[3]);
        let (cx, cz) = (-rho * M * G * y[2] / wn, -rho * M * G * y[3] / wn);
        // Friction at the contact point (0, −r, 0): moment (−r F_z, 0, r F_x).
        [fx / M, fz / M, (-R * fz + cx) / J, (R * fx + cz) / J]
    };
    let dt = 1e-6;
    let mut t = t_imp;
    loop {
        let add = |y: &[f64; 4], k: &[f64; 4], s: f64| {
            [
                y[0] + s * k[0],
                y[1] + s * k[1],
                y[2] + s * k[2],
                y[3] + s * k[3],
            ]
        };
        let k1 = f(&y);
        let k2 = f(&add(&y, &k1, dt / 2.0));
        let k3 = f(&add(&y, &k2, dt / 2.0));
        let k4 = f(&add(&y, &k3, dt));
        let n = [0, 1, 2, 3].map(|i| y[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
        let (a, b) = (slip(&y), slip(&n));
        if b.0.hypot(b.1) >= a.0.hypot(a.1) || b.0.hypot(b.1) < 1e-9 {
            // The slip speed closes at the rate −ṡ·ŝ: finish the last partial step linearly.
            let d = f(&y);
            let sn = a.0.hypot(a.1);
            let rate = -((d[0] + R * d[3]) * a.0 + (d[1] - R * d[2]) * a.1) / sn;
            let tau = sn / rate;
            t += tau;
            y = [0, 1, 2, 3].map(|i| y[i] + tau * d[i]);
            break;
        }
        y = n;
        t += dt;
    }
    let v_roll = Vector3::new(y[0], 0.0, y[1]);
    let a = rho * M * G / (R * (M + J / (R * R)));
    assert!(M * a < mu * M * G);
    (t_imp, t, v_roll, t + v_roll.norm() / a)
}

/// Events of a V07 run: (impact, rolling onset after it, full stop) indices.
fn v07_events(sim: &Sim) -> (usize, usize, usize) {
    let wall = sim.channel("wall", "impulse");
    let slip = sim.slip();
    let k_imp = sim.first(0, |k| wall[k][0] > 0.0).expect("no impact");
    let k_roll = sim.first(k_imp, |k| slip[k] < 1e-8).expect("never rolls");
    (k_imp, k_roll, sim.stop().expect("never stops"))
}

/// V07 — sphere as V01 (v₀ = (1.5, 0, 1.5), ω₀ = 0) from x = 0, floor μ = 0.2, ρ = 0.04 m,
/// γ_s = 0.0167 m, wall X = 1 m with e_N = e_T = 1, h = 10⁻³ s (thesis) and 10⁻⁴ s.
///
/// Wall friction is not stated in the thesis. A frictionless wall is used here: it reproduces
/// the thesis' pure-rolling time (0.685 s) and full stop (2.266 s) within 3 steps of the exact
/// solution, and the thesis' "v_z decreases continuously without jump". Any wall friction breaks
/// this: already μ_w = 0.01 moves the stop to 2.254 s (12 steps early), μ_w = 0.2 to 2.125 s,
/// because the wall's tangential impulse (the wall contact point moves down and along z at
/// impact) changes v_z, induces a spin and, with e_T = 1 demanding a reversed tangential
/// velocity, even lifts the sphere off the floor (see `v07_wall_friction_sensitivity`). The
/// thesis' remark that a spin ω_y is induced at impact is therefore NOT reproduced (ω_y ≡ 0
/// with a frictionless wall); with μ_w = 0 the value of e_T is irrelevant (zero tangential
/// impulse), so the "e_T meaning" ambiguity does not enter the asserted numbers.
#[test]
fn v07_sphere_impacting_a_wall() {
    let (mu, rho, gamma) = (0.2, 0.04, 0.0167);
    let (t_imp, t_roll, v_roll, t_stop) = v07_reference(mu, rho);
    let a = rho * M * G / (R * (M + J / (R * R)));
    eprintln!(
        "V07 exact (frictionless wall): impact {t_imp:.5} s, rolling from {t_roll:.5} s with v = \
         ({:.5}, {:.5}) m/s, stop {t_stop:.5} s; thesis 0.411 / 0.685 / 2.266",
        v_roll.x, v_roll.z
    );
    // Spec's derived impact time (from x = 0).
    assert!((t_imp - 0.4116).abs() < 5e-5);
    for h in [1e-3, 1e-4] {
        let sim = Sim::run(Setup {
            v0: Vector3::new(1.5, 0.0, 1.5),
            mu,
            rho,
            gamma_s: gamma,
            wall_mu: Some(0.0),
            ..Setup::new(h, 3.0)
        });
        let name = format!("V07 h={h:e}");
        // Newton: measured max (1, 4, 2) with 2 position backtracks at h = 1e-3 and (1, 2, 2)
        // at h = 1e-4, means ≤ (1, 1.001, 1.012); thesis max (1, 7, 7), mean (1, 1, 3). The
        // thesis' higher counts may come from its (unstated) wall friction; with μ_w = 0.2 we
        // measure max (1, 3, 3) (see `v07_wall_friction_sensitivity`).
        sim.check_common(&name, Some(([1, 7, 7], [1, 1, 3])));
        let (ki, kr, ks) = v07_events(&sim);
        let (ti, tr, ts) = (sim.t(ki), sim.t(kr), sim.t(ks));
        let (before, after) = (sim.v(ki - 1), sim.v(ki));
        let wy = (0..sim.len()).map(|k| sim.w(k).y.abs()).fold(0.0, f64::max);
        // Rolling phase: |v| = |v(t_r)| − a (t − t_r) at the grid points (exact, (a)).
        let mut err: f64 = 0.0;
        for k in kr..sim.len() {
            let exact = (sim.v(kr).norm() - a * (sim.t(k) - tr)).max(0.0);
            err = err.max((sim.v(k).norm() - exact).abs());
        }
        eprintln!(
            "{name}: impact {ti:.4} s (exact {t_imp:.4}), v {:.5?} -> {:.5?}; rolling from {tr:.4} s \
             (exact {t_roll:.4}, thesis 0.685) with v = ({:.5}, {:.5}); stop {ts:.4} s (exact \
             {t_stop:.4}, thesis 2.266); max |ω_y| {wy:e}; rolling-phase grid error {err:.1e}",
            before.as_slice(),
            after.as_slice(),
            sim.v(kr).x,
            sim.v(kr).z
        );
        // (d): the impact is detected at the end of the step in which the contact closes.
        assert!(ti >= t_imp - EPS_T && ti < t_imp + h + EPS_T);
        // Newton impact law with e_N = 1 on the wall normal: v_x reversed exactly.
        assert!((after.x + before.x).abs() < 1e-9);
        // No jump of v_z (thesis): only one step of floor friction, μ g h, acts across the impact.
        assert!((after.z - before.z).abs() <= mu * G * h);
        // Later events: the discrete solution lags by the impact detection (< h), the implicit
        // (end-of-step) friction and couple directions over the curving slip path (a first-order
        // error in the onset velocity, which the rolling phase turns into a stop delay), and the
        // grid reading (< h). Measured lags: t_r +0.7h / +0.05h, t_stop +1.8h / +2.0h at
        // h = 1e-3 / 1e-4, i.e. first-order convergence with coefficient ≤ 2; bound 3h.
        assert!(
            tr >= t_roll - EPS_T && tr <= t_roll + 3.0 * h,
            "rolling {tr}"
        );
        assert!(ts >= t_stop - EPS_T && ts <= t_stop + 3.0 * h, "stop {ts}");
        assert!(err < 1e-4, "rolling-phase error {err}");
        assert!(wy < 1e-9);
        let slip = sim.slip();
        assert!((kr..ks).all(|k| slip[k] < 1e-8));
    }
    // The thesis' own first-order (h = 1e-3) events lie within the same window [exact, exact + 3h]
    // of the frictionless-wall solution: 0.685 − 0.6843 = 0.7 ms, 2.266 − 2.2632 = 2.8 ms (the
    // impact "0.411" is quoted truncated, hence the −h allowance).
    for (thesis, exact) in [(0.411, t_imp), (0.685, t_roll), (2.266, t_stop)] {
        assert!(
            thesis >= exact - 1e-3 && thesis <= exact + 3e-3,
            "{thesis} vs {exact}"
        );
    }
}

/// V07 with wall friction μ_w = 0.2 (the floor's value; one reading of the unstated wall
/// friction), h = 10⁻³ s: reported to document the modelling ambiguity (see
/// `v07_sphere_impacting_a_wall`).
#[test]
fn v07_wall_friction_sensitivity() {
    let (mu, rho, gamma, mu_w, h) = (0.2, 0.04, 0.0167, 0.2, 1e-3);
    let sim = Sim::run(Setup {
        v0: Vector3::new(1.5, 0.0, 1.5),
        mu,
        rho,
        gamma_s: gamma,
        wall_mu: Some(mu_w),
        ..Setup::new(h, 3.0)
    });
    // Newton: measured max (1, 3, 3), mean (1, 0.98, 1.00) (below 1: no contact iterations
    // while the sphere is airborne); thesis max (1, 7, 7), mean (1, 1, 3).
    sim.check_common("V07 μ_w=0.2", Some(([1, 7, 7], [1, 1, 3])));
    let (ki, kr, ks) = v07_events(&sim);
    let imp = sim.channel("wall", "impulse")[ki].clone();
    let floor = sim.channel("floor", "impulse")[ki].clone();
    let (before, after) = (sim.node(ki - 1), sim.node(ki));
    let wy = (0..sim.len()).map(|k| sim.w(k).y).fold(0.0, f64::max);
    eprintln!(
        "V07 μ_w=0.2: impact {:.4} s, wall impulse [Λ_N, Λ_T1, Λ_T2] = {imp:.1?} N s, floor impulse \
         in that step {floor:.1?}; v {:.4?} -> {:.4?}; ω {:.4?} -> {:.4?}; max ω_y {wy:.4}; \
         rolling from {:.4} s, stop {:.4} s (thesis 0.685 / 2.266)",
        sim.t(ki),
        before.v.as_slice(),
        after.v.as_slice(),
        before.omega_spatial().as_slice(),
        after.omega_spatial().as_slice(),
        sim.t(kr),
        sim.t(ks)
    );
    // e_T = 1 asks to reverse the wall-tangential contact velocity u_T ≈ (−0.85, 0.93) m/s, which
    // needs |Λ_T| ≈ 2|u_T| M/3.5 ≈ 0.39 Λ_N > μ_w Λ_N: the wall impulse slides on the cone.
    let lt = imp[1].hypot(imp[2]);
    assert!((lt - mu_w * imp[0]).abs() <= 1e-6 * imp[0], "{imp:?}");
    // Its moment about the centre induces the spin reported by the thesis, and its upward part
    // (the contact point moves down the wall) lifts the sphere: the floor opens in that step.
    assert!(wy > 1.0 && after.v.y > 0.0 && floor[0] == 0.0);
    // v_z jumps by the wall friction (thesis: no jump), and the thesis' stop time is missed by
    // far more than the 3h discretisation window established above.
    assert!((after.v.z - before.v.z).abs() > 100.0 * mu * G * h);
    assert!((sim.t(ks) - 2.266).abs() > 0.1);
}
