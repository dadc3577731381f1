//! Cantilever bending modes of the geometrically exact beam and the time-integration order of
//! NSGA on smooth flexible motion.
//!
//! * **Modes** (`first_three_bending_modes_match_euler_bernoulli`): the first three bending
//!   frequencies of a cantilever from a linearized generalized eigenproblem `K φ = ω² M φ`
//!   built from the element tangents, against Euler–Bernoulli (`β_k L = 1.8751, 4.6941,
//!   7.8548`) corrected by a leading-order error estimate computed from the analytic mode
//!   shapes (one-point-integration stiffening, mass discretization, Timoshenko correction),
//!   for 10–80 elements and both mass options; what the estimate misses converges as 1/n⁴.
//!   With the lumped translational mass all three modes are within 1 % at 20 elements
//!   (−0.07 %, −0.06 %, +0.15 %); with the default consistent mass mode 3 needs 40 (+1.78 %
//!   at 20, +0.44 % at 40).
//! * **Modes in time** (`modal_free_vibration_in_nsga`): each discrete mode, released as an
//!   initial velocity field into NSGA with ρ∞ = 1, oscillates at the eigen-solve frequency up
//!   to the exactly known period error of the trapezoidal rule (to < 1e-6).
//! * **Order** (`large_amplitude_vibration_is_second_order`): a geometrically nonlinear
//!   cantilever vibration (tip amplitude 0.05 L) converges at order ≥ 1.9 (position and
//!   transverse velocity) against a fine reference, for ρ∞ = 1 and ρ∞ = 0.8.
//!
//! Why an eigen-solve for the 1 % check: it gives the frequencies of the spatial
//! discretization exactly (no time-discretization error, no mode separation, no
//! zero-crossing interpolation), all three modes from one assembly, so the tolerance is spent
//! on the physics being tested — the element's stiffness and mass. `K` is the static-level
//! iteration matrix at the undeformed (stress-free) configuration, `∂f_int/∂q`; `M` is the
//! smooth-level iteration matrix assembled with `∂v̇/∂u = 1` and the other two derivatives
//! zero, i.e. exactly the element mass matrix (no finite differences needed). The NSGA
//! free-vibration test then closes the loop to the time integrator.

use nalgebra::{DMatrix, DVector};
use saltus::core::assembly::FIXED;
use saltus::core::{InertiaTerm, StepCx};
use saltus::elements::beam::{BeamBuilder, BeamLine, BeamSpec};
use saltus::prelude::*;
use saltus::solvers::{Stage, State};
use std::f64::consts::PI;

/// Steel strip, L = 1 m, 10 mm wide (section axis 2 = y) and 2 mm thick (axis 3 = z), bending
/// along z (E I₂ with the 2 mm thickness). Slenderness L/r = √12 L/t = 1732: the
/// Timoshenko corrections (shear and rotary inertia) to the EB frequencies are
/// `≈ −½ (β_k r)² (1 + E/κG)/L²` ≈ −4e-5 for mode 3 (−5.2e-5 with the cantilever's mode shape,
/// [`error_estimate`]) — below 0.1 % by a factor 20, and part of the checked estimate.
const L: f64 = 1.0;
const E: f64 = 2.1e11;
const NU: f64 = 0.3;
const RHO: f64 = 7850.0;
const WIDTH: f64 = 0.01;
const THICKNESS: f64 = 0.002;

/// `β_k L`: roots of `1 + cos x cosh x = 0`.
const BETA: [f64; 3] = [
    1.875_104_068_711_961,
    4.694_091_132_974_175,
    7.854_757_438_237_613,
];

fn spec() -> BeamSpec {
    BeamSpec::rectangular(E, NU, RHO, WIDTH, THICKNESS)
}

/// Euler–Bernoulli bending frequency \[rad/s\] of mode `k` (0-based) along z.
fn omega_eb(k: usize) -> f64 {
    let i2 = WIDTH * THICKNESS.powi(3) / 12.0;
    BETA[k] * BETA[k] * (E * i2 / (RHO * WIDTH * THICKNESS * L.powi(4))).sqrt()
}

fn cantilever(n: usize) -> (Model, BeamLine) {
    cantilever_with(n, spec())
}

fn cantilever_with(n: usize, spec: BeamSpec) -> (Model, BeamLine) {
    let mut model = Model::new();
    let root = model
        .add_node(NodeDef::frame("root", Vector3::zeros()).fixed())
        .unwrap();
    let tip = model
        .add_node(NodeDef::frame("tip", Vector3::new(L, 0.0, 0.0)))
        .unwrap();
    let line = BeamBuilder::new("beam", spec)
        .line(&mut model, root, tip, n)
        .unwrap();
    (model, line)
}

