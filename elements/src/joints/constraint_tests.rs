//! Tests of the generic constraint layer.

use super::constraint::*;
use crate::joints::common::testing::{random_nodes, states, FD_TOL};
use crate::joints::spherical::SphericalJoint;
use crate::joints::BilateralJoint;
use nalgebra::Vector3;
use nalgebra::{DVector, Vector6};
use saltus_core::element::{Element, Level, Levels, LocalState, OutputState};
use saltus_core::fd::{check_hessian, eval_local, stage_contexts, test_cx, LocalFixture, Rng};
use saltus_core::lie;
use saltus_core::model::BuildError;
use saltus_core::node::{NodeId, NodeKind};
use saltus_core::registry::{element_kinds, BuildCx, ElementDef};
use saltus_core::stage::participates;

const JOINT_TYPES: [&str; 5] = [
    "clamp",
    "prescribed_rotation",
    "prismatic_joint",
    "revolute_joint",
    "spherical_joint",
];
const LEVELS: [Level; 4] = [
    Level::Smooth,
    Level::Position,
    Level::Velocity,
    Level::Static,
];

fn build_example(type_name: &str, seed: u64) -> Box<dyn Element> {
    let kind = element_kinds()
        .iter()
        .find(|k| k.type_name == type_name)
        .unwrap_or_else(|| panic!("{type_name} is not registered"));
    let nodes = random_nodes(kind.example_nodes, &mut Rng::new(seed));
    let def = ElementDef {
        name: format!("example_{type_name}"),
        type_name: type_name.into(),
        nodes: nodes.iter().map(|n| n.name.clone()).collect(),
        parameters: (kind.example)(),
    };
    (kind.build)(&def, &BuildCx::new(&nodes)).unwrap()
}

#[test]
fn registered_examples_build_on_random_nodes_and_pass_fd_checks() {
    for type_name in JOINT_TYPES {
        let kinds = element_kinds()
            .iter()
            .find(|k| k.type_name == type_name)
            .unwrap()
            .example_nodes;
        for seed in 1..=3 {
            let e = build_example(type_name, seed);
            assert_eq!(e.type_name(), type_name);
            assert_eq!(e.mass(), 0.0);
            // A physics-interface element: no raw level methods, rows at every stage.
            assert!(e.as_constraint().is_some());
            assert_eq!(e.levels(), Levels::NONE);
            for (stage, cx) in stage_contexts() {
                assert!(participates(e.as_ref(), cx.level), "{type_name} {stage}");
                let m = e.n_mult(cx.level);
                assert_eq!(m, e.as_constraint().unwrap().n_constraints());
                let fx = LocalFixture::random(kinds, m, m, 0.3, &mut Rng::new(seed + 10));
                let r = check_hessian(e.as_ref(), &cx, &fx, 1e-6).unwrap();
                // Tolerance: see FD_TOL (central differences, ε = 1e-6).
                assert!(
                    r.relative_error() < FD_TOL,
                    "{type_name} {stage}: {:e}",
                    r.relative_error()
                );
            }
        }
    }
}

#[test]
fn outputs_fill_every_declared_channel() {
    for type_name in JOINT_TYPES {
        let mut e = build_example(type_name, 5);
        let kinds = element_kinds()
            .iter()
            .find(|k| k.type_name == type_name)
            .unwrap()
            .example_nodes;
        let m = e.n_mult(Level::Smooth);
        let fx = LocalFixture::random(kinds, m, m, 0.3, &mut Rng::new(3));
        let cx = test_cx(Level::Velocity);
        let (nodes, tangents) = fx.states(&cx, &fx.incr);
        let s = LocalState {
            kinds: &fx.kinds,
            nodes: &nodes,
            prev: &fx.prev,
            smooth: &fx.smooth,
            rot_tangent: &tangents,
            incr: &fx.incr,
            mult: &fx.mult,
            mult_smooth: &fx.mult_smooth,
            admissible: true,
            memo: None,
            base: None,
        };
        e.level_converged(&cx, &s);
        let specs = e.outputs();
        let len: usize = specs.iter().map(|o| o.len).sum();
        let mut out = vec![f64::NAN; len];
        let os = OutputState {
            t: 0.0,
            nodes: &nodes,
            kinds: &fx.kinds,
            mult_smooth: &fx.mult_smooth,
            mult_position: &fx.mult,
            mult_velocity: &fx.mult,
            k: [1.3, 1.7, 2.3],
            h: 1e-2,
            gravity: Vector3::zeros(),
        };
        e.write_outputs(&os, &mut out);
        assert!(out.iter().all(|v| v.is_finite()), "{type_name}: {out:?}");
        let names: Vec<_> = specs.iter().map(|o| o.name).collect();
        assert!(names.contains(&"violation") && names.contains(&"reaction_smooth"));
        assert_eq!(out[0], 1.3 * fx.mult_smooth[0]);
    }
}

