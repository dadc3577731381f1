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
//! model.add_element("rod", BilateralJoint::from_constraint(rod)).unwrap();
//! ```
//!
//! A body-fixed point `x_i + R_i d` is `KinVec::body_point(i, d)`, a body-fixed direction
//! `R_i a` is `KinVec::body(i, a)`, a fixed vector is `KinVec::constant(c)`. Rheonomic joints add
//! their explicit time dependence to `g` ([`Kinematics::add_value`]) and `g_t`
//! ([`Kinematics::add_g_t`]). To make the type available in model files, register a build
//! function with `saltus_core::register_element!` (see the joints of this module). Check a new
//! joint with [`check_kinematics`] (first and second derivatives and `g_t` against finite
//! differences) and `saltus_core::fd::check_hessian` (the four levels).

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut, DVector, Matrix3, Vector3};
use saltus_core::element::{
    Element, ElementError, Level, Levels, LocalState, LocalSystem, OutputSpec, OutputState, StepCx,
};
use saltus_core::lie;
use saltus_core::node::{NodeId, NodeKind, NodeState};
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};

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
pub trait BilateralConstraint: Send + Sync + fmt::Debug {
    /// Registered type name, e.g. `"revolute_joint"`.
    fn type_name(&self) -> &'static str;
    /// The element's nodes in local order.
    fn nodes(&self) -> &[NodeId];
    /// The kinds of the element's nodes (fixes the local unknown layout).
    fn node_kinds(&self) -> &[NodeKind];
    /// Number `m` of scalar constraints (fixed).
    fn n_constraints(&self) -> usize;
    /// Fill `out` (zeroed, `m` rows, `n` node unknowns) with `g`, `g_q`, the per-row second
    /// derivatives `H_j`, `g_t` and `∂g_t/∂q` at the configuration and time of `cx`.
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
    /// Local velocity vector `[ẋ; Ω]` (frame) / `[ẋ]` (point) per node.
    pub fn velocity(&self, nodes: &[NodeState]) -> DVector<f64> {
        let mut v = DVector::zeros(self.n);
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
    pub fn apply_tangent(&self, a: &mut DMatrix<f64>, tangents: &[Matrix3<f64>]) {
        for i in 0..self.kinds.len() {
            if !self.is_frame(i) {
                continue;
            }
            let t = &tangents[i];
            if *t == Matrix3::identity() {
                continue;
            }
            let o = self.offsets[i] + 3;
            let block = a.columns(o, 3) * t;
            a.columns_mut(o, 3).copy_from(&block);
        }
    }
}

/// An inertial vector that depends on the configuration linearly through node positions and
/// body-fixed vectors: `c + Σ α_i x_i + Σ R_i a_i` (`R_i a_i` only on frame nodes).
///
/// Build it from the constructors and `+`, `−`, unary `−` and `* f64`; evaluate it with a
/// [`KinCx`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KinVec {
    constant: Vector3<f64>,
    terms: Vec<KinTerm>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum KinTerm {
    /// `coef · x_node`.
    Position { node: usize, coef: f64 },
    /// `R_node · local`.
    Body { node: usize, local: Vector3<f64> },
}

impl KinVec {
    /// A fixed inertial vector `c`.
    pub fn constant(c: Vector3<f64>) -> Self {
        Self {
            constant: c,
            terms: Vec::new(),
        }
    }
    /// The position `x_i` of local node `node`.
    pub fn position(node: usize) -> Self {
        Self {
            constant: Vector3::zeros(),
            terms: vec![KinTerm::Position { node, coef: 1.0 }],
        }
    }
    /// The body-fixed direction `R_i a` of local frame node `node` (`a` in the body frame).
    pub fn body(node: usize, local: Vector3<f64>) -> Self {
        Self {
            constant: Vector3::zeros(),
            terms: vec![KinTerm::Body { node, local }],
        }
    }
    /// The body-fixed point `x_i + R_i d` of local frame node `node` (`d` in the body frame).
    pub fn body_point(node: usize, offset: Vector3<f64>) -> Self {
        Self::position(node) + Self::body(node, offset)
    }
}

impl Add for KinVec {
    type Output = KinVec;
    fn add(mut self, rhs: KinVec) -> KinVec {
        self.constant += rhs.constant;
        self.terms.extend(rhs.terms);
        self
    }
}

impl Mul<f64> for KinVec {
    type Output = KinVec;
    fn mul(mut self, s: f64) -> KinVec {
        self.constant *= s;
        for t in &mut self.terms {
            match t {
                KinTerm::Position { coef, .. } => *coef *= s,
                KinTerm::Body { local, .. } => *local *= s,
            }
        }
        self
    }
}

impl Neg for KinVec {
    type Output = KinVec;
    fn neg(self) -> KinVec {
        self * -1.0
    }
}

impl Sub for KinVec {
    type Output = KinVec;
    fn sub(self, rhs: KinVec) -> KinVec {
        self + (-rhs)
    }
}

/// A scalar function of the configuration with its gradient `∂s/∂q` (length `n`) and second
/// derivative `H = ∂(∂s/∂q)/∂q` (`H_ab` = derivative of gradient entry `a` under the material
/// variation `b`), all with respect to the element's local unknowns.
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    /// Value.
    pub value: f64,
    /// Gradient (length `n`).
    pub grad: DVector<f64>,
    /// Second derivative (`n × n`).
    pub hess: DMatrix<f64>,
}

