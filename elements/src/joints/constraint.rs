//! Generic bilateral constraints: a joint supplies its **kinematics only**, and
//! [`BilateralJoint`] turns them into an [`Element`] with exact residuals and Hessians at the
//! four levels (spec `nsga.md` §§4–6 and the bilateral-joint row of the table in §11.2).
//!
//! # What a joint supplies
//!
//! A joint with `m` scalar constraints `g(q, t) = 0` on its nodes implements
//! [`BilateralConstraint::evaluate`], which fills a [`Kinematics`] with, for the current
//! configuration `q` and time `t`:
//!
//! * `g ∈ R^m` (units of the joint: m for positions, rad or dimensionless for orientations);
//! * the Jacobian `g_q` (`m × n`, `n` = node unknowns of the element) with respect to the
//!   local unknowns `[δx, δΘ]` per frame node (`δΘ` **material**, `δR = R hat(δΘ)`) and `[δx]`
//!   per point node, so that `ġ = g_q v + g_t` with the nodal velocities `v = [ẋ; Ω]`;
//! * the explicit time derivative `g_t` (zero for scleronomic joints) and, if it depends on the
//!   configuration, its gradient `∂g_t/∂q`;
//! * for every row `j` the second derivative `H_j = ∂(g_q)_j/∂q` (`n × n`, entry `(a, b)` is the
//!   derivative of `(g_q)_{j a}` under the material variation `b`). On SO(3) this matrix is not
//!   symmetric.
//!
//! From `H_j` the generic layer forms the two products the Hessians need, for any `μ ∈ R^m`
//! and any local velocity `w`: `∂(g_qᵀ μ)/∂q = Σ_j μ_j H_j` ([`Kinematics::d_gqt_mu`]) and
//! `∂(g_q w)/∂q` with row `j` equal to `wᵀ H_j` ([`Kinematics::d_gq_w`]). Per-row second
//! derivatives (rather than the products for a given `μ`) keep the kinematics a pure function of
//! `(q, t)`: the multiplier combinations the levels need (`ξ = kλ − p g`, ...) depend on `g`
//! itself, so one evaluation serves the residual and the Hessian.
//!
//! Writing `g_q` and `H_j` by hand is rarely necessary: constraints are usually built from
//! body-fixed vectors and points with [`KinVec`] and combined into scalar expressions with
//! [`KinCx::dot`] and the arithmetic of [`Scalar`] (sums, products, smooth functions,
//! `atan2`), which carry first and second derivatives along exactly.
//!
//! # Sizes and allocation
//!
//! Element evaluations run inside the Newton loop, where nothing may allocate. All the types of
//! this module therefore use fixed-size storage sized for the largest joint: at most
//! [`MAX_NODES`] nodes, [`MAX_DOFS`] node unknowns (two frame nodes, or up to four point nodes)
//! and [`MAX_ROWS`] constraint rows. Vectors and matrices over the node unknowns
//! ([`LocalVector`], [`LocalMatrix`]) and over the rows ([`RowVector`], [`RowJacobian`]) are
//! padded: only the leading `n` (and `m`) entries are meaningful, the others are zero.
//! [`Kinematics`] hands out views of exactly `m × n` ([`Kinematics::g`], [`Kinematics::g_q`],
//! ...). [`BilateralJoint::from_constraint`] rejects a constraint that does not fit
//! ([`BuildError`]). [`KinVec`], [`KinCx`] and [`Scalar`] never allocate, so an `evaluate` built
//! from them is allocation-free.
//!
//! Evaluations whose second derivatives are not used are first-order only
//! ([`KinCx::needs_hessians`] is `false`): the velocity level (configuration frozen) and the
//! `g_q(q̃)` the position and velocity levels need at the smooth configuration `q̃`. The helpers
//! then skip the second derivatives, and a hand-written `evaluate` may skip its `H_j` too.
//!
//! # Levels (scaled multipliers; `k = cx.k`, `p = cx.p`, `w = cx.force_weight`)
//!
//! | level | node rows | multiplier rows |
//! |---|---|---|
//! | smooth (`λ̃`) | `−g_qᵀ(k λ̃ − p(g_q v + g_t))` | `−k (g_q v + g_t)` |
//! | position (`ν`) | `−g_qᵀ(k ν − p g) − w (g_q(q) − g_q(q̃))ᵀ k_s λ̃` | `−k g(q, t)` |
//! | velocity (`Λ`, `q` frozen) | `−g_qᵀ(k Λ − p(g_q v + g_t)) − w (g_q(q) − g_q(q̃))ᵀ k_s λ̃` | `−k (g_q v + g_t)` |
//! | static (`ν`) | `−g_qᵀ(k ν − p g)` | `−k g(q, 0)` |
//!
//! The `k_s λ̃` terms are the joint's part of `−(h²/2) f^p` (§5) and `−h f^v` (§6); Newton's
//! restitution coefficient is zero for bilateral constraints. Every level is always active
//! (`m` multipliers at every level) and has an exact Hessian.
//!
//! # Example: a rigid rod between two nodes
//!
//! ```
//! use nalgebra::Vector3;
//! use saltus_core::{Model, NodeDef, NodeId, NodeKind};
//! use saltus_elements::joints::constraint::{
//!     BilateralConstraint, BilateralJoint, KinCx, KinVec, Kinematics,
//! };
//!
//! /// Distance constraint `g = (|x₂ − x₁|² − L²)/(2L)` [m] between two nodes.
//! #[derive(Clone, Debug)]
//! struct Rod {
//!     nodes: [NodeId; 2],
//!     kinds: [NodeKind; 2],
//!     length: f64,
//! }
//!
//! impl BilateralConstraint for Rod {
//!     fn type_name(&self) -> &'static str {
//!         "rod"
//!     }
//!     fn nodes(&self) -> &[NodeId] {
//!         &self.nodes
//!     }
//!     fn node_kinds(&self) -> &[NodeKind] {
//!         &self.kinds
//!     }
//!     fn n_constraints(&self) -> usize {
//!         1
//!     }
//!     fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics) {
//!         let d = KinVec::position(1) - KinVec::position(0);
//!         let l = self.length;
//!         out.set_row(0, &((cx.dot(&d, &d) - l * l) * (0.5 / l)));
//!     }
//! }
//!
//! let mut model = Model::new();
//! let a = model.add_node(NodeDef::point("a", Vector3::zeros()).fixed()).unwrap();
//! let b = model.add_node(NodeDef::point("b", Vector3::new(1.0, 0.0, 0.0))).unwrap();
//! let rod = Rod { nodes: [a, b], kinds: [NodeKind::Point; 2], length: 1.0 };
//! let joint = BilateralJoint::from_constraint(rod).unwrap();
//! let q = [model.nodes()[0].initial, model.nodes()[1].initial];
//! assert_eq!(joint.kinematics(&q, 0.0).g()[0], 0.0);
//! model.add_element("rod", joint).unwrap();
//! ```
//!
//! A body-fixed point `x_i + R_i d` is `KinVec::body_point(i, d)`, a body-fixed direction
//! `R_i a` is `KinVec::body(i, a)`, a fixed vector is `KinVec::constant(c)`. Rheonomic joints add
//! their explicit time dependence to `g` ([`Kinematics::add_value`]) and `g_t`
//! ([`Kinematics::add_g_t`]). To make the type available in model files, register a build
//! function with `saltus_core::register_element!` (see the joints of this module). Check a new
//! joint with [`check_kinematics`] (first and second derivatives and `g_t` against finite
//! differences) and `saltus_core::fd::check_hessian` (the four levels).

use nalgebra::{Const, Dyn, Matrix3, MatrixView, MatrixViewMut, SMatrix, SVector, Vector3, U1};
use saltus_core::element::{
    Element, ElementError, Level, Levels, LocalState, LocalSystem, OutputSpec, OutputState, StepCx,
};
use saltus_core::lie;
use saltus_core::model::BuildError;
use saltus_core::node::{NodeId, NodeKind, NodeState};
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};

/// Largest number of nodes of a bilateral constraint.
pub const MAX_NODES: usize = 4;
/// Largest number `n` of node unknowns of a bilateral constraint (two frame nodes).
pub const MAX_DOFS: usize = 12;
/// Largest number `m` of constraint rows of a bilateral constraint.
pub const MAX_ROWS: usize = 6;

/// A vector over the node unknowns (padded: entries `n..` are zero).
pub type LocalVector = SVector<f64, MAX_DOFS>;
/// A matrix over the node unknowns (padded: only the leading `n × n` block is nonzero).
pub type LocalMatrix = SMatrix<f64, MAX_DOFS, MAX_DOFS>;
/// A vector over the constraint rows (padded: entries `m..` are zero).
pub type RowVector = SVector<f64, MAX_ROWS>;
/// A matrix of constraint rows against node unknowns, such as `g_q` (padded: only the leading
/// `m × n` block is nonzero).
pub type RowJacobian = SMatrix<f64, MAX_ROWS, MAX_DOFS>;
/// Jacobian `∂u/∂q` of an inertial vector (`3 × n`, padded: columns `n..` are zero).
pub type VectorJacobian = SMatrix<f64, 3, MAX_DOFS>;

