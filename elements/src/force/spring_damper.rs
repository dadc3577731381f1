//! `spring_damper`: linear translational spring and viscous damper.

use super::{add_terms, rotation, Layout, Mat12, Mat12x3, Row12, Vec12};
use nalgebra::{Matrix3, Vector3};
use saltus_core::lie::hat;
use saltus_core::physics::Dependence;
use saltus_core::registry::{
    check_finite, check_non_negative, invalid, parse_params, require_non_negative,
};
use saltus_core::{
    BuildCx, BuildError, Element, ElementDef, ElementError, Force, ForceTerms, NodeId, NodeKind,
    NodeState, OutputSpec, OutputState, PhysicsState,
};
use serde::{Deserialize, Serialize};

const TYPE_NAME: &str = "spring_damper";

/// Model-file parameters of `spring_damper`. One node + `anchor`, or two nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpringDamperSpec {
    /// Stiffness `k` \[N/m\], >= 0.
    pub stiffness: f64,
    /// Viscous damping `c` \[N s/m\], >= 0 (default 0).
    #[serde(default)]
    pub damping: f64,
    /// Rest length `ℓ0` \[m\], >= 0. Default: the initial distance between the attachment
    /// points (which must then be non-zero).
    #[serde(default)]
    pub rest_length: Option<f64>,
    /// Attachment point on node 1 relative to the node, in its body frame \[m\]
    /// (frame nodes only; default: the node itself).
    #[serde(default)]
    pub offset_1: Option<[f64; 3]>,
    /// Attachment point on node 2 relative to the node, in its body frame \[m\]
    /// (frame nodes only; two-node springs only).
    #[serde(default)]
    pub offset_2: Option<[f64; 3]>,
    /// Fixed anchor point \[m\] in the inertial frame: required when only one node is listed
    /// (the spring then joins the anchor to node 1), forbidden with two nodes.
    #[serde(default)]
    pub anchor: Option<[f64; 3]>,
}

/// One end of a [`SpringDamper`]: a node and an attachment offset in its body frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attachment {
    /// The node.
    pub node: NodeId,
    /// Kind of the node (fixes the local unknown layout; checked when added to a model).
    pub kind: NodeKind,
    /// Attachment point relative to the node in its body frame \[m\] (zero for point nodes).
    pub offset: Vector3<f64>,
}

impl Attachment {
    /// Attach at a point node.
    pub fn point(node: NodeId) -> Self {
        Self {
            node,
            kind: NodeKind::Point,
            offset: Vector3::zeros(),
        }
    }

    /// Attach at `offset` \[m\] (body frame) from a frame node.
    pub fn frame(node: NodeId, offset: Vector3<f64>) -> Self {
        Self {
            node,
            kind: NodeKind::Frame,
            offset,
        }
    }

    /// Position of the attachment point \[m\] for the node state `state`: `x + R·offset`.
    pub fn position(&self, state: &NodeState) -> Vector3<f64> {
        state.x + state.r * self.offset
    }
}

/// Translational linear spring and viscous damper between two attachment points, or between
/// one attachment point and a fixed anchor (`contact-elements.md` §2.4).
///
/// With `d = p₂ − p₁` (`p₁` = anchor for a one-node spring), `ℓ = |d|` \[m\], `n = d/ℓ`,
/// `ℓ̇ = n·(ṗ₂ − ṗ₁)` \[m/s\] and the tension `N = k(ℓ − ℓ0) + c ℓ̇` \[N\], the force on
/// attachment point 2 is `−N n` and on point 1 `+N n` (`k` \[N/m\], `c` \[N s/m\]). Attachment
/// points `p = x + R o` on frame nodes transmit the material moment `o × (Rᵀ F)`.
/// Energy: potential `½ k (ℓ − ℓ0)²` \[J\]. Outputs: `length` \[m\], `tension` \[N\].
/// A zero length makes the direction undefined: evaluation returns
/// [`ElementError::InvalidState`].
#[derive(Clone, Debug, PartialEq)]
pub struct SpringDamper {
    nodes: Vec<NodeId>,
    ends: Vec<Attachment>,
    layout: Layout,
    anchor: Vector3<f64>,
    stiffness: f64,
    damping: f64,
    rest_length: f64,
}

