//! The velocity stage as the multiple-impact sequence of `nsga.md` §9: impact problems solved
//! in turn from the jump reached so far, the admissible contacts of each, the accumulated
//! impulses, and each contact's pre-impact normal rate for the force recovery.

use super::ImpactSequence;
use super::Nsga;
use crate::error::SolveError;
use crate::stage::NewtonReport;
use crate::state::update_velocity_states;
use saltus_core::contact::{approach_velocity, generalized_impulse};
use saltus_core::{Level, Model};

impl Nsga {
    /// Stage 3: the velocity jump `W` (spec §6). With [`super::NsgaOptions::impacts`], the sequence of
    /// impact problems of §9 ([`ImpactSequence`]): each problem is a velocity-stage Newton solve
    /// from the jump reached so far with fresh multipliers; afterwards the stage's multipliers
    /// are the step's total impulses. The caller resets the sequence state (also on error).
    pub(super) fn velocity_jump(
        &mut self,
        model: &mut Model,
        h: f64,
        t: f64,
        step: usize,
    ) -> Result<(), SolveError> {
        self.impact_rate.clear();
        self.impact_rate.resize(model.elements().len(), f64::NAN);
        self.velocity.begin_sequence();
        let Some(seq) = self.opts.impacts else {
            self.correction(model, Level::Velocity, h, t, step, update_velocity_states)?;
            self.step_start_rates(model);
            return Ok(());
        };
        let coef = self.coef;
        let cx = self.cx(Level::Velocity, h, t, &coef);
        let tol = self.correction_tolerance();
        self.velocity.reset(&mut self.state);
        // Λ^acc and the constant residual are sized for the pattern (Nsga::new, prepare).
        self.impact_acc.fill(0.0);
        self.velocity.constant_residual_mut().fill(0.0);
        // V⁻ = v_n (configuration q_n) for the first problem.
        self.state.pre_impact.clone_from(&self.state.prev);
        self.state.pre_impact_active = true;
        let mut problems = 0;
        let mut total = NewtonReport::default();
        loop {
            let approaching = self.mark_admissible(model, &seq);
            if problems > 0 && approaching == 0 {
                break;
            }
            if problems == seq.max_problems {
                return Err(SolveError::ImpactSequence {
                    step,
                    t,
                    problems,
                    approaching,
                });
            }
            self.velocity.reset_multipliers();
            if problems == 0 && self.opts.warm_start {
                // Persistent contacts start from last step's impulses; later problems
                // solve for fresh impulses on top of the accumulated ones (§9).
                self.velocity.warm_start(model, &cx);
            }
            // Without contacts the jump may start with the position correction's
            // factorization (`Stage::newton_after`).
            let report = self.velocity.newton_after(
                model,
                &mut self.state,
                &cx,
                &tol,
                step,
                Some(&self.smooth),
                &mut self.position,
                update_velocity_states,
            )?;
            problems += 1;
            total.iterations += report.iterations;
            total.backtracks += report.backtracks;
            total.residual = report.residual;
            // A problem whose impulses all vanish changed no velocity: the next one would be
            // the same problem again (a contact that keeps approaching at the end of the step
            // but separates in the Newton law's pre-impact picture, e.g. a resting contact
            // with e_N > 0). The multipliers are κΛ/m with κ = m, i.e. velocities, compared
            // with tol_v. (Not in the thesis' loop, which would repeat it up to the cap.)
            let largest = self.accumulate_impulses(model, cx.k);
            if largest <= seq.tolerance {
                break;
            }
            // V⁻ = v_n + W: the pre-impact velocity of the next problem's Newton law.
            for i in 0..self.kinds.len() {
                let w = self.state.unknown[i];
                let (dv, dw) = crate::state::split(&w);
                let (prev, pre) = (&self.state.prev[i], &mut self.state.pre_impact[i]);
                pre.v = prev.v + dv;
                pre.omega = prev.omega + dw;
            }
        }
        // A contact's impulse of the step is its accumulated one (statuses are judged on it
        // with the Newton law of the step, pre-impact velocity v_n). Bilateral multipliers
        // are fresh per problem too but W is the total jump, so the last problem's are the
        // step's totals.
        for (ie, element) in model.elements().iter().enumerate() {
            if element.as_contact().is_none() {
                continue;
            }
            let (a, n) = self.velocity.system.mult_range[ie];
            self.velocity
                .element_multipliers_mut(ie)
                .copy_from_slice(&self.impact_acc[a..a + n]);
        }
        // With one problem the accumulated impulses are that problem's and its pre-impact
        // velocities v_n: the statuses its last evaluation found are the step's. After several,
        // they are judged again on the totals.
        if problems > 1 {
            self.velocity.forget_memos();
        }
        self.end_impact_sequence();
        self.step_start_rates(model);
        self.note(2, &total);
        self.stats.stages_mut()[2].solves = problems;
        Self::notify_level(model, &mut self.state, &self.velocity, &self.smooth, &cx);
        Ok(())
    }

    /// The normal rate `G_N(q_n) v_n` at the step start of every contact that took a normal
    /// impulse in the step but has no pre-impact rate yet (a step solved without the impact
    /// sequence); contacts without impulse keep NaN (no impact to recover, and no cost).
    fn step_start_rates(&mut self, model: &Model) {
        for (ie, element) in model.elements().iter().enumerate() {
            let Some(c) = element.as_contact() else {
                continue;
            };
            let acted = self
                .velocity
                .element_multipliers(ie)
                .first()
                .is_some_and(|l| *l > 0.0);
            if !acted || !self.impact_rate[ie].is_nan() {
                continue;
            }
            let nn = self.state.gather(model, ie);
            let prev = self.state.gathered_prev(nn);
            let layout = saltus_core::constraint::Layout::new(c.geometry.node_kinds());
            self.impact_rate[ie] = approach_velocity(&c, prev, prev, &layout);
        }
    }

