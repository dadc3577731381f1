//! Contact-space nonsmooth Gauss–Seidel for a correction stage (position or velocity level):
//! the fallback of a semi-smooth Newton that reaches its iteration cap, or the first solver
//! (`Tolerance::contacts_first`).
//!
//! Why: in a hyperstatic contact network (a sphere wedged in a corner of a box, touching two
//! walls and a neighbour) the contact reactions are not unique, and at the solution a contact
//! can sit exactly on the stick/slip boundary. Near convergence the Alart–Curnier Newton then
//! picks the stick branch there, whose rows in the redundant cluster are incompatible at the
//! current iterate; the regularized solve turns that incompatibility into a jump of the
//! multipliers along their null space (a granular pile at rest: residual 2.6e-7 → 9.7 in one
//! correction), and the iterates cycle through status sets. A block Gauss–Seidel over the
//! contacts (Jean and Moreau's NSGS, the default solver of Siconos) needs no regularity: each
//! contact solves its own Signorini–Coulomb problem exactly with the others' reactions frozen.
//! It converges linearly, often slowly (hundreds to thousands of sweeps in a settled pile), so
//! it is a fallback, not the default — except for granular models at moderate tolerances,
//! where `Tolerance::contacts_first` (NSGA's `ContactSolver::GaussSeidel`) runs it first.
//!
//! # Method
//!
//! With the stage's other elements (bodies, forces, joints) assembled alone, `A δ = −R_A` at
//! the current iterate `u₀`, each contact `e` (gaps `ḡ_e`, gradient `G_e`, reaction
//! `r_e = κλ_e`; [`linearized_contact`]) acts through the node rows `−G_eᵀ r_e`, so that
//!
//! `δ = A⁻¹(−R_A) + Σ_e Y_e r_e`, `Y_e = A⁻¹ G_eᵀ`, and `ḡ_e ≈ ḡ_e(u₀) + G_e δ`.
//!
//! A sweep visits the contacts in element order; contact `e` solves
//! `ḡ = c + W_ee r` (`W_ee = G_e Y_e`, `c` the gaps with its own reaction removed) for
//! `0 ≤ r_N ⊥ ḡ_N ≥ 0` and Coulomb's cone `‖r_T‖ ≤ μ r_N` ([`local_solve`]) and updates
//! `δ` by `Y_e Δr_e`. After 8, 16, 32, … sweeps (run first: 16, 32, 64, …) the iterate
//! `u₀ + δ`, `λ_e = r_e/κ` is tested with the stage's own residual test, so what the fallback
//! returns is a solution the Newton would accept. Sweeps that converge without passing
//! (position level: the gaps are nonlinear in `q`) start a new linearization at the iterate
//! reached.
//!
//! The sweeps are accelerated as the nonsmooth nonlinear conjugate gradient of Silcowitz,
//! Niebe and Erleben (2010) does: with `Δr` a sweep's change of all reactions and
//! `β = ‖Δr_k‖²/‖Δr_{k−1}‖²`, the reactions move on by `β p` before the next sweep and the
//! direction becomes `p ← β p + Δr`; `β ≥ 1.2` (a sweep's change grown by 20 % or more,
//! [`RESTART`]) restarts with `p = Δr`, and a batch whose residual grows turns the
//! acceleration off. Each sweep leaves every reaction in its cone, so a test after it sees
//! admissible reactions. Run first (`Tolerance::contacts_first`), a test also comes before
//! the batch's end when the residual predicted from the last sweep's reaction change passes.
//! (Granular column N = 1 000 to 0.5 s, run first: 55 % fewer sweeps, −22 % time per step.
//! In the Newton's fallback it ends the drift of the known limit below in some problems.)
//!
//! Known limit: in a settled pile some linearized problems have no reaction the sweeps reach
//! soon: the reactions drift by a constant amount per sweep along the null space of the
//! redundant contacts' Delassus operator (`W d ≈ 0`: one slipping contact gains normal
//! reaction, its neighbours lose it), and the residual sits at 1–5 × the tolerance until a
//! contact leaves its load, after hundreds to thousands of sweeps (a dumped velocity problem
//! of the 27-sphere pile, 55 contacts with `W` of rank 151 of 165: the natural residual
//! falls 15 × after about 1 000 plain sweeps). At the velocity level the contacts are linear
//! in the unknowns; once a second linearization finds the matrix `A` of the first (the block
//! path with the same values: free bodies of isotropic inertia, whose velocity residual is
//! linear), every linearization is the same problem, and a plateau no longer ends it while
//! the sweeps move: the batches go on doubling, up to [`MAX_SWEEPS`]. Elsewhere (the position
//! level, gyroscopic bodies, beams) the plateau still starts a new linearization (going on at
//! the position level cost the granular column 3.5 × its position sweeps). A settling that does not pass ends `NotPassed` and the Newton takes over, which
//! may not converge either (`benches/granular.rs -- 27 1 --tol=1e-8`, without halving: the
//! pile stops at t = 0.399 s with either solver first).
//!
//! When `A` is block diagonal (no element couples two nodes: free bodies) it is inverted block
//! by block ([`BlockInverse`]) and `Y_e` touches only the contact's node blocks; otherwise one
//! sparse LU, and three solves over all unknowns per contact.
//!
//! `A` is assembled into a system with the stage's unknowns but the contacts left out of the
//! matrix pattern (`LevelSystem::without`): the settling's own, rebuilt with the stage's
//! pattern, or the stage's while its contact pattern is deferred
//! ([`Stage::defer_contact_pattern`]). Zeroing, scanning and factorizing it costs the bodies'
//! entries alone (a granular column N = 1 000 has 2 500 contacts whose blocks are most of the
//! stage pattern). Its work arrays ([`SettleWork`]) are the stage's, sized at its first
//! settling: later ones allocate nothing until the element set changes
//! (`tests/newton_no_alloc.rs`). A velocity stage with a contact whose rolling or spinning
//! resistance takes part is not handled ([`Settled::NotApplicable`]).

