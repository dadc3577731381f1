//! Beam sections: material and geometry ([`BeamSpec`]) and the section stiffness and inertia
//! of one element ([`BeamSection`]).

use super::*;

/// Model-file parameters of `beam` (two frame nodes). Also the code-first description of a
/// beam section for [`Beam::new`] and [`BeamBuilder`].
///
/// Exactly one of `G` and `nu` must be given. Damping: either the Rayleigh coefficients
/// `alpha` (mass-proportional) and/or `beta` (stiffness-proportional), or `damping_ratio`
/// with `damping_frequency` (then `β = ξ/(π f)`, stiffness-proportional only, `alpha`/`beta`
/// must be absent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BeamSpec {
    /// Young's modulus `E` \[Pa\], > 0.
    #[serde(rename = "E")]
    pub youngs_modulus: f64,
    /// Shear modulus `G` \[Pa\], > 0 (or give `nu`).
    #[serde(rename = "G", default, skip_serializing_if = "Option::is_none")]
    pub shear_modulus: Option<f64>,
    /// Poisson's ratio `ν` \[-\] in (−1, 0.5]: `G = E/(2(1 + ν))` (or give `G`).
    #[serde(rename = "nu", default, skip_serializing_if = "Option::is_none")]
    pub poisson_ratio: Option<f64>,
    /// Cross-section area `A` \[m²\], > 0.
    #[serde(rename = "A")]
    pub area: f64,
    /// Timoshenko shear coefficient `κ` \[-\] (shear areas `κ A`), > 0; default 5/6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shear_coefficient: Option<f64>,
    /// Shear area for the shear force along section axis 2 \[m²\] (default `κ A`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shear_area_2: Option<f64>,
    /// Shear area for the shear force along section axis 3 \[m²\] (default `κ A`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shear_area_3: Option<f64>,
    /// Second moment of area about section axis 2, `I₂ = ∫ x₃² dA` \[m⁴\], > 0 (bending
    /// stiffness `E I₂` for the curvature `K₂`).
    #[serde(rename = "I2")]
    pub i2: f64,
    /// Second moment of area about section axis 3, `I₃ = ∫ x₂² dA` \[m⁴\], > 0 (bending in the
    /// plane of axes 1–2).
    #[serde(rename = "I3")]
    pub i3: f64,
    /// Torsion constant `J` \[m⁴\], > 0 (torsional stiffness `G J`); default `I₂ + I₃` (exact
    /// for circular sections).
    #[serde(rename = "J", default, skip_serializing_if = "Option::is_none")]
    pub torsion_constant: Option<f64>,
    /// Density `ρ` \[kg/m³\], >= 0.
    pub rho: f64,
    /// Direction of section axis 2 \[-\] in the inertial frame at the initial configuration (any
    /// length; its component along the beam axis is removed). Default: `e_z × axis` (for a
    /// beam in the x–y plane axis 2 lies in that plane and axis 3 is `e_z`), or `e_y × axis`
    /// when the axis is within ~26° of `e_z`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<[f64; 3]>,
    /// Mass-proportional Rayleigh coefficient `α` \[1/s\], >= 0 (damps rigid motion too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Stiffness-proportional Rayleigh coefficient `β` \[s\], >= 0 (section forces `β C ε̇`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Modal damping ratio `ξ` \[-\] (e.g. 0.0004 for 0.04 %), >= 0, reached at
    /// `damping_frequency` by stiffness-proportional damping `β = ξ/(π f)`. The ratio of a mode
    /// of frequency `f'` is then `ξ f'/f`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_ratio: Option<f64>,
    /// Frequency `f` \[Hz\] (not rad/s) at which `damping_ratio` is reached, > 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_frequency: Option<f64>,
    /// Lumped translational mass `ρ A L/2` per node instead of the consistent matrix (default
    /// `false`). With one-point integration the lumped mass compensates the element's
    /// stiffening: cantilever bending modes 1–3 are within 0.2 % of Euler–Bernoulli with 20
    /// elements, against +0.03/+0.61/+1.78 % with the consistent mass (`tests/beam_modes.rs`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lumped_mass: bool,
}

