//! Model files: TOML and JSON happy paths and one test per rejection.
//!
//! The element registry of this test binary only holds the two test elements defined here
//! (the real elements live in `saltus-elements`).

use nalgebra::{UnitQuaternion, Vector3};
use saltus_core::registry::{parse_params, require_positive};
use saltus_core::{BuildCx, BuildError, Element, ElementDef, Levels, NodeId, NodeKind};
use saltus_io::{load_model, parse_str, Format, IoError, SimulationSettings};
use serde::Deserialize;

// ---------------------------------------------------------------------------------------------
// Test elements

/// A mass on one node that contributes nothing but `mass()`.
#[derive(Debug)]
struct TestMass {
    nodes: Vec<NodeId>,
    mass: f64,
}

impl Element for TestMass {
    fn type_name(&self) -> &'static str {
        "test_mass"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn levels(&self) -> Levels {
        Levels::ALL
    }
    fn mass(&self) -> f64 {
        self.mass
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestMassSpec {
    mass: f64,
}

fn build_test_mass(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let nodes = cx.resolve_nodes(def, &[None])?;
    let spec: TestMassSpec = parse_params(def)?;
    require_positive(def, "mass", spec.mass)?;
    Ok(Box::new(TestMass {
        nodes,
        mass: spec.mass,
    }))
}

saltus_core::register_element! {
    type_name: "test_mass",
    summary: "test: mass without dynamics",
    build: build_test_mass,
    example: || serde_json::json!({"mass": 1.0}),
    example_nodes: &[NodeKind::Frame],
}

/// A two-node link between frame nodes with a positive length (no contribution).
#[derive(Debug)]
struct TestLink {
    nodes: Vec<NodeId>,
}

impl Element for TestLink {
    fn type_name(&self) -> &'static str {
        "test_link"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn levels(&self) -> Levels {
        Levels::NONE
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestLinkSpec {
    length: f64,
    #[serde(default)]
    #[allow(dead_code)]
    axis: Option<[f64; 3]>,
}

fn build_test_link(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let nodes = cx.resolve_nodes(def, &[Some(NodeKind::Frame), Some(NodeKind::Frame)])?;
    let spec: TestLinkSpec = parse_params(def)?;
    require_positive(def, "length", spec.length)?;
    Ok(Box::new(TestLink { nodes }))
}

saltus_core::register_element! {
    type_name: "test_link",
    summary: "test: two-node link",
    build: build_test_link,
    example: || serde_json::json!({"length": 1.0}),
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
}

// ---------------------------------------------------------------------------------------------
// Helpers

const TOML_MODEL: &str = r#"# test model
[simulation]
t_end = 2.0
h = 5e-4
rho_inf = 0.9
tol = 1e-9
gravity = [0, -9.81, 0]
output = "out.h5"
max_iterations = 20
adaptive = true
output_every = 10
jacobian_reuse = 0.4

[[nodes]]
name = "ground"
position = [0, 0, 0]
fixed = true

[[nodes]]
name = "crank"
position = [0.1, 0, 0]
rotation_vector = [0, 0, 1.5707963267948966]
velocity = [0, 0.2, 0]
angular_velocity = [0, 0, 2]

[[nodes]]
name = "tip"
position = [0.2, 0, 0]
kind = "point"

[[elements]]
type = "test_mass"
name = "crank_mass"
nodes = ["crank"]
mass = 2.5

[[elements]]
type = "test_link"
name = "hinge"
nodes = ["ground", "crank"]
length = 0.1
axis = [0, 0, 1]
"#;

const JSON_MODEL: &str = r#"{
  "simulation": {
    "t_end": 2.0, "h": 5e-4, "rho_inf": 0.9, "tol": 1e-9, "gravity": [0, -9.81, 0],
    "output": "out.h5", "max_iterations": 20, "adaptive": true, "output_every": 10,
    "jacobian_reuse": 0.4
  },
  "nodes": [
    { "name": "ground", "position": [0, 0, 0], "fixed": true },
    { "name": "crank", "position": [0.1, 0, 0], "rotation_vector": [0, 0, 1.5707963267948966],
      "velocity": [0, 0.2, 0], "angular_velocity": [0, 0, 2] },
    { "name": "tip", "position": [0.2, 0, 0], "kind": "point" }
  ],
  "elements": [
    { "type": "test_mass", "name": "crank_mass", "nodes": ["crank"], "mass": 2.5 },
    { "type": "test_link", "name": "hinge", "nodes": ["ground", "crank"], "length": 0.1,
      "axis": [0, 0, 1] }
  ]
}"#;

/// Two nodes and one element: the base of the rejection tests.
const BASE: &str = r#"[[nodes]]
name = "ground"
position = [0, 0, 0]
fixed = true

[[nodes]]
name = "crank"
position = [0.1, 0, 0]

[[elements]]
type = "test_mass"
name = "crank_mass"
nodes = ["crank"]
mass = 2.5
"#;

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in text"))
        + 1
}

/// Parse TOML that must fail; returns the message.
fn toml_err(text: &str) -> String {
    match parse_str(text, Format::Toml, "model.toml") {
        Ok(_) => panic!("expected an error for\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn json_err(text: &str) -> String {
    match parse_str(text, Format::Json, "model.json") {
        Ok(_) => panic!("expected an error for\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Assert `msg` contains every needle.
#[track_caller]
fn assert_has(msg: &str, needles: &[&str]) {
    for n in needles {
        assert!(msg.contains(n), "message `{msg}` does not contain `{n}`");
    }
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("saltus_io_model_file");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

// ---------------------------------------------------------------------------------------------
// Happy paths

fn check_model(mf: &saltus_io::ModelFile) {
    let s = &mf.simulation;
    assert_eq!(s.t_end, 2.0);
    assert_eq!(s.h, 5e-4);
    assert_eq!(s.rho_inf, 0.9);
    assert_eq!(s.tol, 1e-9);
    assert_eq!(s.gravity, [0.0, -9.81, 0.0]);
    assert_eq!(s.output.as_deref(), Some(std::path::Path::new("out.h5")));
    assert_eq!(s.max_iterations, 20);
    assert!(s.adaptive);
    assert_eq!(s.output_every, 10);
    assert_eq!(s.jacobian_reuse, 0.4);

    let nodes = mf.model.nodes();
    assert_eq!(nodes.len(), 3);
    assert_eq!(nodes[0].name, "ground");
    assert!(nodes[0].fixed);
    assert_eq!(nodes[0].kind, NodeKind::Frame);
    let crank = &nodes[1];
    assert!(!crank.fixed);
    assert_eq!(crank.initial.x, Vector3::new(0.1, 0.0, 0.0));
    let r = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, 0.0, std::f64::consts::FRAC_PI_2));
    assert!(crank.initial.r.angle_to(&r) < 1e-14);
    assert_eq!(crank.initial.v, Vector3::new(0.0, 0.2, 0.0));
    // angular velocity given in the inertial frame, stored material: Ω = Rᵀ ω
    assert!((crank.initial.omega_spatial() - Vector3::new(0.0, 0.0, 2.0)).norm() < 1e-14);
    assert_eq!(nodes[2].kind, NodeKind::Point);

    assert_eq!(mf.model.element_names(), &["crank_mass", "hinge"]);
    assert_eq!(mf.model.elements()[0].mass(), 2.5);
    assert_eq!(mf.model.elements()[1].nodes(), &[NodeId(0), NodeId(1)]);
    assert_eq!(mf.elements.len(), 2);
    assert_eq!(mf.elements[1].type_name, "test_link");
    assert_eq!(mf.elements[1].nodes, vec!["ground", "crank"]);
    assert_eq!(
        mf.elements[1].parameters,
        serde_json::json!({"length": 0.1, "axis": [0, 0, 1]})
    );
}

#[test]
fn toml_happy_path() {
    let mf = parse_str(TOML_MODEL, Format::Toml, "model.toml").unwrap();
    check_model(&mf);
    assert_eq!(mf.text, TOML_MODEL);
    assert_eq!(mf.format, Format::Toml);
}

#[test]
fn json_happy_path() {
    let mf = parse_str(JSON_MODEL, Format::Json, "model.json").unwrap();
    check_model(&mf);
    assert_eq!(mf.text, JSON_MODEL);
    // Same model as the TOML file.
    let toml = parse_str(TOML_MODEL, Format::Toml, "model.toml").unwrap();
    assert_eq!(mf.model.nodes(), toml.model.nodes());
    assert_eq!(mf.simulation, toml.simulation);
    assert_eq!(mf.elements, toml.elements);
}

#[test]
fn load_model_from_files() {
    let t = tmp("model.toml");
    std::fs::write(&t, TOML_MODEL).unwrap();
    let mf = load_model(&t).unwrap();
    check_model(&mf);
    assert_eq!(mf.source_name, t.display().to_string());

    let j = tmp("model.JSON");
    std::fs::write(&j, JSON_MODEL).unwrap();
    check_model(&load_model(&j).unwrap());

    let y = tmp("model.yaml");
    std::fs::write(&y, "").unwrap();
    let e = load_model(&y).unwrap_err();
    assert!(matches!(e, IoError::UnknownFormat { .. }));
    assert_has(&e.to_string(), &["model.yaml", ".toml"]);

    let missing = tmp("does_not_exist.toml");
    let e = load_model(&missing).unwrap_err();
    assert!(matches!(e, IoError::Read { .. }));
    assert_has(&e.to_string(), &["does_not_exist.toml"]);
}

#[test]
fn simulation_defaults() {
    let mf = parse_str(BASE, Format::Toml, "model.toml").unwrap();
    assert_eq!(mf.simulation, SimulationSettings::default());
    let d = SimulationSettings::default();
    assert_eq!(
        (
            d.t_end,
            d.h,
            d.rho_inf,
            d.tol,
            d.max_iterations,
            d.output_every
        ),
        (1.0, 1e-3, 0.8, 1e-8, 50, 1)
    );
    assert_eq!(d.gravity, [0.0, 0.0, -9.81]);
    assert!(!d.adaptive && d.output.is_none());
    // A node without rotation/velocity keys: identity, at rest, frame.
    let n = &mf.model.nodes()[1];
    assert_eq!(n.initial.r, UnitQuaternion::identity());
    assert_eq!(n.initial.v, Vector3::zeros());
    assert_eq!(n.kind, NodeKind::Frame);
}

#[test]
fn rotation_quaternion_is_normalized_within_tolerance() {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let text = BASE.replace(
        "position = [0.1, 0, 0]",
        &format!(
            "position = [0.1, 0, 0]\nrotation = [{}, 0, 0, {}]",
            h * (1.0 + 4e-7),
            h
        ),
    );
    let mf = parse_str(&text, Format::Toml, "model.toml").unwrap();
    let q = mf.model.nodes()[1].initial.r;
    assert!((q.quaternion().norm() - 1.0).abs() < 1e-15);
    // The normalized quaternion (w, z) ∝ (1 + 4e-7, 1) turns by 2 atan(1/(1 + 4e-7)).
    assert!((q.angle() - 2.0 * (1.0 / (1.0 + 4e-7f64)).atan()).abs() < 1e-14);
}

// ---------------------------------------------------------------------------------------------
// Rejections

#[test]
fn rejects_toml_syntax_error() {
    // unterminated string
    let text = BASE.replace("name = \"crank\"", "name = \"crank");
    let msg = toml_err(&text);
    let line = line_of(&text, "name = \"crank");
    assert_has(
        &msg,
        &[&format!("model.toml:{line}:14:"), "TOML syntax error"],
    );
    // key without value
    let text = BASE.replace("fixed = true", "fixed =");
    let msg = toml_err(&text);
    let line = line_of(&text, "fixed =");
    assert_has(&msg, &[&format!("model.toml:{line}:"), "TOML syntax error"]);
}

#[test]
fn rejects_json_syntax_error() {
    let text = "{\n  \"nodes\": [\n    { \"name\": \"a\" \"position\": [0, 0, 0] }\n  ]\n}";
    let msg = json_err(text);
    assert_has(&msg, &["model.json:3:", "JSON syntax error", "expected"]);
}

#[test]
fn rejects_unknown_element_type() {
    let text = BASE.replace("type = \"test_mass\"", "type = \"revolut_joint\"");
    let msg = toml_err(&text);
    let line = line_of(&text, "revolut_joint");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `crank_mass`",
            "unknown type `revolut_joint`",
            "test_link",
            "test_mass",
        ],
    );
}

#[test]
fn rejects_unknown_node() {
    let text = BASE.replace("nodes = [\"crank\"]", "nodes = [\"crankk\"]");
    let msg = toml_err(&text);
    let line = line_of(&text, "crankk");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `crank_mass`",
            "unknown node `crankk`",
        ],
    );
}

#[test]
fn rejects_unknown_node_in_json_with_line() {
    let text = JSON_MODEL.replace(
        "\"nodes\": [\"ground\", \"crank\"]",
        "\"nodes\": [\"ground\", \"crane\"]",
    );
    let msg = json_err(&text);
    let line = line_of(&text, "crane");
    assert_has(
        &msg,
        &[
            &format!("model.json:{line}:"),
            "element `hinge`",
            "unknown node `crane`",
        ],
    );
}

#[test]
fn rejects_duplicate_node_name() {
    let text = format!("{BASE}\n[[nodes]]\nname = \"crank\"\nposition = [1, 2, 3]\n");
    let msg = toml_err(&text);
    let first = line_of(&text, "name = \"crank\"");
    let second = text.lines().count() - 1;
    assert_has(
        &msg,
        &[
            &format!("model.toml:{second}:"),
            "duplicate node name `crank`",
            &format!("first defined at line {first}"),
        ],
    );
}

#[test]
fn rejects_duplicate_element_name() {
    let text = format!(
        "{BASE}\n[[elements]]\ntype = \"test_mass\"\nname = \"crank_mass\"\nnodes = [\"ground\"]\nmass = 1.0\n"
    );
    let msg = toml_err(&text);
    let first = line_of(&text, "name = \"crank_mass\"");
    let second = text.lines().count() - 2;
    assert_has(
        &msg,
        &[
            &format!("model.toml:{second}:"),
            "duplicate element name `crank_mass`",
            &format!("first defined at line {first}"),
        ],
    );
}

#[test]
fn rejects_invalid_simulation_numbers() {
    for (setting, parameter, expect) in [
        ("h = 0.0", "h", "must be finite and > 0"),
        ("h = -1e-3", "h", "must be finite and > 0"),
        ("t_end = -2.0", "t_end", "must be finite and > 0"),
        ("rho_inf = 1.5", "rho_inf", "must be in [0, 1]"),
        ("rho_inf = -0.1", "rho_inf", "must be in [0, 1]"),
        ("tol = 0.0", "tol", "must be finite and > 0"),
        ("max_iterations = 0", "max_iterations", "must be >= 1"),
        ("output_every = 0", "output_every", "must be >= 1"),
        (
            "jacobian_reuse = 1.0",
            "jacobian_reuse",
            "must be in [0, 1)",
        ),
        (
            "jacobian_reuse = -0.5",
            "jacobian_reuse",
            "must be in [0, 1)",
        ),
        (
            "gravity = [0, 0, inf]",
            "gravity[2]",
            "non-finite number `inf`",
        ),
        ("h = nan", "h", "non-finite number `NaN`"),
        ("max_iterations = -3", "max_iterations", "invalid value"),
        ("h = \"fast\"", "h", "invalid type"),
    ] {
        let text = format!("[simulation]\nadaptive = false\n{setting}\n\n{BASE}");
        let msg = toml_err(&text);
        assert_has(
            &msg,
            &["model.toml:3:", &format!("parameter `{parameter}`"), expect],
        );
    }
}

#[test]
fn rejects_non_finite_node_and_element_numbers() {
    let text = BASE.replace("position = [0, 0, 0]", "position = [0, nan, 0]");
    let msg = toml_err(&text);
    let line = line_of(&text, "nan");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "node `ground`",
            "parameter `position[1]`",
            "non-finite",
        ],
    );
    let text = BASE.replace("mass = 2.5", "mass = -inf");
    let msg = toml_err(&text);
    let line = line_of(&text, "-inf");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `crank_mass`",
            "parameter `mass`",
            "non-finite number `-inf`",
        ],
    );
}

