//! Tests of the beam element.

use super::element::*;
use super::*;
use crate::test_support::param_error;
use nalgebra::{DMatrix, DVector};
use saltus_core::fd::{check_hessian, eval_local, test_cx, LocalFixture, Rng};
use saltus_core::lie::{
    inv_tangent_coefficients, inv_tangent_derivative, inv_tangent_matrix, tangent_coefficients,
    tangent_derivative, tangent_matrix, SERIES_ANGLE,
};
use saltus_core::Level;

const ALL_LEVELS: [Level; 4] = [
    Level::Smooth,
    Level::Position,
    Level::Velocity,
    Level::Static,
];

/// Balanced section (every stiffness O(1..10)) so that no Hessian term is masked by a
/// larger one in the relative FD error.
fn balanced() -> BeamSpec {
    BeamSpec {
        youngs_modulus: 10.0,
        shear_modulus: Some(4.0),
        area: 0.9,
        shear_area_2: Some(0.7),
        shear_area_3: Some(0.5),
        i2: 0.35,
        i3: 0.25,
        torsion_constant: Some(0.45),
        rho: 3.0,
        alpha: Some(0.3),
        beta: Some(0.2),
        ..BeamSpec::default()
    }
}

fn random_beam(rng: &mut Rng, spec: &BeamSpec) -> Beam {
    let mut initial = [NodeState::default(); 2];
    for s in &mut initial {
        *s = NodeState::at(rng.vec3(1.0), rng.rotation());
    }
    let section = spec.section("t").unwrap();
    Beam::from_section("t", [NodeId(0), NodeId(1)], &initial, &section).unwrap()
}

fn random_states(rng: &mut Rng) -> [NodeState; 2] {
    let mut s = [NodeState::default(); 2];
    for n in &mut s {
        *n = NodeState::at(rng.vec3(1.0), rng.rotation());
        n.v = rng.vec3(1.0);
        n.omega = rng.vec3(1.0);
    }
    s
}

fn perturbed(nodes: &[NodeState; 2], j: usize, eps: f64) -> [NodeState; 2] {
    let mut out = *nodes;
    let (i, k) = (j / 6, j % 6);
    if k < 3 {
        out[i].x[k] += eps;
    } else {
        out[i].r = lie::perturb(&out[i].r, &Vector3::ith(k - 3, eps));
    }
    out
}

#[test]
fn coefficients_match_lie_and_their_derivatives() {
    let mut rng = Rng::new(3);
    // Both sides of the series switch, small and large angles.
    for phi in [0.0, 1e-7, 1e-3, 0.3, 0.4999999, 0.5000001, 1.2, 2.5, 3.1] {
        let psi = if phi == 0.0 {
            Vector3::zeros()
        } else {
            rng.vec3(1.0).normalize() * phi
        };
        let kt = tangent_coefficients(phi);
        let ki = inv_tangent_coefficients(phi);
        // lie.rs uses a different (first-order) small-angle switch at 1e-6: agreement to
        // its truncation error φ²/6 ≤ 2e-13 and round-off.
        assert!((tangent_matrix(&psi, &kt) - lie::tangent(&psi)).amax() < 1e-12);
        assert!((inv_tangent_matrix(&psi, &ki) - lie::tangent_inv(&psi)).amax() < 1e-12);
        let w = rng.vec3(1.0);
        let eps = 1e-6;
        let mut dt = Matrix3::zeros();
        let mut di = Matrix3::zeros();
        for j in 0..3 {
            let e = Vector3::ith(j, eps);
            let (p, m) = (psi + e, psi - e);
            let fp = tangent_matrix(&p, &tangent_coefficients(p.norm())) * w;
            let fm = tangent_matrix(&m, &tangent_coefficients(m.norm())) * w;
            dt.set_column(j, &((fp - fm) / (2.0 * eps)));
            let gp = inv_tangent_matrix(&p, &inv_tangent_coefficients(p.norm())) * w;
            let gm = inv_tangent_matrix(&m, &inv_tangent_coefficients(m.norm())) * w;
            di.set_column(j, &((gp - gm) / (2.0 * eps)));
        }
        // Central differences: truncation O(ε²) ≈ 1e-12, round-off ≈ 1e-16/ε = 1e-10.
        assert!(
            (dt - tangent_derivative(&psi, &w, &kt)).amax() < 1e-8,
            "T' at {phi}"
        );
        assert!(
            (di - inv_tangent_derivative(&psi, &w, &ki)).amax() < 1e-8,
            "T⁻¹' at {phi}"
        );
    }
    // Continuity of every coefficient across the series switch (relative 1e-12).
    let (a, b) = (
        tangent_coefficients(SERIES_ANGLE * (1.0 - 1e-12)),
        tangent_coefficients(SERIES_ANGLE * (1.0 + 1e-12)),
    );
    for k in 0..6 {
        assert!(
            (a[k] - b[k]).abs() < 1e-12 * (1.0 + a[k].abs()),
            "T coefficient {k}"
        );
    }
    let (a, b) = (
        inv_tangent_coefficients(SERIES_ANGLE * (1.0 - 1e-12)),
        inv_tangent_coefficients(SERIES_ANGLE * (1.0 + 1e-12)),
    );
    for k in 0..4 {
        assert!(
            (a[k] - b[k]).abs() < 1e-12 * (1.0 + a[k].abs()),
            "T⁻¹ coefficient {k}: {} {}",
            a[k],
            b[k]
        );
    }
}