/// The assembled iteration matrix of `stage` as a dense matrix (node unknowns only; no
/// multipliers in a cantilever).
fn dense(stage: &Stage) -> DMatrix<f64> {
    let sys = &stage.system;
    assert_eq!(sys.n, sys.n_node_dofs);
    let mut m = DMatrix::zeros(sys.n, sys.n);
    for (v, (r, c)) in sys.matrix.iter() {
        m[(r, c)] += *v;
    }
    m
}

/// Linearized stiffness `K = ∂f_int/∂q` (static level, at the initial configuration) and mass
/// `M` (smooth level with `∂v̇/∂u = 1`, `∂q/∂u = ∂v/∂u = 0`) of `model`.
fn stiffness_and_mass(model: &Model) -> (DMatrix<f64>, DMatrix<f64>) {
    let mut state = State::new(model);
    let mut stage = Stage::new("static", Level::Static, model, &state).unwrap();
    let base = StepCx {
        level: Level::Static,
        t: 1.0,
        h: 0.0,
        gravity: Vector3::zeros(),
        k: 1.0,
        p: 1.0,
        k_s: 1.0,
        dq_dv: 1.0,
        dvdot_dv: 0.0,
        dv_dv: 0.0,
        force_weight: 1.0,
        inertia: InertiaTerm::None,
        force_difference: false,
        load_factor: 1.0,
        load_tolerance: 0.0,
    };
    let r = stage.assemble(model, &mut state, &base, 0, None).unwrap();
    // Stress-free initial configuration: the residual vanishes to round-off.
    assert!(r.norm < 1e-9, "initial residual {}", r.norm);
    let k = dense(&stage);
    let mass_cx = StepCx {
        level: Level::Smooth,
        h: 1.0,
        dq_dv: 0.0,
        dvdot_dv: 1.0,
        dv_dv: 0.0,
        inertia: InertiaTerm::Acceleration,
        ..base
    };
    let mut stage = Stage::new("mass", Level::Smooth, model, &state).unwrap();
    stage
        .assemble(model, &mut state, &mass_cx, 0, None)
        .unwrap();
    let m = dense(&stage);
    (k, m)
}

/// Unknowns of the x–z bending problem: `z` translation and rotation about `y` of every free
/// node, with the node they belong to.
fn bending_dofs(model: &Model) -> Vec<(usize, usize)> {
    let state = State::new(model);
    let mut dofs = Vec::new();
    for (i, off) in state.numbering.offset.iter().enumerate() {
        if *off != FIXED {
            dofs.push((*off + 2, i));
            dofs.push((*off + 4, i));
        }
    }
    dofs
}

/// Solutions of `K φ = ω² M φ` (K, M symmetric positive definite), sorted by increasing `ω`,
/// `φ` M-normalized. Solved as `M φ = μ K φ`, `μ = 1/ω²`, with `K = L Lᵀ`:
/// `(L⁻¹ M L⁻ᵀ) y = μ y`, `φ = L⁻ᵀ y`. The low modes are the largest `μ`, computed to
/// round-off relative to `μ_max` — i.e. to ~1e-15 relative (a Cholesky factor of `M` would
/// instead resolve `ω₁²` only to `ε ω_max²`, ~1e-5 relative here, because the shear modes of a
/// slender beam are 10⁸ times stiffer).
fn generalized_eigen(k: &DMatrix<f64>, m: &DMatrix<f64>) -> Vec<(f64, DVector<f64>)> {
    let chol = k.clone().cholesky().expect("stiffness matrix not SPD");
    let linv = chol.l().try_inverse().unwrap();
    let a = &linv * m * linv.transpose();
    let a = (&a + a.transpose()) * 0.5;
    let eig = a.symmetric_eigen();
    let mut modes: Vec<(f64, DVector<f64>)> = eig
        .eigenvalues
        .iter()
        .zip(eig.eigenvectors.column_iter())
        .map(|(mu, y)| {
            let phi = linv.transpose() * y;
            let norm = phi.dot(&(m * &phi)).sqrt();
            (1.0 / mu.sqrt(), phi / norm)
        })
        .collect();
    modes.sort_by(|a, b| a.0.total_cmp(&b.0));
    modes
}

