//! The decoupled nonsmooth generalized-α (NSGA) time step (spec `nsga.md` §§2–6, Algorithm 1
//! of Annex A): smooth motion with bilateral constraints at velocity level, then a position
//! correction and a velocity jump that enforce the constraints exactly at position and velocity
//! level, each solved by (semi-smooth) Newton with the convergence test of §10.

mod impacts;
mod options;
mod record;
mod summary;

pub use options::{
    Coefficients, ContactSolver, ImpactSequence, NsgaOptions, SmoothStart,
    DEFAULT_IMPACT_TOLERANCE, DEFAULT_JACOBIAN_REUSE, DEFAULT_MAX_IMPACT_PROBLEMS,
    DEFAULT_PERSISTENT_STEPS, MAX_PERSISTENT_STEPS, MAX_STEPS,
};
pub use summary::RunSummary;

use crate::error::SolveError;
use crate::stage::{NewtonReport, Stage, Tolerance};
use crate::state::{split, update_position_states, ParallelAssembly, State};
use nalgebra::{Vector3, Vector6};
use saltus_core::lie;
use saltus_core::output::{ContactRow, OutputLayout, StepStats};
use saltus_core::{
    Level, LevelHook, LocalState, Model, NodeKind, NodeState, PrescribedMotion, StepCx,
};

/// Names of the NSGA stages, in the order a step solves them (spec §3).
pub const NSGA_STAGES: [&str; 3] = ["smooth", "position", "velocity"];

/// Per-node generalized-α history (6 components: translation then material rotation).
#[derive(Clone, Copy, Debug, Default)]
struct NodeHistory {
    /// Pseudo-acceleration `a_n`.
    a: Vector6<f64>,
    /// Smooth acceleration `v̇̃_n`.
    vdot: Vector6<f64>,
    /// Change of the smooth acceleration over the last step, `v̇̃_n − v̇̃_{n−1}` (zero
    /// after the start-up or a step-size change): the Newton start's linear extrapolation.
    dvdot: Vector6<f64>,
    /// Its change, `v̇̃_n − 2 v̇̃_{n−1} + v̇̃_{n−2}` (zero unless the last two differences are
    /// over steps of one size): the quadratic extrapolation.
    ddvdot: Vector6<f64>,
}

/// What the smooth Newton's start may extrapolate from (see [`Nsga::smooth_step`]); rolled
/// back with the α-history when a step is retried.
#[derive(Clone, Copy, Debug, Default)]
struct Extrapolation {
    /// Consecutive differences of the smooth accelerations over steps of the current size
    /// held in the history (0, 1 or 2).
    differences: u8,
    /// The next start extrapolates quadratically: over the last step, the quadratic prediction
    /// of the accelerations and multipliers was closer to the converged values than the
    /// linear one.
    quadratic: bool,
    /// `‖λ̃ − λ̃_quad‖² − ‖λ̃ − λ̃_lin‖²` of the last smooth solve, when both predictions were made.
    multiplier_gain: Option<f64>,
}

/// The NSGA integrator: the model's state at `t_n`, and its three stages (spec §3): smooth
/// motion, position correction, velocity jump.
pub struct Nsga {
    opts: NsgaOptions,
    coef: Coefficients,
    state: State,
    smooth: Stage,
    position: Stage,
    velocity: Stage,
    hist: Vec<NodeHistory>,
    hist_backup: Vec<NodeHistory>,
    extrapolation: Extrapolation,
    extrapolation_backup: Extrapolation,
    /// Per node: predictor `Δq*` and `ṽ*` of the current step.
    pred_dq: Vec<Vector6<f64>>,
    pred_v: Vec<Vector6<f64>>,
    kinds: Vec<NodeKind>,
    free: Vec<bool>,
    /// Prescribed motions of the fixed nodes, and every node's state at `t = 0`.
    motion: Vec<Option<PrescribedMotion>>,
    initial: Vec<NodeState>,
    /// Characteristic mass of the scaling.
    mass: f64,
    /// Step `h₀` of the initial-acceleration solve (0 before it): the smooth multipliers of the
    /// initial record are scaled by `k_s = m/h₀`, the scaling they were solved with.
    initial_h: f64,
    /// Step of the smooth solve whose converged multipliers the smooth stage holds (the next
    /// solve starts from them); `None` after a failed one.
    smooth_mult_h: Option<f64>,
    /// The smooth multipliers the last smooth solve started from (the converged ones of the
    /// step before, at the same scaling): their change extrapolates the next start.
    smooth_mult_prev: Vec<f64>,
    /// `λ̃_{n−1} − λ̃_{n−2}` of the same steps (empty unless known): the quadratic extrapolation.
    smooth_mult_diff: Vec<f64>,
    /// The linear and quadratic predictions of the current smooth solve's multipliers (empty
    /// unless both were made), for the choice of the next start.
    smooth_mult_linear: Vec<f64>,
    smooth_mult_quadratic: Vec<f64>,
    /// The smooth stage holds the converged multipliers of the last accepted step (not those
    /// of an attempt that was rolled back): only those may become `smooth_mult_prev`.
    smooth_mult_trusted: bool,
    t: f64,
    /// Nominal steps completed: the step grid is `t_k = t_0 + k h` (`t_0 = 0`), clamped to
    /// `t_end`, so the step count is exact and times do not drift by summation.
    grid: u64,
    step: usize,
    stats: StepStats,
    summary: RunSummary,
    values: Vec<f64>,
    /// Contact-table rows of the current record.
    contacts: Vec<ContactRow>,
    layout: OutputLayout,
    /// Handles of the elements of the output layout (the elements present when built).
    output_handles: Vec<saltus_core::ElementId>,
    /// Per current element: its slot in the output layout (`usize::MAX`: none), for the
    /// model topology `output_slots_topology`.
    output_slots: Vec<usize>,
    output_slots_topology: Option<u64>,
    /// Called before every step with the model, the time and the node states at `t_n`; may add
    /// or remove elements (e.g. contacts of a broad phase).
    pre_step: Option<Box<PreStepHook>>,
    /// Accumulated velocity multipliers `Λ^acc` of the impact problems of the current step
    /// (layout of the velocity stage's multipliers).
    impact_acc: Vec<f64>,
    /// Per element: the normal rate `ġ_N = G_N(q_n) V⁻` \[m/s\] of a contact just before its
    /// impact in the step (the `V⁻` of the first impact problem in which it took an impulse)
    /// — the approach speed the force recovery needs (`contact-force.md` §2.3). NaN for
    /// contacts that took no impulse and for other elements.
    impact_rate: Vec<f64>,
    /// The last converged position correction (node unknowns and multipliers), the model
    /// topology and step size it was solved at: the next one starts from it.
    position_start: PositionStart,
}

