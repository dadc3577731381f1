//! Warm start of the contact multipliers (`NsgaOptions::warm_start`): each position and
//! velocity solve starts from the contact's last converged multipliers instead of zero.
//!
//! Two persistent-contact situations with exact answers, run with and without the warm start:
//! a column of three frictional spheres resting on the floor (every contact loaded at every
//! step) and a sphere launched sliding that comes to pure rolling. The warm start must change
//! the Newton path only: the same states to solver tolerance, the same analytic values, and
//! fewer correction iterations.

use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::contact::spheres::SphereContact;
use saltus::prelude::*;

const R: f64 = 0.05;
const M: f64 = 0.5;
const MU: f64 = 0.3;
const G: f64 = 9.81;
const H: f64 = 1e-3;
const V0: f64 = 1.0;
/// The sliding sphere's lane, away from the column.
const LANE_Y: f64 = 1.0;

/// The column (spheres `s0` bottom … `s2` top, touching, at rest) and the slider `roller`
/// (on the floor at `x = 0`, `v = V0` along x, no spin).
fn model() -> Model {
    let mut model = Model::new();
    let mut ids = Vec::new();
    for k in 0..3 {
        let z = R + 2.0 * R * k as f64;
        let id = model
            .add_node(NodeDef::frame(format!("s{k}"), Vector3::new(0.0, 0.0, z)))
            .unwrap();
        model
            .add_element(format!("m{k}"), RigidBody::sphere(id, M, R).unwrap())
            .unwrap();
        ids.push(id);
    }
    let floor = PlaneContact::sphere(ids[0], R, Vector3::zeros(), Vector3::z())
        .unwrap()
        .friction(MU);
    model.add_element("floor", floor).unwrap();
    for k in 0..2 {
        let c = SphereContact::spheres(ids[k], ids[k + 1], R, R)
            .unwrap()
            .friction(MU);
        model.add_element(format!("c{k}"), c).unwrap();
    }
    let roller = model
        .add_node(
            NodeDef::frame("roller", Vector3::new(0.0, LANE_Y, R))
                .velocity(Vector3::new(V0, 0.0, 0.0)),
        )
        .unwrap();
    model
        .add_element("roller_body", RigidBody::sphere(roller, M, R).unwrap())
        .unwrap();
    let lane = PlaneContact::sphere(roller, R, Vector3::zeros(), Vector3::z())
        .unwrap()
        .friction(MU);
    model.add_element("lane", lane).unwrap();
    model
}

struct Run {
    sink: MemorySink,
    summary: RunSummary,
}

/// 0.3 s at h = 1e-3 under gravity, with or without the warm start.
fn options(warm_start: bool) -> NsgaOptions {
    NsgaOptions {
        h: H,
        t_end: 0.3,
        gravity: Vector3::new(0.0, 0.0, -G),
        warm_start,
        ..Default::default()
    }
}

fn run(warm_start: bool) -> Run {
    let mut model = model();
    let opts = options(warm_start);
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    Run { sink, summary }
}

