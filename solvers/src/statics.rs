//! Quasi-static equilibrium by load stepping: find `q` with `f(q, λ_load) + g_qᵀ k ν = 0`,
//! `g(q) = 0` for load factors `λ_load = 1/n, 2/n, …, 1` (Newton at each), using the elements'
//! [`Level::Static`] residuals. Used for initial configurations, static tests and static
//! analyses of structures, with the stability of every converged equilibrium monitored along
//! the load path (see [`Stability`]).
//!
//! # Stability monitoring
//!
//! Load control follows the equilibria Newton finds; past a bifurcation or limit point it
//! happily converges to an equilibrium on an unstable branch (a column loaded beyond its
//! Euler load stays straight). A static solve therefore checks every converged equilibrium.
//!
//! The iteration matrix of the static stage at a converged state is the saddle-point matrix
//!
//! ```text
//! S = [ K    −k G_qᵀ ]      K = ∂r/∂q (tangent stiffness, incl. p G_qᵀG_q and the constraint
//!     [ −k G_q   −δ  ]          curvature terms), G_q the constraint Jacobian (m rows),
//!                               δ = ε k²/p the multiplier regularization of the stage
//! ```
//!
//! With `Z` a basis of the null space of `G_q` (the tangent space of the constraints), the
//! equilibrium is stable when the reduced stiffness `Zᵀ K Z` is positive definite. By
//! Sylvester's law of inertia (Schur complement on the multiplier block), a symmetric `S`
//! then has exactly `m` negative eigenvalues, so `sign det S = (−1)^m`, and every eigenvalue of
//! `Zᵀ K Z` that crosses zero flips the sign. This holds with redundant constraints too: the
//! regularization turns the reduction into the penalty form `K + (p/ε) G_qᵀ G_q`.
//!
//! Two checks per converged load step, both on the LU factors of `S` (one extra assembly and
//! factorization per step, plus one at the unloaded initial configuration, load factor 0: the
//! **reference**):
//!
//! 1. the sign of `det S` (`saltus_core::linear::Lu::determinant`, free from the
//!    factors) against the reference's: a change means an odd number of eigenvalues of the
//!    reduced stiffness crossed zero;
//! 2. the eigenvalue `μ` of the reduced stiffness nearest zero, by inverse iteration with the
//!    same factors ([`Stage::smallest_eigenvalue`], a few triangular solves): a negative one
//!    also reveals an even number of crossings that leave the sign unchanged (e.g. the two
//!    bending modes of a column with a doubly symmetric section, buckling at the same load),
//!    and its trend measures the distance to the critical point.
//!
//! A step is unstable when either check says so. The first loss of stability is localized
//! inside its load step by the secant of `μ` between the last stable and the first unstable
//! step, `λ_c = λ_a + (λ_b − λ_a) μ_a/(μ_a − μ_b)`: exact when `μ` is linear in the load
//! (linear pre-buckling: a perfect column, an inverted pendulum), and it needs no equilibrium
//! between the two steps — there may be none near the path (an imperfect column past its
//! Euler load has its stable equilibria far off the near-straight one that load control
//! finds), and interpolating states or tangents of an axially stiff structure between two
//! equilibria of different lateral deflection fakes large axial forces.
//!
//! **Limitations:** the sign misses an even number of simultaneous crossings, and the
//! eigenvalue check sees them only when the eigenvalue nearest zero is one of them (it is
//! just past a double critical point, not necessarily far beyond it). A limit point that
//! Newton jumps over to a stable remote branch (a snap-through: both converged ends are
//! stable) is not seen. The iteration matrix is unsymmetric in general (Lie-group tangents,
//! follower loads): a complex pair of eigenvalues crossing the imaginary axis (flutter)
//! changes neither the sign nor a real eigenvalue (the inverse iteration then does not settle
//! and reports none).
//!
//! An inertia count from a symmetric indefinite factorization (`LDLᵀ` / Bunch–Kaufman) would
//! count every negative eigenvalue, but faer's sparse Bunch–Kaufman pivots only within
//! supernodes, which is not backward stable on these saddle-point matrices (multiplier
//! diagonal ≈ 1e-10, i.e. zero to working precision): a wrong inertia would be worse than a
//! documented blind spot. The LU with partial pivoting that the stage uses anyway is stable.