use super::blocks::{BlockInverse, MAX_BLOCK};
use super::{residual_tolerance, Stage, Tolerance};
use crate::error::SolveError;
use crate::state::State;
use nalgebra::{Matrix3, Vector3};
use saltus_core::assembly::{LevelSystem, FIXED};
use saltus_core::constraint::MAX_DOFS;
use saltus_core::linear::Lu;
use saltus_core::stage::linearized_contact;
use saltus_core::{Level, Model, StepCx};

mod local;
use local::{local_solve, project};

/// Linearizations of one settling (outer iterations).
const MAX_OUTER: usize = 20;

/// Gauss–Seidel sweeps per linearization.
const MAX_SWEEPS: usize = 4_000;

/// Sweeps before the first residual test of a linearization (then doubling), for a stage
/// that runs the Newton first (its fallback after a Newton failure).
const FIRST_BATCH: usize = 8;

/// The same for a stage that runs the Gauss–Seidel first (`Tolerance::contacts_first`: its
/// settling before the Newton and, with the same settings, its fallback at the Newton's cap):
/// its sweeps with inexact slip directions ([`LOCAL_SLACK`]) cost less per sweep than the
/// fallback's exact local solves, so a residual test (an assembly of every element) weighs more against
/// them, and a first test after 8 sweeps rarely passed in a settled pile
/// (residual 2–5 × the tolerance). Granular column, tol 1e-4: N = 27 / 100 / 300 / 1 000 to
/// 1 s −10 / −7 / −6 / −5 % time per step against 8; N = 27 at tol 1e-5 −21 %; 24 and 32
/// were slower than 16.
const FIRST_BATCH_FIRST: usize = 16;

/// A sweep whose largest reaction change is below this fraction of the largest reaction
/// ends the sweeps (well below the stage tolerance `tol_r ≈ 1e-8`, above round-off).
const SWEEP_TOLERANCE: f64 = 1e-13;

/// A batch of sweeps whose residual is within this fraction of the previous batch's has
/// reached what the linearization can give (position level: the gaps are nonlinear in `q`,
/// and the sweeps converge to the linearized problem's solution); a new linearization
/// follows, from the point reached. (Granular column N = 1 000: position problems whose
/// residual sat at 1.5 × the tolerance, unchanged to 1e-5, for 3 800 sweeps passed in 8 after
/// relinearizing. A slow contraction of the sweeps, 10 % per batch and less, is not a
/// plateau: at tol 1e-5 the settling pile of `tests/contact_fallback.rs` needs it.) Not when a
/// velocity stage's linearizations are found to be the same problem and the sweeps still
/// move (module docs, "Known limit").
const PLATEAU: f64 = 0.01;

/// The acceleration restarts (`p = Δr`) when a sweep's change grows by this factor in squared
/// norm (`β ≥ RESTART`). The paper restarts at `β ≥ 1`; in a settled pile the changes of
/// successive sweeps alternate about that value (β ≈ 0.88, 1.05, 0.88, …: a two-sweep cycle
/// that still contracts by ≈ 7 % per pair), and restarting on every upswing discards the
/// direction every other sweep. Tolerating a 20 % growth keeps it: granular column N = 100 /
/// 1 000 to 1 s (tol 1e-4), −26 % position and −22 % / −10 % velocity sweeps, −17 % / −10 %
/// time. A batch whose residual grows switches the acceleration off for the rest of the
/// settling.
const RESTART: f64 = 1.2;

/// A test is brought forward when the predicted `‖r‖` is below this fraction of the tolerance.
const EARLY: f64 = 0.5;

/// Run first, the sweeps solve a contact's slip direction only to this fraction of the gap
/// change its last sweep made (`‖W_ee‖ ‖Δr_e‖`, [`local::slip_by_direction`]'s `slack`): an error
/// the next sweeps' changes dwarf, and that vanishes with them, so the sweeps converge to the
/// same solution and the residual test judges it as before. Granular column (tol 1e-4) to 1 s:
/// N = 100 2.23 → 1.98 ms/step, N = 300 10.5 → 9.0, the same number of sweeps (1.0: about
/// the same; 10: N = 100 takes 6 × the sweeps and N = 300 fails). A stage that runs the Newton
/// first keeps the exact local solve in its fallback.
const LOCAL_SLACK: f64 = 0.1;