#[test]
fn spherical_reaction_force_and_moment_about_node_2() {
    let nodes = random_nodes(&[NodeKind::Frame; 2], &mut Rng::new(8));
    let anchor = Vector3::new(0.3, -0.5, 0.2);
    let j = SphericalJoint::new(&nodes, NodeId(0), NodeId(1), anchor).unwrap();
    let q = states(&nodes);
    let lam = [0.4, -1.1, 0.7];
    let os = OutputState {
        t: 0.0,
        nodes: &q,
        kinds: &[NodeKind::Frame; 2],
        mult_smooth: &lam,
        mult_position: &[0.0; 3],
        mult_velocity: &[0.0; 3],
        k: [2.0, 1.0, 1.0],
        h: 1e-2,
        gravity: Vector3::zeros(),
    };
    let specs = j.outputs();
    let mut out = vec![0.0; specs.iter().map(|o| o.len).sum()];
    j.write_outputs(&os, &mut out);
    // g = p₁ − p₂: the force on node 2 is −k_s λ̃, its moment about x₂ is (anchor − x₂) × force.
    let force = -Vector3::from(lam) * 2.0;
    let moment = (anchor - q[1].x).cross(&force);
    assert!((Vector3::from_column_slice(&out[9..12]) - force).amax() < 1e-14);
    assert!((Vector3::from_column_slice(&out[12..15]) - moment).amax() < 1e-14);
    // Initial configuration: no violation.
    assert!(out[15].abs() < 1e-14);
}

/// Independent hand formulas for two point nodes (`g = x₁ − x₂`, `g_q = [I, −I]`, no
/// curvature): pins the signs and factors of every level.
#[test]
fn point_spherical_joint_residuals_match_hand_formulas() {
    let kinds = [NodeKind::Point; 2];
    let mut rng = Rng::new(21);
    // Two point nodes must coincide initially; the fixture then moves them apart.
    let mut nodes = random_nodes(&kinds, &mut rng);
    nodes[1].initial.x = nodes[0].initial.x;
    let j = SphericalJoint::new(&nodes, NodeId(0), NodeId(1), nodes[1].initial.x).unwrap();
    let fx = LocalFixture::random(&kinds, 3, 3, 0.3, &mut rng);
    for level in LEVELS {
        let cx = test_cx(level);
        let (r, _) = eval_local(&j, &cx, &fx, &fx.incr, &fx.mult).unwrap();
        let (q, _) = fx.states(&cx, &fx.incr);
        let mu = Vector3::from_column_slice(&fx.mult);
        let (g, gdot) = (q[0].x - q[1].x, q[0].v - q[1].v);
        let (node_force, mult_row) = match level {
            Level::Smooth | Level::Velocity => (mu * cx.k - gdot * cx.p, -gdot * cx.k),
            Level::Position | Level::Static => (mu * cx.k - g * cx.p, -g * cx.k),
            Level::Custom => unreachable!("joints take no part in custom stages"),
        };
        let mut expect = DVector::zeros(9);
        expect.fixed_rows_mut::<3>(0).copy_from(&-node_force);
        expect.fixed_rows_mut::<3>(3).copy_from(&node_force);
        expect.fixed_rows_mut::<3>(6).copy_from(&mult_row);
        // Constant g_q: the k_s λ̃ correction (g_q(q) − g_q(q̃)) vanishes. Round-off 1e-14.
        assert!((r - expect).amax() < 1e-14, "{level}");
    }
}

/// A test constraint on any nodes: `rows` copies of `(x₁ − x₀) · (x₃ − x₂)` (point or
/// frame nodes; with fewer than four nodes the indices wrap).
#[derive(Clone, Debug)]
struct Crossing {
    nodes: Vec<NodeId>,
    kinds: Vec<NodeKind>,
    rows: usize,
}

impl Crossing {
    fn new(kinds: &[NodeKind], rows: usize) -> Self {
        Self {
            nodes: (0..kinds.len() as u32).map(NodeId).collect(),
            kinds: kinds.to_vec(),
            rows,
        }
    }
}

