//! The smooth Newton's start (`NsgaOptions::smooth_start`) on the rigid chain of the speed
//! benchmark (`benches/chain.rs`, case (e) of `../shared/bench-peers`): the choices follow the
//! same motion to the Newton tolerance and differ in the work to get there.

#[path = "bench_models/mod.rs"]
mod bench_models;

use saltus::prelude::*;
use saltus::solvers::SmoothStart;

/// A chain of `n` links released horizontally, 200 steps of 1 ms with the default options
/// (modified Newton in the smooth stage); its summary and its recorded motion.
fn run(n: usize, smooth_start: SmoothStart) -> (RunSummary, MemorySink) {
    run_with(n, smooth_start, true)
}

/// [`run`] with the warm starts (`NsgaOptions::warm_start`) on or off.
fn run_with(n: usize, smooth_start: SmoothStart, warm_start: bool) -> (RunSummary, MemorySink) {
    run_options(
        n,
        NsgaOptions {
            smooth_start,
            warm_start,
            ..NsgaOptions::default()
        },
    )
}

/// [`run`] with `opts` but for the chain's step, duration, `ρ∞` and gravity.
fn run_options(n: usize, opts: NsgaOptions) -> (RunSummary, MemorySink) {
    let mut model = bench_models::chain(n, 0.1);
    let h = 1e-3;
    let opts = NsgaOptions {
        h,
        t_end: 200.0 * h,
        rho_inf: 0.8,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        ..opts
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    (summary, sink)
}

/// Largest distance between the same node's positions in two recorded runs \[m\].
fn largest_gap(a: &MemorySink, b: &MemorySink) -> f64 {
    a.nodes
        .iter()
        .zip(&b.nodes)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(a, b)| (a.x - b.x).norm()))
        .fold(0.0_f64, f64::max)
}

/// On the chain released from rest (smooth motion: the quadratic prediction's error is O(h³)
/// against the linear one's O(h²)), the adaptive start takes the quadratic extrapolation on
/// nearly every step and needs fewer smooth iterations and factorizations than the linear
/// one, which needs fewer than the last step's values; the three follow the same motion to
/// the Newton tolerance.
#[test]
fn quadratic_start_where_it_predicts_better_saves_smooth_iterations() {
    for n in [10, 30] {
        let (adaptive, x_adaptive) = run(n, SmoothStart::Adaptive);
        let (linear, x_linear) = run(n, SmoothStart::Linear);
        let (last, x_last) = run(n, SmoothStart::Last);
        let work = |s: &RunSummary| {
            let st = s.stage("smooth");
            (st.iterations, st.numeric_factorizations)
        };
        let (wa, wl, w0) = (work(&adaptive), work(&linear), work(&last));
        println!(
            "N = {n}: quadratic starts {} of {} steps; smooth (iterations, factorizations): \
             adaptive {wa:?}, linear {wl:?}, last {w0:?}",
            adaptive.quadratic_starts, adaptive.steps
        );
        // The first four steps cannot start quadratically: three accepted steps of one size
        // give the second difference, and a fourth judges the two predictions.
        assert!(
            adaptive.quadratic_starts >= 9 * adaptive.steps / 10
                && adaptive.quadratic_starts <= adaptive.steps - 4,
            "{} of {}",
            adaptive.quadratic_starts,
            adaptive.steps
        );
        assert_eq!(linear.quadratic_starts + last.quadratic_starts, 0);
        assert!(wa.0 < wl.0 && wl.0 < w0.0, "{wa:?} {wl:?} {w0:?}");
        assert!(wa.1 <= wl.1 && wl.1 <= w0.1, "{wa:?} {wl:?} {w0:?}");
        // The same motion: the smooth solves agree to the tolerance 1e-8 relative to their
        // reference, the joint reactions of up to N m g, i.e. accelerations to ~N · 1e-8 g;
        // integrated over 0.2 s that is ~N · 2e-9 m. Bound with a factor 10 (observed
        // 1.8e-8 / 8.8e-8 m at N = 10 / 30).
        for (other, name) in [(&x_linear, "linear"), (&x_last, "last")] {
            let gap = largest_gap(&x_adaptive, other);
            assert!(gap <= n as f64 * 2e-8, "N = {n}, {name}: {gap:e} m");
        }
    }
}

/// The position correction of a joint model starts from the last step's (`warm_start`): on
/// the 10-link chain its first-order correction from zero ends at about 1.6 × the tolerance
/// and needs a second one, from the last step's it passes after one. The same motion to the
/// tolerance.
#[test]
fn position_correction_starts_from_the_last_one() {
    let n = 10;
    let (warm, x_warm) = run_with(n, SmoothStart::Adaptive, true);
    let (cold, x_cold) = run_with(n, SmoothStart::Adaptive, false);
    let (iw, ic) = (
        warm.stage("position").iterations,
        cold.stage("position").iterations,
    );
    println!(
        "N = {n}, {} steps: position iterations {iw} warm, {ic} cold",
        warm.steps
    );
    // One correction per step, and a second one at the first step allowed for (nothing stored
    // yet; observed 200 in 200 steps, against 365 from zero).
    assert!(
        iw <= warm.steps + 1,
        "{iw} position iterations in {} steps",
        warm.steps
    );
    assert!(
        ic >= 3 * cold.steps / 2,
        "{ic} position iterations in {} steps",
        cold.steps
    );
    // Each step's position solve ends within its tolerance either way, and the smooth solves
    // that follow start from states that differ by that much: the bound of the test above
    // (the smooth solves' tolerance) holds (observed 2.1e-11 m).
    let gap = largest_gap(&x_warm, &x_cold);
    println!("largest position difference {gap:e} m");
    assert!(gap <= n as f64 * 2e-8, "{gap:e} m");
}

/// The position correction and the velocity jump of the 10-link chain (110 unknowns: the
/// sparse LU) share the smooth stage's matrix pattern, and their first factorizations start
/// from its pivot order (`Stage::adopt_pivot_order`): over 200 steps neither searches pivots,
/// while the smooth stage searched once, at the initial acceleration. Without the adoption
/// each searched at its first factorization (1, 1). With the default options the velocity
/// jump solves on the position correction's factorization and never factorizes, so a second
/// run with full Newton (no reuse: every stage factorizes every solve) checks it.
#[test]
fn the_corrections_take_the_smooth_pivot_order() {
    for jacobian_reuse in [NsgaOptions::default().jacobian_reuse, None] {
        let opts = NsgaOptions {
            jacobian_reuse,
            ..NsgaOptions::default()
        };
        let (summary, _) = run_options(10, opts);
        let stage = |name: &str| summary.stage(name);
        assert_eq!(stage("smooth").pivot_searches, 1, "{:?}", stage("smooth"));
        for name in ["position", "velocity"] {
            assert_eq!(stage(name).pivot_searches, 0, "{:?}", stage(name));
        }
        // The position correction factorizes at every step (its first-order matrix); the
        // velocity jump, under full Newton, at every step that needs a correction (199).
        assert!(stage("position").numeric_factorizations >= 100);
        if jacobian_reuse.is_none() {
            let velocity = stage("velocity");
            assert!(velocity.numeric_factorizations >= 100, "{velocity:?}");
        }
    }
}
