//! Rotations on SO(3): exponential map, logarithm and the tangent operator of the
//! Géradin–Cardona inertial-frame formulation (spec `nsga.md` §12).
//!
//! Conventions: rotations are unit quaternions `R`; variations are **material**,
//! `δR = R · hat(δΘ)`; a material increment `ψ` composes as `R_{n+1} = R_n exp(hat ψ)`.
//! With these, `δψ = T⁻¹(ψ) δΘ` and the material angular velocity of `R(t) = R₀ exp(ψ(t))`
//! is `Ω = T(ψ) ψ̇`.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

/// Below this rotation angle \[rad\] the series forms `T ≈ I − ½ hat ψ` are used.
const SMALL_ANGLE: f64 = 1e-6;

/// Skew-symmetric matrix `hat(a)` with `hat(a) b = a × b`.
#[inline]
pub fn hat(a: &Vector3<f64>) -> Matrix3<f64> {
    a.cross_matrix()
}

/// Exponential map: rotation by the Cartesian rotation vector `psi` (axis × angle, rad).
#[inline]
pub fn exp(psi: &Vector3<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::from_scaled_axis(*psi)
}

/// Logarithm: the rotation vector of `r`, with angle in `[0, π]`.
#[inline]
pub fn log(r: &UnitQuaternion<f64>) -> Vector3<f64> {
    r.scaled_axis()
}

/// Material tangent operator `T(ψ)` (right Jacobian of the exponential map), `nsga.md` §12:
/// `T = (sin φ/φ) I + (1 − sin φ/φ) n nᵀ − ((1 − cos φ)/φ) hat n`, `φ = |ψ|`, `n = ψ/φ`.
pub fn tangent(psi: &Vector3<f64>) -> Matrix3<f64> {
    let phi = psi.norm();
    if phi < SMALL_ANGLE {
        return Matrix3::identity() - 0.5 * hat(psi);
    }
    let n = psi / phi;
    let s = phi.sin() / phi;
    Matrix3::identity() * s + (1.0 - s) * n * n.transpose() - ((1.0 - phi.cos()) / phi) * hat(&n)
}

/// Inverse tangent operator `T⁻¹(ψ)`, `nsga.md` §12:
/// `T⁻¹ = (φ/2)/tan(φ/2) I + (1 − (φ/2)/tan(φ/2)) n nᵀ + (φ/2) hat n`.
pub fn tangent_inv(psi: &Vector3<f64>) -> Matrix3<f64> {
    let phi = psi.norm();
    if phi < SMALL_ANGLE {
        return Matrix3::identity() + 0.5 * hat(psi);
    }
    let n = psi / phi;
    let c = (0.5 * phi) / (0.5 * phi).tan();
    Matrix3::identity() * c + (1.0 - c) * n * n.transpose() + 0.5 * hat(psi)
}

/// Material perturbation `R exp(hat δΘ)`: the Lie-group "plus" used by Newton updates and
/// finite-difference checks.
#[inline]
pub fn perturb(r: &UnitQuaternion<f64>, d_theta: &Vector3<f64>) -> UnitQuaternion<f64> {
    r * exp(d_theta)
}

// Coefficient functions of the tangent operator and its inverse, with the derivatives the
// geometrically exact beam's exact tangents need.

/// Below this angle \[rad\] the coefficient functions of `T(ψ)` and `T⁻¹(ψ)` use their Taylor
/// series (truncation below 1e-15 relative; above it the closed forms lose at most ~1e-13 to
/// cancellation).
pub const SERIES_ANGLE: f64 = 0.5;

/// `[a, b, a'/φ, b'/φ]` of `T⁻¹(ψ) w = a w + b ψ (ψ·w) + ½ ψ × w`, `φ = |ψ|`:
/// `a = (φ/2) cot(φ/2)`, `b = (1 − a)/φ²`.
pub fn inv_tangent_coefficients(phi: f64) -> [f64; 4] {
    let p2 = phi * phi;
    if phi < SERIES_ANGLE {
        // a = 1 − Σ c_n φ^{2n}, c_n = |B_{2n}|/(2n)! (Bernoulli numbers).
        const C: [f64; 8] = [
            1.0 / 12.0,
            1.0 / 720.0,
            1.0 / 30240.0,
            1.0 / 1209600.0,
            1.0 / 47900160.0,
            691.0 / 1307674368000.0,
            1.0 / 74724249600.0,
            3617.0 / 10670622842880000.0,
        ];
        let (mut a, mut b, mut da, mut db) = (1.0, 0.0, 0.0, 0.0);
        let mut pw = 1.0; // φ^{2n−2}
        let mut pw_prev = 0.0; // φ^{2n−4}
        for (i, c) in C.iter().enumerate() {
            let n = (i + 1) as f64;
            a -= c * pw * p2;
            b += c * pw;
            da -= 2.0 * n * c * pw;
            db += (2.0 * n - 2.0) * c * pw_prev;
            pw_prev = pw;
            pw *= p2;
        }
        [a, b, da, db]
    } else {
        let x = 0.5 * phi;
        let (s, c) = x.sin_cos();
        let a = x * c / s;
        let a_prime = 0.5 * (c / s - x / (s * s));
        let b = (1.0 - a) / p2;
        let db = -a_prime / (p2 * phi) - 2.0 * (1.0 - a) / (p2 * p2);
        [a, b, a_prime / phi, db]
    }
}

