//! Continuous contact-force laws `F = K δⁿ + D δⁿ δ̇` and the Hertz stiffness `K`
//! (`contact-force.md` §§3–4).

use super::{check, ForceError};
use serde::{Deserialize, Serialize};

/// Elastic constants of one body's material.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// Young's modulus `E > 0` \[Pa\].
    pub young: f64,
    /// Poisson's ratio `ν ∈ (−1, 0.5]`.
    pub poisson: f64,
}

impl Material {
    /// Steel as the validation cases use it: `E = 200 GPa`, `ν = 0.3`.
    pub const STEEL: Material = Material {
        young: 200e9,
        poisson: 0.3,
    };

    /// The compliance `σ = (1 − ν²) / E` \[1/Pa\] (§4, no factor π).
    pub fn compliance(&self) -> Result<f64, ForceError> {
        check(
            "Young's modulus E",
            self.young,
            self.young > 0.0,
            "must be > 0",
        )?;
        check(
            "Poisson's ratio ν",
            self.poisson,
            self.poisson > -1.0 && self.poisson <= 0.5,
            "must be in (−1, 0.5]",
        )?;
        Ok((1.0 - self.poisson * self.poisson) / self.young)
    }
}

/// Effective radius `R* = 1 / (1/R_a + 1/R_b)` \[m\] of two surfaces given by their signed
/// curvatures `1/R` \[1/m\]: positive for a convex sphere, 0 for a plane, negative for a
/// concave cavity (a ball inside a spherical seat: `R* = R_a R_b / (R_b − R_a)`).
pub fn effective_radius(curvature_a: f64, curvature_b: f64) -> Result<f64, ForceError> {
    let sum = curvature_a + curvature_b;
    check(
        "curvature sum 1/R_a + 1/R_b",
        sum,
        sum > 0.0,
        "must be > 0 (a cavity larger than the ball it holds, not two planes)",
    )?;
    Ok(1.0 / sum)
}

/// Hertz stiffness `K = 4 / (3 (σ_a + σ_b)) √R*` \[N/m^{3/2}\] of two bodies of effective radius
/// `radius` = `R*` ([`effective_radius`]) (§4, C.3–C.4), for `F = K δ^{3/2}`.
pub fn hertz_stiffness(radius: f64, a: &Material, b: &Material) -> Result<f64, ForceError> {
    check("effective radius R*", radius, radius > 0.0, "must be > 0")?;
    let sigma = a.compliance()? + b.compliance()?;
    Ok(4.0 / (3.0 * sigma) * radius.sqrt())
}

/// Hysteresis damping `D` of the Hunt–Crossley family (§3), from the restitution `e_N` and the
/// initial approach speed `δ̇_i` of the impact. All are `D = χ K / δ̇_i` with `χ(e_N)`. The
/// thesis' fifth model, Hu et al. (2011), is not here: its copy of the formula is unreadable
/// (spec §3: "not recoverable") and the paper was not available to us, so there is no
/// published formula to implement. The others:
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Damping {
    /// No damping: Hertz's elastic law `F = K δⁿ`.
    Hertz,
    /// Hunt & Crossley (1975): `χ = 3 (1 − e) / 2`.
    HuntCrossley,
    /// Lankarani & Nikravesh (1990): `χ = 3 (1 − e²) / 4`.
    LankaraniNikravesh,
    /// Flores et al. (2011): `χ = 8 (1 − e) / (5 e)`.
    Flores,
    /// Zhang et al. (2020): `χ = 3 (1 − e) / (2 e f(e))`, `f(e) = 0.6181 e^{b e} + 0.899 e^{0.09025 e}`,
    /// a fit to [`Damping::Exact`]. The thesis' copy of the exponent `b` is unreadable (spec §3
    /// flag) and the paper was not available to us: `b = −3.542` is our refit of the same
    /// two-exponential form with the three printed constants (single-degree-of-freedom
    /// restitution within 1e-3 of `e` on `[0.05, 0.95]`).
    Zhang,
    /// The damping whose single-degree-of-freedom impact restores exactly `e`, for any `K`
    /// and `n`: `χ` solving `ln((1 + χ)/(1 − χ e)) = χ (1 + e)` (integrate
    /// `m δ̇ dδ̇ = −K δⁿ (1 + χ δ̇/δ̇_i) dδ` over compression and restitution: the elastic work
    /// cancels). Solved by bisection; `χ → 1/e` as `e → 0`.
    Exact,
}