#[test]
fn rejects_invalid_simulation_numbers_in_json() {
    let text = "{\n\"simulation\": {\n  \"h\": -0.5\n},\n\"nodes\": [{\"name\": \"a\", \"position\": [0,0,0]}]\n}";
    let msg = json_err(text);
    assert_has(
        &msg,
        &["model.json:3:", "[simulation]", "parameter `h`", "> 0"],
    );
}

#[test]
fn rejects_unknown_simulation_key() {
    let text = format!("[simulation]\nt_end = 1.0\nstep = 0.1\n\n{BASE}");
    let msg = toml_err(&text);
    assert_has(
        &msg,
        &[
            "model.toml:3:",
            "parameter `step`",
            "unknown field `step`",
            "`h`",
        ],
    );
}

#[test]
fn rejects_unknown_node_key() {
    let text = BASE.replace(
        "position = [0.1, 0, 0]",
        "position = [0.1, 0, 0]\ncolour = \"red\"",
    );
    let msg = toml_err(&text);
    let line = line_of(&text, "colour");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "node `crank`",
            "parameter `colour`",
            "unknown field `colour`",
        ],
    );
}

#[test]
fn rejects_unknown_top_level_key() {
    let text = format!("{BASE}\n[solver]\ntol = 1\n");
    let msg = toml_err(&text);
    let line = line_of(&text, "[solver]");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "unknown top-level key `solver`",
        ],
    );
}

