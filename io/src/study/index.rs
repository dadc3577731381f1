//! The index of a study: one row per run with its parameter values, status, error message,
//! summary and reductions, written as `index.csv` and `index.h5` in the study's folder.
//!
//! `index.h5` layout (every dataset has one entry per run, in run order):
//!
//! | dataset | type | content |
//! |---|---|---|
//! | `/run` | u64 `[N]` | run number `k` (`run-00k.*`) |
//! | `/status` | string `[N]` | `ok`, `failed`, `incomplete` (started, not ended), `missing`, `stale` (results of another version of the study) |
//! | `/error` | string `[N]` | error message of a failed run, else empty |
//! | `/file` | string `[N]` | results file name, relative to the index |
//! | `/parameters/<path>` | f64 `[N]`, f64 `[N, m]` or string `[N]` | the parameter's value (attributes `path`, `unit`) |
//! | `/reductions/<name>` | f64 `[N]` | `steps`, `t_final` \[s\], `wall_time` \[s\], `max_iterations`, then the study's reductions (attributes `dataset`, `op`, `unit`); NaN where a run has no value (runs that are not `ok`; a failed run keeps `steps`, `t_final`, `wall_time` of its last kept record) |
//!
//! Root attributes: `study` (the study file's text), `model` (the base model's path).

use super::{show, RunState, Study, SUMMARY_COLUMNS};
use crate::hdf5_sink::{var_len_strings, write_str_attr};
use crate::series::{open, read_series, read_time};
use hdf5::types::VarLenUnicode;
use hdf5_metno as hdf5;
use std::fmt;
use std::path::{Path, PathBuf};

/// The state of a run as the index reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowStatus {
    /// Finished, results current.
    Ok,
    /// Ended with an error.
    Failed,
    /// Started but not ended (killed, or still running).
    Incomplete,
    /// Never started.
    Missing,
    /// Finished for another version of the study (its model file differs from the point's).
    Stale,
}

impl fmt::Display for RowStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RowStatus::Ok => "ok",
            RowStatus::Failed => "failed",
            RowStatus::Incomplete => "incomplete",
            RowStatus::Missing => "missing",
            RowStatus::Stale => "stale",
        })
    }
}

/// One run of the index.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Run number.
    pub run: usize,
    /// Its state.
    pub status: RowStatus,
    /// Error message (failed runs; reductions that could not be computed).
    pub error: String,
    /// Results file name (in the study's folder).
    pub file: String,
    /// Parameter values, in parameter order.
    pub parameters: Vec<toml::Value>,
    /// `steps`, `t_final`, `wall_time`, `max_iterations`, then the study's reductions (NaN:
    /// no value).
    pub values: Vec<f64>,
}

/// The index of a study.
#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    /// Parameter paths (column names).
    pub parameters: Vec<String>,
    /// Units of the parameters (empty when unknown).
    pub parameter_units: Vec<String>,
    /// Value column names: [`SUMMARY_COLUMNS`] then the reductions'.
    pub columns: Vec<String>,
    /// One row per run.
    pub rows: Vec<Row>,
    /// Units of the value columns (empty when unknown).
    pub units: Vec<String>,
}

impl Index {
    /// Runs that ended `ok` but whose reductions could not all be computed: (run, message).
    pub fn reduction_errors(&self) -> Vec<(usize, &str)> {
        self.rows
            .iter()
            .filter(|r| r.status == RowStatus::Ok && !r.error.is_empty())
            .map(|r| (r.run, r.error.as_str()))
            .collect()
    }

    /// Runs in each state: (ok, failed, other).
    pub fn counts(&self) -> (usize, usize, usize) {
        let ok = self
            .rows
            .iter()
            .filter(|r| r.status == RowStatus::Ok)
            .count();
        let failed = self
            .rows
            .iter()
            .filter(|r| r.status == RowStatus::Failed)
            .count();
        (ok, failed, self.rows.len() - ok - failed)
    }
}

/// The reduction of one run's results file; the error names the file and the selector.
fn reduce(file: &hdf5::File, time: &[f64], r: &super::Reduction) -> Result<(f64, String), String> {
    let series = read_series(file, &r.dataset).map_err(|e| e.to_string())?;
    let [s] = series.as_slice() else {
        return Err(format!(
            "reduction `{}`: `{}` selects {} series; select one component, e.g. \
             nodes/position[ball].z",
            r.name,
            r.dataset,
            series.len()
        ));
    };
    let values: Vec<f64> = match r.window {
        Some([t0, t1]) => time
            .iter()
            .zip(&s.values)
            .filter(|(t, _)| (t0..=t1).contains(*t))
            .map(|(_, v)| *v)
            .collect(),
        None => s.values.clone(),
    };
    if values.is_empty() {
        let span = match (time.first(), time.last()) {
            (Some(a), Some(b)) => format!("the run's records span [{a}, {b}] s"),
            _ => "the run has no records".into(),
        };
        return Err(format!(
            "reduction `{}`: no record in its window ({span})",
            r.name
        ));
    }
    Ok((r.op.apply(&values), s.unit.clone()))
}