/// One contact of the settling: where its unknowns live and its linearization.
pub(super) struct Entry {
    /// First global multiplier unknown (its sliding multipliers `λ_N, λ_T`).
    mult: usize,
    /// Gaps at the linearization point.
    gaps: Vector3<f64>,
    /// `G_e` on the free node unknowns: its range of [`Rows::jacobian`].
    jacobian: (usize, usize),
    /// Friction coefficient.
    mu: f64,
    /// `Y_e = A⁻¹ G_eᵀ`: its range of [`Rows::y`].
    y: (usize, usize),
    /// Delassus block `W_ee = G_e Y_e`.
    w: Matrix3<f64>,
    /// `W_ee⁻¹` (`None`: singular), for the stick branch.
    w_inv: Option<Matrix3<f64>>,
    /// Reaction `r_e = κλ_e`.
    r: Vector3<f64>,
    /// The last sweep's change of `r_e`.
    dr: Vector3<f64>,
    /// The conjugate direction of the acceleration (`p_e`).
    p: Vector3<f64>,
}

/// Outcome of [`Stage::settle_contacts`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Settled {
    /// The stage's residual test passed, with this `‖r‖`.
    Passed(f64),
    /// The test did not pass; the state is the sweeps' last iterate if its residual is below
    /// the call's, else the call's point.
    NotPassed,
    /// Nothing to settle (or contacts it does not handle): nothing assembled or moved.
    NotApplicable,
}

/// Work arrays of [`Stage::settle_contacts`], kept by the stage from one call to the next: a
/// settling allocates nothing once they have grown to the model (a granular model that runs
/// `ContactSolver::GaussSeidel` settles at every step). The rows reserved per contact cover
/// the block path (two node blocks); the LU path's `Y_e` rows run over every coupled unknown
/// and grow the arrays to their high-water mark.
#[derive(Default)]
pub(super) struct SettleWork {
    /// The node unknowns at the call, restored if the settling does not pass.
    start_unknown: Vec<nalgebra::Vector6<f64>>,
    /// The multipliers at the call, likewise.
    start_mult: Vec<f64>,
    /// The sweeps' last iterate (node unknowns, multipliers), kept while the call's point is
    /// assembled for the comparison that `norm_at_call = None` defers.
    reached_unknown: Vec<nalgebra::Vector6<f64>>,
    reached_mult: Vec<f64>,
    /// The stage's active contact elements.
    contacts: Vec<usize>,
    /// `δ`, the correction of all unknowns from the linearization point.
    delta: Vec<f64>,
    /// The acceleration's `Σ_e Y_e p_e` (`δ`'s share of the direction `p`).
    delta_p: Vec<f64>,
    /// `δ` before a sweep, then the sweep's change of `δ`, `Σ_e Y_e Δr_e`.
    delta_sweep: Vec<f64>,
    /// `A⁻¹(−R_A)` of the linearization, for the debug builds' check of `δ` ([`check_delta`]).
    delta_start: Vec<f64>,
    /// That check's scratch: the expected `δ` and the sum of its terms' magnitudes (node rows).
    check: [Vec<f64>; 2],
    /// The three columns of `G_eᵀ`, solved into those of `Y_e` (LU path).
    ys: [Vec<f64>; 3],
    /// The contacts taking part.
    entries: Vec<Entry>,
    /// Their rows of `G_e` and `Y_e`.
    rows: Rows,
    /// `A⁻¹` by blocks, when `A` is block diagonal.
    blocks: BlockInverse,
    /// The stage's system with the contacts out of the matrix pattern (the bodies' `A` zeroed,
    /// scanned and factorized alone), for the model topology and stage pattern generation it
    /// was built for.
    system: Option<((u64, u64), LevelSystem)>,
    /// Builds of `system` with a new pattern (its generations, apart from the stage's).
    generation: u64,
}

impl SettleWork {
    /// Take `system`, a stage's pattern without its contacts that the stage has just completed
    /// (`Stage::full_pattern`), as the settling's own for `key` (model topology, the stage's new
    /// pattern generation): the next settling needs no rebuild, and its factorizations and
    /// block inverses of that pattern (under the same generation) stay valid.
    pub(super) fn adopt(&mut self, key: (u64, u64), system: LevelSystem) {
        self.system = Some((key, system));
    }
}

/// The generations of the settling's own systems (`SettleWork::system`): above the stage's.
const SETTLE_GENERATION: u64 = 1 << 63;

/// The sparse rows of every contact's `G_e` and `Y_e`, one array each (contiguous for the
/// sweeps): `(global unknown, [three columns])`.
#[derive(Default)]
struct Rows {
    /// `G_e`'s columns on the free node unknowns.
    jacobian: Vec<(usize, [f64; 3])>,
    /// `Y_e = A⁻¹ G_eᵀ`, its nonzero rows.
    y: Vec<(usize, [f64; 3])>,
}