use crate::error::SolveError;
use crate::stage::{NewtonReport, Stage, Tolerance};
use crate::state::{update_position_states, State};
use nalgebra::Vector3;
use saltus_core::output::{AttributeValue, OutputLayout, ResultSink, StepRecord, StepStats};
use saltus_core::{Energy, Level, Model, OutputState, StepCx};
use std::fmt;

/// Name of the single stage of a static solve (the column of `/solver/iterations`).
pub const STATIC_STAGE: &str = "static";

/// Options of the static solve.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticOptions {
    /// Number of equal load increments.
    pub load_steps: usize,
    /// Relative Newton tolerance (spec §10 test).
    pub tol: f64,
    /// Reference residual of the same test \[N\].
    pub tol_f: f64,
    /// Newton iteration cap per load step.
    pub max_iterations: usize,
    /// Gravity \[m/s²\] (scaled by the load factor like every load).
    pub gravity: Vector3<f64>,
    /// Multiplier scaling `k = p` \[kg\]; `None`: the model's characteristic mass.
    pub characteristic_mass: Option<f64>,
    /// Backtracking line search on `‖r‖` (off by default: in geometrically nonlinear statics a
    /// good Newton step often increases the residual first — a rotation step stretches the
    /// elements — and the search would then creep).
    pub line_search: bool,
    /// Monitor the stability of every converged equilibrium (module docs): one extra assembly
    /// and LU factorization per load step and one at the unloaded start. Default `true`.
    pub stability: bool,
    /// Cap on the subspace-iteration steps for the eigenvalue nearest zero per load step
    /// ([`Stability::smallest_eigenvalues`], [`Stage::smallest_eigenvalue`]; each step is
    /// [`crate::stage::EIGEN_BLOCK`] forward/back substitutions with the existing LU factors;
    /// 0: sign check only, critical load = middle of the step bracket). Default 100 (it
    /// settles to 1e-8 relative in a few steps unless the eigenvalues nearest zero are spread
    /// over more than the block).
    pub stability_eigen_iterations: usize,
}

impl Default for StaticOptions {
    fn default() -> Self {
        Self {
            load_steps: 10,
            tol: 1e-10,
            tol_f: 1e-6,
            max_iterations: 50,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            characteristic_mass: None,
            line_search: false,
            stability: true,
            stability_eigen_iterations: 100,
        }
    }
}

