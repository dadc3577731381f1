//! # saltus-solvers
//!
//! The decoupled nonsmooth generalized-α integrator ([`Nsga`]) and a load-stepping static
//! equilibrium solver ([`statics`]), both on the element library through `saltus-core`.

pub mod error;
pub mod nsga;
pub mod stage;
pub mod state;
pub mod statics;

pub use error::SolveError;
pub use nsga::{
    Coefficients, ContactSolver, ImpactSequence, Nsga, NsgaOptions, RunSummary, SmoothStart,
    DEFAULT_IMPACT_TOLERANCE, DEFAULT_MAX_IMPACT_PROBLEMS, DEFAULT_PERSISTENT_STEPS,
    MAX_PERSISTENT_STEPS, NSGA_STAGES,
};
pub use stage::{NewtonReport, Stage, StageSummary, StageTimes, Tolerance};
pub use state::{update_position_states, update_velocity_states, ParallelAssembly, State};
pub use statics::{
    solve_static, solve_static_with_sink, stability_attributes, Stability, StaticOptions,
    StaticSummary, STATIC_STAGE,
};
