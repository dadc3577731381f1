//! Contact groups: run-time detection creates and removes contact elements between steps
//! (`elements::contact::group`), in code and in model files.

use saltus::elements::body::RigidBody;
use saltus::elements::contact::group::ContactGroup;
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::contact::spheres::SphereContact;
use saltus::prelude::*;

const R: f64 = 0.0283;
const M: f64 = 0.185;

/// Three balls on a table as in V12 (frictionless): ball 1 at 2 m/s towards balls 2 and 3,
/// which touch. With `explicit`, every contact is an element from the start; otherwise two
/// groups (ball–ball e_N = 1, ball–cloth e_N = 0) detect them during the run.
fn three_balls(explicit: bool) -> Model {
    let mut model = Model::new();
    let x2 = 2.0 * R + 0.1;
    let xs = [0.0, x2, x2 + 2.0 * R];
    let ids: Vec<NodeId> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let v = if i == 0 { 2.0 } else { 0.0 };
            let id = model
                .add_node(
                    NodeDef::frame(format!("ball{}", i + 1), Vector3::new(*x, 0.0, R))
                        .velocity(Vector3::new(v, 0.0, 0.0)),
                )
                .unwrap();
            model
                .add_element(
                    format!("body{}", i + 1),
                    RigidBody::sphere(id, M, R).unwrap(),
                )
                .unwrap();
            id
        })
        .collect();
    if explicit {
        for (i, id) in ids.iter().enumerate() {
            let c = PlaneContact::sphere(*id, R, Vector3::zeros(), Vector3::z()).unwrap();
            model.add_element(format!("cloth{i}"), c).unwrap();
        }
        for i in 0..3 {
            for j in i + 1..3 {
                let c = SphereContact::spheres(ids[i], ids[j], R, R)
                    .unwrap()
                    .restitution(1.0, 0.0);
                model.add_element(format!("b{i}{j}"), c).unwrap();
            }
        }
    } else {
        model.add_detector(
            ContactGroup::new("balls")
                .spheres(&ids, R)
                .restitution(1.0, 0.0),
        );
        model.add_detector(
            ContactGroup::new("cloth")
                .spheres(&ids, R)
                .self_contact(false)
                .plane(Vector3::zeros(), Vector3::z()),
        );
    }
    model
}

fn options() -> NsgaOptions {
    NsgaOptions {
        h: 1e-3,
        t_end: 0.1,
        gravity: Vector3::new(0.0, 0.0, -9.8),
        ..Default::default()
    }
}

#[test]
fn detected_contacts_reproduce_the_explicit_model() {
    let mut runs = Vec::new();
    for explicit in [true, false] {
        let mut model = three_balls(explicit);
        let mut solver = Nsga::new(&mut model, options()).unwrap();
        let mut sink = MemorySink::default();
        solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
        runs.push((solver.nodes().to_vec(), solver.topology_changes(), sink));
    }
    let (explicit, detected) = (&runs[0], &runs[1]);
    // An open contact adds nothing to the node equations, so both runs solve the same node
    // equations; the linear systems differ in size and order only (round-off).
    for (a, b) in explicit.0.iter().zip(&detected.0) {
        assert!((a.x - b.x).norm() < 1e-12, "{} vs {}", a.x, b.x);
        assert!((a.v - b.v).norm() < 1e-10, "{} vs {}", a.v, b.v);
    }
    // The cradle happened: ball 3 carries the velocity.
    assert!((detected.0[2].v.x - 2.0).abs() < 1e-8);
    // The groups changed the element set (cloth contacts at the first step, 1–2 before the
    // impact, the far pairs never); the explicit model never.
    assert_eq!(explicit.1, 0);
    assert!(detected.1 >= 2, "{}", detected.1);
    // Every detected contact is in the contact table, with the impulses of the same contact
    // of the explicit model at the same record.
    let (a, b) = (&explicit.2.contacts, &detected.2.contacts);
    assert_eq!(a.len(), b.len());
    let mut compared = 0;
    for (ra, rb) in a.iter().zip(b) {
        for row in rb {
            let twin = ra
                .iter()
                .find(|r| (r.body_a, r.body_b) == (row.body_a, row.body_b))
                .expect("contact of the explicit model");
            for k in 0..3 {
                assert!((twin.impulse[k] - row.impulse[k]).abs() < 1e-10);
            }
            compared += 1;
        }
    }
    assert!(compared > 100, "{compared}");
}

