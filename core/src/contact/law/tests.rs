//! Tests of the contact laws: exact tangents per status, limits and zero coefficients.

//! Finite-difference, Lagrangian, consistency and zero-coefficient checks of the laws.
//!
//! FD tolerance: central differences with step `ε = 1e-6` on O(1) data have a truncation
//! error `O(ε² |F'''|) ≈ 1e-12·|F'''|` and a round-off error `O(1e-16 |F| / ε) ≈ 1e-10 |F|`;
//! with `|F|, |F'''| = O(10)` here both stay below ~1e-9, so `1e-7` relative to
//! `1 + max|K|` leaves two orders of margin while still catching any sign, factor or
//! transposition error (those are O(1)). The states are built with margins of O(1) from the
//! kinks (`ζ_N = ±2`, cone ratios 0.4 or 2.5), far beyond the `O(ε)` perturbations, and the
//! status is asserted at every perturbed point.

use super::*;
use crate::fd::Rng;
use nalgebra::{DMatrix, DVector};

const SC: Scaling = Scaling::new(1.7, 2.3);
/// Couple scaling for rolling/spinning, distinct from the normal's to exercise the coupling.
const SC_COUPLE: Scaling = Scaling::new(0.9, 3.1);
const EPS: f64 = 1e-6;
const TOL: f64 = 1e-7;
const MU: f64 = 0.4;
const RHO: f64 = 0.3;
const GAMMA: f64 = 0.2;

/// Target state of one law.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Gap,
    Stick,
    Slip,
    /// Spinning only: stick / slip with η_N < 0.
    StickNeg,
    SlipNeg,
}

impl Target {
    fn status(self) -> Status {
        match self {
            Target::Gap => Status::Gap,
            Target::Stick | Target::StickNeg => Status::Stick,
            Target::Slip | Target::SlipNeg => Status::Slip,
        }
    }
    /// Ratio `‖augmented‖ / radius` and sign.
    fn ratio(self) -> f64 {
        match self {
            Target::Gap => 1.0,
            Target::Stick => 0.4,
            Target::Slip => 2.5,
            Target::StickNeg => -0.4,
            Target::SlipNeg => -2.5,
        }
    }
}

/// Which laws a case evaluates.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Law {
    Sliding,
    Rolling,
    Spinning,
    All,
}

fn rand_vec(rng: &mut Rng, n: usize) -> NodeVector {
    NodeVector::from_fn(|i, _| if i < n { rng.uniform() } else { 0.0 })
}

fn rand_tg(rng: &mut Rng, n: usize) -> TangentialGradient {
    let mut g = TangentialGradient::zeros();
    for a in 0..2 {
        for j in 0..n {
            g[(a, j)] = rng.uniform();
        }
    }
    g
}

fn rand_sym(rng: &mut Rng, n: usize) -> NodeMatrix {
    let mut a = NodeMatrix::zeros();
    for i in 0..n {
        for j in 0..n {
            a[(i, j)] = rng.uniform();
        }
    }
    0.5 * (a + a.transpose())
}

fn unit2(rng: &mut Rng) -> Vector2<f64> {
    let a = std::f64::consts::PI * rng.uniform();
    Vector2::new(a.cos(), a.sin())
}

/// Gaps as functions of the node unknowns: `ḡ = ḡ0 + G0 Δx + ½ Δxᵀ H Δx`, `G = G0 + (HΔx)ᵀ`
/// (affine without curvature), rates `ω = ω0 + W Δx`.
#[derive(Clone, Debug)]
struct Case {
    n: usize,
    mu: f64,
    rho: f64,
    gamma: f64,
    sc: Scaling,
    /// Scaling of the rolling/spinning couples (distinct from the normal's).
    sc_couple: Scaling,
    g_n: f64,
    g_t: Vector2<f64>,
    gn: NodeVector,
    gt: TangentialGradient,
    curv: Option<Curvature>,
    omega_t: Vector2<f64>,
    w_t: TangentialGradient,
    omega_n: f64,
    w_n: NodeVector,
    /// Base point `Φ0 = [Δx (n); λ_N; λ_T; χ_N; χ_T]`.
    phi0: DVector<f64>,
}

impl Case {
    fn m(&self) -> usize {
        self.n + 6
    }

    fn gaps(&self, dx: &NodeVector) -> SlidingGaps {
        let mut g = SlidingGaps::zeros(self.n);
        g.g_n = self.g_n + self.gn.dot(dx);
        g.grad_n = self.gn;
        for a in 0..2 {
            g.g_t[a] = self.g_t[a] + self.gt.row(a).transpose().dot(dx);
        }
        g.grad_t = self.gt;
        if let Some(c) = &self.curv {
            g.g_n += 0.5 * dx.dot(&(c.h_n * dx));
            g.grad_n += c.h_n * dx;
            for a in 0..2 {
                g.g_t[a] += 0.5 * dx.dot(&(c.h_t[a] * dx));
                let row = (c.h_t[a] * dx).transpose();
                let mut r = g.grad_t.row_mut(a);
                r += row;
            }
        }
        g
    }