/// Stability of the equilibria along the load path of a static solve (module docs: the sign
/// of the determinant of the static iteration matrix against the unloaded start, and the
/// eigenvalue of the reduced stiffness nearest zero).
///
/// "Unstable" means: an eigenvalue of the stiffness reduced to the constraint tangent space
/// has crossed zero since the reference — a bifurcation or limit point was passed and the
/// load-controlled solution continued on a branch that is not a minimum of the potential
/// energy.
#[derive(Clone, Debug, PartialEq)]
pub struct Stability {
    /// Number `m` of multiplier rows (constraint equations) of the iteration matrix.
    pub constraints: usize,
    /// Determinant sign at the unloaded initial configuration (load factor 0): the reference.
    /// If that matrix was singular, the expected sign `(−1)^m` is the reference.
    pub reference_sign: i8,
    /// Whether the reference is the sign `(−1)^m` of a configuration whose reduced stiffness has
    /// no negative eigenvalue (or an even number of them) and its eigenvalue nearest zero is not
    /// negative. `false`: the unloaded start is itself unstable (or singular) — then "stable"
    /// below means "same determinant sign as the start", not "a minimum of the energy".
    pub initially_stable: bool,
    /// Eigenvalue nearest zero of the reduced stiffness at the reference (NaN: not computed or
    /// not settled). Unit: the Euclidean metric of the node unknowns (see
    /// [`Stage::smallest_eigenvalue`]).
    pub reference_eigenvalue: f64,
    /// Determinant sign of the converged iteration matrix, per load step (`0`: singular).
    pub signs: Vec<i8>,
    /// `ln |det|` of the converged iteration matrix, per load step (`−∞`: singular).
    pub ln_abs_det: Vec<f64>,
    /// Eigenvalue nearest zero of the reduced stiffness, per load step (NaN: not computed or
    /// not settled): the stability margin, falling toward zero as a critical point nears.
    pub smallest_eigenvalues: Vec<f64>,
    /// Whether each converged load step is stable: reference sign and no clearly negative
    /// eigenvalue nearest zero (below `−1e-9` times the magnitude of the reference's).
    pub step_stable: Vec<bool>,
    /// Whether every converged load step is stable.
    pub stable: bool,
    /// Number of determinant sign changes along reference, step 1, …, step n (a loss and a
    /// later regain count one each; 0 with an even number of simultaneous crossings).
    pub sign_changes: usize,
    /// Load factor of the first unstable converged step.
    pub first_unstable_load_factor: Option<f64>,
    /// `(last stable, first unstable)` load factors of converged steps around the first loss
    /// of stability (the last stable one is 0 if the first step is already unstable).
    pub critical_load_factor_bracket: Option<(f64, f64)>,
    /// Estimate of the load factor at which stability was first lost: the secant of the
    /// eigenvalue nearest zero across the bracket (module docs) when it is positive at the
    /// stable end and negative at the unstable one, otherwise the middle of the bracket. The
    /// secant assumes that the eigenvalue nearest zero at the last stable step belongs to the
    /// mode that crosses (true close enough to the critical point; with coarse load steps a
    /// stiffer mode nearest zero there biases the estimate toward the unstable step).
    pub critical_load_factor: Option<f64>,
    /// Whether [`Stability::critical_load_factor`] is the eigenvalue secant (`false`: the
    /// middle of the bracket).
    pub critical_load_factor_from_eigenvalues: bool,
}

/// Relative change at which the inverse iteration for the eigenvalue nearest zero stops.
const EIGEN_TOL: f64 = 1e-8;

/// An eigenvalue nearest zero counts as negative below `−NEGATIVE_EIGENVALUE` times the
/// magnitude of the reference's (round-off of an eigenvalue that is zero: a neutral direction).
const NEGATIVE_EIGENVALUE: f64 = 1e-9;

impl Stability {
    /// Add the checks of the converged load step `k` of `n`: determinant `sign`, `ln |det|`,
    /// eigenvalue nearest zero `mu` (NaN: none).
    fn push_step(&mut self, k: usize, n: usize, sign: i8, ln_abs: f64, mu: f64) {
        let previous_sign = self.signs.last().copied().unwrap_or(self.reference_sign);
        let previous_mu = self
            .smallest_eigenvalues
            .last()
            .copied()
            .unwrap_or(self.reference_eigenvalue);
        if sign != previous_sign {
            self.sign_changes += 1;
        }
        // The eigenvalue check counts only where the start was a minimum (else its negative
        // eigenvalue is the reference state of affairs).
        let scale = self.reference_eigenvalue.abs();
        let negative = self.initially_stable
            && mu < -NEGATIVE_EIGENVALUE * if scale.is_finite() { scale } else { 0.0 };
        let step_stable = sign == self.reference_sign && !negative;
        self.signs.push(sign);
        self.ln_abs_det.push(ln_abs);
        self.smallest_eigenvalues.push(mu);
        self.step_stable.push(step_stable);
        if step_stable || !self.stable {
            return;
        }
        // First loss of stability.
        let (lambda_a, load_factor) = ((k - 1) as f64 / n as f64, k as f64 / n as f64);
        self.stable = false;
        self.first_unstable_load_factor = Some(load_factor);
        self.critical_load_factor_bracket = Some((lambda_a, load_factor));
        if self.initially_stable && previous_mu > 0.0 && mu < 0.0 {
            let s = previous_mu / (previous_mu - mu);
            self.critical_load_factor = Some(lambda_a + s * (load_factor - lambda_a));
            self.critical_load_factor_from_eigenvalues = true;
        } else {
            self.critical_load_factor = Some(0.5 * (lambda_a + load_factor));
        }
    }

