//! Parameter studies: a base model file, parameters addressed by path, every point of their
//! grid (or zip) as a model file of its own, and an index of the runs (`saltus sweep`).
//!
//! A study file (TOML):
//!
//! ```toml
//! model = "../../models/bouncing_ball.toml"  # base model, relative to the study file
//! combine = "grid"        # "grid" (default: every combination) or "zip" (k-th with k-th)
//! folder = "bounce"       # runs and index (default: the study file's name, beside it)
//! max_runs = 1000         # refuse larger studies unless `--yes` (default 1000)
//!
//! [[parameter]]
//! path = "elements.floor.restitution"      # array entry by `name`, then key
//! values = [0.5, 0.8]
//!
//! [[parameter]]
//! path = "simulation.h"
//! range = { from = 1e-3, to = 4e-3, count = 3 }   # or step = …; scale = "log"
//!
//! [[reduction]]            # a column of the index, from each run's results
//! name = "bounce_height"
//! dataset = "nodes/position[ball].z"       # a selector of `saltus_io::series`
//! op = "max"               # max, min, max_abs, mean, initial, final
//! window = [0.5, 1.5]      # optional: records with t in [0.5, 1.5] s only
//! ```
//!
//! Paths: `simulation.<key>`, `<array>.<name>.<key>` for the arrays of named tables
//! (`nodes`, `elements`, `beam_lines`, …: the entry whose `name` is `<name>`). The key may be
//! absent from the base model (a parameter left at its default). Grid points are numbered with
//! the first parameter varying slowest, as nested loops in file order.
//!
//! In the study's folder, run `k` is `run-00k.toml` (the point's complete model, runnable on
//! its own with `saltus run`), `run-00k.h5` (its results) and `run-00k.json` (its status:
//! [`RunStatus`]). [`index`] tabulates them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

pub mod index;

/// File in a study's folder naming the study (its absolute path) that owns the folder.
pub const STUDY_MARKER: &str = ".saltus-study";

/// Default limit on the number of runs of a study without `--yes` ([`Study::max_runs`]).
pub const DEFAULT_MAX_RUNS: usize = 1000;

/// A study that cannot be read or expanded: the message names the study file and the
/// parameter or reduction.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct StudyError {
    /// The study file.
    pub file: String,
    /// What is wrong.
    pub message: String,
}

/// How parameter lists combine into points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Combine {
    /// Every combination (the Cartesian product), first parameter slowest.
    #[default]
    Grid,
    /// The k-th values of every parameter together; all lists have the same length.
    Zip,
}

/// A reduction of one time history to one number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Largest value.
    Max,
    /// Smallest value.
    Min,
    /// Largest absolute value.
    MaxAbs,
    /// Arithmetic mean over the records.
    Mean,
    /// First record's value.
    Initial,
    /// Last record's value.
    Final,
}

impl Op {
    /// The lower-case name used in study files.
    pub fn name(self) -> &'static str {
        match self {
            Op::Max => "max",
            Op::Min => "min",
            Op::MaxAbs => "max_abs",
            Op::Mean => "mean",
            Op::Initial => "initial",
            Op::Final => "final",
        }
    }

    /// The reduction of `values` (NaN entries — records where an element did not exist —
    /// are skipped; NaN when nothing is left).
    pub fn apply(self, values: &[f64]) -> f64 {
        let mut finite = values.iter().copied().filter(|v| !v.is_nan());
        match self {
            Op::Max => finite.fold(f64::NAN, f64::max),
            Op::Min => finite.fold(f64::NAN, f64::min),
            Op::MaxAbs => finite.map(f64::abs).fold(f64::NAN, f64::max),
            Op::Mean => {
                let (n, s) = finite.fold((0usize, 0.0), |(n, s), v| (n + 1, s + v));
                if n == 0 {
                    f64::NAN
                } else {
                    s / n as f64
                }
            }
            Op::Initial => finite.next().unwrap_or(f64::NAN),
            Op::Final => finite.next_back().unwrap_or(f64::NAN),
        }
    }
}