#[test]
fn warm_start_changes_the_newton_path_not_the_solution() {
    let (cold, warm) = (run(false), run(true));
    let nodes = ["s0", "s1", "s2", "roller"];
    let names = &warm.sink.layout.node_names;
    let index = |name: &str| names.iter().position(|n| n == name).unwrap();

    // Same states: both runs converge every stage to ‖r‖ ≤ tol (ref + tol_f) with tol = 1e-8,
    // a position residual k g of ≤ 1e-8 × (m g h² scale ≈ 5e-6 kg m) i.e. ~1e-13 m per step,
    // and velocities ~1e-8 × g h ≈ 1e-10 m/s; over 300 steps of a dissipative, non-chaotic
    // motion these stay below 1e-9 m and 1e-8 m/s.
    let mut worst_x: f64 = 0.0;
    let mut worst_v: f64 = 0.0;
    for (a, b) in cold.sink.nodes.iter().zip(&warm.sink.nodes) {
        for name in nodes {
            let (a, b) = (&a[index(name)], &b[index(name)]);
            worst_x = worst_x.max((a.x - b.x).amax());
            worst_v = worst_v
                .max((a.v - b.v).amax())
                .max((a.omega - b.omega).amax());
        }
    }
    assert!(worst_x < 1e-9, "positions differ by {worst_x:e} m");
    assert!(worst_v < 1e-8, "velocities differ by {worst_v:e}");

    for r in [&cold, &warm] {
        let last = r.sink.nodes.last().unwrap();
        // The column stays at rest where it started: exact no-penetration at position level
        // (1e-12 m, the round-off of the position correction) and zero velocity.
        for k in 0..3 {
            let s = &last[index(&format!("s{k}"))];
            let z = R + 2.0 * R * k as f64;
            assert!(
                (s.x - Vector3::new(0.0, 0.0, z)).amax() < 1e-12,
                "s{k} at {}",
                s.x
            );
            assert!(s.v.amax() < 1e-10 && s.omega.amax() < 1e-10, "s{k} moves");
        }
        // The floor carries the column's weight: normal impulse 3 m g h per step (to the
        // Newton tolerance 1e-8, relative).
        let floor = r.sink.channel("floor", "impulse").unwrap();
        let weight = 3.0 * M * G * H;
        assert!(((floor.last().unwrap()[0] - weight) / weight).abs() < 1e-8);
        // The slider: friction −μ m g until pure rolling at t = 2 V0 /(7 μ g) = 0.0485 s, then
        // rolling at 5/7 V0 — angular momentum about the contact point is conserved by the
        // contact impulses, so the value is exact for any h (1e-8 m/s: solver tolerance).
        let roller = &last[index("roller")];
        assert!(
            (roller.v.x - 5.0 / 7.0 * V0).abs() < 1e-8,
            "rolling speed {}",
            roller.v.x
        );
        assert!(
            (roller.v.x - R * roller.omega.y).abs() < 1e-8,
            "not rolling"
        );
    }

    // Here a cold start already finds every status in one correction: same iteration counts.
    let (c, w) = (cold.summary.iterations(), warm.summary.iterations());
    eprintln!("iterations (smooth, position, velocity): cold {c:?}, warm {w:?}");
    assert!(w[1] <= c[1] && w[2] <= c[2], "cold {c:?}, warm {w:?}");
}

/// Eight spheres (2 × 2 × 2, jittered) fall into a box and settle, μ = 0.3, contacts detected
/// at run time: the loaded contacts of the forming pile start in their status.
fn pile(warm_start: bool) -> (Vec<NodeState>, RunSummary) {
    use saltus::core::fd::Rng;
    use saltus::elements::contact::group::ContactGroup;
    let mut model = Model::new();
    let mut rng = Rng::new(7);
    let mut ids = Vec::new();
    for k in 0..8 {
        let (ix, iy, iz) = (k % 2, (k / 2) % 2, k / 4);
        let jitter = 0.004 * (2.0 * rng.uniform() - 1.0);
        let x = Vector3::new(
            -0.055 + 0.11 * ix as f64 + jitter,
            -0.055 + 0.11 * iy as f64 - jitter,
            R + 0.01 + 0.11 * iz as f64,
        );
        let id = model.add_node(NodeDef::frame(format!("b{k}"), x)).unwrap();
        model
            .add_element(format!("m{k}"), RigidBody::sphere(id, M, R).unwrap())
            .unwrap();
        ids.push(id);
    }
    let half = 0.12;
    model.add_detector(
        ContactGroup::new("grains")
            .spheres(&ids, R)
            .friction(MU)
            .open_box(half),
    );
    let opts = options(warm_start);
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    while solver.time() < 0.3 - 0.5 * H {
        solver.step(&mut model).unwrap();
    }
    (solver.nodes().to_vec(), solver.summary())
}

#[test]
fn warm_start_pays_in_a_settling_pile() {
    let ((cold, c), (warm, w)) = (pile(false), pile(true));
    let worst = cold
        .iter()
        .zip(&warm)
        .map(|(a, b)| (a.x - b.x).amax())
        .fold(0.0, f64::max);
    let (ci, wi) = (c.iterations(), w.iterations());
    eprintln!("largest position difference {worst:e} m; iterations cold {ci:?}, warm {wi:?}");
    // Same solution to solver tolerance: each stage converges to tol = 1e-8 relative, so the
    // runs may differ by ~1e-8 of the motion per step; the impacts and stick–slip changes of
    // the fall (0.1 m) pass such differences on. Bound: 1e-6 of the fall, 1e-7 m (measured
    // 5e-9 m).
    assert!(worst < 1e-7, "piles differ by {worst:e} m");
    // Measured: less than half the correction iterations (position + velocity over the run,
    // 1 067 + 1 057 → 496 + 375); required: at most three quarters.
    let (cold_it, warm_it) = (ci[1] + ci[2], wi[1] + wi[2]);
    assert!(4 * warm_it <= 3 * cold_it, "cold {ci:?}, warm {wi:?}");
}