    /// Load factor of the last converged stable step before the first loss of stability.
    pub fn last_stable_load_factor(&self) -> Option<f64> {
        self.critical_load_factor_bracket.map(|(a, _)| a)
    }

    /// Whether stability was lost with the determinant sign unchanged (an even number of
    /// eigenvalues crossed zero; seen by the eigenvalue check only).
    pub fn even_crossing(&self) -> bool {
        self.signs
            .iter()
            .zip(&self.step_stable)
            .any(|(&sign, &stable)| sign == self.reference_sign && !stable)
    }
}

impl fmt::Display for Stability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.signs.len();
        if self.stable {
            write!(
                f,
                "stable: no eigenvalue of the reduced tangent stiffness crossed zero over the \
                 {n} load steps"
            )?;
        } else {
            let (a, b) = self
                .critical_load_factor_bracket
                .unwrap_or((f64::NAN, f64::NAN));
            write!(
                f,
                "STABILITY LOST between load factors {a} and {b}: the tangent stiffness is no \
                 longer positive definite (a limit or bifurcation point was crossed; from load \
                 factor {b} on, the equilibria found are on an unstable branch)"
            )?;
            if let Some(c) = self.critical_load_factor {
                let how = if self.critical_load_factor_from_eigenvalues {
                    "from the eigenvalue nearest zero"
                } else {
                    "middle of the bracket"
                };
                write!(f, "; critical load factor ≈ {c:.6} ({how})")?;
            }
            let unstable = self.step_stable.iter().filter(|&&s| !s).count();
            write!(
                f,
                "; {unstable} of {n} load steps unstable, {} determinant sign change(s)",
                self.sign_changes
            )?;
            if self.even_crossing() {
                write!(
                    f,
                    " (an even number of eigenvalues crossed together where the sign did not \
                     change)"
                )?;
            }
        }
        if !self.initially_stable {
            write!(
                f,
                " [the unloaded initial configuration itself is not stable (determinant sign \
                 {} where (−1)^m = {} for m = {} constraint rows, eigenvalue nearest zero \
                 {:.3e}): stability is judged relative to it]",
                self.reference_sign,
                expected_sign(self.constraints),
                self.constraints,
                self.reference_eigenvalue
            )?;
        }
        Ok(())
    }
}

/// Result of a static solve. Not an error: a run that lost stability still returns `Ok`,
/// with [`StaticSummary::stability`] saying so (and the message in its `Display`).
#[derive(Clone, Debug, PartialEq)]
pub struct StaticSummary {
    /// Newton iterations per load step.
    pub iterations: Vec<usize>,
    /// Final residual norm per load step.
    pub residual: Vec<f64>,
    /// Stability along the load path (`None` if [`StaticOptions::stability`] is off).
    pub stability: Option<Stability>,
}

impl StaticSummary {
    /// Whether every converged equilibrium was found stable (`None`: not monitored).
    pub fn is_stable(&self) -> Option<bool> {
        self.stability.as_ref().map(|s| s.stable)
    }
}