    fn rolling_rates(&self, dx: &NodeVector) -> RollingRates {
        RollingRates {
            omega_t: self.omega_t + self.w_t * dx,
            grad_t: self.w_t,
        }
    }

    fn spinning_rate(&self, dx: &NodeVector) -> SpinningRate {
        SpinningRate {
            omega_n: self.omega_n + self.w_n.dot(dx),
            grad_n: self.w_n,
        }
    }

    fn split(&self, phi: &DVector<f64>) -> (NodeVector, Multipliers) {
        let n = self.n;
        let dx = NodeVector::from_fn(|i, _| if i < n { phi[i] } else { 0.0 });
        (dx, Multipliers::from_slice(&phi.as_slice()[n..n + 6]))
    }

    /// Add the selected laws at `phi` into `out`; statuses (sliding, rolling, spinning).
    fn apply<S: Sink + ?Sized>(
        &self,
        law: Law,
        phi: &DVector<f64>,
        out: &mut S,
    ) -> [Option<Status>; 3] {
        let (dx, m) = self.split(phi);
        let gaps = self.gaps(&dx);
        let l = Layout::contiguous(self.n);
        let mut st = [None; 3];
        if matches!(law, Law::Sliding | Law::All) {
            st[0] = Some(sliding(
                self.sc,
                self.mu,
                &gaps,
                self.curv.as_ref(),
                &m,
                &l,
                out,
            ));
        }
        if matches!(law, Law::Rolling | Law::All) {
            let r = self.rolling_rates(&dx);
            st[1] = Some(rolling(
                self.sc_couple,
                self.sc,
                self.rho,
                &gaps,
                &r,
                &m,
                &l,
                out,
            ));
        }
        if matches!(law, Law::Spinning | Law::All) {
            let r = self.spinning_rate(&dx);
            st[2] = Some(spinning(
                self.sc_couple,
                self.sc,
                self.gamma,
                &gaps,
                &r,
                &m,
                &l,
                out,
            ));
        }
        st
    }

    fn eval(
        &self,
        law: Law,
        phi: &DVector<f64>,
    ) -> (DVector<f64>, DMatrix<f64>, [Option<Status>; 3]) {
        let m = self.m();
        let mut r = DVector::zeros(m);
        let mut k = DMatrix::zeros(m, m);
        let st = {
            let mut out = LocalSystem {
                residual: r.rows_mut(0, m),
                hessian: k.view_mut((0, 0), (m, m)),
                reference: 0.0,
            };
            self.apply(law, phi, &mut out)
        };
        (r, k, st)
    }

    /// Augmented Lagrangian of §8.2 (sliding + rolling + spinning parts as selected) with
    /// the cone radii frozen at `radii` (sliding, rolling, spinning; 0 = the cone `{0}`).
    fn lagrangian(&self, law: Law, phi: &DVector<f64>, radii: [f64; 3]) -> f64 {
        let (k, p) = (self.sc.k, self.sc.p);
        let (dx, m) = self.split(phi);
        let g = self.gaps(&dx);
        let mut l = 0.0;
        if matches!(law, Law::Sliding | Law::All) {
            let zn = g.zeta_n(self.sc, m.lambda_n);
            let zt = g.zeta_t(self.sc, m.lambda_t);
            let dn = zn.min(0.0);
            let dt = (zt.norm() - radii[0]).max(0.0);
            l += -k * g.g_n * m.lambda_n + 0.5 * p * g.g_n * g.g_n - dn * dn / (2.0 * p);
            l += -k * g.g_t.dot(&m.lambda_t) + 0.5 * p * g.g_t.norm_squared() - dt * dt / (2.0 * p);
        }
        let (k, p) = (self.sc_couple.k, self.sc_couple.p);
        if matches!(law, Law::Rolling | Law::All) {
            let w = self.rolling_rates(&dx).omega_t;
            let eta = k * m.chi_t - p * w;
            let d = (eta.norm() - radii[1]).max(0.0);
            l += -k * w.dot(&m.chi_t) + 0.5 * p * w.norm_squared() - d * d / (2.0 * p);
        }
        if matches!(law, Law::Spinning | Law::All) {
            let w = self.spinning_rate(&dx).omega_n;
            let eta = k * m.chi_n - p * w;
            let d = (eta.abs() - radii[2]).max(0.0);
            l += -k * w * m.chi_n + 0.5 * p * w * w - d * d / (2.0 * p);
        }
        l
    }

    /// Cone radii at the base point (0 when the normal is open).
    fn radii(&self) -> [f64; 3] {
        let (dx, m) = self.split(&self.phi0);
        let zn = self.gaps(&dx).zeta_n(self.sc, m.lambda_n).max(0.0);
        [self.mu * zn, self.rho * zn, self.gamma * zn]
    }
}

