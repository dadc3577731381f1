//! Dynamic validation of the geometrically exact beam with the NSGA integrator: free vibration
//! of a cantilever against the Euler–Bernoulli first frequency (and its 1/n² convergence),
//! Rayleigh damping (modal damping ratio from the logarithmic decrement; mass-proportional
//! decay of a rigid translation), and energy / angular momentum of a free tumbling beam.

use saltus::elements::beam::{BeamBuilder, BeamLine, BeamSpec};
use saltus::elements::force::NodalLoad;
use saltus::prelude::*;
use std::f64::consts::PI;

/// Steel cantilever 1 m, 20 mm (axis 2, y) × 10 mm (axis 3, z); vibrating along z (bending
/// about section axis 2, `E I₂` with the 10 mm height).
const L: f64 = 1.0;
const E: f64 = 2.1e11;
const NU: f64 = 0.3;
const RHO: f64 = 7850.0;
const WIDTH: f64 = 0.02;
const HEIGHT: f64 = 0.01;

/// `β₁ L = 1.875104…`: first root of `1 + cos x cosh x = 0`.
const BETA1: f64 = 1.875_104_068_711_961;

fn spec() -> BeamSpec {
    BeamSpec::rectangular(E, NU, RHO, WIDTH, HEIGHT)
}

/// Euler–Bernoulli first bending frequency \[rad/s\] along z: `(β₁L)² √(E I₂/(ρ A L⁴))`
/// (shear and rotary inertia change it by O((h/L)²) ≈ 1e-4).
fn omega1() -> f64 {
    let i2 = WIDTH * HEIGHT.powi(3) / 12.0;
    BETA1 * BETA1 * (E * i2 / (RHO * WIDTH * HEIGHT * L.powi(4))).sqrt()
}

