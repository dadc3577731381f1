//! Clamp: a frame node held at its initial position and orientation (nsga.md §11.2, §11.4).

use super::common::{node, parse, rotation};
use super::constraint::{BilateralConstraint, ConstraintUnits, KinCx, KinVec, Kinematics};
use crate::joints::BilateralJoint;
use nalgebra::{Matrix3, Vector3};
use saltus_core::element::Element;
use saltus_core::model::BuildError;
use saltus_core::node::{NodeDef, NodeId, NodeKind};
use saltus_core::registry::{BuildCx, ElementDef};
use serde::{Deserialize, Serialize};

const TYPE_NAME: &str = "clamp";
const KINDS: [NodeKind; 1] = [NodeKind::Frame];

/// Kinematics of the clamp: the node keeps its initial position `x₀` and rotation `R₀`
/// (6 constraints):
///
/// ```text
/// g = [ x − x₀                  (3, [m])
///       (R₀ e₂) · (R e₃)        (1, [-])
///       (R₀ e₃) · (R e₁)        (1, [-])
///       (R₀ e₁) · (R e₂) ]      (1, [-])
/// ```
///
/// Near `R = R₀` the three orientation rows are, to first order, minus the spatial rotation
/// components along `R₀ e₁`, `R₀ e₂`, `R₀ e₃`. The first three multipliers are the support
/// force \[N\] on the node; the last three are moments \[N m\] (near `R₀`, minus the support
/// moment components along `R₀ e_k`); the outputs `force` and `moment` give the exact support
/// reaction on the node. Unlike a fixed node (whose unknowns are eliminated) the clamp keeps
/// the node's unknowns and reports the support
/// reaction. Scleronomic. Spec: nsga.md §§4–6, §11.2.
#[derive(Clone, Debug, PartialEq)]
pub struct ClampConstraint {
    nodes: [NodeId; 1],
    x0: Vector3<f64>,
    r0: Matrix3<f64>,
}

/// Clamp element (registered as `clamp`); see [`ClampConstraint`].
pub type Clamp = BilateralJoint<ClampConstraint>;

/// Model-file parameters of `clamp` (nodes: one frame node). There are none: the node is held
/// at its initial state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClampSpec {}

impl ClampConstraint {
    /// Clamp frame node `n` of `nodes` at its initial position and rotation. `element` names the
    /// element in errors.
    pub fn from_initial(element: &str, nodes: &[NodeDef], n: NodeId) -> Result<Self, BuildError> {
        let def = node(nodes, element, n, Some(NodeKind::Frame))?;
        Ok(Self {
            nodes: [n],
            x0: def.initial.x,
            r0: rotation(def),
        })
    }

    /// Held position `x₀` \[m\] and rotation `R₀`.
    pub fn target(&self) -> (Vector3<f64>, Matrix3<f64>) {
        (self.x0, self.r0)
    }
}

impl BilateralConstraint for ClampConstraint {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn node_kinds(&self) -> &[NodeKind] {
        &KINDS
    }
    fn n_constraints(&self) -> usize {
        6
    }
    fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics) {
        out.set_vector_rows(0, cx, &(KinVec::position(0) - KinVec::constant(self.x0)));
        for (row, (i, k)) in [(1, 2), (2, 0), (0, 1)].into_iter().enumerate() {
            let fixed = KinVec::constant(self.r0.column(i).into_owned());
            let body = KinVec::body(0, Vector3::ith(k, 1.0));
            out.set_dot_row(3 + row, cx, &fixed, &body);
        }
    }
    fn reaction_node(&self) -> Option<usize> {
        Some(0)
    }
    fn units(&self) -> ConstraintUnits {
        ConstraintUnits::MIXED
    }
}

impl Clamp {
    /// Clamp frame node `n` of `nodes` (e.g. `model.nodes()`) at its initial state.
    pub fn new(nodes: &[NodeDef], n: NodeId) -> Result<Self, BuildError> {
        ClampConstraint::from_initial(TYPE_NAME, nodes, n).and_then(BilateralJoint::from_constraint)
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &KINDS.map(Some))?;
    let _spec: ClampSpec = parse(def)?;
    let c = ClampConstraint::from_initial(&def.name, cx.nodes, ids[0])?;
    Ok(Box::new(BilateralJoint::from_constraint(c)?))
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Clamp: frame node held at its initial position and orientation (6 constraints)",
    build: build,
    example: || serde_json::json!({}),
    example_nodes: &[NodeKind::Frame],
    params: ClampSpec,
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{check_kin, check_levels, random_nodes, states};
    use super::*;
    use saltus_core::fd::Rng;
    use saltus_core::lie;

    fn clamp(seed: u64) -> (Clamp, Vec<NodeDef>) {
        let nodes = random_nodes(&KINDS, &mut Rng::new(seed));
        (Clamp::new(&nodes, NodeId(0)).unwrap(), nodes)
    }

    #[test]
    fn satisfied_at_initial_configuration_and_locks_every_rotation() {
        for seed in 1..=5 {
            let (c, nodes) = clamp(seed);
            let q = states(&nodes);
            // Round-off of O(1) rotations: 1e-14 is ~100 ulps.
            assert!(c.kinematics(&q, 0.0).g().amax() < 1e-14);
            // Full rank: the Jacobian is invertible (6 independent rows).
            let g_q = c.kinematics(&q, 0.0).g_q().clone_owned();
            assert!(g_q.determinant().abs() > 0.5);
            // Small spatial rotation δ: orientation rows ≈ −R₀ᵀ δ.
            let delta = Vector3::new(1e-5, -2e-5, 3e-5);
            let mut q2 = q.clone();
            q2[0].r = lie::exp(&delta) * q[0].r;
            let kin = c.kinematics(&q2, 0.0);
            let g = kin.g();
            let expect = -(c.constraint().target().1.transpose() * delta);
            // Second-order remainder |δ|² ≈ 1e-9.
            assert!((g.fixed_rows::<3>(3) - expect).amax() < 1e-9, "{g}");
        }
    }

    #[test]
    fn kinematics_match_finite_differences() {
        let (c, _) = clamp(3);
        let err = check_kin(c.constraint(), 0.0, 5);
        eprintln!("clamp kinematics max FD error {err:e}");
    }

    #[test]
    fn hessians_match_finite_differences_at_all_levels() {
        let (c, _) = clamp(4);
        let err = check_levels(&c, 5);
        eprintln!("clamp max relative FD error {err:e}");
    }

    #[test]
    fn rejects_point_nodes_and_parameters() {
        let nodes = random_nodes(&[NodeKind::Point, NodeKind::Frame], &mut Rng::new(1));
        assert!(matches!(
            Clamp::new(&nodes, NodeId(0)),
            Err(BuildError::NodeKind { .. })
        ));
        let cx = BuildCx::new(&nodes);
        let def = |p: serde_json::Value| ElementDef {
            name: "support".into(),
            type_name: TYPE_NAME.into(),
            nodes: vec!["n1".into()],
            parameters: p,
        };
        assert!(build(&def(serde_json::json!({})), &cx).is_ok());
        assert!(matches!(
            build(&def(serde_json::json!({"stiffness": 1.0})), &cx),
            Err(BuildError::Parameters { .. })
        ));
    }
}
