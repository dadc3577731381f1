//! Spherical (ball) joint between two nodes, frame or point (nsga.md §11.2).

use super::common::{distinct, finite_vec, node, parse, rotation, v3};
use super::constraint::{BilateralConstraint, ConstraintUnits, KinCx, KinVec, Kinematics};
use crate::joints::BilateralJoint;
use nalgebra::Vector3;
use saltus_core::element::Element;
use saltus_core::model::BuildError;
use saltus_core::node::{NodeDef, NodeId, NodeKind};
use saltus_core::registry::{BuildCx, ElementDef};
use serde::{Deserialize, Serialize};

const TYPE_NAME: &str = "spherical_joint";

/// Relative tolerance with which a point node must lie on the anchor.
const POINT_TOL: f64 = 1e-9;

/// Kinematics of the spherical joint: the anchor points of both nodes coincide (3 constraints,
/// \[m\]):
///
/// ```text
/// g = p₁ − p₂,   p_i = x_i + R_i d_i (frame node),   p_i = x_i (point node)
/// ```
///
/// `d_i` is the anchor offset in the body frame of node `i`, computed from the anchor given in
/// the inertial frame at the initial configuration; a point node must lie on the anchor. The
/// multipliers are the reaction force \[N\] applied to node 1. Scleronomic. Spec: nsga.md
/// §§4–6, §11.2.
#[derive(Clone, Debug, PartialEq)]
pub struct SphericalConstraint {
    nodes: [NodeId; 2],
    kinds: [NodeKind; 2],
    offsets: [Vector3<f64>; 2],
}

/// Spherical joint element (registered as `spherical_joint`); see [`SphericalConstraint`].
pub type SphericalJoint = BilateralJoint<SphericalConstraint>;

/// Model-file parameters of `spherical_joint` (nodes: two frame or point nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SphericalSpec {
    /// Joint centre \[m\], inertial frame, initial configuration (default: the position of
    /// node 2, or of node 1 if only node 1 is a point node).
    #[serde(default)]
    pub anchor: Option<[f64; 3]>,
}

impl SphericalConstraint {
    /// Constraint between nodes `n1`, `n2` of `nodes` at `anchor` \[m\] (inertial frame, initial
    /// states). `element` names the element in errors.
    pub fn from_initial(
        element: &str,
        nodes: &[NodeDef],
        n1: NodeId,
        n2: NodeId,
        anchor: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        let defs = [
            node(nodes, element, n1, None)?,
            node(nodes, element, n2, None)?,
        ];
        distinct(element, n1, n2)?;
        let anchor = finite_vec(element, "anchor", &anchor)?;
        let mut offsets = [Vector3::zeros(); 2];
        for (off, def) in offsets.iter_mut().zip(defs) {
            let d = anchor - def.initial.x;
            match def.kind {
                NodeKind::Frame => *off = rotation(def).transpose() * d,
                NodeKind::Point => {
                    if d.norm() > POINT_TOL * (1.0 + anchor.norm()) {
                        return Err(BuildError::InvalidParameter {
                            element: element.to_string(),
                            parameter: "anchor".into(),
                            message: format!(
                                "must coincide with point node `{}` at [{}, {}, {}]",
                                def.name, def.initial.x.x, def.initial.x.y, def.initial.x.z
                            ),
                        });
                    }
                }
            }
        }
        Ok(Self {
            nodes: [n1, n2],
            kinds: [defs[0].kind, defs[1].kind],
            offsets,
        })
    }

    /// Default anchor: node 2's position, or node 1's if only node 1 is a point node.
    pub fn default_anchor(def1: &NodeDef, def2: &NodeDef) -> Vector3<f64> {
        if def1.kind == NodeKind::Point && def2.kind == NodeKind::Frame {
            def1.initial.x
        } else {
            def2.initial.x
        }
    }

    /// Anchor offsets `d₁`, `d₂` \[m\] in the body frames (zero for point nodes).
    pub fn anchor_offsets(&self) -> [Vector3<f64>; 2] {
        self.offsets
    }

    fn point(&self, i: usize) -> KinVec {
        match self.kinds[i] {
            NodeKind::Frame => KinVec::body_point(i, self.offsets[i]),
            NodeKind::Point => KinVec::position(i),
        }
    }
}

impl BilateralConstraint for SphericalConstraint {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn node_kinds(&self) -> &[NodeKind] {
        &self.kinds
    }
    fn n_constraints(&self) -> usize {
        3
    }
    fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics) {
        out.set_vector_rows(0, cx, &(self.point(0) - self.point(1)));
    }
    fn units(&self) -> ConstraintUnits {
        ConstraintUnits::LENGTH
    }
}

