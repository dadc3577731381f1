//! Revolute (hinge) joint between two frame nodes (contact-elements.md §2.3, nsga.md §11.2).

use super::common::{
    build_anchor_axis, distinct, finite_vec, node, parse, perpendicular, rotation, unit_axis,
};
use super::constraint::{BilateralConstraint, ConstraintUnits, KinCx, KinVec, Kinematics, Scalar};
use crate::joints::BilateralJoint;
use nalgebra::Vector3;
use saltus_core::element::{Element, OutputSpec};
use saltus_core::model::BuildError;
use saltus_core::node::{NodeDef, NodeId, NodeKind, NodeState};
use saltus_core::registry::{BuildCx, ElementDef};
use serde::{Deserialize, Serialize};

const TYPE_NAME: &str = "revolute_joint";
const KINDS: [NodeKind; 2] = [NodeKind::Frame, NodeKind::Frame];

/// Kinematics of the revolute joint: the anchor points of both bodies coincide and the joint
/// axis of body 2 stays perpendicular to two directions of body 1 that are perpendicular to
/// the axis (5 constraints):
///
/// ```text
/// g = [ x₁ + R₁ d₁ − x₂ − R₂ d₂      (3, [m])
///       (R₁ b₁) · (R₂ a₂)           (1, [-])
///       (R₁ c₁) · (R₂ a₂) ]         (1, [-])
/// ```
///
/// `d₁`, `d₂` are the anchor offsets in the body frames, `a₂` the axis in body 2, and `b₁`,
/// `c₁ = a₁ × b₁` two unit directions of body 1 perpendicular to its axis `a₁`, all computed
/// from the anchor and axis given in the inertial frame at the initial configuration. The
/// multipliers are the reaction force \[N\] on node 1 (rows 1–3) and the two bending moments
/// \[N m\] that keep the axes aligned. Scleronomic (`g_t = 0`). Spec: contact-elements.md §2.3,
/// all levels per nsga.md §§4–6.
#[derive(Clone, Debug, PartialEq)]
pub struct RevoluteConstraint {
    nodes: [NodeId; 2],
    d1: Vector3<f64>,
    d2: Vector3<f64>,
    a2: Vector3<f64>,
    b1: Vector3<f64>,
    c1: Vector3<f64>,
    b2: Vector3<f64>,
    /// Whole turns of the relative rotation since the start (for the unwrapped `angle`).
    turns: f64,
    /// Wrapped angle at the last converged step \[rad\].
    last: f64,
}

/// Revolute joint element (registered as `revolute_joint`); see [`RevoluteConstraint`].
pub type RevoluteJoint = BilateralJoint<RevoluteConstraint>;

/// Model-file parameters of `revolute_joint` (nodes: two frame nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevoluteSpec {
    /// Joint location \[m\], inertial frame, initial configuration (default: node 2's initial
    /// position).
    #[serde(default)]
    pub anchor: Option<[f64; 3]>,
    /// Joint axis \[-\] (inertial frame, initial configuration; normalised, must be nonzero).
    pub axis: [f64; 3],
}

impl RevoluteConstraint {
    /// Constraint between frame nodes `n1`, `n2` of `nodes` located at `anchor` \[m\] with axis
    /// `axis` (both in the inertial frame at the nodes' initial states). `element` names the
    /// element in errors.
    pub fn from_initial(
        element: &str,
        nodes: &[NodeDef],
        n1: NodeId,
        n2: NodeId,
        anchor: Vector3<f64>,
        axis: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        let def1 = node(nodes, element, n1, Some(NodeKind::Frame))?;
        let def2 = node(nodes, element, n2, Some(NodeKind::Frame))?;
        distinct(element, n1, n2)?;
        let anchor = finite_vec(element, "anchor", &anchor)?;
        let a = unit_axis(element, "axis", &axis)?;
        let b = perpendicular(&a);
        let c = a.cross(&b);
        let (r1, r2) = (rotation(def1), rotation(def2));
        Ok(Self {
            nodes: [n1, n2],
            d1: r1.transpose() * (anchor - def1.initial.x),
            d2: r2.transpose() * (anchor - def2.initial.x),
            a2: r2.transpose() * a,
            b1: r1.transpose() * b,
            c1: r1.transpose() * c,
            b2: r2.transpose() * b,
            turns: 0.0,
            last: 0.0,
        })
    }

