//! Rigid slider-crank driven at constant crank speed: the slider position and velocity against
//! the closed form `x_s(θ) = r cos θ + √(l² − r² sin² θ)`, `θ = ω t`, over more than one
//! revolution, exact constraint satisfaction, and Newton iteration counts.
//!
//! Planar mechanism in the x–y plane (joint axes along z, gravity −y), modelled in 3-D. The
//! textbook joint set — revolute joints at both ends of the connecting rod plus a prismatic
//! slider — puts 5 + 5 + 5 + 5 = 20 constraint rows (+1 driver) on 3 × 6 = 18 unknowns of a
//! 1-DOF mechanism: 3 rows are redundant (the out-of-plane rows of the closed planar loop), the
//! iteration matrix is singular and the library cannot run it (see
//! `all_revolute_model_is_redundant_and_fails`). The main test therefore uses the classical
//! non-redundant spatial model: spherical joints at both rod ends (16 + 1 rows), leaving only
//! the rod's spin about its own axis free — with zero initial spin and an inertia symmetric
//! about that axis it stays zero (checked), and it does not affect the slider.

use saltus::elements::body::RigidBody;
use saltus::elements::joints::{PrescribedRotation, PrismaticJoint, RevoluteJoint, SphericalJoint};
use saltus::prelude::*;
use std::f64::consts::PI;

/// Crank length r \[m\], connecting-rod length l \[m\] (the Marques data, validation case V05).
const R: f64 = 0.1;
const LR: f64 = 0.3;
/// Crank, rod and slider masses \[kg\].
const M_CRANK: f64 = 0.12;
const M_ROD: f64 = 0.3;
const M_SLIDER: f64 = 0.1;
/// Crank speed ω \[rad/s\]: one revolution per second.
const OMEGA: f64 = 2.0 * PI;
const G: f64 = 9.81;

/// Closed-form slider position \[m\] and velocity \[m/s\] at crank angle θ = ω t.
fn slider_exact(t: f64) -> (f64, f64) {
    let th = OMEGA * t;
    let root = (LR * LR - R * R * th.sin().powi(2)).sqrt();
    let x = R * th.cos() + root;
    let v = -OMEGA * R * th.sin() - OMEGA * R * R * th.sin() * th.cos() / root;
    (x, v)
}

/// Slender rod of mass `m`, length `l` along body x: transverse m l²/12, small axial inertia
/// (symmetric about the rod axis).
fn rod_inertia(m: f64, l: f64) -> Vector3<f64> {
    let t = m * l * l / 12.0;
    Vector3::new(0.5 * m * 0.01 * 0.01, t, t)
}

/// Joints at the two ends of the connecting rod.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RodEnds {
    Spherical,
    Revolute,
}