/// The position correction `U`, `ν` of the last step ([`Nsga::correction`]). In a moving
/// joint model the correction follows the smooth predictor's drift, which changes little from
/// one step to the next: starting from the last one leaves a residual 25 × smaller on the
/// rigid chain (N = 10: 1.3e-8 → 5e-10, so that the first-order matrix's one correction
/// reaches the tolerance, where from zero it ended at 1.6 × the tolerance and needed a second).
#[derive(Default)]
struct PositionStart {
    /// Model topology and step size of the stored solve (`None`: nothing stored).
    at: Option<(u64, f64)>,
    unknown: Vec<Vector6<f64>>,
    mult: Vec<f64>,
}

/// A pre-step hook: `(model, t_n, node states at t_n)`; may add or remove elements.
pub type PreStepHook =
    dyn FnMut(&mut Model, f64, &[NodeState]) -> Result<(), saltus_core::BuildError> + Send;

fn join(a: &Vector3<f64>, b: &Vector3<f64>) -> Vector6<f64> {
    Vector6::new(a.x, a.y, a.z, b.x, b.y, b.z)
}

fn rates(s: &NodeState) -> Vector6<f64> {
    join(&s.v, &s.omega)
}

impl Nsga {
    /// Prepare an integrator for `model` (validated) at its initial state, and compute
    /// consistent initial accelerations.
    pub fn new(model: &mut Model, opts: NsgaOptions) -> Result<Self, SolveError> {
        opts.validate()?;
        model.validate()?;
        let mut state = State::new(model);
        state
            .set_threads(model, opts.threads)
            .map_err(|message| SolveError::Options {
                option: "threads",
                message,
            })?;
        let smooth = Stage::new(NSGA_STAGES[0], Level::Smooth, model, &state)?;
        let smooth_mults = smooth.n_multipliers();
        let mut position = Stage::new(NSGA_STAGES[1], Level::Position, model, &state)?;
        let mut velocity = Stage::new(NSGA_STAGES[2], Level::Velocity, model, &state)?;
        // Solved by the Gauss–Seidel first, their Newton seldom needs the contacts' pattern.
        let gauss_seidel = opts.contact_solver == ContactSolver::GaussSeidel;
        position.defer_contact_pattern(gauss_seidel);
        velocity.defer_contact_pattern(gauss_seidel);
        let n = model.nodes().len();
        let kinds = model.nodes().iter().map(|d| d.kind).collect();
        let free = model.nodes().iter().map(|d| !d.fixed).collect();
        let motion = model.nodes().iter().map(|d| d.motion).collect();
        let initial = model.nodes().iter().map(|d| d.initial).collect();
        let mass = opts
            .characteristic_mass
            .unwrap_or_else(|| model.characteristic_mass());
        let layout = OutputLayout::for_model(model, &NSGA_STAGES);
        let values = vec![0.0; layout.n_element_values];
        let mut me = Self {
            coef: Coefficients::from_rho_inf(opts.rho_inf),
            opts,
            state,
            smooth,
            position,
            velocity,
            hist: vec![NodeHistory::default(); n],
            hist_backup: vec![NodeHistory::default(); n],
            extrapolation: Extrapolation::default(),
            extrapolation_backup: Extrapolation::default(),
            pred_dq: vec![Vector6::zeros(); n],
            pred_v: vec![Vector6::zeros(); n],
            kinds,
            free,
            motion,
            initial,
            mass,
            initial_h: 0.0,
            smooth_mult_h: None,
            // Sized here: filling it in a step allocates nothing.
            smooth_mult_prev: Vec::with_capacity(smooth_mults),
            smooth_mult_diff: Vec::with_capacity(smooth_mults),
            smooth_mult_linear: Vec::with_capacity(smooth_mults),
            smooth_mult_quadratic: Vec::with_capacity(smooth_mults),
            smooth_mult_trusted: false,
            t: 0.0,
            grid: 0,
            step: 0,
            stats: StepStats::new(NSGA_STAGES.len()),
            summary: RunSummary::default(),
            values,
            contacts: Vec::with_capacity(
                model
                    .elements()
                    .iter()
                    .filter(|e| e.as_contact().is_some())
                    .count(),
            ),
            layout,
            output_handles: model.element_handles().to_vec(),
            output_slots: Vec::new(),
            output_slots_topology: None,
            pre_step: None,
            impact_acc: Vec::new(),
            impact_rate: vec![f64::NAN; model.elements().len()],
            position_start: PositionStart::default(),
        };
        me.size_impact_buffers();
        me.size_position_start();
        me.initial_acceleration(model)?;
        // The corrections' matrices share the smooth one's pattern on models without
        // contacts: where the initial acceleration factorized, they take its pivot order
        // (their first factorizations then refactorize, where a pivot search cost 5
        // refactorizations' time on a chain of 10 000 links). A model whose initial
        // acceleration needs no factorization (at rest in equilibrium) keeps the searches: on
        // the slider-crank the smooth order failed the position matrix's pivot test anyway.
        me.position.adopt_pivot_order(&me.smooth);
        me.velocity.adopt_pivot_order(&me.smooth);
        // Timed from here: the start-up solve is not part of a run's steps.
        let timings = me.opts.timings;
        for stage in [&mut me.smooth, &mut me.position, &mut me.velocity] {
            stage.set_timing(timings);
        }
        Ok(me)
    }