/// Random case with `n` node unknowns whose base point lands in the targeted statuses
/// (the sliding target fixes the normal: `Gap` makes every law open).
fn make_case(
    seed: u64,
    n: usize,
    curvature: bool,
    slide: Target,
    roll: Target,
    spin: Target,
) -> Case {
    let mut rng = Rng::new(seed);
    let curv = curvature.then(|| Curvature {
        h_n: rand_sym(&mut rng, n),
        h_t: [rand_sym(&mut rng, n), rand_sym(&mut rng, n)],
    });
    let mut case = Case {
        n,
        mu: MU,
        rho: RHO,
        gamma: GAMMA,
        sc: SC,
        sc_couple: SC_COUPLE,
        g_n: 0.5 * rng.uniform(),
        g_t: Vector2::new(rng.uniform(), rng.uniform()),
        gn: rand_vec(&mut rng, n),
        gt: rand_tg(&mut rng, n),
        curv,
        omega_t: Vector2::new(rng.uniform(), rng.uniform()),
        w_t: rand_tg(&mut rng, n),
        omega_n: rng.uniform(),
        w_n: rand_vec(&mut rng, n),
        phi0: DVector::zeros(n + 6),
    };
    let dx = rand_vec(&mut rng, n) * 0.3;
    let (k, p) = (SC.k, SC.p);
    let g = case.gaps(&dx);
    let zeta_n = if slide == Target::Gap { -2.0 } else { 2.0 };
    let zeta_t = if slide == Target::Gap {
        unit2(&mut rng)
    } else {
        slide.ratio() * MU * zeta_n * unit2(&mut rng)
    };
    let sigma = zeta_n.max(0.0);
    let eta_t = if sigma > 0.0 {
        roll.ratio() * RHO * sigma * unit2(&mut rng)
    } else {
        unit2(&mut rng)
    };
    let eta_n = if sigma > 0.0 {
        spin.ratio() * GAMMA * sigma
    } else {
        0.7
    };
    let omega_t = case.rolling_rates(&dx).omega_t;
    let omega_n = case.spinning_rate(&dx).omega_n;
    for i in 0..n {
        case.phi0[i] = dx[i];
    }
    case.phi0[n] = (zeta_n + p * g.g_n) / k;
    case.phi0[n + 1] = (zeta_t[0] + p * g.g_t[0]) / k;
    case.phi0[n + 2] = (zeta_t[1] + p * g.g_t[1]) / k;
    let (kr, pr) = (SC_COUPLE.k, SC_COUPLE.p);
    case.phi0[n + 3] = (eta_n + pr * omega_n) / kr;
    case.phi0[n + 4] = (eta_t[0] + pr * omega_t[0]) / kr;
    case.phi0[n + 5] = (eta_t[1] + pr * omega_t[1]) / kr;
    case
}

/// Max |K − K_FD| / (1 + max|K|) at the base point; asserts the statuses never change.
fn fd_error(case: &Case, law: Law) -> (f64, [Option<Status>; 3]) {
    let m = case.m();
    let (_, k, st0) = case.eval(law, &case.phi0);
    let mut num = DMatrix::zeros(m, m);
    for j in 0..m {
        let mut plus = case.phi0.clone();
        let mut minus = case.phi0.clone();
        plus[j] += EPS;
        minus[j] -= EPS;
        let (fp, _, sp) = case.eval(law, &plus);
        let (fm, _, sm) = case.eval(law, &minus);
        assert_eq!(sp, st0, "status changed under +ε on unknown {j}");
        assert_eq!(sm, st0, "status changed under −ε on unknown {j}");
        num.set_column(j, &((fp - fm) / (2.0 * EPS)));
    }
    assert!(k.iter().all(|v| v.is_finite()));
    ((&k - &num).amax() / (1.0 + k.amax()), st0)
}

/// Max |F − ∇𝓛| / (1 + max|F|) at the base point, cone radii frozen.
fn lagrangian_error(case: &Case, law: Law) -> f64 {
    let m = case.m();
    let radii = case.radii();
    let (f, _, _) = case.eval(law, &case.phi0);
    let mut grad = DVector::zeros(m);
    for j in 0..m {
        let mut plus = case.phi0.clone();
        let mut minus = case.phi0.clone();
        plus[j] += EPS;
        minus[j] -= EPS;
        grad[j] = (case.lagrangian(law, &plus, radii) - case.lagrangian(law, &minus, radii))
            / (2.0 * EPS);
    }
    (&f - &grad).amax() / (1.0 + f.amax())
}

const SEEDS: [u64; 4] = [1, 7, 42, 1234];

#[test]
fn sliding_tangent_matches_fd_in_every_status() {
    for (level, n, curv) in [
        ("position", 12, true),
        ("velocity", 6, false),
        ("point", 3, true),
    ] {
        for target in [Target::Gap, Target::Stick, Target::Slip] {
            let mut worst: f64 = 0.0;
            for seed in SEEDS {
                let case = make_case(seed, n, curv, target, Target::Stick, Target::Stick);
                let (err, st) = fd_error(&case, Law::Sliding);
                assert_eq!(st[0], Some(target.status()));
                assert!(err < TOL, "sliding {level} {target:?} seed {seed}: {err:e}");
                worst = worst.max(err);
            }
            eprintln!("FD sliding {level:8} n={n:2} {target:?}: max rel error {worst:.2e}");
        }
    }
}

