//! The Newton loop of a stage: convergence test, full or modified Newton corrections, line
//! search, round-off stagnation, and the contact-space Gauss–Seidel first
//! (`Tolerance::contacts_first`) or as the fallback at the iteration cap.

use super::{MatrixFactors, NewtonReport, ResidualNorms, Settled, Stage, Tolerance};
use crate::error::SolveError;
use crate::state::State;
use saltus_core::linear::Lu;
use saltus_core::stage::MatrixTerms;
use saltus_core::{Level, Model, NodeKind, StepCx};

impl Stage {
    /// Newton loop on this stage (step index `step` for error messages). Each iteration
    /// assembles, tests convergence, solves `S Δ = −r`, adds the node part of `Δ` to
    /// [`State::unknown`] and the multiplier part to the stage's multipliers, then calls
    /// `update(state)` to recompute the node states from the unknowns. With
    /// [`Tolerance::jacobian_reuse`], `S` is the last factorized iteration matrix while it
    /// contracts well (modified Newton; only the residual is assembled). Allocation-free.
    pub fn newton(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        smooth: Option<&Stage>,
        update: impl FnMut(&mut State),
    ) -> Result<NewtonReport, SolveError> {
        let clock = self.clock();
        let report = self.newton_inner(model, state, cx, tol, step, smooth, None, update);
        self.lap(clock, |t| &mut t.total);
        report
    }