impl Scalar {
    /// A configuration-independent value (zero derivatives) for `n` node unknowns.
    pub fn constant(n: usize, value: f64) -> Self {
        Self {
            value,
            grad: DVector::zeros(n),
            hess: DMatrix::zeros(n, n),
        }
    }

    /// `f(s)` given `f(s)`, `f'(s)`, `f''(s)`.
    pub fn map(&self, f: f64, df: f64, d2f: f64) -> Scalar {
        Scalar {
            value: f,
            grad: &self.grad * df,
            hess: &self.hess * df + (&self.grad * self.grad.transpose()) * d2f,
        }
    }

    /// `f(a, b)` given the value, the gradient `[f_a, f_b]` and the second derivatives
    /// `[f_aa, f_ab, f_bb]`.
    pub fn map2(a: &Scalar, b: &Scalar, f: f64, df: [f64; 2], d2f: [f64; 3]) -> Scalar {
        let gaa = &a.grad * a.grad.transpose();
        let gbb = &b.grad * b.grad.transpose();
        let gab = &a.grad * b.grad.transpose();
        let sym = &gab + gab.transpose();
        Scalar {
            value: f,
            grad: &a.grad * df[0] + &b.grad * df[1],
            hess: &a.hess * df[0] + &b.hess * df[1] + gaa * d2f[0] + sym * d2f[1] + gbb * d2f[2],
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
    fn sub(self, rhs: Scalar) -> Scalar {
        self + (-rhs)
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
#[derive(Clone, Copy, Debug)]
pub struct KinCx<'a> {
    nodes: &'a [NodeState],
    t: f64,
    layout: &'a Layout,
}

impl<'a> KinCx<'a> {
    /// Context at the node states `nodes` (local order) and time `t` \[s\].
    pub fn new(nodes: &'a [NodeState], t: f64, layout: &'a Layout) -> Self {
        assert!(
            nodes.len() >= layout.kinds.len(),
            "KinCx: {} node states for {} nodes",
            nodes.len(),
            layout.kinds.len()
        );
        Self { nodes, t, layout }
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

    fn rotation(&self, node: usize) -> Matrix3<f64> {
        assert!(
            self.layout.is_frame(node),
            "body-fixed vector on local node {node}, which is a point node"
        );
        self.nodes[node].r.to_rotation_matrix().into_inner()
    }

    /// Value of `u` [inertial frame].
    pub fn value(&self, u: &KinVec) -> Vector3<f64> {
        let mut out = u.constant;
        for t in &u.terms {
            match *t {
                KinTerm::Position { node, coef } => out += self.nodes[node].x * coef,
                KinTerm::Body { node, local } => out += self.rotation(node) * local,
            }
        }
        out
    }

    /// Jacobian `∂u/∂q` (`3 × n`).
    pub fn jacobian(&self, u: &KinVec) -> DMatrix<f64> {
        let mut j = DMatrix::zeros(3, self.n());
        for t in &u.terms {
            match *t {
                KinTerm::Position { node, coef } => {
                    let o = self.layout.offset(node);
                    let mut b = j.fixed_view_mut::<3, 3>(0, o);
                    b += Matrix3::identity() * coef;
                }
                KinTerm::Body { node, local } => {
                    // δ(R a) = R hat(δΘ) a = −R hat(a) δΘ.
                    let o = self.layout.offset(node) + 3;
                    let mut b = j.fixed_view_mut::<3, 3>(0, o);
                    b -= self.rotation(node) * lie::hat(&local);
                }
            }
        }
        j
    }

    /// Curvature of `u` against a fixed vector `c`: the `n × n` matrix with entry `(a, b)` equal
    /// to `c · ∂(∂u/∂q_a)/∂q_b`. Only the rotational diagonal blocks are nonzero:
    /// `w aᵀ − (w·a) I` with `w = Rᵀ c` for every body vector `R a`.
    pub fn curvature(&self, u: &KinVec, c: &Vector3<f64>) -> DMatrix<f64> {
        let mut h = DMatrix::zeros(self.n(), self.n());
        self.add_curvature(u, c, &mut h);
        h
    }

    fn add_curvature(&self, u: &KinVec, c: &Vector3<f64>, h: &mut DMatrix<f64>) {
        for t in &u.terms {
            if let KinTerm::Body { node, local } = *t {
                let o = self.layout.offset(node) + 3;
                let w = self.rotation(node).transpose() * c;
                let mut b = h.fixed_view_mut::<3, 3>(o, o);
                b += w * local.transpose() - Matrix3::identity() * w.dot(&local);
            }
        }
    }

    /// The scalar `u · v` with exact derivatives.
    pub fn dot(&self, u: &KinVec, v: &KinVec) -> Scalar {
        let (uv, vv) = (self.value(u), self.value(v));
        let (ju, jv) = (self.jacobian(u), self.jacobian(v));
        let jtj = ju.transpose() * &jv;
        let mut hess = &jtj + jtj.transpose();
        self.add_curvature(u, &vv, &mut hess);
        self.add_curvature(v, &uv, &mut hess);
        Scalar {
            value: uv.dot(&vv),
            grad: ju.transpose() * vv + jv.transpose() * uv,
            hess,
        }
    }

    /// The scalar `c · u` for a fixed inertial direction `c`.
    pub fn component(&self, u: &KinVec, c: &Vector3<f64>) -> Scalar {
        Scalar {
            value: self.value(u).dot(c),
            grad: self.jacobian(u).transpose() * c,
            hess: self.curvature(u, c),
        }
    }

    /// Evaluate `constraint` here.
    pub fn kinematics<C: BilateralConstraint + ?Sized>(&self, constraint: &C) -> Kinematics {
        let mut k = Kinematics::zeros(constraint.n_constraints(), self.n());
        constraint.evaluate(self, &mut k);
        k
    }
}

/// Constraint kinematics at one configuration and time: `g`, `g_q`, `g_t`, `∂g_t/∂q` and the
/// per-row second derivatives `H_j = ∂(g_q)_j/∂q` (see the [module documentation](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct Kinematics {
    /// Constraint values `g` (length `m`).
    pub g: DVector<f64>,
    /// Jacobian `g_q` (`m × n`, material rotation variations).
    pub g_q: DMatrix<f64>,
    /// Explicit time derivative `g_t = ∂g/∂t` (length `m`).
    pub g_t: DVector<f64>,
    /// `∂g_t/∂q` (`m × n`; zero unless `g_t` depends on the configuration).
    pub g_t_q: DMatrix<f64>,
    /// `H_j` stacked side by side: `n × (m n)`, block `j` in columns `j n .. (j+1) n`.
    hess: DMatrix<f64>,
}

impl Kinematics {
    /// Zero kinematics of `m` rows and `n` node unknowns.
    pub fn zeros(m: usize, n: usize) -> Self {
        Self {
            g: DVector::zeros(m),
            g_q: DMatrix::zeros(m, n),
            g_t: DVector::zeros(m),
            g_t_q: DMatrix::zeros(m, n),
            hess: DMatrix::zeros(n, m * n),
        }
    }
    /// Number of rows `m`.
    #[inline]
    pub fn m(&self) -> usize {
        self.g.len()
    }
    /// Number of node unknowns `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.g_q.ncols()
    }
    /// Set row `j` (value, gradient, second derivative) from a scalar expression.
    pub fn set_row(&mut self, j: usize, s: &Scalar) {
        let n = self.n();
        self.g[j] = s.value;
        self.g_q.row_mut(j).copy_from(&s.grad.transpose());
        self.hess.columns_mut(j * n, n).copy_from(&s.hess);
    }
    /// Set the three rows `j0 .. j0+3` to the inertial components of `u`.
    pub fn set_vector_rows(&mut self, j0: usize, cx: &KinCx<'_>, u: &KinVec) {
        let n = self.n();
        let value = cx.value(u);
        let jac = cx.jacobian(u);
        for k in 0..3 {
            self.g[j0 + k] = value[k];
            self.g_q.row_mut(j0 + k).copy_from(&jac.row(k));
            let h = cx.curvature(u, &Vector3::ith(k, 1.0));
            self.hess.columns_mut((j0 + k) * n, n).copy_from(&h);
        }
    }
    /// Add an explicit (configuration-independent) term to `g_j`, e.g. `−θ(t)`.
    pub fn add_value(&mut self, j: usize, value: f64) {
        self.g[j] += value;
    }
    /// Add to the explicit time derivative `(g_t)_j`.
    pub fn add_g_t(&mut self, j: usize, value: f64) {
        self.g_t[j] += value;
    }
    /// Add a configuration-dependent explicit time derivative to row `j`: `s.value` to `g_t`
    /// and `s.grad` to `∂g_t/∂q` (`s.hess` is not needed).
    pub fn add_g_t_scalar(&mut self, j: usize, s: &Scalar) {
        self.g_t[j] += s.value;
        let mut row = self.g_t_q.row_mut(j);
        row += s.grad.transpose();
    }
    /// Second derivative `H_j = ∂(g_q)_j/∂q` of row `j` (`n × n`).
    pub fn row_hessian(&self, j: usize) -> DMatrixView<'_, f64> {
        let n = self.n();
        self.hess.columns(j * n, n)
    }
    /// Mutable `H_j`, for joints that write their derivatives by hand.
    pub fn row_hessian_mut(&mut self, j: usize) -> DMatrixViewMut<'_, f64> {
        let n = self.n();
        self.hess.columns_mut(j * n, n)
    }
    /// `∂(g_qᵀ μ)/∂q = Σ_j μ_j H_j` (`n × n`) for a fixed `μ ∈ R^m`.
    pub fn d_gqt_mu(&self, mu: &DVector<f64>) -> DMatrix<f64> {
        let n = self.n();
        let mut a = DMatrix::zeros(n, n);
        for (j, &mj) in mu.iter().enumerate() {
            if mj != 0.0 {
                a += self.row_hessian(j) * mj;
            }
        }
        a
    }
    /// `∂(g_q w)/∂q` (`m × n`) for a fixed local velocity `w`: row `j` is `wᵀ H_j`.
    pub fn d_gq_w(&self, w: &DVector<f64>) -> DMatrix<f64> {
        let (m, n) = (self.m(), self.n());
        let mut b = DMatrix::zeros(m, n);
        for j in 0..m {
            b.row_mut(j)
                .copy_from(&(w.transpose() * self.row_hessian(j)));
        }
        b
    }
    /// Constraint rate `ġ = g_q v + g_t` for the local velocity `v`.
    pub fn rate(&self, v: &DVector<f64>) -> DVector<f64> {
        &self.g_q * v + &self.g_t
    }
}

