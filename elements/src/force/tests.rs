use super::nodal_load::nodal_load_example;
use super::torsional_spring::torsional_spring_example;
use super::*;
use crate::test_support::param_error;
use nalgebra::{DMatrix, DVector, Vector6};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use saltus_core::fd::{check_hessian, eval_local, evaluate, test_cx, LocalFixture, Rng};
use saltus_core::registry::ElementDef;
use saltus_core::stage::participates;
use saltus_core::{
    BuildCx, BuildError, Element, ElementError, Level, LocalState, NodeDef, NodeId, OutputState,
    StepCx,
};
use std::f64::consts::PI;

/// Central differences with ε = 1e-6: truncation O(ε²)·|r'''| ≈ 1e-12 and round-off
/// ≈ 1e-16·|r|/ε ≈ 1e-10 (≈ 1e-8 for the stiff springs here, |r| ≈ 1e2; observed errors
/// scale as ε² for large ε and 1/ε for small ε, as expected of an exact Hessian), so 1e-6
/// leaves a wide margin yet catches any missing Hessian term of relative size ≥ 1e-6.
const FD_TOL: f64 = 1e-6;
const ALL_LEVELS: [Level; 4] = [
    Level::Smooth,
    Level::Position,
    Level::Velocity,
    Level::Static,
];

/// FD-check every level with several seeds; returns the worst relative error.
fn fd_check(e: &dyn Element, kinds: &[NodeKind], seeds: std::ops::Range<u64>) -> f64 {
    let mut worst: f64 = 0.0;
    for level in ALL_LEVELS {
        assert!(participates(e, level));
        for seed in seeds.clone() {
            let fx = LocalFixture::random(kinds, 0, 0, 0.3, &mut Rng::new(seed));
            let rep = check_hessian(e, &test_cx(level), &fx, 1e-6).unwrap();
            assert!(
                rep.relative_error() < FD_TOL,
                "{} {level} seed {seed}: rel. error {:e} at {:?}\nanalytic {}\nnumeric {}",
                e.type_name(),
                rep.relative_error(),
                rep.worst,
                rep.analytic,
                rep.numeric
            );
            worst = worst.max(rep.relative_error());
        }
    }
    worst
}

fn eval(e: &dyn Element, level: Level, fx: &LocalFixture) -> (DVector<f64>, DMatrix<f64>) {
    eval_local(e, &test_cx(level), fx, &fx.incr, &fx.mult).unwrap()
}

/// A fixture whose prev, smooth and current states are all `states` (zero increments).
fn fixture(states: &[NodeState], kinds: &[NodeKind]) -> LocalFixture {
    let mut fx = LocalFixture::random(kinds, 0, 0, 0.0, &mut Rng::new(1));
    for (k, s) in states.iter().enumerate() {
        fx.prev[k] = *s;
        fx.smooth[k] = *s;
        fx.incr[k] = Vector6::zeros();
    }
    fx
}

#[test]
fn nodal_load_hessians_match_finite_differences() {
    let f = Vector3::new(1.0, -2.0, 0.5);
    let m = Vector3::new(0.3, 0.1, -0.2);
    let frame = NodalLoad::on_frame(NodeId(0), f, m).unwrap();
    let mut worst = fd_check(&frame, &[NodeKind::Frame], 1..6);
    worst = worst.max(fd_check(
        &frame.clone().ramped(0.5).unwrap(),
        &[NodeKind::Frame],
        1..6,
    ));
    worst = worst.max(fd_check(
        &NodalLoad::on_point(NodeId(0), f).unwrap(),
        &[NodeKind::Point],
        1..6,
    ));
    eprintln!("nodal_load max FD relative error {worst:e}");
}

