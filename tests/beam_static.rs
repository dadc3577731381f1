//! Static validation of the geometrically exact beam (`saltus::elements::beam`) with the
//! load-stepping solver: linear cantilever deflections against Timoshenko theory (with the
//! exact discretization error of one-point integration and its 1/n² rate), torsion, self-weight,
//! and the large-rotation roll-up of a cantilever into a full circle by an end moment.

use saltus::elements::beam::{BeamBuilder, BeamLine, BeamSpec};
use saltus::elements::force::NodalLoad;
use saltus::prelude::*;
use std::f64::consts::PI;

/// Steel, rectangular section 20 mm (axis 2) × 10 mm (axis 3), L = 1 m: slender (L/h = 100)
/// with distinct bending stiffnesses to check the section-axis convention.
const L: f64 = 1.0;
const E: f64 = 2.1e11;
const NU: f64 = 0.3;
const RHO: f64 = 7850.0;
const WIDTH: f64 = 0.02;
const HEIGHT: f64 = 0.01;

fn spec() -> BeamSpec {
    BeamSpec::rectangular(E, NU, RHO, WIDTH, HEIGHT)
}

/// Cantilever along +x clamped at the origin (fixed root node), `n` elements, with an optional
/// tip load (force \[N\], torque \[N m\], inertial frame). Returns the model and the line.
fn cantilever(n: usize, force: Vector3<f64>, torque: Vector3<f64>) -> (Model, BeamLine) {
    let mut model = Model::new();
    let root = model
        .add_node(NodeDef::frame("root", Vector3::zeros()).fixed())
        .unwrap();
    let tip = model
        .add_node(NodeDef::frame("tip", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    let line = BeamBuilder::new("beam", spec())
        .line(&mut model, root, tip, n)
        .unwrap();
    if force != Vector3::zeros() || torque != Vector3::zeros() {
        model
            .add_element("load", NodalLoad::on_frame(tip, force, torque).unwrap())
            .unwrap();
    }
    (model, line)
}

/// Newton tolerance of the static solves: the internal forces of a stiff beam cannot be
/// resolved below `EA ε_mach |x|/L_e` (positions are absolute coordinates; 4e-8 N here) while
/// the reference `Σ‖r_k‖` is O(10²) N, so the default 1e-10 sits at the round-off floor;
/// 1e-8 leaves a factor ~30 above it (tip deflections then to ~1e-11 m, 1e-6 relative).
const TOL: f64 = 1e-8;

fn no_gravity(load_steps: usize) -> StaticOptions {
    StaticOptions {
        load_steps,
        tol: TOL,
        gravity: Vector3::zeros(),
        ..Default::default()
    }
}

/// Load-stepped static equilibrium (`solve_static`, full Newton: no line search, the default
/// for statics — the first Newton iterate of a beam rotating by `Δθ` stretches the elements by
/// `O(Δθ²)`, so `‖r‖` first grows before converging quadratically). Returns the Newton
/// iterations per load step.
fn static_newton(model: &mut Model, load_steps: usize, gravity: Vector3<f64>) -> Vec<usize> {
    let opts = StaticOptions {
        load_steps,
        tol: TOL,
        gravity,
        ..Default::default()
    };
    solve_static(model, &opts).unwrap().iterations
}

/// Output channels `force`, `moment`, `curvature` of the first (root) element at the model's
/// initial (here: equilibrium) state.
fn root_outputs(model: &Model, line: &BeamLine) -> ([f64; 3], [f64; 3], [f64; 3]) {
    use saltus::core::OutputState;
    let e = model.element(line.elements[0]).unwrap();
    let nodes: Vec<NodeState> = e
        .nodes()
        .iter()
        .map(|id| model.nodes()[id.index()].initial)
        .collect();
    let os = OutputState {
        t: 0.0,
        nodes: &nodes,
        kinds: &[NodeKind::Frame; 2],
        mult_smooth: &[],
        mult_position: &[],
        mult_velocity: &[],
        k: [1.0; 3],
        h: 0.0,
        gravity: Vector3::zeros(),
    };
    let mut out = vec![0.0; e.outputs().iter().map(|o| o.len).sum()];
    e.write_outputs(&os, &mut out);
    let names: Vec<&str> = e.outputs().iter().map(|o| o.name).collect();
    assert_eq!(names, ["force", "moment", "strain", "curvature"]);
    let v = |k: usize| [out[3 * k], out[3 * k + 1], out[3 * k + 2]];
    (v(0), v(1), v(3))
}

/// Section constants: (EI₂, EI₃, κGA, GJ).
fn constants() -> (f64, f64, f64, f64) {
    let s = spec().section("t").unwrap();
    (
        s.stiffness[4],
        s.stiffness[5],
        s.stiffness[1],
        s.stiffness[3],
    )
}

/// Tip force P along y (bending about section axis 3 = e_z, shear along axis 2):
/// `w = P L³/(3 E I₃) + P L/(κ G A)` (Timoshenko). One-point integration stiffens the
/// linear-curvature element: the discrete tip deflection is exactly `w_n = w − P L³/(12 n² E I₃)`
/// (`P L³/4EI` bending for one element), an error decreasing as 1/n²; below 0.1 % with 20
/// elements.
#[test]
fn linear_cantilever_tip_force_converges_as_one_over_n_squared() {
    let (_, ei3, kga, _) = constants();
    // Small load: w/L ≈ 1e-5, geometric nonlinearity O((w/L)²) ≈ 1e-10 relative.
    let p = 1e-5 * 3.0 * ei3 / L.powi(3);
    let exact = p * L.powi(3) / (3.0 * ei3) + p * L / kga;
    let mut errors = Vec::new();
    println!("   n   w_tip [m]          rel. error   predicted −PL³/(12n²EI)/w   iterations");
    for n in [1usize, 2, 4, 8, 16, 20] {
        let (mut model, line) = cantilever(n, Vector3::new(0.0, p, 0.0), Vector3::zeros());
        let summary = solve_static(&mut model, &no_gravity(1)).unwrap();
        let tip = model.nodes()[line.nodes[n].index()].initial;
        let w = tip.x.y;
        let err = (w - exact) / exact;
        let predicted = -p * L.powi(3) / (12.0 * (n * n) as f64 * ei3) / exact;
        println!(
            "{n:>4}   {w:.10e}   {err:>10.4e}   {predicted:>10.4e}   {:?}",
            summary.iterations
        );
        // The discrete solution is the linear one-point-integrated Timoshenko solution to
        // round-off and O((w/L)²) nonlinearity: the error matches the closed form to 1e-6.
        assert!(
            (err - predicted).abs() < 1e-6 * predicted.abs(),
            "n = {n}: error {err:e}, predicted {predicted:e}"
        );
        // Out-of-plane components vanish.
        assert!(tip.x.z.abs() < 1e-12 * w && (tip.x.x - L).abs() < 1e-9 * L);
        assert!(summary.iterations[0] <= 3);
        errors.push((n, err));
        // Output channels of the root element (statically determinate): shear force P along
        // section axis 2, bending moment P (L − L_e/2) about axis 3 at the midpoint, axial and
        // torque zero; curvature M₃/EI₃.
        let (force, moment, curvature) = root_outputs(&model, &line);
        let le = L / n as f64;
        println!("      root element: force {force:?} N, moment {moment:?} N m");
        assert!((force[1] - p).abs() < 1e-6 * p, "{force:?}");
        assert!(
            (moment[2] - p * (L - 0.5 * le)).abs() < 1e-6 * p * L,
            "{moment:?}"
        );
        // Axial force: the fixed-direction load has the component P θ ≈ 1.5e-5 P along the
        // rotated element (geometric nonlinearity), plus round-off.
        assert!(force[0].abs() < 3e-5 * p && force[2].abs() < 1e-9 * p);
        assert!(moment[0].abs() < 1e-9 * p && moment[1].abs() < 1e-9 * p);
        assert!((curvature[2] - moment[2] / ei3).abs() < 1e-12);
    }
    // Rate: error(n)/error(2n) → 4 (exactly 4 for the bending part; the shear part is exact).
    for w in errors.windows(2) {
        let ((n1, e1), (n2, e2)) = (w[0], w[1]);
        if n2 == 2 * n1 {
            let rate = (e1 / e2).log2();
            println!("rate between n = {n1} and {n2}: {rate:.4}");
            assert!((rate - 2.0).abs() < 1e-3, "rate {rate}");
        }
    }
    let e20 = errors.last().unwrap().1;
    assert!(e20.abs() < 1e-3, "20 elements: {e20:e}");
}

/// Tip force along z bends about section axis 2 (E I₂, the 10 mm height), tip torque twists by
/// `T L/(G J)` (exact for any n: constant torque).
#[test]
fn out_of_plane_bending_and_torsion() {
    let (ei2, _, kga, gj) = constants();
    let n = 20;
    let p = 1e-5 * 3.0 * ei2 / L.powi(3);
    let (mut model, line) = cantilever(n, Vector3::new(0.0, 0.0, -p), Vector3::zeros());
    solve_static(&mut model, &no_gravity(1)).unwrap();
    let tip = model.nodes()[line.nodes[n].index()].initial;
    let s = spec().section("t").unwrap();
    let kga3 = s.stiffness[2];
    assert!((kga3 - kga).abs() < 1e-9 * kga, "square shear areas");
    let exact = -(p * L.powi(3) / (3.0 * ei2) + p * L / kga3);
    let discrete = exact + p * L.powi(3) / (12.0 * (n * n) as f64 * ei2);
    println!(
        "z-load: w = {:.8e}, Timoshenko {exact:.8e} (rel. error {:.3e})",
        tip.x.z,
        (tip.x.z - exact) / exact
    );
    assert!(((tip.x.z - discrete) / discrete).abs() < 1e-6);
    assert!(((tip.x.z - exact) / exact).abs() < 1e-3);

    let t = 1e-4 * gj / L;
    let (mut model, line) = cantilever(n, Vector3::zeros(), Vector3::new(t, 0.0, 0.0));
    solve_static(&mut model, &no_gravity(1)).unwrap();
    let tip = model.nodes()[line.nodes[n].index()].initial;
    let twist = tip.r.scaled_axis();
    println!(
        "twist {:.10e} rad, exact T L/GJ = {:.10e}",
        twist.x,
        t * L / gj
    );
    // Linear to O(θ²) = 1e-8 relative.
    assert!((twist.x - t * L / gj).abs() < 1e-7 * twist.x);
    assert!(twist.y.abs() < 1e-12 && twist.z.abs() < 1e-12);
}

/// Self-weight (gravity −z, consistent nodal weights `ρ A L_e g/2`) of the cantilever: tip
/// deflection `q L⁴/(8 E I₂) + q L²/(2 κ G A)` with `q = ρ A g`. For a uniform load the
/// element-load lumping and the one-point integration errors cancel at the nodes: the linear
/// discrete tip deflection is exact for every `n` (by hand for n = 1: the tip force `qL/2` gives
/// `qL/2·L³/(4EI) + qL/2·L/(κGA)`). Checked at 1/10 gravity (`w/L ≈ 5.5e-4`, 2.4e-7 from
/// linear theory)
/// and at full gravity (5.5 mm, where the geometrically exact solution departs from linear
/// theory by O((w/L)²) ≈ 2.4e-5).
#[test]
fn cantilever_under_self_weight() {
    let (ei2, _, kga, _) = constants();
    for (g, tol) in [(0.981, 1e-6), (9.81, 5e-5)] {
        let q = RHO * WIDTH * HEIGHT * g;
        let exact = -(q * L.powi(4) / (8.0 * ei2) + q * L * L / (2.0 * kga));
        for n in [1usize, 3, 10, 20] {
            let (mut model, line) = cantilever(n, Vector3::zeros(), Vector3::zeros());
            let its = static_newton(&mut model, 1, Vector3::new(0.0, 0.0, -g));
            let w = model.nodes()[line.nodes[n].index()].initial.x.z;
            let err = (w - exact) / exact;
            println!(
                "g = {g}: n = {n:>2}: w = {w:.10e} m, exact {exact:.10e}, rel. error {err:.3e}, \
                 iterations {its:?}"
            );
            assert!(err.abs() < tol, "n = {n}: {err:e}");
            assert!(its[0] <= 5, "{its:?}");
        }
    }
}

/// Tip position of a cantilever of `n` elements bent into a polygon with constant curvature
/// `κ` (every element turns by `κ L_e` and keeps its length): the exact discrete solution of the
/// pure-moment problem (zero axial and shear forces everywhere).
fn polygon_tip(n: usize, kappa: f64) -> Vector3<f64> {
    let le = L / n as f64;
    let turn = kappa * le;
    (0..n)
        .map(|k| {
            let a = (k as f64 + 0.5) * turn;
            Vector3::new(a.cos(), a.sin(), 0.0) * le
        })
        .sum()
}

/// End moment `M = 2π E I₃/L` about e_z rolls the cantilever into a full circle: the tip
/// returns to the root (to 1e-6 L; the polygon of the discrete solution closes exactly) with
/// its frame back to the identity. Half the moment gives a half circle, checked against the
/// exact polygon.
#[test]
fn cantilever_rolls_into_a_full_circle() {
    let (_, ei3, _, _) = constants();
    let n = 20;
    for (fraction, steps) in [(0.5, 10usize), (1.0, 20)] {
        let m = fraction * 2.0 * PI * ei3 / L;
        let (mut model, line) = cantilever(n, Vector3::zeros(), Vector3::new(0.0, 0.0, m));
        let start = std::time::Instant::now();
        let iterations = static_newton(&mut model, steps, Vector3::zeros());
        let tip = model.nodes()[line.nodes[n].index()].initial;
        let expected = polygon_tip(n, m / ei3);
        println!(
            "M = {fraction}·2πEI/L: tip {:?}, exact polygon {:?}, |Δ| = {:.3e} m; \
             iterations per load step {:?} ({:.2} s)",
            tip.x.as_slice(),
            expected.as_slice(),
            (tip.x - expected).norm(),
            iterations,
            start.elapsed().as_secs_f64()
        );
        assert!((tip.x - expected).norm() < 1e-9 * L);
        // Newton converges quadratically from the previous load step.
        assert!(iterations.iter().all(|&i| i <= 8), "{iterations:?}");
        if fraction == 1.0 {
            assert!(tip.x.norm() < 1e-6 * L, "tip at {:?}", tip.x.as_slice());
            // The tip frame turned by 2π: back to the identity.
            assert!(tip.r.angle() < 1e-6, "tip rotation {}", tip.r.angle());
        } else {
            // Semicircle: tip above the root at the diameter 2L/π (continuum value; the
            // polygon is within O(1/n²)).
            let diameter = 2.0 * L / PI;
            assert!(tip.x.x.abs() < 1e-9 && (tip.x.y - diameter).abs() < 2e-3 * diameter);
        }
    }
}
