//! Element registry: every element type registers itself with [`register_element!`](crate::register_element)
//! (built on `inventory`), so a user crate can add element types without touching Saltus.
//!
//! The registry maps a type name (model-file tag) to a build function from serde parameters.

use crate::element::Element;
use crate::model::{BuildError, Model};
use crate::node::{NodeDef, NodeId, NodeKind};
use std::collections::HashMap;
use std::sync::OnceLock;

pub use inventory;
/// Re-exported for element crates deriving [`JsonSchema`](schemars::JsonSchema) on their
/// parameter spec types (a plugin can write `#[schemars(crate = "saltus::core::schemars")]`
/// instead of depending on schemars itself).
pub use schemars;

/// A model-file element entry: its name, registered type, node names and parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementDef {
    /// Unique element name (HDF5 `/elements/<name>`).
    pub name: String,
    /// Registered type name, e.g. `"revolute_joint"`.
    pub type_name: String,
    /// Node names in the element's local order.
    pub nodes: Vec<String>,
    /// Type-specific parameters (deserialized by the element's spec type).
    pub parameters: serde_json::Value,
}

/// What a build function can see of the model: node lookup by name.
pub struct BuildCx<'a> {
    /// Nodes defined so far.
    pub nodes: &'a [NodeDef],
    index: HashMap<&'a str, usize>,
}

impl<'a> BuildCx<'a> {
    /// A build context over `nodes`.
    pub fn new(nodes: &'a [NodeDef]) -> Self {
        let index = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        Self { nodes, index }
    }

    /// Resolve the element's node names, checking their number and kinds
    /// (`None` in `kinds` accepts any kind).
    pub fn resolve_nodes(
        &self,
        def: &ElementDef,
        kinds: &[Option<NodeKind>],
    ) -> Result<Vec<NodeId>, BuildError> {
        if def.nodes.len() != kinds.len() {
            return Err(BuildError::NodeCount {
                element: def.name.clone(),
                type_name: def.type_name.clone(),
                expected: kinds.len(),
                got: def.nodes.len(),
            });
        }
        let mut out = Vec::with_capacity(kinds.len());
        for (name, kind) in def.nodes.iter().zip(kinds) {
            let Some(&i) = self.index.get(name.as_str()) else {
                return Err(BuildError::UnknownNode {
                    element: def.name.clone(),
                    node: name.clone(),
                });
            };
            if let Some(k) = kind {
                if self.nodes[i].kind != *k {
                    return Err(BuildError::NodeKind {
                        element: def.name.clone(),
                        node: name.clone(),
                        expected: *k,
                    });
                }
            }
            out.push(NodeId(i as u32));
        }
        Ok(out)
    }
}

