//! Quasi-static equilibrium by load stepping: find `q` with `f(q, λ_load) + g_qᵀ k ν = 0`,
//! `g(q) = 0` for load factors `λ_load = 1/n, 2/n, …, 1` (Newton at each), using the elements'
//! [`Level::Static`] residuals. Used for initial configurations and static tests.

use crate::error::SolveError;
use crate::stage::{Stage, Tolerance};
use crate::state::{update_position_states, State};
use nalgebra::Vector3;
use saltus_core::{Level, Model, StepCx};

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
        }
    }
}

/// Result of a static solve.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticSummary {
    /// Newton iterations per load step.
    pub iterations: Vec<usize>,
    /// Final residual norm per load step.
    pub residual: Vec<f64>,
}

/// Solve the static equilibrium of `model` under its loads, starting from the initial node
/// states (nodes need no mass: massless connector nodes are allowed); on success the nodes' initial positions and rotations are replaced by the
/// equilibrium (velocities untouched), so a following dynamic run starts from it.
pub fn solve_static(model: &mut Model, opts: &StaticOptions) -> Result<StaticSummary, SolveError> {
    if opts.load_steps == 0 {
        return Err(SolveError::Options {
            option: "load_steps",
            message: "must be >= 1".into(),
        });
    }
    model.validate_static()?;
    let mut state = State::new(model);
    let mut stage = Stage::new("static", Level::Static, model, &state)?;
    let m = opts
        .characteristic_mass
        .unwrap_or_else(|| model.characteristic_mass());
    let tol = Tolerance {
        tol: opts.tol,
        tol_f: opts.tol_f,
        max_iterations: opts.max_iterations,
        line_search: opts.line_search,
    };
    let mut summary = StaticSummary {
        iterations: Vec::new(),
        residual: Vec::new(),
    };
    for k in 1..=opts.load_steps {
        let load_factor = k as f64 / opts.load_steps as f64;
        let (inertia, force_difference) = StepCx::level_terms(Level::Static);
        let cx = StepCx {
            level: Level::Static,
            t: load_factor,
            h: 0.0,
            gravity: opts.gravity,
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
        };
        // Increments are measured from the last converged configuration (kept in `smooth`),
        // so the rotation increment stays small even for large total rotations.
        state.smooth.clone_from(&state.cur);
        state.reset_unknowns();
        let report = stage.newton(
            model,
            &mut state,
            &cx,
            &tol,
            k,
            None,
            update_position_states,
        )?;
        summary.iterations.push(report.iterations);
        summary.residual.push(report.residual);
    }
    for (def, s) in model.nodes_mut().iter_mut().zip(&state.cur) {
        def.initial.x = s.x;
        def.initial.r = s.r;
    }
    Ok(summary)
}