fn cantilever(n: usize, spec: &BeamSpec) -> (Model, BeamLine) {
    let mut model = Model::new();
    let root = model
        .add_node(NodeDef::frame("root", Vector3::zeros()).fixed())
        .unwrap();
    let tip = model
        .add_node(NodeDef::frame("tip", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    let line = BeamBuilder::new("beam", spec.clone())
        .line(&mut model, root, tip, n)
        .unwrap();
    (model, line)
}

/// A cantilever released at rest from the static shape under a tip force `p` \[N\] along z
/// (97 % first mode; the higher modes are damped out quickly by stiffness-proportional
/// damping), with section `spec`. The static shape is found on a copy with
/// the load and copied into a model without it (elements referenced to the straight beam).
fn released_cantilever(n: usize, spec: &BeamSpec, p: f64) -> (Model, BeamLine) {
    let (mut loaded, line) = cantilever(n, spec);
    let tip = line.nodes[n];
    loaded
        .add_element(
            "load",
            NodalLoad::on_frame(tip, Vector3::new(0.0, 0.0, p), Vector3::zeros()).unwrap(),
        )
        .unwrap();
    let opts = StaticOptions {
        load_steps: 1,
        // Round-off floor of stiff beams (see tests/beam_static.rs).
        tol: 1e-8,
        gravity: Vector3::zeros(),
        ..Default::default()
    };
    solve_static(&mut loaded, &opts).unwrap();
    let (mut model, line) = cantilever(n, spec);
    for (dst, src) in model.nodes_mut().iter_mut().zip(loaded.nodes()) {
        dst.initial.x = src.initial.x;
        dst.initial.r = src.initial.r;
    }
    (model, line)
}

fn run(model: &mut Model, h: f64, t_end: f64, rho_inf: f64) -> (MemorySink, RunSummary) {
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf,
        // Thesis value 1e-5 (validation-cases.md) tightened to 1e-6. The internal forces of a
        // stiff beam cannot be resolved below ~EA ε_mach |x|/L_e per element (positions are
        // absolute coordinates: ≈ 3e-7 N for 16 elements here), while the reference Σ‖r_k‖
        // vanishes when a vibrating beam passes its undeformed shape: tol_f = 1 N keeps the
        // absolute floor of the test (1e-6 N) above that round-off.
        tol: 1e-6,
        tol_f: 1.0,
        gravity: Vector3::zeros(),
        // Full Newton: the iteration counts asserted below are those of Newton's method (the
        // thesis' solver); the default modified Newton is checked in tests/slider_crank.rs,
        // tests/beam_modes.rs and tests/custom_scheme.rs.
        jacobian_reuse: None,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(model, &mut sink, &mut |_| {}).unwrap();
    (sink, summary)
}

/// Upward zero crossings of `y(t)` (linear interpolation).
fn up_crossings(t: &[f64], y: &[f64]) -> Vec<f64> {
    (1..y.len())
        .filter(|&i| y[i - 1] < 0.0 && y[i] >= 0.0)
        .map(|i| t[i - 1] + (t[i] - t[i - 1]) * y[i - 1] / (y[i - 1] - y[i]))
        .collect()
}

/// Positive peaks of `y` refined by a parabola through the three samples around each.
fn peaks(y: &[f64]) -> Vec<f64> {
    (1..y.len() - 1)
        .filter(|&i| y[i] > y[i - 1] && y[i] >= y[i + 1] && y[i] > 0.0)
        .map(|i| {
            let (a, b, c) = (y[i - 1], y[i], y[i + 1]);
            let d = a - 2.0 * b + c;
            b - (a - c) * (a - c) / (8.0 * d)
        })
        .collect()
}

/// Euler–Bernoulli first mode of the cantilever, `φ(x)` and `φ'(x)` (`φ(L) = 2`).
fn mode1(x: f64) -> (f64, f64) {
    let b = BETA1 / L;
    let sigma = ((BETA1).cosh() + BETA1.cos()) / (BETA1.sinh() + BETA1.sin());
    let bx = b * x;
    let phi = bx.cosh() - bx.cos() - sigma * (bx.sinh() - bx.sin());
    let dphi = b * (bx.sinh() + bx.sin() - sigma * (bx.cosh() - bx.cos()));
    (phi, dphi)
}

/// Free vibration of the straight cantilever started with the velocity field of the analytic
/// first mode (`v = A ω₁ φ(x) e_z`, `Ω = −A ω₁ φ'(x) e_y`, tip amplitude 1 mm = 1e-3 L): the
/// period measured from the tip's downward zero crossings against `2π/ω₁` (Euler–Bernoulli;
/// shear and rotary inertia change it by O((h/L)²) ≈ 1e-4). Starting from the undeformed shape
/// avoids the spurious shear strains that imposing the continuum mode *shape* on the discrete
/// shear-deformable model would create. The spatial error decreases as 1/n² (one-point
/// integration stiffens, the consistent mass is an upper bound); the time error of
/// generalized-α at ρ∞ = 1 with 300 steps per period is ≈ −(ωh)²/12 ≈ −4e-5.
#[test]
fn cantilever_first_frequency() {
    let w1 = omega1();
    let period = 2.0 * PI / w1;
    println!(
        "Euler–Bernoulli: ω₁ = {w1:.4} rad/s, f₁ = {:.4} Hz",
        w1 / (2.0 * PI)
    );
    let mut errors = Vec::new();
    for n in [4usize, 8, 16] {
        let (mut model, line) = cantilever(n, &spec());
        let amplitude = 0.5e-3;
        for id in &line.nodes {
            let node = &mut model.nodes_mut()[id.index()];
            let (phi, dphi) = mode1(node.initial.x.x);
            node.initial.v = Vector3::z() * (amplitude * w1 * phi);
            node.initial.omega = Vector3::y() * (-amplitude * w1 * dphi);
        }
        let h = period / 300.0;
        let start = std::time::Instant::now();
        let (sink, summary) = run(&mut model, h, 2.6 * period, 1.0);
        let tip = line.nodes[n].index();
        let z: Vec<f64> = sink.nodes.iter().map(|s| -s[tip].x.z).collect();
        let downs = up_crossings(&sink.time, &z);
        assert!(downs.len() >= 2, "{downs:?}");
        let measured = (downs[downs.len() - 1] - downs[0]) / (downs.len() - 1) as f64;
        let err = (period - measured) / measured; // relative frequency error ω_h/ω₁ − 1
        let amp = z.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        println!(
            "n = {n:>2}: period {measured:.7e} s (EB {period:.7e}), frequency error {err:+.3e}, \
             tip amplitude {amp:.4e} m; iterations max {:?} mean {:.2?}; {} steps in {:.2} s",
            summary.max_iterations(),
            summary.mean_iterations(),
            summary.steps,
            start.elapsed().as_secs_f64()
        );
        errors.push(err);
        // Smooth step: ≤ 2 Newton iterations (the first one stretches the rotating elements
        // by O(Δθ²), see tests/beam_static.rs); nothing to correct at position/velocity level.
        assert!(summary.max_iterations()[0] <= 3);
    }
    // 1/n² convergence: the error differences (free of the n-independent offsets, time
    // discretization and shear/rotary inertia, ≈ −1e-4) shrink by 4 when n doubles.
    let ratio = (errors[0] - errors[1]) / (errors[1] - errors[2]);
    println!("Richardson ratio (e4 − e8)/(e8 − e16) = {ratio:.3}");
    assert!((ratio - 4.0).abs() < 0.4, "{errors:?}");
    assert!(
        errors.iter().all(|e| *e > 0.0),
        "stiffer than the continuum: {errors:?}"
    );
    // n = 16 within 0.1 % of Euler–Bernoulli: the 1/n² trend from n = 4 (7.1e-3/16 ≈ 4.4e-4)
    // plus the n-independent offsets (≈ 1e-4, above) is about half of it.
    assert!(errors[2] < 1e-3, "{errors:?}");
}

/// Stiffness-proportional Rayleigh damping set by `damping_ratio` ξ = 2 % at the first
/// frequency (β = ξ/(π f₁)): the logarithmic decrement of the tip's free vibration gives
/// `ξ_measured = δ/√(4π² + δ²)` ≈ ξ ω_h/ω₁ (the discrete frequency is slightly off ω₁). The
/// higher modes are damped in proportion to their frequency.
#[test]
fn stiffness_proportional_damping_ratio() {
    let n = 10;
    let xi = 0.02;
    let w1 = omega1();
    let f1 = w1 / (2.0 * PI);
    let spec = spec().with_damping_ratio(xi, f1);
    let i2 = WIDTH * HEIGHT.powi(3) / 12.0;
    let p = 1e-3 * 3.0 * E * i2 / L.powi(3);
    let (mut model, line) = released_cantilever(n, &spec, p);
    let period = 2.0 * PI / w1;
    let (sink, summary) = run(&mut model, period / 200.0, 5.3 * period, 1.0);
    let tip = line.nodes[n].index();
    let z: Vec<f64> = sink.nodes.iter().map(|s| s[tip].x.z).collect();
    let pk = peaks(&z);
    assert!(pk.len() >= 5, "{pk:?}");
    // Decrement over the last peaks (the first ones carry the faster-decaying higher modes).
    let k = pk.len() - 1;
    let delta = (pk[1] / pk[k]).ln() / (k - 1) as f64;
    let measured = delta / (4.0 * PI * PI + delta * delta).sqrt();
    // The measured period fixes the discrete frequency ω_h (stiffer than ω₁ by ~0.3 %).
    let ups = up_crossings(&sink.time, &z);
    let wh = 2.0 * PI * (ups.len() - 1) as f64 / (ups[ups.len() - 1] - ups[0]);
    let expected = xi * wh / w1;
    println!(
        "ξ measured {measured:.5} (target {xi}, expected ξ ω_h/ω₁ = {expected:.5}); peaks {:?}; \
         iterations max {:?}",
        pk.iter().map(|v| format!("{v:.4e}")).collect::<Vec<_>>(),
        summary.max_iterations()
    );
    // Time discretization of the decay (trapezoidal, ωh = 0.03) and peak interpolation:
    // well below 2 % of ξ.
    assert!(
        (measured - expected).abs() < 0.02 * xi,
        "{measured} vs {expected}"
    );
    // Energy decays monotonically (no numerical dissipation at ρ∞ = 1; physical only).
    let e: Vec<f64> = sink
        .energy
        .iter()
        .map(|e| e.kinetic + e.potential)
        .collect();
    assert!(
        e.windows(2).all(|w| w[1] <= w[0] * (1.0 + 1e-9)),
        "energy grows"
    );
}

/// Mass-proportional damping `α M v` acts on the absolute velocity: a free beam translating
/// rigidly (no gravity) slows down as `v₀ e^{−α t}` (trapezoidal rule: per-step factor
/// `(1 − αh/2)/(1 + αh/2)`, error (αh)² α t/12 ≈ 7e-7), without deforming, while the
/// stiffness-proportional part (also on) has no effect on rigid motion.
#[test]
fn mass_proportional_damping_slows_rigid_motion() {
    let alpha = 2.0;
    let spec = spec().with_rayleigh(alpha, 1e-3);
    let mut model = Model::new();
    let v0 = Vector3::new(0.3, -0.4, 1.2);
    let line = BeamBuilder::new("free", spec)
        .line_from_points(&mut model, Vector3::zeros(), Vector3::new(0.6, 0.8, 0.0), 4)
        .unwrap();
    for node in model.nodes_mut() {
        node.initial.v = v0;
    }
    let (h, t_end) = (1e-3, 1.0);
    let (sink, _) = run(&mut model, h, t_end, 1.0);
    let last = sink.nodes.last().unwrap();
    let t = *sink.time.last().unwrap();
    let discrete = ((1.0 - 0.5 * alpha * h) / (1.0 + 0.5 * alpha * h)).powf(t / h);
    for id in &line.nodes {
        let v = last[id.index()].v;
        let exact = v0 * (-alpha * t).exp();
        println!(
            "node {}: v = {:?}, exact {:?}, rel. error {:.2e}, vs trapezoidal factor {:.2e}",
            id.0,
            v.as_slice(),
            exact.as_slice(),
            (v - exact).norm() / exact.norm(),
            (v - v0 * discrete).norm() / exact.norm()
        );
        assert!((v - exact).norm() < 1e-5 * exact.norm());
        assert!((v - v0 * discrete).norm() < 1e-8 * exact.norm());
        assert!(last[id.index()].omega.norm() < 1e-9);
    }
    // No deformation: the internal force is round-off, EA = 4.2e7 N times a strain of a few
    // tens of ulp of unit positions (1e-14): 4e-7 N (observed 1e-8 N).
    let f = sink.channel("free_e2", "force").unwrap();
    assert!(f.last().unwrap().iter().all(|v| v.abs() < 1e-6), "{f:?}");
}

/// A free beam tumbling in space (no gravity, no damping, ρ∞ = 1): spin about its own axis
/// plus rotation about a transverse axis (gyroscopic coupling, centrifugal stretching). The
/// total energy and angular momentum `Σ (x × M_x v) + Σ R J Ω` are conserved to the accuracy of
/// the (non-conserving) generalized-α scheme: drift below 1e-4 over 2 revolutions.
#[test]
fn free_tumbling_beam_conserves_energy_and_momentum() {
    let spec = BeamSpec::circular(2.0e9, 0.3, 1200.0, 0.01);
    let mut model = Model::new();
    let n = 6;
    let line = BeamBuilder::new("free", spec.clone())
        .line_from_points(
            &mut model,
            Vector3::new(-0.25, 0.0, 0.0),
            Vector3::new(0.25, 0.0, 0.0),
            n,
        )
        .unwrap();
    // Rigid velocity field: ω = (ω_spin, 0, ω_tumble) about the centre.
    let w = Vector3::new(20.0, 0.0, 6.0);
    for node in model.nodes_mut() {
        let x = node.initial.x;
        node.initial.v = w.cross(&x);
        node.initial.omega = node.initial.r.inverse() * w;
    }
    let t_end = 2.0 * 2.0 * PI / 6.0;
    let start = std::time::Instant::now();
    let (sink, summary) = run(&mut model, 1e-3, t_end, 1.0);
    let sec = spec.section("t").unwrap();
    let le = 0.5 / n as f64;
    let m_e = sec.line_mass * le;
    let j_sec = Matrix3::from_diagonal(&sec.line_inertia) * (0.5 * le);
    let momentum = |nodes: &[NodeState]| -> Vector3<f64> {
        let mut hmom = Vector3::zeros();
        for e in 0..n {
            let (a, b) = (
                &nodes[line.nodes[e].index()],
                &nodes[line.nodes[e + 1].index()],
            );
            // Consistent mass: p_a = m/6 (2 v_a + v_b), p_b = m/6 (v_a + 2 v_b).
            let pa = (a.v * 2.0 + b.v) * (m_e / 6.0);
            let pb = (a.v + b.v * 2.0) * (m_e / 6.0);
            hmom += a.x.cross(&pa) + b.x.cross(&pb);
            // Lumped rotational inertia: node frames are the section frames here.
            hmom += a.r * (j_sec * a.omega) + b.r * (j_sec * b.omega);
        }
        hmom
    };
    let h0 = momentum(&sink.nodes[0]);
    let e0 = sink.energy[0].kinetic + sink.energy[0].potential;
    let mut max_dh: f64 = 0.0;
    let mut max_de: f64 = 0.0;
    for (nodes, en) in sink.nodes.iter().zip(&sink.energy) {
        max_dh = max_dh.max((momentum(nodes) - h0).norm() / h0.norm());
        max_de = max_de.max((en.kinetic + en.potential - e0).abs() / e0);
    }
    println!(
        "tumbling beam: max relative drift energy {max_de:.2e}, angular momentum {max_dh:.2e}; \
         iterations max {:?}, {} steps in {:.2} s",
        summary.max_iterations(),
        summary.steps,
        start.elapsed().as_secs_f64()
    );
    assert!(max_de < 1e-4 && max_dh < 1e-4);
}