#[test]
fn rejects_missing_node_position() {
    let text = BASE.replace("position = [0.1, 0, 0]\n", "");
    let msg = toml_err(&text);
    // the second [[nodes]] header
    let line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == "[[nodes]]")
        .nth(1)
        .unwrap()
        .0
        + 1;
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "node `crank`",
            "parameter `position`",
            "missing field `position`",
        ],
    );
}

#[test]
fn rejects_missing_element_keys() {
    for (remove, parameter) in [
        ("type = \"test_mass\"\n", "type"),
        ("nodes = [\"crank\"]\n", "nodes"),
        ("name = \"crank_mass\"\n", "name"),
    ] {
        let text = BASE.replace(remove, "");
        let msg = toml_err(&text);
        let line = line_of(&text, "[[elements]]");
        let element = if parameter == "name" {
            "#1"
        } else {
            "crank_mass"
        };
        assert_has(
            &msg,
            &[
                &format!("model.toml:{line}:"),
                &format!("element `{element}`"),
                &format!("parameter `{parameter}`"),
                "missing required key",
            ],
        );
    }
}

#[test]
fn rejects_missing_nodes_section() {
    let msg = toml_err("[simulation]\nh = 1e-3\n");
    assert_has(&msg, &["model.toml", "missing required key `nodes`"]);
}