    /// [`Stage::newton`] whose first corrections may use `donor`'s current factorization instead of
    /// assembling and factorizing its own (with [`Tolerance::exact_reuse`]): refining corrections,
    /// each of which must contract `‖r‖` by `REFINE_RATE` (5·10⁻²) or reach the tolerance with a
    /// decrease (`probe_served`), until the stage's convergence test passes, at most
    /// `REFINE_CORRECTIONS` (3); a correction that does neither, or the last one short of the
    /// tolerance, is undone and the stage factorizes its own matrix where it started. For a stage
    /// whose matrix nearly equals another's at the same state: NSGA's velocity jump after the
    /// position correction of a model without contacts, both `M` and the joints' `k G` at `q_{n+1}`
    /// up to the last position correction (forces enter the position matrix with `h²/2 ∂f/∂q` and
    /// the velocity one with `h ∂f/∂v`: a stiff beam's probe is refused, and the stage then waits
    /// 1, 2, 4, … 64 solves before it tries again). Used only when the two stages have the same
    /// unknowns (node numbering and multiplier layout), the same multiplier scaling `k`, `p`, and
    /// no contact takes part in this one.
    #[allow(clippy::too_many_arguments)]
    pub fn newton_after(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        smooth: Option<&Stage>,
        donor: &mut Stage,
        update: impl FnMut(&mut State),
    ) -> Result<NewtonReport, SolveError> {
        let usable = tol.exact_reuse
            && !self.has_contacts
            && donor
                .factorized_for
                .is_some_and(|f| f.factors[1..3] == [cx.k, cx.p])
            && donor.system.n == self.system.n
            && donor.system.n_node_dofs == self.system.n_node_dofs
            && donor.system.mult_range == self.system.mult_range;
        let donor = usable.then_some(&mut donor.lu);
        let clock = self.clock();
        let report = self.newton_inner(model, state, cx, tol, step, smooth, donor, update);
        self.lap(clock, |t| &mut t.total);
        report
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn newton_inner(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        smooth: Option<&Stage>,
        mut donor: Option<&mut Lu>,
        mut update: impl FnMut(&mut State),
    ) -> Result<NewtonReport, SolveError> {
        let mut it = 0;
        // Backtracking (Armijo on ‖r‖, spec §10 "line search"): the last full correction and
        // the iterate it started from, the step fraction and the residual before the step.
        let mut alpha = 1.0;
        let mut prev_norm = f64::INFINITY;
        let mut backtracks = 0;
        let mut total_backtracks = 0;
        // Constraint rows are `k g(q)` when the stage moves the configuration only, `k g_q v`
        // otherwise: their round-off floor scales with positions or velocities.
        let positions = cx.dv_dv == 0.0;
        // After a backtrack only the residual is needed to judge the shortened step; the
        // Hessian is assembled once a point is accepted and needs a Newton correction.
        let mut backtracking = false;
        // A stage that converged at its start last time (e.g. a correction with nothing to
        // correct) first checks its start point with a residual-only assembly.
        let mut start_check = self.converged_at_start;
        // A solve expected to converge after one correction checks that correction's result
        // with a residual-only assembly first (as `start_check` does for the start point).
        let expect_one = self.converged_in_one;
        let mut check_first = false;
        // Modified Newton: the next correction reuses the factorization in `lu` (no Hessian
        // assembled); `reused_step`: the last correction did.
        let factors = MatrixFactors::of(cx);
        // The last iterations before the cap are full Newton ones: a reused matrix must not
        // make a solve fail that Newton would finish.
        let may_reuse =
            |it: usize| tol.jacobian_reuse.is_some() && it + FRESH_BEFORE_CAP < tol.max_iterations;
        // Exact reuse (corrections): the first correction tries the last factorization when
        // the model was at rest at the step start (its matrices then did not change: a
        // resting contact), unless a recent attempt was refused. Otherwise the donor's
        // factorization (`newton_after`): refining corrections (`REFINE_RATE`,
        // `REFINE_CORRECTIONS`); when no donor serves, a stage that does not move the
        // configuration (a velocity jump without contacts) refines with its own last
        // factorization the same way (slider-crank: velocity factorizations 4 999 → 258 in
        // 5 000 steps, 103 → 95 µs/step). (The position correction's own last factorization
        // while the model moves was tried as refining corrections too: chain N = 10 / 100
        // 71 → 90 / 735 → 882 µs/step — half the probes refused, and a residual assembly costs
        // about what a factorization saves.)
        let factorized = self.factorized_for == Some(factors);
        let probe = if factorized
            && tol.exact_reuse
            && self.reuse_wait == 0
            && state.at_rest(cx.h, EXACT_REUSE_REST)
        {
            Probe::Exact
        } else if donor.is_some() && self.donor_wait == 0 {
            Probe::Donor
        } else if factorized
            && tol.exact_reuse
            && self.own_wait == 0
            && cx.dq_dv == 0.0
            && !self.has_contacts
        {
            Probe::Own
        } else {
            Probe::None
        };
        if factorized && tol.exact_reuse && cx.dq_dv == 0.0 && !self.has_contacts {
            self.own_wait = self.own_wait.saturating_sub(1);
        }
        if tol.exact_reuse {
            self.reuse_wait = self.reuse_wait.saturating_sub(1);
        }
        if donor.is_some() {
            self.donor_wait = self.donor_wait.saturating_sub(1);
        }
        // First-order start (`Tolerance::first_order_constraints`), on a stage that moves the
        // configuration and has no contacts (whose semi-smooth Newton needs fresh statuses):
        // the fresh matrices leave out the constraint curvature, and the factorization of
        // each refines while it contracts by REFINE_RATE; then exact Newton.
        let first_order_allowed =
            tol.first_order_constraints && cx.dq_dv != 0.0 && !self.has_contacts;
        let mut first_order = first_order_allowed
            && self.first_order_wait == 0
            && FRESH_BEFORE_CAP < tol.max_iterations;
        if first_order_allowed {
            self.first_order_wait = self.first_order_wait.saturating_sub(1);
        }
        if first_order {
            self.summary.first_order_solves += 1;
        }
        // The correction that led to the current point was made in first-order mode (fresh or
        // refining), and the refining corrections made so far.
        let mut first_order_step = false;
        let mut first_order_refinements = 0;
        let mut reuse = (factorized && may_reuse(0)) || probe != Probe::None;
        // The first correction is the probe (judged by EXACT_REUSE_RATE or REFINE_RATE).
        let mut probing = probe != Probe::None;
        let mut refinements = 0;
        let mut reused_step = false;
        let mut reused = 0;
        let mut rejected = 0;
        self.memos_at_solution = false;
        // The contact-space Gauss–Seidel first (`Tolerance::contacts_first`), once, after a
        // residual-only check of the start point (the settling assembles its own matrix), or
        // at once (below).
        let mut settle_first = tol.contacts_first && self.has_contacts;
        // A position correction whose last start needed the settling settles at once: inside
        // a resting pile its start check is a residual assembly (≈ 8 sweeps' cost at 1 000
        // spheres) that fails every step. Where the check would have failed, skipping it
        // changes nothing else; where it would have passed (the start already converged), the
        // solve ends at the sweeps' converged point instead of the start point, and every
        // solve after a run of `SETTLE_AT_ONCE_RUN` checks its start again, so that a stage that
        // came to rest goes back to its checks. The velocity stage likewise for the first
        // problem of a step's sequence (`Stage::begin_sequence`: the impact sequence, or the
        // one simultaneous problem), when the last sequence's first problem was settled, in any
        // number of sweeps: its loaded contacts' gravity impulse is never at its start point
        // (the smooth velocities), so one sweep there means an exact warm start, not a start
        // that passes (a resting column of three spheres: every start check failed); not its
        // later problems: the sequence's last one usually passes at its start, and
        // settling it instead prolongs the sequence (granular column N = 1 000, every
        // velocity problem at once: 2 828 settled problems became 6 262, 31 → 44 ms/step).
        // If the settling does not pass (or does not apply, or fails: not the solve's
        // error), the Newton starts with the start check, at the sweeps' point if they
        // reduced ‖r‖, else at the start point.
        let mut settled_at_once = None;
        // The solve ended by a settling run first (at once or after the start check).
        let mut by_settling = false;
        let first_of_step = std::mem::take(&mut self.sequence_start);
        if settle_first && !reuse {
            start_check = true;
            let at_once = match cx.level {
                Level::Position => self.settle_at_once,
                Level::Velocity => first_of_step && self.first_settle_at_once,
                _ => false,
            } && self.settled_at_once < SETTLE_AT_ONCE_RUN;
            // (A velocity stage counts its sequences' first solves only.)
            if cx.level != Level::Velocity || first_of_step {
                self.settled_at_once = if at_once { self.settled_at_once + 1 } else { 0 };
            }
            if at_once {
                settle_first = false;
                let settled =
                    self.settle_first(model, state, cx, tol, step, smooth, None, &mut update);
                if let Settled::Passed(norm) = settled {
                    self.summary.skipped_start_checks += 1;
                    by_settling = true;
                    settled_at_once = Some(norm);
                }
            }
        }
        let result = loop {
            if let Some(norm) = settled_at_once.take() {
                break (it, norm);
            }
            let residual_only = backtracking || start_check || check_first || reuse;
            // The correction that led to this point was made with a reused matrix.
            let from_reused = reused_step;
            // (The last iterations before the cap are exact Newton ones.)
            let terms = if first_order && it + FRESH_BEFORE_CAP < tol.max_iterations {
                MatrixTerms::FirstOrderConstraints
            } else {
                MatrixTerms::Exact
            };
            let assembled = if residual_only {
                if backtracking {
                    self.summary.residual_assemblies += 1;
                } else if start_check {
                    self.summary.start_checks += 1;
                } else if check_first {
                    self.summary.one_correction_checks += 1;
                }
                self.assemble_residual(model, state, cx, step, smooth)
            } else {
                self.assemble_with(model, state, cx, step, smooth, terms)
            };
            let ResidualNorms { norm, reference } = match assembled {
                Ok(norms) => norms,
                // A reused matrix's correction that reached a state the elements refuse
                // (non-finite values, an invalid configuration) counts as one that did not
                // reduce ‖r‖: undone below, with a fresh matrix where it started.
                Err(SolveError::NonFinite { .. } | SolveError::Element { .. }) if reused_step => {
                    ResidualNorms {
                        norm: f64::INFINITY,
                        reference: 0.0,
                    }
                }
                Err(e) => return Err(e),
            };
            // Spec §10 test, plus the round-off floor of the constraint rows.
            let tolerance = residual_tolerance(tol, cx, state, reference);
            // The point reached by the exact-reuse probe counts only if its matrix acted as
            // Newton's would (EXACT_REUSE_RATE).
            let probed = probing && reused_step;
            let exact = !probed || probe_served(probe, norm, prev_norm, tolerance);
            // A refining correction that contracted by REFINE_RATE but did not reach the
            // tolerance is followed by another one with the same factorization, up to
            // REFINE_CORRECTIONS.
            let more = probed
                && probe != Probe::Exact
                && exact
                && norm > tolerance
                && refinements < REFINE_CORRECTIONS
                && it + FRESH_BEFORE_CAP < tol.max_iterations;
            if probed && !more {
                probing = false;
                let (wait, backoff) = match probe {
                    Probe::Donor => (&mut self.donor_wait, &mut self.donor_backoff),
                    Probe::Own => (&mut self.own_wait, &mut self.own_backoff),
                    _ => (&mut self.reuse_wait, &mut self.reuse_backoff),
                };
                if exact && norm <= tolerance {
                    *backoff = 1;
                } else {
                    *wait = *backoff;
                    *backoff = (2 * *backoff).min(EXACT_REUSE_MAX_WAIT);
                }
            }
            if norm <= tolerance && exact {
                // The assembly just made is at the solution: its memos describe it.
                self.memos_at_solution = true;
                if settle_first {
                    // Converged before any settling: the next solve checks its start.
                    self.settle_at_once = false;
                }
                if first_order_step {
                    self.first_order_backoff = 1;
                }
                break (it, norm);
            }
            if settle_first {
                settle_first = false;
                // Its errors are not the solve's: Newton takes over from the start point.
                let settled =
                    self.settle_first(model, state, cx, tol, step, smooth, Some(norm), &mut update);
                match settled {
                    Settled::Passed(norm) => {
                        by_settling = true;
                        break (it, norm);
                    }
                    Settled::NotApplicable => {}
                    Settled::NotPassed => {
                        // The sweeps' point if they reduced ‖r‖, else the start point again;
                        // the matrix overwritten: judged afresh.
                        start_check = true;
                        reuse = false;
                        probing = false;
                        prev_norm = f64::INFINITY;
                        continue;
                    }
                }
            }
            if first_order_step {
                first_order_step = false;
                let refine = norm <= REFINE_RATE * prev_norm
                    && first_order_refinements < REFINE_CORRECTIONS
                    && it + FRESH_BEFORE_CAP < tol.max_iterations;
                if refine {
                    // Judged here: not by the modified-Newton test below.
                    first_order_refinements += 1;
                    reused_step = false;
                } else {
                    // Exact Newton from here (or from where the correction started, if it
                    // did not reduce ‖r‖), and a wait before the next first-order start.
                    first_order = false;
                    self.first_order_wait = self.first_order_backoff;
                    self.first_order_backoff =
                        (2 * self.first_order_backoff).min(EXACT_REUSE_MAX_WAIT);
                    self.summary.first_order_fallbacks += 1;
                    reuse = false;
                    reused_step = false;
                    start_check = false;
                    if !(norm.is_finite() && norm < prev_norm) {
                        rejected += 1;
                        self.set_iterate(state, 0.0);
                        update(state);
                    }
                    prev_norm = f64::INFINITY;
                    continue;
                }
            }
            if reused_step && !more {
                reused_step = false;
                let theta = tol.jacobian_reuse.unwrap_or(0.0);
                // Contracted by θ, and at this rate within REUSE_AHEAD more corrections of the
                // tolerance (a slower one costs more residual assemblies than a new matrix).
                let rate = norm / prev_norm;
                let contracted = norm.is_finite()
                    && exact
                    && norm <= theta * prev_norm
                    && norm * rate.powi(REUSE_AHEAD) <= tolerance;
                if !contracted {
                    // Slow contraction: a fresh iteration matrix, here if the correction
                    // reduced ‖r‖, else where it started.
                    reuse = false;
                    start_check = false;
                    let decreased = norm.is_finite() && norm < prev_norm;
                    if probed {
                        // A matrix refused by the exact-reuse test was not this point's: its
                        // correction is undone (keeping it costs the semi-smooth Newton of a
                        // contact network many iterations from a wrong status), and the probe
                        // is not counted as an iteration of the solve.
                        it -= 1;
                        reused -= 1;
                        self.summary.refused_reuses += 1;
                        self.set_iterate(state, 0.0);
                        update(state);
                    } else if !decreased {
                        rejected += 1;
                        self.set_iterate(state, 0.0);
                        update(state);
                    }
                    // The refreshed point is not judged again by the line search.
                    prev_norm = f64::INFINITY;
                    continue;
                }
            }
            let can_backtrack = tol.line_search && it > 0 && backtracks < MAX_BACKTRACKS;
            if !norm.is_finite() && !can_backtrack {
                return Err(SolveError::NonFinite {
                    step,
                    t: cx.t,
                    level: cx.level,
                    what: "assembled residual".into(),
                });
            }
            // Not enough decrease (or a non-finite residual): retry with half the step.
            let sufficient = norm <= (1.0 - ARMIJO * alpha) * prev_norm;
            if can_backtrack && !sufficient {
                alpha *= 0.5;
                backtracks += 1;
                total_backtracks += 1;
                self.set_iterate(state, alpha);
                update(state);
                backtracking = true;
                // A correction that needed shortening: no reuse of its matrix.
                reuse = false;
                continue;
            }
            if it == tol.max_iterations {
                // Semi-smooth Newton fails on degenerate contact networks (redundant contacts
                // whose status sets it cycles through): the contacts are settled by nonsmooth
                // Gauss–Seidel instead ([`Stage::settle_contacts`]).
                if tol.contact_fallback {
                    if let Settled::Passed(norm) = self.settle_contacts(
                        model,
                        state,
                        cx,
                        tol,
                        step,
                        smooth,
                        Some(norm),
                        &mut update,
                    )? {
                        self.memos_at_solution = true;
                        break (it, norm);
                    }
                }
                return Err(SolveError::NonConvergence {
                    step,
                    t: cx.t,
                    level: cx.level,
                    iterations: it,
                    residual: norm,
                    tolerance,
                });
            }
            if (backtracking || start_check || check_first) && !reuse {
                // The accepted backtracked point, or a start point (or a first correction's
                // result) that needs a correction after all: its Hessian (same residual).
                self.assemble_with(model, state, cx, step, smooth, terms)?;
            }
            backtracking = false;
            start_check = false;
            if probing {
                refinements += 1;
            }
            // The donor's factorization serves the probe only.
            let lu = if probing && probe == Probe::Donor {
                donor.as_deref_mut()
            } else {
                None
            };
            self.solve_with(cx, step, !reuse, lu)
                .map_err(|e| self.blame_extreme_entries(model, e))?;
            reused_step = reuse;
            if reuse {
                reused += 1;
            }
            first_order_step = first_order && !probing && terms != MatrixTerms::Exact;
            let nd = self.system.n_node_dofs;
            // Round-off plateau: a correction below the resolution of the unknowns cannot
            // reduce the residual further; nor can one below `tol` (relative to the corrected
            // quantities) once the residual has stopped decreasing — the residual is then at
            // the round-off floor of forces computed from absolute coordinates (e.g. EA ε|x|/L of
            // a stiff beam), which the residual test cannot know. Judged on Newton corrections
            // with a fresh matrix only (a reused one is judged by its contraction).
            let (sn, sm) = (state.scale(positions), amax(&self.mult));
            let (dn, dm) = (amax(&self.delta[..nd]), amax(&self.delta[nd..]));
            let at_round_off = dn <= STAGNATION * (1.0 + sn) && dm <= STAGNATION * (1.0 + sm);
            // (Judged on consecutive fresh corrections: a reused matrix contracts slowly by design.)
            let plateau = it > 0
                && !from_reused
                && norm > 0.5 * prev_norm
                && norm <= PLATEAU_FACTOR * tolerance
                && dn <= tol.tol * (1.0 + sn)
                && dm <= tol.tol * (1.0 + sm);
            let stagnated = !reused_step && (at_round_off || plateau);
            state.saved_unknown.copy_from_slice(&state.unknown);
            self.saved_mult.copy_from_slice(&self.mult);
            // Damping of large rotation corrections: a rotation increment beyond π aliases
            // (exp is 2π-periodic), so Newton could converge to a spurious extra turn.
            let rot = self.max_rotation_correction(state, cx.dq_dv);
            alpha = if rot > MAX_ROTATION_STEP {
                MAX_ROTATION_STEP / rot
            } else {
                1.0
            };
            backtracks = 0;
            prev_norm = norm;
            self.set_iterate(state, alpha);
            update(state);
            it += 1;
            if stagnated {
                break (it, norm);
            }
            // A probe's correction is judged next on a residual-only assembly (its matrix is
            // not needed if the probe is accepted or refines further, and a refused one is
            // undone); otherwise the stage's own factorization just used serves the next
            // correction (modified Newton).
            reuse = probing
                || (first_order_step && alpha == 1.0)
                || (may_reuse(it) && alpha == 1.0 && self.factorized_for == Some(factors));
            check_first = expect_one && it == 1 && !reuse && alpha == 1.0;
        };
        self.converged_at_start = result.0 == 0;
        self.converged_in_one = result.0 == 1;
        self.summary.reused_corrections += reused;
        self.summary.rejected_corrections += rejected;
        let report = NewtonReport {
            iterations: result.0,
            residual: result.1,
            backtracks: total_backtracks,
        };
        if first_of_step {
            self.first_settle_at_once = by_settling;
        }
        self.record(&report);
        Ok(report)
    }

    /// [`Stage::settle_contacts`] run first ([`Tolerance::contacts_first`]) from the current
    /// iterate (`norm`: its residual, if assembled), an error counting as
    /// [`Settled::NotPassed`] (it is not the solve's: the Newton takes over). A pass that needed
    /// more than one sweep lets the next solve settle at once (`settle_at_once`); after one
    /// sweep (its reactions did not move: converged sweeps), or any other outcome, the next
    /// solve checks its start first.
    #[allow(clippy::too_many_arguments)]
    fn settle_first(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        smooth: Option<&Stage>,
        norm: Option<f64>,
        update: &mut dyn FnMut(&mut State),
    ) -> Settled {
        let sweeps = self.summary.settle_sweeps;
        let settled = self
            .settle_contacts(model, state, cx, tol, step, smooth, norm, update)
            .unwrap_or(Settled::NotPassed);
        self.settle_at_once = false;
        if let Settled::Passed(_) = settled {
            self.memos_at_solution = true;
            self.settle_at_once = self.summary.settle_sweeps > sweeps + 1;
        }
        settled
    }

    fn record(&mut self, r: &NewtonReport) {
        let s = &mut self.summary;
        s.solves += 1;
        s.iterations += r.iterations;
        s.max_iterations = s.max_iterations.max(r.iterations);
        s.backtracks += r.backtracks;
        s.symbolic_factorizations = self.lu.symbolic_count;
        s.numeric_factorizations = self.lu.numeric_count;
        s.pivot_searches = self.lu.pivoting_count;
    }

    /// Largest rotation \[rad\] that the last correction applies to a frame node:
    /// `dq_dv · |Δ_rot|`.
    fn max_rotation_correction(&self, state: &State, dq_dv: f64) -> f64 {
        let mut m: f64 = 0.0;
        for i in 0..state.kinds.len() {
            if state.kinds[i] != NodeKind::Frame {
                continue;
            }
            if let Some(off) = state.offset(i) {
                let d = &self.delta[off + 3..off + 6];
                m = m.max((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt());
            }
        }
        m * dq_dv
    }

    /// Unknowns and multipliers = saved iterate + `alpha` × last correction.
    pub(super) fn set_iterate(&mut self, state: &mut State, alpha: f64) {
        let nd = self.system.n_node_dofs;
        for ((m, m0), d) in self
            .mult
            .iter_mut()
            .zip(&self.saved_mult)
            .zip(&self.delta[nd..])
        {
            *m = m0 + alpha * d;
        }
        for i in 0..state.kinds.len() {
            state.unknown[i] = state.saved_unknown[i];
            if let Some(off) = state.offset(i) {
                for k in 0..state.kinds[i].ndof() {
                    state.unknown[i][k] += alpha * self.delta[off + k];
                }
            }
        }
    }
}

/// Relative size of a Newton correction at which the iterate has stopped changing beyond
/// round-off (≈ 500 ulp).
const STAGNATION: f64 = 1e-13;

/// Largest rotation \[rad\] a single Newton correction may apply to a node (larger ones are
/// scaled down): well below π, where the exponential map aliases.
const MAX_ROTATION_STEP: f64 = 0.5;

/// A residual plateau is accepted as converged only within this factor of the tolerance.
const PLATEAU_FACTOR: f64 = 1e4;

/// Newton iterations before the cap that always use a fresh iteration matrix.
const FRESH_BEFORE_CAP: usize = 2;

/// Modified Newton keeps a reused matrix only while its last correction's contraction rate
/// `ρ = ‖r_k‖/‖r_{k−1}‖` predicts convergence within this many more corrections,
/// `‖r_k‖ ρ^REUSE_AHEAD ≤ tol` (besides `ρ ≤ θ`). Measured against θ alone: slider-crank −5 %,
/// chain N = 10 −5 %, N = 100 / 1 000 within noise, pendulum model 5.75 → 2.94 smooth iterations
/// per step; 1 (refresh unless the next correction converges) was slower on the chain.
const REUSE_AHEAD: i32 = 2;

/// [`Tolerance::exact_reuse`]: a reused matrix's first correction must reduce `‖r‖` at
/// least this much (as an exact Newton matrix does near the solution; a matrix that is off by
/// `δ` relative contracts by about `δ`), so that the converged iterate is as accurate as full
/// Newton leaves it.
const EXACT_REUSE_RATE: f64 = 1e-4;

/// [`Tolerance::exact_reuse`] is tried only when no free node moved by more than this
/// (relative to the coordinates' size) nor turned by more than this many radians over the last
/// step (`State::at_rest`): moving joints and contacts change their matrices (a chain's `G(q)`)
/// and the attempt would be refused.
const EXACT_REUSE_REST: f64 = 1e-6;

/// The first correction of a solve and what it may reuse ([`Tolerance::exact_reuse`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    /// A fresh matrix.
    None,
    /// The stage's last factorization, the model at rest: one correction that must contract
    /// by `EXACT_REUSE_RATE` and reach the tolerance.
    Exact,
    /// Another stage's current factorization ([`Stage::newton_after`]): refining corrections.
    Donor,
    /// The stage's own last factorization, on a stage that does not move the configuration
    /// (a velocity jump: its matrix changes with `q` only between solves) and has no
    /// contacts, when no donor serves: refining corrections as [`Probe::Donor`]'s.
    Own,
}

/// Most refining corrections of a solve ([`Probe::Donor`]).
const REFINE_CORRECTIONS: usize = 3;

/// Each refining correction must reduce `‖r‖` at least this much (or reach the tolerance with a
/// decrease: [`probe_served`]), else the stage factorizes its own matrix; they continue until the
/// convergence test passes, at most `REFINE_CORRECTIONS`. (Continuing to the constraint rows'
/// round-off floor instead was measured: 2.6 instead of 1.4 velocity corrections per solve on the
/// chain of 1 000 links, 6.4 → 7.2 ms/step, and 87 → 100 ms/step at 10 000; the hinge velocities of
/// `tests/double_pendulum.rs` end at round-off either way.) The velocity jump with the position
/// correction's factorization (made at `q̃`, before the correction `U` moved the joints' `G`)
/// contracts by 1e-7 … 1e-3 on the rigid chains of N ≤ 1 000 links and by 1.5e-2 … 4.6e-2 at
/// N = 10 000 (1e-2 refused those: 19 instead of 10 velocity factorizations in 20 steps, 102
/// instead of 87 ms/step).
const REFINE_RATE: f64 = 5e-2;

/// Whether a probe's correction (the exact-reuse one, or each refining one), from
/// `‖r‖ = prev` to `norm`, counts ([`Probe`]): the reused matrix acted as Newton's would.
/// An exact-reuse probe (a resting contact network, whose matrix must be the current one)
/// contracts `‖r‖` by [`EXACT_REUSE_RATE`]. A refining one (a donor's or the stage's own
/// factorization) contracts it by [`REFINE_RATE`] or reaches the `tolerance` with a decrease:
/// a start just above the tolerance, near the residual's round-off floor, cannot contract by
/// `REFINE_RATE` (rigid chain of 10 000 links: velocity residuals at 1.08 × the tolerance
/// reduced by 0.59), and refusing it cost a fresh matrix.
fn probe_served(probe: Probe, norm: f64, prev: f64, tolerance: f64) -> bool {
    match probe {
        Probe::Exact => norm <= EXACT_REUSE_RATE * prev,
        _ => norm <= REFINE_RATE * prev || (norm <= tolerance && norm < prev),
    }
}

/// Longest wait (in solves) of [`Tolerance::exact_reuse`] after refused attempts.
const EXACT_REUSE_MAX_WAIT: u32 = 64;

/// Consecutive position corrections (or a velocity stage's sequences' first solves) that settle
/// at once (without their start check) before one checks its start again: a stage whose start stopped needing the settling (the contacts came
/// to rest) finds out within this many solves, and a resting pile pays one check in nine.
const SETTLE_AT_ONCE_RUN: u32 = 8;

/// Sufficient-decrease constant of the line search.
const ARMIJO: f64 = 1e-4;

/// Largest number of step halvings per Newton correction.
const MAX_BACKTRACKS: usize = 6;

/// Round-off floor factor of constraint rows: `10³ ε ≈ 2.2e-13` times `k` times the size of
/// the coordinates (so `|g| ≲ 2e-13 |x|` at convergence, far below the 1e-10 requirement).
const ROUND_OFF: f64 = 1e3 * f64::EPSILON;

/// The residual tolerance of a stage's convergence test: spec §10, `tol_r (reference + tol_f)`,
/// plus the round-off floor of the constraint rows (`g` is computed from coordinates of size
/// `state_scale`, so it cannot be resolved below ~ε·scale). Constraint rows are `k g(q)` when
/// the stage moves the configuration only, `k g_q v` otherwise.
pub(super) fn residual_tolerance(
    tol: &Tolerance,
    cx: &StepCx,
    state: &State,
    reference: f64,
) -> f64 {
    let positions = cx.dv_dv == 0.0;
    let round_off = ROUND_OFF * cx.k * state.scale(positions);
    tol.tol * (reference + tol.tol_f) + round_off
}

fn amax(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refining probe counts when it contracts by `REFINE_RATE`, or when it reaches the
    /// tolerance with a decrease (a start just above the tolerance); not when it reaches the
    /// tolerance without decreasing, nor when it decreases but stays above. An exact-reuse
    /// probe counts only by its rate.
    #[test]
    fn a_refining_probe_that_reaches_the_tolerance_counts() {
        let tol = 1.0;
        for probe in [Probe::Donor, Probe::Own] {
            assert!(
                probe_served(probe, 0.04, 1.0, 1e-3),
                "contracted by REFINE_RATE"
            );
            assert!(
                probe_served(probe, 0.6, 1.08, tol),
                "at the tolerance, decreased"
            );
            assert!(
                !probe_served(probe, 0.9, 0.8, tol),
                "at the tolerance, increased"
            );
            assert!(
                !probe_served(probe, 1.02, 1.08, tol),
                "decreased, above the tolerance"
            );
        }
        assert!(!probe_served(Probe::Exact, 0.6, 1.08, tol));
        assert!(probe_served(Probe::Exact, 1e-5, 1.08, tol));
    }
}