/// Build function of a registered element type.
pub type BuildFn = fn(&ElementDef, &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError>;

/// One registered element type.
pub struct ElementKind {
    /// Model-file tag: snake_case, unique.
    pub type_name: &'static str,
    /// One-line summary for `saltus elements`.
    pub summary: &'static str,
    /// Build the element from a model-file entry.
    pub build: BuildFn,
    /// A valid example parameter set (documentation and generic tests).
    pub example: fn() -> serde_json::Value,
    /// Node kinds of the example (one entry per element node).
    pub example_nodes: &'static [NodeKind],
    /// Every parameter key the build accepts, with unit, default and doc line (`None`: not
    /// documented; `saltus elements` then falls back to the example's keys). Computed from
    /// the serde spec type the build deserializes, see [`param_docs`].
    pub params: Option<fn() -> Vec<ParamDoc>>,
}

inventory::collect!(ElementKind);

/// Register an element type. Use once per type, next to its definition:
///
/// ```ignore
/// saltus_core::register_element! {
///     type_name: "point_mass",
///     summary: "Point mass with gravity",
///     build: build_point_mass,
///     example: || serde_json::json!({"mass": 1.0}),
///     example_nodes: &[saltus_core::NodeKind::Point],
///     params: PointMassSpec,
/// }
/// ```
///
/// `params` names the serde type the build deserializes its parameters into; it must derive
/// [`JsonSchema`](schemars::JsonSchema) and document every field with a `///` comment
/// stating its unit in brackets (see [`ParamDoc`]). It is optional so that registrations
/// written before it still compile; without it `saltus elements` lists the example's keys.
#[macro_export]
macro_rules! register_element {
    (type_name: $name:expr, summary: $summary:expr, build: $build:expr, example: $example:expr, example_nodes: $nodes:expr $(, params: $params:ty)? $(,)?) => {
        $crate::registry::inventory::submit! {
            $crate::registry::ElementKind {
                type_name: $name,
                summary: $summary,
                build: $build,
                example: $example,
                example_nodes: $nodes,
                params: $crate::param_docs_fn!($($params)?),
            }
        }
    };
}

/// `Some(param_docs::<T>)` for a given parameter type `T`, `None` without one (the optional
/// `params:` of [`register_element!`] and [`register_composite!`]).
#[doc(hidden)]
#[macro_export]
macro_rules! param_docs_fn {
    () => {
        ::core::option::Option::None
    };
    ($params:ty) => {
        ::core::option::Option::Some($crate::registry::param_docs::<$params>)
    };
}

/// One parameter key of an element type (or composite kind), as `saltus elements` lists it.
///
/// Computed by [`param_docs`] from the JSON schema of the serde spec type, so key names,
/// required/optional and defaults are those of the parser itself; unit and doc come from the
/// field's doc comment. Convention for that comment: one sentence or more, the unit in
/// brackets where it first applies, e.g. `/// Mass \[kg\], > 0.`, `\[-\]` for a
/// dimensionless number (rustdoc needs the brackets escaped; both forms are read).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDoc {
    /// Model-file key, as serde reads it (renames applied, flattened fields included).
    pub key: String,
    /// Unit from the first bracket of the doc comment outside backticks, e.g. `"kg"`, `"-"`
    /// (`None`: the comment states none, e.g. for a boolean or a name).
    pub unit: Option<String>,
    /// Value serde takes when the key is absent (`None`: required, or optional without a
    /// stated value, e.g. an `Option` whose absence the element resolves as its doc says).
    pub default: Option<serde_json::Value>,
    /// The key must be given.
    pub required: bool,
    /// The value expected, in words: `number`, `boolean`, `string`, `table`, `[number; 3]`
    /// (a fixed-length array), alternatives joined by ` or `.
    pub value: String,
    /// The doc comment on one line, without the unit bracket.
    pub doc: String,
}

impl ParamDoc {
    /// `required`, `default = <value>` or `optional`, for listings.
    pub fn status(&self) -> String {
        match (&self.default, self.required) {
            (_, true) => "required".to_string(),
            (Some(v), false) => format!("default = {v}"),
            (None, false) => "optional".to_string(),
        }
    }
}

/// The documented keys of the serde parameter type `T`, required keys first, each group in
/// case-insensitive alphabetical order (schema properties carry no declaration order unless
/// serde_json's `preserve_order` is on, which would change map order crate-wide): one
/// [`ParamDoc`] per property of `T`'s JSON schema (see [`ParamDoc`] for what each field is
/// computed from).
pub fn param_docs<T: schemars::JsonSchema>() -> Vec<ParamDoc> {
    param_docs_of(&schemars::SchemaGenerator::default().into_root_schema_for::<T>())
}

/// [`param_docs`] of an object schema already generated (its `properties` and `required`).
pub fn param_docs_of(schema: &schemars::Schema) -> Vec<ParamDoc> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|k| k.as_str()).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    let mut docs: Vec<ParamDoc> = props
        .iter()
        .map(|(key, prop)| {
            let description = prop
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or_default();
            let (unit, doc) = split_unit(description);
            ParamDoc {
                value: value_words(schema, prop, 0),
                key: key.clone(),
                unit,
                // A `null` default is an absent `Option`: listed as `optional`.
                default: prop.get("default").filter(|d| !d.is_null()).cloned(),
                required: required.contains(&key.as_str()),
                doc,
            }
        })
        .collect();
    docs.sort_by_key(|d| (!d.required, d.key.to_lowercase()));
    docs
}

/// The value a property schema `prop` of `root` describes, in words ([`ParamDoc::value`]);
/// `null` alternatives (an `Option`'s absence) are left out.
fn value_words(root: &schemars::Schema, prop: &serde_json::Value, depth: usize) -> String {
    use serde_json::Value;
    let words = |v: &Value| value_words(root, v, depth + 1);
    if depth > 8 {
        return "value".to_string();
    }
    if let Some(r) = prop.get("$ref").and_then(Value::as_str) {
        // `#/$defs/Name`: the definition, resolved in the root schema.
        let target = r.strip_prefix('#').and_then(|p| root.pointer(p));
        return target.map_or_else(|| "value".to_string(), words);
    }
    for alternatives in ["anyOf", "oneOf"] {
        if let Some(list) = prop.get(alternatives).and_then(Value::as_array) {
            let parts: Vec<String> = list
                .iter()
                .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                .map(words)
                .collect();
            return parts.join(" or ");
        }
    }
    let types: Vec<&str> = match prop.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let parts: Vec<String> = types
        .iter()
        .filter(|t| **t != "null")
        .map(|t| match *t {
            "array" => {
                let item = prop.get("items").map_or_else(|| "value".to_string(), words);
                let min = prop.get("minItems").and_then(Value::as_u64);
                let max = prop.get("maxItems").and_then(Value::as_u64);
                match (min, max) {
                    (Some(a), Some(b)) if a == b => format!("[{item}; {a}]"),
                    _ => format!("[{item}, ...]"),
                }
            }
            "object" => "table".to_string(),
            "integer" => "integer".to_string(),
            other => other.to_string(),
        })
        .collect();
    if parts.is_empty() {
        "value".to_string()
    } else {
        parts.join(" or ")
    }
}

