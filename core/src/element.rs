//! The [`Element`] trait (spec `nsga.md` §11) and the local views it works on.
//!
//! An element states its physics through the interfaces of [`crate::physics`] ([`Element::as_force`],
//! [`Element::as_inertia`]); the stage assembly ([`crate::stage`], which holds the level table)
//! turns them into each stage's residual and Hessian. The raw per-level methods
//! ([`Element::smooth`], [`Element::position`], [`Element::velocity`], [`Element::static_eq`])
//! remain as an escape hatch for elements the interfaces do not cover yet.
//!
//! A raw level method reads a gathered [`LocalState`] of its own nodes (in the order of
//! [`Element::nodes`]) and its own multipliers, and **adds** into a pre-zeroed
//! [`LocalSystem`]: a residual vector and its Hessian (iteration matrix). It never sees
//! global indices. Local unknown order: the nodes' unknowns in node order (frame node:
//! `[δx(3), δΘ(3)]`, point node: `[δx(3)]`), then the element's multipliers of that level.
//!
//! Sign convention (spec §4–§6): residual = inertia − forces − constraint forces; the solver
//! solves `S Δ = −r`. Hessian columns are derivatives with respect to the level's unknown `u`:
//! the configuration moves as `dq = dq_dv · T du`, the velocity as `dv = dv_dv du` and the
//! acceleration as `dv̇ = dvdot_dv du` (factors in [`StepCx`], values per level in
//! [`crate::stage`]), where for rotational unknowns `dq = T du` means the material variation
//! `δΘ = T δu` with the per-node [`LocalState::rot_tangent`] `T` (identity for translations).
//! Raw elements compute configuration derivatives with respect to material variations
//! `δR = R hat(δΘ)` and multiply their rotational columns by `T`.

use crate::constraint::BilateralConstraint;
use crate::contact::ContactRef;
use crate::node::{NodeId, NodeKind, NodeState};
use crate::physics::{Force, Inertia};
use nalgebra::{DMatrixViewMut, DVectorViewMut, Matrix3, Vector3, Vector6};
use std::fmt;

/// Sub-problems of the decoupled NSGA step (spec §3), plus static equilibrium.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// Smooth motion (§4): unknowns `ṽ_{n+1}`, bilateral multipliers `λ̃` at velocity level.
    Smooth,
    /// Position correction (§5): unknowns `U`, multipliers `ν`.
    Position,
    /// Velocity jump (§6): unknowns `W`, impulses `Λ`.
    Velocity,
    /// Quasi-static equilibrium (load stepping): unknowns `U`, multipliers `ν`;
    /// residual `−f(q) − g_qᵀ(k ν − p g)`, `−k g`.
    Static,
    /// A stage of another scheme: its descriptors ([`StepCx`]) define what the physics
    /// interfaces contribute; raw level methods take no part.
    Custom,
}

impl Level {
    /// The three dynamic levels in the order the NSGA step solves them.
    pub const DYNAMIC: [Level; 3] = [Level::Smooth, Level::Position, Level::Velocity];

