//! Force recovery over one contact's history (`contact-force.md` §§2, 5, 6): the impulse
//! decomposition, the smooth force `Λ_S / h` of every step, a reconstructed pulse per
//! identified impact, and the total force the thesis reports for mechanisms — the smooth force
//! plus the peak of the impact pulse at an impact step.

use super::filter::{decompose, Decomposition, Parts};
use super::pulse::{Impact, Pulse};
use super::{ForceError, ForceModel};

/// One recorded step of a contact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactSample {
    /// Time at the end of the step \[s\].
    pub t: f64,
    /// Step size \[s\].
    pub h: f64,
    /// Normal impulse of the step `k_v Λ_N` \[N s\] (≥ 0).
    pub impulse: f64,
    /// Approach speed before the contact's impact in the step, `−ġ_N(V⁻)` \[m/s\] (positive
    /// approaching; the contact table's `normal_velocity[0]` with the sign changed).
    pub approach_speed: f64,
}

/// How an impact was identified (§2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImpactKind {
    /// An impulse with no impulse in the steps before and after (scenario A).
    Isolated,
    /// An upward peak on a closed contact's smooth load (scenario B).
    OverSmooth,
}

/// One identified impact and its reconstruction.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveredImpact {
    /// Index of the step (sample) of the impact.
    pub index: usize,
    /// Start of the pulse \[s\]: the impact step's time (the instant inside the step is not
    /// known; §5.4 places the pulse at the impact step).
    pub t: f64,
    /// Identification.
    pub kind: ImpactKind,
    /// The impact part of the impulse `Λ_I` \[N s\].
    pub impulse: f64,
    /// Approach speed `δ̇_i` \[m/s\].
    pub approach_speed: f64,
    /// The reconstructed pulse, or why it could not be (e.g. a transmitted impulse on a
    /// contact that was not approaching: `δ̇_i ≤ 0`).
    pub pulse: Result<Pulse, ForceError>,
}

/// The recovered forces of one contact.
#[derive(Clone, Debug, PartialEq)]
pub struct Recovery {
    /// The impulse decomposition as filtered (§2.2; before peaks without approach are
    /// returned to the smooth part, [`MIN_APPROACH_SPEED`]).
    pub decomposition: Decomposition,
    /// Impact part of each step's impulse \[N s\] (impact + smooth force × h = impulse).
    pub impact_impulse: Vec<f64>,
    /// Per step the stresses of [`StepForces::stress`] (NaN without a race).
    pub stress: Vec<[f64; 4]>,
    /// Smooth (closed-contact) force `Λ_S / h` per step \[N\].
    pub smooth_force: Vec<f64>,
    /// Total force per step \[N\]: smooth force plus the peak of the impact pulse at impact
    /// steps (§6).
    pub total_force: Vec<f64>,
    /// The identified impacts in time order.
    pub impacts: Vec<RecoveredImpact>,
}

/// The forces of one step of a contact from its decomposed impulse `parts`: the smooth force
/// `Λ_S / h`, and at an impact step the reconstructed pulse (shared by [`recover`] and the
/// live [`super::stream::ForceStream`], so both give the same bits).
pub(crate) fn step_forces(
    s: &ContactSample,
    parts: &Parts,
    restitution: f64,
    model: &ForceModel,
    pulse_samples: usize,
) -> (StepForces, Option<StepImpact>) {
    let (mut f, impact) = impact_forces(s, parts, restitution, model, pulse_samples);
    if let Some(race) = &model.race {
        let st = race.at(f.total_force);
        f.stress = [
            st.max_pressure,
            st.max_shear,
            st.octahedral_shear,
            st.shear_depth,
        ];
    }
    (f, impact)
}

