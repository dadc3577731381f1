//! What the `saltus` program does, as a library: load a model, integrate it with NSGA and
//! write HDF5 results, with a progress bar and a one-line summary.

use saltus_core::Level;
use saltus_io::model_file::{ContactSolverMode, ImpactMode};
use saltus_io::{load_model, parse_str, Format, Hdf5Sink, IoError, ModelFile, SimulationSettings};
use saltus_solvers::{ContactSolver, ImpactSequence, Nsga, NsgaOptions, RunSummary, SolveError};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Measure where the run's time goes (`NsgaOptions::timings`); the report then has a
    /// second line with the split.
    pub timings: bool,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The results path would overwrite something that is not a results file.
    #[error("{}: {why}; choose another output (-o)", path.display())]
    Output {
        /// The refused output path.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The model file could not be read or is invalid.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The model or options are invalid, or the integration failed.
    #[error(
        "{model}: {source}{}{}{}",
        kept.as_ref().map(|p| format!(" (results up to the failure kept in {})", p.display())).unwrap_or_default(),
        suspects.iter().map(|s| format!("\nsuspect: {s}")).collect::<String>(),
        hint(source, *adaptive)
    )]
    Solve {
        /// The model's source name (its file).
        model: String,
        /// Step halving was on.
        adaptive: bool,
        /// The solver error.
        source: Box<SolveError>,
        /// The results file holding the steps completed before the failure.
        kept: Option<PathBuf>,
        /// Parameters of the elements the error names that lie far outside physical ranges
        /// ([`extreme_parameters`]).
        suspects: Vec<String>,
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
            "saltus: {} step{} to t = {:.6} s in {:.3} s; Newton iterations per step \
             (smooth/position/velocity) mean {:.2}/{:.2}/{:.2}, max {}/{}/{}, LU factorizations \
             {:.2}/{:.2}/{:.2}{}{}; results in {}",
            s.steps,
            if s.steps == 1 { "" } else { "s" },
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
                let plural = if s.halvings == 1 { "" } else { "s" };
                format!(", {} step halving{plural}", s.halvings)
            } else {
                String::new()
            },
            match s.stages.iter().map(|st| st.settled).sum::<usize>() {
                0 => String::new(),
                1 => ", 1 solve settled by contact Gauss–Seidel".into(),
                k => format!(", {k} solves settled by contact Gauss–Seidel"),
            },
            self.output.display()
        )?;
        if s.stages.iter().any(|st| st.times.total > Duration::ZERO) {
            write!(f, "\n{}", TimeSplit(s))?;
        }
        Ok(())
    }
}

/// The second line of a timed run's report (`--timings`), in milliseconds: the contact
/// detection, each stage's solves in total and their parts, and the rest of the steps' wall
/// time, outside the stages: predictor, rebuilds when the element set changes, the impact
/// sequence's bookkeeping, the elements' level hooks and commits, output collection and
/// writes, the progress bar (not the integrator's set-up nor the output file's closing).
struct TimeSplit<'a>(&'a RunSummary);

impl fmt::Display for TimeSplit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let ms = |d: Duration| 1e3 * d.as_secs_f64();
        write!(f, "saltus: time [ms]: detection {:.1}", ms(s.detection))?;
        let mut outside = ms(s.wall) - ms(s.detection);
        for st in &s.stages {
            let t = &st.times;
            outside -= ms(t.total);
            write!(
                f,
                "; {} total {:.1} (assembly {:.1}, factorization {:.1}",
                st.name,
                ms(t.total),
                ms(t.assembly),
                ms(t.factorization)
            )?;
            if t.sweeps + t.contact_linearization > Duration::ZERO {
                write!(
                    f,
                    ", contact linearization {:.1}, sweeps {:.1}",
                    ms(t.contact_linearization),
                    ms(t.sweeps)
                )?;
            }
            write!(f, ")")?;
        }
        write!(f, "; outside the stages {outside:.1}")
    }
}