    /// Index used for per-level arrays: smooth 0, position 1, velocity 2, static 3.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            Level::Smooth => 0,
            Level::Position => 1,
            Level::Velocity => 2,
            Level::Static => 3,
            Level::Custom => 4,
        }
    }

    /// Lower-case name ("smooth", "position", "velocity", "static").
    pub fn name(self) -> &'static str {
        match self {
            Level::Smooth => "smooth",
            Level::Position => "position",
            Level::Velocity => "velocity",
            Level::Static => "static",
            Level::Custom => "custom",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Level`]s (bit set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Levels(u8);

impl Levels {
    /// No level.
    pub const NONE: Levels = Levels(0);
    /// Smooth level only.
    pub const SMOOTH: Levels = Levels(1);
    /// Position level only.
    pub const POSITION: Levels = Levels(2);
    /// Velocity level only.
    pub const VELOCITY: Levels = Levels(4);
    /// Static level only.
    pub const STATIC: Levels = Levels(8);
    /// All four levels (inertia, forces and bilateral joints).
    pub const ALL: Levels = Levels(15);
    /// Position and velocity levels (unilateral contacts, spec §11.2).
    pub const CONTACT: Levels = Levels(2 | 4);

    /// Whether `level` is in the set.
    #[inline]
    pub fn contains(self, level: Level) -> bool {
        self.0 & (1 << level.index()) != 0
    }

    /// Union of two sets.
    #[inline]
    pub const fn union(self, other: Levels) -> Levels {
        Levels(self.0 | other.0)
    }
}

/// Scalar context of one level evaluation (shared by all elements).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepCx {
    /// The level being assembled.
    pub level: Level,
    /// Time `t_{n+1}` \[s\] (load factor for [`Level::Static`]).
    pub t: f64,
    /// Step size `h` \[s\] (0 for static).
    pub h: f64,
    /// Gravity acceleration \[m/s²\] in the inertial frame.
    pub gravity: Vector3<f64>,
    /// Scaling factor `k` of this level's multipliers (`k_s`, `k_p`, `k_v`; spec §10).
    pub k: f64,
    /// Penalty `p` of this level's augmented Lagrangian (`p_s`, `p_p`, `p_v`).
    pub p: f64,
    /// Smooth-level scaling `k_s`: the physical smooth reaction is `k_s λ̃` (spec §5).
    pub k_s: f64,
    /// `∂q/∂u`: `hβ/γ` (smooth), 1 (position, static), 0 (velocity).
    pub dq_dv: f64,
    /// `∂v̇/∂u`: `(1−α_m)/(hγ(1−α_f))` (smooth), 0 otherwise.
    pub dvdot_dv: f64,
    /// `∂v/∂u`: 1 (smooth, velocity), 0 (position, static).
    pub dv_dv: f64,
    /// Weight of the force difference in the correction residuals: `h²/2` (position, spec §5),
    /// `h` (velocity, §6); 1 for smooth and static.
    pub force_weight: f64,
    /// Inertia term of the stage: `M v̇` (smooth), `M u` (corrections) or none (static).
    pub inertia: InertiaTerm,
    /// Whether forces enter as the difference `f − f(q̃, ṽ)` from the converged smooth state
    /// (position and velocity corrections, spec §5–§6).
    pub force_difference: bool,
    /// Factor on external loads and gravity: 1 in dynamics, the load step in statics.
    pub load_factor: f64,
    /// Velocity level: the normal multiplier `λ_N` (the level's units; NSGA's `κ = m` makes
    /// them velocities, m/s) at or below which a converged contact counts as carrying no load
    /// ([`crate::contact::ContactHistory::record_load`]; NSGA's impact tolerance `tol_v`,
    /// `nsga.md` §9). 0 elsewhere.
    pub load_tolerance: f64,
}

/// The inertia term a stage assembles (see [`crate::stage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InertiaTerm {
    /// No inertia (static equilibrium).
    None,
    /// `M v̇` with `∂v̇/∂u = dvdot_dv` (smooth motion).
    Acceleration,
    /// `M u`, the mass times the stage's node increment (`U` or `W`, corrections).
    Increment,
}

impl StepCx {
    /// Inertia term and force-difference flag of the NSGA level `level` (module table of
    /// [`crate::stage`]); a [`Level::Custom`] stage sets its own (none here).
    pub fn level_terms(level: Level) -> (InertiaTerm, bool) {
        match level {
            Level::Smooth => (InertiaTerm::Acceleration, false),
            Level::Position | Level::Velocity => (InertiaTerm::Increment, true),
            Level::Static | Level::Custom => (InertiaTerm::None, false),
        }
    }

    /// How the stage's node unknown moves the state (for checks that perturb it).
    pub fn motion(&self) -> StageMotion {
        if self.dq_dv != 0.0 && self.dv_dv != 0.0 {
            StageMotion::Rates
        } else if self.dq_dv != 0.0 {
            StageMotion::Configuration
        } else {
            StageMotion::Velocity
        }
    }
}

/// How a stage's node unknown `u` moves the node states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageMotion {
    /// `u` moves velocities, accelerations and (by `dq_dv`) the configuration from `q_n`
    /// (NSGA smooth stage: `Δq = Δq* + (hβ/γ) u`).
    Rates,
    /// `u` is a configuration increment from the base (`q = q̃ ⊕ u`; position, static).
    Configuration,
    /// `u` is a velocity increment from the base, configuration frozen (`v = ṽ + u`).
    Velocity,
}

/// What [`Element::level_converged`] needs after a level converged: the stage gathers an
/// element's nodes (about a kilobyte copied per element) only for [`LevelHook::State`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelHook {
    /// Not called at this level (the element keeps no per-level history).
    Skip,
    /// Called with [`LocalState::EMPTY`]: the element reads only the [`StepCx`].
    Context,
    /// Called with no node data but with the element's multipliers and the [`LevelMemo`] its
    /// last evaluation recorded (`s.memo`), when the stage vouches that this evaluation was
    /// at the converged state; otherwise with the gathered state and no memo.
    Memo,
    /// Called with the element's gathered state.
    State,
}