/// View of the `m` meaningful entries of a [`RowVector`] (`g`, `g_t`).
pub type RowView<'a> = MatrixView<'a, f64, Dyn, U1, U1, Const<MAX_ROWS>>;
/// Mutable [`RowView`].
pub type RowViewMut<'a> = MatrixViewMut<'a, f64, Dyn, U1, U1, Const<MAX_ROWS>>;
/// View of the `m × n` block of a [`RowJacobian`] (`g_q`, `∂g_t/∂q`).
pub type JacobianView<'a> = MatrixView<'a, f64, Dyn, Dyn, U1, Const<MAX_ROWS>>;
/// Mutable [`JacobianView`].
pub type JacobianViewMut<'a> = MatrixViewMut<'a, f64, Dyn, Dyn, U1, Const<MAX_ROWS>>;
/// View of the `n × n` block of a [`LocalMatrix`] (a row's second derivative `H_j`).
pub type HessianView<'a> = MatrixView<'a, f64, Dyn, Dyn, U1, Const<MAX_DOFS>>;
/// Mutable [`HessianView`].
pub type HessianViewMut<'a> = MatrixViewMut<'a, f64, Dyn, Dyn, U1, Const<MAX_DOFS>>;

/// Units of a joint's constraint rows, used to label its output channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstraintUnits {
    /// Unit of the smooth reaction `k_s λ̃` (e.g. "N").
    pub reaction: &'static str,
    /// Unit of the position multiplier `k_p ν` (e.g. "N*s^2").
    pub position_multiplier: &'static str,
    /// Unit of the impulse `k_v Λ` (e.g. "N*s").
    pub impulse: &'static str,
    /// Units of the two violation measures `|g|`, `|ġ|` (e.g. "m, m/s").
    pub violation: &'static str,
}

impl ConstraintUnits {
    /// All rows are lengths \[m\]: multipliers are forces.
    pub const LENGTH: ConstraintUnits = ConstraintUnits {
        reaction: "N",
        position_multiplier: "N*s^2",
        impulse: "N*s",
        violation: "m, m/s",
    };
    /// All rows are angles \[rad\] (or dimensionless): multipliers are moments.
    pub const ANGLE: ConstraintUnits = ConstraintUnits {
        reaction: "N*m",
        position_multiplier: "N*m*s^2",
        impulse: "N*m*s",
        violation: "rad, rad/s",
    };
    /// Position rows \[m\] followed by orientation rows \[rad\]: forces then moments.
    pub const MIXED: ConstraintUnits = ConstraintUnits {
        reaction: "N (position rows), N*m (orientation rows)",
        position_multiplier: "N*s^2 (position rows), N*m*s^2 (orientation rows)",
        impulse: "N*s (position rows), N*m*s (orientation rows)",
        violation: "m|rad, m/s|rad/s",
    };
}

/// Kinematics of a holonomic (possibly rheonomic) bilateral constraint `g(q, t) = 0` with `m`
/// rows on the element's nodes. See the [module documentation](self) for the contract and an
/// example; [`BilateralJoint`] makes an [`Element`] of it.
///
/// Size limits: at most [`MAX_NODES`] nodes, [`MAX_DOFS`] node unknowns and [`MAX_ROWS`] rows
/// (checked by [`BilateralJoint::from_constraint`]).
pub trait BilateralConstraint: Send + Sync + fmt::Debug {
    /// Registered type name, e.g. `"revolute_joint"`.
    fn type_name(&self) -> &'static str;
    /// The element's nodes in local order.
    fn nodes(&self) -> &[NodeId];
    /// The kinds of the element's nodes (fixes the local unknown layout).
    fn node_kinds(&self) -> &[NodeKind];
    /// Number `m` of scalar constraints (fixed, at most [`MAX_ROWS`]).
    fn n_constraints(&self) -> usize;
    /// Fill `out` (zeroed, `m` rows, `n` node unknowns) with `g`, `g_q`, the per-row second
    /// derivatives `H_j`, `g_t` and `∂g_t/∂q` at the configuration and time of `cx`. Called
    /// inside the Newton loop: must not allocate. The `H_j` may be skipped when
    /// [`KinCx::needs_hessians`] is `false`.
    fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics);
    /// Local index of the node whose reaction `force`/`moment` is reported (`None`: no such
    /// outputs). Default: the last node (node 2 of a two-node joint).
    fn reaction_node(&self) -> Option<usize> {
        self.nodes().len().checked_sub(1)
    }
    /// Units of the constraint rows (output labels). Default: [`ConstraintUnits::MIXED`].
    fn units(&self) -> ConstraintUnits {
        ConstraintUnits::MIXED
    }
    /// Additional output channels, written after the generic ones.
    fn extra_outputs(&self) -> Vec<OutputSpec> {
        Vec::new()
    }
    /// Fill the additional channels from the converged kinematics `kin` at `cx`.
    fn write_extra_outputs(&self, _cx: &KinCx<'_>, _kin: &Kinematics, _out: &mut [f64]) {}
}

/// Offsets of the node unknowns in an element's local vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    kinds: Vec<NodeKind>,
    offsets: Vec<usize>,
    n: usize,
}

impl Layout {
    /// Layout of nodes of the given kinds (frame: 6 unknowns, point: 3).
    pub fn new(kinds: &[NodeKind]) -> Self {
        let mut offsets = Vec::with_capacity(kinds.len());
        let mut n = 0;
        for k in kinds {
            offsets.push(n);
            n += k.ndof();
        }
        Self {
            kinds: kinds.to_vec(),
            offsets,
            n,
        }
    }
    /// Number of node unknowns `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }
    /// Node kinds in local order.
    #[inline]
    pub fn kinds(&self) -> &[NodeKind] {
        &self.kinds
    }
    /// Offset of local node `node`'s first unknown (`δx`; `δΘ` follows at `+3`).
    #[inline]
    pub fn offset(&self, node: usize) -> usize {
        self.offsets[node]
    }
    /// Whether local node `node` is a frame node.
    #[inline]
    pub fn is_frame(&self, node: usize) -> bool {
        self.kinds[node] == NodeKind::Frame
    }
    /// Whether the layout fits the fixed-size storage ([`MAX_NODES`], [`MAX_DOFS`]).
    #[inline]
    pub fn fits(&self) -> bool {
        self.kinds.len() <= MAX_NODES && self.n <= MAX_DOFS
    }
    /// Local velocity vector `[ẋ; Ω]` (frame) / `[ẋ]` (point) per node.
    ///
    /// # Panics
    ///
    /// If the layout does not [fit](Layout::fits).
    pub fn velocity(&self, nodes: &[NodeState]) -> LocalVector {
        let mut v = LocalVector::zeros();
        for (i, s) in nodes.iter().enumerate().take(self.kinds.len()) {
            let o = self.offsets[i];
            v.fixed_rows_mut::<3>(o).copy_from(&s.v);
            if self.is_frame(i) {
                v.fixed_rows_mut::<3>(o + 3).copy_from(&s.omega);
            }
        }
        v
    }
    /// Post-multiply the rotational column blocks of `a` by the per-node tangents `T`
    /// (`δΘ = T du`); translational columns and point nodes are unchanged.
    pub fn apply_tangent<const R: usize>(
        &self,
        a: &mut SMatrix<f64, R, MAX_DOFS>,
        tangents: &[Matrix3<f64>],
    ) {
        for i in 0..self.kinds.len() {
            if !self.is_frame(i) {
                continue;
            }
            let t = &tangents[i];
            if *t == Matrix3::identity() {
                continue;
            }
            let o = self.offsets[i] + 3;
            let block = a.fixed_columns::<3>(o) * t;
            a.fixed_columns_mut::<3>(o).copy_from(&block);
        }
    }
}

/// An inertial vector that depends on the configuration linearly through node positions and
/// body-fixed vectors: `c + Σ α_i x_i + Σ R_i a_i` (`R_i a_i` only on frame nodes).
///
/// Build it from the constructors and `+`, `−`, unary `−` and `* f64`; evaluate it with a
/// [`KinCx`]. It is a small `Copy` value (one coefficient `α_i` and one body vector `a_i` per
/// local node): terms on the same node are merged, and nothing is allocated.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KinVec {
    constant: Vector3<f64>,
    /// `α_i`: coefficient of `x_i`.
    position: [f64; MAX_NODES],
    /// `a_i` of the body term `R_i a_i`.
    body: [Vector3<f64>; MAX_NODES],
    /// Whether node `i` has a body term (even a zero one: it must then be a frame node).
    has_body: [bool; MAX_NODES],
}

fn check_local_node(node: usize) {
    assert!(
        node < MAX_NODES,
        "KinVec: local node {node} out of range (a bilateral constraint has at most {MAX_NODES} nodes)"
    );
}

impl KinVec {
    /// A fixed inertial vector `c`.
    pub fn constant(c: Vector3<f64>) -> Self {
        Self {
            constant: c,
            ..Self::default()
        }
    }
    /// The position `x_i` of local node `node`.
    ///
    /// # Panics
    ///
    /// If `node >= MAX_NODES`.
    #[inline]
    pub fn position(node: usize) -> Self {
        check_local_node(node);
        let mut u = Self::default();
        u.position[node] = 1.0;
        u
    }
    /// The body-fixed direction `R_i a` of local frame node `node` (`a` in the body frame).
    ///
    /// # Panics
    ///
    /// If `node >= MAX_NODES`; evaluating it panics if `node` is a point node.
    #[inline]
    pub fn body(node: usize, local: Vector3<f64>) -> Self {
        check_local_node(node);
        let mut u = Self::default();
        u.body[node] = local;
        u.has_body[node] = true;
        u
    }
    /// The body-fixed point `x_i + R_i d` of local frame node `node` (`d` in the body frame).
    ///
    /// # Panics
    ///
    /// As [`KinVec::body`].
    #[inline]
    pub fn body_point(node: usize, offset: Vector3<f64>) -> Self {
        Self::position(node) + Self::body(node, offset)
    }
}

