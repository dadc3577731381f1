//! A plugin element: linear viscous drag `f = −c ẋ` on a node, registered in the Saltus
//! registry from this crate (no change to Saltus). Link the crate (`use saltus_plugin_drag as _;`
//! or call [`link`]) and the type `viscous_drag` is available to model files.

use nalgebra::Matrix3;
use saltus::core::registry::{parse_params, require_non_negative, BuildCx, ElementDef};
use saltus::core::{
    BuildError, Element, ElementError, Level, Levels, LocalState, LocalSystem, NodeId, NodeKind,
    OutputSpec, OutputState, StepCx,
};
use serde::Deserialize;

/// Model-file parameters of `viscous_drag`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViscousDragSpec {
    /// Drag coefficient `c` [N s/m] (≥ 0).
    pub coefficient: f64,
}

/// Viscous drag on the translation of one node: force `f = −c ẋ` [N].
///
/// Levels (spec `nsga.md` §11.2, force element): smooth `r = c ẋ`, Hessian `c · ∂ẋ/∂u`;
/// position: the force does not depend on `q`, so `f(q, ṽ) − f(q̃, ṽ) = 0`; velocity
/// `r = −h (f(v) − f(ṽ)) = h c (ẋ − ẋ̃)`, Hessian `h c I`.
#[derive(Debug)]
pub struct ViscousDrag {
    node: [NodeId; 1],
    kind: NodeKind,
    c: f64,
}

impl ViscousDrag {
    /// Drag with coefficient `c` [N s/m] on `node` of kind `kind`.
    pub fn new(node: NodeId, kind: NodeKind, c: f64) -> Self {
        Self {
            node: [node],
            kind,
            c,
        }
    }
}

impl Element for ViscousDrag {
    fn type_name(&self) -> &'static str {
        "viscous_drag"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.node
    }
    fn levels(&self) -> Levels {
        Levels::SMOOTH.union(Levels::VELOCITY)
    }
    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(self.kind)]
    }
    fn smooth(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let r = s.nodes[0].v * self.c;
        for i in 0..3 {
            out.residual[i] += r[i];
        }
        let mut h = out.hessian.fixed_view_mut::<3, 3>(0, 0);
        h += Matrix3::identity() * (self.c * cx.dv_dv);
        Ok(())
    }
    fn velocity(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let r = (s.nodes[0].v - s.smooth[0].v) * (cx.force_weight * self.c);
        for i in 0..3 {
            out.residual[i] += r[i];
        }
        let mut h = out.hessian.fixed_view_mut::<3, 3>(0, 0);
        h += Matrix3::identity() * (self.c * cx.force_weight * cx.dv_dv);
        Ok(())
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
        let f = -self.c * s.nodes[0].v;
        out.copy_from_slice(f.as_slice());
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[None])?;
    let spec: ViscousDragSpec = parse_params(def)?;
    require_non_negative(def, "coefficient", spec.coefficient)?;
    let kind = cx.nodes[ids[0].index()].kind;
    Ok(Box::new(ViscousDrag::new(ids[0], kind, spec.coefficient)))
}

saltus::core::register_element! {
    type_name: "viscous_drag",
    summary: "Linear viscous drag f = −c ẋ on a node (plugin example)",
    build: build,
    example: || serde_json::json!({ "coefficient": 0.8 }),
    example_nodes: &[NodeKind::Point],
}

/// Keeps this crate linked (and its registration alive) in binaries that name nothing else.
pub fn link() {}

/// Levels at which the element contributes (for documentation and tests).
pub const LEVELS: [Level; 2] = [Level::Smooth, Level::Velocity];
