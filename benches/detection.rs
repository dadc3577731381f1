//! Cost of the run-time contact detection (`ContactGroup`, R*-tree broad phase) against the
//! number of spheres: `N` spheres of radius 0.05 m on a jittered cubic lattice (spacing 0.11 m,
//! so neighbours are within the margin now and then), a floor and four walls, as in the
//! granular column. Times the update that creates the contacts and the steady-state update
//! (same states: tree build, queries, no change), and prints one JSON line per `N` with the
//! exponent of the steady-state cost between consecutive sizes.
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
    let mut previous: Option<(usize, f64)> = None;
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
        let exponent = previous
            .map(|(n0, s0)| format!("{:.3}", (steady / s0).ln() / (n as f64 / n0 as f64).ln()))
            .unwrap_or_else(|| "null".into());
        println!(
            "{{\"case\": \"detection\", \"N\": {n}, \"contacts\": {}, \"create_ms\": {:.3}, \
             \"update_ms\": {:.4}, \"update_us_per_sphere\": {:.4}, \"exponent\": {exponent}}}",
            group.contact_count(),
            1e3 * create,
            1e3 * steady,
            1e6 * steady / n as f64,
        );
        previous = Some((n, steady));
    }
}
