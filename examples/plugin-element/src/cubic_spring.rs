//! `cubic_spring`: a nonlinear (cubic hardening) spring between two nodes.

use nalgebra::Matrix3;
use saltus::core::physics::Dependence;
use saltus::core::registry::schemars::JsonSchema;
use saltus::core::registry::{invalid, parse_params, require_non_negative, BuildCx, ElementDef};
use saltus::core::{
    BuildError, Element, ElementError, Force, ForceTerms, NodeId, NodeKind, OutputSpec,
    OutputState, PhysicsState,
};
use serde::Deserialize;

/// Model-file parameters of `cubic_spring` (two nodes of any kind).
///
/// `JsonSchema` (through the facade's re-export, no schemars dependency of our own) makes
/// these keys, their units (the `[...]` of each doc comment), defaults and docs what
/// `saltus elements` lists: `params:` in the registration below.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "saltus::core::registry::schemars")]
#[serde(deny_unknown_fields)]
pub struct CubicSpringSpec {
    /// Linear stiffness `k` [N/m] (≥ 0).
    pub stiffness: f64,
    /// Cubic stiffness `k₃` [N/m³] (≥ 0: hardening).
    pub cubic_stiffness: f64,
    /// Rest length `ℓ₀` \[m\] (default: the initial distance of the nodes).
    #[serde(default)]
    pub rest_length: Option<f64>,
}

/// Cubic hardening spring between the positions of two nodes: with `d = x₂ − x₁`, `ℓ = |d|`,
/// `n = d/ℓ` and the elongation `e = ℓ − ℓ₀` \[m\], the tension is `N = k e + k₃ e³` \[N\]; node 1
/// receives `+N n`, node 2 `−N n`. Potential energy `½ k e² + ¼ k₃ e⁴` \[J\].
#[derive(Debug)]
pub struct CubicSpring {
    nodes: [NodeId; 2],
    k: f64,
    k3: f64,
    rest_length: f64,
}

impl CubicSpring {
    /// Spring between `nodes` with `k` [N/m], `k₃` [N/m³] and rest length `ℓ₀` \[m\].
    pub fn new(nodes: [NodeId; 2], k: f64, k3: f64, rest_length: f64) -> Self {
        Self {
            nodes,
            k,
            k3,
            rest_length,
        }
    }

    /// Elongation `e` \[m\] and unit direction `n` for the node positions of `nodes`.
    fn geometry(
        &self,
        x1: &nalgebra::Vector3<f64>,
        x2: &nalgebra::Vector3<f64>,
    ) -> (f64, f64, nalgebra::Vector3<f64>) {
        let d = x2 - x1;
        let l = d.norm();
        (l - self.rest_length, l, d / l)
    }
}

// ---- physics: 32 lines ---------------------------------------------------------------------
impl Force for CubicSpring {
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        let (e, l, n) = self.geometry(&s.x(0), &s.x(1));
        if !(l.is_finite() && l > 0.0) {
            return Err(ElementError::InvalidState(format!(
                "cubic_spring: length {l}"
            )));
        }
        let tension = self.k * e + self.k3 * e.powi(3);
        let (a, b) = (s.offset(0), s.offset(1));
        out.add_force(a, &(n * tension));
        out.add_force(b, &(-n * tension));
        if s.tangents {
            // K = −∂f/∂x: dN/de n nᵀ + N/ℓ (I − n nᵀ) on (2,2) and (1,1), minus it off-diagonal.
            let nn = n * n.transpose();
            let dn_de = self.k + 3.0 * self.k3 * e * e;
            let kb = nn * dn_de + (Matrix3::identity() - nn) * (tension / l);
            out.add_stiffness(a, a, &kb);
            out.add_stiffness(b, b, &kb);
            out.add_stiffness(a, b, &-kb);
            out.add_stiffness(b, a, &-kb);
        }
        Ok(())
    }
    fn dependence(&self) -> Dependence {
        Dependence::CONFIGURATION
    }
    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        let (e, _, _) = self.geometry(&s.nodes[0].x, &s.nodes[1].x);
        0.5 * self.k * e * e + 0.25 * self.k3 * e.powi(4)
    }
}
// ---- end of physics ------------------------------------------------------------------------

impl Element for CubicSpring {
    fn type_name(&self) -> &'static str {
        "cubic_spring"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec {
            name: "tension",
            len: 1,
            unit: "N",
            description: "k e + k3 e^3 (positive when pulling the nodes together)",
        }]
    }
    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        let (e, _, _) = self.geometry(&s.nodes[0].x, &s.nodes[1].x);
        out[0] = self.k * e + self.k3 * e.powi(3);
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[None, None])?;
    let spec: CubicSpringSpec = parse_params(def)?;
    require_non_negative(def, "stiffness", spec.stiffness)?;
    require_non_negative(def, "cubic_stiffness", spec.cubic_stiffness)?;
    let x = |k: usize| cx.nodes[ids[k].index()].initial.x;
    let rest_length = spec.rest_length.unwrap_or_else(|| (x(1) - x(0)).norm());
    if !(rest_length.is_finite() && rest_length >= 0.0) {
        return Err(invalid(
            &def.name,
            "rest_length",
            format!("must be finite and >= 0, got {rest_length}"),
        ));
    }
    let spring = CubicSpring::new(
        [ids[0], ids[1]],
        spec.stiffness,
        spec.cubic_stiffness,
        rest_length,
    );
    Ok(Box::new(spring))
}

saltus::core::register_element! {
    type_name: "cubic_spring",
    summary: "Cubic hardening spring N = k e + k3 e^3 between two nodes (plugin example)",
    build: build,
    example: || serde_json::json!({ "stiffness": 40.0, "cubic_stiffness": 900.0, "rest_length": 0.6 }),
    example_nodes: &[NodeKind::Frame, NodeKind::Point],
    params: CubicSpringSpec,
}
