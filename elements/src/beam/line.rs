//! `[[beam_lines]]` of model files: a registered composite kind that meshes the straight line
//! between two existing frame nodes into `beam` elements — the nodes and elements of
//! [`BeamBuilder::line`], so a model file and a code-first model of the same line agree.
//!
//! Keys of an entry: `name` (prefix of the generated names `<name>_n1 … <name>_n{n−1}`,
//! `<name>_e1 … <name>_e{n}`), `from`, `to` (frame nodes), `elements` (`n`, 1 to
//! [`MAX_BEAM_LINE_ELEMENTS`]); every other key is a parameter of the generated `beam`
//! elements ([`BeamSpec`], `orientation` included).

use super::*;
use saltus_core::registry::{backticked, json_type, CompositeDef, CompositeError};
use serde_json::{Map, Value};

/// Largest number of elements of one beam line (a guard against typos allocating millions of
/// nodes).
pub const MAX_BEAM_LINE_ELEMENTS: u64 = 100_000;

/// Keys of a `[[beam_lines]]` entry that are not parameters of its `beam` elements.
const LINE_KEYS: [&str; 4] = ["name", "from", "to", "elements"];

/// The keys of a `[[beam_lines]]` entry, for `saltus elements beam_lines` only: the expansion
/// reads the entry itself (its own messages for the line keys, then [`BeamSpec`] for the
/// rest), and the unit test `line_keys_are_documented` ties this type to [`LINE_KEYS`], so the
/// beam keys come from the very type that parses them.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // never built: its schema is what counts
struct BeamLineEntry {
    /// Prefix of the generated names `<name>_n1 … <name>_n{n−1}`, `<name>_e1 … <name>_e{n}`.
    name: String,
    /// First end: an existing frame node.
    from: String,
    /// Second end: an existing frame node.
    to: String,
    /// Number of elements `n` \[-\] (1 to 10⁷).
    elements: u64,
    /// The parameters of every generated `beam` element.
    #[serde(flatten)]
    beam: BeamSpec,
}

/// Expand one `[[beam_lines]]` entry into `model` (module docs).
fn expand_beam_line(
    def: &CompositeDef,
    model: &mut Model,
) -> Result<Vec<ElementDef>, CompositeError> {
    let p = &def.parameters;
    let name = &def.name;
    let string = |k: &str| -> Result<String, CompositeError> {
        match p.get(k) {
            None => Err(CompositeError::at(k, "missing required key")),
            Some(Value::String(s)) if s.is_empty() => {
                Err(CompositeError::at(k, "must not be empty"))
            }
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(CompositeError::at(
                k,
                format!("must be a string, found {}", json_type(other)),
            )),
        }
    };
    let n = match p.get("elements") {
        None => {
            return Err(CompositeError::at(
                "elements",
                "missing required key (the number of elements)",
            ))
        }
        Some(v) => match v.as_u64() {
            Some(n) if (1..=MAX_BEAM_LINE_ELEMENTS).contains(&n) => n as usize,
            _ => {
                return Err(CompositeError::at(
                    "elements",
                    format!("must be an integer in [1, {MAX_BEAM_LINE_ELEMENTS}], got {v}"),
                ))
            }
        },
    };
    // End nodes: existing frame nodes.
    let mut ends = [NodeId(0); 2];
    let mut end_names = [String::new(), String::new()];
    for (k, which) in ["from", "to"].into_iter().enumerate() {
        let node = string(which)?;
        let Some(id) = model.node_id(&node) else {
            return Err(CompositeError::at(which, format!("unknown node `{node}`")));
        };
        if model.nodes()[id.index()].kind != NodeKind::Frame {
            return Err(CompositeError::at(
                which,
                format!("node `{node}` must be a frame node (beam nodes carry rotations)"),
            ));
        }
        ends[k] = id;
        end_names[k] = node;
    }
    let axis = model.nodes()[ends[1].index()].initial.x - model.nodes()[ends[0].index()].initial.x;
    if axis.norm() <= 0.0 {
        return Err(CompositeError::at(
            "to",
            format!(
                "the end nodes `{}` and `{}` coincide (a beam line needs a positive length)",
                end_names[0], end_names[1]
            ),
        ));
    }
    if let Some(o) = p.get("orientation") {
        let ok = serde_json::from_value::<[f64; 3]>(o.clone())
            .is_ok_and(|a| a.iter().all(|x| x.is_finite()) && a.iter().any(|x| *x != 0.0));
        if !ok {
            return Err(CompositeError::at(
                "orientation",
                format!("must be a finite, non-zero 3-vector, got {o}"),
            ));
        }
    }
    // Every other key: the parameters of the generated elements.
    let parameters: Map<String, Value> = p
        .iter()
        .filter(|(k, _)| !LINE_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let parameters = Value::Object(parameters);
    let in_entry = |key: &str| {
        let head = key.split(['.', '[']).next().unwrap_or(key);
        p.contains_key(head).then(|| head.to_string())
    };
    let spec: BeamSpec = serde_json::from_value(parameters.clone()).map_err(|e| {
        let message = e.to_string();
        let field = backticked(&message);
        CompositeError {
            parameter: field.as_deref().and_then(in_entry).or(field),
            message,
        }
    })?;
    let line = BeamBuilder::new(name.clone(), spec)
        .line(model, ends[0], ends[1], n)
        .map_err(|e| match e {
            BuildError::DuplicateName { what, name } => CompositeError::at(
                "name",
                format!("generated {what} name `{name}` is already used by another {what}"),
            ),
            BuildError::InvalidParameter {
                parameter, message, ..
            } => CompositeError {
                parameter: Some(in_entry(&parameter).unwrap_or(parameter)),
                message,
            },
            other => CompositeError {
                parameter: None,
                message: other.to_string(),
            },
        })?;
    let node_name = |id: NodeId| model.nodes()[id.index()].name.clone();
    Ok((0..n)
        .map(|k| ElementDef {
            name: format!("{name}_e{}", k + 1),
            type_name: TYPE_NAME.to_string(),
            nodes: vec![node_name(line.nodes[k]), node_name(line.nodes[k + 1])],
            parameters: parameters.clone(),
        })
        .collect())
}

saltus_core::register_composite! {
    key: "beam_lines",
    label: "beam line",
    summary: "A straight line between two frame nodes meshed into `beam` elements",
    expand: expand_beam_line,
    params: BeamLineEntry,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_keys_are_documented() {
        let docs = saltus_core::registry::param_docs::<BeamLineEntry>();
        let beam = saltus_core::registry::param_docs::<BeamSpec>();
        let mut keys: Vec<&str> = docs.iter().map(|d| d.key.as_str()).collect();
        keys.retain(|k| !beam.iter().any(|b| b.key == *k));
        keys.sort();
        let mut line = LINE_KEYS;
        line.sort();
        assert_eq!(keys, line);
        assert_eq!(docs.len(), LINE_KEYS.len() + beam.len());
        for key in LINE_KEYS {
            assert!(docs.iter().any(|d| d.key == key && d.required), "{key}");
        }
    }
}