    /// Current time \[s\].
    pub fn time(&self) -> f64 {
        self.t
    }

    /// Node states at the current time.
    pub fn nodes(&self) -> &[NodeState] {
        &self.state.prev
    }

    /// Converged smooth state `(q̃, ṽ, v̇̃)` of the last step (before the position correction
    /// and the velocity jump).
    pub fn smooth_nodes(&self) -> &[NodeState] {
        &self.state.smooth
    }

    /// The three stages (smooth, position, velocity).
    pub fn stages(&self) -> [&Stage; 3] {
        [&self.smooth, &self.position, &self.velocity]
    }

    /// Statistics of the last step.
    pub fn last_stats(&self) -> StepStats {
        self.stats
    }

    /// Accumulated statistics.
    pub fn summary(&self) -> RunSummary {
        let mut s = self.summary.clone();
        s.stages = self
            .stages()
            .iter()
            .map(|st| st.summary().clone())
            .collect();
        s
    }

    /// Output layout (node and element channel names).
    pub fn layout(&self) -> &OutputLayout {
        &self.layout
    }

    /// The options in use.
    pub fn options(&self) -> &NsgaOptions {
        &self.opts
    }

    fn cx(&self, level: Level, h: f64, t: f64, coef: &Coefficients) -> StepCx {
        let m = self.mass;
        let k_s = m / h;
        let (k, dq_dv, dvdot_dv, dv_dv, force_weight) = match level {
            Level::Smooth => (
                k_s,
                h * coef.beta / coef.gamma,
                (1.0 - coef.alpha_m) / (h * coef.gamma * (1.0 - coef.alpha_f)),
                1.0,
                1.0,
            ),
            // h²/2: spec §5 (kept as printed, one named constant).
            Level::Position => (m, 1.0, 0.0, 0.0, POSITION_FORCE_FACTOR * h * h),
            Level::Velocity => (m, 0.0, 0.0, 1.0, h),
            Level::Static | Level::Custom => {
                unreachable!("NSGA builds smooth, position and velocity contexts only")
            }
        };
        let (inertia, force_difference) = StepCx::level_terms(level);
        StepCx {
            level,
            t,
            h,
            gravity: self.opts.gravity,
            k,
            p: k,
            k_s,
            dq_dv,
            dvdot_dv,
            dv_dv,
            force_weight,
            inertia,
            force_difference,
            load_factor: 1.0,
            load_tolerance: if level == Level::Velocity {
                self.opts
                    .impacts
                    .map_or(DEFAULT_IMPACT_TOLERANCE, |s| s.tolerance)
            } else {
                0.0
            },
        }
    }

