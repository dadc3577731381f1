//! Prismatic (slider) joint between two frame nodes (nsga.md §11.2).

use super::common::{
    build_anchor_axis, distinct, finite_vec, node, parse, perpendicular, rotation, unit_axis,
};
use super::constraint::{BilateralConstraint, ConstraintUnits, KinCx, KinVec, Kinematics, Scalar};
use crate::joints::BilateralJoint;
use nalgebra::Vector3;
use saltus_core::element::{Element, OutputSpec};
use saltus_core::model::BuildError;
use saltus_core::node::{NodeDef, NodeId, NodeKind};
use saltus_core::registry::{BuildCx, ElementDef};
use serde::{Deserialize, Serialize};

const TYPE_NAME: &str = "prismatic_joint";
const KINDS: [NodeKind; 2] = [NodeKind::Frame, NodeKind::Frame];

/// Kinematics of the prismatic joint: the relative rotation of the two bodies is locked and
/// their anchor points may only separate along the joint axis fixed in body 1
/// (5 constraints):
///
/// ```text
/// Δ = x₂ + R₂ d₂ − x₁ − R₁ d₁
/// g = [ (R₁ b₁) · Δ            (1, [m])
///       (R₁ c₁) · Δ            (1, [m])
///       (R₁ b₁) · (R₂ a₂)      (1, [-])
///       (R₁ c₁) · (R₂ a₂)      (1, [-])
///       (R₁ c₁) · (R₂ b₂) ]    (1, [-])
/// ```
///
/// `a`, `b`, `c = a × b` is an orthonormal triad built on the axis in the inertial frame at the
/// initial configuration, stored in body 1 (`b₁`, `c₁`) and body 2 (`a₂`, `b₂`); `d₁`, `d₂` are
/// the anchor offsets. The first two multipliers are the transverse reaction forces \[N\], the
/// last three the locking moments \[N m\]. The slide `s = (R₁ a₁) · Δ` \[m\] is reported as output
/// `displacement`. Scleronomic. Spec: nsga.md §§4–6, §11.2.
#[derive(Clone, Debug, PartialEq)]
pub struct PrismaticConstraint {
    nodes: [NodeId; 2],
    d1: Vector3<f64>,
    d2: Vector3<f64>,
    a1: Vector3<f64>,
    b1: Vector3<f64>,
    c1: Vector3<f64>,
    a2: Vector3<f64>,
    b2: Vector3<f64>,
}

/// Prismatic joint element (registered as `prismatic_joint`); see [`PrismaticConstraint`].
pub type PrismaticJoint = BilateralJoint<PrismaticConstraint>;

/// Model-file parameters of `prismatic_joint` (nodes: two frame nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrismaticSpec {
    /// A point of the sliding line \[m\], inertial frame, initial configuration (default: node
    /// 2's initial position).
    #[serde(default)]
    pub anchor: Option<[f64; 3]>,
    /// Sliding direction \[-\] (inertial frame, initial configuration; normalised, must be nonzero).
    pub axis: [f64; 3],
}

impl PrismaticConstraint {
    /// Constraint between frame nodes `n1`, `n2` of `nodes` sliding along `axis` through
    /// `anchor` \[m\] (inertial frame, initial states). `element` names the element in errors.
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
        let (r1t, r2t) = (rotation(def1).transpose(), rotation(def2).transpose());
        Ok(Self {
            nodes: [n1, n2],
            d1: r1t * (anchor - def1.initial.x),
            d2: r2t * (anchor - def2.initial.x),
            a1: r1t * a,
            b1: r1t * b,
            c1: r1t * c,
            a2: r2t * a,
            b2: r2t * b,
        })
    }

    fn separation(&self) -> KinVec {
        KinVec::body_point(1, self.d2) - KinVec::body_point(0, self.d1)
    }

    /// Slide `(R₁ a₁) · Δ` \[m\] of the anchors along the axis (zero initially).
    pub fn displacement(&self, cx: &KinCx<'_>) -> Scalar {
        cx.dot(&KinVec::body(0, self.a1), &self.separation())
    }
}

impl BilateralConstraint for PrismaticConstraint {
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
        let delta = self.separation();
        let (b1, c1) = (KinVec::body(0, self.b1), KinVec::body(0, self.c1));
        let (a2, b2) = (KinVec::body(1, self.a2), KinVec::body(1, self.b2));
        out.set_dot_row(0, cx, &b1, &delta);
        out.set_dot_row(1, cx, &c1, &delta);
        out.set_dot_row(2, cx, &b1, &a2);
        out.set_dot_row(3, cx, &c1, &a2);
        out.set_dot_row(4, cx, &c1, &b2);
    }
    fn units(&self) -> ConstraintUnits {
        ConstraintUnits::MIXED
    }
    fn extra_outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec {
            name: "displacement",
            len: 1,
            unit: "m",
            description: "slide of node 2's anchor relative to node 1's along the joint axis",
        }]
    }
    fn write_extra_outputs(&self, cx: &KinCx<'_>, _kin: &Kinematics, out: &mut [f64]) {
        out[0] = self.displacement(cx).value;
    }
}