impl fmt::Display for StaticSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total: usize = self.iterations.iter().sum();
        let max = self.iterations.iter().copied().max().unwrap_or(0);
        write!(
            f,
            "static solve: {} load steps, {total} Newton iterations (max {max} per step), final \
             residual {:.3e}; ",
            self.iterations.len(),
            self.residual.last().copied().unwrap_or(0.0)
        )?;
        match &self.stability {
            Some(s) => write!(f, "{s}"),
            None => write!(f, "stability not monitored"),
        }
    }
}

/// Sign of the determinant of a stable static iteration matrix with `m` multiplier rows.
fn expected_sign(m: usize) -> i8 {
    if m.is_multiple_of(2) {
        1
    } else {
        -1
    }
}

/// Solve the static equilibrium of `model` under its loads, starting from the initial node
/// states (nodes need no mass: massless connector nodes are allowed); on success the nodes'
/// initial positions and rotations are replaced by the equilibrium (velocities untouched), so
/// a following dynamic run starts from it. The
/// stability of the equilibria is monitored (module docs) unless switched off.
pub fn solve_static(model: &mut Model, opts: &StaticOptions) -> Result<StaticSummary, SolveError> {
    StaticSolve::new(model, opts)?.run(model, None)
}

/// [`solve_static`] writing its results to `sink`: one record per converged load step
/// preceded by the initial configuration (record 0), so `load_steps + 1` records. In a static
/// run the record "time" is the **load factor** (`/time` in an HDF5 file: 0, 1/n, …, 1), the
/// step size `h` of the statistics the load-factor increment `1/n`, the single stage column is
/// [`STATIC_STAGE`], the joints' `reaction_smooth` channels hold the static reactions (the
/// position and velocity multiplier channels are zero) and the energies are NaN (the
/// elements' energies do not know the load factor). After the last record the stability
/// result goes to [`ResultSink::solver_attributes`] (HDF5: attributes of `/solver`, see
/// `docs/hdf5-layout.md`). On failure the sink is finished (the steps so far are kept) and
/// the error returned.
pub fn solve_static_with_sink(
    model: &mut Model,
    opts: &StaticOptions,
    sink: &mut dyn ResultSink,
) -> Result<StaticSummary, SolveError> {
    let solve = StaticSolve::new(model, opts)?;
    sink.begin(&solve.layout)?;
    let result = solve.run(model, Some(&mut *sink));
    let finished = sink.finish();
    let summary = result?;
    finished?;
    Ok(summary)
}

/// `(name, value)` pairs of the stability result for [`ResultSink::solver_attributes`] (the
/// HDF5 attributes of `/solver` documented in `docs/hdf5-layout.md`).
pub fn stability_attributes(summary: &StaticSummary) -> Vec<(&'static str, AttributeValue)> {
    use AttributeValue::{Bool, Float, Int, Text};
    let nan = f64::NAN;
    let mut v = vec![
        ("static_load_steps", Int(summary.iterations.len() as i64)),
        (
            "static_stability_monitored",
            Bool(summary.stability.is_some()),
        ),
    ];
    if let Some(s) = &summary.stability {
        let (a, b) = s.critical_load_factor_bracket.unwrap_or((nan, nan));
        v.extend([
            ("static_stable", Bool(s.stable)),
            ("static_initially_stable", Bool(s.initially_stable)),
            ("static_constraint_rows", Int(s.constraints as i64)),
            ("static_sign_changes", Int(s.sign_changes as i64)),
            ("static_last_stable_load_factor", Float(a)),
            ("static_first_unstable_load_factor", Float(b)),
            (
                "static_critical_load_factor",
                Float(s.critical_load_factor.unwrap_or(nan)),
            ),
            (
                "static_critical_load_factor_from_eigenvalues",
                Bool(s.critical_load_factor_from_eigenvalues),
            ),
        ]);
    }
    v.push(("static_summary", Text(summary.to_string())));
    v
}