    /// Anchor offsets `d₁`, `d₂` \[m\] in the body frames of nodes 1 and 2.
    pub fn anchor_offsets(&self) -> [Vector3<f64>; 2] {
        [self.d1, self.d2]
    }

    /// Joint axis `a₂` in the body frame of node 2 (unit).
    pub fn axis_body2(&self) -> Vector3<f64> {
        self.a2
    }

    /// Relative rotation angle \[rad\] of body 2 about the axis, in `(−π, π]`, zero at the
    /// initial configuration (the `angle` output adds the whole turns counted step by step).
    pub fn angle(&self, cx: &KinCx<'_>) -> Scalar {
        let u = KinVec::body(1, self.b2);
        let y = cx.dot(&u, &KinVec::body(0, self.c1));
        let x = cx.dot(&u, &KinVec::body(0, self.b1));
        Scalar::atan2(&y, &x)
    }
}

impl RevoluteConstraint {
    /// The value of [`RevoluteConstraint::angle`] from the node rotations alone (no
    /// derivatives: called at every step by `commit`).
    fn angle_value(&self, nodes: &[NodeState]) -> f64 {
        let (r1, r2) = (nodes[0].r, nodes[1].r);
        let u = r2 * self.b2;
        u.dot(&(r1 * self.c1)).atan2(u.dot(&(r1 * self.b1)))
    }
}

impl BilateralConstraint for RevoluteConstraint {
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
        5
    }
    fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics) {
        let gap = KinVec::body_point(0, self.d1) - KinVec::body_point(1, self.d2);
        out.set_vector_rows(0, cx, &gap);
        let a2 = KinVec::body(1, self.a2);
        out.set_dot_row(3, cx, &KinVec::body(0, self.b1), &a2);
        out.set_dot_row(4, cx, &KinVec::body(0, self.c1), &a2);
    }
    fn units(&self) -> ConstraintUnits {
        ConstraintUnits::MIXED
    }
    fn extra_outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec {
            name: "angle",
            len: 1,
            unit: "rad",
            description:
                "relative rotation of node 2 about the joint axis, zero initially, continuous over whole turns",
        }]
    }
    fn write_extra_outputs(&self, cx: &KinCx<'_>, _kin: &Kinematics, out: &mut [f64]) {
        out[0] = self.angle_value(cx.nodes()) + std::f64::consts::TAU * self.turns;
    }
    /// Count a whole turn when the wrapped angle jumps by more than π between steps (a joint
    /// turns far less than half a turn per step).
    fn commit(&mut self, cx: &KinCx<'_>) {
        let a = self.angle_value(cx.nodes());
        let d = a - self.last;
        if d > std::f64::consts::PI {
            self.turns -= 1.0;
        } else if d < -std::f64::consts::PI {
            self.turns += 1.0;
        }
        self.last = a;
    }
}

