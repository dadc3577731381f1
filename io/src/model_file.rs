//! Model files in TOML or JSON (same structure; see the crate docs for an example).
//!
//! A model file has three top-level keys:
//!
//! * `simulation` (optional table): [`SimulationSettings`], every key optional;
//! * `nodes` (required, non-empty array of tables): one entry per node, see [`load_model`];
//! * `elements` (optional array of tables): `type`, `name`, `nodes` and type-specific parameters,
//!   handed to the element's registered build function as a JSON object.
//!
//! Every error is an [`IoError`] whose message names the file, the line, the node or element and
//! the offending parameter, e.g.
//! `slider.toml:14: element `hinge`: parameter `axis` must be finite, got [NaN, 0.0, 1.0]`.

use nalgebra::{UnitQuaternion, Vector3, Vector4};
use saltus_core::{BuildError, ElementDef, Model, NodeDef, NodeKind, PrescribedMotion};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Tolerance on `|‖q‖ − 1|` below which a given rotation quaternion is normalized silently.
pub const QUATERNION_NORM_TOLERANCE: f64 = 1e-6;

/// Model-file syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// TOML 1.0 (`.toml`).
    Toml,
    /// JSON (`.json`).
    Json,
}

impl Format {
    /// The format of a file from its extension (`.toml` or `.json`, case-insensitive).
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "toml" => Some(Format::Toml),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    /// Lower-case name (`"toml"`, `"json"`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Toml => "toml",
            Format::Json => "json",
        }
    }
}

impl fmt::Display for Format {
    /// `TOML` or `JSON`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Toml => "TOML",
            Format::Json => "JSON",
        })
    }
}

/// The `[simulation]` table of a model file: run parameters, all optional.
///
/// Converted to solver options by the caller (the `saltus` binary); this crate only parses and
/// validates it ([`SimulationSettings::validate`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimulationSettings {
    /// End time `t_end` \[s\] (the run starts at `t = 0`). Default 1.0. Must be finite and > 0.
    pub t_end: f64,
    /// Nominal step size `h` \[s\]. Default 1e-3. Must be finite and > 0.
    pub h: f64,
    /// Spectral radius at infinity `ρ∞` of the generalized-α scheme [-], in `[0, 1]`
    /// (1: no numerical damping). Default 0.8.
    pub rho_inf: f64,
    /// Relative Newton tolerance `tol_r` [-] of every subproblem. Default 1e-8. Must be > 0.
    pub tol: f64,
    /// Gravity acceleration [m/s²] in the inertial frame. Default `[0, 0, -9.81]`.
    pub gravity: [f64; 3],
    /// Default HDF5 output path, as written in the file (relative paths are interpreted by the
    /// caller). Default none.
    pub output: Option<PathBuf>,
    /// Maximum Newton iterations per subproblem [-]. Default 50. Must be ≥ 1.
    pub max_iterations: usize,
    /// Halve the step size when a subproblem does not converge (instead of failing).
    /// Default false.
    pub adaptive: bool,
    /// Write every N-th step to the output (the initial state is always written) [-].
    /// Default 1. Must be ≥ 1.
    pub output_every: usize,
}

impl Default for SimulationSettings {
    fn default() -> Self {
        Self {
            t_end: 1.0,
            h: 1e-3,
            rho_inf: 0.8,
            tol: 1e-8,
            gravity: [0.0, 0.0, -9.81],
            output: None,
            max_iterations: 50,
            adaptive: false,
            output_every: 1,
        }
    }
}

/// An invalid value in [`SimulationSettings`].
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("parameter `{parameter}` {message}")]
pub struct InvalidSetting {
    /// The offending key, e.g. `"h"`.
    pub parameter: &'static str,
    /// What is wrong, including the value.
    pub message: String,
}

