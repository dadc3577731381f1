//! # saltus-core
//!
//! Nodes with Lie-group rotations, the three-level [`Element`] trait of the decoupled
//! nonsmooth generalized-α (NSGA) step, the element registry, models, and the sparse
//! assembly / LU machinery shared by all solvers.

pub mod assembly;
pub mod constraint;
pub mod contact;
pub mod contact_force;
pub mod element;
pub mod fd;
pub mod lie;
pub mod linear;
pub mod model;
pub mod node;
pub mod output;
pub mod physics;
pub mod registry;
pub mod stage;

pub use constraint::BilateralConstraint;
pub use element::{
    BaseTerms, Element, ElementError, Energy, InertiaTerm, Level, LevelHook, LevelMemo, Levels,
    LocalState, LocalSystem, OutputSpec, OutputState, StageMotion, StepCx,
};
pub use model::{BuildError, Detector, ElementId, Model};
pub use node::{NodeDef, NodeId, NodeKind, NodeState, PrescribedMotion};
pub use output::{
    AttributeValue, ContactRow, MemorySink, OutputLayout, ResultSink, SinkError, StageStep,
    StepRecord, StepStats,
};
pub use physics::{
    mass_entries_of, Force, ForceTerms, Inertia, MassEntry, NodeInertia, PhysicsState,
};
pub use registry::{element_kind, element_kinds, BuildCx, ElementDef, ElementKind, ParamDoc};
