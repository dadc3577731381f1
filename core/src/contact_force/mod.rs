//! Contact forces recovered from the impulses of a nonsmooth run (spec `contact-force.md`,
//! thesis Annex C).
//!
//! A nonsmooth step gives per contact an impulse `Λ` and a velocity jump, not a force: an
//! impact lasts far less than a step. The recovery is a post-process that does not feed back
//! into the dynamics:
//!
//! 1. [`filter`]: split each contact's impulse history into isolated impacts, impacts over a
//!    closed contact's smooth load and that smooth part (`Λ = Λ_PI + Λ_PISuv + Λ_S`, §2); the
//!    smooth part is a force `Λ_S / h`.
//! 2. [`law`]: a continuous contact-force law `F = K δⁿ + D δⁿ δ̇` (Hertz and the
//!    Hunt–Crossley family, §3) with the Hertz stiffness `K` from radii, `E` and `ν` (§4).
//! 3. [`pulse`]: the force–time history of one impact from its impulse, approach speed and
//!    restitution — the warped cubic interpenetration-rate profile of §5 (duration from the
//!    impulse), or the one-degree-of-freedom compliant impact with the effective mass the
//!    impulse implies.
//! 4. [`history`]: the two combined over one contact's rows: per step the smooth force, and at
//!    each identified impact its pulse and the total force of §6 (smooth + peak).
//! 5. [`stress`]: Hertz stresses of a ball on a race (§7).
//!
//! Units are SI throughout: `δ` \[m\], `δ̇` \[m/s\] (positive approaching), `K` \[N/mⁿ\],
//! impulses \[N s\], forces \[N\].

pub mod filter;
pub mod history;
pub mod law;
pub mod pulse;
pub mod stream;
pub mod stress;

pub use filter::{decompose, DecomposeStream, Decomposition, Parts};
pub use history::{
    recover, ContactSample, ImpactKind, RecoveredImpact, Recovery, StepForces, MIN_APPROACH_SPEED,
};
pub use law::{effective_radius, hertz_stiffness, Damping, ForceLaw, Material};
pub use pulse::{CubicProfile, Impact, Method, Pulse, PulseSample};
pub use stream::{ForceStream, StreamImpact};
pub use stress::{
    elliptic_integrals, hertz_ellipse, ChartCoefficients, HertzEllipse, HertzStresses, RaceContact,
    RaceGeometry, RaceStress,
};

/// The force recovery a contact carries for recovery while the model runs
/// ([`crate::contact::ContactLaw::force_model`], [`ForceStream`]): the law with its stiffness
/// resolved, and the pulse method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceModel {
    /// The continuous law.
    pub law: ForceLaw,
    /// The pulse reconstruction.
    pub method: Method,
    /// A ball on a bearing race: Hertz stresses of each step's total force.
    pub race: Option<RaceStress>,
}

/// A contact's force-recovery declaration as model files and builders give it: the stiffness
/// `K` directly, or Hertz's from the contact's surfaces and the two bodies' materials; the
/// damping model, the exponent and the pulse method.
///
/// ```toml
/// force_recovery = { young = 2e11, poisson = 0.3, damping = "flores" }   # or stiffness = 1.4e8
/// ```
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForceRecoverySpec {
    /// Stiffness `K` \[N/mⁿ\] (instead of the materials).
    #[serde(default)]
    pub stiffness: Option<f64>,
    /// Young's modulus of body a \[Pa\] (Hertz stiffness).
    #[serde(default)]
    pub young: Option<f64>,
    /// Poisson's ratio of body a.
    #[serde(default)]
    pub poisson: Option<f64>,
    /// Young's modulus of body b \[Pa\] (default: body a's).
    #[serde(default)]
    pub young_b: Option<f64>,
    /// Poisson's ratio of body b (default: body a's).
    #[serde(default)]
    pub poisson_b: Option<f64>,
    /// Damping model (default Flores).
    #[serde(default = "default_damping", deserialize_with = "damping_named")]
    pub damping: Damping,
    /// Pulse method (default cubic).
    #[serde(default, deserialize_with = "method_named")]
    pub method: Method,
    /// Law exponent `n` (default 3/2).
    #[serde(default = "default_exponent")]
    pub exponent: f64,
    /// The contact is a ball (the contact's sphere a) on a bearing race of this geometry:
    /// stiffness from Hertz's elliptical contact (needs `young`, `poisson`) and the contact
    /// stresses of every step's force (§7).
    #[serde(default)]
    pub race: Option<RaceGeometry>,
}

fn default_damping() -> Damping {
    Damping::Flores
}

fn default_exponent() -> f64 {
    1.5
}

/// A damping model by name, the error naming the key and the known names.
fn damping_named<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Damping, D::Error> {
    let name = <String as serde::Deserialize>::deserialize(d)?;
    Damping::from_name(&name).ok_or_else(|| {
        let known: Vec<&str> = Damping::ALL.iter().map(|d| d.name()).collect();
        serde::de::Error::custom(format!(
            "force_recovery.damping: unknown law `{name}` (known: {})",
            known.join(", ")
        ))
    })
}

/// A pulse method by name, the error naming the key and the known names.
fn method_named<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Method, D::Error> {
    let name = <String as serde::Deserialize>::deserialize(d)?;
    Method::from_name(&name).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "force_recovery.method: unknown method `{name}` (known: cubic, dynamic)"
        ))
    })
}