impl RevoluteJoint {
    /// Revolute joint between frame nodes `n1` and `n2` of `nodes` (e.g. `model.nodes()`),
    /// located at `anchor` \[m\] with axis `axis`, both in the inertial frame at the initial
    /// configuration.
    pub fn new(
        nodes: &[NodeDef],
        n1: NodeId,
        n2: NodeId,
        anchor: Vector3<f64>,
        axis: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        RevoluteConstraint::from_initial(TYPE_NAME, nodes, n1, n2, anchor, axis)
            .and_then(BilateralJoint::from_constraint)
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let spec: RevoluteSpec = parse(def)?;
    build_anchor_axis(
        def,
        cx,
        spec.anchor,
        spec.axis,
        RevoluteConstraint::from_initial,
    )
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Revolute (hinge) joint between two frame nodes: 5 bilateral constraints",
    build: build,
    example: || serde_json::json!({"axis": [0.0, 0.0, 1.0]}),
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: RevoluteSpec,
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{check_kin, check_levels, nan_vec, random_nodes, states};
    use super::*;
    use saltus_core::fd::Rng;
    use saltus_core::lie;

    fn joint(seed: u64) -> (RevoluteJoint, Vec<NodeDef>, Vector3<f64>, Vector3<f64>) {
        let mut rng = Rng::new(seed);
        let nodes = random_nodes(&KINDS, &mut rng);
        let anchor = rng.vec3(1.0);
        let axis = rng.vec3(1.0);
        let j = RevoluteJoint::new(&nodes, NodeId(0), NodeId(1), anchor, axis).unwrap();
        (j, nodes, anchor, axis.normalize())
    }

    #[test]
    fn satisfied_at_initial_configuration_and_along_hinge_motion() {
        for seed in 1..=5 {
            let (j, nodes, anchor, axis) = joint(seed);
            let q = states(&nodes);
            // Round-off of O(1) rotations and dot products: 1e-14 is ~100 ulps.
            assert!(j.kinematics(&q, 0.0).g().amax() < 1e-14);
            // Rotate body 2 about the hinge by 2.5 rad (spatial rotation about the anchor).
            let rot = lie::exp(&(axis * 2.5));
            let mut q2 = q.clone();
            q2[1].x = anchor + rot * (q[1].x - anchor);
            q2[1].r = rot * q[1].r;
            assert!(j.kinematics(&q2, 0.0).g().amax() < 1e-14);
            let cx = KinCx::new(&q2, 0.0, j.layout());
            assert!((j.constraint().angle(&cx).value - 2.5).abs() < 1e-12);
        }
    }

    #[test]
    fn kinematics_match_finite_differences() {
        let (j, ..) = joint(3);
        let err = check_kin(j.constraint(), 0.0, 5);
        eprintln!("revolute kinematics max FD error {err:e}");
    }

    #[test]
    fn hessians_match_finite_differences_at_all_levels() {
        for seed in [1, 7] {
            let (j, ..) = joint(seed);
            let err = check_levels(&j, 4);
            eprintln!("revolute max relative FD error {err:e}");
        }
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let nodes = random_nodes(&KINDS, &mut Rng::new(1));
        for (axis, anchor, param) in [
            (Vector3::zeros(), Vector3::zeros(), "axis"),
            (nan_vec(), Vector3::zeros(), "axis"),
            (Vector3::z(), nan_vec(), "anchor"),
        ] {
            match RevoluteJoint::new(&nodes, NodeId(0), NodeId(1), anchor, axis) {
                Err(BuildError::InvalidParameter { parameter, .. }) => assert_eq!(parameter, param),
                other => panic!("expected invalid {param}, got {other:?}"),
            }
        }
        assert!(
            RevoluteJoint::new(&nodes, NodeId(0), NodeId(0), Vector3::zeros(), Vector3::z())
                .is_err()
        );
        let points = random_nodes(&[NodeKind::Frame, NodeKind::Point], &mut Rng::new(2));
        assert!(matches!(
            RevoluteJoint::new(
                &points,
                NodeId(0),
                NodeId(1),
                Vector3::zeros(),
                Vector3::z()
            ),
            Err(BuildError::NodeKind { .. })
        ));
    }

    #[test]
    fn builds_from_model_file_entry() {
        let nodes = random_nodes(&KINDS, &mut Rng::new(4));
        let cx = BuildCx::new(&nodes);
        let def = |p: serde_json::Value| ElementDef {
            name: "hinge".into(),
            type_name: TYPE_NAME.into(),
            nodes: vec!["n0".into(), "n1".into()],
            parameters: p,
        };
        let e = build(&def(serde_json::json!({"axis": [0.0, 2.0, 0.0]})), &cx).unwrap();
        assert_eq!(e.n_mult(saltus_core::Level::Smooth), 5);
        assert!(matches!(
            build(
                &def(serde_json::json!({"axis": [0.0, 0.0, 1.0], "axes": 1})),
                &cx
            ),
            Err(BuildError::Parameters { .. })
        ));
        assert!(matches!(
            build(&def(serde_json::json!({"axis": [0.0, 0.0, 0.0]})), &cx),
            Err(BuildError::InvalidParameter { ref parameter, .. }) if parameter == "axis"
        ));
    }
}
