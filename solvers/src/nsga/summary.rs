//! Newton statistics of a whole NSGA run, per stage and in all.

use crate::stage::StageSummary;
use std::time::Duration;

/// Newton statistics of a whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSummary {
    /// Accepted steps (sub-steps of halved steps count individually).
    pub steps: usize,
    /// Final time reached \[s\].
    pub t: f64,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// Number of step halvings performed (`adaptive`).
    pub halvings: usize,
    /// Number of element-set changes (pre-step hook additions/removals) handled.
    pub topology_changes: usize,
    /// Smooth solves whose Newton started from the quadratic extrapolation of the last three
    /// steps' accelerations and multipliers, chosen when it predicted the step before better
    /// than the linear one (the others start from the linear extrapolation, or from the last
    /// values after the start or a step-size change). Failed attempts of halved steps included.
    pub quadratic_starts: usize,
    /// Per-stage statistics, in the scheme's stage order (solves, iterations, backtracks,
    /// factorizations; failed attempts of halved steps included).
    pub stages: Vec<StageSummary>,
    /// Wall-clock time of the model's contact detection between steps (zero unless
    /// [`crate::NsgaOptions::timings`] is on; the stages' parts are in their
    /// [`StageSummary::times`]).
    pub detection: Duration,
}

impl RunSummary {
    /// Statistics of the stage named `name`.
    ///
    /// # Panics
    /// If the scheme has no such stage (a programming error in the caller).
    pub fn stage(&self, name: &str) -> &StageSummary {
        self.stages
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no stage `{name}` in this run"))
    }

    /// Mean Newton iterations per accepted step, per stage (stage order).
    pub fn mean_iterations(&self) -> Vec<f64> {
        let n = self.steps.max(1) as f64;
        self.stages
            .iter()
            .map(|s| s.iterations as f64 / n)
            .collect()
    }

    /// Total Newton iterations per stage (stage order).
    pub fn iterations(&self) -> Vec<usize> {
        self.stages.iter().map(|s| s.iterations).collect()
    }

    /// Largest Newton iteration count of one solve, per stage (stage order).
    pub fn max_iterations(&self) -> Vec<usize> {
        self.stages.iter().map(|s| s.max_iterations).collect()
    }

    /// Line-search backtracks per stage (stage order).
    pub fn backtracks(&self) -> Vec<usize> {
        self.stages.iter().map(|s| s.backtracks).collect()
    }

    /// Symbolic LU factorizations per stage (stage order; 1 each while the topology holds).
    pub fn symbolic_factorizations(&self) -> Vec<usize> {
        self.stages
            .iter()
            .map(|s| s.symbolic_factorizations)
            .collect()
    }

    /// Numeric LU factorizations per stage (stage order).
    pub fn numeric_factorizations(&self) -> Vec<usize> {
        self.stages
            .iter()
            .map(|s| s.numeric_factorizations)
            .collect()
    }

    /// One line per stage: `name: mean/max iterations, backtracks`.
    pub fn describe(&self) -> String {
        self.stages
            .iter()
            .map(|s| {
                let mut d = format!(
                    "{} {:.2}/{}",
                    s.name,
                    s.iterations as f64 / self.steps.max(1) as f64,
                    s.max_iterations
                );
                if s.settled > 0 {
                    d += &format!(
                        " ({} settled by Gauss–Seidel, {} sweeps)",
                        s.settled, s.settle_sweeps
                    );
                }
                d
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