impl BeamSpec {
    /// Solid circular section of radius `radius` \[m\]: `A = π r²`, `I₂ = I₃ = π r⁴/4`,
    /// `J = π r⁴/2`, shear coefficient `6(1 + ν)/(7 + 6ν)` (Cowper); `E` \[Pa\], `ν`,
    /// `ρ` \[kg/m³\]. No damping.
    pub fn circular(e: f64, nu: f64, rho: f64, radius: f64) -> Self {
        let i = PI * radius.powi(4) / 4.0;
        Self {
            youngs_modulus: e,
            poisson_ratio: Some(nu),
            area: PI * radius * radius,
            shear_coefficient: Some(6.0 * (1.0 + nu) / (7.0 + 6.0 * nu)),
            i2: i,
            i3: i,
            torsion_constant: Some(2.0 * i),
            rho,
            ..Self::default()
        }
    }

    /// Solid rectangular section, `width` \[m\] along section axis 2 and `height` \[m\] along
    /// axis 3: `A = w h`, `I₂ = w h³/12`, `I₃ = h w³/12`, Saint-Venant torsion constant
    /// `J ≈ a b³ (1/3 − 0.21 (b/a)(1 − b⁴/(12 a⁴)))` (`a ≥ b` the sides, error < 1 %), shear
    /// coefficient `10(1 + ν)/(12 + 11ν)` (Cowper); `E` \[Pa\], `ν`, `ρ` \[kg/m³\]. No damping.
    pub fn rectangular(e: f64, nu: f64, rho: f64, width: f64, height: f64) -> Self {
        let (a, b) = if width >= height {
            (width, height)
        } else {
            (height, width)
        };
        let j =
            a * b.powi(3) * (1.0 / 3.0 - 0.21 * (b / a) * (1.0 - b.powi(4) / (12.0 * a.powi(4))));
        Self {
            youngs_modulus: e,
            poisson_ratio: Some(nu),
            area: width * height,
            shear_coefficient: Some(10.0 * (1.0 + nu) / (12.0 + 11.0 * nu)),
            i2: width * height.powi(3) / 12.0,
            i3: height * width.powi(3) / 12.0,
            torsion_constant: Some(j),
            rho,
            ..Self::default()
        }
    }

    /// Set the Rayleigh coefficients `α` \[1/s\] and `β` \[s\].
    pub fn with_rayleigh(mut self, alpha: f64, beta: f64) -> Self {
        self.alpha = Some(alpha);
        self.beta = Some(beta);
        self.damping_ratio = None;
        self.damping_frequency = None;
        self
    }

    /// Stiffness-proportional damping with ratio `ratio` at `frequency_hz` \[Hz\]
    /// (`β = ξ/(π f)`).
    pub fn with_damping_ratio(mut self, ratio: f64, frequency_hz: f64) -> Self {
        self.alpha = None;
        self.beta = None;
        self.damping_ratio = Some(ratio);
        self.damping_frequency = Some(frequency_hz);
        self
    }

    /// Set the direction of section axis 2 (inertial frame, initial configuration).
    pub fn with_orientation(mut self, axis_2: Vector3<f64>) -> Self {
        self.orientation = Some(axis_2.into());
        self
    }

