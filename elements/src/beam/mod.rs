//! Geometrically exact 3-D beam (Simo–Reissner / Cardona–Géradin, shear-deformable) on two
//! frame nodes, with Rayleigh damping, and a mesh helper ([`BeamBuilder`]) that discretizes a
//! straight line into `n` elements (`contact-elements.md` §2.2, `nsga.md` §4–§6, §11.2).
//!
//! # Kinematics (one-point reduced integration at the midpoint)
//!
//! Each node `i` carries its own frame `R_i`; the **section frame** at node `i` is
//! `Λ_i = R_i Q_i` with a constant offset `Q_i = R_i(0)ᵀ Λ₀` fixed at construction, where `Λ₀`
//! is the section frame of the initial (straight) element: axis 1 along the chord
//! `x₂ − x₁`, axis 2 along the orientation vector (made orthogonal to axis 1), axis 3 = 1 × 2.
//! Nodes may therefore have any rotation; a mesh whose elements meet at angles (an initially
//! curved, polygonal beam) is stress-free in its initial configuration. With the initial
//! length `L` \[m\]:
//!
//! ```text
//! ψ   = log(Λ₁ᵀ Λ₂)                      relative rotation (material, |ψ| ≤ π)
//! Λ_m = Λ₁ exp(ψ/2)                      midpoint section frame
//! Γ   = Λ_mᵀ (x₂ − x₁)/L − Γ₀            [Γ₁ axial strain, Γ₂, Γ₃ shear strains]
//! K   = ψ/L − K₀                          [K₁ twist, K₂, K₃ bending curvatures, 1/m]
//! ```
//!
//! The relative rotation of the two nodes of one element must stay below π (the logarithm
//! jumps there); any realistic mesh is far from it. `Γ₀`, `K₀` are the values in the initial
//! configuration (`Γ₀ = e₁`, `K₀ = 0` up to
//! round-off), so the element is stress-free there. These strains are objective (invariant
//! under superposed rigid motions) and path independent; they coincide with the two-node
//! Crisfield–Jelenić interpolation integrated at its midpoint. One-point integration avoids
//! shear locking. It slightly stiffens bending: a cantilever of `n` elements under a tip force
//! `P` deflects by exactly `P L³/(3EI) − P L³/(12 n² EI) + P L/(κGA)` (linear range), an
//! `O(1/n²)` error (0.06 % at 20 elements); under a uniform load the tip deflection is exact,
//! and under an end moment the discrete solution is an exact polygon on the circle.
//!
//! # Section forces, internal forces and Rayleigh damping
//!
//! With the diagonal section stiffness `C = diag(EA, GA₂, GA₃, GJ, EI₂, EI₃)` and the strain
//! rates `ε̇ = [Γ̇; K̇] = B(q) v` (`B` the strain–displacement matrix w.r.t. the material node
//! variations `[δx₁, δΘ₁, δx₂, δΘ₂]`), the section forces in the **section frame** are
//!
//! ```text
//! [N; M] = C (ε + β ε̇),  N = [N₁ axial, N₂, N₃ shear] [N],  M = [M₁ torque, M₂, M₃ bending] [N m]
//! ```
//!
//! and the internal force vector is `f_int = L Bᵀ [N; M]` (virtual work `L (δΓ·N + δK·M)`).
//! The stiffness-proportional part `β C ε̇` (β \[s\]) only acts on strain rates: it never damps
//! rigid motion. The mass-proportional part `α M v` (α \[1/s\], `M` the element mass matrix)
//! acts on the **absolute** velocity, so it also damps rigid-body translation and rotation
//! (`v(t) = v₀ e^{−α t}` for a free beam). Tangents are exact: `K = L [Bᵀ C (B + β ∂(Bv)/∂q) +
//! ∂(Bᵀ s)/∂q|_s]` (the last term the geometric stiffness, built from the exact derivatives of
//! `T⁻¹(ψ)`, `T(ψ/2)`, `exp(ψ/2)`) and `∂f/∂v = L β Bᵀ C B + α M`.
//!
//! # Inertia
//!
//! Constant material mass matrix (so `∂(M U)/∂q = 0` and `M(q) − M(q̃) = 0`, `nsga.md` §5–§6):
//! consistent translational mass `ρ A L/6 [2 1; 1 2] ⊗ I₃` and **lumped** rotational inertia
//! `J_i = (ρ L/2) Q_i diag(I₂ + I₃, I₂, I₃) Q_iᵀ` per node in the node's material frame, with
//! gyroscopic force `Ω_i × J_i Ω_i` as for a rigid body. This is exact for any rigid motion of
//! the element (the consistent translational mass carries the `ρ A L³/12` transverse inertia).
//! Gravity: consistent nodal weights `ρ A L g/2` per node.
//!
//! # Stages
//!
//! The beam states its physics through the interfaces of `saltus_core::physics`: an
//! [`Inertia`] (`M`, inertial force `−Ω_i × J_i Ω_i`) and a [`Force`]
//! (`f = −f_int(q, v) − α M v + f_grav`, stiffness `∂f_int/∂q`, damping `∂f_int/∂v + α M`).
//! The stage assembly of `saltus-core` forms every stage's residual and Hessian from them (its
//! level table: `M v̇ − f` smooth, `M U − (h²/2)(f − f(q̃, ṽ))` position, `M W − h (f − f(q̃, ṽ))`
//! velocity, `−f(q, 0)` static with gravity scaled by the load factor), applying the rotation
//! tangents `T`; a stage that reads only one tangent gets only that one computed.
//!
//! # Notes for solver settings
//!
//! * Round-off floor: positions are absolute coordinates, so the internal forces of an element
//!   cannot be resolved below `≈ E A ε_mach |x|/L_e` (4e-8 N for a steel 20×10 mm² section,
//!   `L_e` = 0.2 m, `|x|` = 1 m). Relative Newton tolerances must leave the test
//!   `‖r‖ ≤ tol (Σ‖r_k‖ + tol_f)` above it: use `tol_f` ≳ that floor / `tol`.
//! * Line search: the first Newton iterate of a large rotation increment stretches the
//!   elements by `O(Δθ²)`, raising `‖r‖` by `~ (E A L²/E I) Δθ` before Newton converges
//!   quadratically; an Armijo test on `‖r‖` then rejects good iterates (full Newton is
//!   preferable for geometrically nonlinear statics).

