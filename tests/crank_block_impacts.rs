//! V17 (`validation-cases.md`, thesis Ch. 3 after Machado et al.): a crank–rod–slider
//! mechanism whose slider is hit by a free block. Crank 0.153 m, 0.038 kg, I = 7.4e-5 kg m²;
//! rod 0.306 m, 0.076 kg, I = 5.9e-4 kg m²; slider 0.038 kg; block 0.19 kg; perfect revolute
//! joints; crank and rod start aligned along X, the crank turning at 150 rad/s
//! counter-clockwise; the block at x = 0.914 m moving at −15 m/s; gravity −Y. Slider–block
//! contact between spherical surfaces of radius 0.0085 m, e_N = 0.7, frictionless; for the
//! force recovery K = 9.5e9 N/m^{3/2} (E = 1.98e11 Pa, ν = 0.3), n = 3/2, Flores damping.
//!
//! The model is the shipped `models/crank_block.toml`. Modelling choices where the spec is
//! silent: the slider runs in a frictionless straight
//! guide along X (a prismatic joint; with only a unilateral ground contact the rod, whose
//! inertial loads reach hundreds of newtons at 150 rad/s against the slider's 0.37 N weight,
//! would lift it off the ground, and the thesis' slider stays on its line); the block rests on
//! a frictionless ground plane (sphere–plane contact of radius 0.0085 m). Inertias not printed
//! legibly (slider 1.8e-6, block 2.7e-5 kg m²) do not enter: neither body turns.
//!
//! Checked, at h = 1e-3, 5e-4 and 1e-4 s (the thesis' steps): two slider–block impacts; the
//! first at the thesis' 0.0438 s (ours 0.0430–0.0431 s); the recovered durations of both
//! against Hertz's closed form for the same impact and against the thesis' 6.85e-? and
//! 7.5e-? s, which settles its unreadable exponent: −5 (ours 6.56e-5 and 7.47e-5 s). With the
//! −6 reading the thesis' remark that its steps are "up to 150 times" the duration would hold
//! (1e-3/6.85e-6 = 146); with −5 they are up to 15 times — Hertz's law leaves no doubt.
//! Not reproduced: the second impact's instant, 0.0709 s at h = 1e-4 (0.0715 s at 5e-4,
//! 0.0730 s at 1e-3) against the thesis' 0.0672 s; it follows the first impact's outcome,
//! which depends on what the spec does not give (the block's shape, the slider's support).
//! (The crank is free, not driven: it slows as the rod and the slider take up its energy, so
//! the block, at 0.914 − 15 t, meets the slider later than a crank turning at a constant
//! 150 rad/s would make it, ≈ 0.036 s.)

use saltus::io::forces::{recover_table, ContactHistoryTable, RecoveryOptions, Stiffness};
use saltus::prelude::*;

/// Radius of the slider's and the block's contact surfaces \[m\].
const RS: f64 = 0.0085;
/// The spec's contact stiffness \[N/m^{3/2}\].
const K: f64 = 9.5e9;

/// The V17 model: `models/crank_block.toml` (the data above), with its settings.
fn v17() -> saltus::io::ModelFile {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/crank_block.toml");
    saltus::io::load_model(std::path::Path::new(path)).unwrap()
}

