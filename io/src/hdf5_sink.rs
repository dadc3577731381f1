//! Incremental HDF5 result files ([`Hdf5Sink`]) and their XDMF sidecar for ParaView.
//!
//! The layout is documented in `docs/hdf5-layout.md`. In short (`n` = number of records,
//! `N` = number of nodes):
//!
//! | path | shape | type | unit |
//! |---|---|---|---|
//! | `/time` | `[n]` | f64 | s |
//! | `/step` | `[n]` | u64 | – |
//! | `/nodes/names` | `\[N\]` | variable-length UTF-8 | – |
//! | `/nodes/index` | `\[N\]` | i64 | – |
//! | `/nodes/position` | `[n, N, 3]` | f64 | m |
//! | `/nodes/rotation` | `[n, N, 4]` | f64 (w, x, y, z) | – |
//! | `/nodes/velocity` | `[n, N, 3]` | f64 | m/s |
//! | `/nodes/angular_velocity` | `[n, N, 3]` | f64, spatial `ω = R Ω` | rad/s |
//! | `/elements/<name>/<output>` | `[n, len]` | f64 | attribute `unit` |
//! | `/solver/stages` | `[S]` | variable-length UTF-8 (NSGA: smooth, position, velocity) | – |
//! | `/solver/iterations` | `[n, S]` | u64, one column per stage | – |
//! | `/solver/line_search` | `[n, S]` | u64, one column per stage | – |
//! | `/solver/residual` | `[n, S]` | f64, one column per stage | – |
//! | `/solver/h` | `[n]` | f64 | s |
//! | `/solver` attributes | scalar | bool, i64, f64, UTF-8 | run-level results ([`ResultSink::solver_attributes`]) |
//! | `/energy/{kinetic,potential,total}` | `[n]` | f64 | J |
//! | `/contacts/...` | `[m, ...]` | the per-step contact table (`crate::contact_table`) | |
//!
//! Every per-step dataset is chunked and extendible along its first axis and grows by one
//! row per [`ResultSink::record`]; the file is flushed every [`Hdf5Sink::with_flush_every`]
//! records and at [`ResultSink::finish`], so an interrupted run keeps its flushed steps.

use hdf5_metno as hdf5;

use crate::contact_table::{append_rows, create_extendible, ContactTable};
use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, File, Group, H5Type};
use saltus_core::{AttributeValue, OutputLayout, ResultSink, SinkError, StepRecord};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Default number of records between two flushes of the file.
pub const DEFAULT_FLUSH_EVERY: usize = 100;

/// Units of all quantities in the file (root attribute `units`).
pub const UNITS: &str = "SI (m, kg, s, rad, N)";

/// One extendible per-step dataset: shape `[n, row...]`.
struct Series {
    ds: Dataset,
    /// Full HDF5 path (for error messages).
    name: String,
    /// Shape of one record.
    row: Vec<usize>,
}

impl Series {
    /// Grow to `n + 1` records and write record `n` (`data` in C order, length = row size).
    fn append<T: H5Type>(&self, n: usize, data: &[T]) -> hdf5::Result<()> {
        append_rows(&self.ds, &self.row, n, 1, data)
    }
}

/// An element output channel and where its values sit in [`StepRecord::element_values`].
struct Channel {
    series: Series,
    offset: usize,
    len: usize,
}

/// Open datasets after [`ResultSink::begin`].
struct Datasets {
    time: Series,
    step: Series,
    position: Series,
    rotation: Series,
    velocity: Series,
    angular_velocity: Series,
    iterations: Series,
    backtracks: Series,
    residual: Series,
    h: Series,
    kinetic: Series,
    potential: Series,
    total: Series,
    channels: Vec<Channel>,
    contacts: ContactTable,
    n_nodes: usize,
    n_stages: usize,
    n_element_values: usize,
}