#[test]
fn strain_gradient_and_second_variation_match_finite_differences() {
    let mut rng = Rng::new(17);
    let spec = balanced();
    for _ in 0..6 {
        let beam = random_beam(&mut rng, &spec);
        let nodes = random_states(&mut rng);
        let kin = Kin::new(&beam, &nodes).unwrap();
        let mut p = Mat12::identity();
        for i in 0..2 {
            p.fixed_view_mut::<3, 3>(6 * i + 3, 6 * i + 3)
                .copy_from(&beam.offset_mat[i].transpose());
        }
        let b_node = kin.b * p;
        let s = Vector6::from_fn(|_, _| rng.uniform());
        let a_node = Vec12::from_fn(|_, _| rng.uniform());
        let a_sec = p * a_node;
        let second = kin.second(&s, &a_sec) * p;
        let eps = 1e-6;
        for j in 0..12 {
            let kp = Kin::new(&beam, &perturbed(&nodes, j, eps)).unwrap();
            let km = Kin::new(&beam, &perturbed(&nodes, j, -eps)).unwrap();
            let de = (kp.strain - km.strain) / (2.0 * eps);
            assert!(
                (de - b_node.column(j)).amax() < 1e-8,
                "B column {j}: {de} vs {}",
                b_node.column(j)
            );
            let fp = s.dot(&(kp.b * p * a_node));
            let fm = s.dot(&(km.b * p * a_node));
            let d2 = (fp - fm) / (2.0 * eps);
            assert!(
                (d2 - second[j]).abs() < 1e-7,
                "second column {j}: {d2} vs {}",
                second[j]
            );
        }
    }
}

/// The vector forms of the strain rates and of the generalized forces (`Strain::rate`,
/// `Strain::force`, used for every residual) equal the products with `B` (whose columns are
/// checked against finite differences above) to round-off, at random large rotations.
#[test]
fn vector_forms_equal_the_products_with_b() {
    let mut rng = Rng::new(29);
    let spec = balanced();
    for _ in 0..6 {
        let beam = random_beam(&mut rng, &spec);
        let nodes = random_states(&mut rng);
        let kin = Kin::new(&beam, &nodes).unwrap();
        let v = Vec12::from_fn(|_, _| rng.uniform());
        let s = Vector6::from_fn(|_, _| rng.uniform());
        let (rate, b_v) = (kin.rate(&v), kin.b * v);
        let (force, bt_s) = (kin.force(&s), kin.b.transpose() * s);
        // Same terms, other association: round-off of O(|B|) entries (|B| ≈ 1/L ≤ 10).
        assert!(
            (rate - b_v).amax() < 1e-13 * (1.0 + b_v.amax()),
            "B v: {rate} vs {b_v}"
        );
        assert!(
            (force - bt_s).amax() < 1e-13 * (1.0 + bt_s.amax()),
            "Bᵀ s: {force} vs {bt_s}"
        );
    }
}