/// One static solve: state, stage and output buffers.
struct StaticSolve<'o> {
    opts: &'o StaticOptions,
    state: State,
    stage: Stage,
    /// Multiplier scaling `k = p` \[kg\].
    mass: f64,
    tol: Tolerance,
    layout: OutputLayout,
    values: Vec<f64>,
    zeros: Vec<f64>,
}

impl<'o> StaticSolve<'o> {
    fn new(model: &mut Model, opts: &'o StaticOptions) -> Result<Self, SolveError> {
        if opts.load_steps == 0 {
            return Err(SolveError::Options {
                option: "load_steps",
                message: "must be >= 1".into(),
            });
        }
        model.validate_static()?;
        let state = State::new(model);
        let stage = Stage::new(STATIC_STAGE, Level::Static, model, &state)?;
        let mass = opts
            .characteristic_mass
            .unwrap_or_else(|| model.characteristic_mass());
        let tol = Tolerance {
            tol: opts.tol,
            tol_f: opts.tol_f,
            max_iterations: opts.max_iterations,
            line_search: opts.line_search,
            // Full Newton: each load step is a new problem, and the stability monitor
            // factorizes at every converged point anyway.
            jacobian_reuse: None,
            exact_reuse: false,
            first_order_constraints: false,
            // A static stage has no contact rows.
            contact_fallback: false,
            contacts_first: false,
        };
        let layout = OutputLayout::for_model(model, &[STATIC_STAGE]);
        let values = vec![0.0; layout.n_element_values];
        let zeros = vec![0.0; stage.n_multipliers()];
        Ok(Self {
            opts,
            state,
            stage,
            mass,
            tol,
            layout,
            values,
            zeros,
        })
    }

    /// Stage context of the static stage at `load_factor`.
    fn cx(&self, load_factor: f64) -> StepCx {
        let m = self.mass;
        let (inertia, force_difference) = StepCx::level_terms(Level::Static);
        StepCx {
            level: Level::Static,
            t: load_factor,
            h: 0.0,
            gravity: self.opts.gravity,
            k: m,
            p: m,
            k_s: m,
            dq_dv: 1.0,
            dvdot_dv: 0.0,
            dv_dv: 0.0,
            force_weight: 1.0,
            inertia,
            force_difference,
            load_factor,
            load_tolerance: 0.0,
        }
    }

    /// Determinant sign, `ln |det|` and eigenvalue nearest zero (NaN: not computed or not
    /// settled) of the iteration matrix at the current state (`step` for errors).
    fn check(
        &mut self,
        model: &Model,
        load_factor: f64,
        step: usize,
    ) -> Result<(i8, f64, f64), SolveError> {
        let cx = self.cx(load_factor);
        let d = self.stage.determinant(model, &mut self.state, &cx, step)?;
        let mu = if d.sign == 0 {
            0.0
        } else {
            self.stage
                .smallest_eigenvalue(self.opts.stability_eigen_iterations, EIGEN_TOL)
                .unwrap_or(f64::NAN)
        };
        Ok((d.sign, d.ln_abs, mu))
    }

