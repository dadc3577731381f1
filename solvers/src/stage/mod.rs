//! A stage of a time-stepping scheme: one nonlinear subproblem with its own unknowns (the free
//! nodes' unknowns and the multipliers of the elements that take part), sparsity pattern, LU
//! factorization, Newton loop and statistics.
//!
//! A scheme is a sequence of stages over one shared [`State`]: NSGA is smooth, position,
//! velocity; a static solve is one stage; a stage may run again within a step with updated data
//! (an impact sequence). A stage knows nothing of the scheme: the caller gives it the stage
//! context ([`StepCx`]: factors and descriptors, see `saltus_core::stage`), the tolerances and
//! the map from its node unknowns to node states.
//!
//! ```text
//! stage.reset(&mut state);                     // zero unknowns and multipliers
//! let report = stage.newton(&model, &mut state, &cx, &tol, step, None, update_velocity_states)?;
//! ```

mod assembly;
mod blocks;
mod newton;
mod settle;
mod timing;

use newton::residual_tolerance;
pub use settle::Settled;
pub use timing::StageTimes;

use crate::error::SolveError;
use crate::state::State;
use nalgebra::{DMatrix, DVector};
use saltus_core::assembly::LevelSystem;
use saltus_core::linear::{Determinant, LinearError, Lu};
use saltus_core::{ElementId, Level, LevelMemo, Model, StepCx};

/// Newton tolerances: converged when `‖r‖ ≤ tol (Σ‖r_k‖ + tol_f)` (spec §10, B.44) plus the
/// round-off floor of the constraint rows, or when a correction is below round-off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance `tol_r`.
    pub tol: f64,
    /// Reference residual `tol_f`.
    pub tol_f: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Backtrack (halve the correction, up to 6 times) when a full Newton correction does not
    /// decrease `‖r‖` (Armijo, sufficient decrease 10⁻⁴).
    pub line_search: bool,
    /// Modified Newton: the last factorized iteration matrix serves the following corrections,
    /// within a solve and across solves (steps), while each correction made with it reduces
    /// `‖r‖` at least by this factor `θ ∈ (0, 1)` and at a rate that reaches the tolerance within
    /// two more corrections (`REUSE_AHEAD`). A correction that contracts less is followed
    /// by a fresh iteration matrix at the point it reached (if it reduced `‖r‖`) or at the point
    /// it started from (if not); a change of the stage's step factors (`h`, `k`, `p`, …) or of
    /// the pattern also forces a fresh one. The convergence test is the same, so the converged
    /// solution satisfies the same tolerance. `None`: full Newton (a fresh iteration matrix at
    /// every iteration).
    pub jacobian_reuse: Option<f64>,
    /// A solve's first correction may reuse the last factorization (e.g. last step's) on the
    /// condition that it acts as an exact Newton matrix would: the residual it reaches must be
    /// within the tolerance *and* at most `EXACT_REUSE_RATE` (10⁻⁴) of the one it started from;
    /// otherwise a fresh matrix is assembled there. For stages whose converged iterate must
    /// be as accurate as full Newton leaves it (NSGA's position and velocity corrections:
    /// constraints at round-off): a resting contact's correction (same status, the same
    /// configuration to 10⁻¹⁰) then costs a solve instead of a Hessian and a factorization,
    /// while a matrix that changed over the step (a moving joint's `G(q)`) is refreshed.
    /// After a refusal the stage waits 1, 2, 4, … 64 solves before it tries again. Also
    /// enables [`Stage::newton_after`]'s use of another stage's factorization.
    pub exact_reuse: bool,
    /// Newton starts with the iteration matrix of first-order constraint kinematics
    /// ([`saltus_core::stage::MatrixTerms::FirstOrderConstraints`]: without the bilateral
    /// constraints' second derivatives, which a stage that moves the configuration by a
    /// small correction barely needs) and refines with its factorization: each following
    /// correction made with it must reduce `‖r‖` by `REFINE_RATE` (5·10⁻²), at most
    /// `REFINE_CORRECTIONS` (3) of them; otherwise the solve continues with exact Newton from
    /// the point reached (or from where the correction started, if it did not reduce `‖r‖`),
    /// and the next solves wait 1, 2, 4, … 64 before they start first-order again. The
    /// convergence test is the same. For NSGA's position correction: the constraint curvature
    /// costs the most of its assembly, and the matrix without it is the velocity jump's own
    /// ([`Stage::newton_after`]).
    pub first_order_constraints: bool,
    /// A position or velocity stage whose Newton reaches the iteration cap hands its contacts to
    /// the contact-space Gauss–Seidel of [`Stage::settle_contacts`] before reporting
    /// non-convergence; `false`: Newton only.
    pub contact_fallback: bool,
    /// A position or velocity stage with contacts whose start point does not pass the test
    /// settles its contacts by [`Stage::settle_contacts`] first, and continues with Newton only
    /// if that does not pass (NSGA's `ContactSolver::GaussSeidel`).
    pub contacts_first: bool,
}