/// `Kin::second_all` (the geometric stiffness in one pass) equals the 12 directional second
/// variations `Kin::second(s, e_i)` (themselves checked against finite differences above) to
/// round-off, at random large rotations and O(1) section forces.
#[test]
fn all_directions_at_once_match_the_directional_second_variations() {
    let mut rng = Rng::new(23);
    let spec = balanced();
    for _ in 0..6 {
        let beam = random_beam(&mut rng, &spec);
        let nodes = random_states(&mut rng);
        let kin = Kin::new(&beam, &nodes).unwrap();
        let s = Vector6::from_fn(|_, _| rng.uniform());
        let all = kin.second_all(&s);
        for i in 0..12 {
            let row = kin.second(&s, &Vec12::ith(i, 1.0));
            // Same terms summed in another order: round-off of O(1) entries.
            let err = (all.row(i) - row).amax();
            assert!(err < 1e-12 * (1.0 + row.amax()), "row {i}: {err:e}");
        }
    }
}

/// FD Hessian checks at every level, several seeds, random large rotations (relative
/// rotations up to π) and O(1) strains, with both Rayleigh terms on.
///
/// Central differences with ε = 1e-6: truncation O(ε²)·|r'''| ≈ 1e-12 and round-off
/// ≈ 1e-16·|r|/ε ≈ 1e-9 for |r| ≈ 10, so 1e-6 relative to the largest entry leaves a
/// wide margin yet catches any missing term of relative size ≥ 1e-6 (the balanced section
/// keeps every term of comparable size).
#[test]
fn hessians_match_finite_differences_at_every_level() {
    let mut worst: f64 = 0.0;
    for (spec_name, spec) in [
        ("balanced", balanced()),
        (
            "steel-like",
            BeamSpec::circular(2.0e3, 0.3, 7.85, 0.1).with_rayleigh(0.5, 0.01),
        ),
        ("ratio", balanced().with_damping_ratio(0.05, 2.0)),
    ] {
        for seed in 1..=8u64 {
            let mut rng = Rng::new(100 + seed);
            let beam = if seed % 4 == 0 {
                // Node frames = section frames: the `aligned` path.
                let initial = [
                    NodeState::at(Vector3::zeros(), UnitQuaternion::identity()),
                    NodeState::at(Vector3::new(0.8, 0.0, 0.0), UnitQuaternion::identity()),
                ];
                let b = Beam::from_section(
                    "t",
                    [NodeId(0), NodeId(1)],
                    &initial,
                    &spec.section("t").unwrap(),
                )
                .unwrap();
                assert!(b.aligned);
                b
            } else {
                random_beam(&mut rng, &spec)
            };
            for level in ALL_LEVELS {
                let fx = LocalFixture::random(
                    &[NodeKind::Frame, NodeKind::Frame],
                    0,
                    0,
                    0.3,
                    &mut Rng::new(seed),
                );
                let rep = check_hessian(&beam, &test_cx(level), &fx, 1e-6).unwrap();
                assert!(
                    rep.relative_error() < 1e-6,
                    "{spec_name} {level} seed {seed}: rel. error {:e} at {:?}\nanalytic {}\nnumeric {}",
                    rep.relative_error(),
                    rep.worst,
                    rep.analytic,
                    rep.numeric
                );
                worst = worst.max(rep.relative_error());
            }
        }
    }
    eprintln!("beam max FD relative error {worst:e}");
}

