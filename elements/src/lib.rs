//! # saltus-elements
//!
//! The Saltus element library. Every element type registers itself in the
//! `saltus_core` registry; call [`link`] (or use the `saltus` facade) so the linker keeps it.

pub mod beam;
pub mod body;
pub mod contact;
pub mod force;
pub mod joints;
#[cfg(test)]
mod test_support;

/// Guarantees that this crate is linked (its registrations are then visible through
/// `saltus_core::element_kinds()`). Binaries that use the registry without naming any item of
/// this crate must call it.
pub fn link() {}
