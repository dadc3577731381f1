//! Frictional unilateral contacts (spec nsga.md §8, contact-elements.md).

pub mod bearing;
pub mod element;
#[cfg(test)]
mod fd_support;
pub mod group;
pub mod kinematics;
pub mod plane;
pub mod spheres;

pub use element::ContactElement;
/// The contact laws of `saltus-core`, re-exported where the contact elements are.
pub use saltus_core::contact::law;
