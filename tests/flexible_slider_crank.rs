//! Flexible crank–rod–slider of the thesis (validation case V18, ideal joints — no clearance):
//! crank and connecting rod are geometrically exact beams (4 elements each), the slider a rigid
//! body on a frictionless prismatic joint, the crank driven at 5000 rpm.
//!
//! Data (validation-cases.md V18): crank 0.05 m, `A = 7.6433e-4 m²`, `I = 4.868e-8 m⁴`; rod
//! 0.12 m, `A = 2.2293e-4 m²`, `I = 4.1415e-9 m⁴`; steel `E = 210 GPa`, `ν = 0.3`,
//! `ρ = 7850 kg/m³`; slider 0.14 kg; Rayleigh damping ratio 0.04 % in crank and rod;
//! `h = 1e-5 s`, `ρ∞ = 0`, Newton tolerance 1e-5.
//!
//! Modelling choices (the thesis does not give them):
//!
//! * **Out-of-plane section data**: circular-section equivalents (contact-elements.md §2.2):
//!   `I₂ = I₃ = I`, `J = 2 I`, Cowper's shear coefficient of a circle `6(1 + ν)/(7 + 6ν)`.
//! * **Damping frequency**: stiffness-proportional damping `β = ξ/(π f)` with `ξ = 0.04 %` at
//!   `f = 2432 Hz`, the first (pinned–pinned Euler–Bernoulli) bending frequency of the rod —
//!   the lowest elastic mode of the mechanism, the one a slider–crank excites most. The same `β`
//!   (a material property) is used for the crank; its modes are stiffer and get
//!   `ξ f'/f > 0.04 %`.
//! * **Start**: at θ = 0 (crank and rod aligned along +x), every node at the **rigid-body
//!   velocity field** of the mechanism at full speed (crank `ω e_z`, rod `−ω r/l e_z`, slider at
//!   rest), undeformed, with a constant-speed driver `θ(t) = ω t` — the thesis' "constant
//!   5000 rpm … initially crank and rod aligned". `prescribed_rotation` only offers a constant
//!   angular acceleration, which cannot ramp up and then hold the speed; starting at full speed
//!   from the rigid velocity field is consistent with every joint and the driver, and the
//!   inertia loads it applies suddenly to the undeformed beams only start a small elastic
//!   vibration (quantified below: it roughly doubles the quasi-static deformations, and the
//!   0.04 % damping does not remove it within a turn; the thesis shows results "after
//!   transients").
//! * **Joints**: revolute joints (axis z) at the main bearing, the crank pin and the wrist pin,
//!   a prismatic joint along x for the slider. For rigid bodies this planar loop is redundant
//!   in 3-D; with flexible beams the out-of-plane rows are no longer dependent (the loop is
//!   statically indeterminate out of plane, which the beams' out-of-plane stiffness resolves),
//!   and the solver's Jacobian regularization covers the nearly dependent rows.
//! * Gravity 9.8 m/s² along −y (negligible at 5000 rpm: 5e-4 of the slider's peak
//!   acceleration).

use saltus::elements::beam::{BeamBuilder, BeamLine, BeamSpec};
use saltus::elements::body::RigidBody;
use saltus::elements::joints::{PrescribedRotation, PrismaticJoint, RevoluteJoint};
use saltus::prelude::*;
use std::f64::consts::PI;
use std::time::Instant;

/// Crank length r \[m\] and rod length l \[m\].
const R: f64 = 0.05;
const LR: f64 = 0.12;
const A_CRANK: f64 = 7.6433e-4;
const I_CRANK: f64 = 4.868e-8;
const A_ROD: f64 = 2.2293e-4;
const I_ROD: f64 = 4.1415e-9;
const E: f64 = 210e9;
const NU: f64 = 0.3;
const RHO: f64 = 7850.0;
const M_SLIDER: f64 = 0.14;
/// Modal damping ratio (0.04 %).
const XI: f64 = 4e-4;
/// Crank speed \[rad/s\]: 5000 rpm.
const OMEGA: f64 = 5000.0 * 2.0 * PI / 60.0;
const G: f64 = 9.8;
/// Elements per beam.
const N_EL: usize = 4;

