//! Stage assembly of one element: its physics interfaces ([`crate::physics`]) turned into a
//! stage's residual and Hessian. This is the only place that knows the level table; the
//! assembler and the finite-difference harness both call [`evaluate_element`].
//!
//! A stage's node unknown `u` moves the state as `dq = ∂q/∂u · T du` (`T` the per-node rotation
//! tangent on rotational columns, identity for translations), `dv = ∂v/∂u du`,
//! `dv̇ = ∂v̇/∂u du` ([`StepCx`] `dq_dv`, `dv_dv`, `dvdot_dv`). With `w` the stage's force weight,
//! `f_base` the force at the stage's base state (the converged smooth state `(q̃, ṽ)`) when the
//! stage measures force differences, and `a` the inertia measure (`v̇` or the increment `u`):
//!
//! | term | residual | Hessian |
//! |---|---|---|
//! | inertia `M` | `M a` | `∂a/∂u · M` |
//! | inertial force `f_in` | `−w (f_in − f_in,base)` | `w (∂q/∂u · K_in T + ∂v/∂u · C_in)` |
//! | force `f` | `−w (f − f_base)` | `w (∂q/∂u · K T + ∂v/∂u · C)` |
//!
//! The NSGA levels (`nsga.md` §§4–6) are the rows of this table:
//!
//! | level | `a`, `∂a/∂u` | `w` | `f_base` | `∂q/∂u` | `∂v/∂u` |
//! |---|---|---|---|---|---|
//! | smooth (§4) | `v̇`, `(1−α_m)/(hγ(1−α_f))` | 1 | – | `hβ/γ` | 1 |
//! | position (§5) | `U`, 1 | `h²/2` | `f(q̃, ṽ)` | 1 | 0 |
//! | velocity (§6) | `W`, 1 | `h` | `f(q̃, ṽ)` | 0 | 1 |
//! | static | – | 1 | – | 1 | 0 |
//!
//! A static stage evaluates forces at rest (`v = 0`) with loads and gravity scaled by the load
//! factor. Elements that implement the raw per-level methods of [`Element`] (the escape hatch)
//! add their own contribution after the physics terms.

pub(crate) mod constraint;
mod contact;

pub(crate) use contact::couple_scaling;
pub use contact::{
    contact_level_converged, contact_warm_start, linearized_contact, LinearizedContact,
};

use crate::constraint::Kinematics;
use crate::element::{
    Element, ElementError, InertiaTerm, Level, LevelMemo, LocalState, LocalSystem, StepCx,
};
use crate::node::{NodeKind, NodeState};
use crate::physics::{Dependence, ForceTerms, NodeInertia, PhysicsState};
use nalgebra::{DMatrixViewMut, DVectorViewMut, Vector3};

/// Per-evaluation scratch of [`evaluate_element`], sized once for the largest element so that
/// evaluation never allocates. Matrices are stored contiguously with leading dimension `n`
/// (the element's node unknowns) so the assembly loops run over plain slices.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    f: Vec<f64>,
    k: Vec<f64>,
    c: Vec<f64>,
    m: Vec<f64>,
    a: Vec<f64>,
    d: Vec<f64>,
    at_rest: Vec<NodeState>,
    /// Constraint kinematics at the current and at the smooth state (boxed: ~8 kB each).
    kin: Box<Kinematics>,
    kin_s: Box<Kinematics>,
    /// Contact law block and curvatures.
    contact: Box<contact::ContactScratch>,
    /// What the last evaluation recorded for the element's `level_converged`.
    memo: LevelMemo,
}

impl Scratch {
    /// Scratch for elements with up to `max_nodes` nodes and `max_node_dofs` node unknowns.
    pub fn new(max_nodes: usize, max_node_dofs: usize) -> Self {
        let n = max_node_dofs;
        Self {
            f: vec![0.0; n],
            k: vec![0.0; n * n],
            c: vec![0.0; n * n],
            m: vec![0.0; n * n],
            a: vec![0.0; n],
            d: vec![0.0; n],
            at_rest: vec![NodeState::default(); max_nodes],
            kin: Box::default(),
            kin_s: Box::default(),
            contact: Box::default(),
            memo: LevelMemo::default(),
        }
    }