/// Bending modes along z of an `n`-element cantilever: sorted `(ω \[rad/s\], φ)`, `φ` over
/// [`bending_dofs`], M-normalized.
fn bending_modes(n: usize) -> (Model, BeamLine, Vec<(f64, DVector<f64>)>) {
    let (model, line) = cantilever(n);
    let (k, m) = stiffness_and_mass(&model);
    let dofs: Vec<usize> = bending_dofs(&model).iter().map(|d| d.0).collect();
    // The x–z bending unknowns decouple exactly from the others at the straight stress-free
    // configuration (symmetry of the section about both axes): the reduction is exact.
    let (kmax, mmax) = (k.amax(), m.amax());
    let mut coupling: f64 = 0.0;
    for &i in &dofs {
        for j in 0..k.ncols() {
            if !dofs.contains(&j) {
                coupling = coupling
                    .max(k[(i, j)].abs() / kmax)
                    .max(m[(i, j)].abs() / mmax);
            }
        }
    }
    assert!(coupling < 1e-12, "bending unknowns coupled: {coupling:e}");
    let kr = k.select_rows(&dofs).select_columns(&dofs);
    let mr = m.select_rows(&dofs).select_columns(&dofs);
    assert!(
        (&kr - kr.transpose()).amax() < 1e-9 * kr.amax(),
        "K not symmetric"
    );
    let modes = generalized_eigen(&kr, &mr);
    (model, line, modes)
}

/// Clamped–free Euler–Bernoulli mode `k` (0-based) on `[0, L]`:
/// `w(x) = cosh βx − cos βx − σ (sinh βx − sin βx)`, `σ = (cosh βL + cos βL)/(sinh βL + sin βL)`,
/// and its derivatives: `mode_shape(k, m)(x)` is `d^m w/dx^m`.
fn mode_shape(k: usize, m: i32) -> impl Fn(f64) -> f64 {
    let b = BETA[k] / L;
    let bl = BETA[k];
    let sigma = (bl.cosh() + bl.cos()) / (bl.sinh() + bl.sin());
    move |x: f64| {
        let (u, mm) = (b * x, m.rem_euclid(4));
        let (ch, sh) = if m % 2 == 0 {
            (u.cosh(), u.sinh())
        } else {
            (u.sinh(), u.cosh())
        };
        // d^m cos, d^m sin (in units of β^m).
        let (c, s) = match mm {
            0 => (u.cos(), u.sin()),
            1 => (-u.sin(), u.cos()),
            2 => (-u.cos(), -u.sin()),
            _ => (u.sin(), -u.cos()),
        };
        b.powi(m) * ((ch - c) - sigma * (sh - s))
    }
}

/// `∫₀ᴸ f²` by composite Simpson (2000 intervals: error ~1e-13 relative for these shapes).
fn integral_of_square(f: impl Fn(f64) -> f64) -> f64 {
    let n = 2000;
    let dx = L / n as f64;
    (0..=n)
        .map(|i| {
            let w = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * f(i as f64 * dx).powi(2)
        })
        .sum::<f64>()
        * dx
        / 3.0
}

/// Leading-order relative frequency error `ω_n/ω_EB − 1` of bending mode `k` (0-based) of
/// the `n`-element cantilever, as its separate terms, all from the Euler–Bernoulli mode shape
/// `w` (element length `h = L/n`, `r² = I/A`):
///
/// * `stiffening = (h²/24) ∫w‴²/∫w″²`: the one-point shear constraint `(w₂ − w₁)/h =
///   (θ₁ + θ₂)/2` stiffens bending by `(h²/12) ∫w‴²/∫w″²` in ω² (for a periodic wave of
///   wavenumber κ this is the exact dispersion relation's `(κh)²/12` term; that the
///   cantilever's ends add nothing at this order is an assumption, confirmed by the 1/n⁴
///   convergence of what the estimate misses, asserted in the test);
/// * `tip_mass = −(h²/12) w(L) w′(L)/∫w²`: the translational kinetic energy of the nodal
///   values, `Σ_nodes` with the trapezoid weights of the lumped mass, exceeds `∫w²` by the
///   trapezoid rule's end correction `(h²/12)[(w²)′]₀ᴸ` (`w(0) = 0`);
/// * `consistent = (h²/12) ∫w′²/∫w²`: the consistent mass is the lumped one minus
///   `(ρ A h/6) Σ (w_{i+1} − w_i)²`, i.e. `(h²/6) ∫w′²/∫w²` less kinetic energy (0 for the
///   lumped mass);
/// * `timoshenko = −½ r² (∫w′²/∫w² + E/(κG) ∫w‴²/∫w″²)`: rotary inertia and shear
///   flexibility of the continuum (Rayleigh quotient, first order in r²) — not a
///   discretization error, but present in every mesh.
///
/// Returns `[stiffening, tip_mass, consistent, timoshenko]`.
fn error_estimate(k: usize, n: usize, lumped: bool) -> [f64; 4] {
    let h = L / n as f64;
    let w2 = integral_of_square(mode_shape(k, 0));
    let w1 = integral_of_square(mode_shape(k, 1));
    let ww = integral_of_square(mode_shape(k, 2));
    let www = integral_of_square(mode_shape(k, 3));
    let s = spec();
    let g = E / (2.0 * (1.0 + NU));
    let kappa = s.shear_coefficient.unwrap();
    let r2 = THICKNESS * THICKNESS / 12.0;
    [
        h * h / 24.0 * www / ww,
        -h * h / 12.0 * mode_shape(k, 0)(L) * mode_shape(k, 1)(L) / w2,
        if lumped { 0.0 } else { h * h / 12.0 * w1 / w2 },
        -0.5 * r2 * (w1 / w2 + E / (kappa * g) * www / ww),
    ]
}