/// First bending frequency \[Hz\] of the rod, pinned–pinned Euler–Bernoulli:
/// `f = (π/2) √(E I/(ρ A)) / l²`.
fn rod_frequency() -> f64 {
    0.5 * PI * (E * I_ROD / (RHO * A_ROD)).sqrt() / (LR * LR)
}

/// Beam section with circular out-of-plane equivalents and 0.04 % stiffness-proportional
/// damping at the rod's first bending frequency.
fn section(area: f64, i: f64) -> BeamSpec {
    BeamSpec {
        youngs_modulus: E,
        poisson_ratio: Some(NU),
        area,
        shear_coefficient: Some(6.0 * (1.0 + NU) / (7.0 + 6.0 * NU)),
        i2: i,
        i3: i,
        torsion_constant: Some(2.0 * i),
        rho: RHO,
        ..BeamSpec::default()
    }
    .with_damping_ratio(XI, rod_frequency())
}

/// The mechanism and the two beam lines (crank, rod).
struct Mechanism {
    model: Model,
    crank: BeamLine,
    rod: BeamLine,
    slider: NodeId,
}

fn mechanism() -> Mechanism {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let w_crank = Vector3::z() * OMEGA;
    let w_rod = -Vector3::z() * (OMEGA * R / LR);
    let pin = Vector3::new(R, 0.0, 0.0);
    let wrist = Vector3::new(R + LR, 0.0, 0.0);
    let crank_root = model
        .add_node(NodeDef::frame("crank_root", Vector3::zeros()).angular_velocity(w_crank))
        .unwrap();
    let crank_tip = model
        .add_node(
            NodeDef::frame("crank_tip", pin)
                .velocity(w_crank.cross(&pin))
                .angular_velocity(w_crank),
        )
        .unwrap();
    let rod_root = model
        .add_node(
            NodeDef::frame("rod_root", pin)
                .velocity(w_crank.cross(&pin))
                .angular_velocity(w_rod),
        )
        .unwrap();
    // The wrist pin is at rest at θ = 0 (dx_s/dθ = 0); the rod turns at −ω r/l.
    let rod_tip = model
        .add_node(NodeDef::frame("rod_tip", wrist).angular_velocity(w_rod))
        .unwrap();
    let slider = model.add_node(NodeDef::frame("slider", wrist)).unwrap();
    let crank = BeamBuilder::new("crank", section(A_CRANK, I_CRANK))
        .line(&mut model, crank_root, crank_tip, N_EL)
        .unwrap();
    let rod = BeamBuilder::new("rod", section(A_ROD, I_ROD))
        .line(&mut model, rod_root, rod_tip, N_EL)
        .unwrap();
    // A 0.14 kg steel block (≈ 26 mm cube); its rotation is locked by the prismatic joint.
    let j = M_SLIDER * 0.026 * 0.026 / 6.0;
    model
        .add_element(
            "slider_body",
            RigidBody::principal(slider, M_SLIDER, Vector3::repeat(j)).unwrap(),
        )
        .unwrap();
    let n = model.nodes().to_vec();
    let z = Vector3::z();
    let add = |model: &mut Model, name: &str, e: saltus::elements::joints::RevoluteJoint| {
        model.add_element(name, e).unwrap();
    };
    add(
        &mut model,
        "main",
        RevoluteJoint::new(&n, ground, crank_root, Vector3::zeros(), z).unwrap(),
    );
    model
        .add_element(
            "drive",
            PrescribedRotation::new(&n, ground, crank_root, z, 0.0, OMEGA).unwrap(),
        )
        .unwrap();
    add(
        &mut model,
        "crank_pin",
        RevoluteJoint::new(&n, crank_tip, rod_root, pin, z).unwrap(),
    );
    add(
        &mut model,
        "wrist_pin",
        RevoluteJoint::new(&n, rod_tip, slider, wrist, z).unwrap(),
    );
    model
        .add_element(
            "slide",
            PrismaticJoint::new(&n, ground, slider, wrist, Vector3::x()).unwrap(),
        )
        .unwrap();
    Mechanism {
        model,
        crank,
        rod,
        slider,
    }
}