    /// Scratch sized for the elements of a model.
    pub fn for_elements(elements: &[Box<dyn Element>], kinds: &[NodeKind]) -> Self {
        let mut nodes = 0;
        let mut dofs = 0;
        for e in elements {
            nodes = nodes.max(e.nodes().len());
            dofs = dofs.max(
                e.nodes()
                    .iter()
                    .map(|id| kinds[id.index()].ndof())
                    .sum::<usize>(),
            );
        }
        Self::new(nodes, dofs)
    }

    /// What the last evaluation through this scratch recorded for the element's
    /// [`Element::level_converged`] ([`crate::element::LevelHook::Memo`]).
    pub fn memo(&self) -> LevelMemo {
        self.memo
    }

    fn fits(&self, nodes: usize, n: usize) -> bool {
        self.f.len() >= n && self.at_rest.len() >= nodes
    }

    /// The node unknowns `n` of the element viewed by `s`, with this scratch grown to them
    /// (it allocates only for an element larger than any before).
    fn fit(&mut self, s: &LocalState<'_>) -> usize {
        let n: usize = s.kinds.iter().map(|k| k.ndof()).sum();
        if !self.fits(s.nodes.len(), n) {
            *self = Scratch::new(s.nodes.len(), n);
        }
        n
    }

    /// Whether this scratch is at least as large as `other`.
    pub fn covers(&self, other: &Scratch) -> bool {
        self.fits(other.at_rest.len(), other.f.len())
    }
}

/// Whether `element` contributes to `level` (physics interfaces or raw level methods).
pub fn participates(element: &dyn Element, level: Level) -> bool {
    element.levels().contains(level)
        || element.as_force().is_some()
        || element.as_constraint().is_some()
        || element.as_contact().is_some_and(|c| c.n_mult(level) > 0)
        || (element.as_inertia().is_some() && level != Level::Static)
}

/// Add `element`'s contribution at the stage `cx` into `out` (pre-zeroed): its inertia and
/// forces through the level table of this module, then its raw level method if it has one.
pub fn evaluate_element(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut LocalSystem<'_>,
    sc: &mut Scratch,
) -> Result<(), ElementError> {
    evaluate(element, cx, s, out, sc, MatrixTerms::Exact)
}

/// [`evaluate_element`] with the iteration matrix of the first-order constraint kinematics
/// ([`MatrixTerms::FirstOrderConstraints`]): the residual and the reference are the same; the
/// matrix lacks the bilateral constraints' second-derivative terms.
pub fn evaluate_element_first_order(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut LocalSystem<'_>,
    sc: &mut Scratch,
) -> Result<(), ElementError> {
    evaluate(element, cx, s, out, sc, MatrixTerms::FirstOrderConstraints)
}

/// The signature of [`evaluate_element`] and its variants.
pub type ElementEvaluation = fn(
    &dyn Element,
    &StepCx,
    &LocalState<'_>,
    &mut LocalSystem<'_>,
    &mut Scratch,
) -> Result<(), ElementError>;

/// What an evaluation adds to `out.hessian`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixTerms {
    /// Nothing: the residual only ([`evaluate_element_residual`]).
    None,
    /// The exact Hessian of the stage residual ([`evaluate_element`]).
    Exact,
    /// The exact Hessian without the configuration derivatives of bilateral constraints'
    /// Jacobians: the `Σ_j M_j H_j` block of the constraint table ([`crate::constraint`],
    /// `nsga.md` §§4–6) and, on stages that move rates and configuration (smooth), the
    /// `∂ġ/∂q` blocks (`∂(g_q v)/∂q + ∂g_t/∂q`) are left out; every other term is exact. The
    /// Gauss–Newton matrix of the constraint rows: a Newton iteration with it converges
    /// linearly, at a rate of about `‖Σ_j M_j H_j‖` against the rest of the matrix (inertia
    /// and penalty), to the same solution.
    FirstOrderConstraints,
}

/// [`evaluate_element`] when only the residual is needed (line search, convergence checks):
/// the physics terms skip their tangents and add nothing to `out.hessian`; the residual and the
/// reference are the same as with the Hessian. A raw level method still fills its Hessian
/// (the caller ignores it).
pub fn evaluate_element_residual(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut LocalSystem<'_>,
    sc: &mut Scratch,
) -> Result<(), ElementError> {
    evaluate(element, cx, s, out, sc, MatrixTerms::None)
}

