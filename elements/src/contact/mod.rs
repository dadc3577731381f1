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

use saltus_core::{BuildError, ElementDef};

/// Rename the element in a constructor's parameter error (builders name a placeholder).
pub(crate) fn located(def: &ElementDef, e: BuildError) -> BuildError {
    match e {
        BuildError::InvalidParameter {
            parameter, message, ..
        } => BuildError::InvalidParameter {
            element: def.name.clone(),
            parameter,
            message,
        },
        other => other,
    }
}
/// The contact laws of `saltus-core`, re-exported where the contact elements are.
pub use saltus_core::contact::law;