/// Split a doc comment into its unit (first `[...]` outside backticks, escaped or not) and
/// the text on one line without that bracket and without rustdoc escapes.
pub fn split_unit(description: &str) -> (Option<String>, String) {
    let text = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = text.replace("\\[", "[").replace("\\]", "]");
    let mut in_code = false;
    let mut open = None;
    for (i, c) in text.char_indices() {
        match c {
            '`' => in_code = !in_code,
            '[' if !in_code && open.is_none() => open = Some(i),
            // A bracket with a comma is a vector (`[x, y, z]`), one with a backtick a rustdoc
            // link (`` [`Type`] ``): not units, look further.
            ']' if !in_code && open.is_some_and(|start| text[start..i].contains([',', '`'])) => {
                open = None;
            }
            ']' if !in_code => {
                if let Some(start) = open {
                    let unit = text[start + 1..i].trim().to_string();
                    let before = text[..start].trim_end();
                    let after = &text[i + 1..];
                    let joined = if after.starts_with([',', '.', ';', ')', ':']) || after.is_empty()
                    {
                        format!("{before}{after}")
                    } else {
                        format!("{before} {}", after.trim_start())
                    };
                    return (Some(unit), joined);
                }
            }
            _ => {}
        }
    }
    (None, text)
}

/// All registered element types, sorted by name (computed once).
///
/// A duplicate type name is reported by [`check_registry`]; lookups take the first.
pub fn element_kinds() -> &'static [&'static ElementKind] {
    static KINDS: OnceLock<Vec<&'static ElementKind>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let mut v: Vec<&'static ElementKind> = inventory::iter::<ElementKind>.into_iter().collect();
        v.sort_by_key(|k| k.type_name);
        v
    })
}

/// Registered type names, sorted.
pub fn element_type_names() -> Vec<&'static str> {
    element_kinds().iter().map(|k| k.type_name).collect()
}

/// A composite model-file entry: one table of a top-level array such as `[[beam_lines]]`,
/// which a registered [`CompositeKind`] expands into nodes and elements of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositeDef {
    /// Entry name, unique within its key; prefixes the generated node and element names.
    pub name: String,
    /// The entry's keys, `name` included.
    pub parameters: serde_json::Map<String, serde_json::Value>,
}

/// Why a composite entry cannot be expanded: the offending key of the entry, if one is to
/// blame, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CompositeError {
    /// Key of the entry to blame (`None`: the entry as a whole).
    pub parameter: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl CompositeError {
    /// An error blaming the key `parameter` of the entry.
    pub fn at(parameter: &str, message: impl Into<String>) -> Self {
        Self {
            parameter: Some(parameter.to_string()),
            message: message.into(),
        }
    }
}

/// Expand a composite entry into `model` (new nodes, then elements through the registry) and
/// return the definitions of the elements it added, in order.
pub type ExpandFn = fn(&CompositeDef, &mut Model) -> Result<Vec<ElementDef>, CompositeError>;

/// One registered composite kind: a top-level model-file key whose entries expand into nodes
/// and elements (e.g. `beam_lines`: a straight line meshed into beam elements). Model files
/// expand composites after `[[nodes]]` and before `[[elements]]`, keys in alphabetical order.
pub struct CompositeKind {
    /// Top-level model-file key (snake_case, plural), e.g. `"beam_lines"`.
    pub key: &'static str,
    /// What one entry is called in messages, e.g. `"beam line"`.
    pub label: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// The expansion.
    pub expand: ExpandFn,
    /// Every key of an entry, with unit, default and doc line (`None`: not documented), see
    /// [`ElementKind::params`].
    pub params: Option<fn() -> Vec<ParamDoc>>,
}

inventory::collect!(CompositeKind);