impl Add for KinVec {
    type Output = KinVec;
    #[inline]
    fn add(mut self, rhs: KinVec) -> KinVec {
        self.constant += rhs.constant;
        for i in 0..MAX_NODES {
            self.position[i] += rhs.position[i];
            self.body[i] += rhs.body[i];
            self.has_body[i] |= rhs.has_body[i];
        }
        self
    }
}

impl Mul<f64> for KinVec {
    type Output = KinVec;
    #[inline]
    fn mul(mut self, s: f64) -> KinVec {
        self.constant *= s;
        for i in 0..MAX_NODES {
            self.position[i] *= s;
            self.body[i] *= s;
        }
        self
    }
}

impl Neg for KinVec {
    type Output = KinVec;
    #[inline]
    fn neg(self) -> KinVec {
        self * -1.0
    }
}

impl Sub for KinVec {
    type Output = KinVec;
    #[inline]
    fn sub(self, rhs: KinVec) -> KinVec {
        self + (-rhs)
    }
}

/// A scalar function of the configuration with its gradient `∂s/∂q` and second derivative
/// `H = ∂(∂s/∂q)/∂q` (`H_ab` = derivative of gradient entry `a` under the material variation
/// `b`), all with respect to the element's local unknowns.
///
/// The storage is fixed-size and padded ([`LocalVector`], [`LocalMatrix`]): only the leading `n`
/// entries of `grad` and the leading `n × n` block of `hess` are meaningful, the rest stays zero
/// under every operation of this type. A `Scalar` is plain data (about 1.3 kB): no allocation.
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    /// Value.
    pub value: f64,
    /// Gradient (leading `n` entries).
    pub grad: LocalVector,
    /// Second derivative (leading `n × n` block).
    pub hess: LocalMatrix,
}

impl Scalar {
    /// A configuration-independent value (zero derivatives).
    pub fn constant(value: f64) -> Self {
        Self {
            value,
            grad: LocalVector::zeros(),
            hess: LocalMatrix::zeros(),
        }
    }

    /// `f(s)` given `f(s)`, `f'(s)`, `f''(s)`.
    pub fn map(&self, f: f64, df: f64, d2f: f64) -> Scalar {
        let mut hess = self.hess * df;
        hess.ger(d2f, &self.grad, &self.grad, 1.0);
        Scalar {
            value: f,
            grad: self.grad * df,
            hess,
        }
    }

    /// `f(a, b)` given the value, the gradient `[f_a, f_b]` and the second derivatives
    /// `[f_aa, f_ab, f_bb]`.
    pub fn map2(a: &Scalar, b: &Scalar, f: f64, df: [f64; 2], d2f: [f64; 3]) -> Scalar {
        let mut hess = a.hess * df[0] + b.hess * df[1];
        hess.ger(d2f[0], &a.grad, &a.grad, 1.0);
        hess.ger(d2f[1], &a.grad, &b.grad, 1.0);
        hess.ger(d2f[1], &b.grad, &a.grad, 1.0);
        hess.ger(d2f[2], &b.grad, &b.grad, 1.0);
        Scalar {
            value: f,
            grad: a.grad * df[0] + b.grad * df[1],
            hess,
        }
    }

    /// Product `a · b`.
    pub fn product(a: &Scalar, b: &Scalar) -> Scalar {
        Scalar::map2(a, b, a.value * b.value, [b.value, a.value], [0.0, 1.0, 0.0])
    }

    /// `atan2(y, x)` in `(−π, π]` (smooth wherever `x² + y² > 0`).
    pub fn atan2(y: &Scalar, x: &Scalar) -> Scalar {
        let (yv, xv) = (y.value, x.value);
        let r2 = xv * xv + yv * yv;
        let r4 = r2 * r2;
        Scalar::map2(
            y,
            x,
            yv.atan2(xv),
            [xv / r2, -yv / r2],
            [
                -2.0 * xv * yv / r4,
                (yv * yv - xv * xv) / r4,
                2.0 * xv * yv / r4,
            ],
        )
    }
}

impl Add for Scalar {
    type Output = Scalar;
    fn add(mut self, rhs: Scalar) -> Scalar {
        self.value += rhs.value;
        self.grad += rhs.grad;
        self.hess += rhs.hess;
        self
    }
}

impl Sub for Scalar {
    type Output = Scalar;
    fn sub(mut self, rhs: Scalar) -> Scalar {
        self.value -= rhs.value;
        self.grad -= rhs.grad;
        self.hess -= rhs.hess;
        self
    }
}

impl Neg for Scalar {
    type Output = Scalar;
    fn neg(self) -> Scalar {
        self * -1.0
    }
}

impl Mul<f64> for Scalar {
    type Output = Scalar;
    fn mul(mut self, s: f64) -> Scalar {
        self.value *= s;
        self.grad *= s;
        self.hess *= s;
        self
    }
}

impl Add<f64> for Scalar {
    type Output = Scalar;
    fn add(mut self, c: f64) -> Scalar {
        self.value += c;
        self
    }
}

impl Sub<f64> for Scalar {
    type Output = Scalar;
    fn sub(mut self, c: f64) -> Scalar {
        self.value -= c;
        self
    }
}

/// Where a constraint is evaluated: node configurations (and velocities), time and layout.
/// Holds the nodes' rotation matrices, computed once by [`KinCx::new`].
#[derive(Clone, Copy, Debug)]
pub struct KinCx<'a> {
    nodes: &'a [NodeState],
    t: f64,
    layout: &'a Layout,
    rot: [Matrix3<f64>; MAX_NODES],
    hessians: bool,
}

impl<'a> KinCx<'a> {
    /// Context at the node states `nodes` (local order) and time `t` \[s\], for a full
    /// (second-order) evaluation.
    ///
    /// # Panics
    ///
    /// If `nodes` is shorter than the layout or the layout does not [fit](Layout::fits).
    pub fn new(nodes: &'a [NodeState], t: f64, layout: &'a Layout) -> Self {
        assert!(
            nodes.len() >= layout.kinds.len(),
            "KinCx: {} node states for {} nodes",
            nodes.len(),
            layout.kinds.len()
        );
        assert!(
            layout.fits(),
            "KinCx: {} nodes with {} unknowns exceed the limits ({MAX_NODES} nodes, {MAX_DOFS} unknowns)",
            layout.kinds.len(),
            layout.n
        );
        let mut rot = [Matrix3::identity(); MAX_NODES];
        for (i, r) in rot.iter_mut().enumerate().take(layout.kinds.len()) {
            if layout.is_frame(i) {
                *r = nodes[i].r.to_rotation_matrix().into_inner();
            }
        }
        Self {
            nodes,
            t,
            layout,
            rot,
            hessians: true,
        }
    }
    /// The same context for a first-order evaluation: only `g`, `g_q`, `g_t` and `∂g_t/∂q` are
    /// used, so [`KinCx::dot`], [`KinCx::component`] and [`Kinematics::set_vector_rows`] skip
    /// the second derivatives (left zero; [`Scalar`] arithmetic on such values gives second
    /// derivatives that are incomplete, and unused).
    pub fn first_order(mut self) -> Self {
        self.hessians = false;
        self
    }
    /// Whether the second derivatives `H_j` are needed (`false` after
    /// [`KinCx::first_order`]; a hand-written `evaluate` may then skip them).
    #[inline]
    pub fn needs_hessians(&self) -> bool {
        self.hessians
    }
    /// Node states in local order.
    #[inline]
    pub fn nodes(&self) -> &'a [NodeState] {
        self.nodes
    }
    /// Local node `i`.
    #[inline]
    pub fn node(&self, i: usize) -> &'a NodeState {
        &self.nodes[i]
    }
    /// Time \[s\].
    #[inline]
    pub fn t(&self) -> f64 {
        self.t
    }
    /// Layout of the local unknowns.
    #[inline]
    pub fn layout(&self) -> &'a Layout {
        self.layout
    }
    /// Number of node unknowns `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.layout.n
    }

    /// Rotation matrix `R_i` (body → inertial) of local frame node `node`.
    ///
    /// # Panics
    ///
    /// If `node` is not a frame node of the layout.
    #[inline]
    pub fn rotation(&self, node: usize) -> &Matrix3<f64> {
        self.check_node(node);
        assert!(
            self.layout.is_frame(node),
            "body-fixed vector on local node {node}, which is a point node"
        );
        &self.rot[node]
    }

    /// Panic unless local node `node` is in the layout.
    #[inline]
    fn check_node(&self, node: usize) {
        assert!(
            node < self.layout.kinds.len(),
            "KinVec term on local node {node}, but the constraint has {} nodes",
            self.layout.kinds.len()
        );
    }

    /// Offset of local node `node`, which must be in the layout.
    #[inline]
    fn offset(&self, node: usize) -> usize {
        self.check_node(node);
        self.layout.offsets[node]
    }

    /// Value of `u` [inertial frame].
    #[inline]
    pub fn value(&self, u: &KinVec) -> Vector3<f64> {
        let mut out = u.constant;
        for i in 0..MAX_NODES {
            if u.position[i] != 0.0 {
                self.check_node(i);
                out += self.nodes[i].x * u.position[i];
            }
            if u.has_body[i] {
                out += self.rotation(i) * u.body[i];
            }
        }
        out
    }

    /// The nonzero `3 × 3` column blocks of `∂u/∂q`: `(first column, block)`.
    #[inline]
    fn blocks(&self, u: &KinVec) -> Blocks {
        let mut out = Blocks {
            at: [0; 2 * MAX_NODES],
            block: [Matrix3::zeros(); 2 * MAX_NODES],
            len: 0,
        };
        for i in 0..MAX_NODES {
            let coef = u.position[i];
            if coef != 0.0 {
                out.at[out.len] = self.offset(i);
                out.block[out.len] = Matrix3::from_diagonal_element(coef);
                out.len += 1;
            }
            if u.has_body[i] {
                // δ(R a) = R hat(δΘ) a = −R hat(a) δΘ.
                out.block[out.len] = -(self.rotation(i) * lie::hat(&u.body[i]));
                out.at[out.len] = self.offset(i) + 3;
                out.len += 1;
            }
        }
        out
    }

    /// Jacobian `∂u/∂q` (`3 × n`, padded).
    pub fn jacobian(&self, u: &KinVec) -> VectorJacobian {
        let mut j = VectorJacobian::zeros();
        let b = self.blocks(u);
        for (o, blk) in b.iter() {
            j.fixed_columns_mut::<3>(o).copy_from(blk);
        }
        j
    }

    /// Curvature of `u` against a fixed vector `c`: the `n × n` matrix (padded) with entry
    /// `(a, b)` equal to `c · ∂(∂u/∂q_a)/∂q_b`. Only the rotational diagonal blocks are nonzero:
    /// `w aᵀ − (w·a) I` with `w = Rᵀ c` for every body vector `R a`.
    pub fn curvature(&self, u: &KinVec, c: &Vector3<f64>) -> LocalMatrix {
        let mut h = LocalMatrix::zeros();
        self.add_curvature(u, c, &mut h);
        h
    }

    /// Add the [curvature](KinCx::curvature) of `u` against `c` to `h`.
    #[inline]
    pub fn add_curvature(&self, u: &KinVec, c: &Vector3<f64>, h: &mut LocalMatrix) {
        for i in 0..MAX_NODES {
            if u.has_body[i] {
                let a = &u.body[i];
                let w = self.rotation(i).tr_mul(c);
                let o = self.offset(i) + 3;
                let mut b = h.fixed_view_mut::<3, 3>(o, o);
                b += w * a.transpose() - Matrix3::identity() * w.dot(a);
            }
        }
    }

    /// The scalar `u · v` with exact derivatives (second derivatives only if
    /// [`KinCx::needs_hessians`]).
    pub fn dot(&self, u: &KinVec, v: &KinVec) -> Scalar {
        let (uv, vv) = (self.value(u), self.value(v));
        let (bu, bv) = (self.blocks(u), self.blocks(v));
        let mut s = Scalar::constant(uv.dot(&vv));
        // ∂(u·v) = Juᵀ v + Jvᵀ u.
        for (o, b) in bu.iter() {
            add_rows(&mut s.grad, o, &b.tr_mul(&vv));
        }
        for (o, b) in bv.iter() {
            add_rows(&mut s.grad, o, &b.tr_mul(&uv));
        }
        if self.hessians {
            // Juᵀ Jv + Jvᵀ Ju, block by block, plus the curvatures of both factors.
            for (oa, a) in bu.iter() {
                for (ob, b) in bv.iter() {
                    let ab = a.tr_mul(b);
                    add_block(&mut s.hess, oa, ob, &ab);
                    add_block(&mut s.hess, ob, oa, &ab.transpose());
                }
            }
            self.add_curvature(u, &vv, &mut s.hess);
            self.add_curvature(v, &uv, &mut s.hess);
        }
        s
    }

    /// The scalar `c · u` for a fixed inertial direction `c`.
    pub fn component(&self, u: &KinVec, c: &Vector3<f64>) -> Scalar {
        let mut s = Scalar::constant(self.value(u).dot(c));
        for (o, b) in self.blocks(u).iter() {
            add_rows(&mut s.grad, o, &b.tr_mul(c));
        }
        if self.hessians {
            self.add_curvature(u, c, &mut s.hess);
        }
        s
    }

    /// Evaluate `constraint` here.
    pub fn kinematics<C: BilateralConstraint + ?Sized>(&self, constraint: &C) -> Kinematics {
        let mut k = Kinematics::zeros(constraint.n_constraints(), self.n());
        constraint.evaluate(self, &mut k);
        k
    }
}