/// The [`Element`] made of a [`BilateralConstraint`]: `m` always-active multipliers at every
/// level, exact Hessians, and the outputs `reaction_smooth`, `position_multiplier`, `impulse`,
/// `force`/`moment` (if the constraint has a reaction node), `violation` and the constraint's
/// extra channels.
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
    /// # Panics
    ///
    /// If `constraint.node_kinds()` and `constraint.nodes()` differ in length.
    pub fn from_constraint(constraint: C) -> Self {
        let layout = Layout::new(constraint.node_kinds());
        assert_eq!(
            layout.kinds.len(),
            constraint.nodes().len(),
            "{}: node_kinds() and nodes() differ in length",
            constraint.type_name()
        );
        Self {
            constraint,
            layout,
            t_out: 0.0,
        }
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
        if kin.g.iter().chain(kin.g_q.iter()).all(|v| v.is_finite()) {
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
        let kin = self.kinematics(s.nodes, t);
        self.check(&kin)?;
        let g_q = &kin.g_q;
        let mult = DVector::from_column_slice(&s.mult[..m]);
        let (k, p) = (cx.k, cx.p);
        let mut r = DVector::zeros(n + m);
        let mut h = DMatrix::zeros(n + m, n + m);

        // Joint part of −w (g_q(q) − g_q(q̃))ᵀ k_s λ̃ (position and velocity levels, §5–6).
        let lam_s = if matches!(level, Level::Position | Level::Velocity) {
            let lam = DVector::from_column_slice(&s.mult_smooth[..m]) * cx.k_s;
            let g_q_smooth = self.kinematics(s.smooth, t).g_q;
            let fp = (g_q - g_q_smooth).transpose() * &lam;
            r.rows_mut(0, n).axpy(-cx.force_weight, &fp, 1.0);
            Some(lam)
        } else {
            None
        };

        match level {
            Level::Smooth | Level::Velocity => {
                let v = self.layout.velocity(s.nodes);
                let c = kin.rate(&v);
                let xi = &mult * k - &c * p;
                r.rows_mut(0, n).gemv_tr(-1.0, g_q, &xi, 1.0);
                r.rows_mut(n, m).axpy(-k, &c, 1.0);
                let gtg = g_q.transpose() * g_q;
                add_block(&mut h, (0, 0), p * cx.dv_dv, &gtg);
                let mut h_mn = g_q * cx.dv_dv;
                if level == Level::Smooth && cx.dq_dv != 0.0 {
                    // Configuration columns: ∂/∂q at fixed v, times dq_dv T.
                    let c_q = kin.d_gq_w(&v) + &kin.g_t_q;
                    let mut k_q = g_q.transpose() * &c_q * p - kin.d_gqt_mu(&xi);
                    self.layout.apply_tangent(&mut k_q, s.rot_tangent);
                    add_block(&mut h, (0, 0), cx.dq_dv, &k_q);
                    let mut c_qt = c_q;
                    self.layout.apply_tangent(&mut c_qt, s.rot_tangent);
                    h_mn += c_qt * cx.dq_dv;
                }
                add_block(&mut h, (n, 0), -k, &h_mn);
            }
            Level::Position | Level::Static => {
                let xi = &mult * k - &kin.g * p;
                r.rows_mut(0, n).gemv_tr(-1.0, g_q, &xi, 1.0);
                r.rows_mut(n, m).axpy(-k, &kin.g, 1.0);
                // μ = ξ + w k_s λ̃ collects both ∂(g_qᵀ ·)/∂q terms.
                let mut mu = xi;
                if let Some(lam) = &lam_s {
                    mu.axpy(cx.force_weight, lam, 1.0);
                }
                let mut k_q = g_q.transpose() * g_q * p - kin.d_gqt_mu(&mu);
                self.layout.apply_tangent(&mut k_q, s.rot_tangent);
                add_block(&mut h, (0, 0), cx.dq_dv, &k_q);
                let mut g_qt = g_q.clone();
                self.layout.apply_tangent(&mut g_qt, s.rot_tangent);
                add_block(&mut h, (n, 0), -k * cx.dq_dv, &g_qt);
            }
        }
        add_block(&mut h, (0, n), -k, &g_q.transpose());
        out.residual += &r;
        out.hessian += &h;
        Ok(())
    }

    fn has_moment(&self) -> Option<(usize, bool)> {
        self.constraint
            .reaction_node()
            .map(|i| (i, self.layout.is_frame(i)))
    }
}