#[test]
fn spring_damper_hessians_match_finite_differences() {
    let o1 = Vector3::new(0.1, -0.2, 0.05);
    let o2 = Vector3::new(-0.3, 0.15, 0.2);
    let (k, c, l0) = (50.0, 0.8, 0.7);
    let f = |n| Attachment::frame(NodeId(n), if n == 0 { o1 } else { o2 });
    let p = |n| Attachment::point(NodeId(n));
    use NodeKind::{Frame, Point};
    let cases: Vec<(SpringDamper, Vec<NodeKind>)> = vec![
        (
            SpringDamper::between(p(0), p(1), k, c, l0).unwrap(),
            vec![Point, Point],
        ),
        (
            SpringDamper::between(f(0), f(1), k, c, l0).unwrap(),
            vec![Frame, Frame],
        ),
        (
            SpringDamper::between(f(0), p(1), k, c, l0).unwrap(),
            vec![Frame, Point],
        ),
        (
            SpringDamper::between(p(0), f(1), k, c, l0).unwrap(),
            vec![Point, Frame],
        ),
        (
            SpringDamper::between(f(0), f(1), k, 0.0, 0.0).unwrap(),
            vec![Frame, Frame],
        ),
        (
            SpringDamper::to_anchor(f(0), Vector3::new(0.5, -0.4, 1.2), k, c, l0).unwrap(),
            vec![Frame],
        ),
        (
            SpringDamper::to_anchor(p(0), Vector3::new(0.5, -0.4, 1.2), k, c, l0).unwrap(),
            vec![Point],
        ),
    ];
    let mut worst: f64 = 0.0;
    for (e, kinds) in &cases {
        worst = worst.max(fd_check(e, kinds, 1..6));
    }
    eprintln!("spring_damper max FD relative error {worst:e}");
}

fn random_torsional(seed: u64, k: f64, c: f64) -> TorsionalSpring {
    let mut rng = Rng::new(seed + 100);
    TorsionalSpring::new(
        [NodeId(0), NodeId(1)],
        [rng.rotation(), rng.rotation()],
        rng.vec3(1.0),
        k,
        c,
    )
    .unwrap()
    .with_rest_angle(0.2)
    .unwrap()
}

#[test]
fn torsional_spring_hessians_match_finite_differences() {
    let mut worst: f64 = 0.0;
    for seed in 0..4 {
        let e = random_torsional(seed, 20.0, 0.3);
        worst = worst.max(fd_check(&e, &[NodeKind::Frame; 2], 1..6));
    }
    let e = random_torsional(7, 20.0, 0.0);
    worst = worst.max(fd_check(&e, &[NodeKind::Frame; 2], 1..6));
    eprintln!("torsional_spring max FD relative error {worst:e}");
}

#[test]
fn spring_force_for_a_known_state() {
    // ℓ = 2, ℓ0 = 1.5, k = 10: tension 5 N; node 2 pulled back along −x.
    let e = SpringDamper::between(
        Attachment::point(NodeId(0)),
        Attachment::point(NodeId(1)),
        10.0,
        2.0,
        1.5,
    )
    .unwrap();
    let kinds = [NodeKind::Point; 2];
    let mut a = NodeState::at(Vector3::zeros(), UnitQuaternion::identity());
    let mut b = NodeState::at(Vector3::new(2.0, 0.0, 0.0), UnitQuaternion::identity());
    let (r, _) = eval(&e, Level::Static, &fixture(&[a, b], &kinds));
    let expect = [-5.0, 0.0, 0.0, 5.0, 0.0, 0.0];
    assert!(
        (&r - DVector::from_row_slice(&expect)).norm() < 1e-14,
        "{r}"
    );
    // Damping: ℓ̇ = 1 m/s (transverse velocities do not count) → tension 5 + 2·1 = 7 N.
    b.v = Vector3::new(1.0, 3.0, 0.0);
    a.v = Vector3::new(0.0, 1.0, -2.0);
    let fx = fixture(&[a, b], &kinds);
    let (r, _) = eval(&e, Level::Smooth, &fx);
    assert!(
        (r[3] - 7.0).abs() < 1e-14 && (r[0] + 7.0).abs() < 1e-14,
        "{r}"
    );
    // Static ignores damping.
    let (r, _) = eval(&e, Level::Static, &fx);
    assert!((r[3] - 5.0).abs() < 1e-14, "{r}");
    // Outputs and energy.
    let nodes = [a, b];
    let os = output_state(&nodes);
    let mut out = [0.0; 2];
    e.write_outputs(&os, &mut out);
    assert_eq!(e.outputs().len(), 2);
    assert!((out[0] - 2.0).abs() < 1e-15 && (out[1] - 7.0).abs() < 1e-14);
    assert!((e.energy(&os).potential - 0.5 * 10.0 * 0.25).abs() < 1e-14);
}