/// What an element's evaluation found at a level that its [`Element::level_converged`] needs
/// (a contact's closed flag and statuses, `nsga.md` §8.6), recorded by the core's stage
/// assembly ([`crate::stage`]) so that a converged level does not recompute it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelMemo {
    /// Level of the evaluation that recorded `values`; `None`: nothing recorded.
    pub level: Option<Level>,
    /// Element-defined values.
    pub values: [f64; 4],
}

/// Read-only gathered view of an element's nodes and multipliers (spec §11.1).
#[derive(Clone, Copy, Debug)]
pub struct LocalState<'a> {
    /// Node kinds, in local order.
    pub kinds: &'a [NodeKind],
    /// Current iterate of this level: `(q̃, ṽ, v̇̃)` smooth, `(q̃⊕U, ṽ)` position, `(q, ṽ+W)` velocity.
    pub nodes: &'a [NodeState],
    /// Converged state at `t_n` (`q_n`, `v_n`): Newton impact law, incremental rotations.
    /// Inside a multiple-impact sequence (`nsga.md` §9) the velocity stage sees the updated
    /// pre-impact velocities `V⁻` here (configuration still `q_n`).
    pub prev: &'a [NodeState],
    /// Converged smooth result `(q̃, ṽ, v̇̃)` of this step (equal to `nodes` at the smooth level).
    pub smooth: &'a [NodeState],
    /// Per-node rotation tangent `T` for configuration columns (spec §12): `T(Δψ)` smooth,
    /// `T(U_Θ)` position/static, identity at velocity level and for point nodes.
    pub rot_tangent: &'a [Matrix3<f64>],
    /// Per-node increment of the level: `U` (position/static), `W` (velocity),
    /// `[Δx; Δψ]` from `q_n` (smooth). Angular part material.
    pub incr: &'a [Vector6<f64>],
    /// This element's multipliers at this level (`len = n_mult(level)`).
    pub mult: &'a [f64],
    /// This element's converged smooth multipliers `λ̃` (scaled; reaction `k_s λ̃`).
    pub mult_smooth: &'a [f64],
    /// Velocity level: this element's contact takes part in the current impact problem (the
    /// scheme's admissibility filter, `nsga.md` §9: in the position active set and
    /// approaching, `ġ_N(V⁻⁻) < −tol_v`). A contact that does not gets the forced-gap rows
    /// (its fresh impulses vanish). `true` outside impact sequences and at other levels.
    pub admissible: bool,
    /// In [`Element::level_converged`] of a [`LevelHook::Memo`] element: what its last
    /// evaluation at this level recorded, when that evaluation was at the converged state.
    /// `None` everywhere else.
    pub memo: Option<&'a LevelMemo>,
    /// The element's terms at the converged smooth state of the step, when the scheme
    /// evaluated them once for the step ([`BaseTerms`]); `None`: the difference stages
    /// evaluate them at every assembly.
    pub base: Option<BaseTerms<'a>>,
}

/// An element's force-like terms at the converged smooth state `(q̃, ṽ)`, with its smooth
/// multipliers `λ̃`: what the correction stages' differences `f(q, v) − f(q̃, ṽ)` (spec §5,
/// §6) subtract. They are constant over a step, so a scheme may evaluate them once per step
/// (`saltus_core::stage::base_terms`) instead of at every assembly of the position and
/// velocity corrections. Each slice runs over the element's node unknowns (local order).
#[derive(Clone, Copy, Debug)]
pub struct BaseTerms<'a> {
    /// Inertial force `f_in(q̃, ṽ)` of [`Element::as_inertia`] \[N, N m\] (zeros if none).
    pub inertial: &'a [f64],
    /// Applied force `f(q̃, ṽ)` of [`Element::as_force`] \[N, N m\] (zeros if none).
    pub force: &'a [f64],
    /// Constraint reaction `g_q(q̃)ᵀ k_s λ̃` of [`Element::as_constraint`] \[N, N m\] (zeros if
    /// none).
    pub reaction: &'a [f64],
    /// Applied force `f(q)` of [`Element::as_force`] at the current configuration \[N, N m\],
    /// on a stage that holds the configuration (`StepCx::dq_dv = 0`: NSGA's velocity jump)
    /// for a force whose [`crate::physics::Force::dependence`] has no velocity: constant over
    /// such a stage, so a scheme may evaluate it once per stage
    /// (`saltus_core::stage::frozen_force`) instead of at every assembly. `None` elsewhere.
    pub frozen_force: Option<&'a [f64]>,
}

impl LocalState<'static> {
    /// A view of no nodes and no multipliers (what [`LevelHook::Context`] elements receive).
    pub const EMPTY: LocalState<'static> = LocalState {
        kinds: &[],
        nodes: &[],
        prev: &[],
        smooth: &[],
        rot_tangent: &[],
        incr: &[],
        mult: &[],
        mult_smooth: &[],
        admissible: true,
        memo: None,
        base: None,
    };
}