/// `h[r0.., c0..] += a x`.
fn add_block(h: &mut DMatrix<f64>, at: (usize, usize), a: f64, x: &DMatrix<f64>) {
    let mut v = h.view_mut(at, x.shape());
    v += x * a;
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
            let mut lam = DVector::zeros(m);
            copy_scaled(lam.as_mut_slice(), s.mult_smooth, s.k[0]);
            let f = kin.g_q.transpose() * lam;
            let off = self.layout.offset(node);
            out[o..o + 3].copy_from_slice(f.fixed_rows::<3>(off).as_slice());
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
/// `eps²` (truncation) and `1e-16/eps` (round-off) are expected.
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
    let mut jac_err: f64 = 0.0;
    let mut hess_err: f64 = 0.0;
    let mut hess_ref: f64 = 0.0;
    for b in 0..n {
        let kp = eval(&perturbed(&layout, nodes, b, eps), t);
        let km = eval(&perturbed(&layout, nodes, b, -eps), t);
        let dg = (&kp.g - &km.g) / (2.0 * eps);
        jac_err = jac_err.max((dg - kin.g_q.column(b)).amax());
        let dgq = (&kp.g_q - &km.g_q) / (2.0 * eps);
        for j in 0..m {
            let col = kin.row_hessian(j).column(b).into_owned();
            hess_err = hess_err.max((dgq.row(j).transpose() - &col).amax());
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
        rate: rel((gdot - &rate).amax(), rate.amax()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{random_nodes, states, FD_TOL};
    use super::super::spherical::SphericalJoint;
    use super::*;
    use nalgebra::Vector6;
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
            };
            let mut expect = DVector::zeros(9);
            expect.fixed_rows_mut::<3>(0).copy_from(&-node_force);
            expect.fixed_rows_mut::<3>(3).copy_from(&node_force);
            expect.fixed_rows_mut::<3>(6).copy_from(&mult_row);
            // Constant g_q: the k_s λ̃ correction (g_q(q) − g_q(q̃)) vanishes. Round-off 1e-14.
            assert!((r - expect).amax() < 1e-14, "{level}");
        }
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