impl SimulationSettings {
    /// Check the values: `t_end`, `h`, `tol` finite and > 0, `rho_inf` in `[0, 1]`, gravity
    /// finite, `max_iterations` and `output_every` ≥ 1, `output` non-empty if given.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let positive = |parameter: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(InvalidSetting {
                    parameter,
                    message: format!("must be finite and > 0, got {v}"),
                })
            }
        };
        positive("t_end", self.t_end)?;
        positive("h", self.h)?;
        positive("tol", self.tol)?;
        if !(0.0..=1.0).contains(&self.rho_inf) {
            return Err(InvalidSetting {
                parameter: "rho_inf",
                message: format!("must be in [0, 1], got {}", self.rho_inf),
            });
        }
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return Err(InvalidSetting {
                parameter: "gravity",
                message: format!("must be finite, got {:?}", self.gravity),
            });
        }
        if self.max_iterations == 0 {
            return Err(InvalidSetting {
                parameter: "max_iterations",
                message: "must be >= 1, got 0".into(),
            });
        }
        if self.output_every == 0 {
            return Err(InvalidSetting {
                parameter: "output_every",
                message: "must be >= 1, got 0".into(),
            });
        }
        if self
            .output
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(InvalidSetting {
                parameter: "output",
                message: "must not be empty".into(),
            });
        }
        Ok(())
    }

    /// Gravity as a vector [m/s²].
    pub fn gravity_vector(&self) -> Vector3<f64> {
        Vector3::from(self.gravity)
    }
}

/// A parsed model file.
#[derive(Debug)]
pub struct ModelFile {
    /// The `[simulation]` settings (defaults where not given).
    pub simulation: SimulationSettings,
    /// The model: nodes in file order, then elements in file order (not yet
    /// [validated](Model::validate)).
    pub model: Model,
    /// The element entries as read, in file order (e.g. to rebuild a fresh model).
    pub elements: Vec<ElementDef>,
    /// The source text (stored in the HDF5 output as the root attribute `model`).
    pub text: String,
    /// The name used in error messages (usually the path).
    pub source_name: String,
    /// The syntax of the source.
    pub format: Format,
}

/// Where in a model file an error was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// File name as given (path or a name like `<string>`).
    pub file: String,
    /// 1-based line, if known.
    pub line: Option<u32>,
    /// 1-based column (characters), if known.
    pub column: Option<u32>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}

fn param_suffix(parameter: &Option<String>) -> String {
    match parameter {
        Some(p) => format!(": parameter `{p}`"),
        None => String::new(),
    }
}

fn first_line_suffix(first_line: &Option<u32>) -> String {
    match first_line {
        Some(l) => format!(" (first defined at line {l})"),
        None => String::new(),
    }
}

/// Errors of reading a model file. Every message starts with `file:line:` (the line where
/// known) and names the node or element and the offending parameter.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The file could not be read.
    #[error("cannot read model file `{}`: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The extension is neither `.toml` nor `.json`.
    #[error("model file `{}`: unknown format (expected extension `.toml` or `.json`)", path.display())]
    UnknownFormat {
        /// The path.
        path: PathBuf,
    },
    /// The text is not valid TOML/JSON.
    #[error("{location}: {format} syntax error: {message}")]
    Syntax {
        /// Where (line and column).
        location: Location,
        /// The syntax.
        format: Format,
        /// The parser's message.
        message: String,
    },
    /// A top-level problem: unknown or missing top-level key, wrong type of a section.
    #[error("{location}: {message}")]
    Structure {
        /// Where.
        location: Location,
        /// What is wrong (names the key).
        message: String,
    },
    /// An invalid `[simulation]` entry.
    #[error("{location}: [simulation]: parameter `{parameter}`: {message}")]
    Simulation {
        /// Where.
        location: Location,
        /// The offending key.
        parameter: String,
        /// What is wrong.
        message: String,
    },
    /// An invalid node entry.
    #[error("{location}: node `{node}`{}: {message}", param_suffix(parameter))]
    Node {
        /// Where.
        location: Location,
        /// Node name (`#k` for the k-th entry if it has no name).
        node: String,
        /// The offending key, if any.
        parameter: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// An element entry lacks a required key or a key has the wrong type
    /// (`type`, `name`, `nodes`).
    #[error("{location}: element `{element}`: parameter `{parameter}`: {message}")]
    ElementEntry {
        /// Where.
        location: Location,
        /// Element name (`#k` for the k-th entry if it has no name).
        element: String,
        /// The offending key.
        parameter: String,
        /// What is wrong.
        message: String,
    },
    /// Building an element failed (unknown type, unknown node, bad parameters, ...).
    /// The wrapped [`BuildError`] names the element and the parameter.
    #[error("{location}: {source}")]
    Element {
        /// Where (the line of the offending key where it can be found).
        location: Location,
        /// Element name.
        element: String,
        /// The offending parameter, if it could be identified.
        parameter: Option<String>,
        /// The build error.
        source: Box<BuildError>,
    },
    /// Two nodes or two elements share a name.
    #[error(
        "{location}: duplicate {what} name `{name}`{}",
        first_line_suffix(first_line)
    )]
    Duplicate {
        /// Where (the second definition).
        location: Location,
        /// `"node"` or `"element"`.
        what: &'static str,
        /// The duplicated name.
        name: String,
        /// Line of the first definition, if known.
        first_line: Option<u32>,
    },
}