fn evaluate(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut LocalSystem<'_>,
    sc: &mut Scratch,
    terms: MatrixTerms,
) -> Result<(), ElementError> {
    let hessian = terms != MatrixTerms::None;
    sc.memo.level = None;
    let inertia = element.as_inertia();
    let force = element.as_force();
    if inertia.is_some() || force.is_some() {
        let n = sc.fit(s);
        let statics = cx.level == Level::Static;
        let nodes = if statics {
            // Static equilibrium: forces at rest.
            for (r, n) in sc.at_rest.iter_mut().zip(s.nodes) {
                *r = NodeState {
                    v: Vector3::zeros(),
                    omega: Vector3::zeros(),
                    vdot: Vector3::zeros(),
                    omegadot: Vector3::zeros(),
                    ..*n
                };
            }
            &sc.at_rest[..s.nodes.len()]
        } else {
            s.nodes
        };
        // Split borrows: `nodes` may borrow `sc.at_rest`, the terms borrow the other buffers.
        let Scratch {
            f, k, c, m, a, d, ..
        } = sc;
        let ps = PhysicsState {
            nodes,
            kinds: s.kinds,
            t: cx.t,
            load_factor: cx.load_factor,
            statics,
            gravity: cx.gravity * cx.load_factor,
            tangents: true,
            stiffness: true,
            damping: true,
        };
        let base = PhysicsState {
            nodes: s.smooth,
            tangents: false,
            stiffness: false,
            damping: false,
            ..ps
        };
        // Reference of the convergence test (spec §10): the magnitudes of the individual terms
        // (per 3-vector block), which may cancel in the element residual. A single term adds
        // nothing beyond the element residual norm the assembler takes anyway.
        let mut terms = 0;
        let mut reference = 0.0;
        if let Some(inertia) = inertia.filter(|_| cx.inertia != InertiaTerm::None) {
            reference += add_inertia(inertia, cx, s, n, out, m, a, d, hessian);
            let eval =
                |st: &PhysicsState<'_>, t: &mut ForceTerms<'_>| inertia.inertial_force(st, t);
            let dep = inertia.inertial_force_dependence();
            let cached = s.base.map(|b| b.inertial);
            reference += add_force_terms(
                eval, dep, cx, s, &ps, &base, cached, None, n, out, f, k, c, d, hessian,
            )?;
            terms += 2;
        }
        if let Some(force) = force {
            let eval = |st: &PhysicsState<'_>, t: &mut ForceTerms<'_>| force.force(st, t);
            let dep = force.dependence();
            let cached = s.base.map(|b| b.force);
            let frozen = s.base.and_then(|b| b.frozen_force);
            reference += add_force_terms(
                eval, dep, cx, s, &ps, &base, cached, frozen, n, out, f, k, c, d, hessian,
            )?;
            // A difference `f − f_base` has two terms.
            terms += if cx.force_difference { 2 } else { 1 };
        }
        if terms > 1 {
            out.reference += reference;
        }
    }
    if let Some(c) = element.as_constraint() {
        let curvature = terms == MatrixTerms::Exact;
        constraint::add_constraint_terms(
            c,
            cx,
            s,
            out,
            hessian,
            curvature,
            &mut sc.kin,
            &mut sc.kin_s,
        )?;
    }
    if let Some(c) = element.as_contact() {
        let memo = contact::add_contact_terms(&c, cx, s, out, &mut sc.contact, hessian)?;
        if let Some(memo) = memo {
            sc.memo = memo;
        }
    }
    if element.levels().contains(cx.level) {
        element.evaluate(cx, s, out)?;
    }
    Ok(())
}

/// Whether every value of `x` is finite (neither infinite nor NaN): the exponent bits of
/// each, tested without branches so that the loop vectorizes (the assemblies check every
/// element's residual, Hessian and constraint Jacobian with it).
#[inline]
pub fn all_finite(x: &[f64]) -> bool {
    const EXPONENT: u64 = 0x7ff0_0000_0000_0000;
    let mut special = 0u64;
    for v in x {
        special |= u64::from(v.to_bits() & EXPONENT == EXPONENT);
    }
    special == 0
}

