//! `nodal_load`: a constant or ramped force and torque on one node.

use nalgebra::Vector3;
use saltus_core::lie::hat;
use saltus_core::physics::Dependence;
use saltus_core::registry::{
    check_finite, check_non_negative, parse_params, require_finite, require_non_negative,
};
use saltus_core::{
    BuildCx, BuildError, Element, ElementDef, ElementError, Force, ForceTerms, NodeId, NodeKind,
    PhysicsState,
};
use serde::{Deserialize, Serialize};

const TYPE_NAME: &str = "nodal_load";

/// Model-file parameters of `nodal_load`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodalLoadSpec {
    /// Force `F` \[N\] in the inertial frame (default zero).
    #[serde(default)]
    pub force: [f64; 3],
    /// Torque `m` \[N m\] in the inertial frame (default zero); a non-zero torque requires a
    /// frame node.
    #[serde(default)]
    pub torque: Option<[f64; 3]>,
    /// Linear ramp duration \[s\]: the load grows as `min(t / ramp_time, 1)`; 0 (default) means
    /// constant from `t = 0`. Ignored by the static level (scaled by the load factor instead).
    #[serde(default)]
    pub ramp_time: f64,
}

/// Constant (optionally ramped) force and torque on one node, given in the inertial frame
/// (`contact-elements.md` §2.1, `nsga.md` §11.2 "external loads").
///
/// Generalized force `f = λ(t) [F ; Rᵀ m]` (`F` \[N\], `m` \[N m\], `λ(t) = min(t/ramp_time, 1)`,
/// or 1 without ramp): the material moment `Rᵀ m` follows the body, giving the configuration
/// tangent `K = −∂f/∂Θ = −λ hat(Rᵀ m)`. Static solve: `λ` = the load factor (no ramp).
/// Energy: potential `−F·x` \[J\] for an unramped load (the work of the torque is not included).
#[derive(Clone, Debug, PartialEq)]
pub struct NodalLoad {
    node: [NodeId; 1],
    kind: NodeKind,
    force: Vector3<f64>,
    torque: Vector3<f64>,
    ramp_time: f64,
}

impl NodalLoad {
    /// A constant force `force` \[N\] (inertial frame) on the point node `node`.
    pub fn on_point(node: NodeId, force: Vector3<f64>) -> Result<Self, BuildError> {
        check_finite(&in_code(), "force", force.as_slice())?;
        Ok(Self {
            node: [node],
            kind: NodeKind::Point,
            force,
            torque: Vector3::zeros(),
            ramp_time: 0.0,
        })
    }

    /// A constant force `force` \[N\] and torque `torque` \[N m\] (inertial frame) on the frame
    /// node `node`.
    pub fn on_frame(
        node: NodeId,
        force: Vector3<f64>,
        torque: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        check_finite(&in_code(), "force", force.as_slice())?;
        check_finite(&in_code(), "torque", torque.as_slice())?;
        Ok(Self {
            node: [node],
            kind: NodeKind::Frame,
            force,
            torque,
            ramp_time: 0.0,
        })
    }

    /// Ramp the load linearly from 0 at `t = 0` to its full value at `t = ramp_time` \[s\]
    /// (0 = no ramp).
    pub fn ramped(mut self, ramp_time: f64) -> Result<Self, BuildError> {
        check_non_negative(&in_code(), "ramp_time", ramp_time)?;
        self.ramp_time = ramp_time;
        Ok(self)
    }

    /// Load factor `λ`: the ramp `min(t/ramp_time, 1)` in dynamics, the load step in statics.
    fn factor(&self, s: &PhysicsState<'_>) -> f64 {
        if s.statics || self.ramp_time == 0.0 {
            s.load_factor
        } else {
            s.load_factor * (s.t / self.ramp_time).clamp(0.0, 1.0)
        }
    }
}

fn in_code() -> String {
    format!("<{TYPE_NAME}>")
}

impl Force for NodalLoad {
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        let lambda = self.factor(s);
        out.add_force(0, &(lambda * self.force));
        if self.kind == NodeKind::Frame {
            // Material moment Rᵀ m follows the body: δ(Rᵀ m) = hat(Rᵀ m) δΘ.
            let m_mat = s.nodes[0].r.inverse() * (lambda * self.torque);
            out.add_force(3, &m_mat);
            out.add_stiffness(3, 3, &(-hat(&m_mat)));
        }
        Ok(())
    }

    fn dependence(&self) -> Dependence {
        // A torque on a frame node is applied as a material moment Rᵀ m: it follows q.
        if self.kind == NodeKind::Frame && self.torque != Vector3::zeros() {
            Dependence::CONFIGURATION
        } else {
            Dependence::NONE
        }
    }

    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        // A constant force is conservative: V = −F·x (a ramped load is not).
        if self.ramp_time > 0.0 {
            return 0.0;
        }
        -self.force.dot(&s.nodes[0].x)
    }
}

/// Build a `nodal_load` from a model-file entry (one node; a frame node if a torque is given).
pub fn build_nodal_load(
    def: &ElementDef,
    cx: &BuildCx<'_>,
) -> Result<Box<dyn Element>, BuildError> {
    let spec: NodalLoadSpec = parse_params(def)?;
    require_finite(def, "force", &spec.force)?;
    let torque = Vector3::from(spec.torque.unwrap_or([0.0; 3]));
    require_finite(def, "torque", torque.as_slice())?;
    require_non_negative(def, "ramp_time", spec.ramp_time)?;
    let want = if torque != Vector3::zeros() {
        Some(NodeKind::Frame)
    } else {
        None
    };
    let nodes = cx.resolve_nodes(def, &[want])?;
    Ok(Box::new(NodalLoad {
        node: [nodes[0]],
        kind: cx.nodes[nodes[0].index()].kind,
        force: Vector3::from(spec.force),
        torque,
        ramp_time: spec.ramp_time,
    }))
}

pub(super) fn nodal_load_example() -> serde_json::Value {
    serde_json::json!({
        "force": [1.0, -2.0, 0.5],
        "torque": [0.3, 0.1, -0.2],
        "ramp_time": 0.5,
    })
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Constant or linearly ramped force and torque (inertial frame) on a node",
    build: build_nodal_load,
    example: nodal_load_example,
    example_nodes: &[NodeKind::Frame],
    params: NodalLoadSpec,
}

impl Element for NodalLoad {
    /// No per-level history: the stage skips this element after a level converges.
    fn level_hook(&self, _level: saltus_core::Level) -> saltus_core::LevelHook {
        saltus_core::LevelHook::Skip
    }
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn nodes(&self) -> &[NodeId] {
        &self.node
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(self.kind)]
    }

    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }
}