impl IoError {
    /// Where the error was found, if it concerns the file's content.
    pub fn location(&self) -> Option<&Location> {
        match self {
            IoError::Read { .. } | IoError::UnknownFormat { .. } => None,
            IoError::Syntax { location, .. }
            | IoError::Structure { location, .. }
            | IoError::Simulation { location, .. }
            | IoError::Node { location, .. }
            | IoError::ElementEntry { location, .. }
            | IoError::Element { location, .. }
            | IoError::Duplicate { location, .. } => Some(location),
        }
    }
}

/// Read and parse a model file; the format follows the extension (`.toml` or `.json`).
///
/// Nodes are added in file order, then elements in file order through the element registry
/// (so the element crate must be linked). The model is not [validated](Model::validate).
pub fn load_model(path: impl AsRef<Path>) -> Result<ModelFile, IoError> {
    let path = path.as_ref();
    let format = Format::from_path(path).ok_or_else(|| IoError::UnknownFormat {
        path: path.to_path_buf(),
    })?;
    let text = std::fs::read_to_string(path).map_err(|source| IoError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_str(&text, format, &path.display().to_string())
}

/// Parse a model from text; `source_name` is used in error messages (e.g. the path).
pub fn parse_str(text: &str, format: Format, source_name: &str) -> Result<ModelFile, IoError> {
    let cx = Cx::new(text, source_name);
    let (root, spans) = match format {
        Format::Toml => parse_toml(text, &cx)?,
        Format::Json => parse_json(text, &cx)?,
    };
    let cx = Cx { spans, ..cx };
    let (simulation, model, elements) = build(&root, &cx)?;
    Ok(ModelFile {
        simulation,
        model,
        elements,
        text: text.to_string(),
        source_name: source_name.to_string(),
        format,
    })
}

// ---------------------------------------------------------------------------------------------
// Source positions

/// One step of a path into the document.
#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// Byte offsets of the document's tables, keys and array items.
#[derive(Clone, Debug, Default)]
enum SpanNode {
    Table {
        start: usize,
        /// (key, offset of the key, value)
        keys: Vec<(String, usize, SpanNode)>,
    },
    Array {
        start: usize,
        items: Vec<SpanNode>,
    },
    Leaf {
        start: usize,
    },
    /// No position information.
    #[default]
    None,
}

impl SpanNode {
    fn start(&self) -> Option<usize> {
        match self {
            SpanNode::Table { start, .. }
            | SpanNode::Array { start, .. }
            | SpanNode::Leaf { start } => Some(*start),
            SpanNode::None => None,
        }
    }

    /// Offset of the deepest element of `path` that can be found.
    fn locate(&self, path: &[Seg]) -> Option<usize> {
        let mut node = self;
        let mut best = self.start();
        for seg in path {
            let next = match (node, seg) {
                (SpanNode::Table { keys, .. }, Seg::Key(k)) => keys
                    .iter()
                    .find(|(name, _, _)| name == k)
                    .map(|(_, off, child)| {
                        best = Some(*off);
                        child
                    }),
                (SpanNode::Array { items, .. }, Seg::Index(i)) => items.get(*i).inspect(|child| {
                    if let Some(s) = child.start() {
                        best = Some(s);
                    }
                }),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        best
    }
}

/// Error context: file name, line table, spans.
struct Cx {
    file: String,
    line_starts: Vec<usize>,
    spans: SpanNode,
}

impl Cx {
    fn new(text: &str, file: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self {
            file: file.to_string(),
            line_starts,
            spans: SpanNode::None,
        }
    }

    fn line_of(&self, offset: usize) -> u32 {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        u32::try_from(line).unwrap_or(u32::MAX)
    }

    fn at_offset(&self, text: &str, offset: usize) -> Location {
        let line = self.line_of(offset);
        let start = self.line_starts[line as usize - 1];
        let column = text
            .get(start..offset.min(text.len()))
            .map(|s| u32::try_from(s.chars().count() + 1).unwrap_or(u32::MAX));
        Location {
            file: self.file.clone(),
            line: Some(line),
            column,
        }
    }

    fn loc(&self, path: &[Seg]) -> Location {
        Location {
            file: self.file.clone(),
            line: self.spans.locate(path).map(|o| self.line_of(o)),
            column: None,
        }
    }

    fn line(&self, path: &[Seg]) -> Option<u32> {
        self.spans.locate(path).map(|o| self.line_of(o))
    }
}

// ---------------------------------------------------------------------------------------------
// TOML

fn parse_toml(text: &str, cx: &Cx) -> Result<(Value, SpanNode), IoError> {
    let syntax = |e: toml::de::Error| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        IoError::Syntax {
            location: cx.at_offset(text, offset),
            format: Format::Toml,
            message: e.message().trim().to_string(),
        }
    };
    let table: toml::Table = toml::from_str(text).map_err(syntax)?;
    let spans = match toml::de::DeTable::parse(text) {
        Ok(t) => {
            let span = t.span();
            de_table_spans(t.get_ref(), span.start)
        }
        Err(_) => SpanNode::None,
    };
    let cx = Cx {
        file: cx.file.clone(),
        line_starts: cx.line_starts.clone(),
        spans,
    };
    let table = toml::Value::Table(table);
    let mut path = Vec::new();
    let root =
        toml_to_json(&table, &mut path).map_err(|value| non_finite(&table, &path, value, &cx))?;
    Ok((root, cx.spans))
}

/// The error for a non-finite float at `path` (JSON cannot hold it, and no Saltus input may be
/// non-finite), naming the node/element and parameter.
fn non_finite(root: &toml::Value, path: &[Seg], value: f64, cx: &Cx) -> IoError {
    let message = format!("non-finite number `{value}` is not allowed");
    let location = cx.loc(path);
    let entry_name = |section: &str, i: usize| {
        root.get(section)
            .and_then(|s| s.get(i))
            .and_then(|e| e.get("name"))
            .and_then(toml::Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("#{}", i + 1))
    };
    match path {
        [Seg::Key(s), rest @ ..] if s == "simulation" && !rest.is_empty() => IoError::Simulation {
            location,
            parameter: path_string(rest),
            message,
        },
        [Seg::Key(s), Seg::Index(i), rest @ ..] if s == "nodes" && !rest.is_empty() => {
            IoError::Node {
                location,
                node: entry_name("nodes", *i),
                parameter: Some(path_string(rest)),
                message,
            }
        }
        [Seg::Key(s), Seg::Index(i), rest @ ..] if s == "elements" && !rest.is_empty() => {
            IoError::ElementEntry {
                location,
                element: entry_name("elements", *i),
                parameter: path_string(rest),
                message,
            }
        }
        _ => IoError::Structure {
            location,
            message: format!("`{}`: {message}", path_string(path)),
        },
    }
}

fn de_table_spans(t: &toml::de::DeTable<'_>, start: usize) -> SpanNode {
    SpanNode::Table {
        start,
        keys: t
            .iter()
            .map(|(k, v)| {
                (
                    k.get_ref().to_string(),
                    k.span().start,
                    de_value_spans(v.get_ref(), v.span().start),
                )
            })
            .collect(),
    }
}

fn de_value_spans(v: &toml::de::DeValue<'_>, start: usize) -> SpanNode {
    if let Some(t) = v.as_table() {
        de_table_spans(t, start)
    } else if let Some(a) = v.as_array() {
        SpanNode::Array {
            start,
            items: a
                .iter()
                .map(|item| de_value_spans(item.get_ref(), item.span().start))
                .collect(),
        }
    } else {
        SpanNode::Leaf { start }
    }
}

/// Convert TOML to JSON. A non-finite float (JSON cannot hold it) stops the conversion with
/// its value; `path` then points at it.
fn toml_to_json(v: &toml::Value, path: &mut Vec<Seg>) -> Result<Value, f64> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::Number(serde_json::Number::from_f64(*f).ok_or(*f)?),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, item) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                out.push(toml_to_json(item, path)?);
                path.pop();
            }
            Value::Array(out)
        }
        toml::Value::Table(t) => {
            let mut out = Map::new();
            for (k, item) in t {
                path.push(Seg::Key(k.clone()));
                out.insert(k.clone(), toml_to_json(item, path)?);
                path.pop();
            }
            Value::Object(out)
        }
    })
}

