//! Time histories read from a results file by a short selector, for `saltus plot` and for
//! tabulating results.
//!
//! A selector is a dataset path whose first axis is the record (as `/time`), optionally
//! followed by one bracketed selection per further axis and a component suffix:
//!
//! | selector | series |
//! |---|---|
//! | `energy/total` | the `[n]` dataset itself |
//! | `nodes/position[slider]` | x, y, z of node `slider` (a name from `/nodes/names`, or an index) |
//! | `nodes/position[slider].x`, `nodes/position[slider, x]` | its x component only |
//! | `nodes/rotation[2, w]` | the w component of node 2's quaternion |
//! | `elements/hinge/reaction[:, 0]` | `:` keeps a whole axis |
//! | `solver/iterations[position]` | a column by stage name (`/solver/stages`) |
//!
//! Component letters name the last axis when it has length 3 (`x y z`) or 4 (`w x y z`).
//! Axes left out are kept whole, so `nodes/position` alone gives every node's three
//! components (`3 N` series).

use hdf5_metno as hdf5;

use hdf5::types::VarLenUnicode;
use std::path::Path;

/// One time history: a label naming the dataset and the selected indices, the dataset's unit
/// (its `unit` attribute, empty if none) and one value per record.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// E.g. `nodes/position[slider, x]`.
    pub label: String,
    /// Unit of the values, e.g. `m` (empty when the dataset has none).
    pub unit: String,
    /// One value per record, in record order.
    pub values: Vec<f64>,
}

/// Why a selector cannot be read: the file and the selector are named in the message.
#[derive(Debug, thiserror::Error)]
#[error("{file}: `{selector}`: {message}")]
pub struct SeriesError {
    /// The results file.
    pub file: String,
    /// The selector as given.
    pub selector: String,
    /// What is wrong.
    pub message: String,
}

/// One index of a selection: a fixed position or the whole axis.
#[derive(Clone, Debug, PartialEq)]
enum Pick {
    All,
    Index(usize),
    Name(String),
}

/// A parsed selector: dataset path and the picks of the axes after the record axis.
#[derive(Clone, Debug, PartialEq)]
struct Selector {
    path: String,
    picks: Vec<Pick>,
}

const XYZ: [&str; 3] = ["x", "y", "z"];
const WXYZ: [&str; 4] = ["w", "x", "y", "z"];

fn parse_pick(s: &str) -> Pick {
    let s = s.trim();
    if s == ":" || s.is_empty() {
        Pick::All
    } else if let Ok(i) = s.parse::<usize>() {
        Pick::Index(i)
    } else {
        Pick::Name(s.to_string())
    }
}

/// Check a selector's syntax without a file (e.g. before any run of a study exists).
pub fn check_selector(spec: &str) -> Result<(), String> {
    parse_selector(spec).map(|_| ())
}

/// Split `path[a, b].c` into the path and its picks (`.c` appends a last-axis pick).
fn parse_selector(spec: &str) -> Result<Selector, String> {
    let spec = spec.trim();
    let (head, suffix) = match spec.rsplit_once('.') {
        Some((h, c)) if WXYZ.contains(&c) && !h.is_empty() => (h, Some(c)),
        _ => (spec, None),
    };
    let (path, mut picks) = match head.find('[') {
        Some(open) => {
            let Some(inner) = head[open + 1..].strip_suffix(']') else {
                return Err("a selection opened with `[` must end with `]`".into());
            };
            if inner.contains('[') || inner.contains(']') {
                return Err(
                    "one bracketed selection only, e.g. `nodes/position[slider, x]`".into(),
                );
            }
            let picks: Vec<Pick> = inner.split(',').map(parse_pick).collect();
            (&head[..open], picks)
        }
        None => (head, Vec::new()),
    };
    let path = path.trim().trim_start_matches('/').to_string();
    if path.is_empty() {
        return Err("no dataset path".into());
    }
    if let Some(c) = suffix {
        picks.push(Pick::Name(c.to_string()));
    }
    Ok(Selector { path, picks })
}