/// The [`crate::BaseTerms`] of `element` for the difference stages of `cx` (its time, gravity, load
/// factor and smooth scaling `k_s`): its inertial force, applied force and constraint reaction
/// at the smooth state `s.smooth` with the smooth multipliers `s.mult_smooth`, into `out`
/// (`3n` values in that order, `n` the element's node unknowns; zeros where the element has
/// no such term). The same evaluations the difference stages make at every assembly without
/// them, so the stage results are the same bit for bit.
pub fn base_terms(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut [f64],
    sc: &mut Scratch,
) -> Result<(), ElementError> {
    let n = sc.fit(s);
    let out = &mut out[..3 * n];
    out.fill(0.0);
    let (f_inertial, rest) = out.split_at_mut(n);
    let (f_applied, reaction) = rest.split_at_mut(n);
    let base = values_only(cx, s.kinds, s.smooth);
    let Scratch { k, c, kin_s, .. } = sc;
    if let Some(inertia) = element.as_inertia() {
        inertia.inertial_force(&base, &mut force_terms(f_inertial, k, c, n))?;
    }
    if let Some(force) = element.as_force() {
        force.force(&base, &mut force_terms(f_applied, k, c, n))?;
    }
    if let Some(constraint) = element.as_constraint() {
        constraint::smooth_reaction(constraint, cx, s, reaction, kin_s);
    }
    Ok(())
}

/// The applied force `f(q)` of `element` at the current configuration `s.nodes` for a stage
/// `cx` that holds the configuration (`cx.dq_dv = 0`), into `out` (`n` values, `n` the
/// element's node unknowns): [`crate::BaseTerms::frozen_force`]. `Ok(false)` (and `out`
/// untouched) when the element has no force, its force depends on velocities, or the stage
/// moves the configuration. The same evaluation the stage makes at every assembly without it
/// (at the position and velocity levels; a force without velocity dependence gives the same
/// value at rest), so the stage results are the same bit for bit.
pub fn frozen_force(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut [f64],
    sc: &mut Scratch,
) -> Result<bool, ElementError> {
    let Some(force) = element.as_force() else {
        return Ok(false);
    };
    if cx.dq_dv != 0.0 || force.dependence().velocity {
        return Ok(false);
    }
    let n = sc.fit(s);
    let out = &mut out[..n];
    out.fill(0.0);
    let Scratch { k, c, .. } = sc;
    force.force(
        &values_only(cx, s.kinds, s.nodes),
        &mut force_terms(out, k, c, n),
    )?;
    Ok(true)
}

/// The physics state of `nodes` at the stage `cx` for values alone (no tangents): what
/// [`base_terms`] and [`frozen_force`] evaluate.
fn values_only<'a>(cx: &StepCx, kinds: &'a [NodeKind], nodes: &'a [NodeState]) -> PhysicsState<'a> {
    PhysicsState {
        nodes,
        kinds,
        t: cx.t,
        load_factor: cx.load_factor,
        statics: cx.level == Level::Static,
        gravity: cx.gravity * cx.load_factor,
        tangents: false,
        stiffness: false,
        damping: false,
    }
}

/// Whether [`inert_residual`] can ever find `element` inert at `level`: not for constraints
/// or raw level methods (a stage caches this per element).
pub fn may_be_inert(element: &dyn Element, level: Level) -> bool {
    !(element.levels().contains(level) || element.as_constraint().is_some())
}

/// Whether `element`'s residual at the stage `cx` is exactly zero at the state `s`, decided
/// without evaluating it; `Some(memo)` then, with the memo the evaluation would have recorded
/// (a residual-only assembly skips the element: a correction with nothing to correct, e.g. a
/// free flight's position and velocity stages, costs no contact law). Conservative: `None`
/// ("evaluate it") unless every term the element adds is known to vanish:
///
/// * inertia: a correction's `M u` with the increments `u` zero;
/// * inertial and applied forces: a correction's difference `f(q, v) − f(q̃, ṽ)` with nothing
///   it depends on moved from the smooth state;
/// * a contact: its multipliers zero and, at the position stage, open by more than the
///   round-off of `g_N` (`ζ_N = κλ_N − π g_N < 0`: the forced-gap rows `−κ²/π λ` vanish), at
///   the velocity stage open at position level or not admissible (forced-gap rows);
/// * never for constraints (`k g(q)` is not exactly zero) or raw level methods.
pub fn inert_residual(element: &dyn Element, cx: &StepCx, s: &LocalState<'_>) -> Option<LevelMemo> {
    if !may_be_inert(element, cx.level) {
        return None;
    }
    let moved = |dep: Dependence| !(cx.force_difference && unchanged(dep, s, s.smooth));
    if let Some(inertia) = element.as_inertia() {
        if cx.inertia != InertiaTerm::None {
            let still = s.incr.iter().all(|u| u.iter().all(|&x| x == 0.0));
            if cx.inertia == InertiaTerm::Acceleration
                || !still
                || moved(inertia.inertial_force_dependence())
            {
                return None;
            }
        }
    }
    if let Some(force) = element.as_force() {
        if moved(force.dependence()) {
            return None;
        }
    }
    let mut memo = LevelMemo::default();
    if let Some(c) = element.as_contact() {
        if let Some(m) = contact::inert_contact(&c, cx, s)? {
            memo = m;
        }
    }
    Some(memo)
}

