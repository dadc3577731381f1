//! The granular column of case (c) of `../shared/bench-peers` (the peers' `granular.py`):
//! `n` spheres (R = 0.05 m, density 1000 kg/m³) on a cubic lattice (spacing 0.11 m, seeded
//! horizontal jitter ±0.004 m) above the floor of an open square box, Coulomb μ = 0.3,
//! contacts detected at run time by one contact group. Shared by `benches/granular.rs` and
//! `tests/contact_fallback.rs` (included by path).

use saltus::core::fd::Rng;
use saltus::elements::body::RigidBody;
use saltus::elements::contact::group::ContactGroup;
use saltus::prelude::*;

/// Sphere radius \[m\].
pub const R: f64 = 0.05;
/// Sphere density \[kg/m³\].
pub const RHO: f64 = 1000.0;
/// Friction coefficient of every contact.
pub const MU: f64 = 0.3;
/// Lattice spacing \[m\].
pub const SPACING: f64 = 0.11;

/// Sphere mass \[kg\].
pub fn mass() -> f64 {
    RHO * 4.0 / 3.0 * std::f64::consts::PI * R.powi(3)
}

/// The contact group of the spheres `ids` in the box of half-width `half` \[m\].
pub fn group(ids: &[NodeId], half: f64) -> ContactGroup {
    ContactGroup::new("grains")
        .spheres(ids, R)
        .friction(MU)
        .open_box(half)
}

/// The column of `n` spheres with its contact group: the model, the sphere nodes and the box
/// half-width \[m\].
pub fn column(n: usize) -> (Model, Vec<NodeId>, f64) {
    let nx = ((n as f64).cbrt() - 1e-9).ceil() as usize;
    let side = nx as f64 * SPACING + 0.02;
    let mut rng = Rng::new(42);
    let mut model = Model::new();
    let mut ids = Vec::new();
    for k in 0..n {
        let (ix, iy, iz) = (k % nx, (k / nx) % nx, k / (nx * nx));
        // `uniform` is in [−1, 1): the clamp saturates about half the draws at ±4 mm. Kept as
        // it is: it defines the benchmark's layout.
        let mut jitter = || 0.004 * (2.0 * rng.uniform() - 1.0).clamp(-1.0, 1.0);
        let x = -side / 2.0 + 0.01 + SPACING / 2.0 + ix as f64 * SPACING + jitter();
        let y = -side / 2.0 + 0.01 + SPACING / 2.0 + iy as f64 * SPACING + jitter();
        let z = R + 0.01 + iz as f64 * SPACING;
        let id = model
            .add_node(NodeDef::frame(format!("b{k}"), Vector3::new(x, y, z)))
            .unwrap();
        model
            .add_element(format!("m{k}"), RigidBody::sphere(id, mass(), R).unwrap())
            .unwrap();
        ids.push(id);
    }
    let half = side / 2.0;
    model.add_detector(group(&ids, half));
    (model, ids, half)
}
