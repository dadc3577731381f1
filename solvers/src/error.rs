//! Solver errors. Each names the step, time, subproblem and the offending item.

use saltus_core::linear::LinearError;
use saltus_core::{BuildError, ElementError, Level, SinkError};

/// Failure of a time integration or static solve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// Newton did not reach the tolerance within the iteration cap.
    #[error(
        "step {step} (t = {t:.6e} s): {level} subproblem did not converge in {iterations} iterations \
         (residual {residual:.3e}, tolerance {tolerance:.3e})"
    )]
    NonConvergence {
        /// Step index (1-based; 0 is the initial-acceleration solve).
        step: usize,
        /// Time at the end of the step \[s\].
        t: f64,
        /// Subproblem.
        level: Level,
        /// Iterations performed.
        iterations: usize,
        /// Final residual norm.
        residual: f64,
        /// Tolerance the residual had to reach.
        tolerance: f64,
    },
    /// An element rejected its state.
    #[error("step {step} (t = {t:.6e} s): {level} subproblem: element `{element}`: {source}")]
    Element {
        /// Step index.
        step: usize,
        /// Time \[s\].
        t: f64,
        /// Subproblem.
        level: Level,
        /// Element name.
        element: String,
        /// The element's error.
        source: ElementError,
    },
    /// NaN or infinity appeared.
    #[error("step {step} (t = {t:.6e} s): {level} subproblem: non-finite value in {what}")]
    NonFinite {
        /// Step index.
        step: usize,
        /// Time \[s\].
        t: f64,
        /// Subproblem.
        level: Level,
        /// Where it appeared.
        what: String,
    },
    /// The sparse LU failed.
    #[error("step {step} (t = {t:.6e} s): {level} subproblem: {source}")]
    Linear {
        /// Step index.
        step: usize,
        /// Time \[s\].
        t: f64,
        /// Subproblem.
        level: Level,
        /// The LU error.
        source: LinearError,
    },
    /// The multiple-impact sequence of a step reached its cap (`nsga.md` §9).
    #[error(
        "step {step} (t = {t:.6e} s): velocity subproblem: the impact sequence did not end within \
         {problems} impact problems ({approaching} contacts still approaching); raise \
         `max_impact_problems`, or look for bodies trapped between contacts that keep approaching"
    )]
    ImpactSequence {
        /// Step index.
        step: usize,
        /// Time at the end of the step \[s\].
        t: f64,
        /// Impact problems solved.
        problems: usize,
        /// Contacts still admissible (closed and approaching).
        approaching: usize,
    },
    /// The model is invalid.
    #[error(transparent)]
    Model(#[from] BuildError),
    /// Invalid solver options.
    #[error("invalid option `{option}`: {message}")]
    Options {
        /// Option name.
        option: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Writing results failed.
    #[error(transparent)]
    Sink(#[from] SinkError),
}
