//! One contact's local problem of the settling's sweeps (module docs of `stage::settle`): its
//! Signorini–Coulomb problem with the other contacts frozen, `ḡ = c + W r`, solved exactly
//! (open, stick, slip), and the projection onto Coulomb's cone.

use nalgebra::{Matrix3, Vector3};

/// Projection onto Coulomb's cone `K_μ = {r : ‖r_T‖ ≤ μ r_N}`.
pub(super) fn project(r: &Vector3<f64>, mu: f64) -> Vector3<f64> {
    let t = (r[1] * r[1] + r[2] * r[2]).sqrt();
    // μ ≤ 0 or NaN: frictionless, the cone is the normal half-line.
    if mu.is_nan() || mu <= 0.0 {
        return Vector3::new(r[0].max(0.0), 0.0, 0.0);
    }
    if t <= mu * r[0] {
        return *r;
    }
    if mu * t <= -r[0] {
        return Vector3::zeros();
    }
    let rn = (r[0] + mu * t) / (1.0 + mu * mu);
    Vector3::new(rn, mu * rn * r[1] / t, mu * rn * r[2] / t)
}

/// Fixed-point iterations of the local slip problem.
const MAX_LOCAL: usize = 500;

/// One contact's Signorini–Coulomb problem with the others frozen: find `r ∈ K_μ` with
/// `ḡ = c + W r`, `0 ≤ r_N ⊥ ḡ_N ≥ 0`, and stick (`ḡ_T = 0`) or slip
/// (`r_T = −μ r_N ḡ_T/‖ḡ_T‖`). Tried in order: open (`r = 0`, valid when `c_N ≥ 0`), stick
/// (`r = −W⁻¹c` inside the cone, `w_inv = W⁻¹`), slip along one direction
/// ([`slip_by_direction`]), else slip by the projected fixed point of De Saxcé's bipotential,
/// `r ← P_K(r − ρ(ḡ + μ‖ḡ_T‖ e_N))`, `ρ = 1/‖W‖_∞ ≤ 1/λ_max(W)`, from `r0`. `slack` \[gap
/// units\]: [`slip_by_direction`]'s.
pub(super) fn local_solve(
    w: &Matrix3<f64>,
    w_inv: Option<&Matrix3<f64>>,
    c: &Vector3<f64>,
    mu: f64,
    r0: &Vector3<f64>,
    slack: f64,
) -> Vector3<f64> {
    if c[0] >= 0.0 {
        return Vector3::zeros();
    }
    if let Some(inv) = w_inv {
        let r = -(inv * c);
        let t = (r[1] * r[1] + r[2] * r[2]).sqrt();
        if r[0] > 0.0 && t <= mu * r[0] {
            return r;
        }
    }
    if let Some(r) = slip_by_direction(w, c, mu, slack) {
        return r;
    }
    let norm = (0..3)
        .map(|i| w.row(i).iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    if norm.is_nan() || norm <= 0.0 {
        return Vector3::zeros();
    }
    let rho = 1.0 / norm;
    let mut r = project(r0, mu);
    for _ in 0..MAX_LOCAL {
        let g = c + w * r;
        let gt = (g[1] * g[1] + g[2] * g[2]).sqrt();
        let next = project(&(r - rho * Vector3::new(g[0] + mu * gt, g[1], g[2])), mu);
        let done = (next - r).amax() <= 1e-15 * next.amax();
        r = next;
        if done {
            break;
        }
    }
    r
}

/// Secant iterations on the slip direction before [`local_solve`] falls back to the projected
/// iteration (a sphere's contact settles in one or two).
const MAX_DIRECTION: usize = 30;

/// [`local_solve`]'s slip branch as a root of one equation in the slip direction: with the unit
/// direction `d(t) = (d₀ + t d₀^⊥)/√(1 + t²)` (`d₀ = c_T/‖c_T‖`; `t` the tangent of its angle
/// from `d₀`) and `r = r_N (1, −μ d)`, Signorini's `ḡ_N = 0` gives
/// `r_N = −c_N / (W (1, −μ d))_N`, and the answer is the `t` at which the tangential gap `ḡ_T`
/// of that `r` lies along `d` (`F(t) = d × ḡ_T = 0`, slip opposing `r_T`), found by the secant
/// method from `t₀ = 0` and `t₁ = tan ∠(d₀, ḡ_T(0))`. When `W`'s tangential block is isotropic
/// and uncoupled from the normal one (a sphere's contact through its centre) `t₀` is the
/// answer, and `d₀` is used as it is: a problem symmetric about a plane (`c_T` and `W` without
/// out-of-plane components) gets an exactly in-plane answer, as from the projected iteration
/// (an angle from a fixed axis would not: `sin π ≠ 0` in floating point, and an out-of-plane
/// reaction of 1e-16 grows in an unstable mode). No trigonometry: a square root per step.
/// A root is where `|F|` is at the round-off of `ḡ` (1e-13 of its scale) or below `slack`
/// \[gap units\]: `F` is the gap across the slip direction, `|ḡ_T| sin` of the direction's
/// error.
/// `None` when the answer is not within 90° of `d₀` (with a slack: unless `d₀` already passes
/// it), when it does not settle within [`MAX_DIRECTION`] or leaves the slip branch (`r_N ≤ 0`,
/// `ḡ_T` against `d`).
fn slip_by_direction(
    w: &Matrix3<f64>,
    c: &Vector3<f64>,
    mu: f64,
    slack: f64,
) -> Option<Vector3<f64>> {
    let ct = (c[1] * c[1] + c[2] * c[2]).sqrt();
    if mu.is_nan() || mu <= 0.0 || ct == 0.0 {
        return None;
    }
    let d0 = [c[1] / ct, c[2] / ct];
    // `d`, `r`, `ḡ` and `F` at `t` (`t = 0`: `d₀` exactly).
    let at = |t: f64| {
        let s = 1.0 / (1.0 + t * t).sqrt();
        let d = [s * (d0[0] - t * d0[1]), s * (d0[1] + t * d0[0])];
        let u = Vector3::new(1.0, -mu * d[0], -mu * d[1]);
        let wu = w * u;
        let rn = -c[0] / wu[0];
        let g = c + rn * wu;
        (d, rn * u, g, d[0] * g[2] - d[1] * g[1])
    };
    // `F` at the round-off of `ḡ` (`1e-13` of its scale): a root.
    let root = |f: f64, g: &Vector3<f64>, r: &Vector3<f64>| {
        f.abs() <= slack
            || f.abs()
                <= 1e-13 * ((g[1] * g[1] + g[2] * g[2]).sqrt() + c.amax() + r.amax() * w.amax())
    };
    let (d, r, g, mut f0) = at(0.0);
    let along = g[1] * d[0] + g[2] * d[1];
    if !(r[0] > 0.0 && along > 0.0) {
        return None;
    }
    if root(f0, &g, &r) {
        return Some(r);
    }
    let (mut t0, mut t1) = (0.0, f0 / along);
    for _ in 0..MAX_DIRECTION {
        let (d, r, g, f1) = at(t1);
        if !(r[0] > 0.0 && f1.is_finite()) {
            return None;
        }
        if root(f1, &g, &r) {
            // Slipping along `d` (not against it).
            return (g[1] * d[0] + g[2] * d[1] > 0.0).then_some(r);
        }
        if f1 == f0 {
            // A flat secant away from the root: no answer here.
            return None;
        }
        (t0, t1, f0) = (t1, t1 - f1 * (t1 - t0) / (f1 - f0), f1);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use saltus_core::fd::Rng;

    fn random3(rng: &mut Rng, a: f64) -> Vector3<f64> {
        Vector3::new(a * rng.uniform(), a * rng.uniform(), a * rng.uniform())
    }

    #[test]
    fn projection_onto_the_cone_is_a_projection() {
        let mut rng = Rng::new(3);
        for mu in [0.0, 0.3, 1.0, 2.5] {
            for _ in 0..200 {
                let r = random3(&mut rng, 2.0);
                let p = project(&r, mu);
                // In the cone (round-off of one square root).
                assert!(p[1].hypot(p[2]) <= mu * p[0] * (1.0 + 1e-14) + 1e-15);
                // Idempotent, and `r − P r` orthogonal to `P r` (Moreau's decomposition).
                assert!((project(&p, mu) - p).amax() <= 1e-14 * (1.0 + p.amax()));
                assert!((r - p).dot(&p).abs() <= 1e-13 * (1.0 + r.norm_squared()));
            }
        }
    }

    /// A sphere's contact (`W` diagonal with isotropic tangential block): the slip answer in
    /// closed form, `r_N = −c_N/W_NN`, `r_T = −μ r_N c_T/‖c_T‖`, from the secant's first step; a
    /// slightly coupled `W` (off-diagonal 1e-3 of the diagonal, as in the granular pile)
    /// slips along the final `ḡ_T`.
    #[test]
    fn slip_along_one_direction() {
        let mut rng = Rng::new(17);
        for _ in 0..200 {
            let (wn, wt) = (1.0 + rng.uniform().abs(), 2.0 + rng.uniform().abs());
            let w = Matrix3::from_diagonal(&Vector3::new(wn, wt, wt));
            // Slipping: |c_T| well beyond what a stick reaction in the cone can cancel.
            let c = Vector3::new(-0.5 - 0.4 * rng.uniform().abs(), 3.0 * rng.uniform(), 3.0);
            let mu = 0.3;
            let r = slip_by_direction(&w, &c, mu, 0.0).expect("slip");
            let rn = -c[0] / wn;
            let ct = c[1].hypot(c[2]);
            let want = Vector3::new(rn, -mu * rn * c[1] / ct, -mu * rn * c[2] / ct);
            // Round-off of a few operations on O(1) values.
            assert!((r - want).amax() <= 1e-14, "{r:?} vs {want:?}");

            let coupling = Matrix3::from_fn(|_, _| 1e-3 * rng.uniform());
            let w = w + coupling + coupling.transpose();
            let r = slip_by_direction(&w, &c, mu, 0.0).expect("slip");
            let g = c + w * r;
            let (gt, rt) = (g[1].hypot(g[2]), r[1].hypot(r[2]));
            // Signorini to round-off, on the cone, and r_T against ḡ_T (secant stopped at a
            // step of 1e-15 rad).
            assert!(g[0].abs() <= 1e-14, "{g:?}");
            assert!((rt - mu * r[0]).abs() <= 1e-14, "{r:?}");
            assert!((r[1] * g[1] + r[2] * g[2] + rt * gt).abs() <= 1e-12 * rt * gt);
        }
    }

    /// With a slack, the slip answer stops where the gap across its direction is below it: on
    /// the cone, Signorini to round-off, and the direction within `slack/‖ḡ_T‖` of the exact
    /// one (a slack of 1e-3 of `‖c‖` on coupled `W`, as a sweep far from convergence sets).
    #[test]
    fn slip_with_a_slack_stops_within_it() {
        let mut rng = Rng::new(23);
        let mu = 0.3;
        let mut inexact = 0;
        for _ in 0..200 {
            let (wn, wt) = (1.0 + rng.uniform().abs(), 2.0 + rng.uniform().abs());
            let coupling = Matrix3::from_fn(|_, _| 1e-2 * rng.uniform());
            let w =
                Matrix3::from_diagonal(&Vector3::new(wn, wt, wt)) + coupling + coupling.transpose();
            let c = Vector3::new(-0.5 - 0.4 * rng.uniform().abs(), 3.0 * rng.uniform(), 3.0);
            let slack = 1e-3 * c.amax();
            let exact = slip_by_direction(&w, &c, mu, 0.0).expect("slip");
            let r = slip_by_direction(&w, &c, mu, slack).expect("slip");
            let g = c + w * r;
            let (gt, rt) = (g[1].hypot(g[2]), r[1].hypot(r[2]));
            // Signorini and the cone to round-off of O(1) values.
            assert!(g[0].abs() <= 1e-14, "{g:?}");
            assert!((rt - mu * r[0]).abs() <= 1e-14, "{r:?}");
            // The gap across the slip direction `d = −r_T/‖r_T‖`: at most the slack.
            let across = (r[1] * g[2] - r[2] * g[1]) / rt;
            assert!(across.abs() <= slack, "{across} > {slack}");
            // The direction's error θ at most φ, the angle between `d` and `ḡ_T` (`‖ḡ_T‖ sin φ` is
            // the gap across): to first order θ = φ/(1 + μ r_N W_T/‖ḡ_T‖) for a near-isotropic
            // `W`, as `ḡ_T = c_T − μ r_N W_T d` turns with `d`; 1 % for sin φ ≠ φ and the coupling.
            let angle = (r[1] * exact[2] - r[2] * exact[1]).abs() / (rt * exact[1].hypot(exact[2]));
            assert!(angle <= 1.01 * slack / gt, "{angle} vs {}", slack / gt);
            inexact += usize::from(r != exact);
        }
        // The slack saves secant steps on most of these problems.
        assert!(inexact > 100, "{inexact}");
    }

    /// A problem symmetric about a plane — `c_T` along one tangent, `W` without coupling to the
    /// other — slips exactly in that plane (zero, not 1e-16: the bearing of
    /// `tests/bearing_crank_slider.rs` keeps its balls in the mechanism's plane only so), also
    /// with `c_T` pointing backwards along the tangent (an angle of π from it).
    #[test]
    fn planar_slip_stays_in_its_plane() {
        let mut rng = Rng::new(23);
        for _ in 0..100 {
            let mut w = Matrix3::from_diagonal(&Vector3::new(1.3, 2.0, 2.0));
            w[(0, 1)] = 0.01 * rng.uniform();
            w[(1, 0)] = w[(0, 1)];
            let sign = if rng.uniform() < 0.0 { -1.0 } else { 1.0 };
            let c = Vector3::new(-0.5, sign * (3.0 + rng.uniform()), 0.0);
            let r = local_solve(
                &w,
                w.try_inverse().as_ref(),
                &c,
                0.3,
                &Vector3::zeros(),
                0.0,
            );
            assert!(r[0] > 0.0 && r[1] * sign < 0.0, "{r:?}");
            assert_eq!(r[2], 0.0, "{r:?}");
        }
    }

    /// Random positive definite `W` (as in the test below, anisotropic and coupled) with
    /// μ = 1: where the direction solve gives no answer for a slipping contact (a negative
    /// normal reaction along the way, an answer beyond 90° of `c_T`, no convergence), the
    /// projected iteration finds the slip. Such cases occur (7 % of these slips).
    #[test]
    fn slip_without_a_direction_answer_falls_back_to_the_projected_iteration() {
        let mut rng = Rng::new(29);
        let mut fallbacks = 0;
        for _ in 0..4000 {
            let a = Matrix3::from_fn(|_, _| rng.uniform());
            let w = a.transpose() * a + Matrix3::identity() * 0.5;
            let inv = w.try_inverse().unwrap();
            let mu = 1.0;
            let c = Vector3::new(-rng.uniform().abs(), rng.uniform(), rng.uniform());
            let stick = -(inv * c);
            if stick[0] > 0.0 && stick[1].hypot(stick[2]) <= mu * stick[0] {
                continue;
            }
            if slip_by_direction(&w, &c, mu, 0.0).is_some() {
                continue;
            }
            fallbacks += 1;
            let r = local_solve(&w, Some(&inv), &c, mu, &Vector3::zeros(), 0.0);
            let g = c + w * r;
            let (rt, gt) = (r[1].hypot(r[2]), g[1].hypot(g[2]));
            // As in the test below: the projected iteration stops at a relative change of
            // 1e-15; 1e-9 is far above where it stops and far below any wrong status.
            let tol = 1e-9 * (1.0 + c.amax());
            assert!(r[0] > 0.0 && g[0].abs() <= tol, "Signorini: {r:?} {g:?}");
            assert!((rt - mu * r[0]).abs() <= tol, "on the cone: {r:?}");
            let cross = g[1] * r[2] - g[2] * r[1];
            assert!(
                cross.abs() <= tol * (1.0 + gt),
                "ḡ_T not along r_T: {r:?} {g:?}"
            );
            assert!(
                g[1] * r[1] + g[2] * r[2] <= tol,
                "ḡ_T along r_T: {r:?} {g:?}"
            );
        }
        assert!(
            fallbacks > 20,
            "only {fallbacks} cases reached the projected iteration"
        );
    }

    /// The local problem's answer obeys Signorini and Coulomb for positive definite `W`:
    /// `r ∈ K_μ`, `ḡ = c + W r`, `r_N ḡ_N = 0`, `ḡ_N ≥ 0`; stick inside the cone (`ḡ_T = 0`),
    /// slip on its boundary with `ḡ_T` opposite to `r_T`.
    #[test]
    fn local_solve_obeys_signorini_and_coulomb() {
        let mut rng = Rng::new(11);
        let mut seen = [0usize; 3];
        for mu in [0.0, 0.3, 1.0] {
            for _ in 0..300 {
                let a = Matrix3::from_fn(|_, _| rng.uniform());
                let w = a.transpose() * a + Matrix3::identity() * 0.5;
                let c = random3(&mut rng, 1.0);
                let r = local_solve(&w, w.try_inverse().as_ref(), &c, mu, &Vector3::zeros(), 0.0);
                let g = c + w * r;
                let (rt, gt) = (r[1].hypot(r[2]), g[1].hypot(g[2]));
                // The slip branch is the direction solve (a root at 1e-13 of `ḡ`'s scale) or the
                // contracting fixed point stopped at 1e-15 relative change (500 iterations at
                // most, rate ≤ 1 − λ_min/‖W‖_∞ ≈ 0.9 here): 1e-9 is far above where either
                // stops and far below any wrong status.
                let tol = 1e-9 * (1.0 + c.amax());
                assert!(
                    r[0] >= 0.0 && rt <= mu * r[0] + tol,
                    "{r:?} outside the cone"
                );
                assert!(
                    g[0] >= -tol && (r[0] * g[0]).abs() <= tol,
                    "Signorini: {r:?} {g:?}"
                );
                if r[0] == 0.0 {
                    seen[0] += 1;
                } else if rt < mu * r[0] - tol {
                    seen[1] += 1;
                    assert!(gt <= tol, "stick with ḡ_T = {gt:e}");
                } else {
                    seen[2] += 1;
                    // ḡ_T = −s r_T/‖r_T‖ with s ≥ 0 (or ḡ_T = 0 on the boundary).
                    if mu > 0.0 && rt > 0.0 {
                        let cross = g[1] * r[2] - g[2] * r[1];
                        assert!(cross.abs() <= tol * (1.0 + rt), "ḡ_T not along r_T");
                        assert!(g[1] * r[1] + g[2] * r[2] <= tol, "ḡ_T along r_T");
                    } else {
                        assert!(rt <= tol);
                    }
                }
            }
        }
        // Open, stick and slip all occur (not a vacuous check).
        assert!(seen.iter().all(|&k| k > 20), "{seen:?}");
    }
}
