//! `[[beam_lines]]` in model files: the composite kind registered by the element library
//! (`saltus_elements::beam`) expanded by the model-file reader — meshing (names, positions,
//! rotations, velocities, element definitions), TOML/JSON equivalence and one test per
//! rejection, each located at its file line. `tests/beam_model_file.rs` checks the meshing
//! against `BeamBuilder` bit for bit.

use saltus::core::{BuildCx, BuildError, Element, ElementDef, NodeId, NodeKind};
use saltus::io::{Format, IoError, ModelFile};
use saltus::prelude::{Matrix3, UnitQuaternion, Vector3};

/// Parse with the element library linked (it registers `beam` and `beam_lines`).
fn parse_str(text: &str, format: Format, file: &str) -> Result<ModelFile, IoError> {
    saltus::elements::link();
    saltus::io::parse_str(text, format, file)
}

// ---------------------------------------------------------------------------------------------
// Test element

/// A one-node element (any kind) to refer to generated nodes from `[[elements]]`.
#[derive(Debug)]
struct TestMass {
    nodes: Vec<NodeId>,
}

impl Element for TestMass {
    fn type_name(&self) -> &'static str {
        "test_mass"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
}

fn build_test_mass(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let nodes = cx.resolve_nodes(def, &[None])?;
    Ok(Box::new(TestMass { nodes }))
}

saltus::core::register_element! {
    type_name: "test_mass",
    summary: "test: one-node element",
    build: build_test_mass,
    example: || serde_json::json!({}),
    example_nodes: &[NodeKind::Frame],
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// Ground at the origin, a rotated, moving node `b` at (0, 3, 0), a point node, a 3-element
/// beam line from `a` to `b` and an element on a generated node.
const TOML_MODEL: &str = r#"[[nodes]]
name = "a"
position = [0, 0, 0]
fixed = true

[[nodes]]
name = "b"
position = [0, 3, 0]
rotation_vector = [0.3, -0.2, 1.0]
velocity = [0.3, 0, 0]
angular_velocity = [0, 0, -0.1]

[[nodes]]
name = "p"
position = [1, 1, 1]
kind = "point"

[[beam_lines]]
name = "rod"
from = "a"
to = "b"
elements = 3
E = 2.0e6
nu = 0.3
A = 1e-2
I2 = 2e-5
I3 = 1e-5
rho = 800.0

[[elements]]
type = "test_mass"
name = "m"
nodes = ["rod_n1"]
"#;

const JSON_MODEL: &str = r#"{
  "nodes": [
    { "name": "a", "position": [0, 0, 0], "fixed": true },
    { "name": "b", "position": [0, 3, 0], "rotation_vector": [0.3, -0.2, 1.0],
      "velocity": [0.3, 0, 0], "angular_velocity": [0, 0, -0.1] },
    { "name": "p", "position": [1, 1, 1], "kind": "point" }
  ],
  "beam_lines": [
    { "name": "rod", "from": "a", "to": "b", "elements": 3,
      "E": 2.0e6, "nu": 0.3, "A": 1e-2, "I2": 2e-5, "I3": 1e-5, "rho": 800.0 }
  ],
  "elements": [
    { "type": "test_mass", "name": "m", "nodes": ["rod_n1"] }
  ]
}"#;

fn toml_err(text: &str) -> IoError {
    match parse_str(text, Format::Toml, "model.toml") {
        Ok(_) => panic!("expected an error for\n{text}"),
        Err(e) => e,
    }
}

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in text"))
        + 1
}

#[track_caller]
fn assert_has(msg: &str, needles: &[&str]) {
    for n in needles {
        assert!(msg.contains(n), "message `{msg}` does not contain `{n}`");
    }
}

