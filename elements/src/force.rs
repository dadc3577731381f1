//! Force elements: nodal loads, translational spring–dampers and torsional spring–dampers.
//!
//! A force element contributes `−f(q, v, t)` to the node rows (`nsga.md` §11.2). Writing
//! `r_f(q, v) = −f` with configuration tangent `K = ∂r_f/∂q` (material variations
//! `δR = R hat(δΘ)`, rotational columns then post-multiplied by the node's `T`) and velocity
//! tangent `C = ∂r_f/∂v`, the levels are
//!
//! | level | residual | Hessian |
//! |---|---|---|
//! | smooth (§4) | `r_f(q̃, ṽ)` | `dq_dv·K T + dv_dv·C` |
//! | position (§5) | `(h²/2)(r_f(q, ṽ) − r_f(q̃, ṽ))` | `(h²/2) K T` |
//! | velocity (§6) | `h (r_f(q, v) − r_f(q̃, ṽ))` | `h C` |
//! | static | `r_f(q, 0)` (loads scaled by the load factor `t`) | `K T` |
//!
//! where `h²/2` and `h` are the context's `force_weight`.

use nalgebra::{Matrix3, RowSVector, SMatrix, SVector, UnitQuaternion, Vector3};
use saltus_core::lie::hat;
use saltus_core::registry::{parse_params, require_finite, require_non_negative};
use saltus_core::{
    BuildCx, BuildError, Element, ElementDef, ElementError, Energy, Level, Levels, LocalState,
    LocalSystem, NodeId, NodeKind, NodeState, OutputSpec, OutputState, StepCx,
};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

type Vec12 = SVector<f64, 12>;
type Row12 = RowSVector<f64, 12>;
type Mat12 = SMatrix<f64, 12, 12>;
type Mat12x3 = SMatrix<f64, 12, 3>;

fn invalid(element: &str, parameter: &str, message: impl Into<String>) -> BuildError {
    BuildError::InvalidParameter {
        element: element.to_string(),
        parameter: parameter.to_string(),
        message: message.into(),
    }
}

fn check_non_negative(element: &str, parameter: &str, value: f64) -> Result<(), BuildError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(invalid(
            element,
            parameter,
            format!("must be finite and >= 0, got {value}"),
        ))
    }
}

fn check_finite(element: &str, parameter: &str, v: &Vector3<f64>) -> Result<(), BuildError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(invalid(
            element,
            parameter,
            format!("must be finite, got {:?}", v.as_slice()),
        ))
    }
}

fn rotation(n: &NodeState) -> Matrix3<f64> {
    n.r.to_rotation_matrix().into_inner()
}

/// Local unknown layout of a force element with one or two nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    kinds: [NodeKind; 2],
    count: usize,
}

impl Layout {
    fn new(kinds: &[NodeKind]) -> Self {
        let mut k = [NodeKind::Point; 2];
        k[..kinds.len()].copy_from_slice(kinds);
        Self {
            kinds: k,
            count: kinds.len(),
        }
    }

    fn offset(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.kinds[0].ndof()
        }
    }

    fn n(&self) -> usize {
        self.kinds[..self.count].iter().map(|k| k.ndof()).sum()
    }

    fn is_frame(&self, i: usize) -> bool {
        self.kinds[i] == NodeKind::Frame
    }

    /// Node velocities `[ẋ; Ω]` in local unknown order.
    fn velocity(&self, nodes: &[NodeState]) -> Vec12 {
        let mut v = Vec12::zeros();
        for i in 0..self.count {
            let o = self.offset(i);
            v.fixed_rows_mut::<3>(o).copy_from(&nodes[i].v);
            if self.is_frame(i) {
                v.fixed_rows_mut::<3>(o + 3).copy_from(&nodes[i].omega);
            }
        }
        v
    }
}

/// `r_f = −f`, `K = ∂r_f/∂q` (material, before `T`) and `C = ∂r_f/∂v` at one state.
struct ForceTerms {
    r: Vec12,
    k: Mat12,
    c: Mat12,
}

/// How a force element is evaluated at one state.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// Dynamic levels: full force with damping at the node velocities.
    Dynamic,
    /// Static level: no velocity-dependent forces.
    Static,
}