impl PrismaticJoint {
    /// Prismatic joint between frame nodes `n1` and `n2` of `nodes` (e.g. `model.nodes()`)
    /// sliding along `axis` through `anchor` \[m\], both in the inertial frame at the initial
    /// configuration.
    pub fn new(
        nodes: &[NodeDef],
        n1: NodeId,
        n2: NodeId,
        anchor: Vector3<f64>,
        axis: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        PrismaticConstraint::from_initial(TYPE_NAME, nodes, n1, n2, anchor, axis)
            .and_then(BilateralJoint::from_constraint)
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let spec: PrismaticSpec = parse(def)?;
    build_anchor_axis(
        def,
        cx,
        spec.anchor,
        spec.axis,
        PrismaticConstraint::from_initial,
    )
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Prismatic (slider) joint between two frame nodes: 5 bilateral constraints",
    build: build,
    example: || serde_json::json!({"axis": [1.0, 0.0, 0.0]}),
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: PrismaticSpec,
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{check_kin, check_levels, nan_vec, random_nodes, states};
    use super::*;
    use saltus_core::fd::Rng;
    use saltus_core::lie;

    fn joint(seed: u64) -> (PrismaticJoint, Vec<NodeDef>, Vector3<f64>) {
        let mut rng = Rng::new(seed);
        let nodes = random_nodes(&KINDS, &mut rng);
        let anchor = rng.vec3(1.0);
        let axis = rng.vec3(1.0);
        let j = PrismaticJoint::new(&nodes, NodeId(0), NodeId(1), anchor, axis).unwrap();
        (j, nodes, axis.normalize())
    }

    #[test]
    fn satisfied_at_initial_configuration_and_along_slide() {
        for seed in 1..=5 {
            let (j, nodes, axis) = joint(seed);
            let q = states(&nodes);
            // Round-off of O(1) rotations and dot products: 1e-14 is ~100 ulps.
            assert!(j.kinematics(&q, 0.0).g().amax() < 1e-14);
            // Move both bodies rigidly together and slide body 2 by 0.7 m along the axis.
            let rot = lie::exp(&Vector3::new(0.3, 1.1, -0.5));
            let shift = Vector3::new(0.2, -0.4, 0.9);
            let mut q2 = q.clone();
            for s in &mut q2 {
                s.x = rot * s.x + shift;
                s.r = rot * s.r;
            }
            q2[1].x += rot * axis * 0.7;
            assert!(j.kinematics(&q2, 0.0).g().amax() < 1e-14);
            let cx = KinCx::new(&q2, 0.0, j.layout());
            assert!((j.constraint().displacement(&cx).value - 0.7).abs() < 1e-14);
            // A relative rotation about the axis violates the constraint.
            q2[1].r = lie::exp(&(rot * axis * 0.1)) * q2[1].r;
            assert!(j.kinematics(&q2, 0.0).g().amax() > 1e-3);
        }
    }

    #[test]
    fn kinematics_match_finite_differences() {
        let (j, ..) = joint(3);
        let err = check_kin(j.constraint(), 0.0, 5);
        eprintln!("prismatic kinematics max FD error {err:e}");
    }

    #[test]
    fn hessians_match_finite_differences_at_all_levels() {
        for seed in [2, 9] {
            let (j, ..) = joint(seed);
            let err = check_levels(&j, 4);
            eprintln!("prismatic max relative FD error {err:e}");
        }
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let nodes = random_nodes(&KINDS, &mut Rng::new(1));
        for (axis, param) in [(Vector3::zeros(), "axis"), (nan_vec(), "axis")] {
            assert!(matches!(
                PrismaticJoint::new(&nodes, NodeId(0), NodeId(1), Vector3::zeros(), axis),
                Err(BuildError::InvalidParameter { ref parameter, .. }) if parameter == param
            ));
        }
        let cx = BuildCx::new(&nodes);
        let def = ElementDef {
            name: "slider".into(),
            type_name: TYPE_NAME.into(),
            nodes: vec!["n0".into(), "n1".into()],
            parameters: serde_json::json!({"axis": [1.0, 1.0, 0.0], "anchor": [0.0, 0.0, 0.0]}),
        };
        assert!(build(&def, &cx).is_ok());
    }
}