/// Check a rejection: message parts, and the error is a composite (beam line) error at `line`
/// naming `parameter`.
#[track_caller]
fn check_rejection(text: &str, line: usize, parameter: Option<&str>, needles: &[&str]) {
    let e = toml_err(text);
    let msg = e.to_string();
    assert_has(&msg, &[&format!("model.toml:{line}:")]);
    assert_has(&msg, needles);
    match e {
        IoError::Composite {
            parameter: p,
            location,
            entry,
            ..
        } => {
            assert!(entry.starts_with("beam line `"), "{entry}");
            assert_eq!(p.as_deref(), parameter, "{msg}");
            assert_eq!(location.line, Some(line as u32), "{msg}");
        }
        e => panic!("not a beam line error: {e:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Happy paths

fn check_model(mf: &saltus_io::ModelFile) {
    let nodes = mf.model.nodes();
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "p", "rod_n1", "rod_n2"]);
    // Equally spaced on the line, free, frame nodes.
    for (k, n) in nodes[3..].iter().enumerate() {
        assert_eq!(n.kind, NodeKind::Frame);
        assert!(!n.fixed);
        let y = (k + 1) as f64;
        assert!((n.initial.x - Vector3::new(0.0, y, 0.0)).norm() < 1e-15);
        // Section frame of a line along +y (default rule): axis 1 = e_y, axis 2 = e_z × e_y =
        // −e_x, axis 3 = e_z.
        let expected = Matrix3::from_columns(&[Vector3::y(), -Vector3::x(), Vector3::z()]);
        assert!((n.initial.r.to_rotation_matrix().into_inner() - expected).amax() < 1e-15);
        // Velocities interpolated between a (at rest) and b: v = t v_b, ω = t ω_b (spatial).
        let t = y / 3.0;
        assert!((n.initial.v - Vector3::new(0.3 * t, 0.0, 0.0)).norm() < 1e-15);
        assert!((n.initial.omega_spatial() - Vector3::new(0.0, 0.0, -0.1 * t)).norm() < 1e-15);
    }
    // The end node keeps its own rotation.
    let rb = UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.2, 1.0));
    assert!(nodes[1].initial.r.angle_to(&rb) < 1e-15);
    // Elements: the generated beams first, then [[elements]].
    assert_eq!(
        mf.model.element_names(),
        &["rod_e1", "rod_e2", "rod_e3", "m"]
    );
    assert_eq!(mf.elements.len(), 4);
    let chain: Vec<Vec<String>> = mf.elements[..3].iter().map(|d| d.nodes.clone()).collect();
    assert_eq!(
        chain,
        [["a", "rod_n1"], ["rod_n1", "rod_n2"], ["rod_n2", "b"]]
            .map(|p| p.map(String::from).to_vec())
            .to_vec()
    );
    for d in &mf.elements[..3] {
        assert_eq!(d.type_name, "beam");
        assert_eq!(
            d.parameters,
            serde_json::json!({"E": 2.0e6, "nu": 0.3, "A": 1e-2, "I2": 2e-5, "I3": 1e-5, "rho": 800.0})
        );
    }
    assert_eq!(mf.model.elements()[1].nodes(), &[NodeId(3), NodeId(4)]);
    assert_eq!(mf.model.elements()[3].nodes(), &[NodeId(3)]);
}

#[test]
fn toml_beam_line() {
    check_model(&parse_str(TOML_MODEL, Format::Toml, "model.toml").unwrap());
}

#[test]
fn json_beam_line_equals_toml() {
    let json = parse_str(JSON_MODEL, Format::Json, "model.json").unwrap();
    check_model(&json);
    let toml = parse_str(TOML_MODEL, Format::Toml, "model.toml").unwrap();
    assert_eq!(json.model.nodes(), toml.model.nodes());
    assert_eq!(json.elements, toml.elements);
}

#[test]
fn single_element_and_chained_lines() {
    // One element: no intermediate node. A second line may start at a generated node... of
    // none here, but at the end node of the first.
    let text = TOML_MODEL
        .replace("elements = 3", "elements = 1")
        .replace("nodes = [\"rod_n1\"]", "nodes = [\"b\"]")
        + r#"
[[nodes]]
name = "c"
position = [0, 3, 2]

[[beam_lines]]
name = "up"
from = "b"
to = "c"
elements = 2
E = 1.0
nu = 0.3
A = 1.0
I2 = 0.1
I3 = 0.1
rho = 1.0
"#;
    // [[beam_lines]] after [[elements]] in the text: still meshed before the elements.
    let mf = parse_str(&text, Format::Toml, "model.toml").unwrap();
    let names: Vec<&str> = mf.model.nodes().iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "p", "c", "up_n1"]);
    assert_eq!(mf.model.element_names(), &["rod_e1", "up_e1", "up_e2", "m"]);
    // Vertical line (axis e_z): the default rule takes axis 2 = e_y × e_z = e_x.
    let r = mf.model.nodes()[4]
        .initial
        .r
        .to_rotation_matrix()
        .into_inner();
    let expected = Matrix3::from_columns(&[Vector3::z(), Vector3::x(), Vector3::y()]);
    assert!((r - expected).amax() < 1e-15, "{r}");
    assert!((mf.model.nodes()[4].initial.x - Vector3::new(0.0, 3.0, 1.0)).norm() < 1e-15);
}