/// Nonzero `3 × 3` column blocks of a [`KinVec`]'s Jacobian.
struct Blocks {
    at: [usize; 2 * MAX_NODES],
    block: [Matrix3<f64>; 2 * MAX_NODES],
    len: usize,
}

impl Blocks {
    fn iter(&self) -> impl Iterator<Item = (usize, &Matrix3<f64>)> {
        self.at[..self.len]
            .iter()
            .copied()
            .zip(&self.block[..self.len])
    }
}

/// `v[o..o+3] += x`.
#[inline]
fn add_rows(v: &mut LocalVector, o: usize, x: &Vector3<f64>) {
    let mut r = v.fixed_rows_mut::<3>(o);
    r += x;
}

/// `h[r..r+3, c..c+3] += x`.
#[inline]
fn add_block(h: &mut LocalMatrix, r: usize, c: usize, x: &Matrix3<f64>) {
    let mut b = h.fixed_view_mut::<3, 3>(r, c);
    b += x;
}

/// Constraint kinematics at one configuration and time: `g`, `g_q`, `g_t`, `∂g_t/∂q` and the
/// per-row second derivatives `H_j = ∂(g_q)_j/∂q` (see the [module documentation](self)).
///
/// Fixed-size storage (about 8 kB, no allocation); the accessors return views of exactly `m`
/// rows and `n` columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Kinematics {
    m: usize,
    n: usize,
    g: RowVector,
    g_q: RowJacobian,
    g_t: RowVector,
    g_t_q: RowJacobian,
    /// `H_j` of row `j` (leading `n × n` block).
    hess: [LocalMatrix; MAX_ROWS],
}