fn path_string(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// JSON

fn parse_json(text: &str, cx: &Cx) -> Result<(Value, SpanNode), IoError> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        let mut message = e.to_string();
        if let Some(i) = message.rfind(" at line ") {
            message.truncate(i);
        }
        IoError::Syntax {
            location: Location {
                file: cx.file.clone(),
                line: u32::try_from(e.line()).ok(),
                column: u32::try_from(e.column()).ok(),
            },
            format: Format::Json,
            message,
        }
    })?;
    let mut scanner = JsonScanner {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let spans = scanner.value().unwrap_or_default();
    Ok((root, spans))
}

/// Minimal scanner recording the offsets of keys and items of a JSON text that `serde_json`
/// has already accepted.
struct JsonScanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl JsonScanner<'_> {
    fn ws(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        if self.peek()? != b'"' {
            return None;
        }
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    break;
                }
                _ => self.pos += 1,
            }
        }
        serde_json::from_str(self.text.get(start..self.pos)?).ok()
    }

    fn value(&mut self) -> Option<SpanNode> {
        self.ws();
        let start = self.pos;
        match self.peek()? {
            b'{' => {
                self.pos += 1;
                let mut keys = Vec::new();
                loop {
                    self.ws();
                    if self.peek()? == b'}' {
                        self.pos += 1;
                        break;
                    }
                    let key_start = self.pos;
                    let key = self.string()?;
                    self.ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.pos += 1;
                    let child = self.value()?;
                    keys.push((key, key_start, child));
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b'}' => {
                            self.pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                Some(SpanNode::Table { start, keys })
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.peek()? == b']' {
                        self.pos += 1;
                        break;
                    }
                    items.push(self.value()?);
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b']' => {
                            self.pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                Some(SpanNode::Array { start, items })
            }
            b'"' => {
                self.string()?;
                Some(SpanNode::Leaf { start })
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b']' | b'}') && !b.is_ascii_whitespace())
                {
                    self.pos += 1;
                }
                Some(SpanNode::Leaf { start })
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Building the model

/// A `[[nodes]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeEntry {
    name: String,
    position: [f64; 3],
    #[serde(default)]
    rotation: Option<[f64; 4]>,
    #[serde(default)]
    rotation_vector: Option<[f64; 3]>,
    #[serde(default)]
    velocity: Option<[f64; 3]>,
    #[serde(default)]
    angular_velocity: Option<[f64; 3]>,
    #[serde(default = "default_kind")]
    kind: NodeKind,
    #[serde(default)]
    fixed: bool,
    #[serde(default)]
    prescribed: bool,
}

fn default_kind() -> NodeKind {
    NodeKind::Frame
}

/// A problem with one key of an entry.
struct FieldError {
    parameter: Option<String>,
    message: String,
}

fn field_error(parameter: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        parameter: Some(parameter.to_string()),
        message: message.into(),
    }
}

impl NodeEntry {
    fn to_def(&self) -> Result<NodeDef, FieldError> {
        if self.name.is_empty() {
            return Err(field_error("name", "must not be empty"));
        }
        let finite = |parameter: &str, v: &[f64]| {
            if v.iter().all(|x| x.is_finite()) {
                Ok(())
            } else {
                Err(field_error(parameter, format!("must be finite, got {v:?}")))
            }
        };
        finite("position", &self.position)?;
        let x = Vector3::from(self.position);
        let mut def = match self.kind {
            NodeKind::Frame => NodeDef::frame(self.name.clone(), x),
            NodeKind::Point => {
                for (given, parameter) in [
                    (self.rotation.is_some(), "rotation"),
                    (self.rotation_vector.is_some(), "rotation_vector"),
                    (self.angular_velocity.is_some(), "angular_velocity"),
                ] {
                    if given {
                        return Err(field_error(
                            parameter,
                            "not allowed for a point node (kind = \"point\" has no rotation)",
                        ));
                    }
                }
                NodeDef::point(self.name.clone(), x)
            }
        };
        match (self.rotation, self.rotation_vector) {
            (Some(_), Some(_)) => {
                return Err(field_error(
                    "rotation_vector",
                    "give either `rotation` (quaternion) or `rotation_vector`, not both",
                ));
            }
            (Some(q), None) => {
                finite("rotation", &q)?;
                let v = Vector4::new(q[1], q[2], q[3], q[0]);
                let norm = v.norm();
                if (norm - 1.0).abs() > QUATERNION_NORM_TOLERANCE {
                    return Err(field_error(
                        "rotation",
                        format!(
                            "quaternion {q:?} (w, x, y, z) has norm {norm}; it must be a unit \
                             quaternion (|norm - 1| <= {QUATERNION_NORM_TOLERANCE})"
                        ),
                    ));
                }
                let quat = nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]);
                def = def.rotation(UnitQuaternion::from_quaternion(quat));
            }
            (None, Some(rv)) => {
                finite("rotation_vector", &rv)?;
                def = def.rotation(UnitQuaternion::from_scaled_axis(Vector3::from(rv)));
            }
            (None, None) => {}
        }
        if let Some(v) = self.velocity {
            finite("velocity", &v)?;
            def = def.velocity(Vector3::from(v));
        }
        if let Some(w) = self.angular_velocity {
            finite("angular_velocity", &w)?;
            def = def.angular_velocity(Vector3::from(w));
        }
        if self.fixed && self.prescribed {
            return Err(field_error(
                "prescribed",
                "a node is either fixed (at rest) or prescribed (moving with its initial velocities), not both",
            ));
        }
        if self.fixed {
            def = def.fixed();
        }
        if self.prescribed {
            let motion = PrescribedMotion::ConstantVelocity {
                velocity: def.initial.v,
                angular_velocity: def.initial.r * def.initial.omega,
            };
            def = def.prescribed(motion);
        }
        Ok(def)
    }
}