/// Assemble one level of a force element from its force terms (module docs).
fn add_force_level(
    cx: &StepCx,
    s: &LocalState<'_>,
    layout: &Layout,
    out: &mut LocalSystem<'_>,
    eval: impl Fn(&[NodeState], Mode) -> Result<ForceTerms, ElementError>,
) -> Result<(), ElementError> {
    let fw = cx.force_weight;
    let (r, mut k, c) = match cx.level {
        Level::Smooth => {
            let t = eval(s.nodes, Mode::Dynamic)?;
            (t.r, t.k, t.c)
        }
        Level::Static => {
            let t = eval(s.nodes, Mode::Static)?;
            (t.r, t.k, Mat12::zeros())
        }
        Level::Position | Level::Velocity => {
            let t = eval(s.nodes, Mode::Dynamic)?;
            let t0 = eval(s.smooth, Mode::Dynamic)?;
            (t.r - t0.r, t.k, t.c)
        }
    };
    for i in 0..layout.count {
        if layout.is_frame(i) {
            let o = layout.offset(i) + 3;
            let cols = k.fixed_columns::<3>(o) * s.rot_tangent[i];
            k.fixed_columns_mut::<3>(o).copy_from(&cols);
        }
    }
    let h = k * (fw * cx.dq_dv) + c * (fw * cx.dv_dv);
    let n = layout.n();
    debug_assert!(out.residual.len() >= n);
    for i in 0..n {
        out.residual[i] += fw * r[i];
        for j in 0..n {
            out.hessian[(i, j)] += h[(i, j)];
        }
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// nodal_load
// ------------------------------------------------------------------------------------------

/// Model-file parameters of `nodal_load`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
/// tangent `K = ∂(−f)/∂Θ = −λ hat(Rᵀ m)`. Static level: `f = t [F ; Rᵀ m]`.
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
        check_finite("<nodal_load>", "force", &force)?;
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
        check_finite("<nodal_load>", "force", &force)?;
        check_finite("<nodal_load>", "torque", &torque)?;
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
        check_non_negative("<nodal_load>", "ramp_time", ramp_time)?;
        self.ramp_time = ramp_time;
        Ok(self)
    }

    /// Load factor at time `t` \[s\] (dynamic levels) or the load factor itself (static level).
    fn factor(&self, cx: &StepCx) -> f64 {
        match cx.level {
            Level::Static => cx.t,
            _ if self.ramp_time > 0.0 => (cx.t / self.ramp_time).clamp(0.0, 1.0),
            _ => 1.0,
        }
    }

    fn terms(&self, lambda: f64, nodes: &[NodeState]) -> ForceTerms {
        let mut t = ForceTerms {
            r: Vec12::zeros(),
            k: Mat12::zeros(),
            c: Mat12::zeros(),
        };
        t.r.fixed_rows_mut::<3>(0)
            .copy_from(&(-lambda * self.force));
        if self.kind == NodeKind::Frame {
            let m_mat = nodes[0].r.inverse() * (lambda * self.torque);
            t.r.fixed_rows_mut::<3>(3).copy_from(&(-m_mat));
            t.k.fixed_view_mut::<3, 3>(3, 3).copy_from(&(-hat(&m_mat)));
        }
        t
    }

    fn level(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let lambda = self.factor(cx);
        add_force_level(cx, s, &Layout::new(&[self.kind]), out, |nodes, _| {
            Ok(self.terms(lambda, nodes))
        })
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

fn nodal_load_example() -> serde_json::Value {
    serde_json::json!({
        "force": [1.0, -2.0, 0.5],
        "torque": [0.3, 0.1, -0.2],
        "ramp_time": 0.5,
    })
}

saltus_core::register_element! {
    type_name: "nodal_load",
    summary: "Constant or linearly ramped force and torque (inertial frame) on a node",
    build: build_nodal_load,
    example: nodal_load_example,
    example_nodes: &[NodeKind::Frame],
}

impl Element for NodalLoad {
    fn type_name(&self) -> &'static str {
        "nodal_load"
    }

    fn nodes(&self) -> &[NodeId] {
        &self.node
    }

    fn levels(&self) -> Levels {
        Levels::ALL
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(self.kind)]
    }

    fn evaluate(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.level(cx, s, out)
    }

    fn energy(&self, s: &OutputState<'_>) -> Energy {
        if self.ramp_time > 0.0 {
            return Energy::default();
        }
        Energy {
            kinetic: 0.0,
            potential: -self.force.dot(&s.nodes[0].x),
        }
    }
}

// ------------------------------------------------------------------------------------------
// spring_damper
// ------------------------------------------------------------------------------------------

/// Model-file parameters of `spring_damper`. One node + `anchor`, or two nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
            "<spring_damper>",
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
            "<spring_damper>",
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
        check_finite(element, "anchor", &anchor)?;
        for (i, end) in ends.iter().enumerate() {
            let name = if i == 0 { "offset_1" } else { "offset_2" };
            check_finite(element, name, &end.offset)?;
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

    fn terms(&self, nodes: &[NodeState], mode: Mode) -> Result<ForceTerms, ElementError> {
        let kin = self.kin(nodes)?;
        let layout = self.layout();
        let damped = mode == Mode::Dynamic && self.damping != 0.0;
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
        Ok(ForceTerms {
            r: g * tension,
            k: g * dn + kg * tension,
            c,
        })
    }

    fn level(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        add_force_level(cx, s, &self.layout(), out, |nodes, mode| {
            self.terms(nodes, mode)
        })
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
    type_name: "spring_damper",
    summary: "Linear translational spring and viscous damper between two nodes or a node and an anchor",
    build: build_spring_damper,
    example: spring_damper_example,
    example_nodes: &[NodeKind::Frame, NodeKind::Point],
}

impl Element for SpringDamper {
    fn type_name(&self) -> &'static str {
        "spring_damper"
    }

    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    fn levels(&self) -> Levels {
        Levels::ALL
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        self.ends.iter().map(|e| Some(e.kind)).collect()
    }

    fn evaluate(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.level(cx, s, out)
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

    fn energy(&self, s: &OutputState<'_>) -> Energy {
        let l = self.separation(s.nodes).norm();
        Energy {
            kinetic: 0.0,
            potential: 0.5 * self.stiffness * (l - self.rest_length).powi(2),
        }
    }
}

// ------------------------------------------------------------------------------------------
// torsional_spring
// ------------------------------------------------------------------------------------------

/// Model-file parameters of `torsional_spring` (two frame nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorsionalSpringSpec {
    /// Rotational stiffness `k` \[N m/rad\], >= 0.
    pub stiffness: f64,
    /// Rotational viscous damping `c` \[N m s/rad\], >= 0 (default 0).
    #[serde(default)]
    pub damping: f64,
    /// Spring axis in the inertial frame at the initial configuration (any non-zero length;
    /// normalised). Stored in both body frames.
    pub axis: [f64; 3],
    /// Rest angle `θ0` \[rad\] (default 0; the initial relative angle is 0).
    #[serde(default)]
    pub rest_angle: f64,
}

/// Rotational spring and viscous damper between two frame nodes about an axis
/// (`nsga.md` §11.2, force element).
///
/// The axis `a` and a reference vector `b ⊥ a` given at the initial configuration are stored
/// in the body frame of node 1 (`a₁`, `b₁`, `c₁ = a₁ × b₁`) and `b` in that of node 2 (`b₂`).
/// The relative angle \[rad\] is `θ = atan2(B₂·C₁, B₂·B₁)` with `B₁ = R₁b₁`, `C₁ = R₁c₁`,
/// `B₂ = R₂b₂` (angle of body 2's reference vector about body 1's axis; 0 initially),
/// unwrapped across ±π to the branch nearest the last committed angle (turns are tracked by
/// [`Element::commit`]). The moment on node 2 about the axis is `−M`, on node 1 `+M`, with
/// `M = k(θ − θ0) + c θ̇` \[N m\] (`k` \[N m/rad\], `c` \[N m s/rad\]); generalized force
/// `f = −M ∂θ/∂q`. Energy: potential `½ k (θ − θ0)²` \[J\]. Outputs: `angle` \[rad\],
/// `moment` = `M` \[N m\]. Undefined (error) when body 2's reference vector is parallel to the
/// axis of body 1.
#[derive(Clone, Debug, PartialEq)]
pub struct TorsionalSpring {
    nodes: [NodeId; 2],
    b1: Vector3<f64>,
    c1: Vector3<f64>,
    b2: Vector3<f64>,
    stiffness: f64,
    damping: f64,
    rest_angle: f64,
    /// Last committed (unwrapped) angle \[rad\].
    angle_ref: f64,
}

