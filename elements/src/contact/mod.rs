//! Frictional unilateral contacts (spec nsga.md §8, contact-elements.md).

pub mod law;
pub mod kinematics;