const JOINTS: [&str; 5] = ["main", "drive", "crank_pin", "wrist_pin", "slide"];

/// Integrator options: the thesis' ρ∞ = 0 and Newton tolerance 1e-5 (`tol`), step `h`.
fn options(h: f64, t_end: f64, tol: f64) -> NsgaOptions {
    NsgaOptions {
        h,
        t_end,
        rho_inf: 0.0,
        tol,
        gravity: Vector3::new(0.0, -G, 0.0),
        // Full Newton: the iteration counts asserted below are those of Newton's method (the
        // thesis' solver); the default modified Newton is checked in tests/slider_crank.rs,
        // tests/beam_modes.rs and tests/custom_scheme.rs.
        jacobian_reuse: None,
        ..NsgaOptions::default()
    }
}

/// Thesis Newton tolerance.
const THESIS_TOL: f64 = 1e-5;

/// Rigid-body kinematics at crank angle θ: slider position x_s \[m\], velocity \[m/s\] and
/// acceleration \[m/s²\] (constant ω), from `x_s(θ) = r cos θ + √(l² − r² sin² θ)`.
fn slider_rigid(theta: f64) -> (f64, f64, f64) {
    let (s, c) = theta.sin_cos();
    let q = LR * LR - R * R * s * s;
    let root = q.sqrt();
    let x = R * c + root;
    let dx = -R * s - R * R * s * c / root;
    let ddx = -R * c - R * R * (c * c - s * s) / root - R.powi(4) * s * s * c * c / (q * root);
    (x, OMEGA * dx, OMEGA * OMEGA * ddx)
}

/// Quasi-static deformations of the rod at crank angle θ from the rigid-body accelerations
/// (d'Alembert loads on a pinned–pinned beam; the rod's axial force is the slider's inertia
/// plus the rod's own, its transverse load the rod's transverse inertia, both varying linearly
/// along the rod because the rigid acceleration field is linear):
///
/// * stretch `Δl = −(m_s a_s l + ρA l² (a₀/6 + a₁/3))/(EA)`, with `a₀`, `a₁` the axial
///   accelerations (along the rod, towards the slider) of the crank pin and the wrist pin;
/// * end-rotation difference `Δθ = ρA l³ (a⊥₀ + a⊥₁)/(24 EI)` (end slopes of a simply
///   supported beam under the linear load `q = −ρA a⊥`; `a⊥` the accelerations along the rod
///   normal `e_z × rod axis`).
///
/// Neglected: the P–δ effect of the axial force (|N|/N_Euler ≤ 0.7 %), the rod's rotary
/// inertia, the dynamic amplification (forcing/first-mode frequency)² ≈ 0.1 %, and the
/// crank's deformation.
fn rod_quasi_static(theta: f64) -> (f64, f64) {
    let (xs, _, a_s) = slider_rigid(theta);
    let pin = Vector3::new(R * theta.cos(), R * theta.sin(), 0.0);
    let axis = (Vector3::new(xs, 0.0, 0.0) - pin) / LR;
    let normal = Vector3::z().cross(&axis);
    let a_pin = -pin * (OMEGA * OMEGA);
    let a_wrist = Vector3::new(a_s, 0.0, 0.0);
    let rho_a = RHO * A_ROD;
    let stretch = -(M_SLIDER * a_wrist.dot(&axis) * LR
        + rho_a * LR * LR * (a_pin.dot(&axis) / 6.0 + a_wrist.dot(&axis) / 3.0))
        / (E * A_ROD);
    let bend =
        rho_a * LR.powi(3) * (a_pin.dot(&normal) + a_wrist.dot(&normal)) / (24.0 * E * I_ROD);
    (stretch, bend)
}

/// Deformation measures of one recorded state.
#[derive(Clone, Copy, Debug, Default)]
struct Deformation {
    /// Driver angle θ \[rad\].
    theta: f64,
    /// Slider position minus the rigid closed form at the driver's angle \[m\].
    slider_error: f64,
    /// Slider velocity minus the rigid closed form \[m/s\].
    slider_velocity_error: f64,
    /// Rod chord length minus l \[m\] (end nodes).
    rod_stretch: f64,
    /// Rotation of the rod's tip frame relative to its root frame about z \[rad\] (0 when rigid).
    rod_bend: f64,
    /// Crank chord length minus r \[m\].
    crank_stretch: f64,
    /// Rotation of the crank's tip frame relative to its root frame about z \[rad\].
    crank_bend: f64,
}