/// Angle kinematics of a torsional spring at one configuration.
struct AngleKin {
    theta: f64,
    /// `∂θ/∂q` as a column (local unknowns).
    j: Vec12,
    /// Spatial gradient `u` (`δθ = u·(δθ₂ − δθ₁)` for spatial rotation variations).
    u: Vector3<f64>,
    r1: Matrix3<f64>,
    r2: Matrix3<f64>,
    /// `du = du1 δθ₁ + du2 δθ₂` (spatial variations).
    du1: Matrix3<f64>,
    du2: Matrix3<f64>,
}

impl TorsionalSpring {
    /// A torsional spring between the frame nodes `nodes` about `axis` (inertial frame, at
    /// the initial rotations `initial_rotations` of the two nodes), stiffness `stiffness`
    /// \[N m/rad\] >= 0, damping `damping` \[N m s/rad\] >= 0, rest angle 0.
    pub fn new(
        nodes: [NodeId; 2],
        initial_rotations: [UnitQuaternion<f64>; 2],
        axis: Vector3<f64>,
        stiffness: f64,
        damping: f64,
    ) -> Result<Self, BuildError> {
        Self::checked(
            "<torsional_spring>",
            nodes,
            initial_rotations,
            axis,
            stiffness,
            damping,
            0.0,
        )
    }

    /// Set the rest angle `θ0` \[rad\].
    pub fn with_rest_angle(mut self, rest_angle: f64) -> Result<Self, BuildError> {
        if !rest_angle.is_finite() {
            return Err(invalid(
                "<torsional_spring>",
                "rest_angle",
                format!("must be finite, got {rest_angle}"),
            ));
        }
        self.rest_angle = rest_angle;
        Ok(self)
    }

    fn checked(
        element: &str,
        nodes: [NodeId; 2],
        initial_rotations: [UnitQuaternion<f64>; 2],
        axis: Vector3<f64>,
        stiffness: f64,
        damping: f64,
        rest_angle: f64,
    ) -> Result<Self, BuildError> {
        check_non_negative(element, "stiffness", stiffness)?;
        check_non_negative(element, "damping", damping)?;
        if !rest_angle.is_finite() {
            return Err(invalid(
                element,
                "rest_angle",
                format!("must be finite, got {rest_angle}"),
            ));
        }
        let norm = axis.norm();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(invalid(
                element,
                "axis",
                format!("must be finite and non-zero, got {:?}", axis.as_slice()),
            ));
        }
        let a = axis / norm;
        // Reference vector: the global axis least aligned with `a`, made orthogonal to it.
        let i = a.iamin();
        let e = Vector3::ith(i, 1.0);
        let b = (e - a * a.dot(&e)).normalize();
        let c = a.cross(&b);
        let [q1, q2] = initial_rotations;
        Ok(Self {
            nodes,
            b1: q1.inverse() * b,
            c1: q1.inverse() * c,
            b2: q2.inverse() * b,
            stiffness,
            damping,
            rest_angle,
            angle_ref: 0.0,
        })
    }

    /// Relative rotation angle `θ` \[rad\] of node 2 with respect to node 1 at the given local
    /// node states, on the branch nearest the last committed angle.
    pub fn angle(&self, nodes: &[NodeState]) -> Result<f64, ElementError> {
        Ok(self.kin(nodes)?.theta)
    }

    fn kin(&self, nodes: &[NodeState]) -> Result<AngleKin, ElementError> {
        let r1 = rotation(&nodes[0]);
        let r2 = rotation(&nodes[1]);
        let bb1 = r1 * self.b1;
        let cc1 = r1 * self.c1;
        let bb2 = r2 * self.b2;
        let x = bb2.dot(&bb1);
        let y = bb2.dot(&cc1);
        let rho2 = x * x + y * y;
        if !(rho2.is_finite() && rho2 > 1e-24) {
            return Err(ElementError::InvalidState(format!(
                "torsional_spring: reference vector of node 2 is parallel to the axis of node 1 \
                 (projection {rho2:e})"
            )));
        }
        let raw = y.atan2(x);
        let theta = raw + 2.0 * PI * ((self.angle_ref - raw) / (2.0 * PI)).round();
        let z = cc1 * x - bb1 * y;
        let u = bb2.cross(&z) / rho2;
        let mut j = Vec12::zeros();
        j.fixed_rows_mut::<3>(3).copy_from(&(-(r1.transpose() * u)));
        j.fixed_rows_mut::<3>(9).copy_from(&(r2.transpose() * u));
        // du = (dB₂ × z + B₂ × dz)/ρ² − u dρ²/ρ², with δφ = δθ₂ − δθ₁ (spatial):
        // dx = (B₂×B₁)·δφ, dy = (B₂×C₁)·δφ, dz = [C₁(B₂×B₁)ᵀ − B₁(B₂×C₁)ᵀ] δφ − hat(z) δθ₁.
        let gx = bb2.cross(&bb1);
        let gy = bb2.cross(&cc1);
        let hb2 = hat(&bb2);
        let hz = hat(&z);
        let m_phi = (hb2 * (cc1 * gx.transpose() - bb1 * gy.transpose())
            - u * (2.0 * (gx * x + gy * y)).transpose())
            / rho2;
        let du2 = hz * hb2 / rho2 + m_phi;
        let du1 = -(hb2 * hz) / rho2 - m_phi;
        Ok(AngleKin {
            theta,
            j,
            u,
            r1,
            r2,
            du1,
            du2,
        })
    }

    fn terms(&self, nodes: &[NodeState], mode: Mode) -> Result<ForceTerms, ElementError> {
        let k = self.kin(nodes)?;
        let damped = mode == Mode::Dynamic && self.damping != 0.0;
        let v = Layout::new(&[NodeKind::Frame; 2]).velocity(nodes);
        let theta_dot = if damped { k.j.dot(&v) } else { 0.0 };
        let moment = self.stiffness * (k.theta - self.rest_angle) + self.damping * theta_dot;
        // ∂(∂θ/∂q)/∂q on the rotational blocks (material variations δΘᵢ, δθᵢ = Rᵢ δΘᵢ).
        let (r1, r2, u) = (k.r1, k.r2, k.u);
        let mut dj = Mat12::zeros();
        dj.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(-(r1.transpose() * k.du1 * r1) - hat(&(r1.transpose() * u))));
        dj.fixed_view_mut::<3, 3>(3, 9)
            .copy_from(&(-(r1.transpose() * k.du2 * r2)));
        dj.fixed_view_mut::<3, 3>(9, 3)
            .copy_from(&(r2.transpose() * k.du1 * r1));
        dj.fixed_view_mut::<3, 3>(9, 9)
            .copy_from(&(r2.transpose() * k.du2 * r2 + hat(&(r2.transpose() * u))));
        let mut dm: Row12 = k.j.transpose() * self.stiffness;
        let mut c = Mat12::zeros();
        if damped {
            // θ̇ = u·(ω₂ − ω₁), ωᵢ = Rᵢ Ωᵢ.
            let w1 = r1 * nodes[0].omega;
            let w2 = r2 * nodes[1].omega;
            let dw = w2 - w1;
            let mut dthdot = Row12::zeros();
            dthdot
                .fixed_columns_mut::<3>(3)
                .copy_from(&((dw.transpose() * k.du1 - w1.cross(&u).transpose()) * r1));
            dthdot
                .fixed_columns_mut::<3>(9)
                .copy_from(&((dw.transpose() * k.du2 + w2.cross(&u).transpose()) * r2));
            dm += dthdot * self.damping;
            c = k.j * k.j.transpose() * self.damping;
        }
        Ok(ForceTerms {
            r: k.j * moment,
            k: k.j * dm + dj * moment,
            c,
        })
    }

    fn level(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        add_force_level(
            cx,
            s,
            &Layout::new(&[NodeKind::Frame; 2]),
            out,
            |nodes, mode| self.terms(nodes, mode),
        )
    }
}

