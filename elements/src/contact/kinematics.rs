//! Rotation kinematics shared by the contact elements (contact-elements.md §1, nsga.md §12).
//!
//! Contact gaps use the **spatial** incremental rotation of a node over the step,
//! `ψ_s = vect log(R R_nᵀ) = R_n ψ_incr`, whose exact gradient w.r.t. the material variation
//! `δR = R hat(δΘ)` is `∂ψ_s/∂Θ = T_s⁻¹(ψ_s) R` with `T_s⁻¹ = (T⁻¹)ᵀ`. Position-level contact
//! Hessians also need the curvature `∂/∂Θ[(∂ψ_s/∂Θ)ᵀ w]` for a fixed spatial vector `w`.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use saltus_core::lie::{hat, log, tangent_inv};

/// Below this angle \[rad\] the coefficient functions use their Taylor series.
const SERIES_ANGLE: f64 = 1e-2;

/// `a(φ) = (φ/2) cot(φ/2)`, `b(φ) = (1 − a)/φ²`, `α = a'(φ)/φ`, `β = b'(φ)/φ`: the scalar
/// functions of `T⁻¹(ψ) w = a w + b ψ (ψ·w) + ½ ψ × w` and of its derivative.
fn coefficients(phi: f64) -> (f64, f64, f64, f64) {
    let p2 = phi * phi;
    if phi < SERIES_ANGLE {
        // Series to O(φ⁶): truncation below 1e-17 for φ < 1e-2.
        let a = 1.0 - p2 / 12.0 - p2 * p2 / 720.0 - p2 * p2 * p2 / 30240.0;
        let b = 1.0 / 12.0 + p2 / 720.0 + p2 * p2 / 30240.0;
        let alpha = -1.0 / 6.0 - p2 / 180.0 - p2 * p2 / 5040.0;
        let beta = 1.0 / 360.0 + p2 / 7560.0 + p2 * p2 / 201600.0;
        (a, b, alpha, beta)
    } else {
        let half = 0.5 * phi;
        let cot = half.cos() / half.sin();
        let csc2 = 1.0 / (half.sin() * half.sin());
        let a = half * cot;
        let da = 0.5 * cot - 0.25 * phi * csc2;
        let b = (1.0 - a) / p2;
        let db = -da / p2 - 2.0 * (1.0 - a) / (p2 * phi);
        (a, b, da / phi, db / phi)
    }
}

/// Spatial incremental rotation of a node over the step and its exact derivatives.
#[derive(Clone, Copy, Debug)]
pub struct SpatialIncrement {
    /// `ψ_s = vect log(R R_nᵀ)` \[rad\], spatial frame.
    pub psi: Vector3<f64>,
    /// `∂ψ_s/∂Θ = T_s⁻¹(ψ_s) R` (material variation of `R`).
    pub grad: Matrix3<f64>,
    r: Matrix3<f64>,
    ts_inv: Matrix3<f64>,
}

impl SpatialIncrement {
    /// Increment from `r_n` (converged, `t_n`) to `r` (current).
    pub fn new(r: &UnitQuaternion<f64>, r_n: &UnitQuaternion<f64>) -> Self {
        let psi = log(&(r * r_n.inverse()));
        let rm = r.to_rotation_matrix().into_inner();
        let ts_inv = tangent_inv(&psi).transpose();
        Self {
            psi,
            grad: ts_inv * rm,
            r: rm,
            ts_inv,
        }
    }

    /// `∂/∂Θ [(∂ψ_s/∂Θ)ᵀ w]` for a fixed spatial vector `w` (3×3, material variations):
    /// `hat(Rᵀ T⁻¹(ψ_s) w) + Rᵀ D(ψ_s, w) T_s⁻¹(ψ_s) R`, with `D = ∂(T⁻¹(ψ) w)/∂ψ`.
    pub fn curvature(&self, w: &Vector3<f64>) -> Matrix3<f64> {
        let psi = &self.psi;
        let phi = psi.norm();
        let (a, b, alpha, beta) = coefficients(phi);
        let pw = psi.dot(w);
        let t_inv_w = a * w + b * pw * psi + 0.5 * psi.cross(w);
        let d = alpha * w * psi.transpose()
            + beta * pw * psi * psi.transpose()
            + b * (psi * w.transpose() + Matrix3::identity() * pw)
            - 0.5 * hat(w);
        hat(&(self.r.transpose() * t_inv_w)) + self.r.transpose() * d * self.ts_inv * self.r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use saltus_core::fd::Rng;
    use saltus_core::lie::exp;

    #[test]
    fn gradient_and_curvature_match_finite_differences() {
        let mut rng = Rng::new(11);
        let eps = 1e-6;
        // Small and large increments, both sides of the series switch.
        for size in [1e-4, 5e-3, 0.05, 0.8, 2.5] {
            for _ in 0..4 {
                let r_n = rng.rotation();
                let dir = rng.vec3(1.0).normalize();
                let r = exp(&(dir * size)) * r_n;
                let w = rng.vec3(1.0);
                let inc = SpatialIncrement::new(&r, &r_n);
                assert!((inc.psi - dir * size).norm() < 1e-12);
                let mut g_fd = Matrix3::zeros();
                let mut h_fd = Matrix3::zeros();
                for j in 0..3 {
                    let e = Vector3::ith(j, eps);
                    let p = SpatialIncrement::new(&(r * exp(&e)), &r_n);
                    let m = SpatialIncrement::new(&(r * exp(&-e)), &r_n);
                    g_fd.set_column(j, &((p.psi - m.psi) / (2.0 * eps)));
                    h_fd.set_column(
                        j,
                        &((p.grad.transpose() * w - m.grad.transpose() * w) / (2.0 * eps)),
                    );
                }
                // Central differences: O(ε²) truncation ≈ 1e-12, round-off ≈ 1e-16/ε = 1e-10.
                assert!((g_fd - inc.grad).amax() < 1e-8, "grad at {size}");
                assert!(
                    (h_fd - inc.curvature(&w)).amax() < 1e-8,
                    "curvature at {size}: {}",
                    (h_fd - inc.curvature(&w)).amax()
                );
            }
        }
    }

    #[test]
    fn series_and_closed_form_agree_at_the_switch() {
        let (a0, b0, al0, be0) = coefficients(SERIES_ANGLE * (1.0 - 1e-9));
        let (a1, b1, al1, be1) = coefficients(SERIES_ANGLE * (1.0 + 1e-9));
        // Closed forms lose ~ε/φ⁴ ≈ 1e-8 of b' near φ = 1e-2 to cancellation; 1e-7 bounds it.
        for (x, y) in [(a0, a1), (b0, b1), (al0, al1), (be0, be1)] {
            assert!((x - y).abs() < 1e-7 * (1.0 + x.abs()), "{x} vs {y}");
        }
    }
}