/// The internal-force tangents alone (damped, unit weights): at the dynamic levels the
/// configuration tangent is scaled by `h β/γ` or `h²/2` next to the mass matrix, so this
/// checks the damping and geometric terms at full size.
#[test]
fn internal_force_tangents_match_finite_differences() {
    let mut worst: f64 = 0.0;
    for seed in 1..=8u64 {
        let mut rng = Rng::new(200 + seed);
        let beam = random_beam(&mut rng, &balanced());
        let nodes = random_states(&mut rng);
        let mut int = Tangents::default();
        beam.internal(&nodes, true, Some((Want::TANGENT, &mut int)))
            .unwrap();
        let eps = 1e-6;
        let scale = 1.0 + int.k.amax().max(int.c.amax());
        for j in 0..12 {
            let rp = beam.internal(&perturbed(&nodes, j, eps), true, None);
            let rm = beam.internal(&perturbed(&nodes, j, -eps), true, None);
            let dk = (rp.unwrap().r - rm.unwrap().r) / (2.0 * eps);
            let mut vp = nodes;
            let mut vm = nodes;
            let (i, k) = (j / 6, j % 6);
            if k < 3 {
                vp[i].v[k] += eps;
                vm[i].v[k] -= eps;
            } else {
                vp[i].omega[k - 3] += eps;
                vm[i].omega[k - 3] -= eps;
            }
            let rp = beam.internal(&vp, true, None).unwrap().r;
            let rm = beam.internal(&vm, true, None).unwrap().r;
            let dc = (rp - rm) / (2.0 * eps);
            let ek = (dk - int.k.column(j)).amax() / scale;
            let ec = (dc - int.c.column(j)).amax() / scale;
            // Same error budget as the level checks (ε = 1e-6 central differences).
            assert!(
                ek < 1e-7 && ec < 1e-7,
                "seed {seed} column {j}: {ek:e} {ec:e}"
            );
            worst = worst.max(ek).max(ec);
        }
    }
    eprintln!("beam internal-force tangent max FD relative error {worst:e}");
}

fn eval(beam: &Beam, level: Level, fx: &LocalFixture) -> (DVector<f64>, DMatrix<f64>) {
    eval_local(beam, &test_cx(level), fx, &fx.incr, &fx.mult).unwrap()
}

fn fixture_at(states: [NodeState; 2]) -> LocalFixture {
    let mut fx = LocalFixture::random(&[NodeKind::Frame; 2], 0, 0, 0.0, &mut Rng::new(1));
    for i in 0..2 {
        fx.prev[i] = states[i];
        fx.smooth[i] = states[i];
        fx.incr[i] = nalgebra::Vector6::zeros();
    }
    fx
}

#[test]
fn stress_free_initially_and_objective_under_rigid_motion() {
    let mut rng = Rng::new(5);
    let spec = balanced();
    for _ in 0..5 {
        let mut initial = [NodeState::default(); 2];
        for s in &mut initial {
            *s = NodeState::at(rng.vec3(1.0), rng.rotation());
        }
        let section = spec.section("t").unwrap();
        let beam = Beam::from_section("t", [NodeId(0), NodeId(1)], &initial, &section).unwrap();
        assert!(beam.strains(&initial).unwrap().amax() < 1e-15);
        // Superposed rigid motion: rotation G about the origin, translation c, and a rigid
        // velocity field v = c' + w × x, Ω_i = R_iᵀ w.
        let g = rng.rotation();
        let c = rng.vec3(2.0);
        let (cv, w) = (rng.vec3(1.0), rng.vec3(1.0));
        let mut moved = initial;
        for s in &mut moved {
            s.x = g * s.x + c;
            s.r = g * s.r;
            s.v = cv + w.cross(&s.x);
            s.omega = s.r.inverse() * w;
        }
        // Exact up to the round-off of log/exp of nearly identical frames (~1e-15).
        assert!(beam.strains(&moved).unwrap().amax() < 1e-13);
        assert!(beam.section_forces(&moved).unwrap().amax() < 1e-12);
        // Static residual vanishes; the smooth residual is the rigid inertia only.
        let (r, _) = eval(&beam, Level::Static, &fixture_at(moved));
        let wgt = beam.weight(&test_cx(Level::Static).gravity) * test_cx(Level::Static).t;
        assert!(
            (&r + DVector::from_column_slice(wgt.as_slice())).amax() < 1e-12,
            "{r}"
        );
    }
}