/// Kinematics of a spring at one configuration.
struct SpringKin {
    length: f64,
    n: Vector3<f64>,
    /// `E` with `∂d = Eᵀ δq` (local unknowns × 3).
    e: Mat12x3,
}

impl SpringDamper {
    /// A spring–damper between two attachment points: stiffness `stiffness` \[N/m\] >= 0,
    /// damping `damping` \[N s/m\] >= 0, rest length `rest_length` \[m\] >= 0.
    pub fn between(
        a: Attachment,
        b: Attachment,
        stiffness: f64,
        damping: f64,
        rest_length: f64,
    ) -> Result<Self, BuildError> {
        Self::checked(
            &format!("<{TYPE_NAME}>"),
            vec![a, b],
            Vector3::zeros(),
            stiffness,
            damping,
            rest_length,
        )
    }

    /// A spring–damper between the fixed point `anchor` \[m\] (inertial frame) and an
    /// attachment point.
    pub fn to_anchor(
        a: Attachment,
        anchor: Vector3<f64>,
        stiffness: f64,
        damping: f64,
        rest_length: f64,
    ) -> Result<Self, BuildError> {
        Self::checked(
            &format!("<{TYPE_NAME}>"),
            vec![a],
            anchor,
            stiffness,
            damping,
            rest_length,
        )
    }

    fn checked(
        element: &str,
        ends: Vec<Attachment>,
        anchor: Vector3<f64>,
        stiffness: f64,
        damping: f64,
        rest_length: f64,
    ) -> Result<Self, BuildError> {
        check_non_negative(element, "stiffness", stiffness)?;
        check_non_negative(element, "damping", damping)?;
        check_non_negative(element, "rest_length", rest_length)?;
        check_finite(element, "anchor", anchor.as_slice())?;
        for (i, end) in ends.iter().enumerate() {
            let name = if i == 0 { "offset_1" } else { "offset_2" };
            check_finite(element, name, end.offset.as_slice())?;
            if end.kind == NodeKind::Point && end.offset != Vector3::zeros() {
                return Err(invalid(
                    element,
                    name,
                    "requires a frame node (a point node has no body frame)",
                ));
            }
        }
        let kinds: Vec<NodeKind> = ends.iter().map(|e| e.kind).collect();
        Ok(Self {
            nodes: ends.iter().map(|e| e.node).collect(),
            layout: Layout::new(&kinds),
            ends,
            anchor,
            stiffness,
            damping,
            rest_length,
        })
    }

    /// Rest length `ℓ0` \[m\].
    pub fn rest_length(&self) -> f64 {
        self.rest_length
    }

    fn layout(&self) -> Layout {
        self.layout
    }

    /// `±1` for the end `i`: node 1 of a two-node spring enters `d` with `−1`.
    fn sign(&self, i: usize) -> f64 {
        if self.ends.len() == 2 && i == 0 {
            -1.0
        } else {
            1.0
        }
    }

    /// `d = p₂ − p₁` (or `p − anchor`).
    fn separation(&self, nodes: &[NodeState]) -> Vector3<f64> {
        let mut d = if self.ends.len() == 1 {
            -self.anchor
        } else {
            Vector3::zeros()
        };
        for (i, end) in self.ends.iter().enumerate() {
            d += self.sign(i) * end.position(&nodes[i]);
        }
        d
    }

