//! From the parsed document to a [`Model`]: simulation settings, nodes, elements through the
//! registry, with located errors.

use super::composites::*;
use super::spans::*;
use super::*;

// ---------------------------------------------------------------------------------------------
// Building the model

/// A `[[nodes]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NodeEntry {
    pub(super) name: String,
    pub(super) position: [f64; 3],
    #[serde(default)]
    pub(super) rotation: Option<[f64; 4]>,
    #[serde(default)]
    pub(super) rotation_vector: Option<[f64; 3]>,
    #[serde(default)]
    pub(super) velocity: Option<[f64; 3]>,
    #[serde(default)]
    pub(super) angular_velocity: Option<[f64; 3]>,
    #[serde(default = "default_kind")]
    pub(super) kind: NodeKind,
    #[serde(default)]
    pub(super) fixed: bool,
    #[serde(default)]
    pub(super) prescribed: bool,
}

pub(super) fn default_kind() -> NodeKind {
    NodeKind::Frame
}

/// A problem with one key of an entry.
pub(super) struct FieldError {
    pub(super) parameter: Option<String>,
    pub(super) message: String,
}

pub(super) fn field_error(parameter: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        parameter: Some(parameter.to_string()),
        message: message.into(),
    }
}

impl NodeEntry {
    pub(super) fn to_def(&self) -> Result<NodeDef, FieldError> {
        if self.name.is_empty() {
            return Err(field_error("name", "must not be empty"));
        }
        let finite = |parameter: &str, v: &[f64]| {
            if !v.iter().all(|x| x.is_finite()) {
                Err(field_error(parameter, format!("must be finite, got {v:?}")))
            } else if !v.iter().map(|x| x * x).sum::<f64>().is_finite() {
                // Distances, kinetic energies and rotations of such a vector overflow.
                Err(field_error(
                    parameter,
                    format!("is too large: its squared norm overflows, got {v:?}"),
                ))
            } else {
                Ok(())
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
pub(super) fn parse_entry<T: DeserializeOwned>(
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

pub(super) use saltus_core::registry::{backticked, json_type};

/// Top-level keys besides the registered composite keys (`saltus_core::registry::CompositeKind`).
pub(super) const TOP_LEVEL_KEYS: [&str; 3] = ["simulation", "nodes", "elements"];

/// What [`build`] makes: settings, model, element definitions and where in the file each
/// element was defined (its `[[elements]]` entry or the composite entry that generated it).
pub(super) type Built = (
    SimulationSettings,
    Model,
    Vec<ElementDef>,
    HashMap<String, Vec<Seg>>,
);

pub(super) fn build(root: &Value, cx: &Cx) -> Result<Built, IoError> {
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
        if !TOP_LEVEL_KEYS.contains(&k.as_str()) && composite_kind(k).is_none() {
            let mut known: Vec<String> = TOP_LEVEL_KEYS.iter().map(|k| format!("`{k}`")).collect();
            known.extend(composite_kinds().iter().map(|c| format!("`{}`", c.key)));
            return Err(structure(
                &[key(k)],
                format!(
                    "unknown top-level key `{k}`; expected one of {} (composite keys such as \
                     `beam_lines` come with the element library)",
                    known.join(", ")
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

    // Composites ([[beam_lines]], ...): nodes and elements generated from one entry.
    let mut defs = Vec::new();
    // First definition line of every element name (generated elements: their entry's `name`
    // key).
    let mut element_first: HashMap<String, Option<u32>> = HashMap::new();
    let mut element_paths: HashMap<String, Vec<Seg>> = HashMap::new();
    for kind in composite_kinds() {
        if let Some(v) = top.get(kind.key) {
            expand_composites(
                kind,
                v,
                cx,
                &mut model,
                &mut defs,
                &mut element_first,
                &mut element_paths,
            )?;
        }
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
    defs.reserve(elements.len());
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
        if let Some(&first_line) = element_first.get(&name) {
            return Err(IoError::Duplicate {
                location: cx.loc(&base(&[key("name")])),
                what: "element",
                name,
                first_line,
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
        element_paths.insert(name.clone(), base(&[]));
        element_first.insert(name, cx.line(&base(&[key("name")])));
        defs.push(def);
    }
    Ok((simulation, model, defs, element_paths))
}

/// Where inside an element entry a build error points, and which parameter it names.
pub(super) fn build_error_position(e: &BuildError, def: &ElementDef) -> (Vec<Seg>, Option<String>) {
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