#[test]
fn spring_offset_moment_for_a_known_state() {
    // Frame node at the origin rotated 90° about z, offset (1,0,0) → attachment (0,1,0);
    // anchor (3,1,0): ℓ = 3, ℓ0 = 2, k = 10 → tension 10 N, force on the body (10,0,0)
    // at lever (0,1,0): spatial moment (0,0,−10) = material moment (R = rotation about z).
    let rz = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, 0.0, PI / 2.0));
    let e = SpringDamper::to_anchor(
        Attachment::frame(NodeId(0), Vector3::new(1.0, 0.0, 0.0)),
        Vector3::new(3.0, 1.0, 0.0),
        10.0,
        0.0,
        2.0,
    )
    .unwrap();
    let st = NodeState::at(Vector3::zeros(), rz);
    let (r, _) = eval(&e, Level::Static, &fixture(&[st], &[NodeKind::Frame]));
    let expect = [-10.0, 0.0, 0.0, 0.0, 0.0, 10.0];
    // Rounding of the quaternion rotation by π/2: a few ulps of the unit entries.
    assert!(
        (&r - DVector::from_row_slice(&expect)).norm() < 1e-13,
        "{r}"
    );
}

#[test]
fn zero_length_spring_is_an_invalid_state() {
    let e = SpringDamper::between(
        Attachment::point(NodeId(0)),
        Attachment::point(NodeId(1)),
        1.0,
        0.0,
        1.0,
    )
    .unwrap();
    let a = NodeState::default();
    let fx = fixture(&[a, a], &[NodeKind::Point; 2]);
    let r = eval_local(&e, &test_cx(Level::Smooth), &fx, &fx.incr, &fx.mult);
    assert!(matches!(r, Err(ElementError::InvalidState(_))));
}

/// Outputs at `nodes` (taken as frame nodes: the force elements' outputs and potentials read
/// positions and rotations only).
fn output_state(nodes: &[NodeState]) -> OutputState<'_> {
    OutputState {
        t: 0.0,
        nodes,
        kinds: &[NodeKind::Frame; 4][..nodes.len()],
        mult_smooth: &[],
        mult_position: &[],
        mult_velocity: &[],
        k: [1.0; 3],
        h: 1e-3,
        gravity: Vector3::new(0.0, 0.0, -9.81),
    }
}

#[test]
fn torsional_spring_angle_moment_and_unwrapping() {
    let z = Vector3::z();
    let id = UnitQuaternion::identity();
    let mut e = TorsionalSpring::new([NodeId(0), NodeId(1)], [id, id], z, 10.0, 0.0)
        .unwrap()
        .with_rest_angle(0.1)
        .unwrap();
    let rot = |a: f64| UnitQuaternion::from_scaled_axis(z * a);
    let a = NodeState::default();
    let b = NodeState::at(Vector3::zeros(), rot(0.5));
    assert!((e.angle(&[a, b]).unwrap() - 0.5).abs() < 1e-14);
    // Moment M = k(θ − θ0) = 4 N m; node 2 receives −4 about z, node 1 +4.
    let (r, _) = eval(&e, Level::Static, &fixture(&[a, b], &[NodeKind::Frame; 2]));
    let mut expect = DVector::zeros(12);
    expect[5] = -4.0;
    expect[11] = 4.0;
    assert!((&r - &expect).norm() < 1e-13, "{r}");
    // Unwrapping: commit at 3.0 rad, then 3.5 rad must not jump to 3.5 − 2π.
    let b3 = NodeState::at(Vector3::zeros(), rot(3.0));
    let nodes = [a, b3];
    e.commit(&output_state(&nodes));
    let b35 = NodeState::at(Vector3::zeros(), rot(3.5));
    assert!((e.angle(&[a, b35]).unwrap() - 3.5).abs() < 1e-13);
    let nodes = [a, b35];
    e.commit(&output_state(&nodes));
    // Two more half-turns: 3.5 → 6.0 → 8.5 (> 2π).
    for target in [6.0, 8.5] {
        let bt = NodeState::at(Vector3::zeros(), rot(target));
        let nodes = [a, bt];
        assert!((e.angle(&nodes).unwrap() - target).abs() < 1e-12);
        e.commit(&output_state(&nodes));
    }
    let nodes = [a, NodeState::at(Vector3::zeros(), rot(8.5))];
    let os = output_state(&nodes);
    let mut out = [0.0; 2];
    e.write_outputs(&os, &mut out);
    assert!((out[0] - 8.5).abs() < 1e-12 && (out[1] - 10.0 * 8.4).abs() < 1e-10);
    assert!((e.energy(&os).potential - 0.5 * 10.0 * 8.4f64.powi(2)).abs() < 1e-9);
    // Damping: relative spin 2 rad/s about z → θ̇ = 2.
    let mut e = TorsionalSpring::new([NodeId(0), NodeId(1)], [id, id], z, 0.0, 3.0).unwrap();
    let mut b = NodeState::at(Vector3::zeros(), rot(0.5));
    b.omega = Vector3::new(0.0, 0.0, 2.0);
    let (r, _) = eval(&e, Level::Smooth, &fixture(&[a, b], &[NodeKind::Frame; 2]));
    assert!((r[11] - 6.0).abs() < 1e-13, "{r}");
    e.commit(&output_state(&[a, b]));
}