/// Build a `torsional_spring` from a model-file entry (two frame nodes).
pub fn build_torsional_spring(
    def: &ElementDef,
    cx: &BuildCx<'_>,
) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[Some(NodeKind::Frame), Some(NodeKind::Frame)])?;
    let spec: TorsionalSpringSpec = parse_params(def)?;
    require_non_negative(def, "stiffness", spec.stiffness)?;
    require_non_negative(def, "damping", spec.damping)?;
    require_finite(def, "axis", &spec.axis)?;
    require_finite(def, "rest_angle", &[spec.rest_angle])?;
    let rot = |k: usize| cx.nodes[ids[k].index()].initial.r;
    Ok(Box::new(TorsionalSpring::checked(
        &def.name,
        [ids[0], ids[1]],
        [rot(0), rot(1)],
        Vector3::from(spec.axis),
        spec.stiffness,
        spec.damping,
        spec.rest_angle,
    )?))
}

fn torsional_spring_example() -> serde_json::Value {
    serde_json::json!({
        "stiffness": 20.0,
        "damping": 0.3,
        "axis": [0.0, 0.0, 1.0],
        "rest_angle": 0.2,
    })
}

saltus_core::register_element! {
    type_name: "torsional_spring",
    summary: "Rotational spring and viscous damper between two frame nodes about an axis",
    build: build_torsional_spring,
    example: torsional_spring_example,
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
}