impl Stage {
    /// Settle the stage's contacts by nonsmooth Gauss–Seidel in contact space (module docs),
    /// from the current iterate: [`Settled::Passed`] when the stage's residual test then
    /// passes (the state and multipliers hold the solution, `update` applied);
    /// [`Settled::NotApplicable`] (nothing assembled, nothing moved) when the stage is not a
    /// position or velocity stage, has no contact or, at velocity level, a resisted contact
    /// taking part; [`Settled::NotPassed`] when the settling did not pass the test within 20
    /// linearizations of 4 000 sweeps at most. After `NotPassed` the state and multipliers are
    /// the sweeps' last iterate if its `‖r‖` is below `norm_at_call` (the residual at the call;
    /// `None`: not assembled before the call, and then assembled only in this case), else
    /// those of the call again (`update` applied), as after an error. The settling
    /// assembles `A` into a system with the contacts out of the matrix pattern: its own, so
    /// that the stage's matrix and right-hand side stay those of its last assembly before the
    /// call (after `NotPassed` with `norm_at_call = None`: the right-hand side and memos of the
    /// call point's residual), or the stage's when its contact pattern is deferred
    /// ([`Stage::defer_contact_pattern`]), which then holds the bodies' matrix and the last
    /// test's residual. Either way a fresh assembly is needed before they serve.
    #[allow(clippy::too_many_arguments)]
    pub fn settle_contacts(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        smooth: Option<&Stage>,
        norm_at_call: Option<f64>,
        update: &mut dyn FnMut(&mut State),
    ) -> Result<Settled, SolveError> {
        if !matches!(cx.level, Level::Position | Level::Velocity) {
            return Ok(Settled::NotApplicable);
        }
        let mut work = std::mem::take(&mut self.settle_work);
        // Room for every contact element of the model taking part (the rows: a contact's `G_e`
        // has at most `MAX_DOFS` free unknowns, its block `Y_e` two node blocks), so that a
        // growing set of closed contacts does not allocate at a later step.
        let n_contacts = model
            .elements()
            .iter()
            .filter(|e| e.as_contact().is_some())
            .count();
        work.contacts.clear();
        work.contacts.reserve(n_contacts);
        work.entries.clear();
        work.entries.reserve(n_contacts);
        work.rows.jacobian.clear();
        work.rows.jacobian.reserve(MAX_DOFS * n_contacts);
        work.rows.y.clear();
        work.rows.y.reserve(2 * MAX_BLOCK * n_contacts);
        work.contacts.extend(
            (0..model.elements().len()).filter(|&ie| {
                self.system.active[ie] && model.elements()[ie].as_contact().is_some()
            }),
        );
        // A velocity stage with a resisted contact taking part (closed and admissible, as in
        // `linearized_contact`) is not handled: known before anything is assembled.
        let resisted = |ie: usize| {
            model.elements()[ie]
                .as_contact()
                .is_some_and(|c| c.history.closed && self.admissible[ie] && c.resists_couples())
        };
        if work.contacts.is_empty()
            || (cx.level == Level::Velocity && work.contacts.iter().any(|&ie| resisted(ie)))
        {
            self.settle_work = work;
            return Ok(Settled::NotApplicable);
        }
        // The call's point, restored unless the settling passes or reaches a smaller residual
        // than `norm_at_call`.
        work.start_unknown.clone_from(&state.unknown);
        work.start_mult.clone_from(&self.mult);
        // Room for the sweeps' point too (`residual_at_call`), so that its rare first use
        // inside a step does not allocate.
        let (nu, nm) = (state.unknown.len(), self.mult.len());
        work.reached_unknown
            .reserve(nu.saturating_sub(work.reached_unknown.len()));
        work.reached_mult
            .reserve(nm.saturating_sub(work.reached_mult.len()));
        // The system without the contacts' pattern, in place of the stage's for the settling
        // (same unknowns, multipliers and element unknown lists).
        // (A stage whose pattern leaves the contacts out already is that system.)
        let own_system = !self.pattern_pending;
        let key = (model.topology(), self.system.generation);
        if own_system && work.system.as_ref().is_none_or(|(k, _)| *k != key) {
            // Numbered apart from the stage's generations (`side_lu` factorizes both).
            let mut system = self.next_system(model, state, true);
            match &work.system {
                Some((_, old)) if system.same_pattern(old) => system.generation = old.generation,
                _ => {
                    work.generation += 1;
                    system.generation = SETTLE_GENERATION + work.generation;
                }
            }
            work.system = Some((key, system));
        }
        if own_system {
            let (_, own) = work.system.as_mut().expect("built above");
            own.active.copy_from_slice(&self.system.active);
            std::mem::swap(&mut self.system, own);
        }
        let mut lu = self.side_lu.take().unwrap_or_default();
        self.settling = true;
        let result = self.settle_with(
            &mut lu, &mut work, model, state, cx, tol, step, smooth, update,
        );
        self.settling = false;
        self.side_lu = Some(lu);
        if own_system {
            let (_, own) = work.system.as_mut().expect("built above");
            std::mem::swap(&mut self.system, own);
        }
        let keep = match result {
            Ok((passed, reached)) => {
                passed
                    || reached.is_finite()
                        && reached
                            < match norm_at_call {
                                Some(norm) => norm,
                                None => self.residual_at_call(
                                    model, state, cx, step, smooth, &mut work, update,
                                ),
                            }
            }
            Err(_) => false,
        };
        if !keep {
            state.unknown.copy_from_slice(&work.start_unknown);
            self.mult.copy_from_slice(&work.start_mult);
            update(state);
        }
        self.settle_work = work;
        // The stage's matrix is not that of the point reached: no reuse of it.
        self.factorized_for = None;
        match result? {
            (true, norm) => {
                self.summary.settled += 1;
                Ok(Settled::Passed(norm))
            }
            (false, _) => Ok(Settled::NotPassed),
        }
    }