impl BilateralConstraint for Crossing {
    fn type_name(&self) -> &'static str {
        "crossing"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn node_kinds(&self) -> &[NodeKind] {
        &self.kinds
    }
    fn n_constraints(&self) -> usize {
        self.rows
    }
    fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics) {
        let k = self.kinds.len();
        let d = |i: usize, j: usize| KinVec::position(j % k) - KinVec::position(i % k);
        let s = cx.dot(&d(0, 1), &d(2, 3));
        for j in 0..self.rows {
            out.set_row(j, &(s.clone() * (j + 1) as f64));
        }
    }
}

#[test]
fn four_point_nodes_fit_and_pass_fd_checks() {
    let kinds = [NodeKind::Point; 4];
    let j = BilateralJoint::from_constraint(Crossing::new(&kinds, 2)).unwrap();
    assert_eq!(j.layout().n(), MAX_DOFS);
    let q = states(&random_nodes(&kinds, &mut Rng::new(3)));
    let r = check_kinematics(j.constraint(), &q, 0.0, 1e-6);
    assert!(r.max() < FD_TOL, "{r:?}");
    for level in LEVELS {
        let fx = LocalFixture::random(&kinds, 2, 2, 0.3, &mut Rng::new(5));
        let r = check_hessian(&j, &test_cx(level), &fx, 1e-6).unwrap();
        assert!(
            r.relative_error() < FD_TOL,
            "{level}: {:e}",
            r.relative_error()
        );
    }
}

#[test]
fn constraints_exceeding_the_storage_are_rejected_at_construction() {
    let param = |r: Result<BilateralJoint<Crossing>, BuildError>| match r {
        Err(BuildError::InvalidParameter { parameter, .. }) => parameter,
        other => panic!("expected a rejection, got {other:?}"),
    };
    // Three frame nodes: 18 unknowns.
    let c = Crossing::new(&[NodeKind::Frame; 3], 1);
    assert_eq!(param(BilateralJoint::from_constraint(c)), "nodes");
    // Five point nodes: 15 unknowns, 5 nodes.
    let c = Crossing::new(&[NodeKind::Point; 5], 1);
    assert_eq!(param(BilateralJoint::from_constraint(c)), "nodes");
    // Seven rows.
    let c = Crossing::new(&[NodeKind::Frame; 2], MAX_ROWS + 1);
    assert_eq!(param(BilateralJoint::from_constraint(c)), "constraints");
    // node_kinds() and nodes() disagree.
    let mut c = Crossing::new(&[NodeKind::Frame; 2], 1);
    c.nodes.pop();
    assert_eq!(param(BilateralJoint::from_constraint(c)), "nodes");
    // At the limits: two frame nodes, six rows.
    let c = Crossing::new(&[NodeKind::Frame; 2], MAX_ROWS);
    assert!(BilateralJoint::from_constraint(c).is_ok());
}

#[test]
fn kinvec_merges_terms_per_node() {
    let d = Vector3::new(0.1, -0.4, 0.3);
    let a = KinVec::body_point(0, d) + KinVec::position(1) * 2.0;
    let b = KinVec::position(1) * 2.0 + KinVec::body(0, d) + KinVec::position(0);
    assert_eq!(a, b);
    let nodes = random_nodes(&[NodeKind::Frame; 2], &mut Rng::new(2));
    let q = states(&nodes);
    let layout = Layout::new(&[NodeKind::Frame; 2]);
    let cx = KinCx::new(&q, 0.0, &layout);
    let zero = a - b;
    assert_eq!(cx.value(&zero), Vector3::zeros());
    assert_eq!(cx.jacobian(&zero), VectorJacobian::zeros());
    let expect = q[0].x + q[0].r * d + q[1].x * 2.0;
    assert!((cx.value(&a) - expect).amax() < 1e-15);
    // First-order evaluation: same value and gradient, no second derivatives.
    let (full, first) = (cx.dot(&a, &a), cx.first_order().dot(&a, &a));
    assert_eq!((full.value, full.grad), (first.value, first.grad));
    assert!(full.hess.amax() > 0.1 && first.hess == LocalMatrix::zeros());
}

#[test]
#[should_panic(expected = "out of range")]
fn kinvec_rejects_nodes_beyond_the_storage() {
    let _ = KinVec::position(MAX_NODES);
}

#[test]
#[should_panic(expected = "point node")]
fn body_vector_on_a_point_node_panics() {
    let q = states(&random_nodes(&[NodeKind::Point; 2], &mut Rng::new(2)));
    let layout = Layout::new(&[NodeKind::Point; 2]);
    let _ = KinCx::new(&q, 0.0, &layout).value(&KinVec::body(1, Vector3::x()));
}