    /// Validate the parameters and compute the section constants; `element` names the element
    /// in errors.
    pub fn section(&self, element: &str) -> Result<BeamSection, BuildError> {
        let e = positive(element, "E", self.youngs_modulus)?;
        let g = match (self.shear_modulus, self.poisson_ratio) {
            (Some(g), None) => positive(element, "G", g)?,
            (None, Some(nu)) => {
                if !(nu.is_finite() && nu > -1.0 && nu <= 0.5) {
                    return Err(invalid(
                        element,
                        "nu",
                        format!("must be in (-1, 0.5], got {nu}"),
                    ));
                }
                e / (2.0 * (1.0 + nu))
            }
            (Some(_), Some(_)) => {
                return Err(invalid(element, "G", "give either `G` or `nu`, not both"))
            }
            (None, None) => return Err(invalid(element, "G", "one of `G` and `nu` is required")),
        };
        let area = positive(element, "A", self.area)?;
        let kappa = positive(
            element,
            "shear_coefficient",
            self.shear_coefficient.unwrap_or(DEFAULT_SHEAR_COEFFICIENT),
        )?;
        let a2 = positive(
            element,
            "shear_area_2",
            self.shear_area_2.unwrap_or(kappa * area),
        )?;
        let a3 = positive(
            element,
            "shear_area_3",
            self.shear_area_3.unwrap_or(kappa * area),
        )?;
        let i2 = positive(element, "I2", self.i2)?;
        let i3 = positive(element, "I3", self.i3)?;
        let j = positive(element, "J", self.torsion_constant.unwrap_or(i2 + i3))?;
        let rho = non_negative(element, "rho", self.rho)?;
        let orientation = match self.orientation {
            Some(o) => {
                let o = Vector3::from(o);
                if !(o.iter().all(|v| v.is_finite()) && o.norm() > 0.0) {
                    return Err(invalid(
                        element,
                        "orientation",
                        format!("must be finite and non-zero, got {:?}", o.as_slice()),
                    ));
                }
                Some(o)
            }
            None => None,
        };
        let (alpha, beta) = match (self.damping_ratio, self.damping_frequency) {
            (None, None) => (
                non_negative(element, "alpha", self.alpha.unwrap_or(0.0))?,
                non_negative(element, "beta", self.beta.unwrap_or(0.0))?,
            ),
            (Some(xi), Some(f)) => {
                if self.alpha.is_some() || self.beta.is_some() {
                    return Err(invalid(
                        element,
                        "damping_ratio",
                        "give either `damping_ratio` + `damping_frequency` or `alpha`/`beta`",
                    ));
                }
                let xi = non_negative(element, "damping_ratio", xi)?;
                let f = positive(element, "damping_frequency", f)?;
                (0.0, xi / (PI * f))
            }
            (Some(_), None) => {
                return Err(invalid(
                    element,
                    "damping_frequency",
                    "is required with `damping_ratio`",
                ))
            }
            (None, Some(_)) => {
                return Err(invalid(
                    element,
                    "damping_ratio",
                    "is required with `damping_frequency`",
                ))
            }
        };
        Ok(BeamSection {
            lumped_mass: self.lumped_mass,
            stiffness: Vector6::new(e * area, g * a2, g * a3, g * j, e * i2, e * i3),
            line_mass: rho * area,
            line_inertia: Vector3::new(rho * (i2 + i3), rho * i2, rho * i3),
            orientation,
            alpha,
            beta,
        })
    }
}

/// Validated section constants of a beam (from [`BeamSpec::section`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BeamSection {
    /// Diagonal section stiffness `[EA, GA₂, GA₃, GJ, EI₂, EI₃]` \[N, N, N, N m², N m², N m²\].
    pub stiffness: Vector6<f64>,
    /// Mass per unit length `ρ A` \[kg/m\].
    pub line_mass: f64,
    /// Rotational inertia per unit length in the section frame `ρ [I₂ + I₃, I₂, I₃]` \[kg m\].
    pub line_inertia: Vector3<f64>,
    /// Direction of section axis 2 (inertial frame), `None`: default rule of
    /// [`BeamSpec::orientation`].
    pub orientation: Option<Vector3<f64>>,
    /// Lumped (`true`) or consistent translational mass ([`BeamSpec::lumped_mass`]).
    pub lumped_mass: bool,
    /// Mass-proportional Rayleigh coefficient `α` \[1/s\].
    pub alpha: f64,
    /// Stiffness-proportional Rayleigh coefficient `β` \[s\].
    pub beta: f64,
}

impl BeamSection {
    /// Section frame `Λ₀` (columns: axis 1 along `axis`, axis 2, axis 3) of a straight element
    /// along `axis` (any non-zero length); `element` names the element in errors.
    pub fn frame(&self, element: &str, axis: &Vector3<f64>) -> Result<Matrix3<f64>, BuildError> {
        let len = axis.norm();
        if !(len.is_finite() && len > 0.0) {
            return Err(invalid(
                element,
                "nodes",
                format!("the two nodes must not coincide (length {len})"),
            ));
        }
        let e1 = axis / len;
        let e2 = match self.orientation {
            Some(o) => {
                let p = o - e1 * e1.dot(&o);
                if p.norm() <= 1e-6 * o.norm() {
                    return Err(invalid(
                        element,
                        "orientation",
                        "is parallel to the beam axis",
                    ));
                }
                p.normalize()
            }
            None => {
                let reference = if e1.z.abs() < 0.9 {
                    Vector3::z()
                } else {
                    Vector3::y()
                };
                reference.cross(&e1).normalize()
            }
        };
        let e3 = e1.cross(&e2);
        Ok(Matrix3::from_columns(&[e1, e2, e3]))
    }
}