/// Local output buffers an element adds into (pre-zeroed by the assembler).
pub struct LocalSystem<'a> {
    /// Residual `r_e` (length = local unknowns).
    pub residual: DVectorViewMut<'a, f64>,
    /// Hessian `∂r_e/∂u` (square, local unknowns).
    pub hessian: DMatrixViewMut<'a, f64>,
    /// Optional magnitude of the individual force terms of this element (e.g. `|M v̇| + |f|`),
    /// added to the reference of the convergence test (spec §10, B.44). The assembler adds the
    /// norm of the element residual itself.
    pub reference: f64,
}

/// Mechanical energy of an element \[J\].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Energy {
    /// Kinetic energy \[J\].
    pub kinetic: f64,
    /// Potential energy (gravity, elastic) \[J\].
    pub potential: f64,
}

/// One named output channel of an element, written to HDF5 `/elements/<name>/<output>`.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSpec {
    /// Dataset name (snake_case).
    pub name: &'static str,
    /// Number of values per step.
    pub len: usize,
    /// Unit (SI), e.g. "N", "N*s", "m".
    pub unit: &'static str,
    /// One-line description.
    pub description: &'static str,
}

/// Everything an element may report after a converged step.
#[derive(Clone, Copy, Debug)]
pub struct OutputState<'a> {
    /// Time `t_{n+1}` \[s\] of the converged state.
    pub t: f64,
    /// Converged nodes at `t_{n+1}`.
    pub nodes: &'a [NodeState],
    /// Node kinds (element-local order).
    pub kinds: &'a [NodeKind],
    /// Converged smooth multipliers `λ̃` (scaled by `k_s`).
    pub mult_smooth: &'a [f64],
    /// Converged position multipliers `ν` (scaled by `k_p`).
    pub mult_position: &'a [f64],
    /// Converged velocity multipliers `Λ` (scaled by `k_v`).
    pub mult_velocity: &'a [f64],
    /// `k_s`, `k_p`, `k_v`.
    pub k: [f64; 3],
    /// Step size \[s\].
    pub h: f64,
    /// Gravity \[m/s²\].
    pub gravity: Vector3<f64>,
}

/// Error raised by an element while evaluating a level.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ElementError {
    /// The state makes the element undefined (zero-length spring, NaN, ...).
    #[error("invalid state: {0}")]
    InvalidState(String),
}

