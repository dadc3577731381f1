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
pub mod stress;

pub use filter::{decompose, Decomposition};
pub use history::{recover, ContactSample, ImpactKind, RecoveredImpact, Recovery};
pub use law::{effective_radius, hertz_stiffness, Damping, ForceLaw, Material};
pub use pulse::{CubicProfile, Impact, Method, Pulse, PulseSample};
pub use stress::{ChartCoefficients, HertzStresses, RaceContact};

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