#[test]
fn rejects_missing_element_parameter() {
    let text = BASE.replace("mass = 2.5\n", "");
    let msg = toml_err(&text);
    let line = line_of(&text, "[[elements]]");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `crank_mass` (test_mass)",
            "missing field `mass`",
        ],
    );
}

#[test]
fn rejects_invalid_element_parameter() {
    let text = BASE.replace("mass = 2.5", "mass = -2.5");
    let msg = toml_err(&text);
    let line = line_of(&text, "mass = -2.5");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `crank_mass`",
            "parameter `mass`",
            "> 0",
        ],
    );
    match parse_str(&text, Format::Toml, "model.toml").unwrap_err() {
        IoError::Element {
            element,
            parameter,
            source,
            location,
        } => {
            assert_eq!(element, "crank_mass");
            assert_eq!(parameter.as_deref(), Some("mass"));
            assert!(matches!(*source, BuildError::InvalidParameter { .. }));
            assert_eq!(location.line, Some(line as u32));
        }
        e => panic!("unexpected {e:?}"),
    }
}

#[test]
fn rejects_unknown_element_parameter() {
    let text = BASE.replace("mass = 2.5", "mass = 2.5\nmas = 3");
    let msg = toml_err(&text);
    let line = line_of(&text, "mas = 3");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `crank_mass`",
            "unknown field `mas`",
        ],
    );
}