impl Deformation {
    /// The compared quantities: slider position error \[m\], slider velocity error \[m/s\], rod
    /// stretch \[m\], rod end-rotation difference \[rad\].
    fn values(&self) -> [f64; 4] {
        [
            self.slider_error,
            self.slider_velocity_error,
            self.rod_stretch,
            self.rod_bend,
        ]
    }
}

fn deformation(m: &Mechanism, nodes: &[NodeState], theta: f64) -> Deformation {
    let node = |id: NodeId| &nodes[id.index()];
    let rel = |a: NodeId, b: NodeId| (node(a).r.inverse() * node(b).r).scaled_axis().z;
    let (xs, vs, _) = slider_rigid(theta);
    let (r0, r1) = (m.rod.nodes[0], m.rod.nodes[N_EL]);
    let (c0, c1) = (m.crank.nodes[0], m.crank.nodes[N_EL]);
    Deformation {
        theta,
        slider_error: node(m.slider).x.x - xs,
        slider_velocity_error: node(m.slider).v.x - vs,
        rod_stretch: (node(r1).x - node(r0).x).norm() - LR,
        rod_bend: rel(r0, r1),
        crank_stretch: (node(c1).x - node(c0).x).norm() - R,
        crank_bend: rel(c0, c1),
    }
}

struct Run {
    sink: MemorySink,
    summary: RunSummary,
    deformations: Vec<Deformation>,
    /// Node states at the end of the run.
    last: Vec<NodeState>,
}

/// Integrate the mechanism (started from `initial` node states if given, else from the rigid
/// velocity field) with step `h` to `t_end`.
fn run(h: f64, t_end: f64, tol: f64, initial: Option<&[NodeState]>) -> Run {
    let mut m = mechanism();
    if let Some(states) = initial {
        for (def, s) in m.model.nodes_mut().iter_mut().zip(states) {
            if !def.fixed {
                def.initial = *s;
            }
        }
    }
    let mut solver = Nsga::new(&mut m.model, options(h, t_end, tol)).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut m.model, &mut sink, &mut |_| {}).unwrap();
    let angle = sink.channel("drive", "angle").unwrap();
    let deformations = sink
        .nodes
        .iter()
        .zip(&angle)
        .map(|(nodes, a)| deformation(&m, nodes, a[0]))
        .collect();
    Run {
        last: solver.nodes().to_vec(),
        sink,
        summary,
        deformations,
    }
}

fn max_abs(d: &[Deformation], f: impl Fn(&Deformation) -> f64) -> f64 {
    d.iter().map(|x| f(x).abs()).fold(0.0, f64::max)
}

