//! Source locations: the span tree of a parsed TOML or JSON document, and the parsers that
//! build it, so every error names its file, line and key.

use super::*;

// ---------------------------------------------------------------------------------------------
// Source positions

/// One step of a path into the document.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

pub(super) fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// Byte offsets of the document's tables, keys and array items.
#[derive(Clone, Debug, Default)]
pub(super) enum SpanNode {
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
    pub(super) fn start(&self) -> Option<usize> {
        match self {
            SpanNode::Table { start, .. }
            | SpanNode::Array { start, .. }
            | SpanNode::Leaf { start } => Some(*start),
            SpanNode::None => None,
        }
    }

    /// Offset of the deepest element of `path` that can be found.
    pub(super) fn locate(&self, path: &[Seg]) -> Option<usize> {
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
pub(super) struct Cx {
    pub(super) file: String,
    pub(super) line_starts: Vec<usize>,
    pub(super) spans: SpanNode,
}

impl Cx {
    pub(super) fn new(text: &str, file: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self {
            file: file.to_string(),
            line_starts,
            spans: SpanNode::None,
        }
    }

    pub(super) fn line_of(&self, offset: usize) -> u32 {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        u32::try_from(line).unwrap_or(u32::MAX)
    }

    pub(super) fn at_offset(&self, text: &str, offset: usize) -> Location {
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

    pub(super) fn loc(&self, path: &[Seg]) -> Location {
        Location {
            file: self.file.clone(),
            line: self.spans.locate(path).map(|o| self.line_of(o)),
            column: None,
        }
    }

    pub(super) fn line(&self, path: &[Seg]) -> Option<u32> {
        self.spans.locate(path).map(|o| self.line_of(o))
    }
}

// ---------------------------------------------------------------------------------------------
// TOML

pub(super) fn parse_toml(text: &str, cx: &Cx) -> Result<(Value, SpanNode), IoError> {
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
pub(super) fn non_finite(root: &toml::Value, path: &[Seg], value: f64, cx: &Cx) -> IoError {
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
        [Seg::Key(s), Seg::Index(i), rest @ ..]
            if !rest.is_empty() && saltus_core::registry::composite_kind(s).is_some() =>
        {
            IoError::Composite {
                location,
                entry: format!(
                    "{} `{}`",
                    saltus_core::registry::composite_kind(s).map_or("entry", |k| k.label),
                    entry_name(s, *i)
                ),
                parameter: Some(path_string(rest)),
                message,
            }
        }
        _ => IoError::Structure {
            location,
            message: format!("`{}`: {message}", path_string(path)),
        },
    }
}

pub(super) fn de_table_spans(t: &toml::de::DeTable<'_>, start: usize) -> SpanNode {
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

pub(super) fn de_value_spans(v: &toml::de::DeValue<'_>, start: usize) -> SpanNode {
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
pub(super) fn toml_to_json(v: &toml::Value, path: &mut Vec<Seg>) -> Result<Value, f64> {
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

pub(super) fn path_string(path: &[Seg]) -> String {
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

pub(super) fn parse_json(text: &str, cx: &Cx) -> Result<(Value, SpanNode), IoError> {
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
        duplicate: None,
    };
    let spans = scanner.value().unwrap_or_default();
    // serde_json keeps the last of repeated keys silently; TOML refuses them, and so do we
    // (`"mass": 2.0, "mass": -2.0` is a mistake, whichever value was meant).
    if let Some((key, offset)) = scanner.duplicate {
        return Err(IoError::Syntax {
            location: cx.at_offset(text, offset),
            format: Format::Json,
            message: format!("duplicate key `{key}` in an object"),
        });
    }
    Ok((root, spans))
}

/// Minimal scanner recording the offsets of keys and items of a JSON text that `serde_json`
/// has already accepted, and the first key repeated within one object.
pub(super) struct JsonScanner<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    /// The first repeated key of an object and its offset.
    pub(super) duplicate: Option<(String, usize)>,
}

impl JsonScanner<'_> {
    pub(super) fn ws(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn string(&mut self) -> Option<String> {
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

    pub(super) fn value(&mut self) -> Option<SpanNode> {
        self.ws();
        let start = self.pos;
        match self.peek()? {
            b'{' => {
                self.pos += 1;
                let mut keys = Vec::new();
                let mut seen = std::collections::HashSet::new();
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
                    if !seen.insert(key.clone()) && self.duplicate.is_none() {
                        self.duplicate = Some((key.clone(), key_start));
                    }
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