#[test]
fn linear_section_response() {
    // Straight beam along x, L = 2: small axial stretch u gives N = EA u/L, a small twist
    // φ of node 2 gives M₁ = GJ φ/L, a small transverse tip displacement w (no rotation)
    // gives the shear strain w/L (one-point integration: Γ₂ = w/L − θ/2 = w/L).
    let spec = balanced();
    let sec = spec.section("t").unwrap();
    let initial = [
        NodeState::at(Vector3::zeros(), UnitQuaternion::identity()),
        NodeState::at(Vector3::new(2.0, 0.0, 0.0), UnitQuaternion::identity()),
    ];
    let beam = Beam::from_section("t", [NodeId(0), NodeId(1)], &initial, &sec).unwrap();
    let d = 1e-7;
    let mut s = initial;
    s[1].x.x += d;
    let f = beam.section_forces(&s).unwrap();
    // Linearization error O(d²) = 1e-14.
    assert!((f[0] - sec.stiffness[0] * d / 2.0).abs() < 1e-12);
    let mut s = initial;
    s[1].r = lie::exp(&Vector3::new(d, 0.0, 0.0));
    let f = beam.section_forces(&s).unwrap();
    assert!((f[3] - sec.stiffness[3] * d / 2.0).abs() < 1e-12);
    let mut s = initial;
    s[1].x.y += d;
    let e = beam.strains(&s).unwrap();
    assert!((e[1] - d / 2.0).abs() < 1e-13, "{e}");
    // Bending about axis 3 by end rotations θ at node 2: K₃ = θ/L, Γ₂ = −θ/2.
    let mut s = initial;
    s[1].r = lie::exp(&Vector3::new(0.0, 0.0, d));
    let e = beam.strains(&s).unwrap();
    assert!(
        (e[5] - d / 2.0).abs() < 1e-13 && (e[1] + d / 2.0).abs() < 1e-13,
        "{e}"
    );
}

#[test]
fn rigid_motion_kinetic_energy_and_mass() {
    let spec = balanced();
    let sec = spec.section("t").unwrap();
    let l = 1.5;
    let initial = [
        NodeState::at(Vector3::new(-0.5 * l, 0.0, 0.0), UnitQuaternion::identity()),
        NodeState::at(Vector3::new(0.5 * l, 0.0, 0.0), UnitQuaternion::identity()),
    ];
    let beam = Beam::from_section("t", [NodeId(0), NodeId(1)], &initial, &sec).unwrap();
    let m = sec.line_mass * l;
    assert!((beam.mass() - m).abs() < 1e-14);
    // Rigid rotation about e_z through the centre at rate w: T = ½ (ρ A L³/12 + ρ I₃ L) w².
    let w = 0.7;
    let mut s = initial;
    for n in &mut s {
        n.v = Vector3::z().cross(&n.x) * w;
        n.omega = Vector3::new(0.0, 0.0, w);
    }
    let os = OutputState {
        t: 0.0,
        nodes: &s,
        kinds: &[NodeKind::Frame; 2],
        mult_smooth: &[],
        mult_position: &[],
        mult_velocity: &[],
        k: [1.0; 3],
        h: 1e-3,
        gravity: Vector3::new(0.0, 0.0, -9.81),
    };
    let e = beam.energy(&os);
    let exact = 0.5 * (m * l * l / 12.0 + sec.line_inertia[2] * l) * w * w;
    assert!(
        (e.kinetic - exact).abs() < 1e-14,
        "{} vs {exact}",
        e.kinetic
    );
    // Spin about the axis: ½ ρ (I₂ + I₃) L w²; gravity potential −m g·x_c = 0 (centre at 0).
    let mut spin = s;
    for n in &mut spin {
        n.v = Vector3::zeros();
        n.omega = Vector3::new(w, 0.0, 0.0);
    }
    let os = OutputState { nodes: &spin, ..os };
    let e = beam.energy(&os);
    assert!((e.kinetic - 0.5 * sec.line_inertia[0] * l * w * w).abs() < 1e-14);
    assert!(e.potential.abs() < 1e-14);
}