/// A finite element of a flexible multibody model (spec §11).
///
/// An element states what it is through [`Element::as_force`] and [`Element::as_inertia`]
/// (the stage assembly does the rest), or, as an escape hatch, overrides the raw level methods
/// listed by [`Element::levels`]. Every raw method adds into `out` (pre-zeroed). Multipliers are element-owned unknowns whose number per level is fixed
/// ([`Element::n_mult`]); an inactive constraint keeps its unknown with the gap row
/// `−k²/p · λ` so the sparsity pattern never changes with the active set (spec §7).
pub trait Element: Send + Sync + fmt::Debug {
    /// Registered type name, e.g. `"revolute_joint"`.
    fn type_name(&self) -> &'static str;
    /// The element's nodes in local order.
    fn nodes(&self) -> &[NodeId];
    /// The element's applied forces, if it has any ([`crate::physics::Force`]).
    fn as_force(&self) -> Option<&dyn Force> {
        None
    }
    /// The element's inertia, if it has any ([`crate::physics::Inertia`]).
    fn as_inertia(&self) -> Option<&dyn Inertia> {
        None
    }
    /// The element's bilateral constraint, if it is one ([`crate::constraint`]): its rows and
    /// multipliers at every stage are formed by [`crate::stage`].
    fn as_constraint(&self) -> Option<&dyn BilateralConstraint> {
        None
    }
    /// The element's unilateral contact, if it is one ([`crate::contact`]): its position and
    /// velocity rows are formed by [`crate::stage`].
    fn as_contact(&self) -> Option<ContactRef<'_>> {
        None
    }
    /// Levels at which the raw level methods contribute (none by default: physics-interface
    /// elements contribute through [`crate::stage`]).
    fn levels(&self) -> Levels {
        Levels::NONE
    }
    /// Multipliers owned at `level` (must not depend on the state). Default: the rows of
    /// [`Element::as_constraint`] at every level, the multipliers of [`Element::as_contact`]
    /// ([`ContactRef::n_mult`]), none otherwise.
    fn n_mult(&self, level: Level) -> usize {
        self.as_constraint().map_or(0, |c| c.n_constraints())
            + self.as_contact().map_or(0, |c| c.n_mult(level))
    }
    /// Smooth subproblem (§4): e.g. `M v̇̃ − f(q̃, ṽ, t)`, joint rows `−g_qᵀ(k_s λ̃ − p_s g_q ṽ)`, `−k_s g_q ṽ`.
    fn smooth(
        &self,
        _cx: &StepCx,
        _s: &LocalState<'_>,
        _out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        Ok(())
    }
    /// Position correction (§5): e.g. `M U − (h²/2) f^p`, joint rows `−g_qᵀ(k_p ν − p_p g)`, `−k_p g`.
    fn position(
        &self,
        _cx: &StepCx,
        _s: &LocalState<'_>,
        _out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        Ok(())
    }
    /// Velocity jump (§6): e.g. `M W − h f^v`, joint rows `−g_qᵀ(k_v Λ − p_v ĝ̇)`, `−k_v ĝ̇`.
    fn velocity(
        &self,
        _cx: &StepCx,
        _s: &LocalState<'_>,
        _out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        Ok(())
    }
    /// Static equilibrium residual and Hessian (see [`Level::Static`]).
    fn static_eq(
        &self,
        _cx: &StepCx,
        _s: &LocalState<'_>,
        _out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        Ok(())
    }
    /// Evaluate the level `cx.level`. The default dispatches to [`Element::smooth`],
    /// [`Element::position`], [`Element::velocity`] or [`Element::static_eq`]; an element whose
    /// levels share one formula (a force weighted by `cx.force_weight`, spec §11.2) may override
    /// this single method instead. The assembler and the FD checks call this.
    fn evaluate(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        match cx.level {
            Level::Smooth => self.smooth(cx, s, out),
            Level::Position => self.position(cx, s, out),
            Level::Velocity => self.velocity(cx, s, out),
            Level::Static => self.static_eq(cx, s, out),
            Level::Custom => Ok(()),
        }
    }
    /// Called after a level has converged (e.g. a contact freezes its position status for the
    /// velocity level's active set, spec §6).
    fn level_converged(&mut self, _cx: &StepCx, _s: &LocalState<'_>) {}
    /// What [`Element::level_converged`] needs at `level`; the default,
    /// [`LevelHook::State`], is always correct. Elements without a `level_converged` return
    /// [`LevelHook::Skip`], those that read only the step context [`LevelHook::Context`]: the
    /// stage then skips gathering their nodes.
    fn level_hook(&self, _level: Level) -> LevelHook {
        LevelHook::State
    }
    /// Starting multipliers of the element for a solve of the stage `cx` into `mult` (zeroed
    /// by the caller; its length is the element's multiplier count at that level). Default:
    /// zeros. Contacts start from their last converged multipliers (a warm start: only the
    /// first Newton iterate changes, not the solution).
    fn warm_start(&self, _cx: &StepCx, _mult: &mut [f64]) {}
    /// Called after the whole step has converged (history variables, reference frames).
    fn commit(&mut self, _s: &OutputState<'_>) {}
    /// Output channels (fixed for the element's lifetime).
    fn outputs(&self) -> Vec<OutputSpec> {
        Vec::new()
    }
    /// Fill the output channels, concatenated in the order of [`Element::outputs`].
    fn write_outputs(&self, _s: &OutputState<'_>, _out: &mut [f64]) {}
    /// Mechanical energy of the element at the given state. Default: the kinetic energy of
    /// [`Element::as_inertia`] ([`Inertia::kinetic_energy`]) and the potential of
    /// [`Element::as_force`] ([`Force::potential_energy`]).
    fn energy(&self, s: &OutputState<'_>) -> Energy {
        let ps = crate::physics::PhysicsState {
            nodes: s.nodes,
            kinds: s.kinds,
            t: s.t,
            load_factor: 1.0,
            statics: false,
            gravity: s.gravity,
            tangents: false,
            stiffness: false,
            damping: false,
        };
        Energy {
            kinetic: self.as_inertia().map_or(0.0, |i| i.kinetic_energy(&ps)),
            potential: self.as_force().map_or(0.0, |f| f.potential_energy(&ps)),
        }
    }
    /// Mass carried by this element \[kg\], used for the characteristic mass of the multiplier
    /// scaling (spec §10: `k_p = p_p = m`). Default: the total mass of [`Element::as_inertia`].
    fn mass(&self) -> f64 {
        self.as_inertia().map_or(0.0, |i| i.total_mass())
    }
    /// Node kinds this element requires, checked when the model is assembled.
    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![None; self.nodes().len()]
    }
}