    /// `‖r‖` at the settling's call point (`work.start_*`; infinite if it cannot be assembled),
    /// with the state back at the sweeps' iterate afterwards.
    #[allow(clippy::too_many_arguments)]
    fn residual_at_call(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        step: usize,
        smooth: Option<&Stage>,
        work: &mut SettleWork,
        update: &mut dyn FnMut(&mut State),
    ) -> f64 {
        work.reached_unknown.clone_from(&state.unknown);
        work.reached_mult.clone_from(&self.mult);
        state.unknown.copy_from_slice(&work.start_unknown);
        self.mult.copy_from_slice(&work.start_mult);
        update(state);
        let norm = self
            .assemble_residual(model, state, cx, step, smooth)
            .map_or(f64::INFINITY, |r| r.norm);
        state.unknown.copy_from_slice(&work.reached_unknown);
        self.mult.copy_from_slice(&work.reached_mult);
        update(state);
        norm
    }

    /// [`Stage::settle_contacts`] with the factorization `lu` and the work arrays `work`.
    #[allow(clippy::too_many_arguments)]
    fn settle_with(
        &mut self,
        lu: &mut Lu,
        work: &mut SettleWork,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        smooth: Option<&Stage>,
        update: &mut dyn FnMut(&mut State),
    ) -> Result<(bool, f64), SolveError> {
        let nd = self.system.n_node_dofs;
        let n = self.system.n;
        let SettleWork {
            contacts,
            delta,
            delta_p,
            delta_sweep,
            delta_start,
            check,
            ys,
            entries,
            rows,
            blocks,
            ..
        } = work;
        let contacts = &contacts[..];
        delta.clear();
        delta.resize(n, 0.0);
        for v in [&mut *delta_p, &mut *delta_sweep] {
            v.clear();
            v.resize(n, 0.0);
        }
        // `‖r‖` at the last iterate tested.
        let mut reached = f64::INFINITY;
        // The early tests, the inexact slip directions and the later first test serve stages
        // that run the Gauss–Seidel first (module docs), in all their settlings (before the
        // Newton and at its cap); a stage that runs the Newton first keeps, in its fallback,
        // exact local solves and the batches from 8, whose settlings the fallback's tests were
        // written for. Both accelerate the sweeps: in a fallback the plain sweeps can drift,
        // every contact's reaction changing by the same amount each sweep with the residual
        // at a few times the tolerance (27-sphere pile, Newton first at tol 1e-5: plain
        // sweeps stopped it at t = 0.556 s, accelerated ones ran it to 1.17 s). The acceleration
        // stops when a linearization ends at a plateau or a batch's residual grows.
        let fast = tol.contacts_first;
        let mut accelerate = true;
        let (inexact, first_batch) = if fast {
            (LOCAL_SLACK, FIRST_BATCH_FIRST)
        } else {
            (0.0, FIRST_BATCH)
        };
        // A velocity stage whose second linearization finds the matrix `A` of the first
        // (block path, the same values: free bodies with isotropic inertia, whose velocity
        // residual is linear) solves the same problem at every linearization.
        let mut same_problem = false;
        for outer in 0..MAX_OUTER {
            // The other elements alone: `A` and `R_A` at the current iterate.
            for &ie in contacts {
                self.system.active[ie] = false;
            }
            let assembled = self.assemble(model, state, cx, step, smooth);
            for &ie in contacts {
                self.system.active[ie] = true;
            }
            assembled?;
            self.regularize(cx);
            for &ie in contacts {
                self.system.set_multiplier_diagonal(ie, -1.0);
            }
            let linear = |source| SolveError::Linear {
                step,
                t: cx.t,
                level: cx.level,
                source,
            };
            // Block diagonal (no element couples two nodes): inverted block by block, and
            // each `Y_e` costs its own nodes' blocks. Else one sparse LU, and `Y_e` three
            // solves over all unknowns.
            let clock = self.clock();
            let by_blocks = blocks.rebuild(&self.system.matrix, self.system.generation);
            self.lap(clock, |t| &mut t.factorization);
            same_problem |=
                outer > 0 && by_blocks && blocks.reused() && cx.level == Level::Velocity;
            for (d, r) in delta.iter_mut().zip(&self.system.rhs) {
                *d = -r;
            }
            if by_blocks {
                blocks.solve_in_place(delta);
            } else {
                let clock = self.clock();
                let factorized = lu.factorize(&self.system.matrix, self.system.generation);
                self.lap(clock, |t| &mut t.factorization);
                factorized.map_err(linear)?;
                lu.solve_in_place(delta).map_err(linear)?;
                // The LU path's columns (zeroed before each use).
                for y in ys.iter_mut() {
                    y.resize(n, 0.0);
                }
            }
            if cfg!(debug_assertions) {
                delta_start.clone_from(delta);
                for c in check.iter_mut() {
                    c.resize(nd, 0.0);
                }
            }

            // Each contact's linearization, `Y_e`, `W_ee`, and its reaction's share of `δ`.
            let clock = self.clock();
            entries.clear();
            rows.jacobian.clear();
            rows.y.clear();
            for &ie in contacts {
                let Some(e) = self.linearize(model, state, cx, smooth, ie, step)? else {
                    continue;
                };
                if e.resisted_couples {
                    self.lap(clock, |t| &mut t.contact_linearization);
                    return Ok((false, f64::INFINITY));
                }
                // Columns of `G_e` on the free node unknowns (fixed nodes have none).
                let j0 = rows.jacobian.len();
                rows.jacobian.extend(
                    self.system.element_dofs(ie)[..e.n]
                        .iter()
                        .enumerate()
                        .filter(|&(_, &g)| g != FIXED && g < nd)
                        .map(|(j, &g)| (g, [0, 1, 2].map(|k| e.jacobian[(k, j)]))),
                );
                let jacobian = &rows.jacobian[j0..];
                let y0 = rows.y.len();
                if by_blocks {
                    blocks.apply3(jacobian, &mut rows.y);
                } else {
                    for (k, yk) in ys.iter_mut().enumerate() {
                        yk.fill(0.0);
                        for &(g, gj) in jacobian {
                            yk[g] += gj[k];
                        }
                        lu.solve_in_place(yk).map_err(linear)?;
                    }
                    rows.y.extend(
                        (0..n)
                            .filter(|&i| ys.iter().any(|y| y[i] != 0.0))
                            .map(|i| (i, [ys[0][i], ys[1][i], ys[2][i]])),
                    );
                }
                let y = &rows.y[y0..];
                // `W_ee = G_e Y_e`: each column of `G_e` meets its row of `Y_e` (if any) once.
                let mut w = Matrix3::zeros();
                for &(g, gj) in jacobian {
                    if let Some(&(_, yg)) = y.iter().find(|&&(i, _)| i == g) {
                        for k in 0..3 {
                            for l in 0..3 {
                                w[(k, l)] += gj[k] * yg[l];
                            }
                        }
                    }
                }
                let (m0, m) = self.system.mult_range[ie];
                let lam = &self.mult[m0..m0 + m.min(3)];
                let r = project(&(cx.k * Vector3::new(lam[0], lam[1], lam[2])), e.friction);
                add_y(delta, y, &r);
                entries.push(Entry {
                    mult: nd + m0,
                    gaps: e.gaps,
                    jacobian: (j0, rows.jacobian.len()),
                    mu: e.friction,
                    y: (y0, rows.y.len()),
                    w,
                    w_inv: w.try_inverse(),
                    r,
                    dr: Vector3::zeros(),
                    p: Vector3::zeros(),
                });
            }
            self.lap(clock, |t| &mut t.contact_linearization);

            // The unknowns the sweeps move (`Y_e`'s rows: the node blocks on the block path):
            // the acceleration's passes over `δ` stop there.
            let moved = rows.y.iter().map(|&(i, _)| i + 1).max().unwrap_or(0);
            // Sweeps, in batches of doubling length; after each batch the stage's own residual
            // test at `u₀ + δ` (the sweeps' own criterion is only a stopping rule). Between
            // tests, `‖r‖` is predicted from the last sweep's largest reaction change (their
            // ratio at the last test): a test is brought forward to the sweep where the
            // prediction passes with a margin (`EARLY`), which saves most of the batch that
            // would have run past the solution. The prediction only schedules tests.
            state.saved_unknown.copy_from_slice(&state.unknown);
            self.saved_mult.copy_from_slice(&self.mult);
            let (mut done, mut batch) = (0, first_batch);
            let mut last_norm = f64::INFINITY;
            // `‖r‖` per unit of reaction change, and the residual tolerance, at the last test.
            let (mut per_change, mut target) = (None::<f64>, 0.0);
            let (mut squared_prev, mut pending) = (0.0f64, None::<f64>);
            // The largest reaction the sweeps of this linearization have set (the scale of
            // `check_delta`'s round-off when reactions that were set cancel by the end).
            let mut peak = 0.0f64;
            while done < MAX_SWEEPS {
                let mut still = false;
                let mut change = 0.0;
                // The last early test of the batch: the sweep count, `‖r‖` and tolerance.
                let mut early = None;
                for _ in 0..batch.min(MAX_SWEEPS - done) {
                    let clock = self.clock();
                    done += 1;
                    self.summary.settle_sweeps += 1;
                    if let Some(beta) = pending.take() {
                        // `r ← r + β p`, `p ← β p + Δr`, and with them `δ ← δ + β Y p` and
                        // `Y p ← β Y p + Y Δr` (one pass over the unknowns, not over every
                        // contact's `Y_e`).
                        for e in entries.iter_mut() {
                            let a = beta * e.p;
                            e.r += a;
                            e.p = a + e.dr;
                        }
                        for ((d, dp), ds) in delta[..moved]
                            .iter_mut()
                            .zip(&mut delta_p[..moved])
                            .zip(&delta_sweep[..moved])
                        {
                            *d += beta * *dp;
                            *dp = beta * *dp + ds;
                        }
                    }
                    if accelerate {
                        delta_sweep[..moved].copy_from_slice(&delta[..moved]);
                    }
                    let (moving, squared, size);
                    (moving, change, squared, size) = sweep(entries, rows, delta, inexact);
                    peak = peak.max(size);
                    if !moving {
                        self.lap(clock, |t| &mut t.sweeps);
                        break;
                    }
                    if accelerate {
                        for (ds, d) in delta_sweep[..moved].iter_mut().zip(&delta[..moved]) {
                            *ds = d - *ds;
                        }
                    }
                    // The acceleration's step `β p` (applied before the next sweep, so that a
                    // test sees the sweep's own reactions, inside their cones), or a restart.
                    let beta = squared / squared_prev;
                    squared_prev = squared;
                    if accelerate && beta < RESTART {
                        pending = Some(beta);
                    } else if accelerate {
                        for e in entries.iter_mut() {
                            e.p = e.dr;
                        }
                        delta_p[..moved].copy_from_slice(&delta_sweep[..moved]);
                    }
                    self.lap(clock, |t| &mut t.sweeps);
                    still = true;
                    if fast && per_change.is_some_and(|k| k * change <= EARLY * target) {
                        check_delta(delta, delta_start, check, entries, rows, nd, peak);
                        let (norm, tol_r) = self.test_iterate(
                            model, state, cx, tol, step, smooth, update, contacts, entries, delta,
                        )?;
                        if norm <= tol_r {
                            return Ok((true, norm));
                        }
                        (per_change, target) = (Some(norm / change), tol_r);
                        early = Some((done, norm, tol_r));
                    }
                }
                // (An early test at the batch's last sweep is this test.)
                let (norm, tol_r) = match early.take() {
                    Some((at, norm, tol_r)) if at == done => (norm, tol_r),
                    _ => {
                        check_delta(delta, delta_start, check, entries, rows, nd, peak);
                        self.test_iterate(
                            model, state, cx, tol, step, smooth, update, contacts, entries, delta,
                        )?
                    }
                };
                reached = norm;
                if norm <= tol_r {
                    return Ok((true, norm));
                }
                if change > 0.0 {
                    (per_change, target) = (Some(norm / change), tol_r);
                }
                let plateau =
                    last_norm.is_finite() && (norm - last_norm).abs() <= PLATEAU * last_norm;
                // Accelerated sweeps that made the residual grow: plain sweeps from here on.
                if norm > last_norm {
                    accelerate = false;
                    pending = None;
                }
                // Converged sweeps that do not pass, or a plateau: a new linearization — except
                // for a plateau of sweeps that still move when it is the same problem
                // (`same_problem`: contacts linear in the velocity unknowns with `G` at
                // `q_{n+1}`, and `A` found constant). That plateau is the reactions drifting
                // along the redundant contacts' null space (`W d ≈ 0`) until a contact leaves
                // its load: longer batches of plain sweeps let that finish (module docs,
                // "Known limit").
                let drifting = still && same_problem;
                if !still || (plateau && !drifting) {
                    accelerate &= !plateau;
                    break;
                }
                if plateau {
                    accelerate = false;
                    pending = None;
                }
                last_norm = norm;
                batch *= 2;
            }
        }
        Ok((false, reached))
    }