    fn run(
        mut self,
        model: &mut Model,
        mut sink: Option<&mut dyn ResultSink>,
    ) -> Result<StaticSummary, SolveError> {
        let n = self.opts.load_steps;
        let mut summary = StaticSummary {
            iterations: Vec::with_capacity(n),
            residual: Vec::with_capacity(n),
            stability: None,
        };
        if let Some(sink) = sink.as_deref_mut() {
            self.record(model, sink, 0, 0.0, None)?;
        }
        // Reference at the unloaded initial configuration (zero multipliers).
        let mut stability = if self.opts.stability {
            let m = self.stage.n_multipliers();
            let (sign, _, mu) = self.check(model, 0.0, 0)?;
            let expected = expected_sign(m);
            Some(Stability {
                constraints: m,
                reference_sign: if sign == 0 { expected } else { sign },
                // A NaN eigenvalue (not settled) does not count against the start.
                initially_stable: sign == expected && (mu.is_nan() || mu >= 0.0),
                reference_eigenvalue: mu,
                signs: Vec::with_capacity(n),
                ln_abs_det: Vec::with_capacity(n),
                smallest_eigenvalues: Vec::with_capacity(n),
                step_stable: Vec::with_capacity(n),
                stable: true,
                sign_changes: 0,
                first_unstable_load_factor: None,
                critical_load_factor_bracket: None,
                critical_load_factor: None,
                critical_load_factor_from_eigenvalues: false,
            })
        } else {
            None
        };
        for k in 1..=n {
            let load_factor = k as f64 / n as f64;
            let cx = self.cx(load_factor);
            // Increments are measured from the last converged configuration (kept in `smooth`),
            // so the rotation increment stays small even for large total rotations.
            self.state.smooth.clone_from(&self.state.cur);
            self.state.reset_unknowns();
            let report = self.stage.newton(
                model,
                &mut self.state,
                &cx,
                &self.tol,
                k,
                None,
                update_position_states,
            )?;
            summary.iterations.push(report.iterations);
            summary.residual.push(report.residual);
            if stability.is_some() {
                // The tangent at the converged configuration as the next step's first Newton
                // iteration sees it (increments from there).
                self.state.smooth.clone_from(&self.state.cur);
                self.state.reset_unknowns();
                let (sign, ln_abs, mu) = self.check(model, load_factor, k)?;
                if let Some(s) = stability.as_mut() {
                    s.push_step(k, n, sign, ln_abs, mu);
                }
            }
            if let Some(sink) = sink.as_deref_mut() {
                self.record(model, sink, k, load_factor, Some(&report))?;
            }
        }
        summary.stability = stability;
        if let Some(sink) = sink {
            sink.solver_attributes(&stability_attributes(&summary))?;
        }
        for (def, s) in model.nodes_mut().iter_mut().zip(&self.state.cur) {
            def.initial.x = s.x;
            def.initial.r = s.r;
        }
        Ok(summary)
    }

    /// Send the current state (load factor `load_factor`, step `k`) to `sink`.
    fn record(
        &mut self,
        model: &Model,
        sink: &mut dyn ResultSink,
        k: usize,
        load_factor: f64,
        report: Option<&NewtonReport>,
    ) -> Result<(), SolveError> {
        let dl = 1.0 / self.opts.load_steps as f64;
        let m = self.mass;
        let mut values = std::mem::take(&mut self.values);
        for ie in 0..model.elements().len() {
            let off = self.layout.element_offsets[ie];
            let len: usize = self.layout.element_outputs[ie].iter().map(|o| o.len).sum();
            let nn = self.state.gather(model, ie);
            let mult = self.stage.element_multipliers(ie);
            let os = OutputState {
                t: load_factor,
                nodes: self.state.gathered_nodes(nn),
                kinds: self.state.gathered_kinds(nn),
                mult_smooth: mult,
                mult_position: &self.zeros[..mult.len()],
                mult_velocity: &self.zeros[..mult.len()],
                k: [m, m, m],
                h: dl,
                gravity: self.opts.gravity * load_factor,
            };
            model.elements()[ie].write_outputs(&os, &mut values[off..off + len]);
        }
        let mut stats = StepStats::new(1);
        if let Some(r) = report {
            stats.stages_mut()[0] = saltus_core::StageStep {
                iterations: r.iterations,
                residual: r.residual,
                backtracks: r.backtracks,
                solves: 1,
            };
            stats.h = dl;
        }
        let result = sink.record(&StepRecord {
            step: k,
            t: load_factor,
            nodes: &self.state.cur,
            element_values: &values,
            stats,
            energy: Energy {
                kinetic: f64::NAN,
                potential: f64::NAN,
            },
            // Contacts take no part in the static stage: an empty contact table.
            contacts: &[],
        });
        self.values = values;
        result?;
        Ok(())
    }
}