    fn kin(&self, nodes: &[NodeState]) -> Result<SpringKin, ElementError> {
        let d = self.separation(nodes);
        let length = d.norm();
        if !(length.is_finite() && length > 0.0) {
            return Err(ElementError::InvalidState(format!(
                "spring_damper: attachment points coincide or are not finite (length {length})"
            )));
        }
        let layout = self.layout();
        let mut e = Mat12x3::zeros();
        for (i, end) in self.ends.iter().enumerate() {
            let o = layout.offset(i);
            let sg = self.sign(i);
            e.fixed_view_mut::<3, 3>(o, 0)
                .copy_from(&(Matrix3::identity() * sg));
            if end.kind == NodeKind::Frame {
                let rt = rotation(&nodes[i]).transpose();
                e.fixed_view_mut::<3, 3>(o + 3, 0)
                    .copy_from(&(hat(&end.offset) * rt * sg));
            }
        }
        Ok(SpringKin {
            length,
            n: d / length,
            e,
        })
    }

    /// Rate of elongation `ℓ̇` \[m/s\].
    fn length_rate(&self, k: &SpringKin, nodes: &[NodeState]) -> f64 {
        let w = k.e.transpose() * self.layout().velocity(nodes);
        k.n.dot(&w)
    }

    /// `f = −N ∂ℓ/∂q`, `K = −∂f/∂q`, `C = −∂f/∂v` (fixed-size, local unknown order).
    fn terms(&self, nodes: &[NodeState]) -> Result<(Vec12, Mat12, Mat12), ElementError> {
        let kin = self.kin(nodes)?;
        let layout = self.layout();
        let damped = self.damping != 0.0;
        let v = layout.velocity(nodes);
        let n = kin.n;
        let l = kin.length;
        let ldot = if damped {
            self.length_rate(&kin, nodes)
        } else {
            0.0
        };
        let tension = self.stiffness * (l - self.rest_length) + self.damping * ldot;
        // g = ∂ℓ/∂q (as a column): generalized direction of the spring force.
        let g: Vec12 = kin.e * n;
        // Kg = ∂g/∂q = E P Eᵀ/ℓ + D, D_ii = s_i hat(o_i) hat(R_iᵀ n) on frame rotations.
        let p = Matrix3::identity() - n * n.transpose();
        let mut kg: Mat12 = kin.e * p * kin.e.transpose() / l;
        for (i, end) in self.ends.iter().enumerate() {
            if end.kind == NodeKind::Frame {
                let o = layout.offset(i) + 3;
                let rtn = nodes[i].r.inverse() * n;
                let d = hat(&end.offset) * hat(&rtn) * self.sign(i);
                let mut blk = kg.fixed_view_mut::<3, 3>(o, o);
                blk += d;
            }
        }
        // ∂N/∂q = k gᵀ + c vᵀ Kg.
        let mut dn: Row12 = g.transpose() * self.stiffness;
        let mut c = Mat12::zeros();
        if damped {
            dn += v.transpose() * kg * self.damping;
            c = g * g.transpose() * self.damping;
        }
        Ok((-g * tension, g * dn + kg * tension, c))
    }
}

impl Force for SpringDamper {
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        let (f, k, c) = self.terms(s.nodes)?;
        add_terms(out, self.layout.n(), &f, &k, &c);
        Ok(())
    }

    /// Undamped (`damping` = 0): the configuration alone.
    fn dependence(&self) -> Dependence {
        if self.damping == 0.0 {
            Dependence::CONFIGURATION
        } else {
            Dependence::ALL
        }
    }

    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        // Elastic: V = ½ k (l − l₀)² (the damper dissipates).
        let l = self.separation(s.nodes).norm();
        0.5 * self.stiffness * (l - self.rest_length).powi(2)
    }
}

