//! Helpers shared by the joint build functions: parameter parsing and validation, node checks,
//! frame construction.

use super::constraint::BilateralConstraint;
use crate::joints::BilateralJoint;
use nalgebra::{Matrix3, Vector3};
use saltus_core::element::Element;
use saltus_core::model::BuildError;
use saltus_core::node::{NodeDef, NodeId, NodeKind};
use saltus_core::registry::{parse_params, BuildCx, ElementDef};

/// Deserialize parameters, accepting a missing (`null`) parameter table as `{}`.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(def: &ElementDef) -> Result<T, BuildError> {
    if def.parameters.is_null() {
        let mut d = def.clone();
        d.parameters = serde_json::json!({});
        parse_params(&d)
    } else {
        parse_params(def)
    }
}

use saltus_core::registry::invalid;

/// A finite vector parameter.
pub(crate) fn finite_vec(
    element: &str,
    parameter: &str,
    v: &Vector3<f64>,
) -> Result<Vector3<f64>, BuildError> {
    if v.iter().all(|c| c.is_finite()) {
        Ok(*v)
    } else {
        Err(invalid(
            element,
            parameter,
            format!("must be finite, got [{}, {}, {}]", v.x, v.y, v.z),
        ))
    }
}

/// A finite scalar parameter.
pub(crate) fn finite(element: &str, parameter: &str, v: f64) -> Result<f64, BuildError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(invalid(
            element,
            parameter,
            format!("must be finite, got {v}"),
        ))
    }
}

/// A direction parameter, normalised; rejects zero, tiny and non-finite vectors.
pub(crate) fn unit_axis(
    element: &str,
    parameter: &str,
    v: &Vector3<f64>,
) -> Result<Vector3<f64>, BuildError> {
    let v = finite_vec(element, parameter, v)?;
    let norm = v.norm();
    if norm > 1e-12 && norm.is_finite() {
        Ok(v / norm)
    } else {
        Err(invalid(
            element,
            parameter,
            format!(
                "must be a nonzero direction, got [{}, {}, {}]",
                v.x, v.y, v.z
            ),
        ))
    }
}

/// A unit vector perpendicular to the unit vector `a`.
pub(crate) fn perpendicular(a: &Vector3<f64>) -> Vector3<f64> {
    let k = a.iamin();
    let e = Vector3::ith(k, 1.0);
    (e - a * a.dot(&e)).normalize()
}

/// The node definition of `id`, checking that it exists and (if given) its kind.
pub(crate) fn node<'a>(
    nodes: &'a [NodeDef],
    element: &str,
    id: NodeId,
    kind: Option<NodeKind>,
) -> Result<&'a NodeDef, BuildError> {
    let def = nodes
        .get(id.index())
        .ok_or_else(|| BuildError::UnknownNode {
            element: element.to_string(),
            node: format!("#{}", id.0),
        })?;
    if let Some(k) = kind {
        if def.kind != k {
            return Err(BuildError::NodeKind {
                element: element.to_string(),
                node: def.name.clone(),
                expected: k,
            });
        }
    }
    Ok(def)
}

/// Reject a joint between a node and itself.
pub(crate) fn distinct(element: &str, a: NodeId, b: NodeId) -> Result<(), BuildError> {
    if a == b {
        Err(invalid(
            element,
            "nodes",
            "must be two different nodes".to_string(),
        ))
    } else {
        Ok(())
    }
}

/// Initial rotation matrix (body → inertial) of a node.
pub(crate) fn rotation(def: &NodeDef) -> Matrix3<f64> {
    def.initial.r.to_rotation_matrix().into_inner()
}

/// Convert a `[f64; 3]` parameter.
pub(crate) fn v3(a: [f64; 3]) -> Vector3<f64> {
    Vector3::from(a)
}

/// `from_initial` constructor of a two-frame-node joint located by an anchor and an axis
/// (element name, nodes, node ids, anchor \[m\], axis; inertial frame, initial states).
pub(crate) type AnchorAxisConstructor<C> =
    fn(&str, &[NodeDef], NodeId, NodeId, Vector3<f64>, Vector3<f64>) -> Result<C, BuildError>;

/// Shared build function body of the anchor-and-axis joints (revolute, prismatic): resolve two
/// frame nodes, default the anchor to node 2's initial position, construct and wrap.
pub(crate) fn build_anchor_axis<C: BilateralConstraint + 'static>(
    def: &ElementDef,
    cx: &BuildCx<'_>,
    anchor: Option<[f64; 3]>,
    axis: [f64; 3],
    constructor: AnchorAxisConstructor<C>,
) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[Some(NodeKind::Frame); 2])?;
    let anchor = anchor.map(v3).unwrap_or(cx.nodes[ids[1].index()].initial.x);
    let c = constructor(&def.name, cx.nodes, ids[0], ids[1], anchor, v3(axis))?;
    Ok(Box::new(BilateralJoint::from_constraint(c)?))
}