#[test]
fn nodal_load_residuals() {
    let f = Vector3::new(1.0, -2.0, 0.5);
    let m = Vector3::new(0.0, 0.0, 2.0);
    let e = NodalLoad::on_frame(NodeId(0), f, m)
        .unwrap()
        .ramped(0.5)
        .unwrap();
    // Body rotated 90° about x: material moment Rᵀ m = (0, 2, 0).
    let rx = UnitQuaternion::from_scaled_axis(Vector3::new(PI / 2.0, 0.0, 0.0));
    let fx = fixture(&[NodeState::at(Vector3::zeros(), rx)], &[NodeKind::Frame]);
    let lam = test_cx(Level::Smooth).t / 0.5;
    let (r, _) = eval(&e, Level::Smooth, &fx);
    let expect = DVector::from_row_slice(&[-1.0, 2.0, -0.5, 0.0, -2.0, 0.0]) * lam;
    assert!((&r - &expect).norm() < 1e-14, "{r}");
    // Static: scaled by the load factor t (no ramp).
    let t = test_cx(Level::Static).t;
    let (r, _) = eval(&e, Level::Static, &fx);
    let expect = DVector::from_row_slice(&[-1.0, 2.0, -0.5, 0.0, -2.0, 0.0]) * t;
    assert!((&r - &expect).norm() < 1e-14, "{r}");
    // No configuration change: the correction levels add nothing.
    let (r, _) = eval(&e, Level::Position, &fx);
    assert_eq!(r.norm(), 0.0);
    // Velocity level with q ≠ q̃: h (f(q) − f(q̃)) of the material moment.
    let mut fx2 = fx.clone();
    fx2.smooth[0].r = UnitQuaternion::identity();
    let nodes = [NodeState::at(Vector3::zeros(), rx)];
    let smooth = [fx2.smooth[0]];
    let cx = test_cx(Level::Velocity);
    let s = LocalState {
        kinds: &[NodeKind::Frame],
        nodes: &nodes,
        prev: &smooth,
        smooth: &smooth,
        rot_tangent: &[Matrix3::identity()],
        incr: &[Vector6::zeros()],
        mult: &[],
        mult_smooth: &[],
        admissible: true,
        memo: None,
        base: None,
    };
    let (r, h) = evaluate(&e, &cx, &s).unwrap();
    // −h λ (Rᵀm − m) with Rᵀ m = (0,2,0), m = (0,0,2).
    let expect = Vector3::new(0.0, -2.0, 2.0) * (cx.force_weight * lam);
    assert!((r.fixed_rows::<3>(3) - expect).norm() < 1e-14, "{r}");
    assert_eq!(r.fixed_rows::<3>(0).norm(), 0.0);
    assert_eq!(h.norm(), 0.0);
    // Potential of an unramped force.
    let e = NodalLoad::on_point(NodeId(0), f).unwrap();
    let nodes = [NodeState::at(
        Vector3::new(1.0, 1.0, 1.0),
        UnitQuaternion::identity(),
    )];
    assert!((e.energy(&output_state(&nodes)).potential - 0.5).abs() < 1e-15);
}