/// A [`ResultSink`] writing an HDF5 file incrementally (layout: module docs and
/// `docs/hdf5-layout.md`), plus an XDMF sidecar (`<file>.xdmf`) at [`ResultSink::finish`].
///
/// ```no_run
/// # fn main() -> Result<(), saltus_core::SinkError> {
/// use saltus_io::Hdf5Sink;
/// let sink = Hdf5Sink::create("run.h5")?
///     .with_model_text("# model file text ...")
///     .with_flush_every(50);
/// # Ok(()) }
/// ```
pub struct Hdf5Sink {
    path: PathBuf,
    file: Option<File>,
    model_text: Option<String>,
    created_by: String,
    flush_every: usize,
    xdmf: bool,
    datasets: Option<Datasets>,
    /// Times of the records (for the XDMF sidecar).
    times: Vec<f64>,
    since_flush: usize,
}

impl std::fmt::Debug for Hdf5Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hdf5Sink")
            .field("path", &self.path)
            .field("open", &self.file.is_some())
            .field("records", &self.times.len())
            .field("flush_every", &self.flush_every)
            .field("xdmf", &self.xdmf)
            .finish()
    }
}

fn sink_err(path: &Path, what: &str, e: impl std::fmt::Display) -> SinkError {
    SinkError(format!("HDF5 file `{}`: {what}: {e}", path.display()))
}

pub(crate) fn write_str_attr(loc: &hdf5::Location, name: &str, value: &str) -> hdf5::Result<()> {
    let v = VarLenUnicode::from_str(value).map_err(|e| hdf5::Error::from(e.to_string()))?;
    loc.new_attr::<VarLenUnicode>()
        .create(name)?
        .write_scalar(&v)
}

/// HDF5 group name for an element: its name with `/` replaced by `_` (the original name is
/// kept in the group attribute `name`).
pub fn element_group_name(name: &str) -> String {
    let s = name.replace('/', "_");
    if s.is_empty() || s == "." || s == ".." {
        format!("_{s}")
    } else {
        s
    }
}

impl Hdf5Sink {
    /// Create (truncate) the HDF5 file at `path`. The datasets are created at
    /// [`ResultSink::begin`].
    pub fn create(path: impl AsRef<Path>) -> Result<Self, SinkError> {
        let path = path.as_ref().to_path_buf();
        let file = File::create(&path).map_err(|e| sink_err(&path, "cannot create file", e))?;
        let (a, b, c) = hdf5::library_version();
        Ok(Self {
            path,
            file: Some(file),
            model_text: None,
            created_by: format!("saltus-io {} (HDF5 {a}.{b}.{c})", env!("CARGO_PKG_VERSION")),
            flush_every: DEFAULT_FLUSH_EVERY,
            xdmf: true,
            datasets: None,
            times: Vec::new(),
            since_flush: 0,
        })
    }

    /// Store the model file text as the root attribute `model`.
    pub fn with_model_text(mut self, text: impl Into<String>) -> Self {
        self.model_text = Some(text.into());
        self
    }

    /// Set the root attribute `created_by` (default `saltus-io <version> (HDF5 <version>)`).
    pub fn with_created_by(mut self, created_by: impl Into<String>) -> Self {
        self.created_by = created_by.into();
        self
    }

    /// Flush the file every `n` records (default [`DEFAULT_FLUSH_EVERY`]; `0` is taken as 1).
    pub fn with_flush_every(mut self, n: usize) -> Self {
        self.flush_every = n.max(1);
        self
    }

    /// Whether to write the XDMF sidecar at [`ResultSink::finish`] (default true).
    pub fn with_xdmf(mut self, xdmf: bool) -> Self {
        self.xdmf = xdmf;
        self
    }

    /// Path of the HDF5 file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Path of the XDMF sidecar written at [`ResultSink::finish`].
    pub fn xdmf_path(&self) -> PathBuf {
        xdmf_path(&self.path)
    }

    /// Number of records written so far.
    pub fn records(&self) -> usize {
        self.times.len()
    }