/// Two crank turns (24 ms) at the published step h = 1e-5 s with the thesis' ρ∞ = 0 and
/// tolerance 1e-5: stable, constraints exact, slider within 3e-5 m of the rigid closed form,
/// the rod's deformations on the quasi-static prediction once the start-up vibration has been
/// dissipated (second turn), and Newton iteration counts not above the thesis'.
#[test]
fn two_crank_turns_at_published_step() {
    let turn = 2.0 * PI / OMEGA;
    let start = Instant::now();
    let r = run(1e-5, 2.0 * turn, THESIS_TOL, None);
    let wall = start.elapsed();
    let d = &r.deformations;
    let theta_end = d.last().unwrap().theta;
    let mut worst_g: f64 = 0.0;
    let mut worst_gdot: f64 = 0.0;
    for j in JOINTS {
        let v = r.sink.channel(j, "violation").unwrap();
        worst_g = v.iter().map(|x| x[0]).fold(worst_g, f64::max);
        worst_gdot = v.iter().map(|x| x[1]).fold(worst_gdot, f64::max);
    }
    let stroke = 2.0 * R;
    eprintln!(
        "{} steps (h = 1e-5 s) to t = {:.5} s, θ = {theta_end:.4} rad in {:.2} s wall; Newton \
         iterations (smooth, position, velocity) max {:?}, mean {:.3?} (thesis, h = 1e-6 s: \
         max (2, 3, 1), mean (1, 1, 1)); line-search backtracks {:?}",
        r.summary.steps,
        r.summary.t,
        wall.as_secs_f64(),
        r.summary.max_iterations(),
        r.summary.mean_iterations(),
        r.summary.backtracks()
    );
    let half = d.len() / 2;
    let (first, second) = (&d[..=half], &d[half..]);
    for (label, d) in [("first turn", first), ("second turn", second)] {
        eprintln!(
            "{label}: max |x_s − x_rigid| = {:.3e} m ({:.1e} of the stroke), max |ẋ_s − \
             ẋ_rigid| = {:.3e} m/s; rod: max |Δl| = {:.3e} m (strain {:.2e}), max end-rotation \
             difference {:.3e} rad; crank: max |Δr| = {:.3e} m, max end-rotation difference \
             {:.3e} rad",
            max_abs(d, |x| x.slider_error),
            max_abs(d, |x| x.slider_error) / stroke,
            max_abs(d, |x| x.slider_velocity_error),
            max_abs(d, |x| x.rod_stretch),
            max_abs(d, |x| x.rod_stretch) / LR,
            max_abs(d, |x| x.rod_bend),
            max_abs(d, |x| x.crank_stretch),
            max_abs(d, |x| x.crank_bend),
        );
    }
    eprintln!("joints: max |g| {worst_g:.2e}, max |ġ| {worst_gdot:.2e}");
    // Two turns, nothing blew up.
    assert!(theta_end >= 4.0 * PI - 1e-9, "θ(T) = {theta_end}");
    // Ideal joints: exact at position and velocity level (the smooth step already meets the
    // thesis tolerance, so neither correction needs an iteration: |g| is the smooth step's
    // drift, ġ its round-off).
    assert!(
        worst_g < 1e-10 && worst_gdot < 1e-8,
        "{worst_g:e} {worst_gdot:e}"
    );
    // Slider near the rigid closed form: the chord changes of crank and rod (≤ 2.8e-5 m with
    // the start-up vibration) shift it by at most their sum times dx_s/dl = l/√(l² − r²sin²θ)
    // ≤ 1.1: 3e-5 m, 3e-4 of the stroke.
    assert!(max_abs(d, |x| x.slider_error) < 3.5e-5);
    // Start-up vibration: the deformations of the first turn reach about twice the
    // quasi-static values (a suddenly applied load), those of the second turn settle on them.
    assert!(max_abs(first, |x| x.rod_stretch) > 1.5 * max_abs(second, |x| x.rod_stretch));
    // Quasi-static check on the second turn: rod stretch at θ = 3π and θ = 4π against the
    // closed form (within 2 %: the remaining vibration is ≤ 0.5 % of it); rod end-rotation
    // difference: peak within 5 % of the quasi-static peak, and within 15 % of that peak at
    // every instant (the rod's first bending vibration, 2.4 kHz, ωh = 0.15, is dissipated
    // only slowly by ρ∞ = 0: ~10 % of the peak remains in the second turn).
    let at = |theta: f64| {
        second
            .iter()
            .min_by(|a, b| (a.theta - theta).abs().total_cmp(&(b.theta - theta).abs()))
            .unwrap()
    };
    for theta in [3.0 * PI, 4.0 * PI] {
        let sim = at(theta);
        let (stretch, _) = rod_quasi_static(sim.theta);
        eprintln!(
            "θ = {:.4}: rod stretch {:.4e} m, quasi-static {stretch:.4e} m ({:+.2} %)",
            sim.theta,
            sim.rod_stretch,
            100.0 * (sim.rod_stretch / stretch - 1.0)
        );
        assert!((sim.rod_stretch / stretch - 1.0).abs() < 0.02);
    }
    let peak_qs = max_abs(second, |x| rod_quasi_static(x.theta).1);
    let worst = max_abs(second, |x| x.rod_bend - rod_quasi_static(x.theta).1);
    eprintln!(
        "rod end-rotation difference, second turn: peak quasi-static {peak_qs:.4e} rad, \
         simulated {:.4e} rad, max |simulated − quasi-static| {worst:.3e} rad ({:.1} % of the \
         peak)",
        max_abs(second, |x| x.rod_bend),
        100.0 * worst / peak_qs
    );
    assert!((max_abs(second, |x| x.rod_bend) / peak_qs - 1.0).abs() < 0.05);
    assert!(worst < 0.15 * peak_qs);
    // Newton iterations: at most the thesis' maxima (2, 3, 1) (its h is 10× smaller, its
    // tolerance the same).
    let max = r.summary.max_iterations();
    assert!(max[0] <= 2 && max[1] <= 3 && max[2] <= 1, "{max:?}");
}