impl SphericalJoint {
    /// Spherical joint between nodes `n1` and `n2` of `nodes` (e.g. `model.nodes()`) centred at
    /// `anchor` \[m\] (inertial frame, initial configuration; a point node must lie on it).
    pub fn new(
        nodes: &[NodeDef],
        n1: NodeId,
        n2: NodeId,
        anchor: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        SphericalConstraint::from_initial(TYPE_NAME, nodes, n1, n2, anchor)
            .and_then(BilateralJoint::from_constraint)
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[None, None])?;
    let spec: SphericalSpec = parse(def)?;
    let anchor = spec.anchor.map(v3).unwrap_or_else(|| {
        SphericalConstraint::default_anchor(&cx.nodes[ids[0].index()], &cx.nodes[ids[1].index()])
    });
    let c = SphericalConstraint::from_initial(&def.name, cx.nodes, ids[0], ids[1], anchor)?;
    Ok(Box::new(BilateralJoint::from_constraint(c)?))
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Spherical (ball) joint between two frame or point nodes: 3 bilateral constraints",
    build: build,
    example: || serde_json::json!({}),
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: SphericalSpec,
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{check_kin, check_levels, nan_vec, random_nodes, states};
    use super::*;
    use saltus_core::fd::Rng;
    use saltus_core::lie;

    const COMBOS: [[NodeKind; 2]; 3] = [
        [NodeKind::Frame, NodeKind::Frame],
        [NodeKind::Frame, NodeKind::Point],
        [NodeKind::Point, NodeKind::Frame],
    ];

    fn joint(kinds: [NodeKind; 2], seed: u64) -> (SphericalJoint, Vec<NodeDef>, Vector3<f64>) {
        let mut rng = Rng::new(seed);
        let nodes = random_nodes(&kinds, &mut rng);
        let anchor = if kinds.contains(&NodeKind::Point) {
            SphericalConstraint::default_anchor(&nodes[0], &nodes[1])
        } else {
            rng.vec3(1.0)
        };
        let j = SphericalJoint::new(&nodes, NodeId(0), NodeId(1), anchor).unwrap();
        (j, nodes, anchor)
    }

    #[test]
    fn satisfied_at_initial_configuration_and_under_rotation_about_anchor() {
        for kinds in COMBOS {
            for seed in 1..=4 {
                let (j, nodes, anchor) = joint(kinds, seed);
                let q = states(&nodes);
                // Round-off of O(1) rotations: 1e-14 is ~100 ulps.
                assert!(j.kinematics(&q, 0.0).g().amax() < 1e-14);
                if kinds[1] == NodeKind::Frame {
                    let rot = lie::exp(&Vector3::new(0.4, -1.3, 2.0));
                    let mut q2 = q.clone();
                    q2[1].x = anchor + rot * (q[1].x - anchor);
                    q2[1].r = rot * q[1].r;
                    assert!(j.kinematics(&q2, 0.0).g().amax() < 1e-14);
                }
            }
        }
    }

    #[test]
    fn kinematics_match_finite_differences() {
        for kinds in COMBOS {
            let (j, ..) = joint(kinds, 2);
            let err = check_kin(j.constraint(), 0.0, 4);
            eprintln!("spherical {kinds:?} kinematics max FD error {err:e}");
        }
    }

    #[test]
    fn hessians_match_finite_differences_at_all_levels() {
        for kinds in COMBOS {
            let (j, ..) = joint(kinds, 5);
            let err = check_levels(&j, 4);
            eprintln!("spherical {kinds:?} max relative FD error {err:e}");
        }
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let nodes = random_nodes(&[NodeKind::Frame, NodeKind::Point], &mut Rng::new(1));
        for anchor in [nan_vec(), nodes[1].initial.x + Vector3::x()] {
            assert!(matches!(
                SphericalJoint::new(&nodes, NodeId(0), NodeId(1), anchor),
                Err(BuildError::InvalidParameter { ref parameter, .. }) if parameter == "anchor"
            ));
        }
        let cx = BuildCx::new(&nodes);
        let def = |p: serde_json::Value| ElementDef {
            name: "ball".into(),
            type_name: TYPE_NAME.into(),
            nodes: vec!["n0".into(), "n1".into()],
            parameters: p,
        };
        assert!(build(&def(serde_json::json!({})), &cx).is_ok());
        assert!(build(&def(serde_json::Value::Null), &cx).is_ok());
        assert!(matches!(
            build(&def(serde_json::json!({"anchr": [0, 0, 0]})), &cx),
            Err(BuildError::Parameters { .. })
        ));
    }
}
