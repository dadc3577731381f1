//! The element registry: exact set of registered types, no duplicates, every example builds
//! and every parameter set rejects unknown fields.

use saltus_core::fd::Rng;
use saltus_core::registry::{check_registry, element_kinds, element_type_names, ElementKind};
use saltus_core::{BuildCx, BuildError, Element, ElementDef, NodeDef, NodeState};

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