/// What to try after a failed run, for the failures a user can act on.
fn hint(e: &SolveError, adaptive: bool) -> String {
    let base = match e {
        SolveError::NonConvergence { .. } if adaptive => {
            "\nhint: a smaller step (--h or [simulation] h), or more iterations ([simulation] \
             max_iterations)"
        }
        SolveError::NonConvergence { .. } => {
            "\nhint: a smaller step (--h or [simulation] h), or --adaptive ([simulation] adaptive \
             = true) to retry a failed step as two half steps"
        }
        // A singular iteration matrix names no element: nothing "named above" to point at.
        SolveError::NonFinite { what, .. } if !what.contains("element `") => {
            "\nhint: a parameter is probably many orders of magnitude off the others (a mass, \
             stiffness or inertia: compare the elements' values), or the step is too large"
        }
        SolveError::NonFinite { .. } | SolveError::Element { .. } => {
            "\nhint: a parameter of the element named above is probably out of range (a mass, \
             stiffness or inertia many orders of magnitude off), or the step is too large"
        }
        _ => "",
    };
    // The solves that carry contact rows (position correction, velocity jump).
    let contacts = match e {
        SolveError::NonConvergence {
            level: Level::Position | Level::Velocity,
            ..
        } => {
            "; a settling pile of many contacts may need a looser tolerance ([simulation] tol = \
             1e-5, as granular codes use)"
        }
        _ => "",
    };
    format!("{base}{contacts}")
}

/// Magnitude beyond which (or, non-zero, below whose inverse) a parameter is "far outside
/// physical ranges": SI values of real mechanisms — moduli ≈ 1e11 Pa, stiffnesses ≤ 1e12 N/m,
/// masses and lengths from 1e-9 on — stay well inside [1e-30, 1e30].
pub const EXTREME_MAGNITUDE: f64 = 1e30;

/// `file:line: element `E`: parameter `key` = value …` for every numeric parameter (or array
/// component) of the elements named in `message` (as ``element `name` ``) whose magnitude is
/// beyond [`EXTREME_MAGNITUDE`] or, non-zero, below its inverse; the line is where the value
/// is written (the `[[elements]]` entry, or the `[[beam_lines]]` entry that made the element).
pub fn extreme_parameters(file: &ModelFile, message: &str) -> Vec<String> {
    fn numbers(v: &serde_json::Value, out: &mut Vec<f64>) {
        match v {
            serde_json::Value::Number(n) => out.extend(n.as_f64()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for def in &file.elements {
        if !message.contains(&format!("element `{}`", def.name)) {
            continue;
        }
        let Some(params) = def.parameters.as_object() else {
            continue;
        };
        for (key, value) in params {
            let mut xs = Vec::new();
            numbers(value, &mut xs);
            let extreme = xs.iter().any(|x| {
                let a = x.abs();
                a > EXTREME_MAGNITUDE || (a > 0.0 && a < 1.0 / EXTREME_MAGNITUDE)
            });
            if extreme {
                let at = file
                    .parameter_location(&def.name, key)
                    .map(|l| format!("{l}: "))
                    .unwrap_or_default();
                out.push(format!(
                    "{at}element `{}`: parameter `{key}` = {value} is far outside physical \
                     ranges",
                    def.name
                ));
            }
        }
    }
    out
}

/// Refuse an output path that is the model file itself or an existing file that is not HDF5
/// (its first bytes are not the HDF5 signature): a run must not destroy its input or another
/// file.
fn check_output(output: &Path, model: Option<&Path>) -> Result<(), RunError> {
    let refuse = |why: &str| RunError::Output {
        path: output.to_path_buf(),
        why: why.into(),
    };
    if let (Some(m), Ok(o)) = (model, output.canonicalize()) {
        if m.canonicalize().is_ok_and(|m| m == o) {
            return Err(refuse("this is the model file"));
        }
    }
    if output.is_dir() {
        return Err(refuse("this is a directory"));
    }
    if let Ok(mut f) = std::fs::File::open(output) {
        use std::io::Read;
        let mut head = [0u8; 8];
        let n = f.read(&mut head).unwrap_or(0);
        // An empty file is not data; anything else must start with the HDF5 signature.
        if n > 0 && (n < 8 || &head != b"\x89HDF\r\n\x1a\n") {
            return Err(refuse(
                "an existing file that is not an HDF5 file would be overwritten",
            ));
        }
    }
    Ok(())
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
                persistent_steps: sim.persistent_steps,
            }),
            ImpactMode::Simultaneous => None,
        },
        warm_start: sim.warm_start,
        contact_fallback: sim.contact_fallback,
        contact_solver: match sim.contact_solver {
            ContactSolverMode::Newton => ContactSolver::Newton,
            ContactSolverMode::GaussSeidel => ContactSolver::GaussSeidel,
        },
        timings: req.timings,
        ..NsgaOptions::default()
    }
}

/// Load and run a model file.
pub fn run_file(path: &Path, req: &RunRequest) -> Result<RunReport, RunError> {
    let file = load_model(path)?;
    let default_out = path.with_extension("h5");
    run_model_file(file, req, default_out, Some(path))
}