/// Compute every reduction of the study on run `k`'s results; the first error.
pub fn check_reductions(study: &Study, k: usize) -> Result<(), String> {
    let file = open(&study.run_results(k)).map_err(|e| e.to_string())?;
    let time = read_time(&file).map_err(|e| e.to_string())?;
    for r in &study.reductions {
        reduce(&file, &time, r)?;
    }
    Ok(())
}

/// Tabulate the runs of a study from their status and results files (reductions are computed
/// now, from the results, so a study's reductions can change without re-running).
pub fn collect(study: &Study) -> Index {
    let mut columns: Vec<String> = SUMMARY_COLUMNS.iter().map(|c| c.to_string()).collect();
    columns.extend(study.reductions.iter().map(|r| r.name.clone()));
    let mut units = vec![String::new(), "s".into(), "s".into(), String::new()];
    units.extend(study.reductions.iter().map(|_| String::new()));
    let mut rows = Vec::with_capacity(study.len());
    for k in 0..study.len() {
        let status = study.status(k);
        let mut values = vec![f64::NAN; columns.len()];
        let mut error = String::new();
        let state = match &status {
            None => RowStatus::Missing,
            Some(s) => match s.state {
                RunState::Running => RowStatus::Incomplete,
                RunState::Failed => RowStatus::Failed,
                RunState::Ok if !study.current(k) => RowStatus::Stale,
                RunState::Ok if !study.results_intact(k) => RowStatus::Missing,
                RunState::Ok => RowStatus::Ok,
            },
        };
        if let Some(s) = &status {
            if state == RowStatus::Ok {
                values[..4].copy_from_slice(&[
                    s.steps as f64,
                    s.t_final,
                    s.wall_time,
                    s.max_iterations as f64,
                ]);
            } else if state == RowStatus::Failed && s.wall_time > 0.0 {
                // How far a failed run got: its last kept record, and its wall time.
                values[..3].copy_from_slice(&[s.steps as f64, s.t_final, s.wall_time]);
            }
            if let Some(e) = &s.error {
                // One line per run in the index.
                error = e.lines().map(str::trim).collect::<Vec<_>>().join(" ");
            }
        }
        if state == RowStatus::Ok && !study.reductions.is_empty() {
            let path = study.run_results(k);
            let read = open(&path).map_err(|e| e.to_string()).and_then(|file| {
                let time = read_time(&file).map_err(|e| e.to_string())?;
                Ok((file, time))
            });
            match read {
                Ok((file, time)) => {
                    for (j, r) in study.reductions.iter().enumerate() {
                        match reduce(&file, &time, r) {
                            Ok((v, unit)) => {
                                values[4 + j] = v;
                                if !unit.is_empty() {
                                    units[4 + j] = unit;
                                }
                            }
                            Err(e) => {
                                if !error.is_empty() {
                                    error.push_str("; ");
                                }
                                error.push_str(&e);
                            }
                        }
                    }
                }
                Err(e) => error = e,
            }
        }
        rows.push(Row {
            run: k,
            status: state,
            error,
            // Only where there is one.
            file: Some(study.run_results(k))
                .filter(|p| p.is_file())
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default(),
            parameters: study.point(k).into_iter().cloned().collect(),
            values,
        });
    }
    Index {
        parameters: study.parameters.iter().map(|p| p.path.clone()).collect(),
        parameter_units: study
            .parameters
            .iter()
            .map(|p| study.unit(&p.path))
            .collect(),
        columns,
        rows,
        units,
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number for the CSV: shortest exact form; empty for NaN.
fn csv_number(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:?}")
    }
}