    /// Consistent initial accelerations: one smooth solve over a vanishing step
    /// `h₀ = 10⁻⁶ h` with `α_m = α_f = 0`, `γ = 1`, `β = ½`, for which the velocity-level
    /// constraint `g_q(q̃) ṽ = 0` reduces to the acceleration-level one `g_q v̇ + ∂(g_q v)/∂q v = 0`
    /// as `h₀ → 0` (error O(h₀)).
    fn initial_acceleration(&mut self, model: &mut Model) -> Result<(), SolveError> {
        let coef = Coefficients {
            alpha_m: 0.0,
            alpha_f: 0.0,
            gamma: 1.0,
            beta: 0.5,
        };
        let h0 = 1e-6 * self.opts.h;
        for h in self.hist.iter_mut() {
            *h = NodeHistory::default();
        }
        self.extrapolation = Extrapolation::default();
        // Step index 0 in error messages: the initial-acceleration solve precedes step 1.
        self.smooth_step(model, h0, h0, &coef, 0)?;
        self.initial_h = h0;
        self.smooth_mult_trusted = true;
        let st = &mut self.state;
        for i in 0..self.hist.len() {
            if self.free[i] {
                let s = &st.cur[i];
                let vdot = join(&s.vdot, &s.omegadot);
                self.hist[i] = NodeHistory {
                    a: vdot,
                    vdot,
                    ..NodeHistory::default()
                };
                st.prev[i].vdot = s.vdot;
                st.prev[i].omegadot = s.omegadot;
            }
        }
        st.cur.clone_from(&st.prev);
        st.smooth.clone_from(&st.prev);
        // Run statistics count the steps only.
        self.smooth.clear_statistics();
        Ok(())
    }

    /// Newton tolerance of the position and velocity corrections: no modified Newton across
    /// solves (a correction is nearly linear: with an exact matrix it converges in one
    /// iteration, far below the tolerance). With reuse enabled, a factorization still serves
    /// where it acts as Newton's would (`exact_reuse`), and the corrections start with the
    /// matrix of first-order constraint kinematics (`first_order_constraints`: the constraint
    /// curvature is the largest part of the position correction's assembly on a chain of
    /// joints, and the matrix without it is the velocity jump's); such a solve ends at the
    /// convergence test, whose floor for constraint rows is their round-off (`ROUND_OFF`).
    fn correction_tolerance(&self) -> Tolerance {
        let reuse = self.opts.jacobian_reuse.is_some();
        Tolerance {
            jacobian_reuse: None,
            exact_reuse: reuse,
            first_order_constraints: reuse,
            ..self.tolerance()
        }
    }

    /// Elements see `q_n, v_n` as their `prev` again, every contact takes part, no constant
    /// residual: the velocity stage outside an impact sequence.
    fn end_impact_sequence(&mut self) {
        self.state.pre_impact_active = false;
        self.velocity.clear_admissible();
        self.velocity.constant_residual_mut().fill(0.0);
    }

    fn tolerance(&self) -> Tolerance {
        Tolerance {
            tol: self.opts.tol,
            tol_f: self.opts.tol_f,
            max_iterations: self.opts.max_iterations,
            line_search: self.opts.line_search,
            jacobian_reuse: self.opts.jacobian_reuse,
            exact_reuse: false,
            first_order_constraints: false,
            contact_fallback: self.opts.contact_fallback,
            contacts_first: self.opts.contact_solver == ContactSolver::GaussSeidel,
        }
    }