/// [`inert_residual`] for an element that is a contact and nothing else, decided from its
/// multipliers `mult`, statuses and admissibility alone, before its nodes are gathered (at the
/// velocity stage, a contact with zero multipliers that is open at position level or not
/// admissible: a contact-space Gauss–Seidel's residual tests skip the gather of each); `None`
/// when that does not decide it — the caller then gathers and asks [`inert_residual`], which
/// gives the same answer where both decide.
pub fn inert_residual_by_status(
    element: &dyn Element,
    cx: &StepCx,
    mult: &[f64],
    admissible: bool,
) -> Option<LevelMemo> {
    if !may_be_inert(element, cx.level)
        || element.as_inertia().is_some()
        || element.as_force().is_some()
    {
        return None;
    }
    let c = element.as_contact()?;
    match contact::inert_contact_by_status(&c, cx, mult, admissible) {
        contact::ByStatus::Inert(memo) => Some(memo.unwrap_or_default()),
        _ => None,
    }
}

/// `r += M a`, `H += ∂a/∂u · M` with `a = v̇` (smooth) or `a = u` (corrections); returns the
/// block norms of `M a`.
fn add_inertia(
    inertia: &dyn crate::physics::Inertia,
    cx: &StepCx,
    s: &LocalState<'_>,
    n: usize,
    out: &mut LocalSystem<'_>,
    m: &mut [f64],
    a: &mut [f64],
    ma: &mut [f64],
    hessian: bool,
) -> f64 {
    let da = match cx.inertia {
        InertiaTerm::Acceleration => cx.dvdot_dv,
        _ => 1.0,
    };
    if let Some(blocks) = inertia.node_inertia() {
        return add_node_inertia(blocks, cx, s, hessian.then_some(da), out);
    }
    let entries = inertia.mass_entries();
    let m = &mut m[..n * n];
    if entries.is_none() {
        m.fill(0.0);
        inertia.mass_matrix(s.kinds, &mut DMatrixViewMut::from_slice(m, n, n));
    }
    let mut o = 0;
    for (i, kind) in s.kinds.iter().enumerate() {
        let nd = kind.ndof();
        match cx.inertia {
            InertiaTerm::Acceleration => {
                let st = &s.nodes[i];
                a[o..o + 3].copy_from_slice(st.vdot.as_slice());
                if nd == 6 {
                    a[o + 3..o + 6].copy_from_slice(st.omegadot.as_slice());
                }
            }
            _ => a[o..o + nd].copy_from_slice(&s.incr[i].as_slice()[..nd]),
        }
        o += nd;
    }
    // M a (column sweep) and H += da M, column by column.
    let ma = &mut ma[..n];
    ma.fill(0.0);
    if let Some(entries) = entries {
        // The same sums over the nonzeros alone, in the same (column) order.
        debug_assert!(
            entries
                .windows(2)
                .all(|w| (w[0].col, w[0].row) < (w[1].col, w[1].row))
                && entries.iter().all(|e| e.row < n && e.col < n),
            "mass entries out of column-major order or outside the {n} × {n} block"
        );
        for e in entries {
            ma[e.row] += e.value * a[e.col];
        }
        if hessian {
            for e in entries {
                out.hessian[(e.row, e.col)] += da * e.value;
            }
        }
    } else {
        for j in 0..n {
            let col = &m[j * n..(j + 1) * n];
            let aj = a[j];
            for (x, mij) in ma.iter_mut().zip(col) {
                *x += mij * aj;
            }
            if hessian {
                let mut hc = out.hessian.column_mut(j);
                for (h, mij) in hc.as_mut_slice().iter_mut().zip(col) {
                    *h += da * mij;
                }
            }
        }
    }
    for (r, x) in out.residual.as_mut_slice().iter_mut().zip(ma.iter()) {
        *r += x;
    }
    ma.chunks(3).map(norm3).sum()
}