#[test]
fn v17_block_hits_the_slider_at_the_thesis_instant_with_hertzian_durations() {
    for h in [1e-3, 5e-4, 1e-4] {
        let mut file = v17();
        // The model file's settings (T = 0.1 s, ρ∞ = 0, tol 1e-8, full Newton as the thesis,
        // gravity −Y) at each of the thesis' steps.
        let mut opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
        assert!(opts.jacobian_reuse.is_none() && file.simulation.t_end == 0.1);
        opts.h = h;
        let model = &mut file.model;
        let mut solver = Nsga::new(model, opts).unwrap();
        let mut sink = MemorySink::default();
        let summary = solver.run(model, &mut sink, &mut |_| {}).unwrap();
        if h == 1e-4 {
            // Newton iterations per step (smooth, position, velocity) within the thesis' max
            // (2, 3, 2) and mean (1, 2, 1) (printed as integers). It does not say at which
            // step; at the coarser ones our smooth stage needs a second iteration more often
            // (the free crank's speed swings between 78 and 150 rad/s within 15 ms).
            let (max, mean) = (summary.max_iterations(), summary.mean_iterations());
            for (k, (mb, ab)) in [(2, 1.0), (3, 2.0), (2, 1.0)].into_iter().enumerate() {
                assert!(max[k] <= mb && mean[k].round() <= ab, "{max:?} {mean:?}");
            }
        }
        let table = ContactHistoryTable::from_memory(&sink);
        let f = recover_table(&table, &RecoveryOptions::new(Stiffness::Given(K))).unwrap();
        // The slider–block contact: effective radius R* = RS/2 (the block–ground one: RS).
        let impacts: Vec<_> = f
            .impacts
            .iter()
            .filter(|i| (table.radius[i.row] - 0.5 * RS).abs() < 1e-12)
            .collect();
        assert_eq!(impacts.len(), 2, "h = {h}: slider–block impacts");
        // First contact at the thesis' 0.0438 s: the block's size is not given, and its
        // half-length (14 mm for a steel cube of 0.19 kg) moves the first contact by ≈ 0.5 ms
        // at the 27 m/s closing speed; with a step of up to 1 ms, 1 ms bounds the difference.
        assert!(
            (impacts[0].time - 0.0438).abs() < 1e-3,
            "h = {h}: first impact at {} s",
            impacts[0].time
        );
        assert!(impacts[1].time > impacts[0].time + 0.01 && impacts[1].time < 0.1);
        let mut line = Vec::new();
        for imp in &impacts {
            let p = imp.pulse.as_ref().unwrap();
            // Hertz's elastic duration for the same impact, T = 2.9432 δ_max / v with
            // δ_max = (5 m* v² / (4 K))^{2/5} (Johnson, Contact Mechanics §11.4), the effective
            // mass from the impulse, m* = Λ / ((1 + e) v). The recovered pulse of e = 0.7 is
            // longer by its slower restitution: by 6–10 % for e = 0.8–0.6 in V16
            // (tests/contact_forces.rs), so within 20 %.
            let v = imp.approach_speed;
            let m_eff = imp.impulse / (1.7 * v);
            let t_hertz = 2.9432 * (5.0 * m_eff * v * v / (4.0 * K)).powf(0.4) / v;
            assert!(
                (p.duration / t_hertz - 1.0).abs() < 0.2,
                "h = {h}, t = {}: T = {:e} s against Hertz {t_hertz:e} s",
                imp.time,
                p.duration
            );
            // The thesis prints 6.85e-? and 7.5e-? s. Read with the exponent −5, ours agree
            // within 5 %: T ∝ (m*²/v)^{1/5} changes by 5 % only for a 13 % different effective
            // mass or a 28 % different approach speed, which our guided slider and the
            // unknown block shape allow; the −6 reading is ten times off.
            let thesis = if imp.time < 0.05 { 6.85e-5 } else { 7.5e-5 };
            assert!(
                (p.duration / thesis - 1.0).abs() < 0.05,
                "h = {h}: T = {:e} s against {thesis:e} s",
                p.duration
            );
            line.push(format!(
                "t = {:.4} s: v = {v:.2} m/s, T = {:.3e} s (Hertz {t_hertz:.3e}), peak {:.0} N",
                imp.time, p.duration, p.peak_force
            ));
        }
        eprintln!(
            "V17 h = {h}: {} slider–block impacts (thesis: 0.0438 s and 0.0672 s, durations \
             6.85e-? and 7.5e-? s): {}",
            impacts.len(),
            line.join("; ")
        );
    }
}