/// A parameter of the study: a model path and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// E.g. `elements.floor.restitution`.
    pub path: String,
    /// The values, in order (numbers, strings, booleans or arrays, as in a model file).
    pub values: Vec<toml::Value>,
}

/// A column of the index computed from each finished run's results file.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    /// Column name.
    pub name: String,
    /// Selector of one time history (`saltus_io::series`), e.g. `nodes/position[ball].z`.
    pub dataset: String,
    /// How the history becomes one number.
    pub op: Op,
    /// Only records with `t` in `[t0, t1]` \[s\], if given.
    pub window: Option<[f64; 2]>,
}

/// A loaded study: the base model, the parameters and their points.
#[derive(Clone, Debug)]
pub struct Study {
    /// The study file.
    pub path: PathBuf,
    /// The study file's text (stored in `index.h5`).
    pub text: String,
    /// The base model file.
    pub model_path: PathBuf,
    /// The base model's path as the study file writes it (relative to the study file).
    model_written: PathBuf,
    /// Where runs and index are written.
    pub folder: PathBuf,
    /// How the parameters combine.
    pub combine: Combine,
    /// The parameters, in file order.
    pub parameters: Vec<Parameter>,
    /// The index's computed columns.
    pub reductions: Vec<Reduction>,
    /// Largest number of runs accepted without `--yes`.
    pub max_runs: usize,
    base: toml::Table,
    points: usize,
}

