//! # saltus-solvers
//!
//! The decoupled nonsmooth generalized-α integrator ([`Nsga`]) and a load-stepping static
//! equilibrium solver ([`statics`]), both on the element library through `saltus-core`.

pub mod assembler;
pub mod error;
pub mod nsga;
pub mod statics;

pub use error::SolveError;
pub use nsga::{Coefficients, Nsga, NsgaOptions, RunSummary};
pub use statics::{solve_static, StaticOptions, StaticSummary};