    /// Predictor and smooth Newton loop (spec §3 step 1, §4) for a step of size `h` ending at `t`.
    fn smooth_step(
        &mut self,
        model: &Model,
        h: f64,
        t: f64,
        coef: &Coefficients,
        step: usize,
    ) -> Result<NewtonReport, SolveError> {
        let (am, af, g, b) = (coef.alpha_m, coef.alpha_f, coef.gamma, coef.beta);
        // Newton starts from the last converged smooth multipliers (the joint reactions
        // change little over a step; spec §3 starts from zero, the solution is the same),
        // rescaled to this step's k_s = m/h.
        match self.smooth_mult_h {
            Some(h_last) => self
                .smooth
                .reset_scaling_multipliers(&mut self.state, h / h_last),
            None => self.smooth.reset(&mut self.state),
        }
        // Extrapolation over steps of one size, as for the accelerations below: linear,
        // λ_n + d_n with d_n = λ_n − λ_{n−1}, or quadratic, λ_n + d_n + (d_n − d_{n−1}).
        // Only from the converged multipliers of accepted steps (after a rolled-back attempt
        // the stage holds that attempt's, and after a topology change `smooth_mult_prev` is
        // empty).
        let mult = self.smooth.multipliers_mut();
        let start = self.opts.smooth_start;
        let same_h = self.smooth_mult_h == Some(h) && self.stats.h == h;
        let trusted = self.smooth_mult_trusted && start != SmoothStart::Last;
        self.smooth_mult_linear.clear();
        self.smooth_mult_quadratic.clear();
        if same_h && trusted && self.smooth_mult_prev.len() == mult.len() {
            let second = self.smooth_mult_diff.len() == mult.len();
            if !second {
                self.smooth_mult_diff.clear();
                self.smooth_mult_diff.resize(mult.len(), 0.0);
            }
            let quadratic =
                second && self.extrapolation.quadratic && start == SmoothStart::Adaptive;
            for ((m, p), d) in mult
                .iter_mut()
                .zip(self.smooth_mult_prev.iter_mut())
                .zip(self.smooth_mult_diff.iter_mut())
            {
                let now = *m;
                let dn = now - *p;
                let linear = now + dn;
                let curved = linear + (dn - *d);
                if second {
                    self.smooth_mult_linear.push(linear);
                    self.smooth_mult_quadratic.push(curved);
                }
                *m = if quadratic { curved } else { linear };
                *d = dn;
                *p = now;
            }
        } else {
            self.smooth_mult_prev.clear();
            self.smooth_mult_diff.clear();
            if trusted {
                self.smooth_mult_prev.extend_from_slice(mult);
            }
        }
        self.smooth_mult_h = None;
        for i in 0..self.kinds.len() {
            if !self.free[i] {
                // Fixed nodes stay put; prescribed ones follow their motion law.
                self.state.cur[i] = match &self.motion[i] {
                    Some(m) => m.state_at(&self.initial[i], t),
                    None => self.state.prev[i],
                };
                continue;
            }
            let hist = self.hist[i];
            let v_n = rates(&self.state.prev[i]);
            let a_star = (af * hist.vdot - am * hist.a) / (1.0 - am);
            self.pred_v[i] = v_n + h * (1.0 - g) * hist.a + h * g * a_star;
            self.pred_dq[i] = h * v_n + h * h * (0.5 - b) * hist.a + h * h * b * a_star;
        }
        // Newton starts (`SmoothStart`) e.g. from the linear extrapolation
        // v̇̃_{n+1} = v̇̃_n + (v̇̃_n − v̇̃_{n−1}) instead of 0 (spec §3 starts from 0; the converged solution is the same): the
        // unknown Δṽ moves v̇̃ by `c_a Δṽ` (§2), so Δṽ₀ = (2 v̇̃_n − v̇̃_{n−1}) / c_a. On smooth
        // motion the first residual is O(h²) of the zero start's (chain N = 100: 5e-3 against
        // 9e-2 for the start v̇̃_n, and 2.8 → 2.1 smooth iterations per step; flexible
        // slider-crank 1.2 → 0.06 median, same time: more of its modified-Newton matrices
        // are refreshed).
        //
        // Quadratic extrapolation `v̇̃_n + d_n + (d_n − d_{n−1})` (with the multipliers'
        // likewise) when it predicted the last step better than the linear one, the errors
        // of both measured in force units (`M δv̇̃` and `k_s δλ̃`, with `k_s = m/h`): chain
        // N = 10 / 100 2.6 / 2.1 → 2.1 / 1.4 smooth iterations per step. Always quadratic
        // accelerations was worse on the chain of 1 000 links (1.1 → 1.9), and choosing by the
        // accelerations' errors alone too (1.2, and 14 → 24 smooth factorizations in 100
        // steps): the quadratic predicts its accelerations better, its multipliers not.
        let c_a = (1.0 - am) / (h * g * (1.0 - af));
        // (The change over the last step extrapolates only over a step of the same size.)
        let extrapolate = if self.stats.h == h && start != SmoothStart::Last {
            1.0
        } else {
            0.0
        };
        let curve =
            if extrapolate == 1.0 && self.extrapolation.quadratic && start == SmoothStart::Adaptive
            {
                self.summary.quadratic_starts += 1;
                1.0
            } else {
                0.0
            };
        for i in 0..self.kinds.len() {
            if self.free[i] {
                let hist = &self.hist[i];
                let guess = hist.vdot + extrapolate * hist.dvdot + curve * hist.ddvdot;
                self.state.unknown[i] = guess / c_a;
            }
        }
        let cx = self.cx(Level::Smooth, h, t, coef);
        let tol = self.tolerance();
        let (pred_v, pred_dq, free) = (&self.pred_v, &self.pred_dq, &self.free);
        let update = |st: &mut State| update_smooth_states(st, free, pred_v, pred_dq, h, coef);
        update(&mut self.state);
        let report = self
            .smooth
            .newton(model, &mut self.state, &cx, &tol, step, None, update)?;
        // How much closer the quadratic prediction of the multipliers came than the linear one.
        let mult = self.smooth.multipliers();
        self.extrapolation.multiplier_gain =
            (self.smooth_mult_linear.len() == mult.len()).then(|| {
                let (linear, quadratic) = (&self.smooth_mult_linear, &self.smooth_mult_quadratic);
                mult.iter()
                    .zip(linear)
                    .zip(quadratic)
                    .map(|((m, l), q)| (m - q) * (m - q) - (m - l) * (m - l))
                    .sum()
            });
        self.smooth_mult_h = Some(h);
        Ok(report)
    }