    /// Set the iterate `u₀ + δ`, `λ_e = r_e/κ` (zero for contacts taking no part and for the
    /// couples) and assemble its residual: `(‖r‖, the stage's tolerance on it)`.
    #[allow(clippy::too_many_arguments)]
    fn test_iterate(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        smooth: Option<&Stage>,
        update: &mut dyn FnMut(&mut State),
        contacts: &[usize],
        entries: &[Entry],
        delta: &mut Vec<f64>,
    ) -> Result<(f64, f64), SolveError> {
        let nd = self.system.n_node_dofs;
        for &ie in contacts {
            let (m0, m) = self.system.mult_range[ie];
            for k in 0..m {
                delta[nd + m0 + k] = -self.saved_mult[m0 + k];
            }
        }
        for e in entries {
            for k in 0..3 {
                delta[e.mult + k] += e.r[k] / cx.k;
            }
        }
        std::mem::swap(&mut self.delta, delta);
        self.set_iterate(state, 1.0);
        std::mem::swap(&mut self.delta, delta);
        update(state);
        let norms = self.assemble_residual(model, state, cx, step, smooth)?;
        Ok((
            norms.norm,
            residual_tolerance(tol, cx, state, norms.reference),
        ))
    }

    /// Contact `ie`'s linearization at the current iterate (`None`: it takes no part).
    fn linearize(
        &self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        smooth: Option<&Stage>,
        ie: usize,
        step: usize,
    ) -> Result<Option<saltus_core::stage::LinearizedContact>, SolveError> {
        let element = &model.elements()[ie];
        let Some(c) = element.as_contact() else {
            return Ok(None);
        };
        let nn = state.gather(model, ie);
        let (m0, m) = self.system.mult_range[ie];
        let own = &self.mult[m0..m0 + m];
        let mult_smooth = match smooth {
            Some(s) => s.element_multipliers(ie),
            None => own,
        };
        let mut s = state.gathered(nn, smooth.is_none(), own, mult_smooth);
        s.admissible = self.admissible[ie];
        linearized_contact(&c, cx, &s).map_err(|source| SolveError::Element {
            step,
            t: cx.t,
            level: cx.level,
            element: model.element_names()[ie].clone(),
            source,
        })
    }
}

