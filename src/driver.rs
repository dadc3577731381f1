//! What the `saltus` program does, as a library: load a model, integrate it with NSGA and
//! write HDF5 results, with a progress bar and a one-line summary.

use saltus_io::model_file::ImpactMode;
use saltus_io::{load_model, parse_str, Format, Hdf5Sink, IoError, ModelFile, SimulationSettings};
use saltus_solvers::{ImpactSequence, Nsga, NsgaOptions, RunSummary, SolveError};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The built-in default model (`models/slider_crank.toml`): a rigid slider–crank spun up from
/// rest.
pub const DEFAULT_MODEL: &str = include_str!("../models/slider_crank.toml");

/// Results file of the default model.
pub const DEFAULT_OUTPUT: &str = "saltus-default.h5";

/// A run request: model, output and overrides of the model's `[simulation]` table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunRequest {
    /// Model file (`None`: the built-in default model).
    pub model: Option<PathBuf>,
    /// HDF5 output path.
    pub output: Option<PathBuf>,
    /// Final time override \[s\].
    pub t_end: Option<f64>,
    /// Step size override \[s\].
    pub h: Option<f64>,
    /// `ρ∞` override.
    pub rho_inf: Option<f64>,
    /// Step halving on non-convergence.
    pub adaptive: bool,
    /// Threads for element evaluation (`None`: `RAYON_NUM_THREADS`, else the available cores).
    pub threads: Option<usize>,
    /// No progress bar.
    pub quiet: bool,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The model file could not be read or is invalid.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The model or options are invalid, or the integration failed.
    #[error("{source}{}", kept.as_ref().map(|p| format!(" (results up to the failure kept in {})", p.display())).unwrap_or_default())]
    Solve {
        /// The solver error.
        source: SolveError,
        /// The results file holding the steps completed before the failure.
        kept: Option<PathBuf>,
    },
}

/// Summary of a finished run (the program's one-line report).
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Newton and timing statistics.
    pub summary: RunSummary,
    /// Results file written.
    pub output: PathBuf,
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        let m = s.mean_iterations();
        // LU factorizations per step (fewer than iterations under modified Newton).
        let lu = s.numeric_factorizations();
        let per_step = |i: usize| lu[i] as f64 / s.steps.max(1) as f64;
        write!(
            f,
            "saltus: {} steps to t = {:.6} s in {:.3} s; Newton iterations per step \
             (smooth/position/velocity) mean {:.2}/{:.2}/{:.2}, max {}/{}/{}, LU factorizations \
             {:.2}/{:.2}/{:.2}{}; results in {}",
            s.steps,
            s.t,
            s.wall.as_secs_f64(),
            m[0],
            m[1],
            m[2],
            s.max_iterations()[0],
            s.max_iterations()[1],
            s.max_iterations()[2],
            per_step(0),
            per_step(1),
            per_step(2),
            if s.halvings > 0 {
                format!(", {} step halvings", s.halvings)
            } else {
                String::new()
            },
            self.output.display()
        )
    }
}

/// Integrator options from a model's `[simulation]` table and the request's overrides.
pub fn nsga_options(sim: &SimulationSettings, req: &RunRequest) -> NsgaOptions {
    NsgaOptions {
        h: req.h.unwrap_or(sim.h),
        t_end: req.t_end.unwrap_or(sim.t_end),
        rho_inf: req.rho_inf.unwrap_or(sim.rho_inf),
        tol: sim.tol,
        max_iterations: sim.max_iterations,
        gravity: sim.gravity_vector(),
        adaptive: req.adaptive || sim.adaptive,
        output_every: sim.output_every,
        jacobian_reuse: (sim.jacobian_reuse > 0.0).then_some(sim.jacobian_reuse),
        threads: req.threads.unwrap_or(0),
        impacts: match sim.impacts {
            ImpactMode::Sequence => Some(ImpactSequence {
                tolerance: sim.impact_tolerance,
                max_problems: sim.max_impact_problems,
            }),
            ImpactMode::Simultaneous => None,
        },
        warm_start: sim.warm_start,
        ..NsgaOptions::default()
    }
}