/// Spheres on a cubic lattice: with spacing 2r every lattice neighbour touches, so the group
/// creates exactly the 3 n²(n − 1) neighbour pairs and no other (diagonal neighbours are
/// 2√2 r apart, beyond any threshold); with spacing 3r it creates none.
#[test]
fn broad_phase_finds_exactly_the_lattice_neighbours() {
    for (n, spacing, expected) in [
        (10, 2.0, 3 * 100 * 9),
        (10, 3.0, 0),
        (22, 2.0, 3 * 484 * 21),
    ] {
        let mut model = Model::new();
        let r = 0.01;
        let mut ids = Vec::new();
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let x = Vector3::new(i as f64, j as f64, k as f64) * spacing * r;
                    let id = model
                        .add_node(NodeDef::frame(format!("s{i}_{j}_{k}"), x))
                        .unwrap();
                    model
                        .add_element(
                            format!("m{i}_{j}_{k}"),
                            RigidBody::sphere(id, 1.0, r).unwrap(),
                        )
                        .unwrap();
                    ids.push(id);
                }
            }
        }
        let mut group = ContactGroup::new("grains").spheres(&ids, r).margin(1e-4);
        let states: Vec<NodeState> = model.nodes().iter().map(|d| d.initial).collect();
        use saltus::core::Detector;
        group.update(&mut model, 0.0, 1e-3, &states).unwrap();
        assert_eq!(
            group.contact_count(),
            expected,
            "n = {n}, spacing {spacing}"
        );
        let contacts = model
            .elements()
            .iter()
            .filter(|e| e.as_contact().is_some())
            .count();
        assert_eq!(contacts, expected);
        // A second update at the same states changes nothing.
        group.update(&mut model, 0.0, 1e-3, &states).unwrap();
        assert_eq!(group.churn(), (expected, 0));
    }
}

#[test]
fn group_errors_name_the_group_and_the_parameter() {
    let mut model = Model::new();
    let a = model
        .add_node(NodeDef::frame("a", Vector3::zeros()))
        .unwrap();
    let p = model.add_node(NodeDef::point("p", Vector3::x())).unwrap();
    let states: Vec<NodeState> = model.nodes().iter().map(|d| d.initial).collect();
    use saltus::core::Detector;
    let cases = [
        (ContactGroup::new("g").sphere(a, -1.0), "radius"),
        (ContactGroup::new("g").sphere(p, 1.0), "nodes"),
        (
            ContactGroup::new("g").sphere(a, 1.0).sphere(a, 1.0),
            "nodes",
        ),
        (
            ContactGroup::new("g").sphere(a, 1.0).restitution(1.5, 0.0),
            "restitution",
        ),
        (
            ContactGroup::new("g")
                .sphere(a, 1.0)
                .plane(Vector3::zeros(), Vector3::zeros()),
            "planes",
        ),
        (ContactGroup::new("g").sphere(a, 1.0).margin(-1.0), "margin"),
    ];
    for (mut g, parameter) in cases {
        let e = g.update(&mut model, 0.0, 1e-3, &states).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("contact group `g`") && text.contains(parameter),
            "{text}"
        );
    }
}

