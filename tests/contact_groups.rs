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

/// The candidate list kept between updates (a Verlet list) finds exactly the pairs a search of
/// every pair finds: 300 spheres of two sizes in an open box, moving at random (drifts within
/// the skin, jumps beyond it, speeds that grow and shrink) over 300 updates, each compared with
/// the brute-force creation and keeping thresholds of the module docs (`margin + 2h(|v_a| +
/// |v_b|)` for a new pair, `2 margin + 4h(|v_a| + |v_b|)` for one the group has; `|v_a|` alone
/// against a plane). The comparison is exact: the same gaps and thresholds decide in both.
#[test]
fn candidate_list_finds_exactly_the_pairs_of_a_full_search() {
    use saltus::core::fd::Rng;
    use saltus::core::Detector;
    use std::collections::BTreeSet;
    let (n, h, margin) = (300usize, 1e-3, 1e-3);
    let mut rng = Rng::new(7);
    let mut model = Model::new();
    let mut ids = Vec::new();
    let mut radii = Vec::new();
    let half = 0.15;
    let mut group = ContactGroup::new("g").margin(margin).open_box(half);
    for i in 0..n {
        // A cube of 0.3 m holds the 300 spheres of radius 0.01–0.02 m densely enough that
        // every sphere has candidates and a few dozen pairs qualify at a time; the box's floor
        // is its bottom face.
        let x = rng.vec3(half) + Vector3::new(0.0, 0.0, half);
        let id = model.add_node(NodeDef::frame(format!("s{i}"), x)).unwrap();
        let r = if i % 3 == 0 { 0.02 } else { 0.01 };
        model
            .add_element(format!("m{i}"), RigidBody::sphere(id, 1.0, r).unwrap())
            .unwrap();
        group = group.sphere(id, r);
        ids.push(id);
        radii.push(r);
    }
    let mut states: Vec<NodeState> = model.nodes().iter().map(|d| d.initial).collect();
    // Planes of `open_box`: floor z = 0, walls x = ∓half, y = ∓half (normals inwards), named
    // `plane1` … `plane5` in that order; plane pairs are keyed (sphere, n + plane index).
    let planes = [
        (Vector3::zeros(), Vector3::z()),
        (Vector3::new(-half, 0.0, 0.0), Vector3::x()),
        (Vector3::new(half, 0.0, 0.0), -Vector3::x()),
        (Vector3::new(0.0, -half, 0.0), Vector3::y()),
        (Vector3::new(0.0, half, 0.0), -Vector3::y()),
    ];
    let mut expected: BTreeSet<(usize, usize)> = BTreeSet::new();
    let (mut total, mut planes_seen, mut kept_only) = (0, 0, 0);
    for step in 0..300 {
        // Motion: small drifts; every 40th update a jump of up to 3 cm per axis for a tenth
        // of the spheres; speeds up to 0.87 m/s (0.5 per axis), with bursts to 8.7 m/s every
        // 50 updates; the step size changes every 100 updates (1e-3, 5e-4, 2e-3 s).
        let h = [h, 0.5 * h, 2.0 * h][step / 100];
        for (i, s) in states.iter_mut().enumerate() {
            let burst = if step % 50 == 25 && i % 7 == 0 {
                10.0
            } else {
                1.0
            };
            s.v = rng.vec3(0.5) * burst;
            s.x += rng.vec3(2e-4);
            if step % 40 == 39 && i % 10 == 0 {
                s.x += rng.vec3(0.03);
            }
        }
        group.update(&mut model, 0.0, h, &states).unwrap();
        let speed = |i: usize| states[ids[i].index()].v.norm();
        let x = |i: usize| states[ids[i].index()].x;
        let radii = &radii;
        // Every sphere pair and sphere–plane pair (key, gap, the speeds' sum).
        let sphere_pairs = (0..n).flat_map(|i| {
            (i + 1..n).map(move |j| {
                let gap = (x(i) - x(j)).norm() - radii[i] - radii[j];
                ((i, j), gap, speed(i) + speed(j))
            })
        });
        let plane_pairs = (0..n).flat_map(|i| {
            let planes = &planes;
            planes.iter().enumerate().map(move |(p, (point, normal))| {
                ((i, n + p), normal.dot(&(x(i) - point)) - radii[i], speed(i))
            })
        });
        let mut wanted = BTreeSet::new();
        for (key, gap, reach) in sphere_pairs.chain(plane_pairs) {
            let create = margin + 2.0 * h * reach;
            let keep = 2.0 * margin + 4.0 * h * reach;
            let held = expected.contains(&key);
            if gap < if held { keep } else { create } {
                wanted.insert(key);
                // Held by the keeping threshold alone (the hysteresis at work).
                kept_only += usize::from(gap >= create);
            }
        }
        expected = wanted;
        let found: BTreeSet<(usize, usize)> = model
            .element_names()
            .iter()
            .filter_map(|name| {
                let pair = name.strip_prefix("g:")?;
                let (a, b) = pair.split_once('-')?;
                let index = |s: &str| s.strip_prefix('s')?.parse::<usize>().ok();
                let other = match b.strip_prefix("plane") {
                    Some(p) => n + p.parse::<usize>().ok()? - 1,
                    None => index(b)?,
                };
                Some((index(a)?, other))
            })
            .collect();
        assert_eq!(found, expected, "update {step}");
        total += expected.len();
        planes_seen += expected.iter().filter(|p| p.1 >= n).count();
    }
    // The comparison saw contacts, and the list was reused between builds but also rebuilt
    // (after the jumps and the speed bursts).
    assert!(total > 1000, "{total} qualifying pairs in all");
    assert!(planes_seen > 100, "{planes_seen} plane contacts in all");
    assert!(
        kept_only > 10,
        "{kept_only} pairs held by the keeping threshold alone"
    );
    let builds = group.candidate_builds();
    assert!((2..150).contains(&builds), "{builds} builds in 300 updates");
}

