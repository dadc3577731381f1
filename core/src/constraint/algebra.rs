//! Derivative algebra of constraint kinematics: node layout, body-fixed vectors ([`KinVec`]),
//! scalars with exact first and second derivatives ([`Scalar`]) and the evaluation context
//! ([`KinCx`]).

use super::*;
use crate::lie;
use crate::node::{NodeKind, NodeState};
use nalgebra::{Matrix3, Vector3};
use std::ops::{Add, Mul, Neg, Sub};

/// Offsets of the node unknowns in an element's local vector. Fixed-size (no allocation): at
/// most [`MAX_NODES`] nodes are stored; a layout of more nodes does not [fit](Layout::fits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    kinds: [NodeKind; MAX_NODES],
    offsets: [usize; MAX_NODES],
    /// Number of nodes given to [`Layout::new`] (may exceed [`MAX_NODES`]).
    nodes: usize,
    pub(crate) n: usize,
}

impl Layout {
    /// Layout of nodes of the given kinds (frame: 6 unknowns, point: 3).
    pub fn new(kinds: &[NodeKind]) -> Self {
        let mut layout = Self {
            kinds: [NodeKind::Point; MAX_NODES],
            offsets: [0; MAX_NODES],
            nodes: kinds.len(),
            n: 0,
        };
        for (i, k) in kinds.iter().enumerate() {
            if i < MAX_NODES {
                layout.kinds[i] = *k;
                layout.offsets[i] = layout.n;
            }
            layout.n += k.ndof();
        }
        layout
    }
    /// Number of node unknowns `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of stored nodes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.nodes.min(MAX_NODES)
    }
    /// Node kinds in local order.
    #[inline]
    pub fn kinds(&self) -> &[NodeKind] {
        &self.kinds[..self.len()]
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
        self.nodes <= MAX_NODES && self.n <= MAX_DOFS
    }
    /// Local velocity vector `[ẋ; Ω]` (frame) / `[ẋ]` (point) per node.
    ///
    /// # Panics
    ///
    /// If the layout does not [fit](Layout::fits).
    pub fn velocity(&self, nodes: &[NodeState]) -> LocalVector {
        let mut v = LocalVector::zeros();
        for (i, s) in nodes.iter().enumerate().take(self.len()) {
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
        for i in 0..self.len() {
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
#[derive(Clone, Copy, Debug, Default)]
pub struct KinVec {
    constant: Vector3<f64>,
    /// `α_i`: coefficient of `x_i`.
    position: [f64; MAX_NODES],
    /// `a_i` of the body term `R_i a_i`.
    body: [Vector3<f64>; MAX_NODES],
    /// Whether node `i` has a body term (even a zero one: it must then be a frame node).
    has_body: [bool; MAX_NODES],
    /// One past the highest local node with a term (0: a constant): the evaluations visit
    /// nodes `0..nodes` only.
    nodes: usize,
}

/// Equal terms (the node count, bookkeeping of the evaluations, is not compared).
impl PartialEq for KinVec {
    fn eq(&self, other: &Self) -> bool {
        self.constant == other.constant
            && self.position == other.position
            && self.body == other.body
            && self.has_body == other.has_body
    }
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
        u.nodes = node + 1;
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
        u.nodes = node + 1;
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
        for i in 0..rhs.nodes {
            self.position[i] += rhs.position[i];
            self.body[i] += rhs.body[i];
            self.has_body[i] |= rhs.has_body[i];
        }
        self.nodes = self.nodes.max(rhs.nodes);
        self
    }
}

impl Mul<f64> for KinVec {
    type Output = KinVec;
    #[inline]
    fn mul(mut self, s: f64) -> KinVec {
        self.constant *= s;
        for i in 0..self.nodes {
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
        Self::with_order(nodes, t, layout, true)
    }

    /// [`KinCx::new`], first-order ([`KinCx::first_order`]) unless `hessians`: built in place.
    pub(crate) fn with_order(
        nodes: &'a [NodeState],
        t: f64,
        layout: &'a Layout,
        hessians: bool,
    ) -> Self {
        assert!(
            nodes.len() >= layout.len(),
            "KinCx: {} node states for {} nodes",
            nodes.len(),
            layout.len()
        );
        assert!(
            layout.fits(),
            "KinCx: {} nodes with {} unknowns exceed the limits ({MAX_NODES} nodes, {MAX_DOFS} unknowns)",
            layout.len(),
            layout.n
        );
        let mut rot = [Matrix3::identity(); MAX_NODES];
        for (i, r) in rot.iter_mut().enumerate().take(layout.len()) {
            if layout.is_frame(i) {
                *r = nodes[i].r.to_rotation_matrix().into_inner();
            }
        }
        Self {
            nodes,
            t,
            layout,
            rot,
            hessians,
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
            node < self.layout.len(),
            "KinVec term on local node {node}, but the constraint has {} nodes",
            self.layout.len()
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
        for i in 0..u.nodes {
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

    /// Visit the nonzero `3 × 3` column blocks of `∂u/∂q`: `f(first column, block)`, in node
    /// order (no storage: the first-order paths call this for every row).
    #[inline(always)]
    pub(crate) fn for_blocks(&self, u: &KinVec, mut f: impl FnMut(usize, &Matrix3<f64>)) {
        for i in 0..u.nodes {
            let coef = u.position[i];
            if coef != 0.0 {
                f(self.offset(i), &Matrix3::from_diagonal_element(coef));
            }
            if u.has_body[i] {
                // δ(R a) = R hat(δΘ) a = −R hat(a) δΘ.
                f(
                    self.offset(i) + 3,
                    &-(self.rotation(i) * lie::hat(&u.body[i])),
                );
            }
        }
    }

    /// `grad += (∂u/∂q)ᵀ w`: `α_i w` on the translation of node `i` and `a_i × (R_iᵀ w)` on its
    /// rotation (the transpose of the block `−R_i hat(a_i)` applied to `w`, without forming
    /// it: the first-order paths call this for every scalar row).
    #[inline(always)]
    fn add_gradient(&self, u: &KinVec, w: &Vector3<f64>, grad: &mut LocalVector) {
        for i in 0..u.nodes {
            let coef = u.position[i];
            if coef != 0.0 {
                add_rows(grad, self.offset(i), &(w * coef));
            }
            if u.has_body[i] {
                let g = u.body[i].cross(&self.rotation(i).tr_mul(w));
                add_rows(grad, self.offset(i) + 3, &g);
            }
        }
    }

    /// The nonzero `3 × 3` column blocks of `∂u/∂q` collected (see [`KinCx::for_blocks`]).
    fn blocks(&self, u: &KinVec) -> Blocks {
        let mut out = Blocks {
            at: [0; 2 * MAX_NODES],
            block: [Matrix3::zeros(); 2 * MAX_NODES],
            len: 0,
        };
        self.for_blocks(u, |o, b| {
            out.at[out.len] = o;
            out.block[out.len] = *b;
            out.len += 1;
        });
        out
    }

    /// Jacobian `∂u/∂q` (`3 × n`, padded).
    pub fn jacobian(&self, u: &KinVec) -> VectorJacobian {
        let mut j = VectorJacobian::zeros();
        self.for_blocks(u, |o, blk| j.fixed_columns_mut::<3>(o).copy_from(blk));
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
        for i in 0..u.nodes {
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
        let mut s = Scalar::constant(0.0);
        s.value = self.dot_into(u, v, &mut s.grad, Some(&mut s.hess));
        s
    }

    /// `u · v`, its gradient added to `grad` and (with [`KinCx::needs_hessians`] and `hess`)
    /// its second derivative added to `hess`: [`KinCx::dot`] without the intermediate
    /// [`Scalar`].
    pub(crate) fn dot_into(
        &self,
        u: &KinVec,
        v: &KinVec,
        grad: &mut LocalVector,
        hess: Option<&mut LocalMatrix>,
    ) -> f64 {
        let (uv, vv) = (self.value(u), self.value(v));
        // ∂(u·v) = Juᵀ v + Jvᵀ u.
        self.add_gradient(u, &vv, grad);
        self.add_gradient(v, &uv, grad);
        if let Some(hess) = hess.filter(|_| self.hessians) {
            self.add_dot_hessian(u, v, &uv, &vv, hess);
        }
        uv.dot(&vv)
    }

    /// The second derivative of `u · v` (values `uv`, `vv`) added to `hess`: `Juᵀ Jv + Jvᵀ Ju`
    /// block by block, plus the curvatures of both factors. Out of line: the first-order
    /// paths must not pay for its block storage.
    #[inline(never)]
    fn add_dot_hessian(
        &self,
        u: &KinVec,
        v: &KinVec,
        uv: &Vector3<f64>,
        vv: &Vector3<f64>,
        hess: &mut LocalMatrix,
    ) {
        let (bu, bv) = (self.blocks(u), self.blocks(v));
        for (oa, a) in bu.iter() {
            for (ob, b) in bv.iter() {
                let ab = a.tr_mul(b);
                add_block(hess, oa, ob, &ab);
                add_block(hess, ob, oa, &ab.transpose());
            }
        }
        self.add_curvature(u, vv, hess);
        self.add_curvature(v, uv, hess);
    }

    /// The scalar `c · u` for a fixed inertial direction `c`.
    pub fn component(&self, u: &KinVec, c: &Vector3<f64>) -> Scalar {
        let mut s = Scalar::constant(self.value(u).dot(c));
        self.add_gradient(u, c, &mut s.grad);
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