    /// Call `level_converged` on every element taking part in `stage`.
    fn notify_level(
        model: &mut Model,
        state: &mut State,
        stage: &Stage,
        smooth: &Stage,
        cx: &StepCx,
    ) {
        let own_base = std::ptr::eq(stage, smooth);
        for ie in 0..model.elements().len() {
            if !stage.system.active[ie] {
                continue;
            }
            match model.elements()[ie].level_hook(cx.level) {
                LevelHook::Skip => continue,
                LevelHook::Context => {
                    model.elements_mut()[ie].level_converged(cx, &LocalState::EMPTY);
                    continue;
                }
                LevelHook::Memo => {
                    if let Some(memo) = stage.memo(ie) {
                        let s = LocalState {
                            mult: stage.element_multipliers(ie),
                            mult_smooth: smooth.element_multipliers(ie),
                            memo: Some(memo),
                            ..LocalState::EMPTY
                        };
                        model.elements_mut()[ie].level_converged(cx, &s);
                        continue;
                    }
                }
                LevelHook::State => {}
            }
            let nn = state.gather(model, ie);
            let local = state.gathered(
                nn,
                own_base,
                stage.element_multipliers(ie),
                smooth.element_multipliers(ie),
            );
            model.elements_mut()[ie].level_converged(cx, &local);
        }
    }

    /// Advance one step of size `h` (no halving). On error the state at `t_n` is unchanged.
    fn try_step(&mut self, model: &mut Model, h: f64) -> Result<(), SolveError> {
        let coef = self.coef;
        let t = self.t + h;
        let step = self.step + 1;

        // Stage 1: smooth motion.
        self.state.clear_base_terms();
        let report = self.smooth_step(model, h, t, &coef, step)?;
        self.note(0, &report);
        let cx = self.cx(Level::Smooth, h, t, &coef);
        Self::notify_level(model, &mut self.state, &self.smooth, &self.smooth, &cx);
        self.state.smooth.clone_from(&self.state.cur);
        // The smooth-state terms the corrections' force differences subtract: evaluated once
        // per step, where first needed.
        self.state.open_base_terms();

        // Stage 2: position correction, q = q̃ ⊕ U, v = ṽ.
        self.correction(model, Level::Position, h, t, step, update_position_states)?;
        self.stats.active_contacts = model
            .elements()
            .iter()
            .filter_map(|e| e.as_contact())
            .filter(|c| c.history.closed)
            .count();
        // Stage 3: velocity jump, q frozen, v = ṽ + W (a sequence of impact problems). Forces
        // of the configuration alone are evaluated once for it.
        self.state.open_frozen_forces();
        let jump = self.velocity_jump(model, h, t, step);
        self.state.close_frozen_forces();
        if jump.is_err() {
            self.end_impact_sequence();
        }
        jump?;

        // Complete the α-recursion and accept: a_{n+1} = a* + (1−α_f)/(1−α_m) v̇̃_{n+1}.
        let (am, af) = (coef.alpha_m, coef.alpha_f);
        let same_h = h == self.stats.h;
        // Both predictions of this step's accelerations were made (see `smooth_step`).
        let judged = same_h && self.extrapolation.differences == 2;
        let mut acceleration_gain = 0.0;
        for i in 0..self.kinds.len() {
            if !self.free[i] {
                continue;
            }
            let hist = &mut self.hist[i];
            let sm = &self.state.smooth[i];
            let vdot = join(&sm.vdot, &sm.omegadot);
            let a_star = (af * hist.vdot - am * hist.a) / (1.0 - am);
            hist.a = a_star + (1.0 - af) / (1.0 - am) * vdot;
            if judged {
                let linear = hist.vdot + hist.dvdot;
                acceleration_gain +=
                    (vdot - linear - hist.ddvdot).norm_squared() - (vdot - linear).norm_squared();
            }
            // Over a step of another size the changes do not extrapolate.
            let (dvdot, ddvdot) = if !same_h {
                (Vector6::zeros(), Vector6::zeros())
            } else if self.extrapolation.differences == 0 {
                (vdot - hist.vdot, Vector6::zeros())
            } else {
                (vdot - hist.vdot, vdot - hist.vdot - hist.dvdot)
            };
            hist.dvdot = dvdot;
            hist.ddvdot = ddvdot;
            hist.vdot = vdot;
        }
        let e = &mut self.extrapolation;
        e.differences = if same_h {
            (e.differences + 1).min(2)
        } else {
            0
        };
        // Force units: M δv̇ against k_s δλ̃ = (m/h) δλ̃, the common m dropped.
        e.quadratic = judged
            && e.multiplier_gain
                .is_some_and(|g| acceleration_gain + g / (h * h) < 0.0);
        self.state.prev.clone_from(&self.state.cur);
        self.t = t;
        self.stats.h = h;
        Ok(())
    }

