//! The element registry: exact set of registered types, no duplicates, every example builds
//! and every parameter set rejects unknown fields. The documented parameters of every type
//! (`saltus elements`, [`saltus_core::ParamDoc`]) are held to the parsers: required keys are
//! required, optional ones are not, documented defaults build, every key is listed with its
//! unit, and every key an example uses is documented.

use saltus_core::fd::Rng;
use saltus_core::registry::{check_registry, element_kinds, element_type_names, ElementKind};
use saltus_core::{BuildCx, BuildError, Element, ElementDef, NodeDef, NodeState, ParamDoc};

fn build(
    kind: &ElementKind,
    parameters: serde_json::Value,
) -> Result<Box<dyn Element>, BuildError> {
    let mut rng = Rng::new(42);
    let nodes: Vec<NodeDef> = kind
        .example_nodes
        .iter()
        .enumerate()
        .map(|(i, k)| NodeDef {
            name: format!("n{i}"),
            kind: *k,
            initial: NodeState::at(rng.vec3(1.0), rng.rotation()),
            fixed: false,
            motion: None,
        })
        .collect();
    let def = ElementDef {
        name: format!("example_{}", kind.type_name),
        type_name: kind.type_name.to_string(),
        nodes: nodes.iter().map(|n| n.name.clone()).collect(),
        parameters,
    };
    (kind.build)(&def, &BuildCx::new(&nodes))
}

#[test]
fn registered_type_names_are_exactly_the_library() {
    saltus_elements::link();
    assert_eq!(
        element_type_names(),
        [
            "beam",
            "clamp",
            "nodal_load",
            "point_mass",
            "point_plane_contact",
            "prescribed_rotation",
            "prismatic_joint",
            "revolute_joint",
            "rigid_body",
            "sphere_in_sphere_contact",
            "sphere_plane_contact",
            "sphere_sphere_contact",
            "spherical_joint",
            "spring_damper",
            "torsional_spring",
        ]
    );
}

#[test]
fn registry_has_no_duplicates() {
    saltus_elements::link();
    check_registry().unwrap();
}

#[test]
fn every_example_builds_with_the_declared_nodes() {
    saltus_elements::link();
    for kind in element_kinds() {
        let e = build(kind, (kind.example)())
            .unwrap_or_else(|err| panic!("example of `{}` does not build: {err}", kind.type_name));
        assert_eq!(e.type_name(), kind.type_name);
        assert_eq!(
            e.nodes().len(),
            kind.example_nodes.len(),
            "{}",
            kind.type_name
        );
        for (declared, required) in kind.example_nodes.iter().zip(e.node_kinds()) {
            if let Some(required) = required {
                assert_eq!(*declared, required, "{}", kind.type_name);
            }
        }
        assert!(!kind.summary.is_empty(), "{}", kind.type_name);
    }
}

#[test]
fn every_type_rejects_unknown_parameters() {
    saltus_elements::link();
    for kind in element_kinds() {
        let mut params = (kind.example)();
        let Some(obj) = params.as_object_mut() else {
            continue;
        };
        obj.insert("no_such_parameter".into(), serde_json::json!(1.0));
        match build(kind, params) {
            Err(BuildError::Parameters { message, .. }) => {
                assert!(
                    message.contains("no_such_parameter"),
                    "{}: {message}",
                    kind.type_name
                )
            }
            other => panic!(
                "`{}` accepted an unknown parameter: {:?}",
                kind.type_name,
                other.map(|e| e.type_name())
            ),
        }
    }
}

/// The documented keys of `kind` (every library type must document them).
fn params(kind: &ElementKind) -> Vec<ParamDoc> {
    let params = kind
        .params
        .unwrap_or_else(|| panic!("`{}` registers no `params:` type", kind.type_name));
    params()
}

/// The example of `kind` as a table.
fn example(kind: &ElementKind) -> serde_json::Map<String, serde_json::Value> {
    match (kind.example)() {
        serde_json::Value::Object(map) => map,
        serde_json::Value::Null => serde_json::Map::new(),
        other => panic!("example of `{}` is not a table: {other}", kind.type_name),
    }
}

#[test]
fn cli_every_key_is_documented_with_a_unit() {
    saltus_elements::link();
    for kind in element_kinds() {
        let docs = params(kind);
        let name = kind.type_name;
        for p in &docs {
            assert!(!p.doc.is_empty(), "{name}.{}: no doc comment", p.key);
            // Numbers state their unit (`[-]` when dimensionless): `/// Mass \[kg\], ...`.
            if p.value.contains("number") {
                assert!(
                    p.unit.is_some(),
                    "{name}.{}: no [unit] in `{}`",
                    p.key,
                    p.doc
                );
            }
            assert!(
                !(p.required && p.default.is_some()),
                "{name}.{}: required with a default",
                p.key
            );
        }
        for key in example(kind).keys() {
            assert!(
                docs.iter().any(|p| &p.key == key),
                "{name}: example key `{key}` is not documented"
            );
        }
    }
}