    /// Flush the file to disk now.
    pub fn flush(&mut self) -> Result<(), SinkError> {
        if let Some(file) = &self.file {
            file.flush().map_err(|e| sink_err(&self.path, "flush", e))?;
        }
        self.since_flush = 0;
        Ok(())
    }

    fn file(&self) -> Result<&File, SinkError> {
        self.file
            .as_ref()
            .ok_or_else(|| sink_err(&self.path, "write", "the sink is already finished"))
    }

    fn series(
        &self,
        group: &Group,
        group_path: &str,
        name: &str,
        row: &[usize],
        unsigned: bool,
        unit: &str,
        description: &str,
    ) -> Result<Series, SinkError> {
        let full = format!("{group_path}/{name}");
        let ds = if unsigned {
            create_extendible::<u64>(group, name, row, unit, description)
        } else {
            create_extendible::<f64>(group, name, row, unit, description)
        }
        .map_err(|e| sink_err(&self.path, &format!("dataset `{full}`"), e))?;
        Ok(Series {
            ds,
            name: full,
            row: row.to_vec(),
        })
    }

    fn create_layout(&self, layout: &OutputLayout) -> Result<Datasets, SinkError> {
        let file = self.file()?;
        let path = &self.path;
        let attr_err = |what: &str| {
            let what = what.to_string();
            move |e: hdf5::Error| sink_err(path, &what, e)
        };
        write_str_attr(file, "program", "saltus").map_err(attr_err("root attribute `program`"))?;
        write_str_attr(file, "version", env!("CARGO_PKG_VERSION"))
            .map_err(attr_err("root attribute `version`"))?;
        write_str_attr(file, "units", UNITS).map_err(attr_err("root attribute `units`"))?;
        write_str_attr(file, "created_by", &self.created_by)
            .map_err(attr_err("root attribute `created_by`"))?;
        if let Some(text) = &self.model_text {
            write_str_attr(file, "model", text).map_err(attr_err("root attribute `model`"))?;
        }
        let group = |name: &str| {
            file.create_group(name)
                .map_err(|e| sink_err(path, &format!("group `/{name}`"), e))
        };
        let root: &Group = file;
        let nodes = group("nodes")?;
        let solver = group("solver")?;
        let energy = group("energy")?;
        let elements = group("elements")?;

        let n_nodes = layout.node_names.len();
        let names: Vec<VarLenUnicode> = layout
            .node_names
            .iter()
            .map(|n| VarLenUnicode::from_str(n))
            .collect::<Result<_, _>>()
            .map_err(|e| sink_err(path, "dataset `/nodes/names`", e))?;
        nodes
            .new_dataset_builder()
            .with_data(&names)
            .create("names")
            .map_err(|e| sink_err(path, "dataset `/nodes/names`", e))?;
        let index: Vec<i64> = (0..n_nodes as i64).collect();
        nodes
            .new_dataset_builder()
            .with_data(&index)
            .create("index")
            .map_err(|e| sink_err(path, "dataset `/nodes/index`", e))?;

        let stage_names: Vec<VarLenUnicode> = layout
            .stage_names
            .iter()
            .map(|n| VarLenUnicode::from_str(n))
            .collect::<Result<_, _>>()
            .map_err(|e| sink_err(path, "dataset `/solver/stages`", e))?;
        solver
            .new_dataset_builder()
            .with_data(&stage_names)
            .create("stages")
            .map_err(|e| sink_err(path, "dataset `/solver/stages`", e))?;
        let n_stages = layout.stage_names.len();
        let columns = format!("columns: {}", layout.stage_names.join(", "));

        let s = |g: &Group, gp: &str, name: &str, row: &[usize], unit: &str, desc: &str| {
            self.series(g, gp, name, row, false, unit, desc)
        };
        let time = s(root, "", "time", &[], "s", "time t of each record")?;
        let step = self.series(
            root,
            "",
            "step",
            &[],
            true,
            "1",
            "step index of each record (0 = initial state)",
        )?;
        let position = s(
            &nodes,
            "/nodes",
            "position",
            &[n_nodes, 3],
            "m",
            "node position x in the inertial frame",
        )?;
        let rotation = s(
            &nodes,
            "/nodes",
            "rotation",
            &[n_nodes, 4],
            "1",
            "node rotation (body to inertial) as a unit quaternion (w, x, y, z)",
        )?;
        let velocity = s(
            &nodes,
            "/nodes",
            "velocity",
            &[n_nodes, 3],
            "m/s",
            "node translational velocity in the inertial frame",
        )?;
        let angular_velocity = s(
            &nodes,
            "/nodes",
            "angular_velocity",
            &[n_nodes, 3],
            "rad/s",
            "node angular velocity in the inertial (spatial) frame, omega = R Omega",
        )?;
        let iterations = self.series(
            &solver,
            "/solver",
            "iterations",
            &[n_stages],
            true,
            "1",
            &format!("Newton iterations per stage ({columns})"),
        )?;
        let backtracks = self.series(
            &solver,
            "/solver",
            "line_search",
            &[n_stages],
            true,
            "1",
            &format!("line-search backtracks per stage ({columns})"),
        )?;
        let residual = s(
            &solver,
            "/solver",
            "residual",
            &[n_stages],
            "1",
            &format!("final residual norm per stage ({columns})"),
        )?;
        let h = s(&solver, "/solver", "h", &[], "s", "step size used")?;
        let kinetic = s(&energy, "/energy", "kinetic", &[], "J", "kinetic energy")?;
        let potential = s(
            &energy,
            "/energy",
            "potential",
            &[],
            "J",
            "potential energy (gravity, elastic)",
        )?;
        let total = s(
            &energy,
            "/energy",
            "total",
            &[],
            "J",
            "total mechanical energy (kinetic + potential)",
        )?;

        let mut channels = Vec::new();
        let mut group_names = HashSet::new();
        for (e, name) in layout.element_names.iter().enumerate() {
            let gname = element_group_name(name);
            if !group_names.insert(gname.clone()) {
                return Err(sink_err(
                    path,
                    &format!("element `{name}`"),
                    format!("group name `/elements/{gname}` is used twice"),
                ));
            }
            let gpath = format!("/elements/{gname}");
            let g = elements
                .create_group(&gname)
                .map_err(|e| sink_err(path, &format!("group `{gpath}`"), e))?;
            let type_name = layout.element_types.get(e).map_or("", String::as_str);
            write_str_attr(&g, "type", type_name)
                .and_then(|()| write_str_attr(&g, "name", name))
                .map_err(|e| sink_err(path, &format!("attributes of group `{gpath}`"), e))?;
            let outputs = layout.element_outputs.get(e).map_or(&[][..], Vec::as_slice);
            let mut offset = layout.element_offsets.get(e).copied().unwrap_or(0);
            let mut seen = HashSet::new();
            for o in outputs {
                if !seen.insert(o.name) {
                    return Err(sink_err(
                        path,
                        &format!("dataset `{gpath}/{}`", o.name),
                        "output name used twice by the element",
                    ));
                }
                let series = s(&g, &gpath, o.name, &[o.len], o.unit, o.description)?;
                channels.push(Channel {
                    series,
                    offset,
                    len: o.len,
                });
                offset += o.len;
            }
        }
        let contacts = ContactTable::create(root).map_err(|(what, e)| sink_err(path, &what, e))?;
        Ok(Datasets {
            contacts,
            time,
            step,
            position,
            rotation,
            velocity,
            angular_velocity,
            iterations,
            backtracks,
            residual,
            h,
            kinetic,
            potential,
            total,
            channels,
            n_nodes,
            n_stages,
            n_element_values: layout.n_element_values,
        })
    }
}