/// Resolve a named pick on axis `axis`: component letters on a last axis of length 3 or 4,
/// node names on the node axis of `nodes/*`, stage names on `solver/*` ([`axis_names`]).
fn resolve(
    name: &str,
    axis: usize,
    shape: &[usize],
    path: &str,
    file: &hdf5::File,
) -> Result<usize, String> {
    let (source, names) = axis_names(file, path, axis, shape)?;
    if let Some(i) = names.iter().position(|n| n == name) {
        return Ok(i);
    }
    let len = shape[axis];
    Err(match source {
        Some(np) => format!(
            "no `{name}` in `/{np}` (known: {}{})",
            names
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if names.len() > 20 { ", …" } else { "" }
        ),
        None => format!(
            "`{name}` does not name an index of axis {axis} (length {len}): give 0 … {}{} or `:`",
            len.saturating_sub(1),
            if names.is_empty() {
                String::new()
            } else {
                format!(" (or {})", names.join(", "))
            }
        ),
    })
}

/// Read the series a selector names from an open results file.
///
/// The dataset's first axis must hold one value per record (the length of `/time`); values
/// of integer datasets are converted to `f64`.
pub fn read_series(file: &hdf5::File, spec: &str) -> Result<Vec<Series>, SeriesError> {
    let fail = |message: String| SeriesError {
        file: file.filename(),
        selector: spec.to_string(),
        message,
    };
    let sel = parse_selector(spec).map_err(&fail)?;
    let ds = file.dataset(&sel.path).map_err(|_| {
        fail(format!(
            "no dataset `/{}` in the file (layout: docs/hdf5-layout.md)",
            sel.path
        ))
    })?;
    let shape = ds.shape();
    let records = file
        .dataset("time")
        .map(|t| t.size())
        .map_err(|e| fail(format!("no `/time`: {e}")))?;
    if shape.first() != Some(&records) {
        return Err(fail(format!(
            "its first axis has {} entries, not one per record ({records}): only per-record \
             datasets are time histories",
            shape.first().copied().unwrap_or(0)
        )));
    }
    let inner = &shape[1..];
    if sel.picks.len() > inner.len() {
        return Err(fail(format!(
            "{} selections for a dataset with {} axes after the record axis (shape {shape:?})",
            sel.picks.len(),
            inner.len()
        )));
    }
    // Per inner axis: the indices kept.
    let mut kept: Vec<Vec<usize>> = Vec::with_capacity(inner.len());
    for (a, &len) in inner.iter().enumerate() {
        let idx = match sel.picks.get(a).unwrap_or(&Pick::All) {
            Pick::All => (0..len).collect(),
            Pick::Index(i) if *i < len => vec![*i],
            Pick::Index(i) => {
                return Err(fail(format!(
                    "index {i} out of range on axis {} (length {len})",
                    a + 1
                )))
            }
            Pick::Name(n) => vec![resolve(n, a + 1, &shape, &sel.path, file).map_err(&fail)?],
        };
        kept.push(idx);
    }
    let count: usize = kept.iter().map(Vec::len).product();
    if count > 64 {
        return Err(fail(format!(
            "selects {count} series (shape {shape:?}); pick indices, e.g. `{}[0]`",
            sel.path
        )));
    }
    let data = ds
        .read_dyn::<f64>()
        .map_err(|e| fail(format!("cannot read as numbers: {e}")))?;
    let raw = data
        .as_slice()
        .ok_or_else(|| fail("non-contiguous data".into()))?;
    let stride: usize = inner.iter().product::<usize>().max(1);
    let unit = ds
        .attr("unit")
        .and_then(|a| a.read_scalar::<VarLenUnicode>())
        .map(|u| u.as_str().to_string())
        .unwrap_or_default();
    // Row-major offsets and labels of every kept combination.
    let mut combos: Vec<(usize, Vec<String>)> = vec![(0, Vec::new())];
    for (a, idx) in kept.iter().enumerate() {
        let below: usize = inner[a + 1..].iter().product();
        let names = axis_names(file, &sel.path, a + 1, &shape)
            .ok()
            .map(|(_, n)| n)
            .filter(|n| n.len() == inner[a]);
        let mut next = Vec::with_capacity(combos.len() * idx.len());
        for (off, lab) in &combos {
            for &i in idx {
                let mut l = lab.clone();
                l.push(names.as_ref().map_or(i.to_string(), |n| n[i].clone()));
                next.push((off + i * below, l));
            }
        }
        combos = next;
    }
    Ok(combos
        .into_iter()
        .map(|(off, lab)| Series {
            label: if lab.is_empty() {
                sel.path.clone()
            } else {
                format!("{}[{}]", sel.path, lab.join(", "))
            },
            unit: unit.clone(),
            values: (0..records).map(|k| raw[k * stride + off]).collect(),
        })
        .collect())
}