impl Kinematics {
    /// Zero kinematics of `m` rows and `n` node unknowns.
    ///
    /// # Panics
    ///
    /// If `m > MAX_ROWS` or `n > MAX_DOFS`.
    pub fn zeros(m: usize, n: usize) -> Self {
        assert!(
            m <= MAX_ROWS && n <= MAX_DOFS,
            "Kinematics: {m} rows and {n} unknowns exceed the limits ({MAX_ROWS} rows, {MAX_DOFS} unknowns)"
        );
        Self {
            m,
            n,
            g: RowVector::zeros(),
            g_q: RowJacobian::zeros(),
            g_t: RowVector::zeros(),
            g_t_q: RowJacobian::zeros(),
            hess: [LocalMatrix::zeros(); MAX_ROWS],
        }
    }
    /// Number of rows `m`.
    #[inline]
    pub fn m(&self) -> usize {
        self.m
    }
    /// Number of node unknowns `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }
    /// Constraint values `g` (length `m`).
    #[inline]
    pub fn g(&self) -> RowView<'_> {
        self.g.rows(0, self.m)
    }
    /// Mutable `g`, for joints that write their kinematics by hand.
    #[inline]
    pub fn g_mut(&mut self) -> RowViewMut<'_> {
        self.g.rows_mut(0, self.m)
    }
    /// Jacobian `g_q` (`m × n`, material rotation variations).
    #[inline]
    pub fn g_q(&self) -> JacobianView<'_> {
        self.g_q.view((0, 0), (self.m, self.n))
    }
    /// Mutable `g_q`, for joints that write their derivatives by hand.
    #[inline]
    pub fn g_q_mut(&mut self) -> JacobianViewMut<'_> {
        self.g_q.view_mut((0, 0), (self.m, self.n))
    }
    /// Explicit time derivative `g_t = ∂g/∂t` (length `m`).
    #[inline]
    pub fn g_t(&self) -> RowView<'_> {
        self.g_t.rows(0, self.m)
    }
    /// Mutable `g_t`.
    #[inline]
    pub fn g_t_mut(&mut self) -> RowViewMut<'_> {
        self.g_t.rows_mut(0, self.m)
    }
    /// `∂g_t/∂q` (`m × n`; zero unless `g_t` depends on the configuration).
    #[inline]
    pub fn g_t_q(&self) -> JacobianView<'_> {
        self.g_t_q.view((0, 0), (self.m, self.n))
    }
    /// Mutable `∂g_t/∂q`.
    #[inline]
    pub fn g_t_q_mut(&mut self) -> JacobianViewMut<'_> {
        self.g_t_q.view_mut((0, 0), (self.m, self.n))
    }
    /// `g` as a padded fixed-size vector.
    #[inline]
    pub fn g_padded(&self) -> &RowVector {
        &self.g
    }
    /// `g_q` as a padded fixed-size matrix.
    #[inline]
    pub fn g_q_padded(&self) -> &RowJacobian {
        &self.g_q
    }
    /// Set row `j` (value, gradient, second derivative) from a scalar expression.
    pub fn set_row(&mut self, j: usize, s: &Scalar) {
        let (m, n) = (self.m, self.n);
        assert!(j < m, "Kinematics::set_row: row {j} of {m}");
        self.g[j] = s.value;
        for a in 0..n {
            self.g_q[(j, a)] = s.grad[a];
        }
        // Column by column: only the leading n × n block (the padding stays zero).
        let (dst, src) = (self.hess[j].as_mut_slice(), s.hess.as_slice());
        for b in 0..n {
            let c = b * MAX_DOFS;
            dst[c..c + n].copy_from_slice(&src[c..c + n]);
        }
    }
    /// Set the three rows `j0 .. j0+3` to the inertial components of `u`.
    pub fn set_vector_rows(&mut self, j0: usize, cx: &KinCx<'_>, u: &KinVec) {
        let (m, n) = (self.m, self.n);
        assert!(
            j0 + 3 <= m,
            "Kinematics::set_vector_rows: rows {j0}..{} of {m}",
            j0 + 3
        );
        debug_assert_eq!(cx.n(), n);
        let value = cx.value(u);
        let jac = cx.jacobian(u);
        for k in 0..3 {
            let j = j0 + k;
            self.g[j] = value[k];
            for a in 0..n {
                self.g_q[(j, a)] = jac[(k, a)];
            }
            self.hess[j].as_mut_slice().fill(0.0);
            if cx.needs_hessians() {
                cx.add_curvature(u, &Vector3::ith(k, 1.0), &mut self.hess[j]);
            }
        }
    }
    /// Add an explicit (configuration-independent) term to `g_j`, e.g. `−θ(t)`.
    pub fn add_value(&mut self, j: usize, value: f64) {
        assert!(j < self.m, "Kinematics::add_value: row {j} of {}", self.m);
        self.g[j] += value;
    }
    /// Add to the explicit time derivative `(g_t)_j`.
    pub fn add_g_t(&mut self, j: usize, value: f64) {
        assert!(j < self.m, "Kinematics::add_g_t: row {j} of {}", self.m);
        self.g_t[j] += value;
    }
    /// Add a configuration-dependent explicit time derivative to row `j`: `s.value` to `g_t`
    /// and `s.grad` to `∂g_t/∂q` (`s.hess` is not needed).
    pub fn add_g_t_scalar(&mut self, j: usize, s: &Scalar) {
        assert!(
            j < self.m,
            "Kinematics::add_g_t_scalar: row {j} of {}",
            self.m
        );
        self.g_t[j] += s.value;
        for a in 0..self.n {
            self.g_t_q[(j, a)] += s.grad[a];
        }
    }
    /// Second derivative `H_j = ∂(g_q)_j/∂q` of row `j` (`n × n`).
    pub fn row_hessian(&self, j: usize) -> HessianView<'_> {
        assert!(j < self.m, "Kinematics::row_hessian: row {j} of {}", self.m);
        self.hess[j].view((0, 0), (self.n, self.n))
    }
    /// Mutable `H_j`, for joints that write their derivatives by hand.
    pub fn row_hessian_mut(&mut self, j: usize) -> HessianViewMut<'_> {
        assert!(
            j < self.m,
            "Kinematics::row_hessian_mut: row {j} of {}",
            self.m
        );
        self.hess[j].view_mut((0, 0), (self.n, self.n))
    }
    /// `∂(g_qᵀ μ)/∂q = Σ_j μ_j H_j` (`n × n`, padded) for a fixed `μ` (its first `m` entries).
    ///
    /// # Panics
    ///
    /// If `mu` has fewer than `m` entries.
    pub fn d_gqt_mu(&self, mu: &[f64]) -> LocalMatrix {
        let mut a = LocalMatrix::zeros();
        self.add_d_gqt_mu(&mut a, mu, 1.0);
        a
    }
    /// `out += scale · Σ_j μ_j H_j`.
    fn add_d_gqt_mu(&self, out: &mut LocalMatrix, mu: &[f64], scale: f64) {
        for (h, &mj) in self.hess.iter().zip(&mu[..self.m]) {
            let f = scale * mj;
            if f != 0.0 {
                axpy(out.as_mut_slice(), f, h.as_slice());
            }
        }
    }
    /// `∂(g_q w)/∂q` (`m × n`, padded) for a fixed local velocity `w`: row `j` is `wᵀ H_j`.
    pub fn d_gq_w(&self, w: &LocalVector) -> RowJacobian {
        let mut b = RowJacobian::zeros();
        let w = w.as_slice();
        for j in 0..self.m {
            let h = self.hess[j].as_slice();
            for c in 0..self.n {
                b[(j, c)] = dot(w, &h[c * MAX_DOFS..(c + 1) * MAX_DOFS]);
            }
        }
        b
    }
    /// Constraint rate `ġ = g_q v + g_t` (padded) for the local velocity `v`.
    pub fn rate(&self, v: &LocalVector) -> RowVector {
        let mut r = self.g_t;
        let g_q = self.g_q.as_slice();
        for c in 0..self.n {
            axpy(
                r.as_mut_slice(),
                v[c],
                &g_q[c * MAX_ROWS..(c + 1) * MAX_ROWS],
            );
        }
        r
    }
}

/// `y += a x` (slices of equal length).
#[inline]
fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// `x · y` (slices of equal length).
#[inline]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(x, y)| x * y).sum()
}

/// `out += s aᵀ x` over the first `n` node unknowns (`a` padded, `m × n`).
fn add_at_x(out: &mut LocalVector, a: &RowJacobian, x: &RowVector, s: f64, n: usize) {
    let a = a.as_slice();
    for c in 0..n {
        out[c] += s * dot(&a[c * MAX_ROWS..(c + 1) * MAX_ROWS], x.as_slice());
    }
}

/// `out += s aᵀ b` over the leading `n × n` block (`a`, `b` padded, `m × n`).
fn add_at_b(out: &mut LocalMatrix, a: &RowJacobian, b: &RowJacobian, s: f64, n: usize) {
    // Column c of aᵀ b is Σ_r b_rc (row r of a): axpys over the contiguous columns of aᵀ.
    let at = a.transpose();
    let (at, b, o) = (at.as_slice(), b.as_slice(), out.as_mut_slice());
    for c in 0..n {
        let col = &mut o[c * MAX_DOFS..(c + 1) * MAX_DOFS];
        for r in 0..MAX_ROWS {
            let f = s * b[c * MAX_ROWS + r];
            if f != 0.0 {
                axpy(col, f, &at[r * MAX_DOFS..(r + 1) * MAX_DOFS]);
            }
        }
    }
}

/// The [`Element`] made of a [`BilateralConstraint`]: `m` always-active multipliers at every
/// level, exact Hessians, and the outputs `reaction_smooth`, `position_multiplier`, `impulse`,
/// `force`/`moment` (if the constraint has a reaction node), `violation` and the constraint's
/// extra channels. Its level methods do not allocate (if the constraint's `evaluate` does not).
#[derive(Clone, Debug)]
pub struct BilateralJoint<C> {
    constraint: C,
    layout: Layout,
    /// Time of the last converged level (for rheonomic outputs) [s].
    t_out: f64,
}

impl<C: BilateralConstraint> BilateralJoint<C> {
    /// Wrap a constraint into an element.
    ///
    /// # Errors
    ///
    /// [`BuildError::InvalidParameter`] (element: the type name) if `constraint.node_kinds()`
    /// and `constraint.nodes()` differ in length, or the constraint exceeds the fixed-size
    /// storage: more than [`MAX_NODES`] nodes, [`MAX_DOFS`] node unknowns or [`MAX_ROWS`] rows.
    pub fn from_constraint(constraint: C) -> Result<Self, BuildError> {
        let name = constraint.type_name();
        let invalid = |parameter: &str, message: String| BuildError::InvalidParameter {
            element: name.to_string(),
            parameter: parameter.to_string(),
            message,
        };
        let kinds = constraint.node_kinds();
        let n_nodes = constraint.nodes().len();
        if kinds.len() != n_nodes {
            return Err(invalid(
                "nodes",
                format!(
                    "node_kinds() has {} entries for {n_nodes} nodes",
                    kinds.len()
                ),
            ));
        }
        let layout = Layout::new(kinds);
        if !layout.fits() {
            return Err(invalid(
                "nodes",
                format!(
                    "{n_nodes} nodes with {} unknowns exceed the joint storage \
                     (at most {MAX_NODES} nodes and {MAX_DOFS} unknowns, e.g. two frame nodes)",
                    layout.n
                ),
            ));
        }
        let m = constraint.n_constraints();
        if m > MAX_ROWS {
            return Err(invalid(
                "constraints",
                format!("{m} constraint rows exceed the joint storage (at most {MAX_ROWS})"),
            ));
        }
        Ok(Self {
            constraint,
            layout,
            t_out: 0.0,
        })
    }
    /// The wrapped constraint.
    pub fn constraint(&self) -> &C {
        &self.constraint
    }
    /// Mutable access to the wrapped constraint.
    pub fn constraint_mut(&mut self) -> &mut C {
        &mut self.constraint
    }
    /// Local unknown layout of the nodes.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// Kinematics at the node states `nodes` (local order) and time `t` \[s\].
    pub fn kinematics(&self, nodes: &[NodeState], t: f64) -> Kinematics {
        KinCx::new(nodes, t, &self.layout).kinematics(&self.constraint)
    }

    fn n_mult(&self) -> usize {
        self.constraint.n_constraints()
    }