#[test]
fn cli_required_keys_are_required_by_the_build() {
    saltus_elements::link();
    for kind in element_kinds() {
        let name = kind.type_name;
        for p in params(kind).iter().filter(|p| p.required) {
            let mut params = example(kind);
            assert!(
                params.remove(&p.key).is_some(),
                "{name}: the example lacks the required key `{}`",
                p.key
            );
            match build(kind, params.into()) {
                Err(BuildError::Parameters { message, .. }) => assert!(
                    message.contains(&format!("`{}`", p.key)),
                    "{name} without `{}`: {message}",
                    p.key
                ),
                Err(other) => panic!("{name} without `{}`: {other}", p.key),
                Ok(_) => panic!("{name} builds without its required key `{}`", p.key),
            }
        }
    }
}

#[test]
fn cli_optional_keys_may_be_left_out() {
    saltus_elements::link();
    for kind in element_kinds() {
        for p in params(kind).iter().filter(|p| !p.required) {
            let mut params = example(kind);
            if params.remove(&p.key).is_none() {
                continue;
            }
            // Other checks may refuse the rest (e.g. a spring left without an anchor), but
            // the parser must not miss the key.
            if let Err(BuildError::Parameters { message, .. }) = build(kind, params.into()) {
                panic!("{} without optional `{}`: {message}", kind.type_name, p.key);
            }
        }
    }
}

#[test]
fn cli_documented_defaults_build() {
    saltus_elements::link();
    let mut checked = 0;
    for kind in element_kinds() {
        for p in params(kind) {
            let Some(default) = p.default else { continue };
            let mut params = example(kind);
            params.insert(p.key.clone(), default.clone());
            build(kind, params.into())
                .unwrap_or_else(|e| panic!("{} with `{} = {default}`: {e}", kind.type_name, p.key));
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} documented defaults");
}

#[test]
fn cli_undocumented_key_is_refused() {
    saltus_elements::link();
    for kind in element_kinds() {
        assert!(!params(kind).iter().any(|p| p.key == "bogus_key"));
        let mut params = example(kind);
        params.insert("bogus_key".into(), serde_json::json!(0.0));
        match build(kind, params.into()) {
            Err(BuildError::Parameters { message, .. }) => {
                assert!(
                    message.contains("bogus_key"),
                    "{}: {message}",
                    kind.type_name
                )
            }
            other => panic!(
                "`{}` accepted `bogus_key`: {:?}",
                kind.type_name,
                other.map(|e| e.type_name())
            ),
        }
    }
}

/// The listing line of `key` in `listing` (two-space indent, key, then a space).
fn listing_line<'a>(listing: &'a str, key: &str) -> &'a str {
    listing
        .lines()
        .find(|l| {
            l.strip_prefix("  ")
                .and_then(|l| l.strip_prefix(key))
                .is_some_and(|r| r.starts_with(' '))
        })
        .unwrap_or_else(|| panic!("no line for `{key}` in\n{listing}"))
}

#[test]
fn cli_listing_shows_every_documented_key() {
    saltus_elements::link();
    for kind in element_kinds() {
        let listing = saltus::driver::elements_listing(Some(kind.type_name)).unwrap();
        for p in params(kind) {
            let line = listing_line(&listing, &p.key);
            if let Some(unit) = &p.unit {
                assert!(line.contains(&format!("[{unit}]")), "{line}");
            }
            assert!(line.contains(&p.status()), "{line}");
            let first_word = p.doc.split_whitespace().next().unwrap();
            assert!(line.contains(first_word), "{line}");
        }
    }
}

#[test]
fn cli_listing_of_beam_revolute_rigid_body() {
    saltus_elements::link();
    let beam = saltus::driver::elements_listing(Some("beam")).unwrap();
    for key in [
        "J",
        "G",
        "shear_coefficient",
        "damping_ratio",
        "damping_frequency",
    ] {
        assert!(listing_line(&beam, key).contains("optional"), "{key}");
    }
    assert!(listing_line(&beam, "E").contains("[Pa]"));
    assert!(listing_line(&beam, "E").contains("required"));
    assert!(listing_line(&beam, "damping_frequency").contains("[Hz]"));
    let revolute = saltus::driver::elements_listing(Some("revolute_joint")).unwrap();
    let anchor = listing_line(&revolute, "anchor");
    assert!(
        anchor.contains("[m]") && anchor.contains("optional"),
        "{anchor}"
    );
    let body = saltus::driver::elements_listing(Some("rigid_body")).unwrap();
    let mass = listing_line(&body, "mass");
    assert!(mass.contains("[kg]") && mass.contains("required"), "{mass}");
    let contact = saltus::driver::elements_listing(Some("sphere_plane_contact")).unwrap();
    assert!(listing_line(&contact, "friction").contains("default = 0.0"));
}

