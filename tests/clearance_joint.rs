//! Validation case V18 (spec `validation-cases.md`): the flexible crank–slider of
//! `models/flexible_crank.toml` with a revolute clearance joint at the wrist pin
//! (`models/flexible_crank_clearance.toml`: a sphere-in-sphere contact, journal 5 mm, radial
//! clearance 0.05 mm, restitution 0.9), against the ideal joint, with 0.1 mm, and at h/2.
//!
//! The thesis reports (figures, no tabulated values): with 0.05 mm the slider velocity is
//! close to the ideal joint's and the journal stays practically in permanent contact; with
//! 0.1 mm the contact separates at some instants and the force is larger; the results converge
//! as h decreases, the force at h = 1e-6 s.

use saltus::core::output::ResultSink;
use saltus::prelude::*;

const CRANK_SPEED: f64 = 523.5987755982989;
const CRANK: f64 = 0.05;

/// Slider velocity x per step, and per step the wrist-pin contact's normal impulse \[N s\], for
/// the model (`clearance`: bearing radius − journal radius \[m\], `None`: the ideal joint) run
/// over two crank turns at step `h`.
fn run(clearance: Option<f64>, h: f64) -> (Vec<f64>, Vec<f64>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/models/");
    let text = match clearance {
        None => std::fs::read_to_string(format!("{dir}flexible_crank.toml")).unwrap(),
        Some(c) => std::fs::read_to_string(format!("{dir}flexible_crank_clearance.toml"))
            .unwrap()
            .replace(
                "cavity_radius = 0.00505",
                &format!("cavity_radius = {}", 0.005 + c),
            ),
    };
    let mut file = saltus::io::parse_str(&text, saltus::io::Format::Toml, "v18.toml").unwrap();
    let mut opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    opts.h = h;
    let slider = file.model.node_id("slider").unwrap().index();
    let mut solver = Nsga::new(&mut file.model, opts).unwrap();
    let mut sink = MemorySink::default();
    sink.begin(solver.layout()).unwrap();
    let mut v = Vec::new();
    while solver.time() < file.simulation.t_end - 1e-12 {
        solver.step(&mut file.model).unwrap();
        v.push(solver.nodes()[slider].v.x);
        solver.record(&file.model, &mut sink).unwrap();
    }
    let impulse = sink
        .contacts
        .iter()
        .map(|rows| rows.iter().map(|r| r.impulse[0]).fold(0.0, f64::max))
        .collect();
    (v, impulse)
}

/// Whether the journal carried load in each step: a normal impulse above 1e-9 N s (a mean force
/// over the step above 1e-4 N at h = 1e-5, 1e-3 N at h = 1e-6; the loads are hundreds of N).
fn loaded(impulse: &[f64]) -> Vec<bool> {
    impulse.iter().map(|p| *p > 1e-9).collect()
}

/// Largest difference between two slider-velocity histories over the second crank turn,
/// sampled every `stride_a` and `stride_b` steps at the same instants.
fn second_turn_difference(a: &[f64], stride_a: usize, b: &[f64], stride_b: usize) -> f64 {
    let n = a.len() / stride_a;
    (n / 2..n)
        .map(|k| (a[(k + 1) * stride_a - 1] - b[(k + 1) * stride_b - 1]).abs())
        .fold(0.0, f64::max)
}

#[test]
fn v18_clearance_joint_follows_the_ideal_joint_and_converges_in_h() {
    let h = 1e-5;
    let (ideal, _) = run(None, h);
    let (small, small_impulse) = run(Some(5e-5), h);
    let (large, large_impulse) = run(Some(1e-4), h);
    let (small_closed, large_closed) = (loaded(&small_impulse), loaded(&large_impulse));
    let (fine, _) = run(Some(5e-5), h / 2.0);
    // The slider's speed scale: crank speed × crank length = 26.2 m/s.
    let scale = CRANK_SPEED * CRANK;
    let vmax = ideal.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    assert!(vmax > 0.9 * scale && vmax < 1.2 * scale, "{vmax}");
    let d_small = second_turn_difference(&small, 1, &ideal, 1);
    let d_large = second_turn_difference(&large, 1, &ideal, 1);
    let d_h = second_turn_difference(&small, 1, &fine, 2);
    let turn = small_closed.len() / 2;
    let contact_small = small_closed[turn..].iter().filter(|c| **c).count() as f64 / turn as f64;
    let contact_large = large_closed[turn..].iter().filter(|c| **c).count() as f64 / turn as f64;
    eprintln!(
        "V18: slider velocity difference to the ideal joint over the second turn: \
         {d_small:.3} m/s (0.05 mm), {d_large:.3} m/s (0.1 mm); h → h/2: {d_h:.3} m/s; \
         journal loaded in {:.1} % (0.05 mm) and {:.1} % (0.1 mm) of the steps",
        100.0 * contact_small,
        100.0 * contact_large
    );
    // "Slider velocity with 0.05 mm clearance ≈ ideal joint": the thesis gives no number; 2 %
    // of the peak slider speed is what reads as the same curve on its figure (the criterion of
    // tests/sweep_example.rs; observed 1.1 %). And closer than with 0.1 mm.
    assert!(d_small < 0.02 * vmax, "{d_small}");
    assert!(d_small < d_large, "{d_small} vs {d_large}");
    // "Journal practically in permanent contact for 0.05 mm": loaded in ≥ 90 % of the steps.
    // (At this step the 0.1 mm journal also stays loaded after the first turn, at 208 N or
    // more; its separations appear at the thesis' converged step, see the next test.)
    assert!(contact_small >= 0.9, "{contact_small}");
    // Converging in h: halving h changes the slider velocity by less than the clearance does.
    assert!(d_h < d_small, "{d_h} vs {d_small}");
}