/// The first three bending frequencies along z of an `n`-element cantilever, with the
/// consistent or the lumped translational mass.
fn first_three(n: usize, lumped: bool) -> [f64; 3] {
    let (model, _) = cantilever_with(
        n,
        BeamSpec {
            lumped_mass: lumped,
            ..spec()
        },
    );
    let (k, m) = stiffness_and_mass(&model);
    let dofs: Vec<usize> = bending_dofs(&model).iter().map(|d| d.0).collect();
    let kr = k.select_rows(&dofs).select_columns(&dofs);
    let mr = m.select_rows(&dofs).select_columns(&dofs);
    let w = generalized_eigen(&kr, &mr);
    [w[0].0, w[1].0, w[2].0]
}

/// First three bending frequencies along z against Euler–Bernoulli, n = 10, 20, 40, 80, with
/// the consistent and the lumped translational mass.
///
/// Every discrete frequency is checked against `ω_EB (1 + e)` with `e` the leading-order
/// estimate of [`error_estimate`] (`O(1/n²)` discretization terms and the `O(r²)` Timoshenko
/// term, all from the analytic mode shape), to within the next-order terms. Issue acceptance
/// (all three modes within 1 % with 20 elements) holds with the lumped translational mass
/// (`lumped_mass = true`: −0.07 %, −0.06 %, +0.15 %): its tip-mass term (negative) cancels
/// most of the one-point-integration stiffening. With the default consistent mass the
/// stiffening and the consistent-mass term add up, and mode 3 needs 40 elements (+1.78 % at
/// 20, +0.44 % at 40).
#[test]
fn first_three_bending_modes_match_euler_bernoulli() {
    let ns = [10usize, 20, 40, 80];
    // err[lumped][i][k]: relative error vs EB of mode k with ns[i] elements.
    let mut err = [[[0.0f64; 3]; 4]; 2];
    let mut freq = [[[0.0f64; 3]; 4]; 2];
    let mut miss = [[[0.0f64; 3]; 4]; 2];
    for (l, lumped) in [false, true].into_iter().enumerate() {
        for (i, &n) in ns.iter().enumerate() {
            let w = first_three(n, lumped);
            for k in 0..3 {
                freq[l][i][k] = w[k];
                err[l][i][k] = w[k] / omega_eb(k) - 1.0;
                let terms = error_estimate(k, n, lumped);
                let estimate: f64 = terms.iter().sum();
                // Next-order terms: the periodic-wave dispersion relation continues with
                // 0.13 φ² (lumped) and 0.10 φ² (consistent) relative to its leading term,
                // φ = β_k L/n (≤ 0.79, mode 3 at n = 10); the end terms are assumed alike, so
                // 0.2 φ² of the discretization terms. The first-order Timoshenko term: its
                // own next order is O((β_k r/L)²) ~ 1e-5 relative; its discretization
                // (lumped rotary inertia, shear) O(φ²) — 10 % of it covers both.
                let phi2 = (BETA[k] / n as f64).powi(2);
                let tolerance = 0.2 * phi2 * terms[..3].iter().map(|t| t.abs()).sum::<f64>()
                    + 0.1 * terms[3].abs();
                miss[l][i][k] = (err[l][i][k] - estimate).abs();
                eprintln!(
                    "{} mass, n = {n:>2}, mode {}: ω = {:.5} rad/s, error vs EB {:+.4e}; \
                     estimate {estimate:+.4e} (stiffening {:+.3e}, tip mass {:+.3e}, \
                     consistent {:+.3e}, Timoshenko {:+.2e}); |miss| {:.2e} (tolerance \
                     {tolerance:.1e})",
                    if lumped { "lumped" } else { "consistent" },
                    k + 1,
                    w[k],
                    err[l][i][k],
                    terms[0],
                    terms[1],
                    terms[2],
                    terms[3],
                    miss[l][i][k]
                );
                assert!(
                    miss[l][i][k] < tolerance,
                    "lumped {lumped}, n = {n}, mode {}: error {:e}, estimate {estimate:e}",
                    k + 1,
                    err[l][i][k]
                );
            }
        }
    }
    eprintln!(
        "Euler–Bernoulli: ω = [{:.4}, {:.4}, {:.4}] rad/s",
        omega_eb(0),
        omega_eb(1),
        omega_eb(2)
    );
    // The estimate is the whole O(1/n²) error: what it misses is O(1/n⁴), shrinking by 16 per
    // doubling of n (1 + O(φ²) about it, φ² ≤ 0.62); checked on modes 2 and 3, where the
    // miss stays far above the floor of the first-order Timoshenko term's own error (mode 1
    // reaches it, ~5e-9, at n = 40) — measured 16.2 to 19.3.
    for (l, m) in miss.iter().enumerate() {
        for k in 1..3 {
            for i in 0..2 {
                let ratio = m[i][k] / m[i + 1][k];
                assert!(
                    ratio > 12.0,
                    "lumped {}, mode {}: miss ratio {ratio}",
                    l == 1,
                    k + 1
                );
            }
        }
    }
    // Observed convergence, independent of the estimate: the consistent-mass frequencies
    // lie above the continuum (both discretization terms stiffen) and fall as 1/n² — the
    // successive differences (n = 10 → 20 → 40 → 80) shrink by 4.
    for k in 0..3 {
        let f = &freq[0];
        let d = [f[0][k] - f[1][k], f[1][k] - f[2][k], f[2][k] - f[3][k]];
        let ratios = [d[0] / d[1], d[1] / d[2]];
        eprintln!(
            "mode {} (consistent mass): difference ratios {:.3} {:.3}",
            k + 1,
            ratios[0],
            ratios[1]
        );
        assert!(d.iter().all(|v| *v > 0.0), "not monotone: {d:?}");
        // 4 up to the O(1/n⁴) remainder, which is ≤ 1.2 % of the error from n = 20 on and
        // ≤ 5 % at n = 10 (mode 3, misses above): ≤ 0.06 and ≤ 0.3 on the ratios.
        assert!((ratios[1] - 4.0).abs() < 0.06, "ratio {ratios:?}");
        assert!((ratios[0] - 4.0).abs() < 0.3, "ratio {ratios:?}");
    }
    // Issue acceptance: with the lumped mass all three modes within 1 % at 20 elements.
    assert!(err[1][1].iter().all(|e| e.abs() < 0.01), "{:?}", err[1][1]);
    // With the consistent mass modes 1 and 2 at 20 elements, mode 3 from 40 elements.
    assert!(
        err[0][1][..2].iter().all(|e| e.abs() < 0.01),
        "{:?}",
        err[0][1]
    );
    assert!(err[0][2].iter().all(|e| e.abs() < 0.01), "{:?}", err[0][2]);
}

