//! # Saltus
//!
//! Flexible multibody dynamics with impacts and friction: an element library and assembly
//! framework around the decoupled nonsmooth generalized-α (NSGA) time step.
//!
//! This facade re-exports the workspace crates and guarantees that the element library is
//! linked, so every registered element type is visible through
//! [`saltus_core::element_kinds`]:
//!
//! - [`core`]: nodes, rotations, the three-level `Element` trait, registry, sparse assembly;
//! - [`elements`]: rigid bodies, springs, joints, drivers;
//! - [`solvers`]: the NSGA integrator and static equilibrium;
//! - [`io`]: model files and HDF5 results.
//!
//! ```no_run
//! use saltus::prelude::*;
//! // A model file, run to its `t_end` with results kept in memory:
//! let mut file = saltus::io::load_model("models/slider_crank.toml").unwrap();
//! let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
//! let mut solver = Nsga::new(&mut file.model, opts).unwrap();
//! let mut results = MemorySink::default();
//! solver.run(&mut file.model, &mut results, &mut |_t| {}).unwrap();
//! ```

pub mod cli;
pub mod driver;
pub mod plot;
pub mod sweep;

pub use saltus_core as core;
pub use saltus_elements as elements;
pub use saltus_io as io;
pub use saltus_solvers as solvers;

/// The types most models and drivers need.
pub mod prelude {
    pub use nalgebra::{Matrix3, UnitQuaternion, Vector3};
    pub use saltus_core::{
        BuildError, Element, ElementDef, ElementError, ElementId, Energy, Force, ForceTerms,
        Inertia, Level, Levels, MemorySink, Model, NodeDef, NodeId, NodeKind, NodeState,
        OutputSpec, OutputState, PhysicsState, ResultSink,
    };
    pub use saltus_solvers::{
        solve_static, solve_static_with_sink, ContactSolver, Nsga, NsgaOptions, ParallelAssembly,
        RunSummary, SolveError, Stability, StaticOptions, StaticSummary,
    };
}

/// Make sure the element library's registrations are linked (the facade does this for every
/// dependent; binaries that reach the registry only through `saltus_core` may call it).
pub fn link() {
    saltus_elements::link();
}

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