#[test]
fn rejects_wrong_node_count_and_kind() {
    let text = BASE.replace("nodes = [\"crank\"]", "nodes = [\"crank\", \"ground\"]");
    let msg = toml_err(&text);
    let line = line_of(&text, "nodes = [\"crank\", \"ground\"]");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `crank_mass`",
            "expects 1 node(s), got 2",
        ],
    );

    let text = format!(
        "{BASE}\n[[nodes]]\nname = \"p\"\nposition = [0, 1, 0]\nkind = \"point\"\n\n\
         [[elements]]\ntype = \"test_link\"\nname = \"l\"\nnodes = [\"ground\",\n  \"p\"]\nlength = 1\n"
    );
    let msg = toml_err(&text);
    let line = line_of(&text, "  \"p\"]");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "element `l`",
            "node `p` must be a Frame node",
        ],
    );
}

#[test]
fn rejects_bad_rotations() {
    // not a unit quaternion
    let text = BASE.replace(
        "position = [0.1, 0, 0]",
        "position = [0.1, 0, 0]\nrotation = [1, 0, 0, 0.01]",
    );
    let msg = toml_err(&text);
    let line = line_of(&text, "rotation = ");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "node `crank`",
            "parameter `rotation`",
            "unit quaternion",
        ],
    );
    // both rotation and rotation_vector
    let text = BASE.replace(
        "position = [0.1, 0, 0]",
        "position = [0.1, 0, 0]\nrotation = [1, 0, 0, 0]\nrotation_vector = [0, 0, 1]",
    );
    let msg = toml_err(&text);
    let line = line_of(&text, "rotation_vector");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "node `crank`",
            "parameter `rotation_vector`",
            "not both",
        ],
    );
    // a point node has no rotation
    let text = BASE.replace(
        "position = [0.1, 0, 0]",
        "position = [0.1, 0, 0]\nkind = \"point\"\nangular_velocity = [0, 0, 1]",
    );
    let msg = toml_err(&text);
    let line = line_of(&text, "angular_velocity");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "node `crank`",
            "parameter `angular_velocity`",
            "point node",
        ],
    );
}