impl Element for TorsionalSpring {
    fn type_name(&self) -> &'static str {
        "torsional_spring"
    }

    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    fn levels(&self) -> Levels {
        Levels::ALL
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(NodeKind::Frame); 2]
    }

    fn evaluate(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.level(cx, s, out)
    }

    fn commit(&mut self, s: &OutputState<'_>) {
        if let Ok(theta) = self.angle(s.nodes) {
            self.angle_ref = theta;
        }
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec {
                name: "angle",
                len: 1,
                unit: "rad",
                description: "relative rotation angle of node 2 about the axis (unwrapped)",
            },
            OutputSpec {
                name: "moment",
                len: 1,
                unit: "N*m",
                description:
                    "k(theta - theta0) + c dtheta/dt (node 2 receives minus this about the axis)",
            },
        ]
    }

    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        match self.kin(s.nodes) {
            Ok(k) => {
                let v = Layout::new(&[NodeKind::Frame; 2]).velocity(s.nodes);
                out[0] = k.theta;
                out[1] = self.stiffness * (k.theta - self.rest_angle) + self.damping * k.j.dot(&v);
            }
            Err(_) => {
                out[0] = f64::NAN;
                out[1] = f64::NAN;
            }
        }
    }

    fn energy(&self, s: &OutputState<'_>) -> Energy {
        match self.angle(s.nodes) {
            Ok(theta) => Energy {
                kinetic: 0.0,
                potential: 0.5 * self.stiffness * (theta - self.rest_angle).powi(2),
            },
            Err(_) => Energy::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector, Vector6};
    use saltus_core::fd::{check_hessian, eval_local, test_cx, LocalFixture, Rng};
    use saltus_core::NodeDef;

    /// Central differences with ε = 1e-6: truncation O(ε²)·|r'''| ≈ 1e-12 and round-off
    /// ≈ 1e-16·|r|/ε ≈ 1e-10 (≈ 1e-8 for the stiff springs here, |r| ≈ 1e2; observed errors
    /// scale as ε² for large ε and 1/ε for small ε, as expected of an exact Hessian), so 1e-6
    /// leaves a wide margin yet catches any missing Hessian term of relative size ≥ 1e-6.
    const FD_TOL: f64 = 1e-6;
    const ALL_LEVELS: [Level; 4] = [
        Level::Smooth,
        Level::Position,
        Level::Velocity,
        Level::Static,
    ];

    /// FD-check every level with several seeds; returns the worst relative error.
    fn fd_check(e: &dyn Element, kinds: &[NodeKind], seeds: std::ops::Range<u64>) -> f64 {
        let mut worst: f64 = 0.0;
        for level in ALL_LEVELS {
            assert!(e.levels().contains(level));
            for seed in seeds.clone() {
                let fx = LocalFixture::random(kinds, 0, 0, 0.3, &mut Rng::new(seed));
                let rep = check_hessian(e, &test_cx(level), &fx, 1e-6).unwrap();
                assert!(
                    rep.relative_error() < FD_TOL,
                    "{} {level} seed {seed}: rel. error {:e} at {:?}\nanalytic {}\nnumeric {}",
                    e.type_name(),
                    rep.relative_error(),
                    rep.worst,
                    rep.analytic,
                    rep.numeric
                );
                worst = worst.max(rep.relative_error());
            }
        }
        worst
    }

    fn eval(e: &dyn Element, level: Level, fx: &LocalFixture) -> (DVector<f64>, DMatrix<f64>) {
        eval_local(e, &test_cx(level), fx, &fx.incr, &fx.mult).unwrap()
    }

    /// A fixture whose prev, smooth and current states are all `states` (zero increments).
    fn fixture(states: &[NodeState], kinds: &[NodeKind]) -> LocalFixture {
        let mut fx = LocalFixture::random(kinds, 0, 0, 0.0, &mut Rng::new(1));
        for (k, s) in states.iter().enumerate() {
            fx.prev[k] = *s;
            fx.smooth[k] = *s;
            fx.incr[k] = Vector6::zeros();
        }
        fx
    }

    #[test]
    fn nodal_load_hessians_match_finite_differences() {
        let f = Vector3::new(1.0, -2.0, 0.5);
        let m = Vector3::new(0.3, 0.1, -0.2);
        let frame = NodalLoad::on_frame(NodeId(0), f, m).unwrap();
        let mut worst = fd_check(&frame, &[NodeKind::Frame], 1..6);
        worst = worst.max(fd_check(
            &frame.clone().ramped(0.5).unwrap(),
            &[NodeKind::Frame],
            1..6,
        ));
        worst = worst.max(fd_check(
            &NodalLoad::on_point(NodeId(0), f).unwrap(),
            &[NodeKind::Point],
            1..6,
        ));
        eprintln!("nodal_load max FD relative error {worst:e}");
    }

    #[test]
    fn spring_damper_hessians_match_finite_differences() {
        let o1 = Vector3::new(0.1, -0.2, 0.05);
        let o2 = Vector3::new(-0.3, 0.15, 0.2);
        let (k, c, l0) = (50.0, 0.8, 0.7);
        let f = |n| Attachment::frame(NodeId(n), if n == 0 { o1 } else { o2 });
        let p = |n| Attachment::point(NodeId(n));
        use NodeKind::{Frame, Point};
        let cases: Vec<(SpringDamper, Vec<NodeKind>)> = vec![
            (
                SpringDamper::between(p(0), p(1), k, c, l0).unwrap(),
                vec![Point, Point],
            ),
            (
                SpringDamper::between(f(0), f(1), k, c, l0).unwrap(),
                vec![Frame, Frame],
            ),
            (
                SpringDamper::between(f(0), p(1), k, c, l0).unwrap(),
                vec![Frame, Point],
            ),
            (
                SpringDamper::between(p(0), f(1), k, c, l0).unwrap(),
                vec![Point, Frame],
            ),
            (
                SpringDamper::between(f(0), f(1), k, 0.0, 0.0).unwrap(),
                vec![Frame, Frame],
            ),
            (
                SpringDamper::to_anchor(f(0), Vector3::new(0.5, -0.4, 1.2), k, c, l0).unwrap(),
                vec![Frame],
            ),
            (
                SpringDamper::to_anchor(p(0), Vector3::new(0.5, -0.4, 1.2), k, c, l0).unwrap(),
                vec![Point],
            ),
        ];
        let mut worst: f64 = 0.0;
        for (e, kinds) in &cases {
            worst = worst.max(fd_check(e, kinds, 1..6));
        }
        eprintln!("spring_damper max FD relative error {worst:e}");
    }

    fn random_torsional(seed: u64, k: f64, c: f64) -> TorsionalSpring {
        let mut rng = Rng::new(seed + 100);
        TorsionalSpring::new(
            [NodeId(0), NodeId(1)],
            [rng.rotation(), rng.rotation()],
            rng.vec3(1.0),
            k,
            c,
        )
        .unwrap()
        .with_rest_angle(0.2)
        .unwrap()
    }

    #[test]
    fn torsional_spring_hessians_match_finite_differences() {
        let mut worst: f64 = 0.0;
        for seed in 0..4 {
            let e = random_torsional(seed, 20.0, 0.3);
            worst = worst.max(fd_check(&e, &[NodeKind::Frame; 2], 1..6));
        }
        let e = random_torsional(7, 20.0, 0.0);
        worst = worst.max(fd_check(&e, &[NodeKind::Frame; 2], 1..6));
        eprintln!("torsional_spring max FD relative error {worst:e}");
    }

    #[test]
    fn spring_force_for_a_known_state() {
        // ℓ = 2, ℓ0 = 1.5, k = 10: tension 5 N; node 2 pulled back along −x.
        let e = SpringDamper::between(
            Attachment::point(NodeId(0)),
            Attachment::point(NodeId(1)),
            10.0,
            2.0,
            1.5,
        )
        .unwrap();
        let kinds = [NodeKind::Point; 2];
        let mut a = NodeState::at(Vector3::zeros(), UnitQuaternion::identity());
        let mut b = NodeState::at(Vector3::new(2.0, 0.0, 0.0), UnitQuaternion::identity());
        let (r, _) = eval(&e, Level::Static, &fixture(&[a, b], &kinds));
        let expect = [-5.0, 0.0, 0.0, 5.0, 0.0, 0.0];
        assert!(
            (&r - DVector::from_row_slice(&expect)).norm() < 1e-14,
            "{r}"
        );
        // Damping: ℓ̇ = 1 m/s (transverse velocities do not count) → tension 5 + 2·1 = 7 N.
        b.v = Vector3::new(1.0, 3.0, 0.0);
        a.v = Vector3::new(0.0, 1.0, -2.0);
        let fx = fixture(&[a, b], &kinds);
        let (r, _) = eval(&e, Level::Smooth, &fx);
        assert!(
            (r[3] - 7.0).abs() < 1e-14 && (r[0] + 7.0).abs() < 1e-14,
            "{r}"
        );
        // Static ignores damping.
        let (r, _) = eval(&e, Level::Static, &fx);
        assert!((r[3] - 5.0).abs() < 1e-14, "{r}");
        // Outputs and energy.
        let nodes = [a, b];
        let os = output_state(&nodes);
        let mut out = [0.0; 2];
        e.write_outputs(&os, &mut out);
        assert_eq!(e.outputs().len(), 2);
        assert!((out[0] - 2.0).abs() < 1e-15 && (out[1] - 7.0).abs() < 1e-14);
        assert!((e.energy(&os).potential - 0.5 * 10.0 * 0.25).abs() < 1e-14);
    }

    #[test]
    fn spring_offset_moment_for_a_known_state() {
        // Frame node at the origin rotated 90° about z, offset (1,0,0) → attachment (0,1,0);
        // anchor (3,1,0): ℓ = 3, ℓ0 = 2, k = 10 → tension 10 N, force on the body (10,0,0)
        // at lever (0,1,0): spatial moment (0,0,−10) = material moment (R = rotation about z).
        let rz = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, 0.0, PI / 2.0));
        let e = SpringDamper::to_anchor(
            Attachment::frame(NodeId(0), Vector3::new(1.0, 0.0, 0.0)),
            Vector3::new(3.0, 1.0, 0.0),
            10.0,
            0.0,
            2.0,
        )
        .unwrap();
        let st = NodeState::at(Vector3::zeros(), rz);
        let (r, _) = eval(&e, Level::Static, &fixture(&[st], &[NodeKind::Frame]));
        let expect = [-10.0, 0.0, 0.0, 0.0, 0.0, 10.0];
        // Rounding of the quaternion rotation by π/2: a few ulps of the unit entries.
        assert!(
            (&r - DVector::from_row_slice(&expect)).norm() < 1e-13,
            "{r}"
        );
    }

    #[test]
    fn zero_length_spring_is_an_invalid_state() {
        let e = SpringDamper::between(
            Attachment::point(NodeId(0)),
            Attachment::point(NodeId(1)),
            1.0,
            0.0,
            1.0,
        )
        .unwrap();
        let a = NodeState::default();
        let fx = fixture(&[a, a], &[NodeKind::Point; 2]);
        let r = eval_local(&e, &test_cx(Level::Smooth), &fx, &fx.incr, &fx.mult);
        assert!(matches!(r, Err(ElementError::InvalidState(_))));
    }

    fn output_state(nodes: &[NodeState]) -> OutputState<'_> {
        OutputState {
            t: 0.0,
            nodes,
            mult_smooth: &[],
            mult_position: &[],
            mult_velocity: &[],
            k: [1.0; 3],
            h: 1e-3,
            gravity: Vector3::new(0.0, 0.0, -9.81),
        }
    }

    #[test]
    fn torsional_spring_angle_moment_and_unwrapping() {
        let z = Vector3::z();
        let id = UnitQuaternion::identity();
        let mut e = TorsionalSpring::new([NodeId(0), NodeId(1)], [id, id], z, 10.0, 0.0)
            .unwrap()
            .with_rest_angle(0.1)
            .unwrap();
        let rot = |a: f64| UnitQuaternion::from_scaled_axis(z * a);
        let a = NodeState::default();
        let b = NodeState::at(Vector3::zeros(), rot(0.5));
        assert!((e.angle(&[a, b]).unwrap() - 0.5).abs() < 1e-14);
        // Moment M = k(θ − θ0) = 4 N m; node 2 receives −4 about z, node 1 +4.
        let (r, _) = eval(&e, Level::Static, &fixture(&[a, b], &[NodeKind::Frame; 2]));
        let mut expect = DVector::zeros(12);
        expect[5] = -4.0;
        expect[11] = 4.0;
        assert!((&r - &expect).norm() < 1e-13, "{r}");
        // Unwrapping: commit at 3.0 rad, then 3.5 rad must not jump to 3.5 − 2π.
        let b3 = NodeState::at(Vector3::zeros(), rot(3.0));
        let nodes = [a, b3];
        e.commit(&output_state(&nodes));
        let b35 = NodeState::at(Vector3::zeros(), rot(3.5));
        assert!((e.angle(&[a, b35]).unwrap() - 3.5).abs() < 1e-13);
        let nodes = [a, b35];
        e.commit(&output_state(&nodes));
        // Two more half-turns: 3.5 → 6.0 → 8.5 (> 2π).
        for target in [6.0, 8.5] {
            let bt = NodeState::at(Vector3::zeros(), rot(target));
            let nodes = [a, bt];
            assert!((e.angle(&nodes).unwrap() - target).abs() < 1e-12);
            e.commit(&output_state(&nodes));
        }
        let nodes = [a, NodeState::at(Vector3::zeros(), rot(8.5))];
        let os = output_state(&nodes);
        let mut out = [0.0; 2];
        e.write_outputs(&os, &mut out);
        assert!((out[0] - 8.5).abs() < 1e-12 && (out[1] - 10.0 * 8.4).abs() < 1e-10);
        assert!((e.energy(&os).potential - 0.5 * 10.0 * 8.4f64.powi(2)).abs() < 1e-9);
        // Damping: relative spin 2 rad/s about z → θ̇ = 2.
        let mut e = TorsionalSpring::new([NodeId(0), NodeId(1)], [id, id], z, 0.0, 3.0).unwrap();
        let mut b = NodeState::at(Vector3::zeros(), rot(0.5));
        b.omega = Vector3::new(0.0, 0.0, 2.0);
        let (r, _) = eval(&e, Level::Smooth, &fixture(&[a, b], &[NodeKind::Frame; 2]));
        assert!((r[11] - 6.0).abs() < 1e-13, "{r}");
        e.commit(&output_state(&[a, b]));
    }

    #[test]
    fn nodal_load_residuals() {
        let f = Vector3::new(1.0, -2.0, 0.5);
        let m = Vector3::new(0.0, 0.0, 2.0);
        let e = NodalLoad::on_frame(NodeId(0), f, m)
            .unwrap()
            .ramped(0.5)
            .unwrap();
        // Body rotated 90° about x: material moment Rᵀ m = (0, 2, 0).
        let rx = UnitQuaternion::from_scaled_axis(Vector3::new(PI / 2.0, 0.0, 0.0));
        let fx = fixture(&[NodeState::at(Vector3::zeros(), rx)], &[NodeKind::Frame]);
        let lam = test_cx(Level::Smooth).t / 0.5;
        let (r, _) = eval(&e, Level::Smooth, &fx);
        let expect = DVector::from_row_slice(&[-1.0, 2.0, -0.5, 0.0, -2.0, 0.0]) * lam;
        assert!((&r - &expect).norm() < 1e-14, "{r}");
        // Static: scaled by the load factor t (no ramp).
        let t = test_cx(Level::Static).t;
        let (r, _) = eval(&e, Level::Static, &fx);
        let expect = DVector::from_row_slice(&[-1.0, 2.0, -0.5, 0.0, -2.0, 0.0]) * t;
        assert!((&r - &expect).norm() < 1e-14, "{r}");
        // No configuration change: the correction levels add nothing.
        let (r, _) = eval(&e, Level::Position, &fx);
        assert_eq!(r.norm(), 0.0);
        // Velocity level with q ≠ q̃: h (f(q) − f(q̃)) of the material moment.
        let mut fx2 = fx.clone();
        fx2.smooth[0].r = UnitQuaternion::identity();
        let nodes = [NodeState::at(Vector3::zeros(), rx)];
        let smooth = [fx2.smooth[0]];
        let cx = test_cx(Level::Velocity);
        let mut r = DVector::zeros(6);
        let mut h = DMatrix::zeros(6, 6);
        let s = LocalState {
            nodes: &nodes,
            prev: &smooth,
            smooth: &smooth,
            rot_tangent: &[Matrix3::identity()],
            incr: &[Vector6::zeros()],
            mult: &[],
            mult_smooth: &[],
        };
        let mut out = LocalSystem {
            residual: r.rows_mut(0, 6),
            hessian: h.view_mut((0, 0), (6, 6)),
            reference: 0.0,
        };
        e.evaluate(&cx, &s, &mut out).unwrap();
        // −h λ (Rᵀm − m) with Rᵀ m = (0,2,0), m = (0,0,2).
        let expect = Vector3::new(0.0, -2.0, 2.0) * (cx.force_weight * lam);
        assert!((r.fixed_rows::<3>(3) - expect).norm() < 1e-14, "{r}");
        assert_eq!(r.fixed_rows::<3>(0).norm(), 0.0);
        assert_eq!(h.norm(), 0.0);
        // Potential of an unramped force.
        let e = NodalLoad::on_point(NodeId(0), f).unwrap();
        let nodes = [NodeState::at(
            Vector3::new(1.0, 1.0, 1.0),
            UnitQuaternion::identity(),
        )];
        assert!((e.energy(&output_state(&nodes)).potential - 0.5).abs() < 1e-15);
    }

    /// Residual of `e` at `cx.level` for explicit current and smooth node states.
    fn residual(
        e: &dyn Element,
        cx: &StepCx,
        nodes: &[NodeState],
        smooth: &[NodeState],
        incr: &[Vector6<f64>],
        n: usize,
    ) -> DVector<f64> {
        let mut r = DVector::zeros(n);
        let mut h = DMatrix::zeros(n, n);
        let tangents = vec![Matrix3::identity(); nodes.len()];
        let s = LocalState {
            nodes,
            prev: smooth,
            smooth,
            rot_tangent: &tangents,
            incr,
            mult: &[],
            mult_smooth: &[],
        };
        let mut out = LocalSystem {
            residual: r.rows_mut(0, n),
            hessian: h.view_mut((0, 0), (n, n)),
            reference: 0.0,
        };
        e.evaluate(cx, &s, &mut out).unwrap();
        r
    }

    #[test]
    fn correction_levels_are_weighted_force_differences() {
        // Position: (h²/2)(r_f(q, ṽ) − r_f(q̃, ṽ)); velocity: h(r_f(q, v) − r_f(q̃, ṽ)), with
        // r_f the smooth-level residual (force_weight 1) and q ≠ q̃ at both levels.
        let e = SpringDamper::between(
            Attachment::frame(NodeId(0), Vector3::new(0.1, 0.2, -0.3)),
            Attachment::point(NodeId(1)),
            40.0,
            1.5,
            0.6,
        )
        .unwrap();
        let fx = LocalFixture::random(
            &[NodeKind::Frame, NodeKind::Point],
            0,
            0,
            0.3,
            &mut Rng::new(9),
        );
        let smooth = fx.smooth.clone();
        let mut current = fx.prev.clone();
        let zero = [Vector6::zeros(); 2];
        let rf =
            |nodes: &[NodeState]| residual(&e, &test_cx(Level::Smooth), nodes, nodes, &zero, 9);
        for level in [Level::Position, Level::Velocity] {
            let cx = test_cx(level);
            for (c, s) in current.iter_mut().zip(&smooth) {
                c.v = if level == Level::Position {
                    s.v
                } else {
                    s.v + Vector3::new(0.3, -0.1, 0.2)
                };
                c.omega = if level == Level::Position {
                    s.omega
                } else {
                    s.omega * 0.5
                };
            }
            let r = residual(&e, &cx, &current, &smooth, &zero, 9);
            let expect = (rf(&current) - rf(&smooth)) * cx.force_weight;
            assert!(
                (&r - &expect).norm() < 1e-12 * (1.0 + expect.norm()),
                "{level}: {r} vs {expect}"
            );
            assert!(r.norm() > 0.0);
        }
    }

    fn def(type_name: &str, nodes: &[&str], params: serde_json::Value) -> ElementDef {
        ElementDef {
            name: "e".into(),
            type_name: type_name.into(),
            nodes: nodes.iter().map(|s| s.to_string()).collect(),
            parameters: params,
        }
    }

    fn param_error(r: Result<Box<dyn Element>, BuildError>) -> String {
        match r {
            Err(BuildError::InvalidParameter { parameter, .. }) => parameter,
            Err(e) => panic!("unexpected error {e}"),
            Ok(e) => panic!("accepted {e:?}"),
        }
    }

    #[test]
    fn build_validates_parameters() {
        use serde_json::json;
        let nodes = [
            NodeDef::frame("f", Vector3::zeros()),
            NodeDef::frame("g", Vector3::new(0.0, 2.0, 0.0)),
            NodeDef::point("p", Vector3::new(1.0, 0.0, 0.0)),
            NodeDef::point("q", Vector3::new(1.0, 0.0, 0.0)),
        ];
        let cx = BuildCx::new(&nodes);
        let sd = |n: &[&str], p| build_spring_damper(&def("spring_damper", n, p), &cx);
        // Default rest length = initial distance (with offset): zero residual at t = 0.
        let e = sd(
            &["f", "p"],
            json!({"stiffness": 10.0, "offset_1": [0.0, 0.0, 1.0]}),
        )
        .unwrap();
        let init = [nodes[0].initial, nodes[2].initial];
        let os = output_state(&init);
        let mut out = [0.0; 2];
        e.write_outputs(&os, &mut out);
        assert!((out[0] - 2f64.sqrt()).abs() < 1e-15 && out[1].abs() < 1e-14);
        assert!(sd(&["f", "g"], json!({"stiffness": 1.0, "damping": 0.5})).is_ok());
        assert!(sd(&["p"], json!({"stiffness": 1.0, "anchor": [0.0, 0.0, 0.0]})).is_ok());
        assert_eq!(
            param_error(sd(&["p", "q"], json!({"stiffness": 1.0}))),
            "rest_length"
        );
        assert!(sd(&["p", "q"], json!({"stiffness": 1.0, "rest_length": 0.5})).is_ok());
        assert_eq!(
            param_error(sd(
                &["p", "q"],
                json!({"stiffness": -1.0, "rest_length": 1.0})
            )),
            "stiffness"
        );
        assert_eq!(
            param_error(sd(
                &["p", "q"],
                json!({"stiffness": 1.0, "damping": -1.0, "rest_length": 1.0})
            )),
            "damping"
        );
        assert_eq!(
            param_error(sd(
                &["p", "q"],
                json!({"stiffness": 1.0, "rest_length": -1.0})
            )),
            "rest_length"
        );
        assert_eq!(param_error(sd(&["p"], json!({"stiffness": 1.0}))), "anchor");
        assert_eq!(
            param_error(sd(
                &["p", "q"],
                json!({"stiffness": 1.0, "anchor": [0, 0, 0]})
            )),
            "anchor"
        );
        assert_eq!(
            param_error(sd(
                &["p", "f"],
                json!({"stiffness": 1.0, "offset_1": [0.1, 0.0, 0.0]})
            )),
            "offset_1"
        );
        assert_eq!(
            param_error(sd(
                &["f"],
                json!({"stiffness": 1.0, "anchor": [1, 1, 1], "offset_2": [0, 0, 1]})
            )),
            "offset_2"
        );
        assert!(matches!(
            sd(&["p", "q", "f"], json!({"stiffness": 1.0})),
            Err(BuildError::NodeCount { .. })
        ));
        assert!(matches!(
            sd(&["p", "f"], json!({"stiffness": 1.0, "rest_lenght": 1.0})),
            Err(BuildError::Parameters { .. })
        ));
        // Torsional spring.
        let ts = |n: &[&str], p| build_torsional_spring(&def("torsional_spring", n, p), &cx);
        assert!(ts(&["f", "g"], torsional_spring_example()).is_ok());
        assert_eq!(
            param_error(ts(
                &["f", "g"],
                json!({"stiffness": 1.0, "axis": [0, 0, 0]})
            )),
            "axis"
        );
        assert_eq!(
            param_error(ts(
                &["f", "g"],
                json!({"stiffness": -1.0, "axis": [0, 0, 1]})
            )),
            "stiffness"
        );
        assert!(matches!(
            ts(&["f", "p"], json!({"stiffness": 1.0, "axis": [0, 0, 1]})),
            Err(BuildError::NodeKind { .. })
        ));
        // Nodal load.
        let nl = |n: &[&str], p| build_nodal_load(&def("nodal_load", n, p), &cx);
        let e = nl(&["p"], json!({"force": [0.0, 0.0, -1.0]})).unwrap();
        assert_eq!(e.node_kinds(), vec![Some(NodeKind::Point)]);
        assert!(nl(&["f"], nodal_load_example()).is_ok());
        assert!(matches!(
            nl(&["p"], json!({"torque": [0.0, 0.0, 1.0]})),
            Err(BuildError::NodeKind { .. })
        ));
        assert_eq!(
            param_error(nl(&["p"], json!({"force": [1, 0, 0], "ramp_time": -1.0}))),
            "ramp_time"
        );
        // Code-first constructors.
        assert!(NodalLoad::on_point(NodeId(0), Vector3::new(f64::NAN, 0.0, 0.0)).is_err());
        assert!(SpringDamper::between(
            Attachment::point(NodeId(0)),
            Attachment {
                node: NodeId(1),
                kind: NodeKind::Point,
                offset: Vector3::x()
            },
            1.0,
            0.0,
            1.0
        )
        .is_err());
        assert!(TorsionalSpring::new(
            [NodeId(0), NodeId(1)],
            [UnitQuaternion::identity(); 2],
            Vector3::new(f64::NAN, 0.0, 1.0),
            1.0,
            0.0
        )
        .is_err());
    }
}