/// Newton on a joint alone plus a unit mass matrix `M = I` on its nodes: position level
/// from a configuration 0.1 off the manifold, then the (linear) velocity level. Checks that
/// the residual and Hessian drive `g` and `g_q v + g_t` to round-off, quadratically.
#[test]
fn newton_with_unit_mass_reaches_the_constraint_manifold() {
    for type_name in JOINT_TYPES {
        let kind = element_kinds()
            .iter()
            .find(|k| k.type_name == type_name)
            .unwrap();
        let kinds = kind.example_nodes;
        let e = build_example(type_name, 4);
        let m = e.n_mult(Level::Position);
        let mut rng = Rng::new(4);
        let defs = random_nodes(kinds, &mut rng);
        let mut fx = LocalFixture::random(kinds, m, m, 0.3, &mut Rng::new(9));
        fx.smooth = states(&defs);
        for s in &mut fx.smooth {
            s.x += rng.vec3(0.1);
            s.r = lie::perturb(&s.r, &rng.vec3(0.1));
        }
        fx.mult_smooth = vec![0.0; m];
        let n: usize = kinds.iter().map(|k| k.ndof()).sum();
        let solve = |level: Level, fx: &mut LocalFixture| -> Vec<f64> {
            let cx = test_cx(level);
            let mut incr = vec![Vector6::zeros(); kinds.len()];
            let mut mult = vec![0.0; m];
            let mut history = Vec::new();
            for _ in 0..12 {
                let (mut r, mut h) = eval_local(e.as_ref(), &cx, fx, &incr, &mult).unwrap();
                let mut o = 0;
                for (i, k) in kinds.iter().enumerate() {
                    for d in 0..k.ndof() {
                        r[o + d] += incr[i][d];
                        h[(o + d, o + d)] += 1.0;
                    }
                    o += k.ndof();
                }
                // Multiplier rows are −k g (position) or −k ġ (velocity).
                history.push(r.rows(n, m).norm() / cx.k);
                if r.norm() < 1e-13 {
                    break;
                }
                let delta = h.lu().solve(&(-&r)).unwrap();
                let mut o = 0;
                for (i, k) in kinds.iter().enumerate() {
                    for d in 0..k.ndof() {
                        incr[i][d] += delta[o + d];
                    }
                    o += k.ndof();
                }
                for j in 0..m {
                    mult[j] += delta[n + j];
                }
            }
            // Hand the corrected configuration to the next level.
            let (q, _) = fx.states(&cx, &incr);
            if level == Level::Position {
                fx.smooth = q;
            }
            history
        };
        let hp = solve(Level::Position, &mut fx);
        let hv = solve(Level::Velocity, &mut fx);
        let sci = |h: &[f64]| h.iter().map(|x| format!("{x:.1e}")).collect::<Vec<_>>();
        eprintln!("{type_name}: |g| {:?}, |ġ| {:?}", sci(&hp), sci(&hv));
        // Round-off of O(1) kinematics: 1e-12; quadratic convergence: ≤ 6 iterations.
        assert!(
            *hp.last().unwrap() < 1e-12 && hp.len() <= 7,
            "{type_name}: {hp:?}"
        );
        // Linear in W: exact after one solve.
        assert!(
            *hv.last().unwrap() < 1e-12 && hv.len() <= 2,
            "{type_name}: {hv:?}"
        );
    }
}

/// `Kinematics::set_dot_row` (the joints' rows without an intermediate `Scalar`) writes
/// exactly what `set_row(j, &cx.dot(u, v))` writes — value, gradient and second derivative, the
/// same operations in the same order — with and without second derivatives.
#[test]
fn dot_rows_equal_the_scalar_rows() {
    let kinds = [NodeKind::Frame, NodeKind::Frame];
    let nodes = states(&random_nodes(&kinds, &mut Rng::new(41)));
    let layout = Layout::new(&kinds);
    let u = KinVec::body(0, Vector3::new(0.3, -0.2, 0.9)) + KinVec::position(1) * 0.5;
    let v = KinVec::body(1, Vector3::new(-0.4, 0.7, 0.1)) - KinVec::body_point(0, Vector3::x());
    for hessians in [true, false] {
        let cx = KinCx::new(&nodes, 0.0, &layout);
        let cx = if hessians { cx } else { cx.first_order() };
        let mut a = Kinematics::zeros(2, layout.n());
        let mut b = Kinematics::zeros(2, layout.n());
        a.set_row(1, &cx.dot(&u, &v));
        b.set_dot_row(1, &cx, &u, &v);
        assert_eq!(a, b, "hessians {hessians}");
    }
}