impl ResultSink for Hdf5Sink {
    fn begin(&mut self, layout: &OutputLayout) -> Result<(), SinkError> {
        if self.datasets.is_some() {
            return Err(sink_err(&self.path, "begin", "called twice"));
        }
        let datasets = self.create_layout(layout)?;
        self.datasets = Some(datasets);
        self.flush()
    }

    fn record(&mut self, r: &StepRecord<'_>) -> Result<(), SinkError> {
        self.file()?;
        let path = &self.path;
        let Some(d) = &self.datasets else {
            return Err(sink_err(path, "record", "called before begin"));
        };
        if r.nodes.len() != d.n_nodes {
            return Err(sink_err(
                path,
                "record",
                format!(
                    "{} node states, layout has {} nodes",
                    r.nodes.len(),
                    d.n_nodes
                ),
            ));
        }
        if r.element_values.len() != d.n_element_values {
            return Err(sink_err(
                path,
                "record",
                format!(
                    "{} element values, layout has {}",
                    r.element_values.len(),
                    d.n_element_values
                ),
            ));
        }
        let n = self.times.len();
        let put = |s: &Series, res: hdf5::Result<()>| {
            res.map_err(|e| sink_err(path, &format!("dataset `{}`", s.name), e))
        };
        put(&d.time, d.time.append(n, &[r.t]))?;
        put(&d.step, d.step.append(n, &[r.step as u64]))?;

        let mut buf = Vec::with_capacity(4 * d.n_nodes);
        buf.extend(r.nodes.iter().flat_map(|s| [s.x.x, s.x.y, s.x.z]));
        put(&d.position, d.position.append(n, &buf))?;
        buf.clear();
        buf.extend(r.nodes.iter().flat_map(|s| [s.r.w, s.r.i, s.r.j, s.r.k]));
        put(&d.rotation, d.rotation.append(n, &buf))?;
        buf.clear();
        buf.extend(r.nodes.iter().flat_map(|s| [s.v.x, s.v.y, s.v.z]));
        put(&d.velocity, d.velocity.append(n, &buf))?;
        buf.clear();
        buf.extend(r.nodes.iter().flat_map(|s| {
            let w = s.omega_spatial();
            [w.x, w.y, w.z]
        }));
        put(&d.angular_velocity, d.angular_velocity.append(n, &buf))?;

        // The initial record carries no statistics: zeros in every stage column.
        let stages = r.stats.stages();
        let col = |i: usize| stages.get(i).copied().unwrap_or_default();
        let mut ibuf = [0u64; saltus_core::output::MAX_STAGES];
        let mut fbuf = [0f64; saltus_core::output::MAX_STAGES];
        let ns = d.n_stages;
        for (i, v) in ibuf[..ns].iter_mut().enumerate() {
            *v = col(i).iterations as u64;
        }
        put(&d.iterations, d.iterations.append(n, &ibuf[..ns]))?;
        for (i, v) in ibuf[..ns].iter_mut().enumerate() {
            *v = col(i).backtracks as u64;
        }
        put(&d.backtracks, d.backtracks.append(n, &ibuf[..ns]))?;
        for (i, v) in fbuf[..ns].iter_mut().enumerate() {
            *v = col(i).residual;
        }
        put(&d.residual, d.residual.append(n, &fbuf[..ns]))?;
        put(&d.h, d.h.append(n, &[r.stats.h]))?;
        put(&d.kinetic, d.kinetic.append(n, &[r.energy.kinetic]))?;
        put(&d.potential, d.potential.append(n, &[r.energy.potential]))?;
        put(
            &d.total,
            d.total.append(n, &[r.energy.kinetic + r.energy.potential]),
        )?;
        for c in &d.channels {
            let values = &r.element_values[c.offset..c.offset + c.len];
            put(&c.series, c.series.append(n, values))?;
        }
        d.contacts
            .append(n, r.step, r.t, r.contacts)
            .map_err(|(what, e)| sink_err(path, &what, e))?;

        self.times.push(r.t);
        self.since_flush += 1;
        if self.since_flush >= self.flush_every {
            self.flush()?;
        }
        Ok(())
    }