impl ForceRecoverySpec {
    /// Nothing given yet: Flores damping, cubic profile, `n = 3/2`, no race.
    fn base() -> Self {
        Self {
            stiffness: None,
            young: None,
            poisson: None,
            young_b: None,
            poisson_b: None,
            damping: Damping::Flores,
            method: Method::Cubic,
            exponent: 1.5,
            race: None,
        }
    }

    /// Hertz stiffness from the materials `a`, `b`, Flores damping, cubic profile.
    pub fn hertz(a: Material, b: Material) -> Self {
        Self {
            young: Some(a.young),
            poisson: Some(a.poisson),
            young_b: Some(b.young),
            poisson_b: Some(b.poisson),
            ..Self::base()
        }
    }

    /// Stiffness `k` \[N/mⁿ\], Flores damping, cubic profile.
    pub fn stiffness(k: f64) -> Self {
        Self {
            stiffness: Some(k),
            ..Self::base()
        }
    }

    /// The model of a contact whose surfaces have the signed curvatures `curvatures`
    /// ([`crate::contact::UnilateralContact::surface_curvatures`]).
    pub fn resolve(&self, curvatures: Option<[f64; 2]>) -> Result<ForceModel, ForceError> {
        if let Some(race) = self.race {
            return self.resolve_race(race, curvatures);
        }
        let k = match (self.stiffness, self.young, self.poisson) {
            (Some(k), None, None) if self.young_b.is_none() && self.poisson_b.is_none() => k,
            (None, Some(young), Some(poisson)) => {
                let [ca, cb] = curvatures.ok_or(ForceError::Parameter {
                    what: "young",
                    value: young,
                    why: "Hertz stiffness needs curved surfaces (a point contact has none): give stiffness",
                })?;
                let a = Material { young, poisson };
                let b = Material {
                    young: self.young_b.unwrap_or(young),
                    poisson: self.poisson_b.unwrap_or(poisson),
                };
                hertz_stiffness(effective_radius(ca, cb)?, &a, &b)?
            }
            _ => return Err(ForceError::Parameter {
                what: "stiffness",
                value: self.stiffness.unwrap_or(f64::NAN),
                why: "give either stiffness, or young and poisson (optionally young_b, poisson_b)",
            }),
        };
        self.model(k, None)
    }

    /// The model of stiffness `k` with this spec's exponent, damping and method.
    fn model(&self, k: f64, race: Option<RaceStress>) -> Result<ForceModel, ForceError> {
        let law = ForceLaw {
            stiffness: k,
            exponent: self.exponent,
            damping: self.damping,
        };
        law.validate()?;
        Ok(ForceModel {
            law,
            method: self.method,
            race,
        })
    }

    /// A ball (radius from the contact's first curvature) on a race: Hertz's elliptical
    /// contact for the stiffness and the stresses.
    fn resolve_race(
        &self,
        race: RaceGeometry,
        curvatures: Option<[f64; 2]>,
    ) -> Result<ForceModel, ForceError> {
        let (Some(young), Some(poisson), None) = (self.young, self.poisson, self.stiffness) else {
            return Err(ForceError::Parameter {
                what: "race",
                value: race.race_radius,
                why: "a race contact takes its stiffness from Hertz's elliptical contact: give young and poisson, not stiffness",
            });
        };
        let ball_curvature = curvatures.map_or(0.0, |c| c[0]);
        let ball_radius = check(
            "ball curvature 1/r_b",
            ball_curvature,
            ball_curvature > 0.0,
            "a race contact needs a ball (the contact's sphere a)",
        )?
        .recip();
        self.resolve_ball_on_race(race, ball_radius, young, poisson)
    }

    /// [`ForceRecoverySpec::resolve`] of a ball of radius `ball_radius` \[m\] on a race of
    /// geometry `race` with this spec's damping, method, exponent and `young`/`poisson` as
    /// given (the recovery of a result file, whose contact table keeps the ball radius).
    pub fn resolve_ball_on_race(
        &self,
        race: RaceGeometry,
        ball_radius: f64,
        young: f64,
        poisson: f64,
    ) -> Result<ForceModel, ForceError> {
        let contact = RaceContact {
            ball_radius,
            race_radius: race.race_radius,
            groove_radius: race.groove_radius,
            ball: Material { young, poisson },
            race: Material {
                young: self.young_b.unwrap_or(young),
                poisson: self.poisson_b.unwrap_or(poisson),
            },
        };
        let stress = RaceStress::new(&contact)?;
        self.model(contact.stiffness(&stress.hertz.coefficients)?, Some(stress))
    }
}

/// A force recovery that cannot be done, naming the offending quantity.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ForceError {
    /// A parameter outside its domain (`what` names it, `value` is what was given).
    #[error("{what} = {value} is invalid: {why}")]
    Parameter {
        /// The parameter, e.g. `"restitution e_N"`.
        what: &'static str,
        /// The value given.
        value: f64,
        /// What it must satisfy.
        why: &'static str,
    },
}

/// Check `value` with `ok`, else a [`ForceError::Parameter`].
pub(crate) fn check(
    what: &'static str,
    value: f64,
    ok: bool,
    why: &'static str,
) -> Result<f64, ForceError> {
    if ok && value.is_finite() {
        Ok(value)
    } else {
        Err(ForceError::Parameter { what, value, why })
    }
}
