//! Wall-clock time of a stage's parts, measured when asked for ([`Stage::set_timing`]): where
//! a run's time goes without a profiler (assemblies, factorizations, the contact-space
//! solver's linearizations and sweeps). Off by default: a step of a small model lasts about a
//! microsecond, and reading the clock costs tens of nanoseconds.
//!
//! Only calls into [`Stage::newton`] and [`Stage::newton_after`] count in `total`; a part
//! measured in another public call (an assembly, [`Stage::settle_contacts`], [`Stage::solve`],
//! [`Stage::determinant`]) adds to that part but not to `total`.

use super::Stage;
use std::time::{Duration, Instant};

/// Wall-clock time a stage spent in its parts over a run (zero unless timing is on,
/// `NsgaOptions::timings`). The parts do not overlap; `total` minus their sum is the rest of
/// the solves (the Newton's and the settling's triangular solves where they are not part of a
/// factorization, building a deferred contact pattern or the settling's own system, status
/// and line-search logic, state updates, copies).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// The stage's solves in all (each call of the scheme into the stage's Newton).
    pub total: Duration,
    /// Element assemblies: residuals with or without iteration matrices, including the
    /// contact-space solver's residual tests and its assemblies of the other elements.
    pub assembly: Duration,
    /// Factorizations: the Newton's LU (with its symbolic analysis and pivot search when it
    /// needs them, and the triangular solve when one call factorizes and solves), the
    /// contact-space solver's LU or its block inverses of the other elements' matrix.
    pub factorization: Duration,
    /// The contact-space solver's linearizations of its contacts (`G_e`, `Y_e = A⁻¹G_eᵀ`,
    /// `W_ee` and the reactions' share of `δ`).
    pub contact_linearization: Duration,
    /// The contact-space solver's sweeps, with their acceleration.
    pub sweeps: Duration,
}

/// A running measurement: `Some(start)` when timing is on.
pub(super) type Clock = Option<Instant>;

impl Stage {
    /// Measure the time of this stage's parts into its summary's
    /// [`StageTimes`](super::StageSummary::times) (`false`, the default: the stage reads no
    /// clock). Counts from the next call on; see the module's note on calls from outside the
    /// scheme's Newton.
    pub fn set_timing(&mut self, on: bool) {
        self.timing = on;
    }

    /// Start a measurement if timing is on.
    pub(super) fn clock(&self) -> Clock {
        self.timing.then(Instant::now)
    }

    /// Add the time since `clock` started to the part `part` of the stage's times.
    pub(super) fn lap(&mut self, clock: Clock, part: fn(&mut StageTimes) -> &mut Duration) {
        if let Some(start) = clock {
            *part(&mut self.summary.times) += start.elapsed();
        }
    }
}