#[test]
fn rolling_tangent_matches_fd_in_every_status() {
    for (slide, target) in [
        (Target::Gap, Target::Gap),
        (Target::Slip, Target::Stick),
        (Target::Stick, Target::Slip),
        (Target::Slip, Target::Slip),
    ] {
        let mut worst: f64 = 0.0;
        for seed in SEEDS {
            let case = make_case(seed, 6, false, slide, target, Target::Stick);
            let (err, st) = fd_error(&case, Law::Rolling);
            assert_eq!(st[1], Some(target.status()));
            assert!(err < TOL, "rolling {target:?} seed {seed}: {err:e}");
            worst = worst.max(err);
        }
        eprintln!("FD rolling  {target:?} (sliding {slide:?}): max rel error {worst:.2e}");
    }
}

#[test]
fn spinning_tangent_matches_fd_in_every_status_and_sign() {
    for (slide, target) in [
        (Target::Gap, Target::Gap),
        (Target::Slip, Target::Stick),
        (Target::Slip, Target::StickNeg),
        (Target::Stick, Target::Slip),
        (Target::Stick, Target::SlipNeg),
    ] {
        let mut worst: f64 = 0.0;
        for seed in SEEDS {
            let case = make_case(seed, 6, false, slide, Target::Stick, target);
            let (err, st) = fd_error(&case, Law::Spinning);
            assert_eq!(st[2], Some(target.status()));
            assert!(err < TOL, "spinning {target:?} seed {seed}: {err:e}");
            worst = worst.max(err);
        }
        eprintln!("FD spinning {target:?} (sliding {slide:?}): max rel error {worst:.2e}");
    }
}

#[test]
fn combined_velocity_level_tangent_matches_fd() {
    // All three laws in the same buffers (sphere–plane velocity level), with the rolling and
    // spinning cones coupled to Λ_N and v through σ_N.
    let combos = [
        (Target::Stick, Target::Stick, Target::Stick),
        (Target::Slip, Target::Slip, Target::SlipNeg),
        (Target::Stick, Target::Slip, Target::Slip),
        (Target::Slip, Target::Stick, Target::StickNeg),
        (Target::Gap, Target::Gap, Target::Gap),
    ];
    for (a, b, c) in combos {
        let mut worst: f64 = 0.0;
        for (i, seed) in SEEDS.iter().enumerate() {
            let n = [6, 12, 9, 3][i];
            let case = make_case(*seed, n, false, a, b, c);
            let (err, st) = fd_error(&case, Law::All);
            assert_eq!(st, [Some(a.status()), Some(b.status()), Some(c.status())]);
            assert!(err < TOL, "combined {a:?}/{b:?}/{c:?} seed {seed}: {err:e}");
            worst = worst.max(err);
        }
        eprintln!("FD combined sliding {a:?} rolling {b:?} spinning {c:?}: {worst:.2e}");
    }
}

#[test]
fn force_is_gradient_of_augmented_lagrangian_with_frozen_radius() {
    let mut cases = Vec::new();
    for t in [Target::Gap, Target::Stick, Target::Slip] {
        cases.push((
            "sliding/position",
            Law::Sliding,
            t,
            make_case(3, 12, true, t, t, t),
        ));
        cases.push((
            "sliding/velocity",
            Law::Sliding,
            t,
            make_case(4, 6, false, t, t, t),
        ));
        let slide = if t == Target::Gap {
            Target::Gap
        } else {
            Target::Slip
        };
        cases.push((
            "rolling",
            Law::Rolling,
            t,
            make_case(5, 6, false, slide, t, t),
        ));
        cases.push((
            "spinning",
            Law::Spinning,
            t,
            make_case(6, 6, false, slide, t, t),
        ));
    }
    let slip_neg = make_case(8, 6, false, Target::Stick, Target::Slip, Target::SlipNeg);
    cases.push(("spinning", Law::Spinning, Target::SlipNeg, slip_neg.clone()));
    cases.push(("all", Law::All, Target::Slip, slip_neg));
    for (name, law, t, case) in cases {
        let err = lagrangian_error(&case, law);
        eprintln!("dL {name:16} {t:?}: max rel error {err:.2e}");
        assert!(err < TOL, "{name} {t:?}: F ≠ ∇𝓛 ({err:e})");
    }
}