#[test]
fn outputs_and_elastic_energy() {
    let spec = balanced();
    let sec = spec.section("t").unwrap();
    let initial = [
        NodeState::at(Vector3::zeros(), UnitQuaternion::identity()),
        NodeState::at(Vector3::new(0.0, 1.0, 0.0), UnitQuaternion::identity()),
    ];
    let beam = Beam::from_section("t", [NodeId(0), NodeId(1)], &initial, &sec).unwrap();
    let mut s = initial;
    s[1].x.y = 1.01;
    let os = OutputState {
        t: 0.0,
        nodes: &s,
        kinds: &[NodeKind::Frame; 2],
        mult_smooth: &[],
        mult_position: &[],
        mult_velocity: &[],
        k: [1.0; 3],
        h: 1e-3,
        gravity: Vector3::zeros(),
    };
    let mut out = vec![0.0; 12];
    let specs = beam.outputs();
    assert_eq!(specs.iter().map(|o| o.len).sum::<usize>(), 12);
    beam.write_outputs(&os, &mut out);
    // Axial stretch 1 %: N₁ = EA·0.01, strain 0.01, energy ½ L EA ε².
    assert!((out[0] - sec.stiffness[0] * 0.01).abs() < 1e-12, "{out:?}");
    assert!((out[6] - 0.01).abs() < 1e-14);
    assert!(out[1..6].iter().all(|v| v.abs() < 1e-12));
    let e = beam.energy(&os);
    assert!((e.potential - 0.5 * sec.stiffness[0] * 1e-4).abs() < 1e-14);
}

fn def(params: serde_json::Value) -> ElementDef {
    ElementDef {
        name: "b".into(),
        type_name: "beam".into(),
        nodes: vec!["a".into(), "b".into()],
        parameters: params,
    }
}

#[test]
fn build_validates_parameters() {
    let nodes = [
        NodeDef::frame("a", Vector3::zeros()),
        NodeDef::frame("b", Vector3::new(1.0, 0.0, 0.0)),
        NodeDef::point("p", Vector3::zeros()),
        NodeDef::frame("c", Vector3::zeros()),
    ];
    let cx = BuildCx::new(&nodes);
    let ok = build_beam(&def(beam_example()), &cx).unwrap();
    assert!((ok.mass() - 800.0 * 1e-2).abs() < 1e-12);
    let with = |k: &str, v: serde_json::Value| {
        let mut p = beam_example();
        p.as_object_mut().unwrap().insert(k.into(), v);
        p
    };
    let without = |k: &str| {
        let mut p = beam_example();
        p.as_object_mut().unwrap().remove(k);
        p
    };
    let bad = |p| param_error(build_beam(&def(p), &cx));
    assert_eq!(bad(with("E", serde_json::json!(-1.0))), "E");
    assert_eq!(bad(with("G", serde_json::json!(1e6))), "G");
    assert_eq!(bad(without("nu")), "G");
    assert_eq!(bad(with("nu", serde_json::json!(0.7))), "nu");
    assert_eq!(bad(with("A", serde_json::json!(0.0))), "A");
    assert_eq!(bad(with("I2", serde_json::json!(0.0))), "I2");
    assert_eq!(bad(with("J", serde_json::json!(-2.0))), "J");
    assert_eq!(bad(with("rho", serde_json::json!(-1.0))), "rho");
    assert_eq!(bad(with("alpha", serde_json::json!(-1.0))), "alpha");
    assert_eq!(
        bad(with("damping_ratio", serde_json::json!(0.01))),
        "damping_frequency"
    );
    assert_eq!(
        bad(with("orientation", serde_json::json!([2.0, 0.0, 0.0]))),
        "orientation"
    );
    assert_eq!(
        bad(with("shear_coefficient", serde_json::json!(0.0))),
        "shear_coefficient"
    );
    let mut p = without("alpha");
    p.as_object_mut().unwrap().remove("beta");
    let p2 = {
        let mut q = p.clone();
        q.as_object_mut()
            .unwrap()
            .insert("damping_ratio".into(), serde_json::json!(0.01));
        q.as_object_mut()
            .unwrap()
            .insert("damping_frequency".into(), serde_json::json!(50.0));
        q
    };
    assert!(build_beam(&def(p2.clone()), &cx).is_ok());
    let mut p3 = p2.clone();
    p3.as_object_mut()
        .unwrap()
        .insert("beta".into(), serde_json::json!(0.1));
    assert_eq!(bad(p3), "damping_ratio");
    // β = ξ/(π f).
    let sec: BeamSpec = serde_json::from_value(p2).unwrap();
    let s = sec.section("b").unwrap();
    assert!((s.beta - 0.01 / (PI * 50.0)).abs() < 1e-18);
    // Coincident nodes, wrong node kind, unknown field.
    let coincident = ElementDef {
        nodes: vec!["a".into(), "c".into()],
        ..def(beam_example())
    };
    assert_eq!(param_error(build_beam(&coincident, &cx)), "nodes");
    let point = ElementDef {
        nodes: vec!["a".into(), "p".into()],
        ..def(beam_example())
    };
    assert!(matches!(
        build_beam(&point, &cx),
        Err(BuildError::NodeKind { .. })
    ));
    assert!(matches!(
        build_beam(&def(with("EE", serde_json::json!(1.0))), &cx),
        Err(BuildError::Parameters { .. })
    ));
}