/// Deserialize an entry; on failure, find the offending key by deserializing each key on its
/// own on top of a minimal valid `skeleton` (serde's type errors do not name the field).
fn parse_entry<T: DeserializeOwned>(
    value: &Value,
    skeleton: &Map<String, Value>,
) -> Result<T, FieldError> {
    let err = match serde_json::from_value::<T>(value.clone()) {
        Ok(t) => return Ok(t),
        Err(e) => e.to_string(),
    };
    if let Some(obj) = value.as_object() {
        for (k, v) in obj {
            let mut probe = skeleton.clone();
            probe.insert(k.clone(), v.clone());
            if let Err(e) = serde_json::from_value::<T>(Value::Object(probe)) {
                return Err(FieldError {
                    parameter: Some(k.clone()),
                    message: e.to_string(),
                });
            }
        }
    }
    Err(FieldError {
        parameter: backticked(&err),
        message: err,
    })
}

/// The first `` `name` `` in a message (serde names fields this way).
fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

const TOP_LEVEL_KEYS: [&str; 3] = ["simulation", "nodes", "elements"];

fn build(root: &Value, cx: &Cx) -> Result<(SimulationSettings, Model, Vec<ElementDef>), IoError> {
    let structure = |path: &[Seg], message: String| IoError::Structure {
        location: cx.loc(path),
        message,
    };
    let Some(top) = root.as_object() else {
        return Err(structure(
            &[],
            format!("the top level must be a table, found {}", json_type(root)),
        ));
    };
    for k in top.keys() {
        if !TOP_LEVEL_KEYS.contains(&k.as_str()) {
            return Err(structure(
                &[key(k)],
                format!(
                    "unknown top-level key `{k}`; expected `simulation`, `nodes` or `elements`"
                ),
            ));
        }
    }

    // [simulation]
    let simulation = match top.get("simulation") {
        None => SimulationSettings::default(),
        Some(v) => {
            if !v.is_object() {
                return Err(structure(
                    &[key("simulation")],
                    format!("`simulation` must be a table, found {}", json_type(v)),
                ));
            }
            let settings: SimulationSettings = parse_entry(v, &Map::new()).map_err(|e| {
                let parameter = e.parameter.unwrap_or_else(|| "?".into());
                IoError::Simulation {
                    location: cx.loc(&[key("simulation"), key(&parameter)]),
                    parameter,
                    message: e.message,
                }
            })?;
            settings.validate().map_err(|e| IoError::Simulation {
                location: cx.loc(&[key("simulation"), key(e.parameter)]),
                parameter: e.parameter.to_string(),
                message: e.message,
            })?;
            settings
        }
    };

    // [[nodes]]
    let mut model = Model::new();
    let nodes = match top.get("nodes") {
        None => {
            return Err(structure(
                &[],
                "missing required key `nodes` (at least one [[nodes]] entry)".into(),
            ))
        }
        Some(Value::Array(a)) if a.is_empty() => {
            return Err(structure(
                &[key("nodes")],
                "`nodes` is empty; a model needs at least one node".into(),
            ))
        }
        Some(Value::Array(a)) => a,
        Some(v) => {
            return Err(structure(
                &[key("nodes")],
                format!("`nodes` must be an array of tables, found {}", json_type(v)),
            ))
        }
    };
    let mut node_skeleton = Map::new();
    node_skeleton.insert("name".into(), Value::from("_"));
    node_skeleton.insert("position".into(), serde_json::json!([0.0, 0.0, 0.0]));
    let mut node_first: HashMap<String, usize> = HashMap::new();
    for (i, v) in nodes.iter().enumerate() {
        let base = [key("nodes"), Seg::Index(i)];
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("#{}", i + 1));
        let node_err = |e: FieldError| {
            let mut path = base.to_vec();
            if let Some(p) = &e.parameter {
                path.push(key(p));
            }
            IoError::Node {
                location: cx.loc(&path),
                node: name.clone(),
                parameter: e.parameter,
                message: e.message,
            }
        };
        if !v.is_object() {
            return Err(node_err(FieldError {
                parameter: None,
                message: format!("a node entry must be a table, found {}", json_type(v)),
            }));
        }
        let entry: NodeEntry = parse_entry(v, &node_skeleton).map_err(node_err)?;
        if let Some(&first) = node_first.get(&entry.name) {
            return Err(IoError::Duplicate {
                location: cx.loc(&[key("nodes"), Seg::Index(i), key("name")]),
                what: "node",
                name: entry.name.clone(),
                first_line: cx.line(&[key("nodes"), Seg::Index(first), key("name")]),
            });
        }
        let def = entry.to_def().map_err(node_err)?;
        model.add_node(def).map_err(|e| {
            node_err(FieldError {
                parameter: None,
                message: e.to_string(),
            })
        })?;
        node_first.insert(entry.name, i);
    }

    // [[elements]]
    let elements = match top.get("elements") {
        None => &Vec::new(),
        Some(Value::Array(a)) => a,
        Some(v) => {
            return Err(structure(
                &[key("elements")],
                format!(
                    "`elements` must be an array of tables, found {}",
                    json_type(v)
                ),
            ))
        }
    };
    let mut defs = Vec::with_capacity(elements.len());
    let mut element_first: HashMap<String, usize> = HashMap::new();
    for (i, v) in elements.iter().enumerate() {
        let base = |rest: &[Seg]| {
            let mut p = vec![key("elements"), Seg::Index(i)];
            p.extend_from_slice(rest);
            p
        };
        let mut label = v
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("#{}", i + 1));
        let entry_err = |label: &str, parameter: &str, message: String| IoError::ElementEntry {
            location: cx.loc(&base(&[key(parameter)])),
            element: label.to_string(),
            parameter: parameter.to_string(),
            message,
        };
        let Some(obj) = v.as_object() else {
            return Err(IoError::Structure {
                location: cx.loc(&base(&[])),
                message: format!(
                    "element {label}: an element entry must be a table, found {}",
                    json_type(v)
                ),
            });
        };
        let required_str = |k: &str, label: &str| -> Result<String, IoError> {
            match obj.get(k) {
                None => Err(entry_err(label, k, "missing required key".into())),
                Some(Value::String(s)) if s.is_empty() => {
                    Err(entry_err(label, k, "must not be empty".into()))
                }
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(entry_err(
                    label,
                    k,
                    format!("must be a string, found {}", json_type(other)),
                )),
            }
        };
        let name = required_str("name", &label)?;
        label = name.clone();
        let type_name = required_str("type", &label)?;
        let node_names: Vec<String> = match obj.get("nodes") {
            None => return Err(entry_err(&label, "nodes", "missing required key".into())),
            Some(Value::Array(a)) => {
                let mut out = Vec::with_capacity(a.len());
                for item in a {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        other => {
                            return Err(entry_err(
                                &label,
                                "nodes",
                                format!(
                                    "must be an array of node names, found {} in it",
                                    json_type(other)
                                ),
                            ))
                        }
                    }
                }
                out
            }
            Some(other) => {
                return Err(entry_err(
                    &label,
                    "nodes",
                    format!("must be an array of node names, found {}", json_type(other)),
                ))
            }
        };
        if let Some(&first) = element_first.get(&name) {
            return Err(IoError::Duplicate {
                location: cx.loc(&base(&[key("name")])),
                what: "element",
                name,
                first_line: cx.line(&[key("elements"), Seg::Index(first), key("name")]),
            });
        }
        let element_err =
            |path: Vec<Seg>, parameter: Option<String>, source: BuildError| IoError::Element {
                location: cx.loc(&path),
                element: name.clone(),
                parameter,
                source: Box::new(source),
            };
        // Check the element type first so that an unknown type is reported as such.
        saltus_core::element_kind(&type_name, &name)
            .map_err(|e| element_err(base(&[key("type")]), Some("type".into()), e))?;
        for (j, node) in node_names.iter().enumerate() {
            if model.node_id(node).is_none() {
                return Err(element_err(
                    base(&[key("nodes"), Seg::Index(j)]),
                    Some("nodes".into()),
                    BuildError::UnknownNode {
                        element: name.clone(),
                        node: node.clone(),
                    },
                ));
            }
        }
        let parameters: Map<String, Value> = obj
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "name" | "type" | "nodes"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let def = ElementDef {
            name: name.clone(),
            type_name,
            nodes: node_names,
            parameters: Value::Object(parameters),
        };
        model.add_element_def(&def).map_err(|e| {
            let (rest, parameter) = build_error_position(&e, &def);
            element_err(base(&rest), parameter, e)
        })?;
        element_first.insert(name, i);
        defs.push(def);
    }
    Ok((simulation, model, defs))
}