use nalgebra::{
    DMatrixViewMut, Matrix3, Rotation3, RowSVector, SMatrix, SVector, UnitQuaternion, Vector3,
    Vector6,
};
use saltus_core::lie::{self, hat};
use saltus_core::physics::{
    add_gyroscopic, mass_entries_of, Dependence, Force, ForceTerms, Inertia, MassEntry,
    PhysicsState,
};
use saltus_core::registry::parse_params;
use saltus_core::{
    BuildCx, BuildError, Element, ElementDef, ElementError, ElementId, Model, NodeDef, NodeId,
    NodeKind, NodeState, OutputSpec, OutputState,
};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

mod element;
mod line;
mod mesher;
mod section;
#[cfg(test)]
mod tests;

pub use element::{build_beam, Beam};
pub use line::MAX_BEAM_LINE_ELEMENTS;
pub use mesher::{BeamBuilder, BeamLine};
pub use section::{BeamSection, BeamSpec};

type Vec12 = SVector<f64, 12>;
type Row12 = RowSVector<f64, 12>;
type Mat12 = SMatrix<f64, 12, 12>;
type Mat3x12 = SMatrix<f64, 3, 12>;
type Mat6x12 = SMatrix<f64, 6, 12>;

/// Registered type name.
const TYPE_NAME: &str = "beam";

/// Default Timoshenko shear coefficient κ (rectangular section).
pub const DEFAULT_SHEAR_COEFFICIENT: f64 = 5.0 / 6.0;

use saltus_core::registry::{
    check_non_negative as non_negative, check_positive as positive, invalid,
};