impl Default for Tolerance {
    /// Full Newton with NSGA's default test (`tol_r = 1e-8`, `tol_f = 1e-6` N, 50 iterations,
    /// line search): no reuse of factorizations, no contact fallback. A scheme sets what it
    /// needs and takes the rest with `..Tolerance::default()`.
    fn default() -> Self {
        Self {
            tol: 1e-8,
            tol_f: 1e-6,
            max_iterations: 50,
            line_search: true,
            jacobian_reuse: None,
            exact_reuse: false,
            first_order_constraints: false,
            contact_fallback: false,
            contacts_first: false,
        }
    }
}

/// The stage context an iteration matrix depends on besides the state (everything but the
/// time and gravity): a reused factorization is valid only for the same values.
#[derive(Clone, Copy, Debug, PartialEq)]
struct MatrixFactors {
    level: Level,
    inertia: saltus_core::InertiaTerm,
    force_difference: bool,
    factors: [f64; 9],
}

impl MatrixFactors {
    fn of(cx: &StepCx) -> Self {
        Self {
            level: cx.level,
            inertia: cx.inertia,
            force_difference: cx.force_difference,
            factors: [
                cx.h,
                cx.k,
                cx.p,
                cx.k_s,
                cx.dq_dv,
                cx.dvdot_dv,
                cx.dv_dv,
                cx.force_weight,
                cx.load_factor,
            ],
        }
    }
}

/// Norms of one assembled residual.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResidualNorms {
    /// `‖r‖₂` of the assembled residual.
    pub norm: f64,
    /// `Σ_k ‖r_k‖`: sum of element residual norms and element-reported force magnitudes
    /// (reference of the convergence test, spec §10).
    pub reference: f64,
}

/// Outcome of one converged Newton solve of a stage.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NewtonReport {
    /// Newton iterations (linear solves).
    pub iterations: usize,
    /// Final residual norm.
    pub residual: f64,
    /// Line-search backtracks.
    pub backtracks: usize,
}

/// Spread of the iteration matrix's entries (largest against the median diagonal) beyond
/// which a singular matrix is blamed on the elements of its largest entry: far beyond the
/// ratios of stiffness to inertia terms of sound models (≈ 1e8 for a steel beam at h = 1e-5),
/// far below where the LU loses every digit (1/ε ≈ 4.5e15).
pub const EXTREME_SPREAD: f64 = 1e14;

/// Statistics of a stage accumulated over a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageSummary {
    /// Stage name (e.g. "smooth").
    pub name: String,
    /// Newton solves performed (more than the steps when a stage repeats within a step).
    pub solves: usize,
    /// Total Newton iterations.
    pub iterations: usize,
    /// Largest Newton iteration count of one solve.
    pub max_iterations: usize,
    /// Total line-search backtracks.
    pub backtracks: usize,
    /// Symbolic LU factorizations (one per pattern while the topology holds).
    pub symbolic_factorizations: usize,
    /// Numeric LU factorizations.
    pub numeric_factorizations: usize,
    /// Of these, sparse ones that searched pivots and built the factors' structure (not the
    /// dense ones, nor refactorizations along a stored, adopted ([`Stage::adopt_pivot_order`])
    /// or diagonal pivot order).
    pub pivot_searches: usize,
    /// Residual-only assemblies (line-search backtracks: no Hessian assembled).
    pub residual_assemblies: usize,
    /// Residual-only convergence checks at the start of a solve (tried when the previous
    /// solve converged at its start, e.g. a correction with nothing to correct): the Hessian
    /// is assembled only if the start point turns out not to be converged.
    pub start_checks: usize,
    /// Solves of a stage that runs the contact-space Gauss–Seidel first that settled without
    /// the residual check of their start point, which a start loaded like the last step's
    /// would fail, and whose settling passed: position corrections after one whose settling
    /// took more than one sweep, a velocity stage's first problem of a step's sequence
    /// ([`Stage::begin_sequence`]) after the last sequence's first was settled (after a run
    /// of 8 such solves, the next checks its start again).
    pub skipped_start_checks: usize,
    /// Residual-only convergence checks after the first correction of a solve (tried when the
    /// previous solve converged after one correction); the Hessian is assembled only if the
    /// check fails.
    pub one_correction_checks: usize,
    /// Solves finished by the contact-space Gauss–Seidel ([`Stage::settle_contacts`]): as the
    /// fallback after the semi-smooth Newton reached its iteration cap, or first
    /// ([`Tolerance::contacts_first`]).
    pub settled: usize,
    /// Gauss–Seidel sweeps over the contacts, over all settlings (passed or not).
    pub settle_sweeps: usize,
    /// Newton corrections made with a reused factorization (modified Newton,
    /// [`Tolerance::jacobian_reuse`]); included in `iterations`.
    pub reused_corrections: usize,
    /// Reused-factorization corrections discarded because they did not reduce `‖r‖` (the
    /// iterate went back to where the correction started; included in `iterations`).
    pub rejected_corrections: usize,
    /// First corrections of [`Tolerance::exact_reuse`] refused (undone, the matrix refreshed;
    /// not counted in `iterations`).
    pub refused_reuses: usize,
    /// Solves that started with the first-order matrix ([`Tolerance::first_order_constraints`]).
    pub first_order_solves: usize,
    /// Solves that left the first-order start ([`Tolerance::first_order_constraints`]) for
    /// exact Newton: a correction with the first-order matrix contracted less than
    /// `REFINE_RATE`, or refining ran out.
    pub first_order_fallbacks: usize,
    /// Wall-clock time of the stage's parts (zero unless [`Stage::set_timing`] is on).
    pub times: StageTimes,
}

