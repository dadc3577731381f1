//! A plugin crate: element types registered in the Saltus registry from outside the Saltus
//! crates. Each states its physics as a [`saltus::core::Force`]; Saltus' stage assembly turns
//! it into every stage's residual and Hessian, so the element files contain physics only.
//!
//! Link the crate (`use saltus_plugin_drag as _;` or call [`link`]) and the types
//! `viscous_drag` and `cubic_spring` are available to model files.

mod cubic_spring;
mod drag;

pub use cubic_spring::{CubicSpring, CubicSpringSpec};
pub use drag::{ViscousDrag, ViscousDragSpec};

/// Keeps this crate linked (and its registrations alive) in binaries that name nothing else.
pub fn link() {}