/// [`add_inertia`] for a block-diagonal inertia: per node `[m a_x ; J a_Θ]` and, with `Some(da)`,
/// `da·diag(m I, J)`.
fn add_node_inertia(
    blocks: &[NodeInertia],
    cx: &StepCx,
    s: &LocalState<'_>,
    da: Option<f64>,
    out: &mut LocalSystem<'_>,
) -> f64 {
    let mut o = 0;
    let mut norms = 0.0;
    for (i, (kind, b)) in s.kinds.iter().zip(blocks).enumerate() {
        let (ax, ar) = match cx.inertia {
            InertiaTerm::Acceleration => (s.nodes[i].vdot, s.nodes[i].omegadot),
            _ => (
                s.incr[i].fixed_rows::<3>(0).into_owned(),
                s.incr[i].fixed_rows::<3>(3).into_owned(),
            ),
        };
        let fx = ax * b.mass;
        for d in 0..3 {
            out.residual[o + d] += fx[d];
        }
        norms += fx.norm();
        if let Some(da) = da {
            for d in 0..3 {
                out.hessian[(o + d, o + d)] += da * b.mass;
            }
        }
        if *kind == NodeKind::Frame {
            let fr = b.inertia * ar;
            for r in 0..3 {
                out.residual[o + 3 + r] += fr[r];
            }
            norms += fr.norm();
            if let Some(da) = da {
                let mut h = out.hessian.fixed_view_mut::<3, 3>(o + 3, o + 3);
                h += b.inertia * da;
            }
        }
        o += kind.ndof();
    }
    norms
}

#[inline]
fn norm3(b: &[f64]) -> f64 {
    b.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Views of the force vector `f` (`n`) and the tangent buffers `k`, `c` (`n × n`, leading part
/// of the slices) as [`ForceTerms`].
#[inline]
fn force_terms<'a>(
    f: &'a mut [f64],
    k: &'a mut [f64],
    c: &'a mut [f64],
    n: usize,
) -> ForceTerms<'a> {
    ForceTerms {
        f: DVectorViewMut::from_slice(f, n),
        stiffness: DMatrixViewMut::from_slice(&mut k[..n * n], n, n),
        damping: DMatrixViewMut::from_slice(&mut c[..n * n], n, n),
    }
}