/// One stage: unknowns, pattern, factorization, multipliers and statistics.
pub struct Stage {
    name: String,
    level: Level,
    /// Pattern, slot map, matrix values and right-hand side. (With
    /// [`Stage::defer_contact_pattern`], the pattern may leave the contacts out until a Newton
    /// assembly needs them.)
    pub system: LevelSystem,
    lu: Lu,
    mult: Vec<f64>,
    saved_mult: Vec<f64>,
    delta: Vec<f64>,
    r_loc: DVector<f64>,
    h_loc: DMatrix<f64>,
    summary: StageSummary,
    /// Measure [`StageSummary::times`] ([`Stage::set_timing`]).
    timing: bool,
    /// The previous solve converged at its start point (no correction): the next one checks
    /// its start with a residual-only assembly first.
    converged_at_start: bool,
    /// The previous solve converged after exactly one correction (e.g. a correction stage
    /// without contacts, which is linear or nearly so): after the first correction of the next
    /// one, the convergence check is a residual-only assembly, and the Hessian is assembled
    /// only if the check fails.
    converged_in_one: bool,
    /// The last solve's start point needed the contact settling of a stage that runs it first
    /// ([`Tolerance::contacts_first`]), and the settling took more than one sweep: the next
    /// position correction settles without checking its start point (inside a resting pile,
    /// every one).
    settle_at_once: bool,
    /// The last sequence's first solve ([`Stage::begin_sequence`]) was settled by the
    /// Gauss–Seidel run first: the next sequence's first solve settles without checking its
    /// start.
    first_settle_at_once: bool,
    /// The next solve is the first of a sequence ([`Stage::begin_sequence`]).
    sequence_start: bool,
    /// Consecutive solves that settled at once (at most `SETTLE_AT_ONCE_RUN`, then a start
    /// check): position corrections, and a velocity stage's sequences' first solves.
    settled_at_once: u32,
    /// Element handles the pattern was built for (element order) and the model topology.
    handles: Vec<ElementId>,
    topology: u64,
    /// Local systems of a block of elements of a parallel assembly, each
    /// `[reference, r (max), H (max²)]`.
    local: Vec<f64>,
    /// The assembly path serving each kind (residual only, with the matrix) on a thread pool.
    path_choice: [assembly::PathChoice; 2],
    /// The step factors of the matrix factorized in `lu`, while that factorization is valid
    /// (modified Newton may reuse it).
    factorized_for: Option<MatrixFactors>,
    /// A factorization beside the Newton loop's, for [`Stage::determinant`] and
    /// [`Stage::settle_contacts`] (created at its first use).
    side_lu: Option<Lu>,
    /// Work arrays of [`Stage::settle_contacts`].
    settle_work: settle::SettleWork,
    /// Build the contacts' part of the matrix pattern only when a Hessian assembly needs it
    /// ([`Stage::defer_contact_pattern`]).
    defer_contact_pattern: bool,
    /// The system's pattern leaves the contacts out ([`LevelSystem::without`]) until a
    /// Hessian assembly with them (`Stage::full_pattern`).
    pattern_pending: bool,
    /// Inside [`Stage::settle_contacts`], which assembles the matrix without the contacts.
    settling: bool,
    /// Per element: its contact takes part in the current problem ([`Stage::set_admissible`]).
    admissible: Vec<bool>,
    /// Constant term added to the node rows of the residual ([`Stage::constant_residual_mut`];
    /// empty: none).
    constant: Vec<f64>,
    /// Per element: what its last evaluation recorded for `level_converged`
    /// ([`saltus_core::LevelHook::Memo`]).
    memos: Vec<LevelMemo>,
    /// The last assembly was at the state the last solve converged to (so `memos` describe
    /// it).
    memos_at_solution: bool,
    /// [`Tolerance::exact_reuse`]: solves to wait before the next attempt, and the wait
    /// after the next refusal (doubled per refusal up to `EXACT_REUSE_MAX_WAIT`, 1 after a
    /// success).
    reuse_wait: u32,
    reuse_backoff: u32,
    /// The same for the donor factorization of [`Stage::newton_after`].
    donor_wait: u32,
    donor_backoff: u32,
    /// The same for [`Tolerance::first_order_constraints`] (after a solve that had to switch
    /// to exact Newton).
    first_order_wait: u32,
    first_order_backoff: u32,
    /// The same for the stage's own factorization as a refining probe (`Probe::Own`).
    own_wait: u32,
    own_backoff: u32,
    /// A contact takes part in the stage (its rows change with the statuses).
    has_contacts: bool,
    /// Per element: [`saltus_core::stage::may_be_inert`] at this stage's level (the others
    /// skip the inert test of residual-only assemblies).
    inert_candidates: Vec<bool>,
}

/// Fewest elements for which a stage assembles in parallel (below, thread hand-off costs more
/// than it saves).
pub const PARALLEL_MIN_ELEMENTS: usize = 32;