#[test]
fn orientation_sets_section_axis_2() {
    let text = TOML_MODEL.replace("rho = 800.0", "rho = 800.0\norientation = [1, 1, 0]");
    let mf = parse_str(&text, Format::Toml, "model.toml").unwrap();
    // Along +y with axis 2 from (1, 1, 0) made orthogonal: e_x; axis 3 = e_y × e_x = −e_z.
    let r = mf.model.nodes()[3]
        .initial
        .r
        .to_rotation_matrix()
        .into_inner();
    let expected = Matrix3::from_columns(&[Vector3::y(), Vector3::x(), -Vector3::z()]);
    assert!((r - expected).amax() < 1e-15, "{r}");
    // The orientation is also passed to every element.
    assert_eq!(
        mf.elements[0].parameters["orientation"],
        serde_json::json!([1, 1, 0])
    );
}

// ---------------------------------------------------------------------------------------------
// Rejections

#[test]
fn rejects_unknown_and_point_end_nodes() {
    let text = TOML_MODEL.replace("from = \"a\"", "from = \"x\"");
    check_rejection(
        &text,
        line_of(&text, "from = \"x\""),
        Some("from"),
        &["beam line `rod`", "parameter `from`", "unknown node `x`"],
    );
    let text = TOML_MODEL.replace("to = \"b\"", "to = \"p\"");
    check_rejection(
        &text,
        line_of(&text, "to = \"p\""),
        Some("to"),
        &["beam line `rod`", "node `p` must be a frame node"],
    );
    let text = TOML_MODEL.replace("to = \"b\"", "to = \"a\"");
    check_rejection(
        &text,
        line_of(&text, "to = \"a\""),
        Some("to"),
        &["coincide"],
    );
}

#[test]
fn rejects_bad_element_counts() {
    for (value, expect) in [
        ("0", "integer in [1, 100000], got 0"),
        ("2.5", "got 2.5"),
        ("\"four\"", "got \"four\""),
        ("-3", "got -3"),
        ("200000", "got 200000"),
        ("20000000", "got 20000000"),
    ] {
        let text = TOML_MODEL.replace("elements = 3", &format!("elements = {value}"));
        check_rejection(
            &text,
            line_of(&text, &format!("elements = {value}")),
            Some("elements"),
            &["beam line `rod`", "parameter `elements`", expect],
        );
    }
    let text = TOML_MODEL.replace("elements = 3\n", "");
    check_rejection(
        &text,
        line_of(&text, "[[beam_lines]]"),
        Some("elements"),
        &["missing required key"],
    );
}

#[test]
fn rejects_missing_or_bad_names() {
    let text = TOML_MODEL.replace("name = \"rod\"\n", "");
    check_rejection(
        &text,
        line_of(&text, "[[beam_lines]]"),
        Some("name"),
        &["beam line `#1`", "parameter `name`", "missing required key"],
    );
    let text = TOML_MODEL.replace("from = \"a\"", "from = 3");
    check_rejection(
        &text,
        line_of(&text, "from = 3"),
        Some("from"),
        &["must be a string, found a number"],
    );
    // Two lines with the same name.
    let second = &TOML_MODEL[TOML_MODEL.find("[[beam_lines]]").unwrap()..]
        .split("[[elements]]")
        .next()
        .unwrap()
        .to_string();
    let text = format!("{TOML_MODEL}\n{second}");
    let dup = text.match_indices("name = \"rod\"").nth(1).unwrap().0;
    let line = text[..dup].lines().count() + 1;
    check_rejection(
        &text,
        line,
        Some("name"),
        &[
            "duplicate beam line name",
            &format!("first defined at line {}", line_of(&text, "name = \"rod\"")),
        ],
    );
}