/// `[a, b, c, a'/φ, b'/φ, c'/φ]` of `T(ψ) w = a w + b ψ (ψ·w) − c ψ × w`, `φ = |ψ|`:
/// `a = sin φ/φ`, `b = (1 − a)/φ²`, `c = (1 − cos φ)/φ²`.
pub fn tangent_coefficients(phi: f64) -> [f64; 6] {
    let p2 = phi * phi;
    if phi < SERIES_ANGLE {
        // a = Σ (−1)^k φ^{2k}/(2k+1)!, c = Σ (−1)^k φ^{2k}/(2k+2)!, b = Σ (−1)^k φ^{2k}/(2k+3)!;
        // derivatives/φ: Σ_{k≥1} (−1)^k 2k φ^{2k−2}/(2k+j)!.
        let mut out = [0.0; 6];
        let mut fact = [1.0, 2.0, 6.0]; // (2k+1)!, (2k+2)!, (2k+3)!
        let mut pw = 1.0; // φ^{2k}
        let mut pw_m = 0.0; // φ^{2k−2}
        for k in 0..10 {
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            let kk = k as f64;
            // order in `out`: a (j=1), b (j=3), c (j=2)
            out[0] += sign * pw / fact[0];
            out[1] += sign * pw / fact[2];
            out[2] += sign * pw / fact[1];
            if k > 0 {
                out[3] += sign * 2.0 * kk * pw_m / fact[0];
                out[4] += sign * 2.0 * kk * pw_m / fact[2];
                out[5] += sign * 2.0 * kk * pw_m / fact[1];
            }
            pw_m = pw;
            pw *= p2;
            for (j, f) in fact.iter_mut().enumerate() {
                let m = 2.0 * kk + 1.0 + j as f64; // current (2k+1+j)
                *f *= (m + 1.0) * (m + 2.0);
            }
        }
        out
    } else {
        let (s, c) = phi.sin_cos();
        let a = s / phi;
        let b = (phi - s) / (p2 * phi);
        let cc = (1.0 - c) / p2;
        let da = (phi * c - s) / (p2 * phi);
        let db = (1.0 - c) / (p2 * p2) - 3.0 * (phi - s) / (p2 * p2 * phi);
        let dc = (phi * s - 2.0 * (1.0 - c)) / (p2 * p2);
        [a, b, cc, da, db, dc]
    }
}

/// `T⁻¹(ψ)` from its coefficients.
pub fn inv_tangent_matrix(psi: &Vector3<f64>, k: &[f64; 4]) -> Matrix3<f64> {
    Matrix3::identity() * k[0] + psi * psi.transpose() * k[1] + hat(psi) * 0.5
}

/// `T(ψ)` from its coefficients.
pub fn tangent_matrix(psi: &Vector3<f64>, k: &[f64; 6]) -> Matrix3<f64> {
    Matrix3::identity() * k[0] + psi * psi.transpose() * k[1] - hat(psi) * k[2]
}

/// `∂(T⁻¹(ψ) w)/∂ψ` at fixed `w`.
pub fn inv_tangent_derivative(psi: &Vector3<f64>, w: &Vector3<f64>, k: &[f64; 4]) -> Matrix3<f64> {
    let pw = psi.dot(w);
    w * psi.transpose() * k[2]
        + psi * psi.transpose() * (k[3] * pw)
        + (psi * w.transpose() + Matrix3::identity() * pw) * k[1]
        - hat(w) * 0.5
}

/// `∂(T(ψ) w)/∂ψ` at fixed `w`.
pub fn tangent_derivative(psi: &Vector3<f64>, w: &Vector3<f64>, k: &[f64; 6]) -> Matrix3<f64> {
    let pw = psi.dot(w);
    w * psi.transpose() * k[3]
        + psi * psi.transpose() * (k[4] * pw)
        + (psi * w.transpose() + Matrix3::identity() * pw) * k[1]
        - psi.cross(w) * psi.transpose() * k[5]
        + hat(w) * k[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vecs() -> Vec<Vector3<f64>> {
        vec![
            Vector3::new(0.3, -0.2, 0.9),
            Vector3::new(1e-8, 2e-8, -1e-8),
            Vector3::new(2.5, 1.0, -0.4),
            Vector3::new(0.0, 0.0, 3.0),
        ]
    }

    #[test]
    fn exp_log_roundtrip() {
        for v in vecs() {
            // Round-off of quaternion normalisation and atan2: 1e-12 is ~1e4 ulps.
            assert!((log(&exp(&v)) - v).norm() < 1e-12);
        }
    }

    #[test]
    fn tangent_times_inverse_is_identity() {
        for v in vecs() {
            let p = tangent(&v) * tangent_inv(&v);
            assert!((p - Matrix3::identity()).norm() < 1e-12, "{p}");
        }
    }

    #[test]
    fn tangent_matches_finite_difference_of_exp() {
        // Ω = T(ψ) ψ̇: material angular velocity of R0 exp(ψ(t)) for ψ(t) = ψ + t e_i.
        let eps = 1e-6;
        for v in vecs() {
            let t = tangent(&v);
            for i in 0..3 {
                let e = Vector3::ith(i, eps);
                let rp = exp(&(v + e));
                let rm = exp(&(v - e));
                let omega = log(&(rm.inverse() * rp)) / (2.0 * eps);
                // central differences: O(eps²) truncation ~1e-12, round-off ~1e-16/eps ~1e-10.
                assert!(
                    (omega - t.column(i)).norm() < 1e-8,
                    "{omega} vs {}",
                    t.column(i)
                );
            }
        }
    }
}