/// Force-like term (module table): evaluate at the current state with tangents and, for a
/// difference stage, at the base state without (or take `f_base` from `cached`, see
/// [`crate::BaseTerms`]); add `−w (f − f_base)` and `w (∂q/∂u · K T + ∂v/∂u · C)`. Returns the block
/// norms of the added residual, or on a difference stage those of `w f` plus those of
/// `w f_base`. On a stage that holds the configuration (`∂q/∂u = 0`), a force without velocity
/// dependence takes `f` from `frozen` when given ([`crate::BaseTerms::frozen_force`]): no
/// tangent is needed there.
#[allow(clippy::too_many_arguments)]
fn add_force_terms(
    eval: impl Fn(&PhysicsState<'_>, &mut ForceTerms<'_>) -> Result<(), ElementError>,
    dep: Dependence,
    cx: &StepCx,
    s: &LocalState<'_>,
    ps: &PhysicsState<'_>,
    base: &PhysicsState<'_>,
    cached: Option<&[f64]>,
    frozen: Option<&[f64]>,
    n: usize,
    out: &mut LocalSystem<'_>,
    f: &mut [f64],
    k: &mut [f64],
    c: &mut [f64],
    d: &mut [f64],
    hessian: bool,
) -> Result<f64, ElementError> {
    let w = cx.force_weight;
    let (cq, cv) = (w * cx.dq_dv, w * cx.dv_dv);
    let need_k = hessian && cq != 0.0 && dep.configuration;
    let need_c = hessian && cv != 0.0 && dep.velocity;
    // f(q, v) − f(q̃, ṽ) vanishes exactly when nothing it depends on has moved (e.g. the first
    // iterate of a correction stage): no residual, no reference, but the tangents still count.
    let same = cx.force_difference && unchanged(dep, s, base.nodes);
    if same && !(need_k || need_c) {
        return Ok(0.0);
    }
    let (f, k, c, d) = (&mut f[..n], &mut k[..n * n], &mut c[..n * n], &mut d[..n]);
    // `f(q)` of this configuration, evaluated once for the stage: the same values.
    let frozen = frozen.filter(|_| cx.dq_dv == 0.0 && !dep.velocity && !need_k && !need_c);
    if let Some(frozen) = frozen {
        f.copy_from_slice(&frozen[..n]);
    } else {
        f.fill(0.0);
    }
    // A tangent that is not read may collect stale values (an element may fill it regardless
    // of `tangents`); every evaluation that reads it zeroes it first.
    if need_k {
        k.fill(0.0);
    }
    if need_c {
        c.fill(0.0);
    }
    if frozen.is_none() {
        let mut terms = force_terms(f, k, c, n);
        let st = PhysicsState {
            tangents: need_k || need_c,
            stiffness: need_k,
            damping: need_c,
            ..*ps
        };
        eval(&st, &mut terms)?;
    }
    for (di, fi) in d.iter_mut().zip(f.iter()) {
        *di = -w * fi;
    }
    if same {
        d.fill(0.0);
    }
    if need_k {
        // Rotational columns of frame nodes: material variation δΘ = T δu.
        let mut o = 0;
        for (i, kind) in s.kinds.iter().enumerate() {
            if *kind == NodeKind::Frame {
                let t = &s.rot_tangent[i];
                let (c0, rest) = k[(o + 3) * n..].split_at_mut(n);
                let (c1, rest) = rest.split_at_mut(n);
                let c2 = &mut rest[..n];
                for r in 0..n {
                    let row = [c0[r], c1[r], c2[r]];
                    c0[r] = row[0] * t[(0, 0)] + row[1] * t[(1, 0)] + row[2] * t[(2, 0)];
                    c1[r] = row[0] * t[(0, 1)] + row[1] * t[(1, 1)] + row[2] * t[(2, 1)];
                    c2[r] = row[0] * t[(0, 2)] + row[1] * t[(1, 2)] + row[2] * t[(2, 2)];
                }
            }
            o += kind.ndof();
        }
        add_scaled(out, k, n, cq);
    }
    if need_c {
        add_scaled(out, c, n, cv);
    }
    // Reference magnitudes (spec §10): on a difference stage the two evaluations `w f` and
    // `w f_base` are the individual terms (their difference cancels to round-off of their size).
    if same {
        return Ok(0.0);
    }
    let mut magnitude = 0.0;
    if cx.force_difference {
        magnitude = w.abs() * f.chunks(3).map(norm3).sum::<f64>();
        let f_base: &[f64] = match cached {
            Some(cached) => &cached[..n],
            None => {
                f.fill(0.0);
                eval(base, &mut force_terms(f, k, c, n))?;
                f
            }
        };
        for (di, fi) in d.iter_mut().zip(f_base) {
            *di += w * fi;
        }
        magnitude += w.abs() * f_base.chunks(3).map(norm3).sum::<f64>();
    }
    for (r, di) in out.residual.as_mut_slice().iter_mut().zip(d.iter()) {
        *r += di;
    }
    if cx.force_difference {
        return Ok(magnitude);
    }
    Ok(d.chunks(3).map(norm3).sum())
}

/// `H += scale · A` for a contiguous `n × n` matrix `A`.
fn add_scaled(out: &mut LocalSystem<'_>, a: &[f64], n: usize, scale: f64) {
    for j in 0..n {
        let col = &a[j * n..(j + 1) * n];
        let mut hc = out.hessian.column_mut(j);
        for (h, x) in hc.as_mut_slice().iter_mut().zip(col) {
            *h += scale * x;
        }
    }
}

/// Whether the current and base states agree in everything a force of dependence `dep`
/// depends on (then its difference is exactly zero).
fn unchanged(dep: Dependence, s: &LocalState<'_>, base: &[NodeState]) -> bool {
    s.nodes.iter().zip(base).all(|(a, b)| {
        (!dep.configuration || (a.x == b.x && a.r == b.r))
            && (!dep.velocity || (a.v == b.v && a.omega == b.omega))
    })
}
