//! Frictional unilateral contacts (spec nsga.md §8, contact-elements.md).

pub mod kinematics;
pub mod law;
pub mod plane;