/// Maximum over the common instants (every 2e-5 s) of the differences of the compared
/// quantities ([`Deformation::values`]) between two runs.
fn max_differences(a: &[[f64; 4]], b: &[[f64; 4]]) -> [f64; 4] {
    assert_eq!(a.len(), b.len());
    let mut out = [0.0f64; 4];
    for (x, y) in a.iter().zip(b) {
        for q in 0..4 {
            out[q] = out[q].max((x[q] - y[q]).abs());
        }
    }
    out
}

const NAMES: [&str; 4] = [
    "slider position error [m]",
    "slider velocity error [m/s]",
    "rod stretch [m]",
    "rod end-rotation difference [rad]",
];

/// The compared quantities of runs with h = 2e-5, 1e-5, 5e-6 s and a reference at 2.5e-6 s
/// over `window` \[s\], started from `initial` (or the rigid velocity field), sampled every
/// 2e-5 s; returns (runs, reference).
fn h_study(window: f64, initial: Option<&[NodeState]>) -> (Vec<Vec<[f64; 4]>>, Vec<[f64; 4]>) {
    // Tight tolerance: the Newton error must stay far below the differences compared.
    let tol = 1e-10;
    let series = |h: f64| {
        let r = run(h, window, tol, initial);
        let every = (2e-5 / h).round() as usize;
        eprintln!(
            "  h = {h:e} s: {} steps, Newton max {:?}, mean {:.3?}",
            r.summary.steps,
            r.summary.max_iterations(),
            r.summary.mean_iterations()
        );
        r.deformations
            .iter()
            .step_by(every)
            .map(|d| d.values())
            .collect::<Vec<_>>()
    };
    let reference = series(2.5e-6);
    let runs = [2e-5, 1e-5, 5e-6].iter().map(|&h| series(h)).collect();
    (runs, reference)
}

/// Errors of the three runs against the reference and the observed orders, per quantity.
fn report(runs: &[Vec<[f64; 4]>], reference: &[[f64; 4]]) -> Vec<[f64; 3]> {
    let e: Vec<[f64; 4]> = runs.iter().map(|r| max_differences(r, reference)).collect();
    (0..4)
        .map(|q| {
            let size = reference.iter().map(|v| v[q].abs()).fold(0.0, f64::max);
            let p = [(e[0][q] / e[1][q]).log2(), (e[1][q] / e[2][q]).log2()];
            eprintln!(
                "  {}: size {size:.3e}; max difference to h = 2.5e-6 s: {:.3e}, {:.3e}, {:.3e} \
                 (orders {:.2}, {:.2})",
                NAMES[q], e[0][q], e[1][q], e[2][q], p[0], p[1]
            );
            [e[0][q], e[1][q], e[2][q]]
        })
        .collect()
}