#[test]
fn rejects_wrong_value_types() {
    // position of the wrong length
    let text = BASE.replace("position = [0.1, 0, 0]", "position = [0.1, 0]");
    let msg = toml_err(&text);
    let line = line_of(&text, "position = [0.1, 0]");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "node `crank`",
            "parameter `position`",
            "invalid length 2",
        ],
    );
    // unknown node kind
    let text = BASE.replace(
        "position = [0.1, 0, 0]",
        "position = [0.1, 0, 0]\nkind = \"rigid\"",
    );
    let msg = toml_err(&text);
    assert_has(&msg, &["parameter `kind`", "unknown variant `rigid`"]);
    // `nodes` must be an array of tables
    let msg = toml_err("nodes = 3\n");
    assert_has(
        &msg,
        &["model.toml:1:", "`nodes` must be an array of tables"],
    );
    // element nodes must be names
    let text = BASE.replace("nodes = [\"crank\"]", "nodes = [1]");
    let msg = toml_err(&text);
    assert_has(
        &msg,
        &["element `crank_mass`", "parameter `nodes`", "node names"],
    );
}

#[test]
fn rejects_composite_key_without_the_element_library() {
    // This test binary links no element library: `beam_lines` is not a registered composite
    // key, and the message says where it comes from.
    let text = format!(
        "{BASE}\n[[beam_lines]]\nname = \"rod\"\nfrom = \"ground\"\nto = \"crank\"\nelements = 2\nE = 1.0\n"
    );
    let msg = toml_err(&text);
    let line = line_of(&text, "[[beam_lines]]");
    assert_has(
        &msg,
        &[
            &format!("model.toml:{line}:"),
            "unknown top-level key `beam_lines`",
            "`simulation`, `nodes`, `elements`",
            "come with the element library",
        ],
    );
}