/// One Gauss–Seidel sweep over `entries` (their rows in `rows`) in order, updating `δ` and each
/// entry's `Δr_e`: `(moving, the largest reaction change, Σ‖Δr_e‖², the largest reaction)`,
/// `moving` false when that change was below [`SWEEP_TOLERANCE`] of the largest reaction
/// (converged). Each slip
/// direction is solved to `inexact` × the gap change of the contact's last sweep
/// ([`LOCAL_SLACK`]; 0: to round-off).
fn sweep(
    entries: &mut [Entry],
    rows: &Rows,
    delta: &mut [f64],
    inexact: f64,
) -> (bool, f64, f64, f64) {
    let (mut change, mut size, mut squared) = (0.0f64, 0.0f64, 0.0);
    for e in entries.iter_mut() {
        let mut g = e.gaps;
        for &(i, gi) in &rows.jacobian[e.jacobian.0..e.jacobian.1] {
            for k in 0..3 {
                g[k] += gi[k] * delta[i];
            }
        }
        let c = g - e.w * e.r;
        let slack = inexact * e.w.amax() * e.dr.amax();
        let r = local_solve(&e.w, e.w_inv.as_ref(), &c, e.mu, &e.r, slack);
        let dr = r - e.r;
        if dr != Vector3::zeros() {
            add_y(delta, &rows.y[e.y.0..e.y.1], &dr);
        }
        e.r = r;
        e.dr = dr;
        squared += dr.norm_squared();
        change = change.max(dr.amax());
        size = size.max(r.amax());
    }
    (change > SWEEP_TOLERANCE * size, change, squared, size)
}