/// V18 at the step where the thesis finds the contact force converged, h = 1e-6 s, over the
/// second crank turn (after the start-up impacts of the first): with 0.05 mm the journal stays
/// in contact; with 0.1 mm it separates and hits the bearing again many times per turn (the
/// thesis: "the force reaches zero at some instants"), and the largest force is larger; the
/// impulses' impact part is negligible at 0.05 mm and a small share at 0.1 mm.
#[test]
fn v18_larger_clearance_separates_at_the_converged_step() {
    let h = 1e-6;
    let (_, small) = run(Some(5e-5), h);
    let (_, large) = run(Some(1e-4), h);
    let turn = small.len() / 2;
    let second = |p: &[f64]| {
        let on = loaded(&p[turn..]);
        let fraction = on.iter().filter(|c| **c).count() as f64 / on.len() as f64;
        let separations = on.windows(2).filter(|w| w[0] && !w[1]).count();
        let peak = p[turn..].iter().fold(0.0_f64, |a, b| a.max(*b)) / h;
        // Impulse decomposition (`contact-force.md` §2, the default noise threshold 1e-6):
        // impact part (isolated + over the smooth curve) against the continuous part.
        let d = saltus::core::contact_force::decompose(p, 1e-6);
        let impact: f64 = (turn..p.len()).map(|k| d.impact(k)).sum();
        let smooth: f64 = d.smooth[turn..].iter().sum();
        (fraction, separations, peak, impact / smooth)
    };
    let (small_loaded, small_separations, small_peak, small_impact) = second(&small);
    let (large_loaded, large_separations, large_peak, large_impact) = second(&large);
    eprintln!(
        "V18 h = 1e-6, second turn: 0.05 mm loaded in {:.1} % of the steps, {small_separations} \
         separations, largest impulse/h {small_peak:.0} N, impact part / continuous part \
         {small_impact:.1e}; 0.1 mm loaded in {:.1} %, {large_separations} separations, largest \
         impulse/h {large_peak:.0} N, impact part / continuous part {large_impact:.1e}",
        100.0 * small_loaded,
        100.0 * large_loaded
    );
    // 0.05 mm: permanent contact (observed: every step loaded, no separation).
    assert!(small_loaded > 0.99 && small_separations == 0);
    // 0.1 mm: zero-force instants (observed: 9.7 % of the steps unloaded, 112 separations);
    // required: at least 1 % unloaded and repeated separations.
    assert!(large_loaded < 0.99 && large_separations >= 10);
    assert!(large_peak > small_peak, "{large_peak} vs {small_peak}");
    // The thesis' force split (spec §6 of `contact-force.md`): "continuous part dominant;
    // impulsive part ≈ 0 for 0.05 mm". The peak of the impulsive part (≈ 700 N at 0.1 mm)
    // needs the contact stiffness, which the thesis does not give; the impulse shares do not.
    // (With Hertz's stiffness of the model's steel journal, 5 mm in a 5.1 mm bearing, K =
    // 7.8e10 N/m^1.5, the recovered peak over the second turn is 1.44 kN: not reproduced.)
    // 0.05 mm: only the noise peaks of a loaded contact (observed 6e-6 of the continuous
    // impulse, two decades below the bound); 0.1 mm: real impacts — at least 1 %, a hundred
    // times the 0.05 mm noise — but the continuous part dominates: the impact part stays below
    // a fifth of it (observed 4 %).
    assert!(small_impact < 1e-4, "{small_impact}");
    assert!(large_impact > 1e-2 && large_impact < 0.2, "{large_impact}");
}