/// [`step_forces`] without the stresses.
fn impact_forces(
    s: &ContactSample,
    parts: &Parts,
    restitution: f64,
    model: &ForceModel,
    pulse_samples: usize,
) -> (StepForces, Option<StepImpact>) {
    let (law, method) = (&model.law, model.method);
    let smooth_force = if s.h > 0.0 { parts.smooth / s.h } else { 0.0 };
    let mut f = StepForces {
        stiffness: law.stiffness,
        smooth_force,
        impact_impulse: parts.isolated + parts.over_smooth,
        impact_force: 0.0,
        total_force: smooth_force,
        stress: [f64::NAN; 4],
    };
    let (kind, impulse) = if parts.isolated > 0.0 {
        (ImpactKind::Isolated, parts.isolated)
    } else if parts.over_smooth > 0.0 && s.approach_speed > MIN_APPROACH_SPEED {
        (ImpactKind::OverSmooth, parts.over_smooth)
    } else if parts.over_smooth > 0.0 {
        // A peak of a closed contact's load without approach: a fluctuation of the
        // continuous force, not an impact; it stays in the smooth part.
        let smooth = parts.smooth + parts.over_smooth;
        f.smooth_force = if s.h > 0.0 { smooth / s.h } else { 0.0 };
        f.impact_impulse = 0.0;
        f.total_force = f.smooth_force;
        return (f, None);
    } else {
        return (f, None);
    };
    let impact = Impact {
        impulse,
        approach_speed: s.approach_speed,
        restitution,
    };
    let pulse = Pulse::new(&impact, law, method, pulse_samples);
    match &pulse {
        Ok(p) => {
            f.impact_force = p.peak_force;
            f.total_force += p.peak_force;
        }
        Err(_) => f.impact_force = f64::NAN,
    }
    (f, Some((kind, impulse, pulse)))
}

/// Smallest approach speed \[m/s\] of an impact over a closed contact's load: a peak of the
/// load of a contact that did not approach faster (1 µm/s; e.g. a journal pressed round its
/// bearing, whose approach rate is round-off, 1e-12 m/s) is a fluctuation of the continuous
/// force, kept in the smooth part — its pulse would last ~`v^{−3/5}` long, seconds.
pub const MIN_APPROACH_SPEED: f64 = 1e-6;

/// An impact identified at a step: its kind, impulse `Λ_I` \[N s\] and pulse.
pub(crate) type StepImpact = (ImpactKind, f64, Result<Pulse, ForceError>);

/// Forces of one recorded step of a contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepForces {
    /// Stiffness `K` of the contact's law \[N/mⁿ\].
    pub stiffness: f64,
    /// Smooth (closed-contact) force `Λ_S / h` \[N\].
    pub smooth_force: f64,
    /// Impact part of the impulse `Λ_PI + Λ_PISuv` \[N s\].
    pub impact_impulse: f64,
    /// Peak of the impact pulse (0: no impact; NaN: an impact without a pulse) \[N\].
    pub impact_force: f64,
    /// `smooth_force` + the pulse's peak (§6) \[N\].
    pub total_force: f64,
    /// Ball–race contacts ([`super::ForceModel::race`]): Hertz stresses at `total_force` —
    /// maximum pressure (negative), maximum shear, maximum octahedral shear \[Pa\] and the
    /// depth of the maximum shear \[m\]; NaN otherwise.
    pub stress: [f64; 4],
}

impl StepForces {
    /// A step of a contact whose forces are not recovered: all NaN.
    pub const NONE: StepForces = StepForces {
        stiffness: f64::NAN,
        smooth_force: f64::NAN,
        impact_impulse: f64::NAN,
        impact_force: f64::NAN,
        total_force: f64::NAN,
        stress: [f64::NAN; 4],
    };
}