#[test]
fn rejects_invalid_beam_parameters_at_their_line() {
    let text = TOML_MODEL.replace("E = 2.0e6", "E = -2.0e6");
    check_rejection(
        &text,
        line_of(&text, "E = -2.0e6"),
        Some("E"),
        &[
            "beam line `rod`",
            "parameter `E`",
            "must be finite and > 0, got -2000000",
        ],
    );
    let text = TOML_MODEL.replace("rho = 800.0", "rho = 800.0\nRho = 1.0");
    check_rejection(
        &text,
        line_of(&text, "Rho = 1.0"),
        Some("Rho"),
        &["parameter `Rho`", "unknown field `Rho`"],
    );
    let text = TOML_MODEL.replace("I2 = 2e-5\n", "");
    check_rejection(
        &text,
        line_of(&text, "[[beam_lines]]"),
        Some("I2"),
        &["missing field `I2`"],
    );
    // A rule of the real section: Poisson's ratio in (−1, 0.5].
    let text = TOML_MODEL.replace("nu = 0.3", "nu = 0.7");
    check_rejection(
        &text,
        line_of(&text, "nu = 0.7"),
        Some("nu"),
        &["parameter `nu`", "must be in (-1, 0.5], got 0.7"],
    );
    let text = TOML_MODEL.replace("A = 1e-2", "A = nan");
    check_rejection(
        &text,
        line_of(&text, "A = nan"),
        Some("A"),
        &["beam line `rod`", "non-finite number `NaN`"],
    );
}

#[test]
fn rejects_bad_orientation() {
    let text = TOML_MODEL.replace("rho = 800.0", "rho = 800.0\norientation = [0, -2, 0]");
    check_rejection(
        &text,
        line_of(&text, "orientation"),
        Some("orientation"),
        &["parameter `orientation`", "parallel to the beam axis"],
    );
    for bad in ["[0, 0, 0]", "[1, 0]", "\"z\""] {
        let text = TOML_MODEL.replace("rho = 800.0", &format!("rho = 800.0\norientation = {bad}"));
        check_rejection(
            &text,
            line_of(&text, "orientation"),
            Some("orientation"),
            &["finite, non-zero 3-vector"],
        );
    }
}

#[test]
fn rejects_generated_name_collisions() {
    // A file node already named like a generated node.
    let text = TOML_MODEL.replace("name = \"p\"", "name = \"rod_n2\"");
    check_rejection(
        &text,
        line_of(&text, "name = \"rod\""),
        Some("name"),
        &["generated node name `rod_n2` is already used"],
    );
    // An [[elements]] entry named like a generated element: a duplicate at the entry's line,
    // pointing at the beam line.
    let text = TOML_MODEL.replace("name = \"m\"", "name = \"rod_e2\"");
    let e = toml_err(&text);
    assert!(matches!(e, IoError::Duplicate { .. }), "{e:?}");
    assert_has(
        &e.to_string(),
        &[
            &format!("model.toml:{}:", line_of(&text, "name = \"rod_e2\"")),
            "duplicate element name `rod_e2`",
            &format!("first defined at line {}", line_of(&text, "name = \"rod\"")),
        ],
    );
}

#[test]
fn rejects_malformed_beam_lines_section() {
    let text = "beam_lines = 3\n\n[[nodes]]\nname = \"a\"\nposition = [0, 0, 0]\n";
    let e = toml_err(text);
    assert_has(
        &e.to_string(),
        &["model.toml:1:", "`beam_lines` must be an array of tables"],
    );
    let json = JSON_MODEL.replace(
        "{ \"name\": \"rod\", \"from\": \"a\"",
        "7, { \"name\": \"rod\", \"from\": \"a\"",
    );
    let e = parse_str(&json, Format::Json, "model.json").unwrap_err();
    assert_has(
        &e.to_string(),
        &[
            &format!("model.json:{}:", line_of(&json, "7, {")),
            "beam line `#1`",
            "must be a table, found a number",
        ],
    );
}
