//! Generic bilateral constraints: a joint supplies its **kinematics only**, and
//! the stage assembly ([`crate::stage`]) turns them into exact residuals and Hessians at
//! every stage (spec `nsga.md` §§4–6 and the bilateral-joint row of the table in §11.2).
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
//! ...). `BilateralJoint::from_constraint` (`saltus-elements`) rejects a constraint that does not
//! fit ([`BuildError`](crate::BuildError)). [`KinVec`], [`KinCx`] and [`Scalar`] never allocate, so an `evaluate` built
//! from them is allocation-free.
//!
//! Evaluations whose second derivatives are not used are first-order only
//! ([`KinCx::needs_hessians`] is `false`): the velocity level (configuration frozen) and the
//! `g_q(q̃)` the position and velocity levels need at the smooth configuration `q̃`. The helpers
//! then skip the second derivatives, and a hand-written `evaluate` may skip its `H_j` too.
//!
//! # Stages
//!
//! The rows a constraint contributes to each stage (augmented Lagrangian at velocity level for
//! the smooth motion, at position level for the correction, impulses for the velocity jump;
//! `m` always-active multipliers at every stage, exact Hessians) are formed in one place, the
//! stage assembly ([`crate::stage`], table in its `constraint` part); the constraint itself
//! never sees a stage.
//!
//! # Example: a rigid rod between two nodes
//!
//! ```
//! use nalgebra::Vector3;
//! use saltus_core::{Model, NodeDef, NodeId, NodeKind};
//! use saltus_core::constraint::{
//!     check_kinematics, BilateralConstraint, KinCx, KinVec, Kinematics, Layout,
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
//! let mut q = [model.nodes()[0].initial, model.nodes()[1].initial];
//! let layout = Layout::new(rod.node_kinds());
//! assert_eq!(KinCx::new(&q, 0.0, &layout).kinematics(&rod).g()[0], 0.0);
//! q[1].x = Vector3::new(0.6, 0.7, 0.2);
//! q[1].v = Vector3::new(0.3, -0.1, 0.5);
//! assert!(check_kinematics(&rod, &q, 0.0, 1e-6).max() < 1e-8);
//! ```
//!
//! `saltus_elements::joints::BilateralJoint::from_constraint(rod)` makes an element of it (with
//! reaction outputs) to add to a [`Model`](crate::Model).
//!
//! A body-fixed point `x_i + R_i d` is `KinVec::body_point(i, d)`, a body-fixed direction
//! `R_i a` is `KinVec::body(i, a)`, a fixed vector is `KinVec::constant(c)`. Rheonomic joints add
//! their explicit time dependence to `g` ([`Kinematics::add_value`]) and `g_t`
//! ([`Kinematics::add_g_t`]). To make the type available in model files, register a build
//! function with `saltus_core::register_element!` (see the joints of `saltus-elements`). Check a new
//! joint with [`check_kinematics`] (first and second derivatives and `g_t` against finite
//! differences) and [`crate::fd::check_hessian`] (every stage).

use crate::element::OutputSpec;
use crate::node::{NodeId, NodeKind};
use nalgebra::{Const, Dyn, MatrixView, MatrixViewMut, SMatrix, SVector, U1};
use std::fmt;

mod algebra;
pub(crate) mod kinematics;

pub use algebra::{KinCx, KinVec, Layout, Scalar};
pub use kinematics::{check_kinematics, Kinematics, KinematicsCheck};

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
/// example; `saltus_elements::joints::BilateralJoint` makes an [`Element`](crate::Element) of it, or
/// any element returning it from [`Element::as_constraint`](crate::Element::as_constraint).
///
/// Size limits: at most [`MAX_NODES`] nodes, [`MAX_DOFS`] node unknowns and [`MAX_ROWS`] rows
/// (checked by `BilateralJoint::from_constraint`).
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
    /// A step converged at `cx` (every step, recorded or not): keep what the outputs need
    /// across steps (e.g. the turns of an unwrapped angle). Default: nothing.
    fn commit(&mut self, _cx: &KinCx<'_>) {}
}

/// `scale · src` as a padded row vector (e.g. the physical multipliers `k λ`).
///
/// # Panics
///
/// If `src.len() > MAX_ROWS`.
pub fn padded_rows(src: &[f64], scale: f64) -> RowVector {
    assert!(src.len() <= MAX_ROWS, "padded_rows: {} rows", src.len());
    let mut v = RowVector::zeros();
    for (d, s) in v.iter_mut().zip(src) {
        *d = scale * s;
    }
    v
}