impl Stage {
    /// A stage named `name` whose raw elements contribute at `level` (physics-interface elements
    /// take part according to the stage context), over the elements of `model`. The pattern's
    /// symbolic LU analysis is done here, so solves allocate nothing.
    pub fn new(
        name: impl Into<String>,
        level: Level,
        model: &Model,
        state: &State,
    ) -> Result<Self, SolveError> {
        let system = LevelSystem::new(level, model.nodes(), &state.numbering, model.elements(), 0);
        let name = name.into();
        let mut stage = Self {
            lu: Lu::new(),
            mult: Vec::new(),
            saved_mult: Vec::new(),
            delta: Vec::new(),
            r_loc: DVector::zeros(0),
            h_loc: DMatrix::zeros(0, 0),
            summary: StageSummary {
                name: name.clone(),
                ..Default::default()
            },
            timing: false,
            converged_at_start: false,
            converged_in_one: false,
            settle_at_once: false,
            first_settle_at_once: false,
            sequence_start: false,
            settled_at_once: 0,
            name,
            level,
            system,
            handles: Vec::new(),
            topology: 0,
            local: Vec::new(),
            path_choice: Default::default(),
            factorized_for: None,
            side_lu: None,
            settle_work: Default::default(),
            defer_contact_pattern: false,
            pattern_pending: false,
            settling: false,
            admissible: Vec::new(),
            constant: Vec::new(),
            memos: Vec::new(),
            memos_at_solution: false,
            reuse_wait: 0,
            reuse_backoff: 1,
            donor_wait: 0,
            donor_backoff: 1,
            first_order_wait: 0,
            first_order_backoff: 1,
            own_wait: 0,
            own_backoff: 1,
            has_contacts: false,
            inert_candidates: Vec::new(),
        };
        stage.install(None, model)?;
        Ok(stage)
    }

    /// Take `system` (or keep the current one) as the stage's pattern for the model's current
    /// elements: buffers sized to it, zero multipliers, and the symbolic LU analysis (now for
    /// the current one, at the first factorization for a new `system`).
    fn install(&mut self, system: Option<LevelSystem>, model: &Model) -> Result<(), SolveError> {
        // No factorization survives a pattern change, even if the analysis below fails.
        self.factorized_for = None;
        // Contacts' multipliers (Signorini, Coulomb) change status from iteration to iteration:
        // order their stage's unknowns so that the pivots stay on the diagonal whatever the
        // statuses (see `saltus_core::linear`); joint-only stages keep COLAMD, whose order
        // fills less on chains (the pivot order found once serves every refactorization).
        let s = system.as_ref().unwrap_or(&self.system);
        let with_contacts = model
            .elements()
            .iter()
            .enumerate()
            .any(|(ie, e)| s.active[ie] && e.as_contact().is_some());
        self.lu.set_primary(with_contacts.then_some(s.n_node_dofs));
        self.has_contacts = with_contacts;
        match system {
            // A rebuild after a topology change: the analysis of a new pattern waits for the
            // stage's first factorization (`Lu::factorize` analyzes a new generation), so that
            // the many steps of a run with contacts found at run time whose corrections converge
            // at their start check (no factorization) skip it. Such a step allocates anyway.
            Some(system) => self.system = system,
            None => analyze(&mut self.lu, &self.system, self.level)?,
        }
        let system = &self.system;
        let n_mult = system.n - system.n_node_dofs;
        self.mult = vec![0.0; n_mult];
        self.saved_mult = vec![0.0; n_mult];
        self.delta = vec![0.0; system.n];
        self.r_loc = DVector::zeros(system.max_local);
        self.h_loc = DMatrix::zeros(system.max_local, system.max_local);
        self.handles = model.element_handles().to_vec();
        self.topology = model.topology();
        self.admissible = vec![true; model.elements().len()];
        self.memos = vec![LevelMemo::default(); model.elements().len()];
        self.inert_candidates = model
            .elements()
            .iter()
            .map(|e| saltus_core::stage::may_be_inert(e.as_ref(), self.level))
            .collect();
        self.memos_at_solution = false;
        self.constant.clear();
        self.summary.symbolic_factorizations = self.lu.symbolic_count;
        self.factorized_for = None;
        Ok(())
    }

    /// Whether the model's element set changed since the pattern was built.
    pub fn is_stale(&self, model: &Model) -> bool {
        self.topology != model.topology()
    }

    /// Rebuild the pattern and the buffers for the model's current element set (a no-op when
    /// it has not changed); the symbolic LU analysis is redone at the next factorization,
    /// unless the matrix pattern is unchanged. The multipliers of elements that remain
    /// are carried over by handle; new elements start from zero. A correction stage with
    /// [`Stage::defer_contact_pattern`] leaves the contacts out of the pattern until a Hessian
    /// assembly needs them.
    pub fn rebuild(&mut self, model: &Model, state: &State) -> Result<(), SolveError> {
        if !self.is_stale(model) {
            return Ok(());
        }
        let defer =
            self.defer_contact_pattern && matches!(self.level, Level::Position | Level::Velocity);
        let system = self.next_system(model, state, defer);
        let mut mult = vec![0.0; system.n - system.n_node_dofs];
        for (old, handle) in self.handles.iter().enumerate() {
            if let Some(ie) = model.element_index(*handle) {
                let (a, n) = self.system.mult_range[old];
                let (b, m) = system.mult_range[ie];
                if n == m {
                    mult[b..b + m].copy_from_slice(&self.mult[a..a + n]);
                }
            }
        }
        self.install(Some(system), model)?;
        self.mult = mult;
        self.pattern_pending = defer && self.has_contacts;
        Ok(())
    }