/// Point mass with rotary inertia on the plane z = 0 at velocity level: unknowns
/// `[v (3); ω (3); Λ_N; Λ_T; χ_N; χ_T]`, residual `M v − b + F`, ĝ̇_N = v_z, ĝ̇_T = v_xy,
/// ω_T = ω_xy, ω_N = ω_z. Solved by semi-smooth Newton with the law's tangent.
fn solve_block(sc: Scaling, b: [f64; 6]) -> (DVector<f64>, [Option<Status>; 3], Case, usize) {
    let n = 6;
    let mut case = Case {
        n,
        mu: 0.5,
        rho: 0.1,
        gamma: 0.05,
        sc,
        sc_couple: sc,
        g_n: 0.0,
        g_t: Vector2::zeros(),
        gn: NodeVector::zeros(),
        gt: TangentialGradient::zeros(),
        curv: None,
        omega_t: Vector2::zeros(),
        w_t: TangentialGradient::zeros(),
        omega_n: 0.0,
        w_n: NodeVector::zeros(),
        phi0: DVector::zeros(n + 6),
    };
    case.gn[2] = 1.0;
    case.gt[(0, 0)] = 1.0;
    case.gt[(1, 1)] = 1.0;
    case.w_t[(0, 3)] = 1.0;
    case.w_t[(1, 4)] = 1.0;
    case.w_n[5] = 1.0;
    let mass = [2.0, 2.0, 2.0, 0.4, 0.4, 0.4];
    let m = case.m();
    let system = |phi: &DVector<f64>| {
        let (mut r, mut k, st) = case.eval(Law::All, phi);
        for i in 0..n {
            r[i] += mass[i] * phi[i] - b[i];
            k[(i, i)] += mass[i];
        }
        (r, k, st)
    };
    let mut phi = DVector::zeros(m);
    for it in 0..100 {
        let (r, k, st) = system(&phi);
        if r.amax() < 1e-13 {
            return (phi, st, case, it);
        }
        let d = k.lu().solve(&(-&r)).expect("regular iteration matrix");
        // Backtracking (Armijo on ‖r‖, spec §10): the undamped semi-smooth Newton iteration
        // of the augmented Lagrangian can cycle between two statuses.
        let norm = r.norm();
        let mut alpha = 1.0;
        while alpha > 1e-6 && system(&(&phi + alpha * &d)).0.norm() > (1.0 - 1e-4 * alpha) * norm {
            alpha *= 0.5;
        }
        phi += alpha * d;
    }
    panic!("semi-smooth Newton did not converge");
}

#[test]
fn converged_states_satisfy_stick_and_slip_relations() {
    let (mu, rho, gamma, m_lin, m_rot) = (0.5, 0.1, 0.05, 2.0, 0.4);
    let cases = [
        // [b_x, b_y, b_z, c_x, c_y, c_z]; B = −b_z = 3 presses onto the plane.
        ("all stick", [0.6, -0.5, -3.0, 0.2, 0.1, 0.1]),
        ("all slip", [2.0, -1.5, -3.0, 0.5, 0.4, -0.4]),
        ("mixed", [-1.0, 1.6, -3.0, -0.1, 0.2, 0.3]),
        ("open", [1.0, 0.5, 2.0, 0.3, 0.2, 0.1]),
    ];
    for (name, b) in cases {
        let mut first: Option<DVector<f64>> = None;
        for sc in [Scaling::new(1.7, 2.3), Scaling::new(0.6, 4.0)] {
            let (phi, st, case, iters) = solve_block(sc, b);
            let (k, n) = (sc.k, 6);
            let (dx, mult) = case.split(&phi);
            let g = case.gaps(&dx);
            let big_b = -b[2];
            let (bt, ct) = (Vector2::new(b[0], b[1]), Vector2::new(b[3], b[4]));
            eprintln!(
                "Newton {name:9} k={} p={}: {iters} iterations, {st:?}",
                sc.k, sc.p
            );
            if big_b <= 0.0 {
                assert_eq!(st, [Some(Status::Gap); 3]);
                for i in 0..6 {
                    assert!(phi[n + i].abs() < 1e-12);
                }
                for i in 0..n {
                    let mass = if i < 3 { m_lin } else { m_rot };
                    assert!((phi[i] - b[i] / mass).abs() < 1e-12);
                }
                continue;
            }
            // Normal: Newton law ĝ̇_N = 0, physical impulse κΛ_N = B.
            assert!(g.g_n.abs() < 1e-12);
            assert!((k * mult.lambda_n - big_b).abs() < 1e-12);
            // Sliding.
            let zeta_t = g.zeta_t(sc, mult.lambda_t);
            if bt.norm() <= mu * big_b {
                assert_eq!(st[0], Some(Status::Stick), "{name}");
                assert!(g.g_t.norm() < 1e-12, "converged stick: ḡ_T = 0");
                assert!((k * mult.lambda_t + bt).norm() < 1e-12);
                assert!(mult.lambda_t.norm() <= mu * mult.lambda_n + 1e-12);
            } else {
                assert_eq!(st[0], Some(Status::Slip), "{name}");
                let tau = zeta_t / zeta_t.norm();
                assert!((mult.lambda_t - mu * mult.lambda_n * tau).norm() < 1e-12);
                // The reaction opposes the tangential gap rate.
                assert!((tau + g.g_t / g.g_t.norm()).norm() < 1e-10);
                let v_exact = bt * (1.0 - mu * big_b / bt.norm()) / m_lin;
                assert!((g.g_t - v_exact).norm() < 1e-12);
            }
            // Rolling.
            let w = case.rolling_rates(&dx).omega_t;
            if ct.norm() <= rho * big_b {
                assert_eq!(st[1], Some(Status::Stick), "{name}");
                assert!(w.norm() < 1e-12, "converged stick: ω_T = 0");
            } else {
                assert_eq!(st[1], Some(Status::Slip), "{name}");
                let eta = k * mult.chi_t - sc.p * w;
                let tau = eta / eta.norm();
                assert!((mult.chi_t - rho * mult.lambda_n * tau).norm() < 1e-12);
                let w_exact = ct * (1.0 - rho * big_b / ct.norm()) / m_rot;
                assert!((w - w_exact).norm() < 1e-12);
            }
            // Spinning.
            let wn = case.spinning_rate(&dx).omega_n;
            if b[5].abs() <= gamma * big_b {
                assert_eq!(st[2], Some(Status::Stick), "{name}");
                assert!(wn.abs() < 1e-12, "converged stick: ω_N = 0");
            } else {
                assert_eq!(st[2], Some(Status::Slip), "{name}");
                let s = (k * mult.chi_n - sc.p * wn).signum();
                assert!((mult.chi_n - gamma * mult.lambda_n * s).abs() < 1e-12);
                assert_eq!(s, -wn.signum(), "the couple opposes the spin");
                let w_exact = b[5] * (1.0 - gamma * big_b / b[5].abs()) / m_rot;
                assert!((wn - w_exact).abs() < 1e-12);
            }
            // Physical solution (velocities, impulses κλ) independent of κ, π (spec §7).
            let mut phys = phi.clone();
            for i in n..n + 6 {
                phys[i] *= k;
            }
            match &first {
                None => first = Some(phys),
                Some(f) => assert!((f - &phys).amax() < 1e-11, "{name}: depends on κ, π"),
            }
        }
    }
}