#[test]
fn default_section_frame() {
    let sec = balanced().section("t").unwrap();
    // In the x–y plane: axis 3 = e_z.
    let f = sec.frame("t", &Vector3::new(1.0, 1.0, 0.0)).unwrap();
    assert!((f.column(2) - Vector3::z()).norm() < 1e-15);
    // Vertical: axis 2 = e_y × e_z = e_x.
    let f = sec.frame("t", &Vector3::new(0.0, 0.0, 2.0)).unwrap();
    assert!((f.column(1) - Vector3::x()).norm() < 1e-15);
    let sec = balanced()
        .with_orientation(Vector3::new(1.0, 0.0, 1.0))
        .section("t")
        .unwrap();
    let f = sec.frame("t", &Vector3::new(1.0, 0.0, 0.0)).unwrap();
    assert!((f.column(1) - Vector3::z()).norm() < 1e-15);
    assert!((f.determinant() - 1.0).abs() < 1e-15);
}

#[test]
fn builder_creates_nodes_and_elements() {
    let mut model = Model::new();
    let a = model
        .add_node(NodeDef::frame("a", Vector3::zeros()).fixed())
        .unwrap();
    let b = model
        .add_node(
            NodeDef::frame("b", Vector3::new(0.0, 3.0, 0.0))
                .rotation(lie::exp(&Vector3::new(0.3, -0.2, 1.0)))
                .velocity(Vector3::new(0.3, 0.0, 0.0))
                .angular_velocity(Vector3::new(0.0, 0.0, -0.1)),
        )
        .unwrap();
    let builder = BeamBuilder::new("rod", balanced());
    let line = builder.line(&mut model, a, b, 3).unwrap();
    assert_eq!(line.nodes.len(), 4);
    assert_eq!(line.elements.len(), 3);
    assert_eq!(line.nodes[0], a);
    assert_eq!(line.nodes[3], b);
    let n1 = &model.nodes()[line.nodes[1].index()];
    assert_eq!(n1.name, "rod_n1");
    assert!((n1.initial.x - Vector3::new(0.0, 1.0, 0.0)).norm() < 1e-15);
    assert!((n1.initial.v - Vector3::new(0.1, 0.0, 0.0)).norm() < 1e-15);
    assert!((n1.initial.omega_spatial() - Vector3::new(0.0, 0.0, -1.0 / 30.0)).norm() < 1e-15);
    // Node frame: body x along the beam.
    assert!((n1.initial.r * Vector3::x() - Vector3::y()).norm() < 1e-15);
    assert_eq!(model.element_names()[2], "rod_e3");
    // Code-first constructor on the same nodes: same element as the builder's.
    let direct = Beam::new(model.nodes(), line.nodes[2], b, &balanced()).unwrap();
    assert!((direct.length() - 1.0).abs() < 1e-15);
    assert_eq!(direct.rayleigh(), (0.3, 0.2));
    assert!(
        direct
            .strains(&[
                model.nodes()[line.nodes[2].index()].initial,
                model.nodes()[b.index()].initial
            ])
            .unwrap()
            .amax()
            < 1e-15
    );
    let p = model
        .add_node(NodeDef::point("p", Vector3::zeros()))
        .unwrap();
    assert!(matches!(
        Beam::new(model.nodes(), a, p, &balanced()),
        Err(BuildError::NodeKind { .. })
    ));
    // Every element stress-free, total mass ρ A L.
    let total: f64 = model.elements().iter().map(|e| e.mass()).sum();
    assert!((total - 3.0 * 0.9 * 3.0).abs() < 1e-12);
    // Duplicate names are rejected before anything is added.
    let count = model.nodes().len();
    assert!(matches!(
        builder.line(&mut model, a, b, 3),
        Err(BuildError::DuplicateName { .. })
    ));
    assert_eq!(model.nodes().len(), count);
    let line = BeamBuilder::new("free", balanced())
        .line_from_points(&mut model, Vector3::zeros(), Vector3::new(0.0, 0.0, 1.0), 2)
        .unwrap();
    assert_eq!(line.nodes.len(), 3);
    assert_eq!(model.nodes()[line.nodes[2].index()].name, "free_n2");
}