/// Names of the indices of axis `axis` of dataset `path`: the node names (`/nodes/names`) on
/// the node axis of `nodes/*` or the stage names (`/solver/stages`) on `solver/*`, with the
/// dataset they come from; else the component letters of a last axis of length 3 (`x y z`)
/// or 4 (`w x y z`); no names otherwise.
fn axis_names(
    file: &hdf5::File,
    path: &str,
    axis: usize,
    shape: &[usize],
) -> Result<(Option<&'static str>, Vec<String>), String> {
    let letters = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    let last = axis + 1 == shape.len();
    let np = if path.starts_with("nodes/") && axis == 1 {
        "nodes/names"
    } else if path.starts_with("solver/") && axis == 1 {
        "solver/stages"
    } else {
        return Ok(match shape[axis] {
            3 if last => (None, letters(&XYZ)),
            4 if last => (None, letters(&WXYZ)),
            _ => (None, Vec::new()),
        });
    };
    let names: Vec<VarLenUnicode> = file
        .dataset(np)
        .and_then(|d| d.read_raw())
        .map_err(|e| format!("cannot read `/{np}`: {e}"))?;
    Ok((
        Some(np),
        names.iter().map(|n| n.as_str().to_string()).collect(),
    ))
}

/// The record times `/time` of a results file \[s\].
pub fn read_time(file: &hdf5::File) -> Result<Vec<f64>, SeriesError> {
    file.dataset("time")
        .and_then(|d| d.read_raw::<f64>())
        .map_err(|e| SeriesError {
            file: file.filename(),
            selector: "time".into(),
            message: format!("cannot read `/time`: {e}"),
        })
}

/// Open a results file for reading series, with an error naming it.
pub fn open(path: &Path) -> Result<hdf5::File, SeriesError> {
    hdf5::File::open(path).map_err(|e| SeriesError {
        file: path.display().to_string(),
        selector: String::new(),
        message: format!("cannot open as HDF5: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse() {
        let s = parse_selector("nodes/position[slider].x").unwrap();
        assert_eq!(s.path, "nodes/position");
        assert_eq!(
            s.picks,
            vec![Pick::Name("slider".into()), Pick::Name("x".into())]
        );
        let s = parse_selector("/elements/hinge/reaction[:, 2]").unwrap();
        assert_eq!(s.path, "elements/hinge/reaction");
        assert_eq!(s.picks, vec![Pick::All, Pick::Index(2)]);
        assert_eq!(parse_selector("energy/total").unwrap().picks, vec![]);
        assert!(parse_selector("nodes/position[0").is_err());
        assert!(parse_selector("[0]").is_err());
        // A dot that is not a component letter is part of the path.
        assert_eq!(parse_selector("a.b").unwrap().path, "a.b");
    }
}