    fn check(&self, kin: &Kinematics) -> Result<(), ElementError> {
        let values = kin.g.as_slice().iter().chain(kin.g_q.as_slice());
        if values.into_iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(ElementError::InvalidState(format!(
                "{}: non-finite constraint value or Jacobian",
                self.constraint.type_name()
            )))
        }
    }

    fn assemble(
        &self,
        level: Level,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let (n, m) = (self.layout.n, self.n_mult());
        let t = if level == Level::Static { 0.0 } else { cx.t };
        // The second derivatives enter only through configuration columns: none at the
        // velocity level (q frozen), nor at the smooth level if dq_dv = 0.
        let hessians = match level {
            Level::Smooth => cx.dq_dv != 0.0,
            Level::Velocity | Level::Custom => false,
            Level::Position | Level::Static => true,
        };
        let mut kin = Kinematics::zeros(m, n);
        let kcx = KinCx::new(s.nodes, t, &self.layout);
        let kcx = if hessians { kcx } else { kcx.first_order() };
        self.constraint.evaluate(&kcx, &mut kin);
        self.check(&kin)?;
        let g_q = &kin.g_q;
        let (k, p) = (cx.k, cx.p);

        // Padded local blocks: node rows r_q; configuration/velocity block h_qq
        // (node × node); multiplier × node block h_mq (before the factor −k). The multiplier
        // rows are −k c and the node × multiplier block −k g_qᵀ.
        let mut r_q = LocalVector::zeros();
        let mut h_qq = LocalMatrix::zeros();
        let mut h_mq;

        // Joint part of −w (g_q(q) − g_q(q̃))ᵀ k_s λ̃ (position and velocity levels, §5–6);
        // only g_q is needed at q̃ (first-order evaluation).
        let lam_s = if matches!(level, Level::Position | Level::Velocity) {
            let lam = padded_rows(&s.mult_smooth[..m], cx.k_s);
            let mut kin_s = Kinematics::zeros(m, n);
            self.constraint.evaluate(
                &KinCx::new(s.smooth, t, &self.layout).first_order(),
                &mut kin_s,
            );
            add_at_x(&mut r_q, &(g_q - kin_s.g_q), &lam, -cx.force_weight, n);
            Some(lam)
        } else {
            None
        };

        let rate_level = matches!(level, Level::Smooth | Level::Velocity);
        let v = if rate_level {
            self.layout.velocity(s.nodes)
        } else {
            LocalVector::zeros()
        };
        // c = ġ (smooth, velocity) or g (position, static); ξ = k μ − p c.
        let c = if rate_level { kin.rate(&v) } else { kin.g };
        let xi = padded_rows(&s.mult[..m], k) - c * p;
        add_at_x(&mut r_q, g_q, &xi, -1.0, n);

        if rate_level {
            h_mq = g_q * cx.dv_dv;
            if hessians {
                // Smooth level, configuration columns: ∂/∂q at fixed v, times dq_dv T.
                let mut c_q = kin.d_gq_w(&v) + kin.g_t_q;
                add_at_b(&mut h_qq, g_q, &c_q, p, n);
                kin.add_d_gqt_mu(&mut h_qq, xi.as_slice(), -1.0);
                self.layout.apply_tangent(&mut h_qq, s.rot_tangent);
                scale(h_qq.as_mut_slice(), cx.dq_dv);
                self.layout.apply_tangent(&mut c_q, s.rot_tangent);
                h_mq += c_q * cx.dq_dv;
            }
            add_at_b(&mut h_qq, g_q, g_q, p * cx.dv_dv, n);
        } else {
            // μ = ξ + w k_s λ̃ collects both ∂(g_qᵀ ·)/∂q terms.
            let mut mu = xi;
            if let Some(lam) = &lam_s {
                mu += lam * cx.force_weight;
            }
            add_at_b(&mut h_qq, g_q, g_q, p, n);
            kin.add_d_gqt_mu(&mut h_qq, mu.as_slice(), -1.0);
            self.layout.apply_tangent(&mut h_qq, s.rot_tangent);
            scale(h_qq.as_mut_slice(), cx.dq_dv);
            h_mq = *g_q;
            self.layout.apply_tangent(&mut h_mq, s.rot_tangent);
            h_mq *= cx.dq_dv;
        }

        // Scatter column by column (the local output is column-major with unit row stride).
        let res = out.residual.as_mut_slice();
        axpy(&mut res[..n], 1.0, &r_q.as_slice()[..n]);
        axpy(&mut res[n..n + m], -k, &c.as_slice()[..m]);
        let (h_qq, h_mq, g_qt) = (h_qq.as_slice(), h_mq.as_slice(), g_q.transpose());
        for b in 0..n {
            let mut col = out.hessian.column_mut(b);
            let col = col.as_mut_slice();
            axpy(&mut col[..n], 1.0, &h_qq[b * MAX_DOFS..b * MAX_DOFS + n]);
            axpy(
                &mut col[n..n + m],
                -k,
                &h_mq[b * MAX_ROWS..b * MAX_ROWS + m],
            );
        }
        let g_qt = g_qt.as_slice();
        for j in 0..m {
            let mut col = out.hessian.column_mut(n + j);
            let col = col.as_mut_slice();
            axpy(&mut col[..n], -k, &g_qt[j * MAX_DOFS..j * MAX_DOFS + n]);
        }
        Ok(())
    }

    fn has_moment(&self) -> Option<(usize, bool)> {
        self.constraint
            .reaction_node()
            .map(|i| (i, self.layout.is_frame(i)))
    }
}

/// `scale · src` as a padded row vector (`src.len() ≤ MAX_ROWS`).
fn padded_rows(src: &[f64], scale: f64) -> RowVector {
    let mut v = RowVector::zeros();
    for (d, s) in v.iter_mut().zip(src) {
        *d = scale * s;
    }
    v
}

/// `x *= a`.
#[inline]
fn scale(x: &mut [f64], a: f64) {
    for x in x {
        *x *= a;
    }
}

fn copy_scaled(dst: &mut [f64], src: &[f64], scale: f64) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = scale * s;
    }
}

impl<C: BilateralConstraint> Element for BilateralJoint<C> {
    fn type_name(&self) -> &'static str {
        self.constraint.type_name()
    }
    fn nodes(&self) -> &[NodeId] {
        self.constraint.nodes()
    }
    fn levels(&self) -> Levels {
        Levels::ALL
    }
    fn n_mult(&self, _level: Level) -> usize {
        self.constraint.n_constraints()
    }
    fn smooth(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Smooth, cx, s, out)
    }
    fn position(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Position, cx, s, out)
    }
    fn velocity(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Velocity, cx, s, out)
    }
    fn static_eq(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Static, cx, s, out)
    }
    fn level_converged(&mut self, cx: &StepCx, _s: &LocalState<'_>) {
        self.t_out = if cx.level == Level::Static { 0.0 } else { cx.t };
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        let m = self.n_mult();
        let u = self.constraint.units();
        let mut v = vec![
            OutputSpec {
                name: "reaction_smooth",
                len: m,
                unit: u.reaction,
                description: "physical smooth reactions k_s λ̃, one per constraint row",
            },
            OutputSpec {
                name: "position_multiplier",
                len: m,
                unit: u.position_multiplier,
                description:
                    "physical position multipliers k_p ν (position-correction impulse × time)",
            },
            OutputSpec {
                name: "impulse",
                len: m,
                unit: u.impulse,
                description: "physical velocity-level impulses k_v Λ over the step",
            },
        ];
        if let Some((_, frame)) = self.has_moment() {
            v.push(OutputSpec {
                name: "force",
                len: 3,
                unit: "N",
                description: "smooth reaction force g_qᵀ k_s λ̃ applied by the joint to its reaction node (last node), inertial frame",
            });
            if frame {
                v.push(OutputSpec {
                    name: "moment",
                    len: 3,
                    unit: "N*m",
                    description: "smooth reaction moment g_qᵀ k_s λ̃ applied by the joint to its reaction node (last node), inertial frame, about the node",
                });
            }
        }
        v.push(OutputSpec {
            name: "violation",
            len: 2,
            unit: u.violation,
            description: "constraint violation |g(q, t)| and |g_q v + g_t| at the converged state",
        });
        v.extend(self.constraint.extra_outputs());
        v
    }
    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        let m = self.n_mult();
        let cx = KinCx::new(s.nodes, self.t_out, &self.layout);
        let kin = cx.kinematics(&self.constraint);
        let mut o = 0;
        copy_scaled(&mut out[o..o + m], s.mult_smooth, s.k[0]);
        o += m;
        copy_scaled(&mut out[o..o + m], s.mult_position, s.k[1]);
        o += m;
        copy_scaled(&mut out[o..o + m], s.mult_velocity, s.k[2]);
        o += m;
        if let Some((node, frame)) = self.has_moment() {
            let lam = padded_rows(&s.mult_smooth[..m], s.k[0]);
            let f = kin.g_q.tr_mul(&lam);
            let off = self.layout.offset(node);
            let force: Vector3<f64> = f.fixed_rows::<3>(off).into_owned();
            out[o..o + 3].copy_from_slice(force.as_slice());
            o += 3;
            if frame {
                let mom = s.nodes[node].r * f.fixed_rows::<3>(off + 3).into_owned();
                out[o..o + 3].copy_from_slice(mom.as_slice());
                o += 3;
            }
        }
        let v = self.layout.velocity(s.nodes);
        out[o] = kin.g.norm();
        out[o + 1] = kin.rate(&v).norm();
        o += 2;
        self.constraint
            .write_extra_outputs(&cx, &kin, &mut out[o..]);
    }
    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        self.constraint
            .node_kinds()
            .iter()
            .map(|k| Some(*k))
            .collect()
    }
}

/// Largest finite-difference errors of a constraint's kinematics, each relative to
/// `1 + max|analytic|` (see [`check_kinematics`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KinematicsCheck {
    /// `g_q` against central differences of `g` under material perturbations.
    pub jacobian: f64,
    /// `H_j` against central differences of `g_q`.
    pub hessian: f64,
    /// `g_q v + g_t` against the time derivative of `g` along `x + v τ`, `R exp(Ω τ)`, `t + τ`.
    pub rate: f64,
}

impl KinematicsCheck {
    /// The largest of the three errors.
    pub fn max(&self) -> f64 {
        self.jacobian.max(self.hessian).max(self.rate)
    }
}

fn perturbed(layout: &Layout, nodes: &[NodeState], j: usize, d: f64) -> Vec<NodeState> {
    let mut out = nodes.to_vec();
    let node = (0..layout.kinds.len())
        .rev()
        .find(|&i| layout.offset(i) <= j)
        .unwrap_or(0);
    let dof = j - layout.offset(node);
    if dof < 3 {
        out[node].x[dof] += d;
    } else {
        out[node].r = lie::perturb(&out[node].r, &Vector3::ith(dof - 3, d));
    }
    out
}