impl Damping {
    /// Every damping model, in declaration order.
    pub const ALL: [Damping; 6] = [
        Damping::Hertz,
        Damping::HuntCrossley,
        Damping::LankaraniNikravesh,
        Damping::Flores,
        Damping::Zhang,
        Damping::Exact,
    ];

    /// The model's name as model files and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            Damping::Hertz => "hertz",
            Damping::HuntCrossley => "hunt_crossley",
            Damping::LankaraniNikravesh => "lankarani_nikravesh",
            Damping::Flores => "flores",
            Damping::Zhang => "zhang",
            Damping::Exact => "exact",
        }
    }

    /// The model named `name` ([`Damping::name`]).
    pub fn from_name(name: &str) -> Option<Damping> {
        Damping::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The dimensionless factor `χ(e)` of `D = χ K / δ̇_i`.
    pub fn factor(self, e: f64) -> f64 {
        match self {
            Damping::Hertz => 0.0,
            Damping::HuntCrossley => 1.5 * (1.0 - e),
            Damping::LankaraniNikravesh => 0.75 * (1.0 - e * e),
            Damping::Flores => 1.6 * (1.0 - e) / e,
            Damping::Zhang => {
                1.5 * (1.0 - e) / (e * (0.6181 * (-3.542 * e).exp() + 0.899 * (0.09025 * e).exp()))
            }
            Damping::Exact => exact_factor(e),
        }
    }
}