#[test]
fn zero_coefficients_give_no_resistance_and_no_nan() {
    let (k, p) = (SC.k, SC.p);
    let c = SC.gap_factor();
    // Closed contact with ζ_T = 0, η_T = 0, η_N = 0 exactly.
    let mut case = make_case(11, 6, true, Target::Stick, Target::Stick, Target::Stick);
    case.mu = 0.0;
    case.rho = 0.0;
    case.gamma = 0.0;
    let n = case.n;
    let (dx, _) = case.split(&case.phi0);
    let g = case.gaps(&dx);
    let (wt, wn) = (
        case.rolling_rates(&dx).omega_t,
        case.spinning_rate(&dx).omega_n,
    );
    for a in 0..2 {
        case.phi0[n + 1 + a] = p * g.g_t[a] / k;
        case.phi0[n + 4 + a] = p * wt[a] / k;
    }
    case.phi0[n + 3] = p * wn / k;
    let (_, m) = case.split(&case.phi0);
    assert!(g.zeta_t(SC, m.lambda_t).norm() < 1e-15);
    let (f, kk, st) = case.eval(Law::All, &case.phi0);
    assert_eq!(st, [Some(Status::Slip); 3]);
    assert!(f.iter().chain(kk.iter()).all(|v| v.is_finite()));
    // Node rows: the normal reaction only (no tangential, rolling or spinning force).
    let zn = g.zeta_n(SC, m.lambda_n);
    for i in 0..n {
        assert!((f[i] + zn * g.grad_n[i]).abs() < 1e-14);
    }
    // Tangential / couple rows: the gap rows −κ²/π λ, decoupled from everything else.
    for (row, value) in [
        (n + 1, m.lambda_t[0]),
        (n + 2, m.lambda_t[1]),
        (n + 3, m.chi_n),
        (n + 4, m.chi_t[0]),
        (n + 5, m.chi_t[1]),
    ] {
        // Couple rows use the couple scaling.
        let c = if row > n + 2 {
            SC_COUPLE.gap_factor()
        } else {
            c
        };
        assert!((f[row] + c * value).abs() < 1e-14);
        for j in 0..case.m() {
            let expect = if j == row { -c } else { 0.0 };
            assert_eq!(kk[(row, j)], expect, "row {row} col {j}");
            if j != row {
                assert_eq!(kk[(j, row)], 0.0, "col {row} row {j}");
            }
        }
    }
    // Same with λ_T = 0 (ζ_T = −π ḡ_T ≠ 0): still no tangential force, and F = ∇𝓛, K = FD.
    let mut case2 = make_case(12, 6, true, Target::Slip, Target::Slip, Target::Slip);
    case2.mu = 0.0;
    case2.rho = 0.0;
    case2.gamma = 0.0;
    for i in 1..6 {
        case2.phi0[n + i] = 0.0;
    }
    let (f2, _, _) = case2.eval(Law::All, &case2.phi0);
    let (dx2, m2) = case2.split(&case2.phi0);
    let g2 = case2.gaps(&dx2);
    let zn2 = g2.zeta_n(SC, m2.lambda_n);
    for i in 0..n {
        assert!((f2[i] + zn2 * g2.grad_n[i]).abs() < 1e-14);
    }
    for i in 1..6 {
        assert_eq!(f2[n + i], 0.0);
    }
    let (err, st2) = fd_error(&case2, Law::All);
    assert_eq!(st2, [Some(Status::Slip); 3]);
    assert!(err < TOL, "{err:e}");
    assert!(lagrangian_error(&case2, Law::All) < TOL);
    // Open contact with zero coefficients: plain gap.
    let mut case3 = make_case(13, 6, false, Target::Gap, Target::Gap, Target::Gap);
    case3.mu = 0.0;
    case3.rho = 0.0;
    case3.gamma = 0.0;
    let (_, _, st3) = case3.eval(Law::All, &case3.phi0);
    assert_eq!(st3, [Some(Status::Gap); 3]);
}