/// Check a constraint's kinematics against central differences with step `eps` at the node
/// states `nodes` (local order, with velocities) and time `t`: `g_q` and every `H_j`
/// (material perturbations `R exp(ε e_k)`), and `ġ = g_q v + g_t` along the motion
/// `x + v τ`, `R exp(Ω τ)`, `t + τ`. Use it when writing a new joint; errors of order
/// `eps²` (truncation) and `1e-16/eps` (round-off) are expected. Also checks that a
/// first-order evaluation ([`KinCx::first_order`]) gives the same `g`, `g_q`, `g_t`, `∂g_t/∂q`
/// (its mismatch, if any, is counted in the `jacobian` error).
///
/// # Panics
///
/// If the constraint's layout does not [fit](Layout::fits).
pub fn check_kinematics<C: BilateralConstraint + ?Sized>(
    constraint: &C,
    nodes: &[NodeState],
    t: f64,
    eps: f64,
) -> KinematicsCheck {
    let layout = Layout::new(constraint.node_kinds());
    let eval = |q: &[NodeState], t: f64| KinCx::new(q, t, &layout).kinematics(constraint);
    let kin = eval(nodes, t);
    let (m, n) = (kin.m(), kin.n());
    let rel = |err: f64, reference: f64| err / (1.0 + reference);
    let first = KinCx::new(nodes, t, &layout)
        .first_order()
        .kinematics(constraint);
    let mut jac_err: f64 = (first.g - kin.g)
        .amax()
        .max((first.g_q - kin.g_q).amax())
        .max((first.g_t - kin.g_t).amax())
        .max((first.g_t_q - kin.g_t_q).amax());
    let mut hess_err: f64 = 0.0;
    let mut hess_ref: f64 = 0.0;
    for b in 0..n {
        let kp = eval(&perturbed(&layout, nodes, b, eps), t);
        let km = eval(&perturbed(&layout, nodes, b, -eps), t);
        let dg = (kp.g - km.g) / (2.0 * eps);
        jac_err = jac_err.max((dg - kin.g_q.column(b)).amax());
        let dgq = (kp.g_q - km.g_q) / (2.0 * eps);
        for j in 0..m {
            let col = kin.hess[j].column(b);
            hess_err = hess_err.max((dgq.row(j).transpose() - col).amax());
            hess_ref = hess_ref.max(col.amax());
        }
    }
    let v = layout.velocity(nodes);
    let moved = |tau: f64| -> Vec<NodeState> {
        nodes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut s = *s;
                s.x += s.v * tau;
                if layout.is_frame(i) {
                    s.r = lie::perturb(&s.r, &(s.omega * tau));
                }
                s
            })
            .collect()
    };
    let gdot = (eval(&moved(eps), t + eps).g - eval(&moved(-eps), t - eps).g) / (2.0 * eps);
    let rate = kin.rate(&v);
    KinematicsCheck {
        jacobian: rel(jac_err, kin.g_q.amax()),
        hessian: rel(hess_err, hess_ref),
        rate: rel((gdot - rate).amax(), rate.amax()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{random_nodes, states, FD_TOL};
    use super::super::spherical::SphericalJoint;
    use super::*;
    use nalgebra::{DVector, Vector6};
    use saltus_core::fd::{check_hessian, eval_local, test_cx, LocalFixture, Rng};
    use saltus_core::registry::{element_kinds, BuildCx, ElementDef};

    const JOINT_TYPES: [&str; 5] = [
        "clamp",
        "prescribed_rotation",
        "prismatic_joint",
        "revolute_joint",
        "spherical_joint",
    ];
    const LEVELS: [Level; 4] = [
        Level::Smooth,
        Level::Position,
        Level::Velocity,
        Level::Static,
    ];

    fn build_example(type_name: &str, seed: u64) -> Box<dyn Element> {
        let kind = element_kinds()
            .iter()
            .find(|k| k.type_name == type_name)
            .unwrap_or_else(|| panic!("{type_name} is not registered"));
        let nodes = random_nodes(kind.example_nodes, &mut Rng::new(seed));
        let def = ElementDef {
            name: format!("example_{type_name}"),
            type_name: type_name.into(),
            nodes: nodes.iter().map(|n| n.name.clone()).collect(),
            parameters: (kind.example)(),
        };
        (kind.build)(&def, &BuildCx::new(&nodes)).unwrap()
    }

    #[test]
    fn registered_examples_build_on_random_nodes_and_pass_fd_checks() {
        for type_name in JOINT_TYPES {
            let kinds = element_kinds()
                .iter()
                .find(|k| k.type_name == type_name)
                .unwrap()
                .example_nodes;
            for seed in 1..=3 {
                let e = build_example(type_name, seed);
                assert_eq!(e.type_name(), type_name);
                assert_eq!(e.mass(), 0.0);
                assert_eq!(e.levels(), Levels::ALL);
                for level in LEVELS {
                    let m = e.n_mult(level);
                    let fx = LocalFixture::random(kinds, m, m, 0.3, &mut Rng::new(seed + 10));
                    let r = check_hessian(e.as_ref(), &test_cx(level), &fx, 1e-6).unwrap();
                    // Tolerance: see FD_TOL (central differences, ε = 1e-6).
                    assert!(
                        r.relative_error() < FD_TOL,
                        "{type_name} {level}: {:e}",
                        r.relative_error()
                    );
                }
            }
        }
    }

    #[test]
    fn outputs_fill_every_declared_channel() {
        for type_name in JOINT_TYPES {
            let mut e = build_example(type_name, 5);
            let kinds = element_kinds()
                .iter()
                .find(|k| k.type_name == type_name)
                .unwrap()
                .example_nodes;
            let m = e.n_mult(Level::Smooth);
            let fx = LocalFixture::random(kinds, m, m, 0.3, &mut Rng::new(3));
            let cx = test_cx(Level::Velocity);
            let (nodes, tangents) = fx.states(&cx, &fx.incr);
            let s = LocalState {
                kinds: &fx.kinds,
                nodes: &nodes,
                prev: &fx.prev,
                smooth: &fx.smooth,
                rot_tangent: &tangents,
                incr: &fx.incr,
                mult: &fx.mult,
                mult_smooth: &fx.mult_smooth,
            };
            e.level_converged(&cx, &s);
            let specs = e.outputs();
            let len: usize = specs.iter().map(|o| o.len).sum();
            let mut out = vec![f64::NAN; len];
            let os = OutputState {
                t: 0.0,
                nodes: &nodes,
                mult_smooth: &fx.mult_smooth,
                mult_position: &fx.mult,
                mult_velocity: &fx.mult,
                k: [1.3, 1.7, 2.3],
                h: 1e-2,
                gravity: Vector3::zeros(),
            };
            e.write_outputs(&os, &mut out);
            assert!(out.iter().all(|v| v.is_finite()), "{type_name}: {out:?}");
            let names: Vec<_> = specs.iter().map(|o| o.name).collect();
            assert!(names.contains(&"violation") && names.contains(&"reaction_smooth"));
            assert_eq!(out[0], 1.3 * fx.mult_smooth[0]);
        }
    }

    #[test]
    fn spherical_reaction_force_and_moment_about_node_2() {
        let nodes = random_nodes(&[NodeKind::Frame; 2], &mut Rng::new(8));
        let anchor = Vector3::new(0.3, -0.5, 0.2);
        let j = SphericalJoint::new(&nodes, NodeId(0), NodeId(1), anchor).unwrap();
        let q = states(&nodes);
        let lam = [0.4, -1.1, 0.7];
        let os = OutputState {
            t: 0.0,
            nodes: &q,
            mult_smooth: &lam,
            mult_position: &[0.0; 3],
            mult_velocity: &[0.0; 3],
            k: [2.0, 1.0, 1.0],
            h: 1e-2,
            gravity: Vector3::zeros(),
        };
        let specs = j.outputs();
        let mut out = vec![0.0; specs.iter().map(|o| o.len).sum()];
        j.write_outputs(&os, &mut out);
        // g = p₁ − p₂: the force on node 2 is −k_s λ̃, its moment about x₂ is (anchor − x₂) × force.
        let force = -Vector3::from(lam) * 2.0;
        let moment = (anchor - q[1].x).cross(&force);
        assert!((Vector3::from_column_slice(&out[9..12]) - force).amax() < 1e-14);
        assert!((Vector3::from_column_slice(&out[12..15]) - moment).amax() < 1e-14);
        // Initial configuration: no violation.
        assert!(out[15].abs() < 1e-14);
    }

    /// Independent hand formulas for two point nodes (`g = x₁ − x₂`, `g_q = [I, −I]`, no
    /// curvature): pins the signs and factors of every level.
    #[test]
    fn point_spherical_joint_residuals_match_hand_formulas() {
        let kinds = [NodeKind::Point; 2];
        let mut rng = Rng::new(21);
        // Two point nodes must coincide initially; the fixture then moves them apart.
        let mut nodes = random_nodes(&kinds, &mut rng);
        nodes[1].initial.x = nodes[0].initial.x;
        let j = SphericalJoint::new(&nodes, NodeId(0), NodeId(1), nodes[1].initial.x).unwrap();
        let fx = LocalFixture::random(&kinds, 3, 3, 0.3, &mut rng);
        for level in LEVELS {
            let cx = test_cx(level);
            let (r, _) = eval_local(&j, &cx, &fx, &fx.incr, &fx.mult).unwrap();
            let (q, _) = fx.states(&cx, &fx.incr);
            let mu = Vector3::from_column_slice(&fx.mult);
            let (g, gdot) = (q[0].x - q[1].x, q[0].v - q[1].v);
            let (node_force, mult_row) = match level {
                Level::Smooth | Level::Velocity => (mu * cx.k - gdot * cx.p, -gdot * cx.k),
                Level::Position | Level::Static => (mu * cx.k - g * cx.p, -g * cx.k),
                Level::Custom => unreachable!("joints take no part in custom stages"),
            };
            let mut expect = DVector::zeros(9);
            expect.fixed_rows_mut::<3>(0).copy_from(&-node_force);
            expect.fixed_rows_mut::<3>(3).copy_from(&node_force);
            expect.fixed_rows_mut::<3>(6).copy_from(&mult_row);
            // Constant g_q: the k_s λ̃ correction (g_q(q) − g_q(q̃)) vanishes. Round-off 1e-14.
            assert!((r - expect).amax() < 1e-14, "{level}");
        }
    }

    /// A test constraint on any nodes: `rows` copies of `(x₁ − x₀) · (x₃ − x₂)` (point or
    /// frame nodes; with fewer than four nodes the indices wrap).
    #[derive(Clone, Debug)]
    struct Crossing {
        nodes: Vec<NodeId>,
        kinds: Vec<NodeKind>,
        rows: usize,
    }

    impl Crossing {
        fn new(kinds: &[NodeKind], rows: usize) -> Self {
            Self {
                nodes: (0..kinds.len() as u32).map(NodeId).collect(),
                kinds: kinds.to_vec(),
                rows,
            }
        }
    }

    impl BilateralConstraint for Crossing {
        fn type_name(&self) -> &'static str {
            "crossing"
        }
        fn nodes(&self) -> &[NodeId] {
            &self.nodes
        }
        fn node_kinds(&self) -> &[NodeKind] {
            &self.kinds
        }
        fn n_constraints(&self) -> usize {
            self.rows
        }
        fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics) {
            let k = self.kinds.len();
            let d = |i: usize, j: usize| KinVec::position(j % k) - KinVec::position(i % k);
            let s = cx.dot(&d(0, 1), &d(2, 3));
            for j in 0..self.rows {
                out.set_row(j, &(s.clone() * (j + 1) as f64));
            }
        }
    }

    #[test]
    fn four_point_nodes_fit_and_pass_fd_checks() {
        let kinds = [NodeKind::Point; 4];
        let j = BilateralJoint::from_constraint(Crossing::new(&kinds, 2)).unwrap();
        assert_eq!(j.layout().n(), MAX_DOFS);
        let q = states(&random_nodes(&kinds, &mut Rng::new(3)));
        let r = check_kinematics(j.constraint(), &q, 0.0, 1e-6);
        assert!(r.max() < FD_TOL, "{r:?}");
        for level in LEVELS {
            let fx = LocalFixture::random(&kinds, 2, 2, 0.3, &mut Rng::new(5));
            let r = check_hessian(&j, &test_cx(level), &fx, 1e-6).unwrap();
            assert!(
                r.relative_error() < FD_TOL,
                "{level}: {:e}",
                r.relative_error()
            );
        }
    }

    #[test]
    fn constraints_exceeding_the_storage_are_rejected_at_construction() {
        let param = |r: Result<BilateralJoint<Crossing>, BuildError>| match r {
            Err(BuildError::InvalidParameter { parameter, .. }) => parameter,
            other => panic!("expected a rejection, got {other:?}"),
        };
        // Three frame nodes: 18 unknowns.
        let c = Crossing::new(&[NodeKind::Frame; 3], 1);
        assert_eq!(param(BilateralJoint::from_constraint(c)), "nodes");
        // Five point nodes: 15 unknowns, 5 nodes.
        let c = Crossing::new(&[NodeKind::Point; 5], 1);
        assert_eq!(param(BilateralJoint::from_constraint(c)), "nodes");
        // Seven rows.
        let c = Crossing::new(&[NodeKind::Frame; 2], MAX_ROWS + 1);
        assert_eq!(param(BilateralJoint::from_constraint(c)), "constraints");
        // node_kinds() and nodes() disagree.
        let mut c = Crossing::new(&[NodeKind::Frame; 2], 1);
        c.nodes.pop();
        assert_eq!(param(BilateralJoint::from_constraint(c)), "nodes");
        // At the limits: two frame nodes, six rows.
        let c = Crossing::new(&[NodeKind::Frame; 2], MAX_ROWS);
        assert!(BilateralJoint::from_constraint(c).is_ok());
    }

    #[test]
    fn kinvec_merges_terms_per_node() {
        let d = Vector3::new(0.1, -0.4, 0.3);
        let a = KinVec::body_point(0, d) + KinVec::position(1) * 2.0;
        let b = KinVec::position(1) * 2.0 + KinVec::body(0, d) + KinVec::position(0);
        assert_eq!(a, b);
        let nodes = random_nodes(&[NodeKind::Frame; 2], &mut Rng::new(2));
        let q = states(&nodes);
        let layout = Layout::new(&[NodeKind::Frame; 2]);
        let cx = KinCx::new(&q, 0.0, &layout);
        let zero = a - b;
        assert_eq!(cx.value(&zero), Vector3::zeros());
        assert_eq!(cx.jacobian(&zero), VectorJacobian::zeros());
        let expect = q[0].x + q[0].r * d + q[1].x * 2.0;
        assert!((cx.value(&a) - expect).amax() < 1e-15);
        // First-order evaluation: same value and gradient, no second derivatives.
        let (full, first) = (cx.dot(&a, &a), cx.first_order().dot(&a, &a));
        assert_eq!((full.value, full.grad), (first.value, first.grad));
        assert!(full.hess.amax() > 0.1 && first.hess == LocalMatrix::zeros());
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn kinvec_rejects_nodes_beyond_the_storage() {
        let _ = KinVec::position(MAX_NODES);
    }

    #[test]
    #[should_panic(expected = "point node")]
    fn body_vector_on_a_point_node_panics() {
        let q = states(&random_nodes(&[NodeKind::Point; 2], &mut Rng::new(2)));
        let layout = Layout::new(&[NodeKind::Point; 2]);
        let _ = KinCx::new(&q, 0.0, &layout).value(&KinVec::body(1, Vector3::x()));
    }

    /// Newton on a joint alone plus a unit mass matrix `M = I` on its nodes: position level
    /// from a configuration 0.1 off the manifold, then the (linear) velocity level. Checks that
    /// the residual and Hessian drive `g` and `g_q v + g_t` to round-off, quadratically.
    #[test]
    fn newton_with_unit_mass_reaches_the_constraint_manifold() {
        for type_name in JOINT_TYPES {
            let kind = element_kinds()
                .iter()
                .find(|k| k.type_name == type_name)
                .unwrap();
            let kinds = kind.example_nodes;
            let e = build_example(type_name, 4);
            let m = e.n_mult(Level::Position);
            let mut rng = Rng::new(4);
            let defs = random_nodes(kinds, &mut rng);
            let mut fx = LocalFixture::random(kinds, m, m, 0.3, &mut Rng::new(9));
            fx.smooth = states(&defs);
            for s in &mut fx.smooth {
                s.x += rng.vec3(0.1);
                s.r = lie::perturb(&s.r, &rng.vec3(0.1));
            }
            fx.mult_smooth = vec![0.0; m];
            let n: usize = kinds.iter().map(|k| k.ndof()).sum();
            let solve = |level: Level, fx: &mut LocalFixture| -> Vec<f64> {
                let cx = test_cx(level);
                let mut incr = vec![Vector6::zeros(); kinds.len()];
                let mut mult = vec![0.0; m];
                let mut history = Vec::new();
                for _ in 0..12 {
                    let (mut r, mut h) = eval_local(e.as_ref(), &cx, fx, &incr, &mult).unwrap();
                    let mut o = 0;
                    for (i, k) in kinds.iter().enumerate() {
                        for d in 0..k.ndof() {
                            r[o + d] += incr[i][d];
                            h[(o + d, o + d)] += 1.0;
                        }
                        o += k.ndof();
                    }
                    // Multiplier rows are −k g (position) or −k ġ (velocity).
                    history.push(r.rows(n, m).norm() / cx.k);
                    if r.norm() < 1e-13 {
                        break;
                    }
                    let delta = h.lu().solve(&(-&r)).unwrap();
                    let mut o = 0;
                    for (i, k) in kinds.iter().enumerate() {
                        for d in 0..k.ndof() {
                            incr[i][d] += delta[o + d];
                        }
                        o += k.ndof();
                    }
                    for j in 0..m {
                        mult[j] += delta[n + j];
                    }
                }
                // Hand the corrected configuration to the next level.
                let (q, _) = fx.states(&cx, &incr);
                if level == Level::Position {
                    fx.smooth = q;
                }
                history
            };
            let hp = solve(Level::Position, &mut fx);
            let hv = solve(Level::Velocity, &mut fx);
            let sci = |h: &[f64]| h.iter().map(|x| format!("{x:.1e}")).collect::<Vec<_>>();
            eprintln!("{type_name}: |g| {:?}, |ġ| {:?}", sci(&hp), sci(&hv));
            // Round-off of O(1) kinematics: 1e-12; quadratic convergence: ≤ 6 iterations.
            assert!(
                *hp.last().unwrap() < 1e-12 && hp.len() <= 7,
                "{type_name}: {hp:?}"
            );
            // Linear in W: exact after one solve.
            assert!(
                *hv.last().unwrap() < 1e-12 && hv.len() <= 2,
                "{type_name}: {hv:?}"
            );
        }
    }
}