/// Where inside an element entry a build error points, and which parameter it names.
fn build_error_position(e: &BuildError, def: &ElementDef) -> (Vec<Seg>, Option<String>) {
    let node_index = |node: &str| def.nodes.iter().position(|n| n == node);
    let param_key = |p: &str| -> Option<String> {
        let head = p.split(['.', '[']).next().unwrap_or(p);
        def.parameters
            .as_object()
            .is_some_and(|o| o.contains_key(head))
            .then(|| head.to_string())
    };
    match e {
        BuildError::UnknownType { .. } => (vec![key("type")], Some("type".into())),
        BuildError::UnknownNode { node, .. } | BuildError::NodeKind { node, .. } => {
            match node_index(node) {
                Some(j) => (vec![key("nodes"), Seg::Index(j)], Some("nodes".into())),
                None => (vec![key("nodes")], Some("nodes".into())),
            }
        }
        BuildError::NodeCount { .. } => (vec![key("nodes")], Some("nodes".into())),
        BuildError::Parameters { message, .. } => {
            let field = backticked(message);
            match field.as_deref().and_then(param_key) {
                Some(k) => (vec![key(&k)], Some(k)),
                None => (Vec::new(), field),
            }
        }
        BuildError::InvalidParameter { parameter, .. } => match param_key(parameter) {
            Some(k) => (vec![key(&k)], Some(parameter.clone())),
            None => (Vec::new(), Some(parameter.clone())),
        },
        BuildError::DuplicateName { .. } => (vec![key("name")], Some("name".into())),
        BuildError::InvalidNode { .. } | BuildError::Model(_) => (Vec::new(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_scanner_offsets() {
        let text = "{\n \"a\": [1, {\"b\\\"\": 2}],\n \"c\": \"x,}\" }";
        let mut s = JsonScanner {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        };
        let spans = s.value().unwrap();
        let cx = Cx {
            spans,
            ..Cx::new(text, "t.json")
        };
        assert_eq!(cx.line(&[key("a")]), Some(2));
        assert_eq!(cx.line(&[key("c")]), Some(3));
        let off = cx
            .spans
            .locate(&[key("a"), Seg::Index(1), key("b\"")])
            .unwrap();
        assert_eq!(&text[off..off + 5], "\"b\\\"\"");
    }

    #[test]
    fn backticked_field() {
        assert_eq!(
            backticked("unknown field `colour`, expected one of `name`"),
            Some("colour".into())
        );
        assert_eq!(backticked("no field"), None);
    }

    #[test]
    fn defaults_are_valid() {
        SimulationSettings::default().validate().unwrap();
    }
}