    /// Solve a correction stage (position or velocity) from the converged smooth state, with the
    /// smooth multipliers as `mult_smooth`, and notify its elements.
    fn correction(
        &mut self,
        model: &mut Model,
        level: Level,
        h: f64,
        t: f64,
        step: usize,
        update: fn(&mut State),
    ) -> Result<(), SolveError> {
        let coef = self.coef;
        let cx = self.cx(level, h, t, &coef);
        let tol = self.correction_tolerance();
        // The velocity jump may start with the position correction's factorization (same `M`
        // and joint rows at nearly the same configuration; `Stage::newton_after`).
        let (index, stage, donor) = match level {
            Level::Position => (1, &mut self.position, None),
            _ => (2, &mut self.velocity, Some(&mut self.position)),
        };
        stage.reset(&mut self.state);
        if self.opts.warm_start {
            stage.warm_start(model, &cx);
        }
        // The position correction of a model without contacts starts from the last one
        // (`PositionStart`; contacts keep their own warm start and a semi-smooth Newton from
        // fresh statuses).
        let start_position = index == 1 && self.opts.warm_start && !stage.has_contacts();
        let start = &self.position_start;
        if start_position
            && start.at == Some((model.topology(), h))
            && start.unknown.len() == self.state.unknown.len()
            && start.mult.len() == stage.multipliers().len()
        {
            self.state.unknown.copy_from_slice(&start.unknown);
            stage.multipliers_mut().copy_from_slice(&start.mult);
            update(&mut self.state);
        }
        let (state, smooth) = (&mut self.state, Some(&self.smooth));
        let report = match donor {
            Some(donor) => stage.newton_after(model, state, &cx, &tol, step, smooth, donor, update),
            None => stage.newton(model, state, &cx, &tol, step, smooth, update),
        }?;
        self.note(index, &report);
        if start_position {
            let start = &mut self.position_start;
            start.unknown.clone_from(&self.state.unknown);
            start.mult.clear();
            start.mult.extend_from_slice(self.position.multipliers());
            start.at = Some((model.topology(), h));
        }
        let stage = if index == 1 {
            &self.position
        } else {
            &self.velocity
        };
        Self::notify_level(model, &mut self.state, stage, &self.smooth, &cx);
        Ok(())
    }

    /// Room for the position correction's start ([`PositionStart`]) at the current topology,
    /// so that storing it allocates nothing inside a step.
    fn size_position_start(&mut self) {
        let start = &mut self.position_start;
        let (n, m) = (self.state.unknown.len(), self.position.multipliers().len());
        start.unknown.reserve(n.saturating_sub(start.unknown.len()));
        start.mult.reserve(m.saturating_sub(start.mult.len()));
    }

    /// Record a stage's Newton report in the step statistics.
    fn note(&mut self, stage: usize, r: &NewtonReport) {
        let s = &mut self.stats.stages_mut()[stage];
        s.iterations = r.iterations;
        s.residual = r.residual;
        s.backtracks = r.backtracks;
        s.solves = 1;
    }

    /// Install a hook called before every step (see [`PreStepHook`]). When it adds or removes
    /// elements, the stages rebuild their patterns before the step, and analyze a changed
    /// pattern at their next factorization (counted in `StageSummary::symbolic_factorizations`);
    /// elements that stay keep their multipliers and their own history. Outputs keep the layout of the elements present when
    /// the integrator was built (a removed element's channels read NaN; elements added later are
    /// not in the per-element datasets).
    pub fn set_pre_step_hook(
        &mut self,
        hook: impl FnMut(&mut Model, f64, &[NodeState]) -> Result<(), saltus_core::BuildError>
            + Send
            + 'static,
    ) {
        self.pre_step = Some(Box::new(hook));
    }

    /// Threads elements are evaluated on.
    pub fn threads(&self) -> usize {
        self.state.threads()
    }

    /// How the stages use the threads ([`ParallelAssembly`]; default adaptive: the faster of
    /// the sequential and parallel assemblies, which give the same result to the bit).
    pub fn set_parallel_assembly(&mut self, policy: ParallelAssembly) {
        self.state.set_parallel_assembly(policy);
    }

    /// Number of element-set changes handled so far.
    pub fn topology_changes(&self) -> usize {
        self.summary.topology_changes
    }

    /// Run the model's detectors and the pre-step hook, and rebuild the stages if the element
    /// set changed.
    fn prepare(&mut self, model: &mut Model) -> Result<(), SolveError> {
        let clock = self.opts.timings.then(std::time::Instant::now);
        let detected = model.run_detectors(self.t, self.opts.h, &self.state.prev);
        if let Some(start) = clock {
            self.summary.detection += start.elapsed();
        }
        detected?;
        if let Some(hook) = self.pre_step.as_mut() {
            hook(model, self.t, &self.state.prev)?;
        }
        if self.smooth.is_stale(model) {
            model.validate()?;
            self.state.refit(model);
            // The multipliers move to the new layout; their history does not.
            self.smooth_mult_prev.clear();
            self.smooth_mult_diff.clear();
            // The next start is linear until both predictions are judged again.
            self.extrapolation.quadratic = false;
            self.extrapolation.multiplier_gain = None;
            // Grows with the element set (allocates at a topology change only).
            self.impact_rate.resize(model.elements().len(), f64::NAN);
            for stage in [&mut self.smooth, &mut self.position, &mut self.velocity] {
                stage.rebuild(model, &self.state)?;
            }
            let n_mult = self.smooth.n_multipliers();
            for v in [
                &mut self.smooth_mult_prev,
                &mut self.smooth_mult_diff,
                &mut self.smooth_mult_linear,
                &mut self.smooth_mult_quadratic,
            ] {
                v.reserve(n_mult);
            }
            self.size_impact_buffers();
            self.size_position_start();
            self.summary.topology_changes += 1;
        }
        Ok(())
    }