#[test]
fn forced_gap_drives_every_multiplier_to_zero() {
    // A state that would be in contact (slip) still gets only the gap rows when forced.
    let case = make_case(21, 6, false, Target::Slip, Target::Slip, Target::Slip);
    let n = case.n;
    let mm = case.m();
    let (_, m) = case.split(&case.phi0);
    let l = Layout::contiguous(n);
    let mut r = DVector::zeros(mm);
    let mut k = DMatrix::zeros(mm, mm);
    {
        let mut out = LocalSystem {
            residual: r.rows_mut(0, mm),
            hessian: k.view_mut((0, 0), (mm, mm)),
            reference: 0.0,
        };
        assert_eq!(sliding_forced_gap(SC, &m, &l, &mut out), Status::Gap);
        assert_eq!(rolling_forced_gap(SC, &m, &l, &mut out), Status::Gap);
        assert_eq!(spinning_forced_gap(SC, &m, &l, &mut out), Status::Gap);
    }
    let c = SC.gap_factor();
    for i in 0..mm {
        let expect = if i < n { 0.0 } else { -c * case.phi0[i] };
        assert!((r[i] - expect).abs() < 1e-15);
        for j in 0..mm {
            let expect = if i == j && i >= n { -c } else { 0.0 };
            assert_eq!(k[(i, j)], expect);
        }
    }
}

#[test]
fn layout_offsets_are_respected() {
    // Multipliers first, node unknowns last, χ before λ: the result must be the permutation
    // of the contiguous one, and nothing else may be touched.
    let case = make_case(31, 6, false, Target::Slip, Target::Slip, Target::SlipNeg);
    let n = case.n;
    let mm = case.m() + 2; // two foreign unknowns the law must leave alone
    let l = Layout {
        x: 7,
        lambda_n: 3,
        lambda_t: 4,
        chi_n: 6,
        chi_t: 1,
    };
    // perm[contiguous index] = index in the shuffled layout.
    let mut perm: Vec<usize> = (0..n).map(|i| l.x + i).collect();
    perm.extend([
        l.lambda_n,
        l.lambda_t,
        l.lambda_t + 1,
        l.chi_n,
        l.chi_t,
        l.chi_t + 1,
    ]);
    let (f, kk, st) = case.eval(Law::All, &case.phi0);
    let (dx, m) = case.split(&case.phi0);
    let gaps = case.gaps(&dx);
    let mut r = DVector::zeros(mm);
    let mut k = DMatrix::zeros(mm, mm);
    {
        let mut out = LocalSystem {
            residual: r.rows_mut(0, mm),
            hessian: k.view_mut((0, 0), (mm, mm)),
            reference: 0.0,
        };
        let s0 = sliding(SC, case.mu, &gaps, None, &m, &l, &mut out);
        let s1 = rolling(
            SC_COUPLE,
            SC,
            case.rho,
            &gaps,
            &case.rolling_rates(&dx),
            &m,
            &l,
            &mut out,
        );
        let s2 = spinning(
            SC_COUPLE,
            SC,
            case.gamma,
            &gaps,
            &case.spinning_rate(&dx),
            &m,
            &l,
            &mut out,
        );
        assert_eq!([Some(s0), Some(s1), Some(s2)], st);
    }
    for i in 0..case.m() {
        assert_eq!(r[perm[i]], f[i]);
        for j in 0..case.m() {
            assert_eq!(k[(perm[i], perm[j])], kk[(i, j)]);
        }
    }
    for foreign in [0, 13] {
        assert_eq!(r[foreign], 0.0);
        assert!(k
            .row(foreign)
            .iter()
            .chain(k.column(foreign).iter())
            .all(|v| *v == 0.0));
    }
}