/// The mechanism at θ = 0 (crank and rod along +x), nodes at the centres of mass, with the exact
/// kinematic velocities: crank ω e_z, crank centre ω r/2 e_y; rod −(ω r/l) e_z, rod centre
/// ω r/2 e_y (crank pin at ω r e_y, wrist pin at rest); slider at rest (dx_s/dθ = 0 at θ = 0).
fn slider_crank(ends: RodEnds) -> Model {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let crank = model
        .add_node(
            NodeDef::frame("crank", Vector3::new(0.5 * R, 0.0, 0.0))
                .velocity(Vector3::new(0.0, 0.5 * OMEGA * R, 0.0))
                .angular_velocity(Vector3::z() * OMEGA),
        )
        .unwrap();
    let rod = model
        .add_node(
            NodeDef::frame("rod", Vector3::new(R + 0.5 * LR, 0.0, 0.0))
                .velocity(Vector3::new(0.0, 0.5 * OMEGA * R, 0.0))
                .angular_velocity(-Vector3::z() * (OMEGA * R / LR)),
        )
        .unwrap();
    let slider = model
        .add_node(NodeDef::frame("slider", Vector3::new(R + LR, 0.0, 0.0)))
        .unwrap();
    let body = |node, m, j| RigidBody::principal(node, m, j).unwrap();
    model
        .add_element("crank", body(crank, M_CRANK, rod_inertia(M_CRANK, R)))
        .unwrap();
    model
        .add_element("rod", body(rod, M_ROD, rod_inertia(M_ROD, LR)))
        .unwrap();
    model
        .add_element("slider", body(slider, M_SLIDER, Vector3::repeat(1e-4)))
        .unwrap();

    let n = model.nodes().to_vec();
    let (pin, wrist) = (Vector3::new(R, 0.0, 0.0), Vector3::new(R + LR, 0.0, 0.0));
    let main = RevoluteJoint::new(&n, ground, crank, Vector3::zeros(), Vector3::z()).unwrap();
    model.add_element("main", main).unwrap();
    let drive = PrescribedRotation::new(&n, ground, crank, Vector3::z(), 0.0, OMEGA).unwrap();
    model.add_element("drive", drive).unwrap();
    match ends {
        RodEnds::Spherical => {
            let j = SphericalJoint::new(&n, crank, rod, pin).unwrap();
            model.add_element("crank_pin", j).unwrap();
            let j = SphericalJoint::new(&n, rod, slider, wrist).unwrap();
            model.add_element("wrist_pin", j).unwrap();
        }
        RodEnds::Revolute => {
            let j = RevoluteJoint::new(&n, crank, rod, pin, Vector3::z()).unwrap();
            model.add_element("crank_pin", j).unwrap();
            let j = RevoluteJoint::new(&n, rod, slider, wrist, Vector3::z()).unwrap();
            model.add_element("wrist_pin", j).unwrap();
        }
    }
    let slide = PrismaticJoint::new(&n, ground, slider, wrist, Vector3::x()).unwrap();
    model.add_element("slide", slide).unwrap();
    model
}

fn options(h: f64, t_end: f64) -> NsgaOptions {
    NsgaOptions {
        h,
        t_end,
        rho_inf: 0.8,
        tol: 1e-10,
        gravity: Vector3::new(0.0, -G, 0.0),
        // Full Newton: the iteration counts asserted below are those of Newton's method (the
        // thesis' solver); the default modified Newton is checked in tests/slider_crank.rs,
        // tests/beam_modes.rs and tests/custom_scheme.rs.
        jacobian_reuse: None,
        ..NsgaOptions::default()
    }
}

const JOINTS: [&str; 5] = ["main", "drive", "crank_pin", "wrist_pin", "slide"];

/// Slider history against the closed form over 1.25 revolutions, at a fine and a coarse step.
///
/// The mechanism has no free DOF (the driver fixes θ(t)), and NSGA enforces every constraint
/// exactly at position level (position correction) and velocity level (velocity jump) at every
/// step, so the slider must follow the closed form to the constraint tolerance whatever h.
#[test]
fn slider_follows_closed_form_and_constraints_hold() {
    check_motion(RodEnds::Spherical);
}

