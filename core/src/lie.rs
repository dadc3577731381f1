//! Rotations on SO(3): exponential map, logarithm and the tangent operator of the
//! Géradin–Cardona inertial-frame formulation (spec `nsga.md` §12).
//!
//! Conventions: rotations are unit quaternions `R`; variations are **material**,
//! `δR = R · hat(δΘ)`; a material increment `ψ` composes as `R_{n+1} = R_n exp(hat ψ)`.
//! With these, `δψ = T⁻¹(ψ) δΘ` and the material angular velocity of `R(t) = R₀ exp(ψ(t))`
//! is `Ω = T(ψ) ψ̇`.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

/// Below this rotation angle [rad] the series forms `T ≈ I − ½ hat ψ` are used.
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
