//! Hertz stiffness and contact stresses of a ball on a bearing race (`contact-force.md` §7,
//! Seely–Smith / Boresi): the principal curvature sums `A`, `B`, the elastic parameter `Δ`,
//! and the chart coefficients of the contact ellipse read at the ratio `B/A`.

use super::law::Material;
use super::{check, ForceError};

/// Geometry and materials of one ball–race contact. Radii are signed curvature radii: positive
/// for a convex surface (the ball, an inner race), negative for a concave one (an outer race,
/// a conforming groove).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RaceContact {
    /// Ball radius `r_b > 0` \[m\].
    pub ball_radius: f64,
    /// Race radius in the rolling plane `r_i` \[m\] (inner race > 0, outer race < 0).
    pub race_radius: f64,
    /// Groove radius normal to the rolling direction `r_r` \[m\] (conforming groove < 0).
    pub groove_radius: f64,
    /// Ball material.
    pub ball: Material,
    /// Race material.
    pub race: Material,
}

/// Coefficients of the Boresi/Seely–Smith chart at one `B/A` (§7; for `B/A = 521` the thesis
/// reads `c_b = 0.22`, `c_δ = 0.17`, `k = 0.021`, `c_σ = 1`, `c_τ = 0.3`, `c_G = 0.27`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChartCoefficients {
    /// Semi-minor axis coefficient `c_b`: `b = c_b (F Δ)^{1/3}`.
    pub c_b: f64,
    /// Approach coefficient `c_δ` (stiffness).
    pub c_delta: f64,
    /// Ellipse ratio `k = b/a`.
    pub ratio: f64,
    /// Maximum-pressure coefficient `c_σ`: `σ_max = −c_σ b/Δ`.
    pub c_sigma: f64,
    /// Maximum-shear coefficient `c_τ`: `τ_max = c_τ b/Δ`.
    pub c_tau: f64,
    /// Octahedral-shear coefficient `c_G`: `τ_oct = c_G b/Δ`.
    pub c_oct: f64,
}

impl ChartCoefficients {
    /// The thesis' values at `B/A = 521` (bearing of `validation-cases.md` V19).
    pub const B_OVER_A_521: ChartCoefficients = ChartCoefficients {
        c_b: 0.22,
        c_delta: 0.17,
        ratio: 0.021,
        c_sigma: 1.0,
        c_tau: 0.3,
        c_oct: 0.27,
    };
}

/// Stresses at one contact force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HertzStresses {
    /// Semi-minor axis `b` \[m\] of the contact ellipse.
    pub semi_minor: f64,
    /// Semi-major axis `a = b/k` \[m\].
    pub semi_major: f64,
    /// Maximum principal (compressive) stress `σ_max` \[Pa\] (negative).
    pub max_pressure: f64,
    /// Maximum shear stress `τ_max` \[Pa\].
    pub max_shear: f64,
    /// Maximum octahedral shear stress `τ_oct` \[Pa\].
    pub octahedral_shear: f64,
}

impl RaceContact {
    /// Curvature sums `A = 1/(2 r_b) + 1/(2 r_r)`, `B = 1/(2 r_b) + 1/(2 r_i)` \[1/m\].
    pub fn curvature_sums(&self) -> Result<(f64, f64), ForceError> {
        check(
            "ball radius",
            self.ball_radius,
            self.ball_radius > 0.0,
            "must be > 0",
        )?;
        let inv = |r: f64| if r == 0.0 { f64::NAN } else { 0.5 / r };
        let a = inv(self.ball_radius) + inv(self.groove_radius);
        let b = inv(self.ball_radius) + inv(self.race_radius);
        check(
            "curvature sum A (groove)",
            a,
            a > 0.0,
            "must be > 0: groove wider than the ball",
        )?;
        check(
            "curvature sum B (race)",
            b,
            b > 0.0,
            "must be > 0: race wider than the ball",
        )?;
        Ok((a, b))
    }

    /// Elastic parameter `Δ = (σ_ball + σ_race) / (A + B)` \[m³/N\].
    pub fn delta(&self) -> Result<f64, ForceError> {
        let (a, b) = self.curvature_sums()?;
        Ok((self.ball.compliance()? + self.race.compliance()?) / (a + b))
    }

