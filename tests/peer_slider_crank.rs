//! Case (d) of `../shared/bench-peers` as a validation test: the flexible slider-crank (rigid
//! crank ramped to 150 rad/s, rod of 8 geometrically exact beams, sliding end; model in
//! `tests/bench_models`, timed by `benches/slider_crank.rs`) against the peer's figures, which
//! the speed comparison requires us to reproduce: maximum midpoint deflection of the rod
//! relative to its chord 3.8669 mm, slider position at 0.5 s 0.191693 m (Exudyn 1.13.6,
//! planar geometrically exact beams, generalized-α ρ∞ = 0.9, h = 1e-4 s, deflection sampled
//! every 10 steps).

mod bench_models;
use bench_models::peer_slider_crank;
use saltus::prelude::*;

#[test]
fn flexible_slider_crank_matches_the_peer_to_four_digits() {
    let ne = 8;
    let (mut model, rod) = peer_slider_crank(ne);
    let h = 1e-4;
    let opts = NsgaOptions {
        h,
        t_end: 0.5,
        rho_inf: 0.9,
        gravity: Vector3::zeros(),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut max_deflection: f64 = 0.0;
    for k in 1..=5000 {
        solver.step(&mut model).unwrap();
        if k % 10 == 0 {
            let deflection = bench_models::midpoint_deflection(solver.nodes(), &rod);
            max_deflection = max_deflection.max(deflection.abs());
        }
    }
    let slider = solver.nodes()[rod[ne].index()].x.x;
    let s = solver.summary();
    eprintln!(
        "max midpoint deflection {max_deflection:.7e} m, slider x {slider:.7} m; iterations {:?}, factorizations {:?}",
        s.iterations(),
        s.numeric_factorizations()
    );
    assert!((solver.time() - 0.5).abs() < 1e-12);
    // The peer's figures to the digits it is compared at: half a unit of the last digit.
    assert!(
        (max_deflection - 3.8669e-3).abs() <= 0.5e-7,
        "deflection {max_deflection:e}"
    );
    assert!((slider - 0.191693).abs() <= 0.5e-6, "slider {slider}");
    // The velocity jump cannot start from the position correction's factorization (it carries
    // the stiff beams' h²/2 K), so it refines with its own last one: its matrix moves with the
    // rod's rotation, h ω ≈ 1e-4 · 150 = 1.5e-2 per step, within the refining rate 5e-2, so a
    // fresh factorization is needed on few steps (fewer than a tenth; full Newton: all).
    let velocity = s.stage("velocity");
    assert!(
        velocity.numeric_factorizations * 10 < velocity.solves,
        "{velocity:?}"
    );
}