#[test]
fn storage_beyond_n_is_ignored() {
    // Entries of the fixed-size storage outside the first n are never read into the result,
    // even when they hold NaN.
    let case = make_case(41, 5, true, Target::Slip, Target::Slip, Target::Slip);
    let (f, k, st) = case.eval(Law::All, &case.phi0);
    let (n, rest) = (case.n, MAX_NODE_UNKNOWNS - case.n);
    let (dx, m) = case.split(&case.phi0);
    let mut gaps = case.gaps(&dx);
    let mut roll = case.rolling_rates(&dx);
    let mut spin = case.spinning_rate(&dx);
    let mut curv = case.curv.expect("curvature");
    gaps.grad_n.rows_mut(n, rest).fill(f64::NAN);
    gaps.grad_t.columns_mut(n, rest).fill(f64::NAN);
    roll.grad_t.columns_mut(n, rest).fill(f64::NAN);
    spin.grad_n.rows_mut(n, rest).fill(f64::NAN);
    curv.h_n.rows_mut(n, rest).fill(f64::NAN);
    curv.h_n.columns_mut(n, rest).fill(f64::NAN);
    for h in curv.h_t.iter_mut() {
        h.rows_mut(n, rest).fill(f64::NAN);
        h.columns_mut(n, rest).fill(f64::NAN);
    }
    let mm = case.m();
    let l = Layout::contiguous(n);
    let mut r = DVector::zeros(mm);
    let mut kk = DMatrix::zeros(mm, mm);
    {
        let mut out = LocalSystem {
            residual: r.rows_mut(0, mm),
            hessian: kk.view_mut((0, 0), (mm, mm)),
            reference: 0.0,
        };
        let s0 = sliding(SC, case.mu, &gaps, Some(&curv), &m, &l, &mut out);
        let s1 = rolling(SC_COUPLE, SC, case.rho, &gaps, &roll, &m, &l, &mut out);
        let s2 = spinning(SC_COUPLE, SC, case.gamma, &gaps, &spin, &m, &l, &mut out);
        assert_eq!([Some(s0), Some(s1), Some(s2)], st);
    }
    assert_eq!(r, f);
    assert_eq!(kk, k);
}

#[test]
fn multipliers_and_status_helpers() {
    let m = Multipliers::from_slice(&[1.0, 2.0, 3.0]);
    assert_eq!(m.lambda_n, 1.0);
    assert_eq!(m.lambda_t, Vector2::new(2.0, 3.0));
    assert_eq!((m.chi_n, m.chi_t), (0.0, Vector2::zeros()));
    let m = Multipliers::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!((m.chi_n, m.chi_t), (4.0, Vector2::new(5.0, 6.0)));
    assert_eq!(
        Layout::contiguous(6),
        Layout {
            x: 0,
            lambda_n: 6,
            lambda_t: 7,
            chi_n: 9,
            chi_t: 10
        }
    );
    assert_eq!(
        [
            Status::Gap.code(),
            Status::Stick.code(),
            Status::Slip.code()
        ],
        [0.0, 1.0, 2.0]
    );
    assert!(!Status::Gap.is_closed() && Status::Stick.is_closed() && Status::Slip.is_closed());
    let cx = crate::fd::test_cx(crate::Level::Velocity);
    assert_eq!(Scaling::from_cx(&cx), Scaling::new(cx.k, cx.p));
}

/// A residual-only sink ([`ResidualOnly`]) receives exactly the force vector and the statuses
/// of the full evaluation, in every status combination, with and without curvatures, and no
/// tangent entry.
#[test]
fn residual_only_sink_gets_the_same_force_and_statuses() {
    /// Records residual entries; counts tangent entries (must stay 0 behind `ResidualOnly`).
    struct Probe {
        r: DVector<f64>,
        tangents: usize,
    }
    impl Sink for Probe {
        fn add_residual(&mut self, i: usize, value: f64) {
            self.r[i] += value;
        }
        fn add_tangent(&mut self, _i: usize, _j: usize, _value: f64) {
            self.tangents += 1;
        }
    }
    let targets = [Target::Gap, Target::Stick, Target::Slip];
    let mut combos = Vec::new();
    for &slide in &targets {
        for &roll in &targets {
            for &spin in &targets {
                combos.push((slide, roll, spin));
            }
        }
    }
    for (seed, &(slide, roll, spin)) in combos.iter().enumerate() {
        for curvature in [false, true] {
            let case = make_case(seed as u64 + 11, 12, curvature, slide, roll, spin);
            let (r, _, st) = case.eval(Law::All, &case.phi0);
            let mut probe = Probe {
                r: DVector::zeros(case.m()),
                tangents: 0,
            };
            let st_r = case.apply(Law::All, &case.phi0, &mut ResidualOnly(&mut probe));
            assert_eq!(st, st_r, "{slide:?} {roll:?} {spin:?}");
            assert_eq!(probe.tangents, 0);
            // Bit for bit: the same additions in the same order per entry.
            assert_eq!(
                r.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                probe.r.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{slide:?} {roll:?} {spin:?} curvature {curvature}"
            );
        }
    }
}