/// `χ(e)` of [`Damping::Exact`]: the root in `(0, 1/e)` of
/// `φ(χ) = ln((1 + χ)/(1 − χ e)) − χ (1 + e)` (negative near 0 for `e < 1`, → +∞ at `1/e`);
/// 0 for `e ≥ 1`, +∞ for `e ≤ 0`.
fn exact_factor(e: f64) -> f64 {
    if e >= 1.0 {
        return 0.0;
    }
    if e <= 0.0 {
        return f64::INFINITY;
    }
    let phi = |c: f64| ((1.0 + c) / (1.0 - c * e)).ln() - c * (1.0 + e);
    let (mut lo, mut hi) = (0.0, 1.0 / e);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if phi(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A continuous normal contact law `F = K δⁿ + D δⁿ δ̇` (§3) for `δ > 0`, zero otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForceLaw {
    /// Stiffness `K > 0` \[N/mⁿ\] (Hertz: [`hertz_stiffness`]).
    pub stiffness: f64,
    /// Exponent `n > 0` (3/2 for Hertz contact of spheres).
    #[serde(default = "three_halves")]
    pub exponent: f64,
    /// Hysteresis damping model.
    #[serde(default = "flores")]
    pub damping: Damping,
}

fn three_halves() -> f64 {
    1.5
}

fn flores() -> Damping {
    Damping::Flores
}

impl ForceLaw {
    /// A Hertz-exponent law (`n = 3/2`) of stiffness `k` with damping `damping`.
    pub fn hertz(k: f64, damping: Damping) -> Self {
        Self {
            stiffness: k,
            exponent: 1.5,
            damping,
        }
    }

    /// Check the law's parameters.
    pub fn validate(&self) -> Result<(), ForceError> {
        check(
            "stiffness K",
            self.stiffness,
            self.stiffness > 0.0,
            "must be > 0",
        )?;
        check(
            "exponent n",
            self.exponent,
            self.exponent > 0.0,
            "must be > 0",
        )?;
        Ok(())
    }

    /// Damping coefficient `D = χ(e) K / δ̇_i` \[N s/m^{n+1}\] of an impact with restitution `e`
    /// and approach speed `v_i = δ̇_i > 0`.
    pub fn damping_coefficient(&self, e: f64, v_i: f64) -> f64 {
        self.damping.factor(e) * self.stiffness / v_i
    }

    /// Force `F = K δⁿ + D δⁿ δ̇` \[N\] at penetration `δ` and rate `δ̇` with damping coefficient
    /// `d` ([`ForceLaw::damping_coefficient`]); zero for `δ ≤ 0`. With strong damping
    /// (e.g. Flores' law at small `e`) the formula turns negative near separation; it is
    /// returned as is, as the published laws state it.
    pub fn force(&self, delta: f64, rate: f64, d: f64) -> f64 {
        if delta <= 0.0 {
            return 0.0;
        }
        let p = delta.powf(self.exponent);
        self.stiffness * p + d * p * rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stiffnesses the spec checks against the thesis (§4): bouncing ball, two spheres,
    /// Machado's block, each to the three digits printed.
    #[test]
    fn hertz_stiffness_matches_the_thesis() {
        let m = |young| Material {
            young,
            poisson: 0.3,
        };
        // Sphere on a rigid plane: σ_b = 0 is not a material; the thesis uses the same
        // material for ball and ground (two equal compliances).
        let ball = m(6.043e8);
        let k = hertz_stiffness(effective_radius(1.0 / 0.1, 0.0).unwrap(), &ball, &ball).unwrap();
        assert!((k / 1.40e8 - 1.0).abs() < 5e-3, "{k}");
        let s = m(7.5e10);
        let r = effective_radius(1.0 / 0.02, 1.0 / 0.02).unwrap();
        let k = hertz_stiffness(r, &s, &s).unwrap();
        assert!((k / 5.49e9 - 1.0).abs() < 1e-3, "{k}");
        let s = m(1.98e11);
        let r = effective_radius(1.0 / 0.0085, 1.0 / 0.0085).unwrap();
        let k = hertz_stiffness(r, &s, &s).unwrap();
        assert!((k / 9.46e9 - 1.0).abs() < 1e-3, "{k}");
    }

    /// A ball in a seat of radius R_b: R* = R_a R_b / (R_b − R_a); a seat smaller than the ball
    /// and bad materials are refused with the parameter named.
    #[test]
    fn conforming_radius_and_bad_input() {
        let r = effective_radius(1.0 / 0.01, -1.0 / 0.0101).unwrap();
        assert!((r - 0.01 * 0.0101 / 0.0001).abs() < 1e-9);
        let e = effective_radius(1.0 / 0.01, -1.0 / 0.009).unwrap_err();
        assert!(e.to_string().contains("curvature sum"), "{e}");
        let bad = Material {
            young: -1.0,
            poisson: 0.3,
        };
        let e = hertz_stiffness(0.1, &bad, &Material::STEEL).unwrap_err();
        assert!(e.to_string().contains("Young's modulus E = -1"), "{e}");
        let bad = Material {
            young: 1e9,
            poisson: 0.7,
        };
        assert!(bad.compliance().is_err());
    }

    /// `D = χ K / δ̇_i`: every model vanishes for an elastic impact (e = 1) and the force is
    /// `K δⁿ (1 + χ δ̇/δ̇_i)`.
    #[test]
    fn damping_models() {
        for d in Damping::ALL {
            assert_eq!(d.factor(1.0), 0.0, "{d:?}");
            assert_eq!(Damping::from_name(d.name()), Some(d));
        }
        assert!((Damping::HuntCrossley.factor(0.6) - 0.6).abs() < 1e-15);
        assert!((Damping::LankaraniNikravesh.factor(0.6) - 0.48).abs() < 1e-15);
        assert!((Damping::Flores.factor(0.5) - 1.6).abs() < 1e-15);
        let law = ForceLaw::hertz(2.0, Damping::HuntCrossley);
        let d = law.damping_coefficient(0.6, 0.5);
        assert!((law.force(0.04, 0.25, d) - 2.0 * 0.008 * (1.0 + 0.6 * 0.5)).abs() < 1e-15);
        assert_eq!(law.force(-1e-3, 1.0, d), 0.0);
        // The exact factor near e = 1 is Hunt–Crossley's 1.5 (1 − e) plus second order.
        let e = 0.999;
        assert!((Damping::Exact.factor(e) / (1.5 * (1.0 - e)) - 1.0).abs() < 2e-3);
        assert!(Damping::Exact.factor(0.0).is_infinite());
    }
}