/// Load and run a model file.
pub fn run_file(path: &Path, req: &RunRequest) -> Result<RunReport, RunError> {
    let file = load_model(path)?;
    let default_out = path.with_extension("h5");
    run_model_file(file, req, default_out)
}

/// Parse and run a TOML model given as text (`source` names it in error messages).
pub fn run_text(text: &str, source: &str, req: &RunRequest) -> Result<RunReport, RunError> {
    let file = parse_str(text, Format::Toml, source)?;
    run_model_file(file, req, PathBuf::from(DEFAULT_OUTPUT))
}

fn run_model_file(
    mut file: ModelFile,
    req: &RunRequest,
    default_out: PathBuf,
) -> Result<RunReport, RunError> {
    let output = req
        .output
        .clone()
        .or_else(|| file.simulation.output.clone())
        .unwrap_or(default_out);
    let opts = nsga_options(&file.simulation, req);
    let solve = |source| RunError::Solve { source, kept: None };
    let mut solver = Nsga::new(&mut file.model, opts.clone()).map_err(solve)?;
    let mut sink = Hdf5Sink::create(&output)
        .map_err(|e| solve(SolveError::Sink(e)))?
        .with_model_text(file.text.clone())
        .with_created_by(format!("saltus {}", env!("CARGO_PKG_VERSION")));
    let mut bar = Progress::new(opts.t_end, req.quiet);
    let result = solver.run(&mut file.model, &mut sink, &mut |t| bar.update(t));
    bar.finish();
    match result {
        Ok(summary) => Ok(RunReport { summary, output }),
        Err(source) => Err(RunError::Solve {
            source,
            kept: Some(output),
        }),
    }
}

/// A text progress bar on standard error, redrawn at most every 100 ms.
struct Progress {
    t_end: f64,
    enabled: bool,
    start: Instant,
    last: Option<Instant>,
}

impl Progress {
    fn new(t_end: f64, quiet: bool) -> Self {
        Self {
            t_end,
            enabled: !quiet,
            start: Instant::now(),
            last: None,
        }
    }

    fn update(&mut self, t: f64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self
            .last
            .is_some_and(|l| now - l < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        let frac = if self.t_end > 0.0 {
            (t / self.t_end).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let width = 40;
        let filled = (frac * width as f64).round() as usize;
        let elapsed = self.start.elapsed().as_secs_f64();
        let eta = if frac > 0.0 {
            elapsed * (1.0 - frac) / frac
        } else {
            0.0
        };
        eprint!(
            "\r[{}{}] {:5.1}%  t = {:.4e} s  elapsed {:.1} s  eta {:.1} s ",
            "#".repeat(filled),
            ".".repeat(width - filled),
            100.0 * frac,
            t,
            elapsed,
            eta
        );
        let _ = std::io::stderr().flush();
    }

    fn finish(&mut self) {
        if self.enabled && self.last.is_some() {
            eprintln!();
        }
    }
}

/// `saltus elements`: every registered element type with its summary and example parameters.
pub fn elements_listing() -> String {
    let mut s = String::new();
    for k in saltus_core::element_kinds() {
        let nodes: Vec<String> = k
            .example_nodes
            .iter()
            .map(|n| format!("{n:?}").to_lowercase())
            .collect();
        s.push_str(&format!("{:<22} {}\n", k.type_name, k.summary));
        s.push_str(&format!("{:<22} nodes: [{}]\n", "", nodes.join(", ")));
        let example = (k.example)();
        if let Some(map) = example.as_object() {
            for (key, value) in map {
                s.push_str(&format!("{:<22} {key} = {value}\n", ""));
            }
        }
        s.push('\n');
    }
    s
}