fn check_motion(ends: RodEnds) {
    let t_end = 1.25 * 2.0 * PI / OMEGA;
    // Full Newton, then the default modified Newton: the same exactness either way.
    for (h, reuse) in [
        (1e-3, None),
        (1e-2, None),
        (1e-3, NsgaOptions::default().jacobian_reuse),
        (1e-2, NsgaOptions::default().jacobian_reuse),
    ] {
        let mut model = slider_crank(ends);
        let opts = NsgaOptions {
            jacobian_reuse: reuse,
            ..options(h, t_end)
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let mut sink = MemorySink::default();
        let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
        let slider = model.node_id("slider").unwrap().index();
        let rod = model.node_id("rod").unwrap().index();

        let (mut err_x, mut err_v, mut rod_spin): (f64, f64, f64) = (0.0, 0.0, 0.0);
        for (t, nodes) in sink.time.iter().zip(&sink.nodes) {
            let (x, v) = slider_exact(*t);
            err_x = err_x.max((nodes[slider].x.x - x).abs());
            err_v = err_v.max((nodes[slider].v.x - v).abs());
            rod_spin = rod_spin.max(nodes[rod].omega.x.abs());
        }
        let mut worst_g: f64 = 0.0;
        let mut worst_gdot: f64 = 0.0;
        for j in JOINTS {
            let v = sink.channel(j, "violation").unwrap();
            worst_g = v.iter().map(|r| r[0]).fold(worst_g, f64::max);
            worst_gdot = v.iter().map(|r| r[1]).fold(worst_gdot, f64::max);
        }
        let drive_angle = sink.channel("drive", "angle").unwrap();
        let theta_end = drive_angle.last().unwrap()[0];
        eprintln!(
            "h {h:e}, reuse {reuse:?}, {} steps to t = {:.4} s (θ = {theta_end:.4} rad): max |x_s − x_exact| {err_x:.2e} m, \
             max |ẋ_s − ẋ_exact| {err_v:.2e} m/s, max |g| {worst_g:.2e}, max |g_q v + g_t| {worst_gdot:.2e}, \
             max |rod spin| {rod_spin:.1e} rad/s; Newton iterations max {:?}, mean {:.2?} \
             (smooth, position, velocity); factorizations {:?}; wall {:?}",
            summary.steps,
            summary.t,
            summary.max_iterations(),
            summary.mean_iterations(),
            summary.numeric_factorizations(),
            summary.wall
        );
        // More than one revolution.
        assert!(theta_end >= 2.0 * PI, "θ(T) = {theta_end}");
        // Issue requirement: constraints exact at position and velocity level, ≤ 1e-10
        // (m, rad; m/s, rad/s).
        assert!(
            worst_g <= 1e-10 && worst_gdot <= 1e-10,
            "{worst_g:e} {worst_gdot:e}"
        );
        // x_s is a function of the constraint values with sensitivity ≤ l/√(l² − r²) + 1 ≈ 2
        // per unit violation (lengths and r·angle), so ≤ 2e-10 m; 1e-9 m leaves round-off
        // margin and is independent of h — an O(h²) integration error would be ~1e-3 m at
        // h = 1e-2.
        assert!(err_x <= 1e-9, "slider position error {err_x:e} m");
        // Same argument at velocity level (velocity jump), ω-scaled: 1e-9·ω ≈ 6e-9 m/s → 1e-8.
        assert!(err_v <= 1e-8, "slider velocity error {err_v:e} m/s");
        // The rod's free spin about its symmetry axis starts at 0 and has no torque about that
        // axis (both ball reactions and the weight act through it): it stays at round-off.
        assert!(rod_spin <= 1e-9, "rod spin {rod_spin:e} rad/s");
        // Newton from the generalized-α predictor: the smooth subproblem is nonlinear only
        // through O(h) rotation increments, the corrections start O(h³) from the solution;
        // a few iterations each. 5 flags a lost quadratic convergence.
        let smooth = summary.stage("smooth");
        if reuse.is_none() {
            assert!(summary.max_iterations().iter().all(|&i| i <= 5));
        } else {
            // Modified Newton: fewer smooth factorizations than steps, and the corrections
            // (full Newton) keep their few iterations.
            assert!(smooth.numeric_factorizations < summary.steps, "{smooth:?}");
            assert!(summary.max_iterations()[1..].iter().all(|&i| i <= 5));
        }
        assert_eq!(summary.symbolic_factorizations(), [1, 1, 1]);
    }
}

/// The textbook joint set (revolute at both rod ends + prismatic) is redundant in 3-D (3 of its
/// 21 rows are dependent on 18 unknowns): the exact saddle-point matrix is singular. The solver
/// regularizes only the Jacobian's multiplier block, so the redundant model moves exactly as
/// the non-redundant one (the redundant multipliers are split along the Newton path).
#[test]
fn redundant_all_revolute_model_follows_the_same_motion() {
    check_motion(RodEnds::Revolute);
}