/// Debug builds: `δ = A⁻¹(−R_A) + Σ_e Y_e r_e` on the node rows (`delta_start` the first term),
/// which the sweeps and the acceleration's one-vector update of `δ` keep to round-off: each
/// sweep's change of `δ` is rounded at ε ≈ 1.1e-16 of the terms, and `Σ Y_e p_e` carries those
/// errors on, so that they nest — at worst `K² ε / 2` after `K` sweeps without a restart, 9e-10
/// at `MAX_SWEEPS`; hence 1e-8 (the suite's settlings stay near 1e-11). The terms are those
/// of the check, and of the largest reaction `peak` the sweeps set (`3 max|Y| peak`): a
/// reaction set and undone leaves its round-off in `δ` (a cradle's position correction: 8e-20
/// with every reaction back at zero).
#[allow(clippy::too_many_arguments)]
fn check_delta(
    delta: &[f64],
    delta_start: &[f64],
    check: &mut [Vec<f64>; 2],
    entries: &[Entry],
    rows: &Rows,
    nd: usize,
    peak: f64,
) {
    if !cfg!(debug_assertions) {
        return;
    }
    // The sum and the sum of magnitudes of its terms (round-off scales with the terms, which
    // cancel in a resting pile).
    let [expected, magnitude] = check;
    expected.copy_from_slice(&delta_start[..nd]);
    for (m, v) in magnitude.iter_mut().zip(&*expected) {
        *m = v.abs();
    }
    for e in entries {
        for &(i, yi) in &rows.y[e.y.0..e.y.1] {
            if i < nd {
                let v = yi[0] * e.r[0] + yi[1] * e.r[1] + yi[2] * e.r[2];
                expected[i] += v;
                magnitude[i] += v.abs();
            }
        }
    }
    let y_max = rows
        .y
        .iter()
        .flat_map(|(_, y)| y)
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let scale = magnitude.iter().fold(3.0 * y_max * peak, |m, v| m.max(*v));
    let worst = expected
        .iter()
        .zip(&delta[..nd])
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    debug_assert!(
        worst <= 1e-8 * scale,
        "settling: δ off A⁻¹(−R_A) + Σ Y_e r_e by {worst:e} (terms up to {scale:e})"
    );
}

/// `δ ← δ + Y_e a`, with `y` the rows of `Y_e` (a reaction change `a` acting through them).
fn add_y(delta: &mut [f64], y: &[(usize, [f64; 3])], a: &Vector3<f64>) {
    for &(i, yi) in y {
        delta[i] += yi[0] * a[0] + yi[1] * a[1] + yi[2] * a[2];
    }
}