    /// Advance one step of the nominal size, halving it on failure when `adaptive` is set.
    pub fn step(&mut self, model: &mut Model) -> Result<StepStats, SolveError> {
        match self.state.pool() {
            Some(pool) => pool.install(|| self.step_inner(model)),
            None => self.step_inner(model),
        }
    }

    fn step_inner(&mut self, model: &mut Model) -> Result<StepStats, SolveError> {
        self.prepare(model)?;
        // Next grid time t_0 + (k+1) h, clamped to t_end (the last step is shortened when
        // t_end is not a multiple of h); beyond t_end the grid continues unclamped.
        let next = (self.grid + 1) as f64 * self.opts.h;
        let end = self.opts.t_end;
        let t_next = if self.t < end && next > end {
            end
        } else {
            next
        };
        // The step spans t → t_next; when that is h up to round-off (t_{k+1} − t_k differs
        // from h in the last bits, which would change the step factors and defeat matrix
        // reuse) it is h itself. A shortened last step, or a retry after a failed half step,
        // takes the actual span.
        let span = t_next - self.t;
        let h = if (span - self.opts.h).abs() <= 1e-9 * self.opts.h {
            self.opts.h
        } else {
            span.max(self.opts.h * 1e-9)
        };
        let stats = self.advance(model, h, 0)?;
        // Land exactly on the grid (sub-steps of a halved step sum with round-off).
        self.t = t_next;
        self.summary.t = t_next;
        self.grid += 1;
        Ok(stats)
    }

    fn advance(
        &mut self,
        model: &mut Model,
        h: f64,
        depth: usize,
    ) -> Result<StepStats, SolveError> {
        // Only the α-history is modified before a step is accepted (nodes at t_n stay in `prev`).
        self.hist_backup.clone_from(&self.hist);
        self.extrapolation_backup = self.extrapolation;
        match self.try_step(model, h) {
            Ok(()) => {
                self.finish_step(model);
                Ok(self.stats)
            }
            Err(e) if self.opts.adaptive && depth < self.opts.max_halvings && recoverable(&e) => {
                self.smooth_mult_trusted = false;
                self.hist.clone_from(&self.hist_backup);
                self.extrapolation = self.extrapolation_backup;
                self.state.cur.clone_from(&self.state.prev);
                self.summary.halvings += 1;
                self.advance(model, 0.5 * h, depth + 1)?;
                self.advance(model, 0.5 * h, depth + 1)
            }
            Err(e) => {
                self.smooth_mult_trusted = false;
                self.hist.clone_from(&self.hist_backup);
                self.extrapolation = self.extrapolation_backup;
                self.state.cur.clone_from(&self.state.prev);
                Err(e)
            }
        }
    }

    fn finish_step(&mut self, model: &mut Model) {
        self.smooth_mult_trusted = true;
        self.step += 1;
        self.summary.steps += 1;
        self.summary.t = self.t;
        let k = [self.mass / self.stats.h, self.mass, self.mass];
        let (h, gravity) = (self.stats.h, self.opts.gravity);
        for ie in 0..model.elements().len() {
            let os = self.output_state(model, ie, k, h, gravity);
            model.elements_mut()[ie].commit(&os);
        }
    }
}

/// `h²/2`: weight of the force difference in the position correction (spec §5, kept as
/// printed in the thesis; it is not a generalized-α weight).
pub const POSITION_FORCE_FACTOR: f64 = 0.5;

/// `ṽ = ṽ* + δ`, `v̇̃ = (1−α_m)/(hγ(1−α_f)) δ`, `Δq = Δq* + (hβ/γ) δ`,
/// `x̃ = x_n + Δx`, `R̃ = R_n exp(Δψ)` with tangent `T(Δψ)` (spec §2, §12).
fn update_smooth_states(
    st: &mut State,
    free: &[bool],
    pred_v: &[Vector6<f64>],
    pred_dq: &[Vector6<f64>],
    h: f64,
    coef: &Coefficients,
) {
    let c_q = h * coef.beta / coef.gamma;
    let c_a = (1.0 - coef.alpha_m) / (h * coef.gamma * (1.0 - coef.alpha_f));
    for i in 0..free.len() {
        if !free[i] {
            continue;
        }
        let d = st.unknown[i];
        let (v, w) = split(&(pred_v[i] + d));
        let (a, wa) = split(&(c_a * d));
        let dq = pred_dq[i] + c_q * d;
        let (dx, dpsi) = split(&dq);
        let prev = st.prev[i];
        let s = &mut st.cur[i];
        s.x = prev.x + dx;
        s.v = v;
        s.vdot = a;
        if st.kinds[i] == NodeKind::Frame {
            s.r = prev.r * lie::exp(&dpsi);
            s.omega = w;
            s.omegadot = wa;
            st.tangent[i] = lie::tangent(&dpsi);
        }
        st.incr[i] = dq;
    }
}

fn recoverable(e: &SolveError) -> bool {
    matches!(
        e,
        SolveError::NonConvergence { .. }
            | SolveError::NonFinite { .. }
            | SolveError::Linear { .. }
            | SolveError::ImpactSequence { .. }
    )
}
