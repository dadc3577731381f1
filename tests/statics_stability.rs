//! Stability monitoring of load-stepped statics (`solve_static`, `solve_static_with_sink`):
//! a pinned–pinned column loaded beyond its Euler load is reported unstable with the critical
//! load localized, below it stable; a stable spring model; the HDF5 record of a static run.

use hdf5_metno as hdf5;
use saltus::elements::beam::{BeamBuilder, BeamLine, BeamSpec};
use saltus::elements::body::PointMass;
use saltus::elements::force::{Attachment, NodalLoad, SpringDamper, TorsionalSpring};
use saltus::elements::joints::{PrismaticJoint, RevoluteJoint, SphericalJoint};
use saltus::io::Hdf5Sink;
use saltus::prelude::*;
use std::f64::consts::PI;

/// Steel column, L = 1 m, rectangular 20 mm (section axis 2 = y) × 10 mm (axis 3 = z): it
/// bends about y (deflection along z) with `EI₂ = E w h³/12 = 350 N m²`, four times stiffer
/// about z, so exactly one mode (the first in the x–z plane) buckles near `P_E`; the next ones
/// are the second in-plane mode at `4 P_E` and the out-of-plane one (ends held against
/// rotation about z by the pins) at `16 P_E`. A doubly symmetric section would buckle in two
/// planes at once: an even number of crossings, which the determinant sign cannot see.
const L: f64 = 1.0;
const E: f64 = 2.1e11;
const NU: f64 = 0.3;
const WIDTH: f64 = 0.02;
const HEIGHT: f64 = 0.01;
const ELEMENTS: usize = 40;

fn spec() -> BeamSpec {
    BeamSpec::rectangular(E, NU, 7850.0, WIDTH, HEIGHT).with_orientation(Vector3::y())
}

/// Weak-axis bending stiffness `EI₂` [N m²].
fn ei() -> f64 {
    E * WIDTH * HEIGHT.powi(3) / 12.0
}

/// Euler load of the pinned–pinned column, `P_E = π² EI/L²` [N].
fn euler_load() -> f64 {
    PI * PI * ei() / (L * L)
}

/// Critical load [N] of the discrete model itself (bending about section axis 2, deflection
/// along axis 3): `n` two-node elements with one-point
/// integration, shear stiffness `S = κ G A`, axial stiffness `EA`. The buckling mode of the
/// pinned–pinned chain is the nodal sinusoid `w_i = sin(π x_i/L)`, `θ_i ∝ cos(π x_i/L)`
/// (exact for the discrete equations, boundary nodes included by antisymmetric extension).
/// Per element, with `a = (2/h) sin(πh/2L)` and `c = cos(πh/2L)`, the second variation of
/// the energy about the straight state under axial force `−P` (pre-strain `ε = P/EA`) is
/// `½ EI a²Θ² + ½ S (aW − (1−ε)cΘ)² − P ((1−ε)cΘ·aW − (1−ε)c²Θ²/2)` (modal amplitudes
/// `W`, `Θ`); it becomes singular at `P (P + S (1−ε)) = S EI a²/c²`.
fn discrete_critical_load(spec: &BeamSpec, n: usize) -> f64 {
    let section = spec.section("column").unwrap();
    let (ea, s, ei) = (
        section.stiffness[0],
        section.stiffness[2],
        section.stiffness[4],
    );
    let h = L / n as f64;
    let x = PI * h / (2.0 * L);
    let p_d = ei * (2.0 * x.tan() / h).powi(2);
    // Fixed point on ε = P/EA (converges at once: ε ≈ 1e-4).
    let mut p = p_d;
    for _ in 0..20 {
        let b = s * (1.0 - p / ea);
        p = 0.5 * (-b + (b * b + 4.0 * s * p_d).sqrt());
    }
    p
}

/// End supports of a pinned–pinned column.
#[derive(Clone, Copy, PartialEq)]
enum Pins {
    /// Revolute joints about y: bending in the x–z plane only.
    Revolute,
    /// Spherical joints, the twist about the axis held by a torsional spring at x = 0: bending
    /// in both planes.
    Spherical,
}