/// Upward and downward zero crossings of `y(t)` (linear interpolation).
fn zero_crossings(t: &[f64], y: &[f64]) -> Vec<f64> {
    (1..y.len())
        .filter(|&i| (y[i - 1] < 0.0) != (y[i] < 0.0))
        .map(|i| t[i - 1] + (t[i] - t[i - 1]) * y[i - 1] / (y[i - 1] - y[i]))
        .collect()
}

/// Each of the first three discrete modes of the 20-element cantilever, released as the
/// initial velocity field `v_z = A ω φ_z`, `Ω_y = A ω φ_θ` (tip amplitude 1e-4 L: linear to
/// ~1e-8) from the straight configuration, oscillates in NSGA with ρ∞ = 1 (generalized-α with
/// α_m = α_f, i.e. the trapezoidal rule on a linear system) at the discrete frequency
/// `ω̂ = (2/h) atan(ω h/2)` of that rule, `ω` from the eigen-solve. The frequency is measured
/// from the zero crossings of the modal coordinate `q = φᵀ M u` over 3 periods (h = T/100).
#[test]
fn modal_free_vibration_in_nsga() {
    let n = 20;
    let (_, _, modes) = bending_modes(n);
    for (k, (w, phi)) in modes.iter().take(3).enumerate() {
        let (mut model, line) = cantilever(n);
        let dofs = bending_dofs(&model);
        let (_, m) = stiffness_and_mass(&model);
        let all: Vec<usize> = dofs.iter().map(|d| d.0).collect();
        let mr = m.select_rows(&all).select_columns(&all);
        let mphi = &mr * phi;
        // The tip's z unknown.
        let tip_index = dofs
            .iter()
            .position(|d| d.1 == line.nodes[n].index())
            .unwrap();
        let amplitude = 1e-4 * L / phi[tip_index].abs();
        for (j, &(_, node)) in dofs.iter().enumerate() {
            let s = &mut model.nodes_mut()[node].initial;
            if j % 2 == 0 {
                s.v.z = amplitude * w * phi[j];
            } else {
                s.omega.y = amplitude * w * phi[j];
            }
        }
        let period = 2.0 * PI / w;
        let h = period / 100.0;
        let opts = NsgaOptions {
            h,
            t_end: 3.05 * period,
            rho_inf: 1.0,
            gravity: Vector3::zeros(),
            // As tests/beam_dynamic.rs: the internal forces of the stiff strip cannot be
            // resolved below ~EA ε_mach |x|/L_e ≈ 2e-8 N, while the forces of this small
            // vibration (reference Σ‖r_k‖ ≈ 1e-3 N) put the default test at 1e-11 N; the
            // defaults still converge (round-off plateau exit) but spend 3 iterations per
            // step instead of 1–2.
            tol: 1e-6,
            tol_f: 1.0,
            ..NsgaOptions::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let mut sink = MemorySink::default();
        let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
        let q: Vec<f64> = sink
            .nodes
            .iter()
            .map(|s| {
                dofs.iter()
                    .enumerate()
                    .map(|(j, &(_, node))| {
                        let u = if j % 2 == 0 {
                            s[node].x.z
                        } else {
                            s[node].r.scaled_axis().y
                        };
                        mphi[j] * u
                    })
                    .sum::<f64>()
            })
            .collect();
        let zc = zero_crossings(&sink.time, &q);
        assert!(zc.len() >= 5, "{zc:?}");
        // Consecutive zero crossings are half a period apart (the first one at t = 0 is
        // excluded: q(0) = 0 exactly).
        let zc: Vec<f64> = zc.into_iter().filter(|t| *t > 0.25 * period).collect();
        let measured = PI * (zc.len() - 1) as f64 / (zc[zc.len() - 1] - zc[0]);
        let predicted = 2.0 / h * (0.5 * w * h).atan();
        let vs_pred = measured / predicted - 1.0;
        let vs_eb = measured / omega_eb(k) - 1.0;
        eprintln!(
            "mode {}: ω_eig = {w:.4}, NSGA ω = {measured:.4} rad/s (trapezoidal prediction \
             {predicted:.4}: {vs_pred:+.2e}; vs EB {vs_eb:+.3e}); Newton max {:?}, mean {:.2?}; \
             {} steps in {:.2} s",
            k + 1,
            summary.max_iterations(),
            summary.mean_iterations(),
            summary.steps,
            summary.wall.as_secs_f64()
        );
        // The modal initial condition excites no other mode (linear regime), and the
        // integrator is the trapezoidal rule on it: agreement to the zero-crossing
        // interpolation error (O((ωh)³) ≈ 3e-5 per crossing, averaged over 5 crossings) and
        // the amplitude-dependent (geometric) frequency shift O((A/L)²) ≈ 1e-8.
        assert!(vs_pred.abs() < 1e-5, "mode {}: {vs_pred:e}", k + 1);
        // Against Euler–Bernoulli: the eigen-solve's discretization error (+0.03 %, +0.61 %,
        // +1.78 % with the consistent mass, see
        // `first_three_bending_modes_match_euler_bernoulli`) minus the
        // trapezoidal period error (ωh)²/12 = 3.3e-4: within 1 % for modes 1 and 2; mode 3
        // misses it like the eigen-solve.
        let expected = w / omega_eb(k) * predicted / w - 1.0;
        assert!((vs_eb - expected).abs() < 1e-5, "mode {}: {vs_eb:e}", k + 1);
        if k < 2 {
            assert!(vs_eb.abs() < 0.01, "mode {}: {vs_eb:e}", k + 1);
        }
        // Smooth linear motion: Newton converges in a couple of iterations.
        assert!(
            summary.max_iterations()[0] <= 3,
            "{:?}",
            summary.max_iterations()
        );
    }
}

// ------------------------------------------------------------------------------------------
// Order of accuracy on smooth flexible motion
// ------------------------------------------------------------------------------------------

/// Tip position \[m\] and velocity \[m/s\].
type TipState = (Vector3<f64>, Vector3<f64>);

/// Large-amplitude free vibration of the 10-element strip cantilever: released straight with
/// the velocity field of its first discrete mode, scaled to a linear tip amplitude of 0.05 L
/// (geometrically nonlinear: rotations up to 0.07 rad, the tip moves in by up to 0.15 % of L
/// twice per period, the axial and higher bending modes are driven at 2ω₁, 3ω₁, …). The motion starts
/// undeformed with zero internal forces, so no mode is excited impulsively — except, weakly,
/// the axial one: the linear mode's straight-line nodal velocities stretch the elements at
/// second order in the amplitude, which excites an axial vibration (ω ≈ 8100 rad/s, unresolved
/// by every step compared) of tip-velocity amplitude ~(A ω₁)²/(L ω_ax) ≈ 3e-5 m/s. It is part
/// of the exact solution, no step size here can follow it, and with ρ∞ = 1 nothing damps it: it
/// puts a floor of ~5e-5 m/s under the *axial* tip-velocity error (printed), which is why the
/// velocity order is measured on the transverse component. At 0.1 L the floor quadruples and
/// the nonlinear coupling starts to pollute the transverse velocity too (order 1.90 instead of
/// 1.99 between T/200 and T/400). Returns the tip position and velocity after every `every`-th
/// step (and at t = 0) up to `t_end`, and the run's statistics.
fn large_vibration_tip(
    h: f64,
    t_end: f64,
    rho_inf: f64,
    every: usize,
) -> (Vec<TipState>, RunSummary) {
    vibration_tip(
        0.05,
        h,
        t_end,
        rho_inf,
        every,
        NsgaOptions::default().jacobian_reuse,
    )
}

/// As [`large_vibration_tip`] with a linear tip amplitude of `a_over_l`·L.
fn vibration_tip(
    a_over_l: f64,
    h: f64,
    t_end: f64,
    rho_inf: f64,
    every: usize,
    jacobian_reuse: Option<f64>,
) -> (Vec<TipState>, RunSummary) {
    let n = 10;
    let (mut model, line, modes) = bending_modes(n);
    let dofs = bending_dofs(&model);
    let (w, phi) = &modes[0];
    let tip = line.nodes[n].index();
    let tip_index = dofs.iter().position(|d| d.1 == tip).unwrap();
    let amplitude = a_over_l * L / phi[tip_index].abs();
    for (j, &(_, node)) in dofs.iter().enumerate() {
        let s = &mut model.nodes_mut()[node].initial;
        if j % 2 == 0 {
            s.v.z = amplitude * w * phi[j];
        } else {
            s.omega.y = amplitude * w * phi[j];
        }
    }
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf,
        gravity: Vector3::zeros(),
        jacobian_reuse,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let steps = (t_end / h).round() as usize;
    let state = |solver: &Nsga| {
        let s = solver.nodes()[tip];
        (s.x, s.v)
    };
    let mut out = vec![state(&solver)];
    for k in 1..=steps {
        solver.step(&mut model).unwrap();
        if k % every == 0 {
            out.push(state(&solver));
        }
    }
    assert!((solver.time() - t_end).abs() < 1e-9 * t_end);
    (out, solver.summary().clone())
}

/// Global error of the tip position and velocity (maximum over the 50 instants k T₁/50 of one
/// period `T₁`, so that neither is sampled only where its phase error happens to vanish) of
/// the large-amplitude vibration for h = T₁/100, T₁/200, T₁/400 against a reference at
/// T₁/3200 (whose own error, 1/64 of the finest run's at second order, biases the last
/// observed order by at most log2(1 + 1/63) ≈ 0.02, and is absent from the Richardson order
/// computed from the three runs alone). Generalized-α is second order for every ρ∞: checked
/// for ρ∞ = 1 (no numerical dissipation) and 0.8.
///
/// h = T₁/50 (ω₁h = 0.13) is left out: there the smooth Newton iteration of this very slender
/// strip (EA/EI = 3·10⁶ m⁻²) needs up to 38 iterations with 139 line-search backtracks in one
/// step (ρ∞ = 0.8, at the turning point t = 13 T₁/50), and without the line search it
/// converges to a rotation increment aliased by 4 turns (a spurious nodal spin of exactly
/// 4·2π/h = 2100 rad/s) — reported as a solver robustness issue.
#[test]
fn large_amplitude_vibration_is_second_order() {
    let t_end = 2.0 * PI / omega_eb(0);
    let coarse = 50;
    // Maxima over the common instants of |Δx| (tip position), |Δv_z| (transverse tip velocity)
    // and |Δv_x| (axial tip velocity).
    let sup = |a: &[TipState], b: &[TipState]| {
        assert_eq!(a.len(), b.len());
        a.iter().zip(b).fold([0.0f64; 3], |e, (p, q)| {
            [
                e[0].max((p.0 - q.0).norm()),
                e[1].max((p.1.z - q.1.z).abs()),
                e[2].max((p.1.x - q.1.x).abs()),
            ]
        })
    };
    for rho_inf in [1.0, 0.8] {
        let reference = 3200;
        let (x_ref, s_ref) =
            large_vibration_tip(t_end / reference as f64, t_end, rho_inf, reference / coarse);
        let mut ex = Vec::new();
        let mut ev = Vec::new();
        let mut runs = Vec::new();
        for m in [100usize, 200, 400] {
            let h = t_end / m as f64;
            let (x, s) = large_vibration_tip(h, t_end, rho_inf, m / coarse);
            let [dx, dv, dvx] = sup(&x, &x_ref);
            ex.push(dx);
            ev.push(dv);
            eprintln!(
                "ρ∞ {rho_inf}, h = T/{m} = {h:.4e} s: max |Δx| = {dx:.3e} m, max |Δv_z| = \
                 {dv:.3e} m/s (axial max |Δv_x| = {dvx:.2e} m/s); Newton max {:?}, mean {:.2?}",
                s.max_iterations(),
                s.mean_iterations()
            );
            runs.push(x);
        }
        let px = [(ex[0] / ex[1]).log2(), (ex[1] / ex[2]).log2()];
        let pv = [(ev[0] / ev[1]).log2(), (ev[1] / ev[2]).log2()];
        let pr = (sup(&runs[0], &runs[1])[0] / sup(&runs[1], &runs[2])[0]).log2();
        let amp = x_ref.iter().fold(0.0f64, |m, s| m.max(s.0.z.abs()));
        let pull_in = x_ref.iter().fold(0.0f64, |m, s| m.max(L - s.0.x));
        eprintln!(
            "ρ∞ {rho_inf}: reference tip amplitude {amp:.5} m, largest pull-in {pull_in:.3e} m \
             (Newton max {:?}, mean {:.2?}); observed orders position {:.3} {:.3}, transverse \
             velocity {:.3} {:.3}; Richardson position order {pr:.3}",
            s_ref.max_iterations(),
            s_ref.mean_iterations(),
            px[0],
            px[1],
            pv[0],
            pv[1]
        );
        // Issue requirement: order ≥ 1.9 over three step sizes.
        assert!(px.iter().all(|p| *p >= 1.9), "position orders {px:?}");
        assert!(pv.iter().all(|p| *p >= 1.9), "velocity orders {pv:?}");
        assert!(pr >= 1.9, "Richardson order {pr}");
    }
}

/// The h = T₁/50 step of the large-amplitude vibration at 0.1 L (ω₁h = 0.13, ρ∞ = 0.8), which once took
/// 38 smooth Newton iterations with 139 backtracks at the turning point and, without line
/// search, converged to a rotation increment aliased by whole turns (a spurious nodal spin
/// 2πk/h): with corrections limited to 0.5 rad of node rotation the run stays on the physical
/// branch (tip speed of the order A ω₁) with few iterations.
#[test]
fn coarse_step_large_vibration_stays_on_the_physical_branch() {
    let t1 = 2.0 * PI / omega_eb(0);
    // Full Newton (whose iteration count is bounded below), then the default modified Newton,
    // whose reused matrices are refreshed by the contraction test at the turning points.
    for reuse in [None, NsgaOptions::default().jacobian_reuse] {
        let (tip, s) = vibration_tip(0.1, t1 / 50.0, t1, 0.8, 1, reuse);
        let vmax = tip.iter().map(|(_, v)| v.norm()).fold(0.0, f64::max);
        let physical = 0.1 * L * omega_eb(0);
        eprintln!("reuse {reuse:?}: max tip speed {vmax:.4} m/s (A ω₁ = {physical:.4}); iterations max {:?} mean {:?}, backtracks {:?}", s.max_iterations(), s.mean_iterations(), s.backtracks());
        // A spurious turn would add ≥ 2π/h · (section half-height) ≫ A ω₁ to node speeds; the
        // physical tip speed is A ω₁ up to the nonlinear harmonics (2×).
        assert!(vmax < 2.0 * physical, "{vmax}");
        if reuse.is_none() {
            assert!(s.max_iterations()[0] <= 15, "{s:?}");
        }
    }
}