    /// The system of the model's current elements (`without_contacts`: the contacts out of
    /// the matrix pattern), under the current pattern generation if its pattern is the
    /// current one (elements that take no part in the stage, e.g. contacts at the smooth
    /// stage, leave it as it was: its LU analysis and pivot order are kept), else the next.
    fn next_system(&self, model: &Model, state: &State, without_contacts: bool) -> LevelSystem {
        let generation = self.system.generation + 1;
        let (nodes, numbering, elements) = (model.nodes(), &state.numbering, model.elements());
        let mut system = if without_contacts {
            LevelSystem::without(self.level, nodes, numbering, elements, generation, &|e| {
                e.as_contact().is_some()
            })
        } else {
            LevelSystem::new(self.level, nodes, numbering, elements, generation)
        };
        if system.same_pattern(&self.system) {
            system.generation = self.system.generation;
        }
        system
    }

    /// Build a correction stage's contact pattern only when a Hessian assembly with the
    /// contacts needs it: after each topology change the stage's pattern leaves the contacts
    /// out ([`LevelSystem::without`]) until then. For a stage solved by the contact-space
    /// Gauss–Seidel first (`ContactSolver::GaussSeidel`), whose Newton seldom runs: a granular
    /// model changes its contact set nearly every step, and the contacts' blocks are most of
    /// the pattern.
    pub fn defer_contact_pattern(&mut self, on: bool) {
        self.defer_contact_pattern = on;
    }

    /// Complete a pattern left without the contacts (`pattern_pending`): the same unknowns,
    /// multipliers and unknown lists, all elements' blocks.
    pub(super) fn full_pattern(&mut self, model: &Model, state: &State) {
        if !self.pattern_pending {
            return;
        }
        let mut system = self.next_system(model, state, false);
        system.active.copy_from_slice(&self.system.active);
        let without = std::mem::replace(&mut self.system, system);
        self.settle_work
            .adopt((self.topology, self.system.generation), without);
        self.factorized_for = None;
        self.pattern_pending = false;
    }

    /// The stage's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The level raw elements evaluate at.
    pub fn level(&self) -> Level {
        self.level
    }

    /// Statistics accumulated so far.
    pub fn summary(&self) -> &StageSummary {
        &self.summary
    }

    /// Forget the Newton statistics so far (solves, iterations, backtracks, times;
    /// factorization counts are kept), e.g. after a scheme's start-up solve.
    pub fn clear_statistics(&mut self) {
        let s = &mut self.summary;
        s.times = Default::default();
        s.solves = 0;
        s.iterations = 0;
        s.max_iterations = 0;
        s.backtracks = 0;
        s.residual_assemblies = 0;
        s.start_checks = 0;
        s.one_correction_checks = 0;
        s.skipped_start_checks = 0;
        s.reused_corrections = 0;
        s.rejected_corrections = 0;
        s.refused_reuses = 0;
        s.first_order_fallbacks = 0;
        s.first_order_solves = 0;
    }

    /// All multipliers of the stage (element order, scaled by the stage's `k`).
    pub fn multipliers(&self) -> &[f64] {
        &self.mult
    }

    /// Whether contact elements take part in the stage, as of its last rebuild (their matrix
    /// pattern may be deferred, [`Stage::defer_contact_pattern`]).
    pub fn has_contacts(&self) -> bool {
        self.has_contacts
    }

    /// All multipliers of the stage, mutable (e.g. a scheme's starting point for a solve).
    pub fn multipliers_mut(&mut self) -> &mut [f64] {
        &mut self.mult
    }

    /// Multipliers of element `ie` (empty if it has none at this stage).
    pub fn element_multipliers(&self, ie: usize) -> &[f64] {
        let (a, n) = self.system.mult_range[ie];
        &self.mult[a..a + n]
    }

    /// Zero the multipliers and the shared node unknowns (start of a solve).
    pub fn reset(&mut self, state: &mut State) {
        state.reset_unknowns();
        self.mult.fill(0.0);
    }

    /// Add element `ie`'s local node-row vector `r` (its first node unknowns, local order) to the
    /// constant residual ([`Stage::constant_residual_mut`], which must have been sized);
    /// entries of fixed nodes are dropped.
    pub fn add_constant_residual(&mut self, ie: usize, r: &[f64]) {
        let n_dofs = self.system.n_node_dofs;
        for (&g, v) in self.system.element_dofs(ie).iter().zip(r) {
            if g < n_dofs {
                self.constant[g] += v;
            }
        }
    }

    /// What element `ie`'s evaluation at the state of the last converged solve recorded for
    /// its `level_converged` ([`saltus_core::LevelHook::Memo`]); `None` when the stage cannot
    /// vouch for it (a solve that ended on a stagnated correction, [`Stage::forget_memos`]).
    pub fn memo(&self, ie: usize) -> Option<&LevelMemo> {
        self.memos_at_solution
            .then(|| &self.memos[ie])
            .filter(|m| m.level == Some(self.level))
    }

    /// The recorded memos no longer describe the stage's result (e.g. the multipliers were
    /// replaced after the solve).
    pub fn forget_memos(&mut self) {
        self.memos_at_solution = false;
    }