/// Pinned–pinned column along x from the origin, of section `spec` with weak-axis bending
/// stiffness `ei` \[N m²\]: pins (`pins`) to a fixed ground node at x = 0 and, at x = L, to a
/// massless slider node that a prismatic joint lets move along x only. End load
/// `−ratio · π² ei/L²` along x at x = L and, as the imperfection, a lateral midspan force along
/// z that alone would deflect the midspan by `L/10000` (`Q = 48 EI (L/10⁴)/L³`). Both loads
/// scale with the load factor.
fn column_with(spec: &BeamSpec, ei: f64, ratio: f64, pins: Pins) -> (Model, BeamLine) {
    let mut model = Model::new();
    let g0 = model
        .add_node(NodeDef::frame("ground0", Vector3::zeros()).fixed())
        .unwrap();
    let g1 = model
        .add_node(NodeDef::frame("ground1", Vector3::new(L, 0.0, 0.0)).fixed())
        .unwrap();
    let slider = model
        .add_node(NodeDef::frame("slider", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    let a = model
        .add_node(NodeDef::frame("a", Vector3::zeros()))
        .unwrap();
    let b = model
        .add_node(NodeDef::frame("b", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    let line = BeamBuilder::new("column", spec.clone())
        .line(&mut model, a, b, ELEMENTS)
        .unwrap();
    let end = Vector3::new(L, 0.0, 0.0);
    let guide = PrismaticJoint::new(model.nodes(), g1, slider, end, Vector3::x()).unwrap();
    model.add_element("guide", guide).unwrap();
    match pins {
        Pins::Revolute => {
            let pin_a = RevoluteJoint::new(model.nodes(), g0, a, Vector3::zeros(), Vector3::y());
            model.add_element("pin_a", pin_a.unwrap()).unwrap();
            let pin_b = RevoluteJoint::new(model.nodes(), slider, b, end, Vector3::y());
            model.add_element("pin_b", pin_b.unwrap()).unwrap();
        }
        Pins::Spherical => {
            let pin_a = SphericalJoint::new(model.nodes(), g0, a, Vector3::zeros());
            model.add_element("pin_a", pin_a.unwrap()).unwrap();
            let r0 = [model.nodes()[0].initial.r, model.nodes()[3].initial.r];
            let twist = TorsionalSpring::new([g0, a], r0, Vector3::x(), 1e3, 0.0).unwrap();
            model.add_element("twist", twist).unwrap();
            let pin_b = SphericalJoint::new(model.nodes(), slider, b, end);
            model.add_element("pin_b", pin_b.unwrap()).unwrap();
        }
    }
    let p = ratio * PI * PI * ei / (L * L);
    let axial = NodalLoad::on_frame(b, Vector3::new(-p, 0.0, 0.0), Vector3::zeros()).unwrap();
    model.add_element("axial", axial).unwrap();
    let q = 48.0 * ei * (L / 1e4) / L.powi(3);
    let mid = line.nodes[ELEMENTS / 2];
    let lateral = NodalLoad::on_frame(mid, Vector3::new(0.0, 0.0, q), Vector3::zeros()).unwrap();
    model.add_element("imperfection", lateral).unwrap();
    (model, line)
}

/// The rectangular column of [`column_with`] on revolute pins (15 constraint rows).
fn column(ratio: f64) -> (Model, BeamLine) {
    column_with(&spec(), ei(), ratio, Pins::Revolute)
}

/// Ten load steps; Newton tolerance 1e-8: the internal forces of a stiff beam cannot be
/// resolved below `EA ε_mach |x|/L_e` (see tests/beam_static.rs), the default 1e-10 sits at
/// that round-off floor.
fn options() -> StaticOptions {
    StaticOptions {
        load_steps: 10,
        tol: 1e-8,
        gravity: Vector3::zeros(),
        ..Default::default()
    }
}

/// Midspan deflection along z [m].
fn midspan(model: &Model, line: &BeamLine) -> f64 {
    model.nodes()[line.nodes[ELEMENTS / 2].index()].initial.x.z
}

/// (a) At 1.03 P_E load control lands on the near-straight equilibrium, which is unstable:
/// the summary says so, and the localized critical load is the Euler load.
#[test]
fn column_beyond_euler_load_is_reported_unstable_at_the_euler_load() {
    let ratio = 1.03;
    let (mut model, line) = column(ratio);
    let summary = solve_static(&mut model, &options()).unwrap();
    let s = summary.stability.as_ref().expect("monitored by default");
    let w = midspan(&model, &line);
    let p_e = euler_load();
    let p_d = discrete_critical_load(&spec(), ELEMENTS);
    assert!((spec().section("c").unwrap().stiffness[4] - ei()).abs() < 1e-9 * ei());
    let p_c = s.critical_load_factor.unwrap() * ratio * p_e;
    eprintln!("{summary}");
    eprintln!(
        "midspan w = {w:.3e} m; P_c/P_E = {:.6}, discrete P_d/P_E = {:.6}, P_c/P_d − 1 = {:.2e}; \
         signs {:?}",
        p_c / p_e,
        p_d / p_e,
        p_c / p_d - 1.0,
        s.signs
    );
    // The point of the test: the equilibrium returned is the near-straight one (|w| of a few
    // L/10000 amplified by 1/|1 − 1.03|), not the buckled one (≈ 0.15 L at 1.03 P_E).
    assert!(w.abs() < 0.01 * L, "midspan deflection {w}");
    assert_eq!(s.constraints, 15, "three joints of five rows");
    assert!(s.initially_stable, "unloaded column: sign (−1)^15");
    assert!(!s.stable);
    assert_eq!(summary.is_stable(), Some(false));
    // Load factors k/10 carry 0.1k·1.03 P_E: 0.927 P_E at step 9, 1.03 P_E at step 10.
    assert_eq!(s.first_unstable_load_factor, Some(1.0));
    assert_eq!(s.critical_load_factor_bracket, Some((0.9, 1.0)));
    assert_eq!(s.sign_changes, 1);
    assert!(s.signs[..9].iter().all(|&x| x == s.reference_sign));
    assert_eq!(s.signs[9], -s.reference_sign);
    // The eigenvalue nearest zero changes sign across the bracket: the secant estimate.
    assert!(s.critical_load_factor_from_eigenvalues);
    assert!(s.smallest_eigenvalues[8] > 0.0 && s.smallest_eigenvalues[9] < 0.0);
    // Against the discrete model's own critical load: the secant of the eigenvalue nearest
    // zero between the near-straight equilibria at 0.927 and 1.03 P_E. That eigenvalue is
    // linear in the axial force up to O(P/κGA) ≈ 2.5e-4 of its variation (the bending/shear mix
    // of the discrete mode shifts with the load), and the lateral deflections (≲ 0.004 L) shift
    // it by ~ (π²/8)·3 (w/L)² ≈ 6e-5 of P_E (the cubic term of the elastica); their effect on
    // the secant root is below 1e-4 of P_d. 2e-4 leaves a factor 2.
    assert!(
        (p_c / p_d - 1.0).abs() < 2e-4,
        "P_c/P_d − 1 = {:e}",
        p_c / p_d - 1.0
    );
    // Against the Euler load: the discrete model is stiffer by π²/(6 n²) = 1.03e-3 (one-point
    // integration, n = 40) and by the pre-buckling shortening (P/EA ≈ 8e-5), softer by the
    // shear (P_E/κGA ≈ 2.5e-4), so P_d/P_E − 1 ≈ 8.6e-4 (computed above); with the 2e-4
    // above, P_c is within 1.06e-3 of P_E: 1.1e-3. The middle of the step bracket would be off
    // by 2.4e-2, the applied load by 3e-2.
    assert!(
        (p_c / p_e - 1.0).abs() < 1.1e-3,
        "P_c/P_E − 1 = {:e}",
        p_c / p_e - 1.0
    );
    let text = summary.to_string();
    assert!(text.contains("STABILITY LOST"), "{text}");
    assert!(text.contains("between load factors 0.9 and 1:"), "{text}");
}

/// (b) The same column at 0.97 P_E: every equilibrium on the path is stable.
#[test]
fn column_below_euler_load_is_reported_stable() {
    let (mut model, line) = column(0.97);
    let summary = solve_static(&mut model, &options()).unwrap();
    let s = summary.stability.as_ref().unwrap();
    let w = midspan(&model, &line);
    eprintln!("{summary}; midspan w = {w:.3e} m");
    assert!(s.stable && s.initially_stable);
    assert_eq!(s.sign_changes, 0);
    assert!(s.signs.iter().all(|&x| x == s.reference_sign));
    assert_eq!(s.first_unstable_load_factor, None);
    assert_eq!(s.critical_load_factor, None);
    assert!(s.smallest_eigenvalues.iter().all(|&m| m > 0.0));
    // The stability margin shrinks as the load nears the critical one: linearly in the load,
    // to (1 − 0.97·P_E/P_d) ≈ 3 % of its unloaded value.
    let ratio = s.smallest_eigenvalues[9] / s.reference_eigenvalue;
    assert!(ratio > 0.02 && ratio < 0.04, "{ratio}");
    // The imperfection is amplified by 1/(1 − 0.97) ≈ 33 toward the imperfection (positive):
    // the path is the stable natural branch. Linear amplification 33·L/10⁴ = 3.3e-3 m; the
    // discrete model's P_d > P_E makes it slightly smaller — between 2e-3 and 4e-3 m.
    assert!(w > 2e-3 && w < 4e-3, "midspan deflection {w}");
    assert!(summary.to_string().contains("stable: no eigenvalue"));
}

/// Switching the monitor off reports nothing and changes nothing in the equilibrium.
#[test]
fn monitoring_can_be_switched_off() {
    let (mut monitored, line) = column(1.03);
    let (mut plain, _) = column(1.03);
    solve_static(&mut monitored, &options()).unwrap();
    let opts = StaticOptions {
        stability: false,
        ..options()
    };
    let summary = solve_static(&mut plain, &opts).unwrap();
    assert_eq!(summary.stability, None);
    assert!(summary.to_string().contains("not monitored"));
    // Identical arithmetic along the path: the monitor only reads the converged states.
    for id in &line.nodes {
        let (a, b) = (
            monitored.nodes()[id.index()].initial,
            plain.nodes()[id.index()].initial,
        );
        assert_eq!(a.x, b.x);
        assert_eq!(a.r, b.r);
    }
}

/// (c) A point mass hanging from a spring (tests/statics.rs): stable, no constraint rows.
#[test]
fn hanging_spring_is_reported_stable() {
    let (m, k, l0) = (2.0, 500.0, 0.3);
    let mut model = Model::new();
    let p = model
        .add_node(NodeDef::point("p", Vector3::new(0.0, 0.0, -l0 - 0.01)))
        .unwrap();
    model
        .add_element("mass", PointMass::new(p, m).unwrap())
        .unwrap();
    let spring =
        SpringDamper::to_anchor(Attachment::point(p), Vector3::zeros(), k, 0.0, l0).unwrap();
    model.add_element("spring", spring).unwrap();
    let opts = StaticOptions {
        load_steps: 4,
        ..Default::default()
    };
    let summary = solve_static(&mut model, &opts).unwrap();
    let s = summary.stability.unwrap();
    assert_eq!(s.constraints, 0);
    assert_eq!(s.reference_sign, 1);
    assert!(s.initially_stable && s.stable);
    assert_eq!(s.signs, vec![1; 4]);
    assert_eq!(s.sign_changes, 0);
}

/// An inverted pendulum: a bar (mass `m`, centre of mass at height `l` above a hinge about
/// y) held upright by a torsional spring `k_t` at the hinge. Upright is an equilibrium at
/// every load factor (Newton stays there exactly), with reduced stiffness `k_t − λ m g l`:
/// stability is lost at exactly `λ_c = k_t/(m g l)`. The `−λ m g l` comes from the hinge
/// reaction through the constraint curvature (the weight itself is a constant force): the
/// multiplier terms of the saddle-point matrix are exercised, and the critical-load estimate
/// has no interpolation error (the state does not change).
fn inverted_pendulum(m: f64, l: f64, k_t: f64) -> Model {
    use saltus::elements::body::RigidBody;
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let bar = model
        .add_node(NodeDef::frame("bar", Vector3::new(0.0, 0.0, l)))
        .unwrap();
    let body = RigidBody::principal(bar, m, Vector3::new(0.16, 0.16, 1e-3)).unwrap();
    model.add_element("bar", body).unwrap();
    let hinge = RevoluteJoint::new(model.nodes(), ground, bar, Vector3::zeros(), Vector3::y());
    model.add_element("hinge", hinge.unwrap()).unwrap();
    let r0 = [model.nodes()[0].initial.r, model.nodes()[1].initial.r];
    let spring = TorsionalSpring::new([ground, bar], r0, Vector3::y(), k_t, 0.0).unwrap();
    model.add_element("spring", spring).unwrap();
    model
}

#[test]
fn inverted_pendulum_loses_stability_at_the_exact_load_factor() {
    let (m, l, k_t, g) = (3.0, 0.8, 17.0, 9.81);
    let opts = StaticOptions {
        load_steps: 10,
        gravity: Vector3::new(0.0, 0.0, -g),
        ..Default::default()
    };
    let mut model = inverted_pendulum(m, l, k_t);
    let summary = solve_static(&mut model, &opts).unwrap();
    eprintln!("{summary}");
    let s = summary.stability.unwrap();
    let exact = k_t / (m * g * l);
    assert!((0.7..0.8).contains(&exact), "the test's premise: {exact}");
    assert_eq!(s.constraints, 5);
    assert!(s.initially_stable && !s.stable);
    assert_eq!(s.critical_load_factor_bracket, Some((0.7, 0.8)));
    assert_eq!(s.first_unstable_load_factor, Some(0.8));
    assert_eq!(s.sign_changes, 1);
    // Upright is the same state at every load: the eigenvalue nearest zero (the hinge
    // rotation mode, (k_t − λ m g l)/(1 + l²) in the Euclidean metric of the unknowns) is
    // exactly linear in λ, so the secant is exact up to the multiplier regularization
    // (1e-10 relative) and the inverse iteration's 1e-8 relative settling of each eigenvalue
    // (≈ 1e-8·|μ|/|Δμ| ≈ 1e-8 in λ).
    assert!(s.critical_load_factor_from_eigenvalues);
    let c = s.critical_load_factor.unwrap();
    assert!((c - exact).abs() < 1e-7, "{c} vs {exact}");
    // Eigenvalues fall linearly with λ (stability margin).
    let mu = &s.smallest_eigenvalues;
    let slope = mu[1] - mu[0];
    for k in 2..10 {
        assert!(
            (mu[k] - mu[k - 1] - slope).abs() < 1e-6 * slope.abs(),
            "{mu:?}"
        );
    }

    // Without the eigenvalue, the estimate is the middle of the load-step bracket.
    let mut model = inverted_pendulum(m, l, k_t);
    let opts = StaticOptions {
        stability_eigen_iterations: 0,
        ..opts
    };
    let s = solve_static(&mut model, &opts).unwrap().stability.unwrap();
    assert!(!s.critical_load_factor_from_eigenvalues);
    assert!(s.smallest_eigenvalues.iter().all(|m| m.is_nan()));
    assert_eq!(s.critical_load_factor, Some(0.75));
}

/// A start that is itself unstable: a point held by four springs, in equilibrium without
/// load. A post from below is compressed by 1 cm (pushes up with 5 N; lateral stiffness
/// −5 N/0.29 m = −17.2 N/m in x and y), a spring to an anchor below pulls down with 5 N
/// (lateral +5 N/m), two opposite springs along x pull with 0.5 N each (lateral +0.5 N/m each
/// in y and z). Stiffnesses: x ≈ 2·500 − 12 > 0, z ≈ 1000 > 0, but y = −17.2 + 5 + 1 < 0:
/// one negative eigenvalue. The summary must not call the path "stable" without saying that
/// the start already was not.
#[test]
fn unstable_start_is_reported() {
    let k = 500.0;
    let mut model = Model::new();
    let p = model
        .add_node(NodeDef::point("p", Vector3::zeros()))
        .unwrap();
    let springs = [
        ("post", Vector3::new(0.0, 0.0, -0.29), 0.3),
        ("down", Vector3::new(0.0, 0.0, -1.0), 0.99),
        ("east", Vector3::new(1.0, 0.0, 0.0), 0.999),
        ("west", Vector3::new(-1.0, 0.0, 0.0), 0.999),
    ];
    for (name, anchor, l0) in springs {
        let spring = SpringDamper::to_anchor(Attachment::point(p), anchor, k, 0.0, l0);
        model.add_element(name, spring.unwrap()).unwrap();
    }
    let opts = StaticOptions {
        load_steps: 2,
        gravity: Vector3::zeros(),
        ..Default::default()
    };
    let summary = solve_static(&mut model, &opts).unwrap();
    eprintln!("{summary}");
    let s = summary.stability.clone().unwrap();
    assert!(!s.initially_stable);
    assert_eq!(s.reference_sign, -1, "one negative eigenvalue, m = 0");
    // For point nodes the Euclidean metric is the physical one: the eigenvalue nearest zero
    // is the lateral stiffness along y, Σ T/ℓ = −5/0.29 + 5/1 + 2·0.5/1 [N/m]. Inverse
    // iteration settles to 1e-8 relative; the spring forces carry round-off only.
    let expected = -5.0 / 0.29 + 5.0 + 1.0;
    assert!(
        (s.reference_eigenvalue - expected).abs() < 1e-7 * expected.abs(),
        "{} vs {expected}",
        s.reference_eigenvalue
    );
    // The start is an equilibrium, nothing is loaded: the path keeps the start's parity.
    assert!(s.stable);
    assert_eq!(s.signs, vec![-1, -1]);
    assert!(summary.to_string().contains("itself is not stable"));
}

/// A square section buckles in both bending planes at the same load: two eigenvalues cross
/// zero together and the determinant keeps its sign. The eigenvalue nearest zero still turns
/// negative, so the loss of stability is reported (and marked as an even crossing).
/// Supports: spherical joints at both ends (the far one on a slider along x), the rigid twist
/// about the axis held by a torsional spring at x = 0; imperfection along z only.
#[test]
fn square_column_double_crossing_is_seen_by_the_eigenvalue() {
    let side = 0.01;
    let spec = BeamSpec::rectangular(E, NU, 7850.0, side, side).with_orientation(Vector3::y());
    let ei = E * side.powi(4) / 12.0;
    let p_e = PI * PI * ei / (L * L);
    let ratio = 1.03;
    let (mut model, line) = column_with(&spec, ei, ratio, Pins::Spherical);

    let summary = solve_static(&mut model, &options()).unwrap();
    eprintln!("{summary}");
    let s = summary.stability.as_ref().unwrap();
    let w = midspan(&model, &line);
    let p_d = discrete_critical_load(&spec, ELEMENTS);
    let p_c = s.critical_load_factor.unwrap() * ratio * p_e;
    eprintln!(
        "w = {w:.3e} m; eigenvalues {:?}; P_c/P_d − 1 = {:.2e}",
        s.smallest_eigenvalues,
        p_c / p_d - 1.0
    );
    assert!(w.abs() < 0.01 * L, "near-straight equilibrium: {w}");
    assert!(s.initially_stable);
    assert_eq!(s.sign_changes, 0, "two crossings: the sign cannot see them");
    assert!(s.signs.iter().all(|&x| x == s.reference_sign));
    assert!(!s.stable && s.even_crossing());
    assert_eq!(s.critical_load_factor_bracket, Some((0.9, 1.0)));
    assert!(s.critical_load_factor_from_eigenvalues);
    // Same reasoning as for the rectangular column (the two modes have the same critical load
    // up to the imperfection's 6e-5): within 2e-4 of the discrete critical load.
    assert!(
        (p_c / p_d - 1.0).abs() < 2e-4,
        "P_c/P_d − 1 = {:e}",
        p_c / p_d - 1.0
    );
    assert!(summary.to_string().contains("even number of eigenvalues"));
}

/// (d) The static run of (a) written to HDF5: one record per load step after the initial
/// one, load factors as `/time`, the stability result as attributes of `/solver`.
#[test]
fn column_hdf5_has_records_and_stability_attributes() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("saltus_statics");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("column.h5");
    let (mut model, _) = column(1.03);
    let opts = options();
    let mut sink = Hdf5Sink::create(&path).unwrap();
    let summary = solve_static_with_sink(&mut model, &opts, &mut sink).unwrap();
    let s = summary.stability.as_ref().unwrap();

    let file = hdf5::File::open(&path).unwrap();
    let time: Vec<f64> = file.dataset("time").unwrap().read_raw().unwrap();
    let expected: Vec<f64> = (0..=10).map(|k| k as f64 / 10.0).collect();
    assert_eq!(
        time, expected,
        "record 0 = unloaded start, then one per load step"
    );
    let step: Vec<u64> = file.dataset("step").unwrap().read_raw().unwrap();
    assert_eq!(step, (0..=10).collect::<Vec<u64>>());
    let position = file.dataset("nodes/position").unwrap();
    assert_eq!(position.shape(), vec![11, model.nodes().len(), 3]);
    // The last record is the returned equilibrium.
    let x: Vec<f64> = position.read_raw().unwrap();
    let n = model.nodes().len();
    for (i, def) in model.nodes().iter().enumerate() {
        let r = &x[(10 * n + i) * 3..(10 * n + i) * 3 + 3];
        assert_eq!([def.initial.x.x, def.initial.x.y, def.initial.x.z], r);
    }
    let iterations: Vec<u64> = file
        .dataset("solver/iterations")
        .unwrap()
        .read_raw()
        .unwrap();
    let expected: Vec<u64> = std::iter::once(0)
        .chain(summary.iterations.iter().map(|&i| i as u64))
        .collect();
    assert_eq!(iterations, expected);
    let solver = file.group("solver").unwrap();
    let stable: bool = solver.attr("static_stable").unwrap().read_scalar().unwrap();
    assert!(!stable);
    let critical: f64 = solver
        .attr("static_critical_load_factor")
        .unwrap()
        .read_scalar()
        .unwrap();
    assert_eq!(critical, s.critical_load_factor.unwrap());
    let first: f64 = solver
        .attr("static_first_unstable_load_factor")
        .unwrap()
        .read_scalar()
        .unwrap();
    assert_eq!(first, 1.0);
    let last: f64 = solver
        .attr("static_last_stable_load_factor")
        .unwrap()
        .read_scalar()
        .unwrap();
    assert_eq!(last, 0.9);
    let changes: i64 = solver
        .attr("static_sign_changes")
        .unwrap()
        .read_scalar()
        .unwrap();
    assert_eq!(changes, 1);
    let text: hdf5::types::VarLenUnicode = solver
        .attr("static_summary")
        .unwrap()
        .read_scalar()
        .unwrap();
    assert!(text.as_str().contains("STABILITY LOST"));
    // Static reactions in the joints' smooth-reaction channel: the pin at x = 0 carries the
    // axial load 1.03 P_E (along x, the first rows of a revolute joint are the point rows).
    let force: Vec<f64> = file
        .dataset("elements/pin_a/force")
        .unwrap()
        .read_raw()
        .unwrap();
    let fx = force[10 * 3];
    eprintln!("pin_a force at the last step: {:?}", &force[30..33]);
    assert!(
        (fx.abs() - 1.03 * euler_load()).abs() < 1e-6 * euler_load(),
        "{fx}"
    );
}
