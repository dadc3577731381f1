//! `viscous_drag`: linear viscous drag `f = −c ẋ` on a node.

use nalgebra::Matrix3;
use saltus::core::physics::Dependence;
use saltus::core::registry::schemars::JsonSchema;
use saltus::core::registry::{parse_params, require_non_negative, BuildCx, ElementDef};
use saltus::core::{
    BuildError, Element, ElementError, Force, ForceTerms, NodeId, NodeKind, OutputSpec,
    OutputState, PhysicsState,
};
use serde::Deserialize;

/// Model-file parameters of `viscous_drag`.
///
/// `JsonSchema` (through the facade's re-export, no schemars dependency of our own) makes
/// these keys, their units (the `[...]` of each doc comment), defaults and docs what
/// `saltus elements` lists: `params:` in the registration below.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "saltus::core::registry::schemars")]
#[serde(deny_unknown_fields)]
pub struct ViscousDragSpec {
    /// Drag coefficient `c` [N s/m] (≥ 0).
    pub coefficient: f64,
}

/// Viscous drag on the translation of one node: `f = −c ẋ` \[N\], damping `C = −∂f/∂ẋ = c I`.
#[derive(Debug)]
pub struct ViscousDrag {
    node: [NodeId; 1],
    c: f64,
}

impl ViscousDrag {
    /// Drag with coefficient `c` [N s/m] on `node`.
    pub fn new(node: NodeId, c: f64) -> Self {
        Self { node: [node], c }
    }
}

impl Force for ViscousDrag {
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        out.add_force(0, &(-self.c * s.v(0)));
        out.add_damping(0, 0, &(Matrix3::identity() * self.c));
        Ok(())
    }
    fn dependence(&self) -> Dependence {
        Dependence::VELOCITY
    }
}

impl Element for ViscousDrag {
    fn type_name(&self) -> &'static str {
        "viscous_drag"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.node
    }
    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec {
            name: "force",
            len: 3,
            unit: "N",
            description: "drag force −c ẋ on the node",
        }]
    }
    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        out.copy_from_slice((-self.c * s.nodes[0].v).as_slice());
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[None])?;
    let spec: ViscousDragSpec = parse_params(def)?;
    require_non_negative(def, "coefficient", spec.coefficient)?;
    Ok(Box::new(ViscousDrag::new(ids[0], spec.coefficient)))
}

saltus::core::register_element! {
    type_name: "viscous_drag",
    summary: "Linear viscous drag f = −c ẋ on a node (plugin example)",
    build: build,
    example: || serde_json::json!({ "coefficient": 0.8 }),
    example_nodes: &[NodeKind::Point],
    params: ViscousDragSpec,
}