/// Register a composite kind (see [`CompositeKind`]), next to the elements it generates:
///
/// ```ignore
/// saltus_core::register_composite! {
///     key: "beam_lines",
///     label: "beam line",
///     summary: "A straight line between two frame nodes meshed into beam elements",
///     expand: expand_beam_line,
///     params: BeamLineSpec,
/// }
/// ```
///
/// `params` (optional) is the serde type of one entry, as for [`register_element!`](crate::register_element).
#[macro_export]
macro_rules! register_composite {
    (key: $key:expr, label: $label:expr, summary: $summary:expr, expand: $expand:expr $(, params: $params:ty)? $(,)?) => {
        $crate::registry::inventory::submit! {
            $crate::registry::CompositeKind {
                key: $key,
                label: $label,
                summary: $summary,
                expand: $expand,
                params: $crate::param_docs_fn!($($params)?),
            }
        }
    };
}

/// All registered composite kinds, sorted by key (computed once).
pub fn composite_kinds() -> &'static [&'static CompositeKind] {
    static KINDS: OnceLock<Vec<&'static CompositeKind>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let mut v: Vec<&'static CompositeKind> =
            inventory::iter::<CompositeKind>.into_iter().collect();
        v.sort_by_key(|k| k.key);
        v
    })
}

/// The registered composite kind of model-file key `key`.
pub fn composite_kind(key: &str) -> Option<&'static CompositeKind> {
    composite_kinds().iter().copied().find(|k| k.key == key)
}

/// Error if two registrations share a type name (or a composite key).
pub fn check_registry() -> Result<(), String> {
    let kinds = element_kinds();
    for w in kinds.windows(2) {
        if w[0].type_name == w[1].type_name {
            return Err(format!(
                "element type `{}` is registered twice",
                w[0].type_name
            ));
        }
    }
    for w in composite_kinds().windows(2) {
        if w[0].key == w[1].key {
            return Err(format!(
                "composite model-file key `{}` is registered twice",
                w[0].key
            ));
        }
    }
    Ok(())
}

/// Look up a registered type by name; the error lists the registered names.
pub fn element_kind(type_name: &str, element: &str) -> Result<&'static ElementKind, BuildError> {
    element_kinds()
        .iter()
        .copied()
        .find(|k| k.type_name == type_name)
        .ok_or_else(|| BuildError::UnknownType {
            element: element.to_string(),
            type_name: type_name.to_string(),
            known: element_type_names().iter().map(|s| s.to_string()).collect(),
        })
}

/// Deserialize an element's parameters into its spec type, naming the element and (through
/// [`name_offending_key`]) the parameter on error.
pub fn parse_params<T: serde::de::DeserializeOwned>(def: &ElementDef) -> Result<T, BuildError> {
    serde_json::from_value(def.parameters.clone()).map_err(|e| BuildError::Parameters {
        element: def.name.clone(),
        type_name: def.type_name.clone(),
        message: name_offending_key::<T>(&def.parameters, e.to_string()),
    })
}

/// A serde error `message` from deserializing the table `params` into `T`, prefixed with
/// `` parameter `key`: `` when it does not name the offending key itself.
///
/// serde's type errors (`invalid type: string "2.0", expected f64`, `invalid length 2`, an
/// integer out of range) do not name the field. The key is found again by deserializing the
/// same table written as JSON text with one top-level key per line: the error's line is the
/// key's. Messages that already name a key of the table (`unknown field`, `missing field`)
/// are returned as they are.
pub fn name_offending_key<T: serde::de::DeserializeOwned>(
    params: &serde_json::Value,
    message: String,
) -> String {
    let Some(obj) = params.as_object() else {
        return message;
    };
    if message.starts_with("missing field") || message.starts_with("unknown field") {
        return message;
    }
    if backticked(&message).is_some_and(|k| obj.contains_key(&k)) {
        return message;
    }
    let mut text = String::from("{\n");
    let mut keys = Vec::with_capacity(obj.len());
    for (i, (k, v)) in obj.iter().enumerate() {
        if i > 0 {
            text.push_str(",\n");
        }
        let (Ok(k_text), Ok(v_text)) = (serde_json::to_string(k), serde_json::to_string(v)) else {
            return message;
        };
        text.push_str(&k_text);
        text.push(':');
        text.push_str(&v_text);
        keys.push(k);
    }
    text.push_str("\n}");
    match serde_json::from_str::<T>(&text) {
        Err(e) => match e.line().checked_sub(2).and_then(|i| keys.get(i)) {
            Some(k) => format!("parameter `{k}`: {message}"),
            None => message,
        },
        Ok(_) => message,
    }
}