/// A model with frame nodes `a` at the origin, `b` at x = 1, and a valid entry of each
/// registered composite kind over them.
fn composite_example(
    key: &str,
) -> (
    saltus_core::Model,
    serde_json::Map<String, serde_json::Value>,
) {
    use nalgebra::Vector3;
    let mut model = saltus_core::Model::new();
    model
        .add_node(NodeDef::frame("a", Vector3::zeros()))
        .unwrap();
    model.add_node(NodeDef::frame("b", Vector3::x())).unwrap();
    let entry = match key {
        "beam_lines" => serde_json::json!({
            "name": "line", "from": "a", "to": "b", "elements": 2,
            "E": 2.0e11, "nu": 0.3, "A": 1.0e-4, "I2": 1.0e-9, "I3": 1.0e-9, "rho": 7800.0,
        }),
        "ball_bearings" => serde_json::json!({
            "name": "brg", "inner": "a", "outer": "b", "balls": 8, "ball_radius": 0.004,
            "inner_radius": 0.0128, "clearance": 1.0e-5, "cage_stiffness": 1.0e8,
        }),
        "contact_groups" => serde_json::json!({
            "name": "grp", "nodes": ["a", "b"], "radius": 0.1,
        }),
        other => panic!("no example entry for the composite `{other}`: add one here"),
    };
    let serde_json::Value::Object(entry) = entry else {
        unreachable!()
    };
    (model, entry)
}

fn expand(
    key: &str,
    entry: serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<ElementDef>, saltus_core::registry::CompositeError> {
    let kind = saltus_core::registry::composite_kind(key).unwrap();
    let (mut model, _) = composite_example(key);
    let def = saltus_core::registry::CompositeDef {
        name: entry["name"].as_str().unwrap().to_string(),
        parameters: entry,
    };
    (kind.expand)(&def, &mut model)
}

#[test]
fn cli_composite_keys_are_held_to_the_parsers() {
    saltus_elements::link();
    for kind in saltus_core::registry::composite_kinds() {
        let key = kind.key;
        let docs = (kind
            .params
            .unwrap_or_else(|| panic!("`{key}` registers no params:")))();
        let (_, entry) = composite_example(key);
        expand(key, entry.clone()).unwrap_or_else(|e| panic!("{key} example: {e}"));
        for k in entry.keys() {
            assert!(
                docs.iter().any(|p| &p.key == k),
                "{key}: `{k}` undocumented"
            );
        }
        let listing = saltus::driver::elements_listing(Some(key)).unwrap();
        for p in &docs {
            assert!(!p.doc.is_empty(), "{key}.{}: no doc", p.key);
            if p.value.contains("number") || p.value.contains("integer") {
                assert!(
                    p.unit.is_some(),
                    "{key}.{}: no [unit] in `{}`",
                    p.key,
                    p.doc
                );
            }
            let line = listing_line(&listing, &p.key);
            assert!(line.contains(&p.status()), "{line}");
            // `name` is read by the model-file loader for every composite (CompositeDef::name).
            if p.required && p.key != "name" {
                let mut without = entry.clone();
                assert!(
                    without.remove(&p.key).is_some(),
                    "{key}: example lacks `{}`",
                    p.key
                );
                let err = expand(key, without).expect_err(&p.key);
                assert!(
                    err.parameter.as_deref() == Some(p.key.as_str())
                        || err.message.contains(&p.key),
                    "{key} without `{}`: {err:?}",
                    p.key
                );
            }
            if let Some(default) = &p.default {
                let mut with = entry.clone();
                with.insert(p.key.clone(), default.clone());
                expand(key, with).unwrap_or_else(|e| panic!("{key} `{} = {default}`: {e}", p.key));
            }
        }
        let mut bogus = entry.clone();
        bogus.insert("bogus_key".into(), serde_json::json!(1.0));
        let err = expand(key, bogus).expect_err(key);
        assert!(err.message.contains("bogus_key"), "{key}: {err:?}");
    }
}