    /// Size `Λ^acc` and the velocity stage's constant residual for the current pattern
    /// (allocates only when the pattern grew: at construction and after topology changes).
    pub(super) fn size_impact_buffers(&mut self) {
        if self.opts.impacts.is_none() {
            return;
        }
        let n_mult = self.velocity.n_multipliers();
        self.impact_acc.resize(n_mult, 0.0);
        let n_dofs = self.velocity.system.n_node_dofs;
        self.velocity.constant_residual_mut().resize(n_dofs, 0.0);
    }

    /// Mark the contacts of the velocity stage that take part in the next impact problem
    /// (`nsga.md` §9) and return how many of them approach.
    ///
    /// A contact takes part if it is closed at position level and approaching,
    /// `G_N(q_{n+1}) V⁻⁻ < −tol_v` at the current velocities `V⁻⁻` (the spec's admissible set),
    /// or — an addition to the thesis' rule — if it is perfectly plastic (`e_N = 0`) and has
    /// already acted in this step (accumulated normal impulse above `tol_v`, in the
    /// multipliers' velocity units): a plastic impact leaves the bodies moving together, so
    /// the contact keeps them so in the later problems. Without it, a resting frictional
    /// network (a granular pile) passes impulses back and forth between two alternating sets
    /// of contacts instead of ending the sequence. Likewise — a second addition — a closed
    /// contact loaded (normal impulse above `tol_v`) in the previous step, or in at least two
    /// of the last `seq.persistent_steps` steps (`ContactHistory::loads`: a persistent,
    /// loaded contact; a single impact is one load) takes part in every problem: otherwise a
    /// ball squeezed between two loaded races with `e_N > 0` rattles from one to the other
    /// through an endless sequence, and the contacts of a resting pile whose load flickered
    /// from one step to the next come back as impacts in later problems
    /// ([`crate::nsga::DEFAULT_PERSISTENT_STEPS`]). Contacts at rest without
    /// load (the balls of a cradle) keep the thesis' rule. Only approaching contacts count for
    /// the end of the sequence, so a step without impacts still solves one problem.
    fn mark_admissible(&mut self, model: &Model, seq: &ImpactSequence) -> usize {
        let tol_v = seq.tolerance;
        let mut approaching = 0;
        for (ie, element) in model.elements().iter().enumerate() {
            let Some(c) = element.as_contact() else {
                continue;
            };
            if !self.velocity.system.active[ie] {
                continue;
            }
            let approach = c.history.closed && {
                let nn = self.state.gather(model, ie);
                let nodes = self.state.gathered_nodes(nn);
                let prev = self.state.gathered_prev(nn);
                let layout = saltus_core::constraint::Layout::new(c.geometry.node_kinds());
                approach_velocity(&c, nodes, prev, &layout) < -tol_v
            };
            let acted = c.law.restitution == 0.0 && {
                let (a, n) = self.velocity.system.mult_range[ie];
                n > 0 && self.impact_acc[a] > tol_v
            };
            // Loaded in the previous step, or twice within `persistent_steps`.
            let persistent = c.history.persistent(seq.persistent_steps);
            self.velocity
                .set_admissible(ie, approach || (c.history.closed && (acted || persistent)));
            approaching += usize::from(approach);
        }
        approaching
    }

    /// Add the impulses of the impact problem just solved to `Λ^acc` and their generalized
    /// impulses `−Gᵀ κΛ` to the velocity stage's constant residual (they keep acting in the
    /// later problems whatever the contact's status there, `nsga.md` §9 B.28). Returns the
    /// largest contact multiplier magnitude of the problem.
    fn accumulate_impulses(&mut self, model: &Model, k: f64) -> f64 {
        let mut largest: f64 = 0.0;
        for (ie, element) in model.elements().iter().enumerate() {
            let Some(c) = element.as_contact() else {
                continue;
            };
            if !self.velocity.system.active[ie] {
                continue;
            }
            let (a, n) = self.velocity.system.mult_range[ie];
            let mult = &self.velocity.multipliers()[a..a + n];
            if mult.iter().all(|m| *m == 0.0) {
                continue;
            }
            largest = mult.iter().fold(largest, |a, m| a.max(m.abs()));
            for (acc, m) in self.impact_acc[a..a + n].iter_mut().zip(mult) {
                *acc += m;
            }
            let nn = self.state.gather(model, ie);
            if mult[0] > 0.0 && self.impact_rate[ie].is_nan() {
                // The pre-impact state of this problem: q_n with V⁻ (the Newton law's).
                let pre = self.state.gathered_prev(nn);
                let layout = saltus_core::constraint::Layout::new(c.geometry.node_kinds());
                self.impact_rate[ie] = approach_velocity(&c, pre, pre, &layout);
            }
            let p = -generalized_impulse(
                &c,
                k,
                self.state.gathered_nodes(nn),
                self.state.gathered_prev(nn),
                mult,
            );
            let n_local: usize = c.geometry.node_kinds().iter().map(|k| k.ndof()).sum();
            self.velocity
                .add_constant_residual(ie, &p.as_slice()[..n_local]);
        }
        largest
    }
}