    /// Zero the node unknowns and scale the multipliers by `factor`: a solve that starts from
    /// the last one's multipliers (their scaling `k` changed by `1/factor`, e.g. `k_s = m/h`
    /// after a step-size change), which changes the Newton path, not the solution.
    pub fn reset_scaling_multipliers(&mut self, state: &mut State, factor: f64) {
        state.reset_unknowns();
        for m in &mut self.mult {
            *m *= factor;
        }
    }

    /// Zero the multipliers only (the node unknowns keep their values): a further problem of a
    /// repeated stage with fresh multipliers (e.g. the impact problems of `nsga.md` §9).
    pub fn reset_multipliers(&mut self) {
        self.mult.fill(0.0);
    }

    /// Set the multipliers of the elements taking part (active and admissible) to their
    /// [`saltus_core::Element::warm_start`] guesses for a solve of `cx` (after a reset: the
    /// others stay zero). Only the first Newton iterate changes, not the converged solution.
    pub fn warm_start(&mut self, model: &Model, cx: &StepCx) {
        for (ie, element) in model.elements().iter().enumerate() {
            let (a, n) = self.system.mult_range[ie];
            if n == 0 || !self.system.active[ie] || !self.admissible[ie] {
                continue;
            }
            element.warm_start(cx, &mut self.mult[a..a + n]);
        }
    }

    /// Mutable multipliers of element `ie` (empty if it has none at this stage).
    pub fn element_multipliers_mut(&mut self, ie: usize) -> &mut [f64] {
        let (a, n) = self.system.mult_range[ie];
        &mut self.mult[a..a + n]
    }

    /// Whether element `ie`'s contact takes part in the stage's current problem
    /// ([`saltus_core::LocalState::admissible`]; `true` unless set otherwise).
    pub fn set_admissible(&mut self, ie: usize, admissible: bool) {
        if self.admissible[ie] != admissible {
            // The element's rows change (law rows or forced-gap rows): the factorization is
            // no longer this stage's matrix, not even approximately.
            self.factorized_for = None;
            self.admissible[ie] = admissible;
        }
    }

    /// The next solve is the first of a sequence of problems within one step (NSGA's velocity
    /// jump: the first impact problem, or the one simultaneous problem). A stage that runs
    /// the Gauss–Seidel first settles such a solve without its start check when the last
    /// sequence's first solve was settled (a resting pile's loaded contacts fail that check
    /// every step); the sequence's later solves keep their checks.
    pub fn begin_sequence(&mut self) {
        self.sequence_start = true;
    }

    /// Every element takes part again ([`Stage::set_admissible`]).
    pub fn clear_admissible(&mut self) {
        if self.admissible.iter().any(|&a| !a) {
            self.factorized_for = None;
            self.admissible.fill(true);
        }
    }

    /// A constant vector `c` over the node unknowns added to the stage residual, `r + c`, and
    /// its norm to the convergence reference (e.g. the accumulated impulses `−P` of earlier
    /// impact problems, `nsga.md` §9). Empty (the default): none. Resize it to
    /// `system.n_node_dofs` to use it; [`Stage::rebuild`] clears it.
    pub fn constant_residual_mut(&mut self) -> &mut Vec<f64> {
        &mut self.constant
    }

    /// Factorize the assembled matrix and solve `S Δ = −r` into the stage's correction.
    ///
    /// The multiplier block of the iteration matrix is regularized by `−ε k²/p` (ε =
    /// [`REGULARIZATION`]): redundant constraints (a planar mechanism built from 3-D joints, a
    /// stick row repeating a joint row) make the exact saddle-point matrix singular. Only the
    /// Jacobian is modified, never the residual, so the converged state still satisfies the
    /// exact equations; redundant multipliers are split along the Newton path.
    pub fn solve(&mut self, cx: &StepCx, step: usize) -> Result<(), SolveError> {
        self.solve_with(cx, step, true, None)
    }

    /// [`Stage::solve`], with the factorization of the last factorized matrix when `refactor`
    /// is false (modified Newton).
    /// `donor`: solve with another stage's factorization instead (see [`Stage::newton_after`]).
    fn solve_with(
        &mut self,
        cx: &StepCx,
        step: usize,
        refactor: bool,
        donor: Option<&mut Lu>,
    ) -> Result<(), SolveError> {
        let (level, t) = (cx.level, cx.t);
        let err = |source| SolveError::Linear {
            step,
            t,
            level,
            source,
        };
        for (d, r) in self.delta.iter_mut().zip(&self.system.rhs) {
            *d = -r;
        }
        match donor {
            // The own fresh factorization solves on the way (`Lu::factorize_solve`).
            None if refactor => {
                let mut delta = std::mem::take(&mut self.delta);
                let solved = self.factorize(cx, Some(&mut delta));
                self.delta = delta;
                solved.map_err(err)?;
            }
            donor => {
                if refactor {
                    self.factorize(cx, None).map_err(err)?;
                }
                donor
                    .unwrap_or(&mut self.lu)
                    .solve_in_place(&mut self.delta)
                    .map_err(err)?;
            }
        }
        if self.delta.iter().any(|v| !v.is_finite()) {
            return Err(SolveError::NonFinite {
                step,
                t,
                level,
                what: "Newton correction (singular iteration matrix: redundant constraints, or a motion without mass?)".into(),
            });
        }
        Ok(())
    }