    /// Stiffness `K = [1 / (c_δ (A + B) Δ^{2/3})]^{3/2}` \[N/m^{3/2}\] of `F = K δ^{3/2}` (eq. 4.1).
    pub fn stiffness(&self, c: &ChartCoefficients) -> Result<f64, ForceError> {
        let (a, b) = self.curvature_sums()?;
        let d = self.delta()?;
        Ok((1.0 / (c.c_delta * (a + b) * d.powf(2.0 / 3.0))).powf(1.5))
    }

    /// Contact ellipse and stresses at the force `force ≥ 0` \[N\] (eq. 4.5).
    pub fn stresses(&self, force: f64, c: &ChartCoefficients) -> Result<HertzStresses, ForceError> {
        check("contact force", force, force >= 0.0, "must be ≥ 0")?;
        let d = self.delta()?;
        let b = c.c_b * (force * d).cbrt();
        Ok(HertzStresses {
            semi_minor: b,
            semi_major: b / c.ratio,
            max_pressure: -c.c_sigma * b / d,
            max_shear: c.c_tau * b / d,
            octahedral_shear: c.c_oct * b / d,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bearing example 1 of the thesis (V19) with steel (E = 200 GPa, ν = 0.3) and the
    /// inner-race geometry: A = 0.3166, B = 165.13 (B/A = 521), Δ = 5.50e-14, K ≈ 1.22e11, and
    /// at 100 N σ_max = −7.06e8 Pa, τ_max = 2.11e8 Pa, τ_oct = 1.90e8 Pa as printed (the spec's
    /// recomputation gives 2.12e8 / 1.91e8: the thesis rounded down, so 1 % on the shears,
    /// 0.5 % on the rest).
    #[test]
    fn v19_stresses_at_100_newton() {
        let c = RaceContact {
            ball_radius: 3.96875e-3,
            race_radius: 12.77125e-3,
            groove_radius: -3.97875e-3,
            ball: Material::STEEL,
            race: Material::STEEL,
        };
        let (a, b) = c.curvature_sums().unwrap();
        assert!((a - 0.3166).abs() < 1e-4, "{a}");
        assert!((b - 165.13).abs() < 0.01, "{b}");
        assert!((b / a - 521.0).abs() < 1.0, "{}", b / a);
        assert!((c.delta().unwrap() / 5.50e-14 - 1.0).abs() < 5e-3);
        let coef = ChartCoefficients::B_OVER_A_521;
        let k = c.stiffness(&coef).unwrap();
        assert!((k / 1.22e11 - 1.0).abs() < 5e-3, "{k}");
        let s = c.stresses(100.0, &coef).unwrap();
        assert!(
            (s.max_pressure / -7.06e8 - 1.0).abs() < 5e-3,
            "{}",
            s.max_pressure
        );
        assert!((s.max_shear / 2.11e8 - 1.0).abs() < 1e-2, "{}", s.max_shear);
        assert!(
            (s.octahedral_shear / 1.90e8 - 1.0).abs() < 1e-2,
            "{}",
            s.octahedral_shear
        );
        assert!((s.semi_major - s.semi_minor / 0.021).abs() < 1e-15);
        // Stresses scale as F^{1/3}.
        let s8 = c.stresses(800.0, &coef).unwrap();
        assert!((s8.max_pressure / s.max_pressure - 2.0).abs() < 1e-12);
    }

    /// A groove tighter than the ball and a negative force are refused by name.
    #[test]
    fn bad_geometry() {
        let c = RaceContact {
            ball_radius: 4e-3,
            race_radius: 12e-3,
            groove_radius: -3.9e-3,
            ball: Material::STEEL,
            race: Material::STEEL,
        };
        let e = c.curvature_sums().unwrap_err();
        assert!(e.to_string().contains("curvature sum A"), "{e}");
        let ok = RaceContact {
            groove_radius: -4.1e-3,
            ..c
        };
        let e = ok
            .stresses(-1.0, &ChartCoefficients::B_OVER_A_521)
            .unwrap_err();
        assert!(e.to_string().contains("contact force"), "{e}");
    }
}