/// Recover the forces of one contact of restitution `restitution` from its `samples` with
/// the model `model` (noise threshold of [`decompose`]: `threshold`; `pulse_samples`
/// samples per pulse).
pub fn recover(
    samples: &[ContactSample],
    restitution: f64,
    model: &ForceModel,
    threshold: f64,
    pulse_samples: usize,
) -> Recovery {
    let lambda: Vec<f64> = samples.iter().map(|s| s.impulse.max(0.0)).collect();
    let d = decompose(&lambda, threshold);
    let mut smooth_force = Vec::with_capacity(samples.len());
    let mut total_force = Vec::with_capacity(samples.len());
    let mut impact_impulse = Vec::with_capacity(samples.len());
    let mut stress = Vec::with_capacity(samples.len());
    let mut impacts = Vec::new();
    for (k, s) in samples.iter().enumerate() {
        let parts = Parts {
            isolated: d.isolated[k],
            over_smooth: d.over_smooth[k],
            smooth: d.smooth[k],
        };
        let (f, impact) = step_forces(s, &parts, restitution, model, pulse_samples);
        stress.push(f.stress);
        smooth_force.push(f.smooth_force);
        total_force.push(f.total_force);
        impact_impulse.push(f.impact_impulse);
        if let Some((kind, impulse, pulse)) = impact {
            impacts.push(RecoveredImpact {
                index: k,
                t: s.t,
                kind,
                impulse,
                approach_speed: s.approach_speed,
                pulse,
            });
        }
    }
    Recovery {
        decomposition: d,
        impact_impulse,
        stress,
        smooth_force,
        total_force,
        impacts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact_force::law::Damping;

    /// A ball resting under a 10 N load, hit once (an impact over the smooth curve), then
    /// lifted off and dropped (an isolated impact): the smooth force is the load, the total
    /// force at the impact steps adds the pulse's peak, a non-approaching impulse is reported
    /// without a pulse.
    #[test]
    fn smooth_load_and_impacts() {
        let h = 1e-3;
        let mut s: Vec<ContactSample> = (0..8)
            .map(|i| ContactSample {
                t: (i + 1) as f64 * h,
                h,
                impulse: 10.0 * h,
                approach_speed: 0.0,
            })
            .collect();
        s[3].impulse += 0.05;
        s[3].approach_speed = 0.5;
        // A load fluctuation of the closed contact without approach: smooth, no impact.
        s[6].impulse += 0.002;
        s[6].approach_speed = 1e-12;
        s.extend([
            ContactSample {
                t: 9e-3,
                h,
                impulse: 0.0,
                approach_speed: -1.0,
            },
            ContactSample {
                t: 10e-3,
                h,
                impulse: 0.2,
                approach_speed: 1.0,
            },
            ContactSample {
                t: 11e-3,
                h,
                impulse: 0.0,
                approach_speed: -0.5,
            },
            ContactSample {
                t: 12e-3,
                h,
                impulse: 0.1,
                approach_speed: 0.0,
            },
        ]);
        let law = crate::contact_force::ForceLaw::hertz(1e9, Damping::Flores);
        let model = ForceModel {
            law,
            method: crate::contact_force::Method::Cubic,
            race: None,
        };
        let r = recover(&s, 0.5, &model, 1e-6, 50);
        assert!((r.smooth_force[0] - 10.0).abs() < 1e-12);
        assert!((r.smooth_force[3] - 10.0).abs() < 1e-12);
        assert!((r.smooth_force[6] - 12.0).abs() < 1e-12);
        assert_eq!(r.impact_impulse[6], 0.0);
        assert_eq!(r.impacts.len(), 3);
        let (a, b, c) = (&r.impacts[0], &r.impacts[1], &r.impacts[2]);
        assert_eq!((a.index, a.kind), (3, ImpactKind::OverSmooth));
        assert!((a.impulse - 0.05).abs() < 1e-15);
        let pa = a.pulse.as_ref().unwrap();
        assert!((r.total_force[3] - 10.0 - pa.peak_force).abs() < 1e-9);
        assert_eq!((b.index, b.kind, b.impulse), (9, ImpactKind::Isolated, 0.2));
        assert_eq!(r.total_force[9], b.pulse.as_ref().unwrap().peak_force);
        // Not approaching: no pulse, the reason named; the total is the smooth part (0).
        assert_eq!(c.index, 11);
        let e = c.pulse.as_ref().unwrap_err();
        assert!(e.to_string().contains("approach speed"), "{e}");
        assert_eq!(r.total_force[11], 0.0);
    }
}