/// Convergence in h (h = 2e-5, 1e-5, 5e-6 s against 2.5e-6 s, 2 ms windows = 60° of crank).
///
/// **From the start** no order is observable: starting the undeformed mechanism at full speed
/// excites the axial, shear and bending modes of crank and rod (up to ~7e5 rad/s: ωh ≫ 1 for
/// every step compared), which ρ∞ = 0 dissipates at an h-dependent rate, so the runs differ by
/// the size of the vibration itself (measured: ~1e-5 m in the slider position, not
/// decreasing with h). The physical solution keeps that vibration (0.04 % damping); following
/// it takes h ≲ 1e-7 s (the thesis finds its contact forces converged at h = 1e-6 s).
///
/// **From a settled state** — the state after one turn at h = 2e-5 s (θ = 2π, the same
/// configuration as the start; ρ∞ = 0 at this step has dissipated the start-up vibration) —
/// the resolved dynamics converge: the rod's bending (first mode 2.4 kHz, ωh = 0.3 … 0.04)
/// at order ≈ 1.5–2, while the slider position and the rod stretch agree to ~1e-8 m
/// (0.1 % of the deformation, 2e-7 of the stroke) at every h: the time error of the driven,
/// quasi-static axial response is O((ω h)²) ≈ 1e-4 of the deformation, below the residual
/// unresolved axial vibration (~25 kHz mode of slider on rod and crank) that each step
/// dissipates differently.
#[test]
fn convergence_in_h() {
    let turn = 2.0 * PI / OMEGA;
    let window = 2e-3;
    eprintln!("from the start (rigid velocity field):");
    let (runs, reference) = h_study(window, None);
    let raw = report(&runs, &reference);
    let settled = run(2e-5, turn, 1e-10, None);
    eprintln!("from the state after one turn at h = 2e-5 s:");
    let (runs, reference) = h_study(window, Some(&settled.last));
    let e = report(&runs, &reference);
    let size = |q: usize| reference.iter().map(|v| v[q].abs()).fold(0.0, f64::max);
    // From the start: bounded by the size of the deformations (stable), not converging.
    assert!(raw[0].iter().all(|v| *v < size(0)));
    // Settled: the rod's bending converges, its error falls by ≥ 8 from h = 2e-5 to 5e-6 s
    // (average order ≥ 1.5; 1.5 and 2.1 measured, pre-asymptotic at ωh = 0.3).
    assert!(
        e[3][0] > e[3][1] && e[3][1] > e[3][2] && e[3][0] > 8.0 * e[3][2],
        "{:?}",
        e[3]
    );
    // Slider position and rod stretch converged to 0.2 % of their size at every h.
    for q in [0, 2] {
        assert!(
            e[q].iter().all(|v| *v < 2e-3 * size(q)),
            "{}: {:?}",
            NAMES[q],
            e[q]
        );
    }
}

/// `models/flexible_crank.toml` (meshed by `[[beam_lines]]`) is this mechanism: the same nodes
/// (to the last bit but for the wrist position, `0.17` in the file and `R + LR` =
/// 0.16999999999999998 here), the same elements, the same trajectories.
#[test]
fn model_file_is_the_same_mechanism() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/flexible_crank.toml");
    let mut file = saltus::io::load_model(path).unwrap();
    let mut m = mechanism();
    for (f, c) in file.model.nodes().iter().zip(m.model.nodes()) {
        assert_eq!(f.name, c.name);
        assert_eq!((f.kind, f.fixed), (c.kind, c.fixed));
        let (a, b) = (&f.initial, &c.initial);
        assert!((a.x - b.x).norm() <= 1e-16, "{}", f.name);
        assert_eq!((a.r, a.v, a.omega), (b.r, b.v, b.omega), "{}", f.name);
    }
    assert_eq!(file.model.nodes().len(), m.model.nodes().len());
    assert_eq!(file.model.element_names(), m.model.element_names());
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    assert_eq!(opts.h, 1e-5);
    assert_eq!((opts.rho_inf, opts.tol), (0.0, THESIS_TOL));
    assert_eq!(opts.gravity, Vector3::new(0.0, -G, 0.0));
    let mut a = Nsga::new(&mut file.model, opts.clone()).unwrap();
    // The same solver options as the file's (its default modified Newton included).
    let same = NsgaOptions {
        jacobian_reuse: opts.jacobian_reuse,
        ..options(1e-5, opts.t_end, THESIS_TOL)
    };
    let mut b = Nsga::new(&mut m.model, same).unwrap();
    for _ in 0..20 {
        a.step(&mut file.model).unwrap();
        b.step(&mut m.model).unwrap();
    }
    // The 3e-17 m initial offset stays at round-off.
    for (x, y) in a.nodes().iter().zip(b.nodes()) {
        assert!((x.x - y.x).norm() < 1e-14 && (x.v - y.v).norm() < 1e-9);
    }
}