/// Names of the index columns every run has, whatever the study's reductions.
pub const SUMMARY_COLUMNS: [&str; 4] = ["steps", "t_final", "wall_time", "max_iterations"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StudySpec {
    model: PathBuf,
    #[serde(default)]
    combine: Combine,
    folder: Option<PathBuf>,
    max_runs: Option<usize>,
    #[serde(default, rename = "parameter")]
    parameters: Vec<ParameterSpec>,
    #[serde(default, rename = "reduction")]
    reductions: Vec<ReductionSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParameterSpec {
    path: String,
    values: Option<Vec<toml::Value>>,
    range: Option<RangeSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeSpec {
    from: toml::Value,
    to: toml::Value,
    count: Option<usize>,
    step: Option<toml::Value>,
    #[serde(default)]
    scale: Scale,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Scale {
    #[default]
    Linear,
    Log,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReductionSpec {
    name: String,
    dataset: String,
    op: Op,
    window: Option<[f64; 2]>,
}

/// The number held by a TOML value, if it is a number.
fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(x) => Some(*x),
        _ => None,
    }
}

/// `v` to 12 significant digits: a computed range value without the round-off of its
/// arithmetic (0.1 + 2 × 0.1 is 0.3, not 0.30000000000000004).
fn clean(v: f64) -> f64 {
    format!("{v:.11e}").parse().unwrap_or(v)
}

/// The values of a `range`: `count` values from `from` to `to` (both included; linear or
/// geometric spacing), or `from, from + step, …` up to `to`. Integer bounds and step give
/// integers.
fn range_values(r: &RangeSpec) -> Result<Vec<toml::Value>, String> {
    let (from, to) = match (number(&r.from), number(&r.to)) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() => (a, b),
        _ => return Err("`range`: `from` and `to` must be finite numbers".into()),
    };
    match (r.count, &r.step) {
        (Some(_), Some(_)) => Err("`range`: give `count` or `step`, not both".into()),
        (None, None) => Err("`range`: give `count` (values) or `step` (spacing)".into()),
        (Some(n), None) => {
            if n == 0 {
                return Err("`range`: `count` = 0 gives no values".into());
            }
            if r.scale == Scale::Log && (from <= 0.0 || to <= 0.0) {
                return Err("`range`: a log scale needs `from` and `to` > 0".into());
            }
            let values: Vec<f64> = (0..n)
                .map(|k| {
                    let s = if n == 1 {
                        0.0
                    } else {
                        k as f64 / (n - 1) as f64
                    };
                    // The ends exactly as written.
                    if k == 0 {
                        from
                    } else if k + 1 == n {
                        to
                    } else if r.scale == Scale::Log {
                        clean(from * (to / from).powf(s))
                    } else {
                        clean(from + (to - from) * s)
                    }
                })
                .collect();
            // Integer bounds whose values are all whole stay integers (element counts).
            let ints = matches!(
                (&r.from, &r.to),
                (toml::Value::Integer(_), toml::Value::Integer(_))
            ) && values.iter().all(|v| v.fract() == 0.0);
            Ok(values
                .into_iter()
                .map(|v| {
                    if ints {
                        toml::Value::Integer(v as i64)
                    } else {
                        toml::Value::Float(v)
                    }
                })
                .collect())
        }
        (None, Some(step)) => {
            if r.scale == Scale::Log {
                return Err("`range`: `scale = \"log\"` needs `count`, not `step`".into());
            }
            let ints = matches!(
                (&r.from, &r.to, step),
                (
                    toml::Value::Integer(_),
                    toml::Value::Integer(_),
                    toml::Value::Integer(_)
                )
            );
            let d = match number(step) {
                Some(d) if d.is_finite() && d != 0.0 && (to - from) * d >= 0.0 => d,
                _ => {
                    return Err(format!(
                        "`range`: `step` must be a non-zero number leading from {from} to {to}"
                    ))
                }
            };
            let n = ((to - from) / d * (1.0 + 1e-12)).floor() as usize + 1;
            if n > 1_000_000 {
                return Err(format!("`range`: {n} values; fewer than 10^6 please"));
            }
            Ok((0..n)
                .map(|k| {
                    if ints {
                        toml::Value::Integer(from as i64 + k as i64 * d as i64)
                    } else {
                        toml::Value::Float(clean(from + k as f64 * d))
                    }
                })
                .collect())
        }
    }
}

/// The names of the entries of an array of tables (for messages).
fn entry_names(array: &[toml::Value]) -> Vec<String> {
    array
        .iter()
        .filter_map(|e| e.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect()
}

/// Set `path` to `value` in the model tree. Every component but the last must exist (except
/// the `simulation` table, created if absent); the last key may be new.
fn set_path(root: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return Err(
            "a path has the form `simulation.<key>` or `<array>.<name>.<key>`, e.g. \
             `elements.floor.restitution`"
                .into(),
        );
    }
    let last = *parts.last().expect("two parts");
    if last == "name" {
        return Err("the `name` of an entry cannot be a parameter (paths use it)".into());
    }
    if parts == ["simulation", "output"] {
        return Err("the sweep names every run's output itself (run-K.h5)".into());
    }
    let mut table = root;
    let mut i = 0;
    while i + 1 < parts.len() {
        let key = parts[i];
        if i == 0 && key == "simulation" && !table.contains_key(key) {
            table.insert(key.into(), toml::Value::Table(toml::Table::new()));
        }
        if !table.contains_key(key) {
            let known: Vec<&str> = table.keys().map(String::as_str).collect();
            return Err(format!(
                "the model has no `{key}` here (keys: {})",
                known.join(", ")
            ));
        }
        let node = table.get_mut(key).expect("checked");
        table = match node {
            toml::Value::Table(t) => {
                i += 1;
                t
            }
            toml::Value::Array(entries) => {
                let Some(name) = parts.get(i + 1).filter(|_| i + 2 < parts.len()) else {
                    return Err(format!(
                        "`{key}` is an array of entries: name one, as `{key}.<name>.<key>`"
                    ));
                };
                let names = entry_names(entries);
                let found = entries
                    .iter_mut()
                    .find(|e| e.get("name").and_then(|n| n.as_str()) == Some(name));
                match found {
                    Some(toml::Value::Table(t)) => {
                        i += 2;
                        t
                    }
                    _ => {
                        return Err(format!(
                            "no entry named `{name}` in `{key}` (names: {})",
                            names.join(", ")
                        ))
                    }
                }
            }
            _ => return Err(format!("`{key}` is a value, not a table")),
        };
    }
    if i + 1 != parts.len() {
        return Err("the path ends on a table, not a key".into());
    }
    table.insert(last.into(), value);
    Ok(())
}

/// A short, exact rendering of a value for labels, messages and the CSV index.
pub fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(x) => format!("{x:?}"),
        toml::Value::Array(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

impl Study {
    /// Read a study file and its base model, resolve every parameter path in the base model
    /// and expand the ranges. Errors name the study file and the parameter.
    pub fn load(path: &Path) -> Result<Study, StudyError> {
        let fail = |message: String| StudyError {
            file: path.display().to_string(),
            message,
        };
        if crate::Format::from_path(path) != Some(crate::Format::Toml) {
            return Err(fail(
                "a study file is TOML and ends in .toml (its base model may be JSON)".into(),
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| fail(format!("cannot read the study file: {e}")))?;
        let spec: StudySpec = toml::from_str(&text).map_err(|e| fail(e.to_string()))?;
        // Absolute, so that every path the sweep writes or prints means the same from any
        // working directory (runs, Slurm tasks, the index).
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = std::path::absolute(parent.unwrap_or(Path::new(".")))
            .map_err(|e| fail(format!("cannot resolve the study's folder: {e}")))?;
        let model_path = dir.join(&spec.model);
        let model_written = spec.model.clone();
        let model_text = std::fs::read_to_string(&model_path).map_err(|e| {
            fail(format!(
                "`model`: cannot read base model `{}`: {e}",
                model_path.display()
            ))
        })?;
        let base: toml::Table = match crate::Format::from_path(&model_path) {
            Some(crate::Format::Toml) => toml::from_str(&model_text).map_err(|e| e.to_string()),
            Some(crate::Format::Json) => {
                serde_json::from_str(&model_text).map_err(|e| e.to_string())
            }
            None => Err("a model file ends in .toml or .json".into()),
        }
        .map_err(|e| fail(format!("`model` `{}`: {e}", model_path.display())))?;
        let folder = match spec.folder {
            Some(f) => dir.join(f),
            None => dir.join(path.file_stem().unwrap_or_default()),
        };
        if folder.components().collect::<PathBuf>() == dir.components().collect::<PathBuf>() {
            return Err(fail(
                "`folder` is the study file's own folder: runs and index need a folder of \
                 their own (e.g. the default, the study's name)"
                    .into(),
            ));
        }
        if spec.parameters.is_empty() {
            return Err(fail(
                "no [[parameter]]: a study varies at least one parameter".into(),
            ));
        }
        let mut parameters: Vec<Parameter> = Vec::new();
        for (k, p) in spec.parameters.into_iter().enumerate() {
            let what = format!("parameter {} `{}`", k + 1, p.path);
            let values = match (p.values, p.range) {
                (Some(v), None) => v,
                (None, Some(r)) => range_values(&r).map_err(|e| fail(format!("{what}: {e}")))?,
                _ => {
                    return Err(fail(format!(
                        "{what}: give `values = [...]` or `range = {{ ... }}` (one of them)"
                    )))
                }
            };
            if values.is_empty() {
                return Err(fail(format!("{what}: no values: the study would be empty")));
            }
            if parameters.iter().any(|q| q.path == p.path) {
                return Err(fail(format!("{what}: given twice")));
            }
            let mut probe = base.clone();
            set_path(&mut probe, &p.path, values[0].clone())
                .map_err(|e| fail(format!("{what}: {e}")))?;
            parameters.push(Parameter {
                path: p.path,
                values,
            });
        }
        let points = match spec.combine {
            Combine::Grid => parameters
                .iter()
                .try_fold(1usize, |n, p| n.checked_mul(p.values.len()))
                .ok_or_else(|| fail("the grid has more points than can be counted".into()))?,
            Combine::Zip => {
                let n = parameters[0].values.len();
                if let Some(p) = parameters.iter().find(|p| p.values.len() != n) {
                    return Err(fail(format!(
                        "`combine = \"zip\"` needs lists of one length: `{}` has {n} values, \
                         `{}` has {}",
                        parameters[0].path,
                        p.path,
                        p.values.len()
                    )));
                }
                n
            }
        };
        let mut reductions: Vec<Reduction> = Vec::new();
        for r in spec.reductions {
            let what = format!("reduction `{}`", r.name);
            if r.name.is_empty()
                || !r
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(fail(format!(
                    "{what}: a name is letters, digits, `_` and `-` (it is a column and a \
                     dataset name)"
                )));
            }
            if SUMMARY_COLUMNS.contains(&r.name.as_str()) {
                return Err(fail(format!(
                    "{what}: the name is taken (every index has {})",
                    SUMMARY_COLUMNS.join(", ")
                )));
            }
            if reductions.iter().any(|q| q.name == r.name) {
                return Err(fail(format!("{what}: two reductions have this name")));
            }
            crate::series::check_selector(&r.dataset)
                .map_err(|e| fail(format!("{what}: `dataset`: {e}")))?;
            if let Some([a, b]) = r.window {
                if !(a.is_finite() && b.is_finite() && a <= b) {
                    return Err(fail(format!(
                        "{what}: `window` = [{a}, {b}] must be [t0, t1] with t0 <= t1"
                    )));
                }
            }
            reductions.push(Reduction {
                name: r.name,
                dataset: r.dataset,
                op: r.op,
                window: r.window,
            });
        }
        Ok(Study {
            path: path.to_path_buf(),
            text,
            model_path,
            model_written,
            folder,
            combine: spec.combine,
            parameters,
            reductions,
            max_runs: spec.max_runs.unwrap_or(DEFAULT_MAX_RUNS),
            base,
            points,
        })
    }

    /// Number of runs (points).
    pub fn len(&self) -> usize {
        self.points
    }

    /// No runs (never true of a loaded study).
    pub fn is_empty(&self) -> bool {
        self.points == 0
    }

    /// The value of every parameter at point `k` (in parameter order).
    pub fn point(&self, k: usize) -> Vec<&toml::Value> {
        match self.combine {
            Combine::Zip => self.parameters.iter().map(|p| &p.values[k]).collect(),
            Combine::Grid => {
                // Mixed radix, last parameter fastest.
                let mut rest = k;
                let mut out = vec![&self.parameters[0].values[0]; self.parameters.len()];
                for (j, p) in self.parameters.iter().enumerate().rev() {
                    out[j] = &p.values[rest % p.values.len()];
                    rest /= p.values.len();
                }
                out
            }
        }
    }

    /// `path = value, …` of point `k`.
    pub fn describe(&self, k: usize) -> String {
        self.parameters
            .iter()
            .zip(self.point(k))
            .map(|(p, v)| format!("{} = {}", p.path, show(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// File stem of run `k`: `run-007` (three digits at least, more for larger studies).
    pub fn run_name(&self, k: usize) -> String {
        let width = (self.points.saturating_sub(1)).to_string().len().max(3);
        format!("run-{k:0width$}")
    }

    /// Model file of run `k` in the study's folder.
    pub fn run_model(&self, k: usize) -> PathBuf {
        self.folder.join(format!("{}.toml", self.run_name(k)))
    }

    /// Results file of run `k`.
    pub fn run_results(&self, k: usize) -> PathBuf {
        self.folder.join(format!("{}.h5", self.run_name(k)))
    }

    /// Status file of run `k`.
    pub fn run_status(&self, k: usize) -> PathBuf {
        self.folder.join(format!("{}.json", self.run_name(k)))
    }

    /// The complete model file (TOML) of run `k`: the base model with the point's values and
    /// `simulation.output = "run-K.h5"`, so that `saltus run run-K.toml` repeats the run.
    pub fn model_text(&self, k: usize) -> Result<String, StudyError> {
        let mut tree = self.base.clone();
        for (p, v) in self.parameters.iter().zip(self.point(k)) {
            set_path(&mut tree, &p.path, v.clone()).map_err(|e| StudyError {
                file: self.path.display().to_string(),
                message: format!("parameter `{}`: {e}", p.path),
            })?;
        }
        let sim = tree
            .entry("simulation")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::Table(sim) = sim {
            sim.insert(
                "output".into(),
                toml::Value::String(format!("{}.h5", self.run_name(k))),
            );
        }
        let body = toml::to_string(&tree).map_err(|e| StudyError {
            file: self.path.display().to_string(),
            message: format!("cannot write the model of run {k}: {e}"),
        })?;
        // Names as written (not as invoked), so that the text of a point is the same from
        // every working directory: it decides whether a finished run is current.
        let study = self.path.file_name().unwrap_or_default().to_string_lossy();
        Ok(format!(
            "# Run {k} of the study {study}: {}\n# Its base model {} with these values \
             (written by `saltus sweep`; `saltus run` on this file repeats the run).\n\n{body}",
            self.describe(k),
            self.model_written.display(),
        ))
    }

    /// The unit of a parameter (empty when unknown or none): element and composite keys from
    /// their registered parameter docs (what `saltus elements` lists), `simulation` and node
    /// keys from their documented units.
    pub fn unit(&self, path: &str) -> String {
        let parts: Vec<&str> = path.split('.').collect();
        let key = *parts.last().unwrap_or(&"");
        let documented = |params: Option<fn() -> Vec<saltus_core::ParamDoc>>| {
            params
                .and_then(|p| p().into_iter().find(|d| d.key == key))
                .and_then(|d| d.unit)
                .unwrap_or_default()
        };
        match parts.first().copied() {
            // Units of SimulationSettings' and NodeDef's documented keys.
            Some("simulation") => match key {
                "t_end" | "h" => "s",
                "gravity" => "m/s^2",
                _ => "",
            }
            .into(),
            Some("nodes") => match key {
                "position" => "m",
                "velocity" => "m/s",
                "angular_velocity" => "rad/s",
                "rotation_vector" => "rad",
                _ => "",
            }
            .into(),
            Some("elements") => {
                let kind = self
                    .base
                    .get("elements")
                    .and_then(|e| e.as_array())
                    .and_then(|entries| {
                        entries.iter().find(|e| {
                            e.get("name").and_then(|n| n.as_str()) == parts.get(1).copied()
                        })
                    })
                    .and_then(|e| e.get("type"))
                    .and_then(|t| t.as_str())
                    .and_then(|t| {
                        saltus_core::element_kinds()
                            .iter()
                            .find(|k| k.type_name == t)
                    });
                kind.map(|k| documented(k.params)).unwrap_or_default()
            }
            Some(top) => saltus_core::registry::composite_kind(top)
                .map(|k| documented(k.params))
                .unwrap_or_default(),
            None => String::new(),
        }
    }

    /// Create the study's folder, or check that it is this study's: a marker file names the
    /// study that made it, so two studies cannot overwrite each other's runs.
    pub fn claim_folder(&self) -> Result<(), StudyError> {
        let fail = |message: String| StudyError {
            file: self.path.display().to_string(),
            message,
        };
        std::fs::create_dir_all(&self.folder).map_err(|e| {
            fail(format!(
                "cannot create the study's folder {}: {e}",
                self.folder.display()
            ))
        })?;
        let marker = self.folder.join(STUDY_MARKER);
        let me = std::path::absolute(&self.path)
            .unwrap_or_else(|_| self.path.clone())
            .display()
            .to_string();
        match std::fs::read_to_string(&marker) {
            Ok(owner) if owner.trim() == me => Ok(()),
            Ok(owner) => Err(fail(format!(
                "the folder {} holds the runs of the study {}; give this study its own \
                 `folder` (if you moved or renamed that study file, delete {} to take the \
                 runs over)",
                self.folder.display(),
                owner.trim(),
                marker.display()
            ))),
            Err(_) => std::fs::write(&marker, me + "\n")
                .map_err(|e| fail(format!("cannot write {}: {e}", marker.display()))),
        }
    }

    /// The status of run `k` as its status file says (`None`: no status file, or unreadable).
    pub fn status(&self, k: usize) -> Option<RunStatus> {
        let text = std::fs::read_to_string(self.run_status(k)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Run `k` finished and is current: its status is `ok`, its results file exists and its
    /// model file is exactly the point's model (an edited study makes it stale).
    pub fn finished(&self, k: usize) -> bool {
        self.status(k).is_some_and(|s| s.state == RunState::Ok)
            && self.current(k)
            && self.results_intact(k)
    }

    /// Run `k`'s model file is the point's model: equal as TOML data (comments, layout and
    /// the header naming the study do not count: a study moved or renamed keeps its runs).
    pub fn current(&self, k: usize) -> bool {
        let parse = |text: &str| toml::from_str::<toml::Table>(text).ok();
        match (
            self.model_text(k),
            std::fs::read_to_string(self.run_model(k)),
        ) {
            (Ok(want), Ok(have)) => parse(&want).is_some() && parse(&want) == parse(&have),
            _ => false,
        }
    }

    /// Run `k`'s results file is there with the size its status recorded at the end (a file
    /// truncated, replaced or deleted since is not taken for the run's results).
    pub fn results_intact(&self, k: usize) -> bool {
        let size = std::fs::metadata(self.run_results(k)).map(|m| m.len());
        match (size, self.status(k)) {
            (Ok(n), Some(s)) => s.results_bytes.is_none_or(|b| b == n),
            _ => false,
        }
    }
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Started, not (yet) ended: still running, or killed.
    Running,
    /// Ended with results to `t_end`.
    Ok,
    /// Ended with an error (the message is kept).
    Failed,
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunState::Running => "running",
            RunState::Ok => "ok",
            RunState::Failed => "failed",
        })
    }
}

/// The status file of a run (`run-K.json`), written when it starts and when it ends.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
pub struct RunStatus {
    /// Where the run stands.
    pub state: RunState,
    /// The error of a failed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Steps taken (a failed run: the step of its last kept record).
    #[serde(default)]
    pub steps: u64,
    /// Time reached \[s\] (a failed run: the time of its last kept record).
    #[serde(default)]
    pub t_final: f64,
    /// Wall time of the run \[s\] (integration and output; a failed run: up to the failure).
    #[serde(default)]
    pub wall_time: f64,
    /// Largest number of Newton iterations of any subproblem.
    #[serde(default)]
    pub max_iterations: u64,
    /// Size of the results file when the run ended \[bytes\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results_bytes: Option<u64>,
}

impl RunStatus {
    /// A run that has started.
    pub fn running() -> Self {
        Self::ended(RunState::Running, None)
    }

    /// A run that ended with `error`.
    pub fn failed(error: String) -> Self {
        Self::ended(RunState::Failed, Some(error))
    }

    fn ended(state: RunState, error: Option<String>) -> Self {
        RunStatus {
            state,
            error,
            steps: 0,
            t_final: 0.0,
            wall_time: 0.0,
            max_iterations: 0,
            results_bytes: None,
        }
    }

    /// Write the status file atomically (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests;
