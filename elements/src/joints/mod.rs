//! Bilateral joints (spec `nsga.md` §§4–6, §11.2; contact-elements.md §2.3).
//!
//! Every joint is a [`constraint::BilateralConstraint`] — its kinematics `g(q, t)`, `g_q`,
//! `g_t` and second derivatives — wrapped into an element by the generic
//! [`BilateralJoint`]; the stage assembly of `saltus-core` forms its rows at every
//! stage (smooth, position, velocity, static, and any other scheme's) with exact Hessians. New joints only supply kinematics; see the
//! [`constraint`] module for the contract and a worked example.
//!
//! Registered types (joint location and axes are given in the inertial frame at the initial
//! configuration and stored as body-frame offsets/directions):
//!
//! | type | nodes | rows | constraint |
//! |---|---|---|---|
//! | `revolute_joint` | 2 frame | 5 | anchors coincide, axes aligned ([`RevoluteJoint`]) |
//! | `spherical_joint` | 2 frame/point | 3 | anchors coincide ([`SphericalJoint`]) |
//! | `prismatic_joint` | 2 frame | 5 | relative rotation locked, relative slide along the axis only ([`PrismaticJoint`]) |
//! | `clamp` | 1 frame | 6 | node held at its initial position and orientation ([`Clamp`]) |
//! | `prescribed_rotation` | 2 frame | 1 | relative angle about an axis `= θ(t)` ([`PrescribedRotation`]) |

mod clamp;
mod common;
#[cfg(test)]
mod constraint_tests;
mod joint;
mod prescribed_rotation;
mod prismatic;
mod revolute;
mod spherical;

pub use clamp::{Clamp, ClampConstraint, ClampSpec};
pub use constraint::{
    check_kinematics, BilateralConstraint, ConstraintUnits, KinCx, KinVec, Kinematics, Scalar,
};
pub use joint::BilateralJoint;
pub use prescribed_rotation::{
    PrescribedRotation, PrescribedRotationConstraint, PrescribedRotationSpec,
};
pub use prismatic::{PrismaticConstraint, PrismaticJoint, PrismaticSpec};
pub use revolute::{RevoluteConstraint, RevoluteJoint, RevoluteSpec};
/// The constraint interface of `saltus-core`, re-exported where the joints are.
pub use saltus_core::constraint;
pub use spherical::{SphericalConstraint, SphericalJoint, SphericalSpec};