    /// A singular iteration matrix whose entries span more than [`EXTREME_SPREAD`] (largest
    /// entry against the median diagonal): name the elements on the largest entry's unknowns,
    /// whose parameters are then the likely cause (e.g. a Young's modulus of 1e308). Other
    /// errors pass unchanged. Runs only after a failure.
    fn blame_extreme_entries(&self, model: &Model, e: SolveError) -> SolveError {
        let SolveError::NonFinite {
            step,
            t,
            level,
            what,
        } = e
        else {
            return e;
        };
        let m = &self.system.matrix;
        // The largest entry, and the largest off the diagonal: an off-diagonal entry names the
        // coupling element alone (a diagonal one is shared with every mass on the node).
        let (mut amax, mut at) = (0.0f64, (0, 0));
        let (mut omax, mut oat) = (0.0f64, None);
        let mut diag = Vec::new();
        for (col, vec) in m.outer_iterator().enumerate() {
            for (row, &v) in vec.iter() {
                let a = if v.is_finite() {
                    v.abs()
                } else {
                    f64::INFINITY
                };
                if a > amax {
                    amax = a;
                    at = (row, col);
                }
                if row != col && a > omax {
                    omax = a;
                    oat = Some((row, col));
                }
                if row == col && a > 0.0 {
                    diag.push(a);
                }
            }
        }
        diag.sort_by(f64::total_cmp);
        let median = diag.get(diag.len() / 2).copied().unwrap_or(0.0);
        if !(median > 0.0 && (amax / median > EXTREME_SPREAD || !amax.is_finite())) {
            return SolveError::NonFinite {
                step,
                t,
                level,
                what,
            };
        }
        if let Some(o) = oat.filter(|_| omax / median > EXTREME_SPREAD) {
            at = o;
        }
        let names: Vec<String> = (0..model.elements().len())
            .filter(|&ie| {
                self.system.active[ie] && {
                    let d = self.system.element_dofs(ie);
                    d.contains(&at.0) && d.contains(&at.1)
                }
            })
            .map(|ie| format!("element `{}`", model.element_names()[ie]))
            .collect();
        SolveError::NonFinite {
            step,
            t,
            level,
            what: format!(
                "Newton correction: the iteration matrix is singular to working precision, its \
                 entries reaching {amax:.1e} against a median diagonal of {median:.1e}; the \
                 largest come from {}",
                names.join(", ")
            ),
        }
    }

    /// Regularize the multiplier block of the assembled matrix (see [`Stage::solve`]) and
    /// factorize it; with `rhs`, also solve it in place.
    fn factorize(&mut self, cx: &StepCx, rhs: Option<&mut [f64]>) -> Result<(), LinearError> {
        self.regularize(cx);
        self.factorized_for = None;
        let clock = self.clock();
        let (a, generation) = (&self.system.matrix, self.system.generation);
        let done = match rhs {
            Some(b) => self.lu.factorize_solve(a, generation, b),
            None => self.lu.factorize(a, generation),
        };
        self.lap(clock, |t| &mut t.factorization);
        done?;
        self.factorized_for = Some(MatrixFactors::of(cx));
        Ok(())
    }

    /// Add the multiplier-block regularization `−ε k²/p` to the assembled matrix (once per
    /// assembly; see [`Stage::solve`]).
    fn regularize(&mut self, cx: &StepCx) {
        self.system
            .add_to_multiplier_diagonal(-REGULARIZATION * cx.k * cx.k / cx.p);
    }

    /// Sign and magnitude of the determinant of the stage's iteration matrix at the current
    /// state and multipliers: assemble, regularize and factorize exactly as a Newton iteration
    /// would (the stage's correction is left unchanged). A numerically singular matrix gives
    /// sign 0. Used to monitor the stability of static equilibria (see `crate::statics`).
    ///
    /// The factorization is a separate one (the Newton loop's factorization and its pivot
    /// order are left as they were, so monitoring does not change the solver's arithmetic).
    pub fn determinant(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        step: usize,
    ) -> Result<Determinant, SolveError> {
        self.assemble(model, state, cx, step, None)?;
        self.regularize(cx);
        let lu = self.side_lu.get_or_insert_with(Lu::new);
        match lu.factorize(&self.system.matrix, self.system.generation) {
            Ok(()) => Ok(lu.determinant().unwrap_or(SINGULAR)),
            // A column without a nonzero pivot candidate (singular).
            Err(LinearError::Numeric(_)) => Ok(SINGULAR),
            Err(source) => Err(SolveError::Linear {
                step,
                t: cx.t,
                level: cx.level,
                source,
            }),
        }
    }