#[test]
fn model_files_declare_contact_groups() {
    let text = r#"
[simulation]
t_end = 0.05
h = 1e-3
gravity = [0.0, 0.0, -9.8]

[[nodes]]
name = "b1"
kind = "frame"
position = [0.0, 0.0, 0.05]
velocity = [1.0, 0.0, 0.0]

[[nodes]]
name = "b2"
kind = "frame"
position = [0.1, 0.0, 0.05]

[[elements]]
name = "m1"
type = "rigid_body"
nodes = ["b1"]
mass = 0.2
inertia = [1e-4, 1e-4, 1e-4]

[[elements]]
name = "m2"
type = "rigid_body"
nodes = ["b2"]
mass = 0.2
inertia = [1e-4, 1e-4, 1e-4]

[[contact_groups]]
name = "balls"
nodes = ["b1", "b2"]
radius = 0.05
restitution = 1.0

[[contact_groups]]
name = "floor"
nodes = ["b1", "b2"]
radius = 0.05
self_contact = false
planes = [{ point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }]
friction = 0.0
"#;
    let file = saltus::io::parse_str(text, saltus::io::Format::Toml, "balls.toml").unwrap();
    let mut model = file.model;
    assert_eq!(model.detectors().len(), 2);
    let mut solver = Nsga::new(
        &mut model,
        NsgaOptions {
            h: 1e-3,
            t_end: 0.05,
            gravity: Vector3::new(0.0, 0.0, -9.8),
            ..Default::default()
        },
    )
    .unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    // Touching at the first step (0.1 m apart, radii 0.05): ball 1 hands its 1 m/s to ball 2.
    assert!(solver.nodes()[0].v.x.abs() < 1e-8);
    assert!((solver.nodes()[1].v.x - 1.0).abs() < 1e-8);

    // The group's speed-dependent friction reaches the contacts it creates.
    let decaying = text.replace(
        "restitution = 1.0",
        "restitution = 1.0\nfriction_decay = 0.1\nfriction_decay_rate = 2.0",
    );
    let mut model = saltus::io::parse_str(&decaying, saltus::io::Format::Toml, "balls.toml")
        .unwrap()
        .model;
    let mut solver = Nsga::new(
        &mut model,
        NsgaOptions {
            h: 1e-3,
            t_end: 1e-3,
            ..Default::default()
        },
    )
    .unwrap();
    solver.step(&mut model).unwrap();
    let laws: Vec<_> = model
        .elements()
        .iter()
        .zip(model.element_names())
        .filter(|(_, name)| name.starts_with("balls:"))
        .map(|(e, _)| e.as_contact().unwrap().law.friction_decay)
        .collect();
    assert_eq!(laws.len(), 1);
    assert_eq!((laws[0].extra, laws[0].rate), (0.1, 2.0));

    // Errors locate the entry and name the key.
    for (bad, key) in [
        (
            text.replace(
                "nodes = [\"b1\", \"b2\"]\nradius = 0.05\nrestitution",
                "nodes = [\"b1\", \"zz\"]\nradius = 0.05\nrestitution",
            ),
            "unknown node `zz`",
        ),
        (
            text.replace("radius = 0.05\nrestitution = 1.0", "restitution = 1.0"),
            "radius",
        ),
        (
            text.replace("restitution = 1.0", "restitution = 2.0"),
            "restitution",
        ),
        (
            text.replace("restitution = 1.0", "restitutio = 1.0"),
            "restitutio",
        ),
        (
            text.replace(
                "restitution = 1.0",
                "restitution = 1.0\nfriction_decay_rate = -1.0",
            ),
            "friction_decay_rate",
        ),
    ] {
        let err = saltus::io::parse_str(&bad, saltus::io::Format::Toml, "balls.toml").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("balls.toml")
                && text.contains("contact group `balls`")
                && text.contains(key),
            "{text}"
        );
    }
}

/// The shipped `models/sphere_pile.toml`: eight spheres poured into an open box, contacts found
/// at run time, solved Gauss–Seidel first at tol 1e-4. After its 1 s the pile is at rest, the
/// four lower spheres on the floor, and no sphere penetrates another, the floor or a wall.
#[test]
fn shipped_sphere_pile_comes_to_rest_in_its_box() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/sphere_pile.toml");
    let mut file = saltus::io::load_model(std::path::Path::new(path)).unwrap();
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    assert_eq!(opts.contact_solver, ContactSolver::GaussSeidel);
    let (r, half) = (0.05, 0.12);
    let model = &mut file.model;
    let mut solver = Nsga::new(model, opts).unwrap();
    while solver.time() < 1.0 - 0.5e-3 {
        solver.step(model).unwrap();
    }
    let summary = solver.summary();
    assert!(summary.stage("position").settled + summary.stage("velocity").settled > 500);
    let nodes = solver.nodes();
    // At rest: the spheres fall at up to ≈ 1.5 m/s; what the velocity stage leaves is of the
    // order of its tolerance on the velocity scale |g| h ≈ 1e-2 m/s, i.e. 1e-6 m/s. Bound
    // 1e-3 m/s.
    for s in nodes {
        assert!(s.v.norm() < 1e-3 && s.omega.norm() * r < 1e-3, "{s:?}");
    }
    // No penetration: the position rows κ g_N (κ = m ≈ 0.52 kg) pass the residual test at
    // tol × reference ≈ 1e-4 × 1e-3 kg·m, i.e. ≈ 2e-7 m (as in tests/contact_fallback.rs at
    // tol 1e-5); bound 1e-6 m.
    let mut worst: f64 = 0.0;
    for (i, a) in nodes.iter().enumerate() {
        worst = worst.max(r - a.x.z);
        worst = worst
            .max(a.x.x.abs() + r - half)
            .max(a.x.y.abs() + r - half);
        for b in &nodes[i + 1..] {
            worst = worst.max(2.0 * r - (a.x - b.x).norm());
        }
    }
    assert!(worst < 1e-6, "penetration {worst:e} m");
    // The lower layer rests on the floor: its centres at z = r, to the same bound.
    let mut heights: Vec<f64> = nodes.iter().map(|s| s.x.z).collect();
    heights.sort_by(f64::total_cmp);
    for z in &heights[..4] {
        assert!((z - r).abs() < 1e-6, "lower sphere at z = {z} m");
    }
    // The upper layer rests on it (the box, 24 cm wide, holds two 10 cm spheres side by side).
    for z in &heights[4..] {
        assert!(*z > r + 0.05, "upper sphere at z = {z} m");
    }
}