/// Residual of `e` at `cx.level` for explicit current and smooth node states.
fn residual(
    e: &dyn Element,
    cx: &StepCx,
    nodes: &[NodeState],
    smooth: &[NodeState],
    incr: &[Vector6<f64>],
    kinds: &[NodeKind],
) -> DVector<f64> {
    let tangents = vec![Matrix3::identity(); nodes.len()];
    let s = LocalState {
        kinds,
        nodes,
        prev: smooth,
        smooth,
        rot_tangent: &tangents,
        incr,
        mult: &[],
        mult_smooth: &[],
        admissible: true,
        memo: None,
        base: None,
    };
    evaluate(e, cx, &s).unwrap().0
}

#[test]
fn correction_levels_are_weighted_force_differences() {
    // Position: (h²/2)(r_f(q, ṽ) − r_f(q̃, ṽ)); velocity: h(r_f(q, v) − r_f(q̃, ṽ)), with
    // r_f the smooth-level residual (force_weight 1) and q ≠ q̃ at both levels.
    let e = SpringDamper::between(
        Attachment::frame(NodeId(0), Vector3::new(0.1, 0.2, -0.3)),
        Attachment::point(NodeId(1)),
        40.0,
        1.5,
        0.6,
    )
    .unwrap();
    let kinds = [NodeKind::Frame, NodeKind::Point];
    let fx = LocalFixture::random(&kinds, 0, 0, 0.3, &mut Rng::new(9));
    let smooth = fx.smooth.clone();
    let mut current = fx.prev.clone();
    let zero = [Vector6::zeros(); 2];
    let rf =
        |nodes: &[NodeState]| residual(&e, &test_cx(Level::Smooth), nodes, nodes, &zero, &kinds);
    for level in [Level::Position, Level::Velocity] {
        let cx = test_cx(level);
        for (c, s) in current.iter_mut().zip(&smooth) {
            c.v = if level == Level::Position {
                s.v
            } else {
                s.v + Vector3::new(0.3, -0.1, 0.2)
            };
            c.omega = if level == Level::Position {
                s.omega
            } else {
                s.omega * 0.5
            };
        }
        let r = residual(&e, &cx, &current, &smooth, &zero, &kinds);
        let expect = (rf(&current) - rf(&smooth)) * cx.force_weight;
        assert!(
            (&r - &expect).norm() < 1e-12 * (1.0 + expect.norm()),
            "{level}: {r} vs {expect}"
        );
        assert!(r.norm() > 0.0);
    }
}

fn def(type_name: &str, nodes: &[&str], params: serde_json::Value) -> ElementDef {
    ElementDef {
        name: "e".into(),
        type_name: type_name.into(),
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        parameters: params,
    }
}