    /// Eigenvalue of smallest magnitude of the pencil `(S, diag(I, 0))` — `S` the matrix of
    /// the last [`Stage::determinant`], identity on the node unknowns, zero on the multipliers
    /// — by subspace iteration on `S⁻¹` with the existing factorization (no new one; a block of
    /// [`EIGEN_BLOCK`] vectors and a Rayleigh–Ritz step, so that a cluster of nearly equal
    /// eigenvalues — two bending planes of a symmetric section — settles as fast as a single
    /// one). It is the eigenvalue nearest zero of the stiffness reduced to the constraint
    /// tangent space (exactly: of the penalty form `K + (k²/δ) G_qᵀ G_q` that the
    /// regularization `−δ` of the multiplier block makes of it; its eigenvalues off the tangent
    /// space are `O(1/δ)`). The Ritz step uses the symmetric part (the matrix is symmetric at
    /// an equilibrium of a conservative system up to round-off). The metric is the Euclidean
    /// one of the node unknowns, which mixes N/m (translations) and N m/rad (rotations): the
    /// value is a margin whose sign and zero crossing are meaningful, not a physical stiffness
    /// (for point nodes only it is one, in N/m).
    ///
    /// `None` if there is no valid factorization or the value has not settled to a relative
    /// change of `tol` within `max_iterations` block solves (e.g. a complex pair of a strongly
    /// unsymmetric matrix).
    pub fn smallest_eigenvalue(&mut self, max_iterations: usize, tol: f64) -> Option<f64> {
        let (n, nd) = (self.system.n, self.system.n_node_dofs);
        let lu = self.side_lu.as_mut()?;
        if nd == 0 || lu.determinant().is_none_or(|d| d.sign == 0) {
            return None;
        }
        let p = EIGEN_BLOCK.min(nd);
        // Deterministic pseudo-random start (not orthogonal to any mode by symmetry).
        let mut x = DMatrix::<f64>::zeros(nd, p);
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for v in x.iter_mut() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *v = (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        }
        let mut y = DMatrix::<f64>::zeros(nd, p);
        let mut rhs = vec![0.0; n];
        let mut last = f64::NAN;
        for _ in 0..max_iterations {
            if !orthonormalize(&mut x) {
                return None;
            }
            // Y = node part of S⁻¹ [X; 0].
            for j in 0..p {
                rhs[..nd].copy_from_slice(x.column(j).as_slice());
                rhs[nd..].fill(0.0);
                lu.solve_in_place(&mut rhs).ok()?;
                y.column_mut(j).copy_from_slice(&rhs[..nd]);
            }
            // Rayleigh–Ritz: eigenvalues θ of Xᵀ S_r⁻¹ X; the largest |θ| is 1/μ nearest zero.
            let h = x.tr_mul(&y);
            let h = (&h + h.transpose()) * 0.5;
            let theta = h.symmetric_eigenvalues();
            let top = theta
                .iter()
                .copied()
                .fold(0.0, |a: f64, t| if t.abs() > a.abs() { t } else { a });
            let mu = 1.0 / top;
            if !mu.is_finite() {
                return None;
            }
            if (mu - last).abs() <= tol * mu.abs() {
                return Some(mu);
            }
            last = mu;
            std::mem::swap(&mut x, &mut y);
        }
        None
    }

    /// Start this stage's first factorization from `other`'s pivot order when their
    /// iteration matrices have the same pattern and `other` has factorized (see
    /// [`Lu::adopt_pivot_order`]): a refactorization instead of a pivot search. Returns
    /// whether it was taken. Cheap when there is nothing to take: the patterns are compared
    /// only when this stage has no factors and `other` has.
    pub fn adopt_pivot_order(&mut self, other: &Stage) -> bool {
        self.lu.analyzed_for(self.system.generation)
            && other.lu.analyzed_for(other.system.generation)
            && self.lu.may_adopt(&other.lu)
            && self.system.same_pattern(&other.system)
            && self.lu.adopt_pivot_order(&other.lu)
    }

    /// Number of multiplier unknowns of the stage (rows of the constraint block).
    pub fn n_multipliers(&self) -> usize {
        self.mult.len()
    }
}

/// Block size of the subspace iteration of [`Stage::smallest_eigenvalue`].
pub const EIGEN_BLOCK: usize = 4;

/// Orthonormalize the columns of `x` (modified Gram–Schmidt, twice for round-off); `false` if
/// they are (numerically) dependent or not finite.
fn orthonormalize(x: &mut DMatrix<f64>) -> bool {
    for j in 0..x.ncols() {
        for _ in 0..2 {
            for i in 0..j {
                let d = x.column(i).dot(&x.column(j));
                let ci = x.column(i).clone_owned();
                x.column_mut(j).axpy(-d, &ci, 1.0);
            }
        }
        let norm = x.column(j).norm();
        if !(norm > 1e-300 && norm.is_finite()) {
            return false;
        }
        x.column_mut(j).scale_mut(1.0 / norm);
    }
    true
}

/// The determinant of a singular matrix.
const SINGULAR: Determinant = Determinant {
    sign: 0,
    ln_abs: f64::NEG_INFINITY,
};

/// Relative regularization of the multiplier diagonal of the iteration matrices (see
/// [`Stage::solve`]): small enough to leave Newton's convergence quadratic in practice,
/// large enough to keep redundant constraint sets factorizable in double precision.
pub const REGULARIZATION: f64 = 1e-10;

/// Symbolic LU analysis of the stage's pattern when it is built, outside the steps' Newton
/// loops (a rebuilt pattern is analyzed at its first factorization, see `Stage::install`).
fn analyze(lu: &mut Lu, system: &LevelSystem, level: Level) -> Result<(), SolveError> {
    lu.analyze(&system.matrix, system.generation)
        .map_err(|source| SolveError::Linear {
            step: 0,
            t: 0.0,
            level,
            source,
        })
}