/// The index as CSV text: `run,status,<parameters…>,<columns…>,file,error`.
pub fn csv(index: &Index) -> String {
    let mut head: Vec<String> = vec!["run".into(), "status".into()];
    head.extend(index.parameters.iter().cloned());
    head.extend(index.columns.iter().cloned());
    head.extend(["file".into(), "error".into()]);
    let mut out = head
        .iter()
        .map(|h| csv_field(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in &index.rows {
        let mut fields = vec![r.run.to_string(), r.status.to_string()];
        fields.extend(r.parameters.iter().map(|v| csv_field(&show(v))));
        fields.extend(r.values.iter().map(|v| csv_number(*v)));
        fields.push(csv_field(&r.file));
        fields.push(csv_field(&r.error));
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// A one-dimensional string attribute.
fn list_attr(loc: &hdf5::Location, name: &str, values: &[String]) -> hdf5::Result<()> {
    let v = var_len_strings(values.iter().cloned())?;
    loc.new_attr::<VarLenUnicode>()
        .shape(v.len())
        .create(name)?
        .write(&v)
}

/// The numbers of a parameter's values, if all are numbers (`[N]`) or all arrays of numbers
/// of one length (`[N, m]`).
fn numeric(values: &[&toml::Value]) -> Option<(Vec<f64>, usize)> {
    let row = |v: &toml::Value| -> Option<Vec<f64>> {
        match v {
            toml::Value::Array(a) => a.iter().map(super::number).collect(),
            v => super::number(v).map(|x| vec![x]),
        }
    };
    let scalar = !matches!(values.first(), Some(toml::Value::Array(_)));
    let mut out = Vec::new();
    let mut width = None;
    for v in values {
        if scalar == matches!(v, toml::Value::Array(_)) {
            return None;
        }
        let r = row(v)?;
        if *width.get_or_insert(r.len()) != r.len() {
            return None;
        }
        out.extend(r);
    }
    Some((out, if scalar { 0 } else { width.unwrap_or(0) }))
}

fn write_h5(index: &Index, study: &Study, path: &Path) -> hdf5::Result<()> {
    let file = hdf5::File::create(path)?;
    write_str_attr(&file, "study", &study.text)?;
    write_str_attr(&file, "model", &study.model_path.display().to_string())?;
    let n = index.rows.len();
    let runs: Vec<u64> = index.rows.iter().map(|r| r.run as u64).collect();
    file.new_dataset_builder().with_data(&runs).create("run")?;
    let status = var_len_strings(index.rows.iter().map(|r| r.status.to_string()))?;
    file.new_dataset_builder()
        .with_data(&status)
        .create("status")?;
    let error = var_len_strings(index.rows.iter().map(|r| r.error.clone()))?;
    file.new_dataset_builder()
        .with_data(&error)
        .create("error")?;
    let files = var_len_strings(index.rows.iter().map(|r| r.file.clone()))?;
    file.new_dataset_builder()
        .with_data(&files)
        .create("file")?;
    write_str_attr(
        &file,
        "combine",
        match study.combine {
            super::Combine::Grid => "grid",
            super::Combine::Zip => "zip",
        },
    )?;
    let params = file.create_group("parameters")?;
    // Study order (grid: first parameter slowest); HDF5 lists members alphabetically.
    list_attr(&params, "order", &index.parameters)?;
    for (j, p) in index.parameters.iter().enumerate() {
        let values: Vec<&toml::Value> = index.rows.iter().map(|r| &r.parameters[j]).collect();
        let integers: Option<Vec<i64>> = values.iter().map(|v| v.as_integer()).collect();
        let ds = match numeric(&values) {
            // Integer parameters (element counts, iteration limits) stay integers.
            Some(_) if integers.is_some() => params
                .new_dataset_builder()
                .with_data(&integers.unwrap_or_default())
                .create(p.as_str())?,
            Some((x, 0)) => params
                .new_dataset_builder()
                .with_data(&x)
                .create(p.as_str())?,
            Some((x, m)) => {
                let a = ndarray::Array2::from_shape_vec((n, m), x)
                    .map_err(|e| hdf5::Error::from(e.to_string()))?;
                params
                    .new_dataset_builder()
                    .with_data(&a)
                    .create(p.as_str())?
            }
            None => {
                let s = var_len_strings(values.iter().map(|v| show(v)))?;
                params
                    .new_dataset_builder()
                    .with_data(&s)
                    .create(p.as_str())?
            }
        };
        write_str_attr(&ds, "path", p)?;
        write_str_attr(&ds, "unit", &index.parameter_units[j])?;
    }
    let reductions = file.create_group("reductions")?;
    list_attr(&reductions, "order", &index.columns)?;
    for (j, c) in index.columns.iter().enumerate() {
        let x: Vec<f64> = index.rows.iter().map(|r| r.values[j]).collect();
        let ds = reductions
            .new_dataset_builder()
            .with_data(&x)
            .create(c.as_str())?;
        write_str_attr(&ds, "unit", &index.units[j])?;
        if let Some(r) = study.reductions.iter().find(|r| &r.name == c) {
            write_str_attr(&ds, "dataset", &r.dataset)?;
            write_str_attr(&ds, "op", r.op.name())?;
        }
    }
    Ok(())
}

/// Write `index.csv` and `index.h5` into the study's folder (each through a temporary file
/// renamed over the old one, so a reader never sees half an index). Returns both paths.
pub fn write(index: &Index, study: &Study) -> Result<(PathBuf, PathBuf), String> {
    let csv_path = study.folder.join("index.csv");
    let h5_path = study.folder.join("index.h5");
    let tmp = study.folder.join("index.csv.tmp");
    std::fs::write(&tmp, csv(index))
        .and_then(|()| std::fs::rename(&tmp, &csv_path))
        .map_err(|e| format!("{}: cannot write: {e}", csv_path.display()))?;
    let tmp = study.folder.join("index.h5.tmp");
    write_h5(index, study, &tmp)
        .map_err(|e| e.to_string())
        .and_then(|()| std::fs::rename(&tmp, &h5_path).map_err(|e| e.to_string()))
        .map_err(|e| format!("{}: cannot write: {e}", h5_path.display()))?;
    Ok((csv_path, h5_path))
}

/// A column of an `index.h5` read back: per run a number (NaN where none) and its text.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Parameter path or reduction name.
    pub name: String,
    /// Unit (reductions with a unit attribute; else empty).
    pub unit: String,
    /// Per run: the number (NaN for text or missing values).
    pub values: Vec<f64>,
    /// Per run: the value as text (for labels and grouping).
    pub text: Vec<String>,
}

/// An `index.h5` read back: its parameters and reductions, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexFile {
    /// `/parameters/*`.
    pub parameters: Vec<Column>,
    /// `/reductions/*`.
    pub reductions: Vec<Column>,
    /// `/status` per run.
    pub status: Vec<String>,
}

impl IndexFile {
    /// Read an `index.h5` written by [`write()`]; the error names the file.
    pub fn read(path: &Path) -> Result<IndexFile, String> {
        let fail = |m: String| format!("{}: {m}", path.display());
        let file = hdf5::File::open(path).map_err(|e| fail(format!("cannot open as HDF5: {e}")))?;
        let (Ok(params), Ok(reds)) = (file.group("parameters"), file.group("reductions")) else {
            return Err(fail(
                "not an index of `saltus sweep` (no /parameters and /reductions)".into(),
            ));
        };
        let status: Vec<String> = file
            .dataset("status")
            .and_then(|d| d.read_raw::<VarLenUnicode>())
            .map_err(|e| fail(format!("`/status`: {e}")))?
            .iter()
            .map(|s| s.to_string())
            .collect();
        let read = |g: &hdf5::Group| -> Result<Vec<Column>, String> {
            // Study order, as written in the `order` attribute.
            let names: Vec<String> = g
                .attr("order")
                .and_then(|a| a.read_raw::<VarLenUnicode>())
                .map_err(|e| fail(format!("`{}`: no `order` attribute: {e}", g.name())))?
                .iter()
                .map(|s| s.to_string())
                .collect();
            names
                .into_iter()
                .map(|n| {
                    let ds = g.dataset(&n).map_err(|e| fail(format!("`{n}`: {e}")))?;
                    let unit = ds
                        .attr("unit")
                        .and_then(|a| a.read_scalar::<VarLenUnicode>())
                        .map(|u| u.to_string())
                        .unwrap_or_default();
                    let shape = ds.shape();
                    let integer = ds.dtype().is_ok_and(|t| t.is::<i64>());
                    let (values, text) =
                        if let Some(x) = integer.then(|| ds.read_raw::<i64>().ok()).flatten() {
                            (
                                x.iter().map(|&v| v as f64).collect(),
                                x.iter().map(|v| v.to_string()).collect(),
                            )
                        } else if let Ok(x) = ds.read_raw::<f64>() {
                            if shape.len() == 2 {
                                let m = shape[1].max(1);
                                let text = x
                                    .chunks(m)
                                    .map(|r| {
                                        format!(
                                            "[{}]",
                                            r.iter()
                                                .map(|v| format!("{v:?}"))
                                                .collect::<Vec<_>>()
                                                .join(", ")
                                        )
                                    })
                                    .collect();
                                (vec![f64::NAN; shape[0]], text)
                            } else {
                                let text = x.iter().map(|v| format!("{v:?}")).collect();
                                (x, text)
                            }
                        } else {
                            let s: Vec<String> = ds
                                .read_raw::<VarLenUnicode>()
                                .map_err(|e| fail(format!("`{n}`: {e}")))?
                                .iter()
                                .map(|s| s.to_string())
                                .collect();
                            (vec![f64::NAN; s.len()], s)
                        };
                    Ok(Column {
                        name: n,
                        unit,
                        values,
                        text,
                    })
                })
                .collect()
        };
        Ok(IndexFile {
            parameters: read(&params)?,
            reductions: read(&reds)?,
            status,
        })
    }

    /// The column named `name`: a parameter path or a reduction name.
    pub fn column(&self, name: &str) -> Result<&Column, String> {
        self.parameters
            .iter()
            .chain(&self.reductions)
            .find(|c| c.name == name)
            .ok_or_else(|| {
                format!(
                    "no column `{name}` (parameters: {}; reductions: {})",
                    self.parameters
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    self.reductions
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}