/// The first `` `name` `` of a message: the field a serde error complains about.
pub fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

/// The kind of a model-file value in words (`"a number"`, `"a table"`, ...), for messages.
pub fn json_type(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// An [`BuildError::InvalidParameter`] for `parameter` of `element` (its name, or
/// `<type_name>` for an element built in code).
pub fn invalid(element: &str, parameter: &str, message: impl Into<String>) -> BuildError {
    BuildError::InvalidParameter {
        element: element.to_string(),
        parameter: parameter.to_string(),
        message: message.into(),
    }
}

/// Check that a parameter is finite and strictly positive, and not subnormal (a value below
/// `f64::MIN_POSITIVE` ≈ 2.2e-308 is a unit or typing error; its products underflow to 0).
pub fn check_positive(element: &str, parameter: &str, value: f64) -> Result<f64, BuildError> {
    if value.is_normal() && value > 0.0 {
        Ok(value)
    } else if value > 0.0 && value.is_finite() {
        Err(invalid(
            element,
            parameter,
            format!(
                "must be > 0 and not subnormal (at least {:e}), got {value:e}",
                f64::MIN_POSITIVE
            ),
        ))
    } else {
        Err(invalid(
            element,
            parameter,
            format!("must be finite and > 0, got {value}"),
        ))
    }
}

/// Check that a parameter is finite and non-negative.
pub fn check_non_negative(element: &str, parameter: &str, value: f64) -> Result<f64, BuildError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(invalid(
            element,
            parameter,
            format!("must be finite and >= 0, got {value}"),
        ))
    }
}

/// Check that every value of a parameter is finite.
pub fn check_finite(element: &str, parameter: &str, values: &[f64]) -> Result<(), BuildError> {
    if values.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(invalid(
            element,
            parameter,
            format!("must be finite, got {values:?}"),
        ))
    }
}

/// [`check_positive`] for a model-file entry.
pub fn require_positive(def: &ElementDef, parameter: &str, value: f64) -> Result<(), BuildError> {
    check_positive(&def.name, parameter, value).map(|_| ())
}

/// [`check_non_negative`] for a model-file entry.
pub fn require_non_negative(
    def: &ElementDef,
    parameter: &str,
    value: f64,
) -> Result<(), BuildError> {
    check_non_negative(&def.name, parameter, value).map(|_| ())
}

/// [`check_finite`] for a model-file entry.
pub fn require_finite(def: &ElementDef, parameter: &str, values: &[f64]) -> Result<(), BuildError> {
    check_finite(&def.name, parameter, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_is_the_first_bracket_outside_code_and_vectors() {
        assert_eq!(
            split_unit("Mass `m` \\[kg\\], finite\n and > 0."),
            (Some("kg".into()), "Mass `m`, finite and > 0.".into())
        );
        assert_eq!(
            split_unit("Axis `[0, 0, 1]` or [1, 0, 0] in [-] units [m]"),
            (
                Some("-".into()),
                "Axis `[0, 0, 1]` or [1, 0, 0] in units [m]".into()
            )
        );
        assert_eq!(split_unit("A name."), (None, "A name.".into()));
        assert_eq!(
            split_unit("Rate of [`Law::decay`] [s/m]."),
            (Some("s/m".into()), "Rate of [`Law::decay`].".into())
        );
    }

    /// A spec type documented the way element crates do it.
    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Spec {
        /// Stiffness \[N/m\].
        #[serde(rename = "K")]
        k: f64,
        /// Damping \[N s/m\].
        #[serde(default)]
        c: f64,
        /// Anchor \[m\].
        #[serde(default)]
        anchor: Option<[f64; 3]>,
        /// Flag.
        #[serde(default = "yes")]
        flag: bool,
    }

    fn yes() -> bool {
        true
    }

    #[test]
    fn param_docs_follow_serde() {
        let docs = param_docs::<Spec>();
        let keys: Vec<&str> = docs.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["K", "anchor", "c", "flag"]);
        assert!(docs[0].required && docs[0].default.is_none());
        assert_eq!(docs[0].unit.as_deref(), Some("N/m"));
        assert_eq!(docs[0].doc, "Stiffness.");
        assert_eq!(docs[1].status(), "optional");
        assert_eq!(docs[2].status(), "default = 0.0");
        assert_eq!(docs[3].status(), "default = true");
        assert_eq!(docs[3].unit, None);
        let values: Vec<&str> = docs.iter().map(|d| d.value.as_str()).collect();
        assert_eq!(values, ["number", "[number; 3]", "number", "boolean"]);
    }
}