    /// Written as scalar attributes of `/solver` (bool as HDF5's enum bool, `Int` as i64,
    /// `Float` as f64, `Text` as a variable-length UTF-8 string), replacing any of the same name.
    fn solver_attributes(
        &mut self,
        attributes: &[(&str, AttributeValue)],
    ) -> Result<(), SinkError> {
        let path = &self.path;
        if self.datasets.is_none() {
            return Err(sink_err(path, "solver attributes", "called before begin"));
        }
        let solver = self
            .file()?
            .group("solver")
            .map_err(|e| sink_err(path, "group `/solver`", e))?;
        for (name, value) in attributes {
            let err = |e: hdf5::Error| sink_err(path, &format!("attribute `/solver/{name}`"), e);
            if solver.attr_names().map_err(err)?.iter().any(|n| n == name) {
                solver.delete_attr(name).map_err(err)?;
            }
            match value {
                AttributeValue::Bool(v) => solver
                    .new_attr::<bool>()
                    .create(*name)
                    .and_then(|a| a.write_scalar(v)),
                AttributeValue::Int(v) => solver
                    .new_attr::<i64>()
                    .create(*name)
                    .and_then(|a| a.write_scalar(v)),
                AttributeValue::Float(v) => solver
                    .new_attr::<f64>()
                    .create(*name)
                    .and_then(|a| a.write_scalar(v)),
                AttributeValue::Text(v) => write_str_attr(&solver, name, v),
            }
            .map_err(err)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        if self.file.is_none() {
            return Ok(()); // already finished
        }
        self.flush()?;
        let n_nodes = self.datasets.as_ref().map(|d| d.n_nodes);
        // Close every handle, then the file.
        self.datasets = None;
        if let Some(file) = self.file.take() {
            file.close().map_err(|e| sink_err(&self.path, "close", e))?;
        }
        if let (true, Some(n_nodes)) = (self.xdmf, n_nodes) {
            if n_nodes > 0 {
                let text = xdmf_text(&self.path, &self.times, n_nodes);
                let xdmf = self.xdmf_path();
                std::fs::write(&xdmf, text).map_err(|e| {
                    SinkError(format!("cannot write XDMF file `{}`: {e}", xdmf.display()))
                })?;
            }
        }
        Ok(())
    }
}

/// Path of the XDMF sidecar of an HDF5 result file: the extension replaced by `.xdmf`
/// (`run.h5` → `run.xdmf`).
pub fn xdmf_path(h5_path: &Path) -> PathBuf {
    if h5_path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xdmf"))
    {
        let mut s = h5_path.as_os_str().to_owned();
        s.push(".xdmf");
        PathBuf::from(s)
    } else {
        h5_path.with_extension("xdmf")
    }
}

/// (Re)write the XDMF sidecar of an existing result file, e.g. after an interrupted run that
/// never reached [`ResultSink::finish`]. Returns the sidecar path, or `None` if the file has
/// no nodes.
pub fn write_xdmf(h5_path: impl AsRef<Path>) -> Result<Option<PathBuf>, SinkError> {
    let h5_path = h5_path.as_ref();
    let file = File::open(h5_path).map_err(|e| sink_err(h5_path, "open", e))?;
    let times: Vec<f64> = file
        .dataset("time")
        .and_then(|d| d.read_raw::<f64>())
        .map_err(|e| sink_err(h5_path, "dataset `/time`", e))?;
    let n_nodes = file
        .dataset("nodes/position")
        .map(|d| d.shape().get(1).copied().unwrap_or(0))
        .map_err(|e| sink_err(h5_path, "dataset `/nodes/position`", e))?;
    drop(file);
    if n_nodes == 0 {
        return Ok(None);
    }
    let xdmf = xdmf_path(h5_path);
    std::fs::write(&xdmf, xdmf_text(h5_path, &times, n_nodes))
        .map_err(|e| SinkError(format!("cannot write XDMF file `{}`: {e}", xdmf.display())))?;
    Ok(Some(xdmf))
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// XDMF 3 text: a temporal collection of Polyvertex grids (one vertex cell per node) whose
/// geometry and vector attributes are hyperslabs of the `.h5` datasets (referenced by file
/// name, relative to the sidecar).
///
/// The first child of every hyperslab item is a comment naming the record: VTK's XDMF (2)
/// reader caches a grid's geometry keyed by the text of the first child of the geometry's
/// first `DataItem`; a key shared by all records (whitespace) would freeze the geometry at
/// the first record read, a missing key (element) logs an error per record.
fn xdmf_text(h5_path: &Path, times: &[f64], n_nodes: usize) -> String {
    let h5 = xml_escape(
        &h5_path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let n = times.len();
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n");
    x.push_str("<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n");
    x.push_str("  <Domain>\n");
    x.push_str("    <Grid Name=\"nodes\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    let slab = |x: &mut String, indent: &str, i: usize, dataset: &str, cols: usize| {
        let _ = write!(
            x,
            "{indent}<DataItem ItemType=\"HyperSlab\" Dimensions=\"1 {n_nodes} {cols}\" \
             Type=\"HyperSlab\"><!-- {dataset}[{i}] -->\n\
             {indent}  <DataItem Dimensions=\"3 3\" NumberType=\"Int\" Format=\"XML\">\
             {i} 0 0 1 1 1 1 {n_nodes} {cols}</DataItem>\n\
             {indent}  <DataItem Dimensions=\"{n} {n_nodes} {cols}\" NumberType=\"Float\" \
             Precision=\"8\" Format=\"HDF\">{h5}:{dataset}</DataItem>\n\
             {indent}</DataItem>\n"
        );
    };
    for (i, t) in times.iter().enumerate() {
        let _ = write!(
            x,
            "      <Grid Name=\"step{i}\" GridType=\"Uniform\">\n\
             \x20       <Time Value=\"{t}\"/>\n\
             \x20       <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"{n_nodes}\" \
             NodesPerElement=\"1\">\n\
             \x20         <DataItem Dimensions=\"{n_nodes}\" NumberType=\"Int\" Precision=\"8\" \
             Format=\"HDF\">{h5}:/nodes/index</DataItem>\n\
             \x20       </Topology>\n\
             \x20       <Geometry GeometryType=\"XYZ\">\n"
        );
        slab(&mut x, "          ", i, "/nodes/position", 3);
        x.push_str("        </Geometry>\n");
        for name in ["velocity", "angular_velocity"] {
            let _ = writeln!(
                x,
                "        <Attribute Name=\"{name}\" AttributeType=\"Vector\" Center=\"Node\">"
            );
            slab(&mut x, "          ", i, &format!("/nodes/{name}"), 3);
            x.push_str("        </Attribute>\n");
        }
        x.push_str("      </Grid>\n");
    }
    x.push_str("    </Grid>\n  </Domain>\n</Xdmf>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<Hdf5Sink>();
    }

    #[test]
    fn xdmf_paths() {
        assert_eq!(
            xdmf_path(Path::new("a/run.h5")),
            PathBuf::from("a/run.xdmf")
        );
        assert_eq!(xdmf_path(Path::new("run")), PathBuf::from("run.xdmf"));
        assert_eq!(xdmf_path(Path::new("x.xdmf")), PathBuf::from("x.xdmf.xdmf"));
    }

    #[test]
    fn group_names() {
        assert_eq!(element_group_name("a/b"), "a_b");
        assert_eq!(element_group_name("."), "_.");
        assert_eq!(element_group_name("hinge"), "hinge");
    }

    #[test]
    fn xdmf_text_shape() {
        let t = xdmf_text(Path::new("dir/r&d.h5"), &[0.0, 0.5], 2);
        assert!(t.contains("r&amp;d.h5:/nodes/position"));
        assert_eq!(t.matches("<Time Value=").count(), 2);
        assert!(t.contains("<Time Value=\"0.5\"/>"));
        assert!(t.contains("1 0 0 1 1 1 1 2 3"));
        assert!(t.contains("Type=\"HyperSlab\"><!-- /nodes/position[1] -->"));
        assert!(t.contains("Dimensions=\"2 2 3\""));
    }
}