/// The candidate list is rebuilt exactly when a pair left out of it could qualify: two spheres
/// (r = 1 cm, margin 1 mm, at rest: list distance `c = 2 margin + skin` = 7 mm) start 0.1 mm
/// beyond it. Each moved 1 mm towards the other keeps the list (`2 · 1 + 2 ≤ 7` mm) and no
/// contact is due; moved 3.1 mm each, their gap (0.9 mm) is below the margin: the list must be
/// rebuilt and the contact created, which a test of the move without the factor 2 (each sphere
/// moves) would miss. At the start positions again, approach speeds of 1.6 m/s make the
/// creation threshold `margin + 2h(|v_a| + |v_b|)` (7.4 mm) exceed the gap (7.1 mm): the list
/// must be rebuilt for the current speeds.
#[test]
fn candidate_list_is_rebuilt_when_a_left_out_pair_can_qualify() {
    use saltus::core::Detector;
    use saltus::elements::contact::group::SKIN_FRACTION;
    let (r, margin, h) = (0.01, 1e-3, 1e-3);
    let c = 2.0 * margin + SKIN_FRACTION * r;
    let d0 = 2.0 * r + c + 1e-4;
    let setup = || {
        let mut model = Model::new();
        let a = model
            .add_node(NodeDef::frame("a", Vector3::zeros()))
            .unwrap();
        let b = model
            .add_node(NodeDef::frame("b", Vector3::new(d0, 0.0, 0.0)))
            .unwrap();
        let group = ContactGroup::new("g").spheres(&[a, b], r).margin(margin);
        let states: Vec<NodeState> = model.nodes().iter().map(|d| d.initial).collect();
        (model, group, states)
    };
    let (mut model, mut group, mut states) = setup();
    group.update(&mut model, 0.0, h, &states).unwrap();
    assert_eq!((group.contact_count(), group.candidate_builds()), (0, 1));
    let approach = |states: &mut [NodeState], each: f64| {
        states[0].x.x = each;
        states[1].x.x = d0 - each;
    };
    approach(&mut states, 1e-3);
    group.update(&mut model, 0.0, h, &states).unwrap();
    assert_eq!(
        (group.contact_count(), group.candidate_builds()),
        (0, 1),
        "1 mm each: the list holds, no contact due"
    );
    approach(&mut states, 3.1e-3);
    group.update(&mut model, 0.0, h, &states).unwrap();
    assert_eq!(
        (group.contact_count(), group.candidate_builds()),
        (1, 2),
        "3.1 mm each: rebuilt, the contact created"
    );

    let (mut model, mut group, mut states) = setup();
    group.update(&mut model, 0.0, h, &states).unwrap();
    states[0].v = Vector3::new(1.6, 0.0, 0.0);
    states[1].v = Vector3::new(-1.6, 0.0, 0.0);
    group.update(&mut model, 0.0, h, &states).unwrap();
    assert_eq!(
        (group.contact_count(), group.candidate_builds()),
        (1, 2),
        "approaching at 1.6 m/s each: rebuilt, the contact created"
    );
}
