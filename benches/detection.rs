//! Cost of the run-time contact detection (`ContactGroup`: candidate pairs kept between updates,
//! rebuilt from an R*-tree when the spheres have moved) against the number of spheres: `N`
//! spheres of radius 0.05 m on a jittered cubic lattice (spacing 0.11 m, so neighbours are
//! within the margin now and then), a floor and four walls, as in the granular column. Times
//! the update that creates the contacts, the steady-state update (same states: the candidate
//! list reused, no change) and an update that rebuilds the list (every sphere moved by 3 cm,
//! alternately there and back, in a group of the same spheres without the box: the list's
//! tree, queries and pair tests, no contact created or removed),
//! and prints one JSON line per `N` with the exponents of the steady-state and rebuilding
//! costs between consecutive sizes.
//!
//! Run: `cargo bench --bench detection -- [N ...]` (default 1000 10000).

use saltus::core::fd::Rng;
use saltus::core::Detector;
use saltus::elements::body::RigidBody;
use saltus::elements::contact::group::ContactGroup;
use saltus::prelude::*;
use std::time::Instant;

const R: f64 = 0.05;
const SPACING: f64 = 0.11;

fn main() {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![1000, 10000];
    }
    let mut previous: Option<(usize, f64, f64)> = None;
    for n in sizes {
        let nx = ((n as f64).cbrt() - 1e-9).ceil() as usize;
        let side = nx as f64 * SPACING + 0.02;
        let mut rng = Rng::new(7);
        let mut model = Model::new();
        let mut ids = Vec::new();
        for k in 0..n {
            let (ix, iy, iz) = (k % nx, (k / nx) % nx, k / (nx * nx));
            let x = Vector3::new(
                -side / 2.0 + 0.01 + SPACING / 2.0 + ix as f64 * SPACING,
                -side / 2.0 + 0.01 + SPACING / 2.0 + iy as f64 * SPACING,
                R + 0.01 + iz as f64 * SPACING,
            ) + rng.vec3(0.006);
            let id = model.add_node(NodeDef::frame(format!("b{k}"), x)).unwrap();
            model
                .add_element(format!("m{k}"), RigidBody::sphere(id, 0.5, R).unwrap())
                .unwrap();
            ids.push(id);
        }
        let half = side / 2.0;
        let mut group = ContactGroup::new("grains")
            .spheres(&ids, R)
            .friction(0.3)
            .margin(0.005)
            .open_box(half);
        let states: Vec<NodeState> = model.nodes().iter().map(|d| d.initial).collect();
        let t0 = Instant::now();
        group.update(&mut model, 0.0, 1e-3, &states).unwrap();
        let create = t0.elapsed().as_secs_f64();
        let reps = (200_000 / n).clamp(3, 200);
        let t1 = Instant::now();
        for _ in 0..reps {
            group.update(&mut model, 0.0, 1e-3, &states).unwrap();
        }
        let steady = t1.elapsed().as_secs_f64() / reps as f64;
        assert_eq!(
            group.candidate_builds(),
            1,
            "the steady updates keep the list"
        );
        // Every sphere 3 cm along x and back, beyond the list's skin at each update, for the
        // same spheres without the box on a model of their own: the sphere pairs move
        // together, so the updates rebuild the list and change no contact.
        let moved: Vec<NodeState> = states
            .iter()
            .map(|s| NodeState {
                x: s.x + Vector3::new(0.03, 0.0, 0.0),
                ..*s
            })
            .collect();
        let mut free_model = Model::new();
        for d in model.nodes() {
            free_model.add_node(d.clone()).unwrap();
        }
        let mut free = ContactGroup::new("free")
            .spheres(&ids, R)
            .friction(0.3)
            .margin(0.005);
        free.update(&mut free_model, 0.0, 1e-3, &states).unwrap();
        let (builds, churn) = (free.candidate_builds(), free.churn());
        let t2 = Instant::now();
        for k in 0..reps {
            let at = if k % 2 == 0 { &moved } else { &states };
            free.update(&mut free_model, 0.0, 1e-3, at).unwrap();
        }
        let rebuild = t2.elapsed().as_secs_f64() / reps as f64;
        assert_eq!(
            free.candidate_builds(),
            builds + reps,
            "every moved update rebuilds"
        );
        assert_eq!(free.churn(), churn, "the moves change no contact");
        let exponent = |now: f64, before: Option<(usize, f64)>| {
            before
                .map(|(n0, s0)| format!("{:.3}", (now / s0).ln() / (n as f64 / n0 as f64).ln()))
                .unwrap_or_else(|| "null".into())
        };
        println!(
            "{{\"case\": \"detection\", \"N\": {n}, \"contacts\": {}, \"create_ms\": {:.3}, \
             \"update_ms\": {:.4}, \"update_us_per_sphere\": {:.4}, \"exponent\": {}, \
             \"rebuild_ms\": {:.4}, \"rebuild_exponent\": {}}}",
            group.contact_count(),
            1e3 * create,
            1e3 * steady,
            1e6 * steady / n as f64,
            exponent(steady, previous.map(|p| (p.0, p.1))),
            1e3 * rebuild,
            exponent(rebuild, previous.map(|p| (p.0, p.2))),
        );
        previous = Some((n, steady, rebuild));
    }
}