/// Parse and run a TOML model given as text (`source` names it in error messages).
pub fn run_text(text: &str, source: &str, req: &RunRequest) -> Result<RunReport, RunError> {
    let file = parse_str(text, Format::Toml, source)?;
    run_model_file(file, req, PathBuf::from(DEFAULT_OUTPUT), None)
}

/// Check a TOML model given as text as `saltus run` would before its first step: parsed,
/// built and validated with its integrator options; nothing is run or written. The error
/// leaves out the `source:line:` prefix (a generated text's lines mean nothing to a user).
pub fn check_text(text: &str, source: &str) -> Result<(), String> {
    let strip = |msg: String| {
        msg.strip_prefix(source)
            .map(|rest| {
                rest.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit())
                    .trim_start()
                    .to_string()
            })
            .unwrap_or(msg)
    };
    let mut file = parse_str(text, Format::Toml, source).map_err(|e| strip(e.to_string()))?;
    let opts = nsga_options(&file.simulation, &RunRequest::default());
    Nsga::new(&mut file.model, opts)
        .map(|_| ())
        .map_err(|e| strip(e.to_string()))
}

fn run_model_file(
    mut file: ModelFile,
    req: &RunRequest,
    default_out: PathBuf,
    model_path: Option<&Path>,
) -> Result<RunReport, RunError> {
    let model_dir = model_path.and_then(Path::parent);
    let output = req
        .output
        .clone()
        .or_else(|| {
            // A model file's relative output is next to the model file.
            let o = file.simulation.output.clone()?;
            Some(match model_dir {
                Some(dir) if o.is_relative() => dir.join(o),
                _ => o,
            })
        })
        .unwrap_or(default_out);
    check_output(&output, model_path)?;
    let opts = nsga_options(&file.simulation, req);
    let (model, adaptive) = (file.source_name.clone(), opts.adaptive);
    let solve = |source: SolveError, file: &ModelFile| RunError::Solve {
        model: model.clone(),
        adaptive,
        suspects: extreme_parameters(file, &source.to_string()),
        source: Box::new(source),
        kept: None,
    };
    let mut solver = match Nsga::new(&mut file.model, opts.clone()) {
        Ok(solver) => solver,
        Err(e) => return Err(solve(e, &file)),
    };
    let mut sink = Hdf5Sink::create(&output)
        .map_err(|e| solve(SolveError::Sink(e), &file))?
        .with_model_text(file.text.clone())
        .with_created_by(format!("saltus {}", env!("CARGO_PKG_VERSION")));
    let mut bar = Progress::new(opts.t_end, req.quiet);
    let result = solver.run(&mut file.model, &mut sink, &mut |t| bar.update(t));
    bar.finish();
    match result {
        Ok(summary) => Ok(RunReport { summary, output }),
        Err(source) => Err(RunError::Solve {
            suspects: extreme_parameters(&file, &source.to_string()),
            model,
            adaptive,
            source: Box::new(source),
            // A failed write says itself what the file keeps.
            kept: (sink.failure().is_none() && sink.records_kept() > 0).then_some(output),
        }),
    }
}

/// The progress bar on standard error (`indicatif`: rate-limited redraws, human durations, a
/// smoothed ETA), in units of model time: 100 % when the run reaches `t_end`.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    t_end: f64,
}

/// A progress bar on standard error (`indicatif`) of `len` positions drawn by `template`,
/// the look of every bar of the program.
pub(crate) fn progress_bar(len: u64, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("#>."),
    );
    bar
}

/// Progress-bar resolution: positions per run.
const PROGRESS_STEPS: u64 = 10_000;

impl Progress {
    fn new(t_end: f64, quiet: bool) -> Self {
        let bar = (!quiet).then(|| {
            progress_bar(
                PROGRESS_STEPS,
                "[{bar:40}] {percent:>3}%  t = {msg} s  elapsed {elapsed}  eta {eta}",
            )
        });
        Self { bar, t_end }
    }

    fn update(&mut self, t: f64) {
        let Some(bar) = &self.bar else { return };
        let frac = if self.t_end > 0.0 {
            (t / self.t_end).clamp(0.0, 1.0)
        } else {
            1.0
        };
        bar.set_position((frac * PROGRESS_STEPS as f64).round() as u64);
        bar.set_message(format!("{t:.6}"));
    }

    /// Leave the bar at its last position: 100 % after a complete run.
    fn finish(&mut self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }
}