#[test]
fn build_validates_parameters() {
    use serde_json::json;
    let nodes = [
        NodeDef::frame("f", Vector3::zeros()),
        NodeDef::frame("g", Vector3::new(0.0, 2.0, 0.0)),
        NodeDef::point("p", Vector3::new(1.0, 0.0, 0.0)),
        NodeDef::point("q", Vector3::new(1.0, 0.0, 0.0)),
    ];
    let cx = BuildCx::new(&nodes);
    let sd = |n: &[&str], p| build_spring_damper(&def("spring_damper", n, p), &cx);
    // Default rest length = initial distance (with offset): zero residual at t = 0.
    let e = sd(
        &["f", "p"],
        json!({"stiffness": 10.0, "offset_1": [0.0, 0.0, 1.0]}),
    )
    .unwrap();
    let init = [nodes[0].initial, nodes[2].initial];
    let os = output_state(&init);
    let mut out = [0.0; 2];
    e.write_outputs(&os, &mut out);
    assert!((out[0] - 2f64.sqrt()).abs() < 1e-15 && out[1].abs() < 1e-14);
    assert!(sd(&["f", "g"], json!({"stiffness": 1.0, "damping": 0.5})).is_ok());
    assert!(sd(&["p"], json!({"stiffness": 1.0, "anchor": [0.0, 0.0, 0.0]})).is_ok());
    assert_eq!(
        param_error(sd(&["p", "q"], json!({"stiffness": 1.0}))),
        "rest_length"
    );
    assert!(sd(&["p", "q"], json!({"stiffness": 1.0, "rest_length": 0.5})).is_ok());
    assert_eq!(
        param_error(sd(
            &["p", "q"],
            json!({"stiffness": -1.0, "rest_length": 1.0})
        )),
        "stiffness"
    );
    assert_eq!(
        param_error(sd(
            &["p", "q"],
            json!({"stiffness": 1.0, "damping": -1.0, "rest_length": 1.0})
        )),
        "damping"
    );
    assert_eq!(
        param_error(sd(
            &["p", "q"],
            json!({"stiffness": 1.0, "rest_length": -1.0})
        )),
        "rest_length"
    );
    assert_eq!(param_error(sd(&["p"], json!({"stiffness": 1.0}))), "anchor");
    assert_eq!(
        param_error(sd(
            &["p", "q"],
            json!({"stiffness": 1.0, "anchor": [0, 0, 0]})
        )),
        "anchor"
    );
    assert_eq!(
        param_error(sd(
            &["p", "f"],
            json!({"stiffness": 1.0, "offset_1": [0.1, 0.0, 0.0]})
        )),
        "offset_1"
    );
    assert_eq!(
        param_error(sd(
            &["f"],
            json!({"stiffness": 1.0, "anchor": [1, 1, 1], "offset_2": [0, 0, 1]})
        )),
        "offset_2"
    );
    assert!(matches!(
        sd(&["p", "q", "f"], json!({"stiffness": 1.0})),
        Err(BuildError::NodeCount { .. })
    ));
    assert!(matches!(
        sd(&["p", "f"], json!({"stiffness": 1.0, "rest_lenght": 1.0})),
        Err(BuildError::Parameters { .. })
    ));
    // Torsional spring.
    let ts = |n: &[&str], p| build_torsional_spring(&def("torsional_spring", n, p), &cx);
    assert!(ts(&["f", "g"], torsional_spring_example()).is_ok());
    assert_eq!(
        param_error(ts(
            &["f", "g"],
            json!({"stiffness": 1.0, "axis": [0, 0, 0]})
        )),
        "axis"
    );
    assert_eq!(
        param_error(ts(
            &["f", "g"],
            json!({"stiffness": -1.0, "axis": [0, 0, 1]})
        )),
        "stiffness"
    );
    assert!(matches!(
        ts(&["f", "p"], json!({"stiffness": 1.0, "axis": [0, 0, 1]})),
        Err(BuildError::NodeKind { .. })
    ));
    // Nodal load.
    let nl = |n: &[&str], p| build_nodal_load(&def("nodal_load", n, p), &cx);
    let e = nl(&["p"], json!({"force": [0.0, 0.0, -1.0]})).unwrap();
    assert_eq!(e.node_kinds(), vec![Some(NodeKind::Point)]);
    assert!(nl(&["f"], nodal_load_example()).is_ok());
    assert!(matches!(
        nl(&["p"], json!({"torque": [0.0, 0.0, 1.0]})),
        Err(BuildError::NodeKind { .. })
    ));
    assert_eq!(
        param_error(nl(&["p"], json!({"force": [1, 0, 0], "ramp_time": -1.0}))),
        "ramp_time"
    );
    // Code-first constructors.
    assert!(NodalLoad::on_point(NodeId(0), Vector3::new(f64::NAN, 0.0, 0.0)).is_err());
    assert!(SpringDamper::between(
        Attachment::point(NodeId(0)),
        Attachment {
            node: NodeId(1),
            kind: NodeKind::Point,
            offset: Vector3::x()
        },
        1.0,
        0.0,
        1.0
    )
    .is_err());
    assert!(TorsionalSpring::new(
        [NodeId(0), NodeId(1)],
        [UnitQuaternion::identity(); 2],
        Vector3::new(f64::NAN, 0.0, 1.0),
        1.0,
        0.0
    )
    .is_err());
}