/// The nonzero entries the stage multiplies with (`Inertia::mass_entries`) are the dense mass
/// matrix's, entry for entry (a beam with section offsets: full 3 × 3 node inertias), so the
/// two paths of `core::stage`'s `M a` give the same result.
#[test]
fn mass_entries_are_the_mass_matrix() {
    let mut rng = Rng::new(11);
    let spec = balanced();
    let beam = random_beam(&mut rng, &spec);
    let kinds = [NodeKind::Frame; 2];
    let mut dense = DMatrix::zeros(12, 12);
    Inertia::mass_matrix(&beam, &kinds, &mut dense.as_view_mut());
    let mut from_entries = DMatrix::zeros(12, 12);
    let entries = Inertia::mass_entries(&beam).expect("a beam keeps its entries");
    for e in entries {
        assert_ne!(e.value, 0.0, "a zero entry kept: {e:?}");
        from_entries[(e.row, e.col)] += e.value;
    }
    assert_eq!(from_entries, dense);
    // Column-major order (the dense product's summation order).
    assert!(entries
        .windows(2)
        .all(|w| (w[0].col, w[0].row) < (w[1].col, w[1].row)));
    // Random node frames give section offsets `Q`, so the node inertias `Q J Qᵀ` are full:
    // 2 × 9 rotational entries, 2 × 3 translational diagonal ones and 2 × 3 couplings.
    assert_eq!(entries.len(), 30);
}

/// `bt_cb` gives nalgebra's `Bᵀ (C B)` to the bit (it only leaves out terms that are zero),
/// on random configurations with section offsets.
#[test]
fn strain_product_is_nalgebras() {
    let mut rng = Rng::new(5);
    let spec = balanced();
    for _ in 0..20 {
        let beam = random_beam(&mut rng, &spec);
        let kin = Kin::new(&beam, &random_states(&mut rng)).unwrap();
        let mut cb = kin.b;
        for r in 0..6 {
            let mut row = cb.row_mut(r);
            row *= 1.0 + rng.uniform();
        }
        // The structure the shortcut relies on: no curvature terms on the translations.
        for r in 3..6 {
            for j in [0, 1, 2, 6, 7, 8] {
                assert_eq!(kin.b[(r, j)], 0.0);
            }
        }
        let expected = kin.b.transpose() * cb;
        let got = super::element::bt_cb(&kin.b, &cb);
        assert_eq!(got, expected);
    }
}