/// `saltus elements [TYPE]`: every registered element type (or `kind` alone) with its
/// summary, node kinds and every parameter key it accepts (unit, `required` or default, doc
/// line: [`saltus_core::ParamDoc`], from the element's serde spec type), then the composite
/// model-file keys (`[[beam_lines]]`, ...) the same way. `kind` may also name a composite key.
/// An unknown `kind` gives the known names.
pub fn elements_listing(kind: Option<&str>) -> Result<String, String> {
    use saltus_core::registry::composite_kinds;
    let kinds: Vec<_> = saltus_core::element_kinds()
        .iter()
        .filter(|k| kind.is_none_or(|name| k.type_name == name))
        .collect();
    let composites: Vec<_> = composite_kinds()
        .iter()
        .filter(|k| kind.is_none_or(|name| k.key == name))
        .collect();
    if kinds.is_empty() && composites.is_empty() {
        let types: Vec<&str> = saltus_core::element_kinds()
            .iter()
            .map(|k| k.type_name)
            .collect();
        let keys: Vec<String> = composite_kinds()
            .iter()
            .map(|k| format!("[[{}]]", k.key))
            .collect();
        return Err(format!(
            "unknown element type `{}` (element types: {}; composite model-file keys: {})",
            kind.unwrap_or_default(),
            types.join(", "),
            keys.join(", ")
        ));
    }
    let mut s = String::new();
    for k in kinds {
        let nodes: Vec<String> = k
            .example_nodes
            .iter()
            .map(|n| format!("{n:?}").to_lowercase())
            .collect();
        s.push_str(&format!("{}  {}\n", k.type_name, k.summary));
        s.push_str(&format!("  nodes: [{}]\n", nodes.join(", ")));
        push_params(&mut s, k.params.map(|p| p()), &(k.example)());
        s.push('\n');
    }
    if kind.is_none() && !composites.is_empty() {
        s.push_str(
            "Composite model-file keys (arrays of tables, expanded into nodes and elements):\n\n",
        );
    }
    for k in composites {
        s.push_str(&format!("[[{}]]  {}\n", k.key, k.summary));
        push_params(&mut s, k.params.map(|p| p()), &serde_json::Value::Null);
        s.push('\n');
    }
    Ok(s)
}

/// Width the doc column is wrapped to in [`elements_listing`] (unless it starts past 60).
const LISTING_WIDTH: usize = 100;

/// One aligned line per key: `key  [unit]  required|default = X|optional  doc` (doc wrapped
/// under itself), then the example's values; without documented keys, the example's keys.
fn push_params(
    s: &mut String,
    params: Option<Vec<saltus_core::ParamDoc>>,
    example: &serde_json::Value,
) {
    let Some(params) = params else {
        s.push_str("  parameters (undocumented; those of the example):\n");
        if let Some(map) = example.as_object() {
            for (key, value) in map {
                s.push_str(&format!("    {key} = {value}\n"));
            }
        }
        return;
    };
    if params.is_empty() {
        s.push_str("  parameters: none\n");
    }
    let unit = |p: &saltus_core::ParamDoc| {
        p.unit
            .as_ref()
            .map(|u| format!("[{u}]"))
            .unwrap_or_default()
    };
    let wk = params
        .iter()
        .map(|p| p.key.chars().count())
        .max()
        .unwrap_or(0);
    let wu = params
        .iter()
        .map(|p| unit(p).chars().count())
        .max()
        .unwrap_or(0);
    let ws = params
        .iter()
        .map(|p| p.status().chars().count())
        .max()
        .unwrap_or(0);
    let indent = 2 + wk + 2 + wu + 2 + ws + 2;
    let width = LISTING_WIDTH.saturating_sub(indent).max(40);
    for p in &params {
        let head = format!("  {:<wk$}  {:<wu$}  {:<ws$}  ", p.key, unit(p), p.status());
        let mut line = head;
        let mut used = 0;
        for word in p.doc.split_whitespace() {
            let n = word.chars().count();
            if used > 0 && used + 1 + n > width {
                s.push_str(line.trim_end());
                s.push('\n');
                line = " ".repeat(indent);
                used = 0;
            } else if used > 0 {
                line.push(' ');
                used += 1;
            }
            line.push_str(word);
            used += n;
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    if let Some(map) = example.as_object().filter(|m| !m.is_empty()) {
        let values: Vec<String> = map.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        s.push_str(&format!("  example: {}\n", values.join(", ")));
    }
}