/// Build a `spring_damper` from a model-file entry (one node + `anchor`, or two nodes).
pub fn build_spring_damper(
    def: &ElementDef,
    cx: &BuildCx<'_>,
) -> Result<Box<dyn Element>, BuildError> {
    let count = def.nodes.len();
    if count != 1 && count != 2 {
        return Err(BuildError::NodeCount {
            element: def.name.clone(),
            type_name: def.type_name.clone(),
            expected: 2,
            got: count,
        });
    }
    let any = [None, None];
    let ids = cx.resolve_nodes(def, &any[..count])?;
    let spec: SpringDamperSpec = parse_params(def)?;
    require_non_negative(def, "stiffness", spec.stiffness)?;
    require_non_negative(def, "damping", spec.damping)?;
    let anchor = match (count, spec.anchor) {
        (1, Some(a)) => Vector3::from(a),
        (1, None) => {
            return Err(invalid(
                &def.name,
                "anchor",
                "is required when the spring has a single node",
            ))
        }
        (_, Some(_)) => {
            return Err(invalid(
                &def.name,
                "anchor",
                "is only allowed when the spring has a single node",
            ))
        }
        (_, None) => Vector3::zeros(),
    };
    if count == 1 && spec.offset_2.is_some() {
        return Err(invalid(
            &def.name,
            "offset_2",
            "is only allowed when the spring has two nodes",
        ));
    }
    let offsets = [spec.offset_1, spec.offset_2];
    let mut ends = Vec::with_capacity(count);
    for (i, id) in ids.iter().enumerate() {
        let node = &cx.nodes[id.index()];
        let offset = Vector3::from(offsets[i].unwrap_or([0.0; 3]));
        if node.kind == NodeKind::Point && offsets[i].is_some() && offset != Vector3::zeros() {
            let name = if i == 0 { "offset_1" } else { "offset_2" };
            return Err(invalid(
                &def.name,
                name,
                format!("requires a frame node; `{}` is a point node", node.name),
            ));
        }
        ends.push(Attachment {
            node: *id,
            kind: node.kind,
            offset,
        });
    }
    let rest_length = match spec.rest_length {
        Some(l) => l,
        None => {
            let initial: Vec<NodeState> =
                ids.iter().map(|id| cx.nodes[id.index()].initial).collect();
            let probe = SpringDamper::checked(&def.name, ends.clone(), anchor, 0.0, 0.0, 0.0)?;
            let l = probe.separation(&initial).norm();
            if !(l.is_finite() && l > 0.0) {
                return Err(invalid(
                    &def.name,
                    "rest_length",
                    "is omitted but the initial attachment points coincide; give it explicitly",
                ));
            }
            l
        }
    };
    Ok(Box::new(SpringDamper::checked(
        &def.name,
        ends,
        anchor,
        spec.stiffness,
        spec.damping,
        rest_length,
    )?))
}

fn spring_damper_example() -> serde_json::Value {
    serde_json::json!({
        "stiffness": 50.0,
        "damping": 0.8,
        "rest_length": 0.7,
        "offset_1": [0.1, -0.2, 0.05],
    })
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Linear translational spring and viscous damper between two nodes or a node and an anchor",
    build: build_spring_damper,
    example: spring_damper_example,
    example_nodes: &[NodeKind::Frame, NodeKind::Point],
    params: SpringDamperSpec,
}

impl Element for SpringDamper {
    /// No per-level history: the stage skips this element after a level converges.
    fn level_hook(&self, _level: saltus_core::Level) -> saltus_core::LevelHook {
        saltus_core::LevelHook::Skip
    }
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        self.ends.iter().map(|e| Some(e.kind)).collect()
    }

    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec {
                name: "length",
                len: 1,
                unit: "m",
                description: "distance between the attachment points",
            },
            OutputSpec {
                name: "tension",
                len: 1,
                unit: "N",
                description: "k(l - l0) + c dl/dt (positive when pulling the ends together)",
            },
        ]
    }

    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        match self.kin(s.nodes) {
            Ok(kin) => {
                let ldot = self.length_rate(&kin, s.nodes);
                out[0] = kin.length;
                out[1] = self.stiffness * (kin.length - self.rest_length) + self.damping * ldot;
            }
            Err(_) => {
                out[0] = 0.0;
                out[1] = f64::NAN;
            }
        }
    }
}