#[cfg(test)]
pub(crate) mod testing {
    //! Test support: random node definitions and the four-level Hessian check.

    use crate::joints::constraint::{check_kinematics, BilateralConstraint};
    use crate::joints::BilateralJoint;
    use nalgebra::Vector3;
    use saltus_core::element::Level;
    use saltus_core::fd::{check_hessian, test_cx, LocalFixture, Rng};
    use saltus_core::node::{NodeDef, NodeKind, NodeState};

    /// Random node definitions of the given kinds: positions in `[-1, 1)³`, random rotations,
    /// velocities and angular velocities in `[-1, 1)³`.
    pub(crate) fn random_nodes(kinds: &[NodeKind], rng: &mut Rng) -> Vec<NodeDef> {
        kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let x = rng.vec3(1.0);
                let mut d = match k {
                    NodeKind::Frame => NodeDef::frame(format!("n{i}"), x).rotation(rng.rotation()),
                    NodeKind::Point => NodeDef::point(format!("n{i}"), x),
                };
                d.initial.v = rng.vec3(1.0);
                if *k == NodeKind::Frame {
                    d.initial.omega = rng.vec3(1.0);
                }
                d
            })
            .collect()
    }

    /// States of `defs` (initial states).
    pub(crate) fn states(defs: &[NodeDef]) -> Vec<NodeState> {
        defs.iter().map(|d| d.initial).collect()
    }

    /// Random states of the given kinds (off the constraint manifold).
    pub(crate) fn random_states(kinds: &[NodeKind], rng: &mut Rng) -> Vec<NodeState> {
        states(&random_nodes(kinds, rng))
    }

    /// Tolerance of the Hessian checks. Central differences with ε = 1e-6: truncation
    /// O(ε²)·|r'''| ≈ 1e-12, round-off ≈ 1e-16·|r|/ε ≈ 1e-10 for O(1) residuals; 1e-6 leaves
    /// a wide margin yet catches any missing Hessian term of relative size ≥ 1e-6.
    pub(crate) const FD_TOL: f64 = 1e-6;

    /// Check the Hessian of `joint` at all four levels for seeds `1..=n_seeds` on random
    /// fixtures (random rotations and positions, hence `g ≠ 0`); returns the largest relative
    /// error.
    pub(crate) fn check_levels<C: BilateralConstraint>(
        joint: &BilateralJoint<C>,
        n_seeds: u64,
    ) -> f64 {
        let kinds = joint.constraint().node_kinds().to_vec();
        let m = joint.constraint().n_constraints();
        let mut worst: f64 = 0.0;
        for level in [
            Level::Smooth,
            Level::Position,
            Level::Velocity,
            Level::Static,
        ] {
            for seed in 1..=n_seeds {
                let fx = LocalFixture::random(&kinds, m, m, 0.3, &mut Rng::new(seed));
                let report = check_hessian(joint, &test_cx(level), &fx, 1e-6)
                    .expect("element evaluation failed");
                let err = report.relative_error();
                assert!(
                    err < FD_TOL,
                    "{} {level} seed {seed}: relative error {err:e} at {:?}\nanalytic\n{}\nnumeric\n{}",
                    joint.constraint().type_name(),
                    report.worst,
                    report.analytic,
                    report.numeric
                );
                worst = worst.max(err);
            }
        }
        worst
    }

    /// Check kinematics (g_q, H, ġ) at random states for several seeds; returns the largest error.
    pub(crate) fn check_kin<C: BilateralConstraint>(c: &C, t: f64, n_seeds: u64) -> f64 {
        let mut worst: f64 = 0.0;
        for seed in 1..=n_seeds {
            let q = random_states(c.node_kinds(), &mut Rng::new(100 + seed));
            // Same central-difference error budget as FD_TOL.
            let r = check_kinematics(c, &q, t, 1e-6);
            assert!(r.max() < FD_TOL, "{} seed {seed}: {r:?}", c.type_name());
            worst = worst.max(r.max());
        }
        worst
    }

    /// A vector that is certainly not a joint axis (for tests of invalid input).
    pub(crate) fn nan_vec() -> Vector3<f64> {
        Vector3::new(f64::NAN, 0.0, 1.0)
    }
}
