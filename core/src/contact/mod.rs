//! Unilateral frictional contacts: the contact interface and the frictional contact laws
//! (spec `nsga.md` §§5–8, `contact-elements.md`, `time-stepping-baselines.md` (e)).
//!
//! A contact states its **geometry only** ([`UnilateralContact`]): at a configuration `q` it
//! reports the one contact-kinematics record every scheme builds on — the signed normal gap
//! `g_N` (positive when separated), the contact frame `(n̂, t̂₁, t̂₂)` with `n̂` pointing from body
//! b to body a, the contact points on both bodies ([`ContactFrame`]) and the velocity-space rows
//! `G_N` (1×n), `G_T` (2×n) and, for rolling and spinning resistance, `W_T` (2×n), `W_N` (1×n)
//! ([`ContactJacobian`]) — and, for position-level friction, the incremental tangential gap
//! `g_T(q; q_n)` over the step with its gradient and the curvatures `H_N`, `H_Tα`
//! ([`law::SlidingGaps`], [`law::Curvature`]). Rows act on the local velocity `v = [ẋ; Ω]` per
//! node (`Ω` material) and gradients on material variations `δR = R hat(δΘ)`, as for every
//! physics interface ([`crate::physics`]).
//!
//! The friction, restitution and resistance data ([`ContactLaw`]) and the per-contact history
//! ([`ContactHistory`]: position active set, statuses) travel with it in a [`ContactRef`]
//! ([`crate::Element::as_contact`]). The stage assembly turns them into the NSGA position and
//! velocity rows (Alart–Curnier laws of [`law`], Newton impact law
//! `ĝ̇ = G(q_{n+1}) v_{n+1} + e G(q_n) v_n`, §6) in one place, `crate::stage`; other schemes use
//! the same record (their activation predicates belong to the scheme, not to the contact).

pub mod law;

use crate::constraint::{Layout, LocalVector};
use crate::node::{NodeId, NodeKind, NodeState};
use law::{Curvature, NodeVector, SlidingGaps, Status, TangentialGradient};
use nalgebra::Vector3;
use std::fmt;

/// Friction, restitution and resistance data of one contact (`nsga.md` §1, §8).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactLaw {
    /// Coulomb friction coefficient `μ ≥ 0`.
    pub friction: f64,
    /// Normal restitution `e_N ∈ [0, 1]` (Newton impact law).
    pub restitution: f64,
    /// Tangential restitution `e_T ∈ [−1, 1]`.
    pub tangential_restitution: f64,
    /// Rolling resistance length `ρ ≥ 0` \[m\] (contacts with couples only).
    pub rolling_resistance: f64,
    /// Spinning resistance length `γ_s ≥ 0` \[m\] (contacts with couples only).
    pub spinning_resistance: f64,
    /// Speed dependence of the friction coefficient (zero: constant `μ`).
    pub friction_decay: FrictionDecay,
    /// Contact forces recovered from the impulses while the model runs (`None`: not; they
    /// can still be recovered from the result file afterwards).
    pub force_model: Option<crate::contact_force::ForceModel>,
}

/// A friction coefficient that falls with the sliding speed, `μ(v) = μ + a e^{−b v}` (the
/// exponential fit of ball–ball friction against the relative surface speed used for
/// billiard balls by Alciatore, spec `validation-cases.md` V11: `μ = 0.00995`, `a = 0.108`,
/// `b = 1.088 s/m`). `v` is the relative sliding speed of the contact points at the start of
/// the step — the pre-impact state of an impact problem — so `μ` is constant within a solve
/// and the Newton matrices are unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrictionDecay {
    /// Extra coefficient `a ≥ 0` at zero sliding speed.
    pub extra: f64,
    /// Decay rate `b ≥ 0` \[s/m\].
    pub rate: f64,
}

/// The contact frame at one configuration (post-processing, the HDF5 contact table, schemes
/// that need the frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactFrame {
    /// Signed normal gap `g_N` \[m\], positive when separated.
    pub gap: f64,
    /// Unit normal `n̂`, from body b to body a.
    pub normal: Vector3<f64>,
    /// First unit tangent `t̂₁`.
    pub t1: Vector3<f64>,
    /// Second unit tangent `t̂₂ = n̂ × t̂₁`.
    pub t2: Vector3<f64>,
    /// Contact point on body a \[m\] (inertial frame).
    pub point_a: Vector3<f64>,
    /// Contact point on body b \[m\] (inertial frame); `point_a − point_b = g_N n̂`.
    pub point_b: Vector3<f64>,
}

/// Velocity-space rows of one contact at a configuration `q`: the relative velocities of the
/// contact are `ġ_N = G_N v`, `ġ_T = G_T v` \[m/s\], and with couples the rolling and spinning
/// rates `ω_T = W_T v`, `ω_N = W_N v` \[rad/s\] (`v` the local velocity `[ẋ; Ω]` per node).
/// Entries beyond the `n` node unknowns are zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactJacobian {
    /// `G_N^T` (first `n` entries).
    pub normal: NodeVector,
    /// `G_T` (rows `T1`, `T2`).
    pub tangential: TangentialGradient,
    /// `W_T` (rolling; zero without couples).
    pub rolling: TangentialGradient,
    /// `W_N^T` (spinning; zero without couples).
    pub spinning: NodeVector,
}

impl ContactJacobian {
    /// All rows zero.
    pub fn zeros() -> Self {
        Self {
            normal: NodeVector::zeros(),
            tangential: TangentialGradient::zeros(),
            rolling: TangentialGradient::zeros(),
            spinning: NodeVector::zeros(),
        }
    }
}

/// Geometry of a unilateral contact between the bodies carried by its nodes (module docs).
///
/// Size limits: at most two frame nodes (12 node unknowns). Called inside the Newton loop:
/// implementations must not allocate.
pub trait UnilateralContact: Send + Sync + fmt::Debug {
    /// Registered type name, e.g. `"sphere_plane_contact"`.
    fn type_name(&self) -> &'static str;
    /// The contact's nodes in local order (body a first).
    fn nodes(&self) -> &[NodeId];
    /// The kinds of the contact's nodes (fixes the local unknown layout).
    fn node_kinds(&self) -> &[NodeKind];
    /// Radius `r` \[m\] of the rolling/spinning couples, if the contact has them: the velocity
    /// stage then has 6 multipliers `[Λ_N, Λ_T, χ_N, χ_T]` instead of 3, and the couples are
    /// scaled by `κ_r = κ r`, `π_r = ⅖ π r²` (the rotational inertia of a uniform sphere of the
    /// characteristic mass). Default: none.
    fn couple_radius(&self) -> Option<f64> {
        None
    }
    /// Signed curvatures `1/R` \[1/m\] of the two touching surfaces (convex > 0, plane 0,
    /// concave cavity < 0) for the Hertz stiffness of the contact-force recovery
    /// ([`crate::contact_force::effective_radius`]); `None` (the default) for a contact without
    /// curved surfaces, e.g. a point on a plane.
    fn surface_curvatures(&self) -> Option<[f64; 2]> {
        None
    }
    /// Turn the rolling/spinning couples on or off (called when the resistance lengths are
    /// set, `on` when either is > 0), for geometries whose couples are optional. Default: the
    /// geometry decides alone ([`UnilateralContact::couple_radius`]).
    fn set_couples(&mut self, on: bool) {
        let _ = on;
    }
    /// The contact frame at the node states `nodes` (local order).
    fn frame(&self, nodes: &[NodeState]) -> ContactFrame;
    /// Position-level gaps at `nodes` with the step start `prev`: `g_N`, the incremental
    /// tangential gap `g_T(q; q_n)`, their gradients (material variations) into `gaps` (zeroed,
    /// `gaps.n` set), and, when `curv` is given, `H_N`, `H_Tα` into it (zeroed).
    fn position_gaps(
        &self,
        nodes: &[NodeState],
        prev: &[NodeState],
        gaps: &mut SlidingGaps,
        curv: Option<&mut Curvature>,
    );
    /// Velocity-space rows at the configuration of `nodes` into `out` (zeroed). `prev` are the
    /// states at the step start `t_n`, for geometries whose tangent frame is frozen over the
    /// step (sphere–sphere, `contact-elements.md` §5.4: `t_α,n`); pass `nodes` itself for the
    /// rows at a single state (outputs, the Newton law's `G(q_n)`).
    fn jacobian(&self, nodes: &[NodeState], prev: &[NodeState], out: &mut ContactJacobian);
}

/// Per-contact history between stages and steps (`nsga.md` §6, §8.6, §11.3): it survives
/// topology changes with its element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactHistory {
    /// Converged position status: in the position active set `𝒜` (`ξ_N > 0`). An open contact
    /// drives all its velocity multipliers to zero (velocity active set ⊂ position active set).
    pub closed: bool,
    /// Converged statuses: position sliding, velocity sliding, rolling, spinning.
    pub status: [Status; 4],
    /// The loads of the last [`LOAD_MEMORY`] converged velocity stages, one bit each: bit `k`
    /// is set when the `(k+1)`-th last stage found the contact loaded (bit 0: the last stage;
    /// a load as [`ContactHistory::record_load`] defines it). Open and closed stages count
    /// alike: in a resting pile a contact's position status flickers with gaps at the
    /// tolerance. A new contact starts with none.
    pub loads: u32,
    /// Last converged multipliers of the position stage (`ν_N, ν_T`) and of the velocity stage
    /// (`Λ_N, Λ_T`, then `χ_N, χ_T` with couples), with the scale `κ` and step size `h` they
    /// were computed with: the start point of the next solve ([`WarmStart`]).
    pub last: [WarmStart; 2],
}

/// Converged velocity stages a contact remembers its loads for ([`ContactHistory::loads`]).
pub const LOAD_MEMORY: u32 = u32::BITS;

impl ContactHistory {
    /// The last converged velocity stage found the contact loaded.
    pub fn loaded(&self) -> bool {
        self.loads & 1 != 0
    }

    /// How many of the last `stages` converged velocity stages found the contact loaded (the
    /// last [`LOAD_MEMORY`] when `stages` is larger).
    pub fn loads_within(&self, stages: u32) -> u32 {
        let mask = 1u32.checked_shl(stages).map_or(u32::MAX, |b| b - 1);
        (self.loads & mask).count_ones()
    }

    /// A persistent, loaded contact for a memory of `stages` velocity stages: loaded in the
    /// last one, or in at least two of the last `stages` (a single impact is one load; with
    /// `stages = 2` this is the last one alone). Never with `stages = 0`.
    pub fn persistent(&self, stages: u32) -> bool {
        stages > 0 && (self.loaded() || self.loads_within(stages) >= 2)
    }

    /// Record whether a converged velocity stage found the contact loaded. The stage
    /// ([`crate::stage::contact_level_converged`]) counts a load when the contact is closed,
    /// `σ_N > 0` and its normal multiplier exceeds [`crate::StepCx::load_tolerance`]: with a
    /// tolerance > 0 (NSGA's velocity level), a closed contact whose `σ_N > 0` comes from a
    /// slightly negative rate alone carries none.
    pub fn record_load(&mut self, loaded: bool) {
        self.loads = (self.loads << 1) | u32::from(loaded);
    }
}

/// Converged multipliers of one level kept as the next step's starting guess: a persistent
/// contact (a resting pile, a loaded bearing ball) then starts its semi-smooth Newton solve in
/// the right status, which the linearized system of that status resolves in one correction.
/// Only the start point changes; the converged solution does not depend on it (`nsga.md` §7).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WarmStart {
    /// Multipliers `λ` as solved (scaled by `κ`; up to 6: normal, 2 tangential, 3 couples).
    pub mult: [f64; 6],
    /// The level's scale `κ` they were solved with (`0`: nothing stored).
    pub k: f64,
    /// Step size `h` \[s\] of that solve.
    pub h: f64,
}

impl WarmStart {
    /// Keep the converged multipliers `mult` of a solve with scale `k` and step `h`.
    pub fn store(&mut self, mult: &[f64], k: f64, h: f64) {
        let n = mult.len().min(6);
        self.mult = [0.0; 6];
        self.mult[..n].copy_from_slice(&mult[..n]);
        self.k = k;
        self.h = h;
    }

    /// The starting multipliers for a solve with scale `k` and step `h` into `out`: the same
    /// physical values `κλ`, an impulse scaled by `(h/h_stored)^power` (`power` 2 for the
    /// position level's impulse × time, 1 for the velocity level's impulse of a persistent
    /// force). Zeros when nothing is stored.
    pub fn recall(&self, k: f64, h: f64, power: i32, out: &mut [f64]) {
        if self.k == 0.0 || k == 0.0 || self.h == 0.0 {
            out.fill(0.0);
            return;
        }
        let f = self.k / k * (h / self.h).powi(power);
        for (o, m) in out
            .iter_mut()
            .zip(self.mult.iter().chain(std::iter::repeat(&0.0)))
        {
            *o = f * m;
        }
    }
}

/// A contact as the stage assembly sees it: geometry, law data and history.
#[derive(Clone, Copy, Debug)]
pub struct ContactRef<'a> {
    /// The geometry.
    pub geometry: &'a dyn UnilateralContact,
    /// Friction, restitution, resistance.
    pub law: &'a ContactLaw,
    /// Converged history.
    pub history: &'a ContactHistory,
}

impl ContactRef<'_> {
    /// Friction coefficient of the step, `μ + a e^{−b v_s}` ([`FrictionDecay`]), with
    /// `v_s = ‖G_T(q⁻) v⁻‖` the relative sliding speed of the contact points at the step-start
    /// (pre-impact) states `prev`; the constant `μ` without decay.
    pub fn friction(&self, prev: &[NodeState], layout: &Layout) -> f64 {
        let d = self.law.friction_decay;
        if d.extra == 0.0 {
            return self.law.friction;
        }
        let mut j = ContactJacobian::zeros();
        self.geometry.jacobian(prev, prev, &mut j);
        let speed = (j.tangential * layout.velocity(prev)).norm();
        self.law.friction + d.extra * (-d.rate * speed).exp()
    }

    /// Rolling or spinning resistance acts (a geometry with couples and `ρ > 0` or `γ_s > 0`):
    /// at velocity level the contact's couple rows take part beside its three sliding rows.
    pub fn resists_couples(&self) -> bool {
        self.geometry.couple_radius().is_some()
            && (self.law.rolling_resistance > 0.0 || self.law.spinning_resistance > 0.0)
    }

    /// Multipliers at the position stage (`ν_N, ν_T`) and velocity stage (`Λ_N, Λ_T` and, with
    /// couples, `χ_N, χ_T`).
    pub fn n_mult(&self, level: crate::Level) -> usize {
        match level {
            crate::Level::Position => 3,
            crate::Level::Velocity if self.geometry.couple_radius().is_some() => 6,
            crate::Level::Velocity => 3,
            _ => 0,
        }
    }
}

/// Velocity-level quantities of a contact at `nodes` with the step start `prev` (Newton impact
/// law, `nsga.md` §6): `ĝ̇ = G(q) v + e G(q_n) v_n` (sliding), `ω_T = W_T v`, `ω_N = W_N v`.
pub fn velocity_gaps(
    c: &ContactRef<'_>,
    nodes: &[NodeState],
    prev: &[NodeState],
    layout: &Layout,
) -> (SlidingGaps, law::RollingRates, law::SpinningRate) {
    let mut j = ContactJacobian::zeros();
    c.geometry.jacobian(nodes, prev, &mut j);
    let v: LocalVector = layout.velocity(nodes);
    let mut g = SlidingGaps::zeros(layout.n());
    g.g_n = j.normal.dot(&v);
    g.g_t = j.tangential * v;
    g.grad_n = j.normal;
    g.grad_t = j.tangential;
    let (e_n, e_t) = (c.law.restitution, c.law.tangential_restitution);
    if e_n != 0.0 || e_t != 0.0 {
        let mut jn = ContactJacobian::zeros();
        c.geometry.jacobian(prev, prev, &mut jn);
        let vn = layout.velocity(prev);
        g.g_n += e_n * jn.normal.dot(&vn);
        g.g_t += e_t * (jn.tangential * vn);
    }
    let roll = law::RollingRates {
        omega_t: j.rolling * v,
        grad_t: j.rolling,
    };
    let spin = law::SpinningRate {
        omega_n: j.spinning.dot(&v),
        grad_n: j.spinning,
    };
    (g, roll, spin)
}

/// Normal approach rate `ġ_N = G_N(q) v` \[m/s\] of a contact at the node states `nodes`
/// (configuration and velocity both from `nodes`; negative when approaching): the
/// admissibility test `ġ_N(V⁻⁻) < −tol_v` of a multiple-impact sequence (`nsga.md` §9).
pub fn approach_velocity(
    c: &ContactRef<'_>,
    nodes: &[NodeState],
    prev: &[NodeState],
    layout: &Layout,
) -> f64 {
    let mut j = ContactJacobian::zeros();
    c.geometry.jacobian(nodes, prev, &mut j);
    j.normal.dot(&layout.velocity(nodes))
}

/// Generalized impulse `p = G_Nᵀ κΛ_N + G_Tᵀ κΛ_T (+ W_Nᵀ κ_r χ_N + W_Tᵀ κ_r χ_T)` over the
/// contact's node unknowns (first `layout.n()` entries of the result) of the velocity-level
/// multipliers `mult` (`[Λ_N, Λ_T, χ_N, χ_T]`, scaled by the stage's `κ = k`) at the
/// configuration of `nodes` (step start `prev`, [`UnilateralContact::jacobian`]): the physical reaction whose negative the contact's velocity rows
/// add to the node residual at convergence (law module docs). It carries the accumulated
/// impulses of earlier impact problems of a sequence (`P` of `nsga.md` §9, B.28).
pub fn generalized_impulse(
    c: &ContactRef<'_>,
    k: f64,
    nodes: &[NodeState],
    prev: &[NodeState],
    mult: &[f64],
) -> NodeVector {
    let mut j = ContactJacobian::zeros();
    c.geometry.jacobian(nodes, prev, &mut j);
    let m = law::Multipliers::from_slice(mult);
    let mut p = j.normal * (k * m.lambda_n) + j.tangential.transpose() * (k * m.lambda_t);
    if let Some(r) = c.geometry.couple_radius() {
        let kr = crate::stage::couple_scaling(law::Scaling::new(k, k), r).k;
        p += j.spinning * (kr * m.chi_n) + j.rolling.transpose() * (kr * m.chi_t);
    }
    p
}

/// The contact-table row of the contact `c` with handle `id` and nodes `nodes` at the converged
/// state `s` ([`crate::output::ContactRow`]); `pre_impact_rate` is the normal rate before the
/// contact's impact in the step (NaN for the initial state).
pub fn contact_row(
    c: &ContactRef<'_>,
    id: crate::ElementId,
    nodes: &[NodeId],
    s: &crate::OutputState<'_>,
    pre_impact_rate: f64,
) -> crate::output::ContactRow {
    let f = c.geometry.frame(s.nodes);
    let mid = 0.5 * (f.point_a + f.point_b);
    let body = |i: usize| nodes.get(i).map_or(-1, |n| n.index() as i64);
    let scaled = |m: &[f64], k: f64| {
        let mut out = [0.0; 3];
        for (o, v) in out.iter_mut().zip(m) {
            *o = k * v;
        }
        out
    };
    crate::output::ContactRow {
        contact: id.to_bits(),
        body_a: body(0),
        body_b: body(1),
        point: mid.into(),
        normal: f.normal.into(),
        gap: f.gap,
        position_impulse: scaled(s.mult_position, s.k[1]),
        impulse: scaled(s.mult_velocity, s.k[2]),
        normal_velocity: [
            pre_impact_rate,
            approach_velocity(c, s.nodes, s.nodes, &Layout::new(s.kinds)),
        ],
        restitution: c.law.restitution,
        radius: c
            .geometry
            .surface_curvatures()
            .and_then(|[a, b]| crate::contact_force::effective_radius(a, b).ok())
            .unwrap_or(f64::NAN),
        race: c
            .law
            .force_model
            .and_then(|m| m.race)
            .map_or([f64::NAN; 3], |r| {
                let g = r.contact;
                [g.ball_radius, g.race_radius, g.groove_radius]
            }),
        force_model: c.law.force_model,
        status: c.history.status.map(|st| st.code() as u8),
    }
}

#[cfg(test)]
mod warm_start_tests {
    use super::WarmStart;

    /// The recalled multipliers carry the same physical `κλ` at another scale, scaled by the
    /// step ratio to the given power; nothing stored recalls zeros.
    #[test]
    fn recall_keeps_the_physical_multipliers() {
        let mut out = [7.0; 3];
        WarmStart::default().recall(2.0, 1e-3, 1, &mut out);
        assert_eq!(out, [0.0; 3]);
        let mut w = WarmStart::default();
        w.store(&[1.0, -2.0, 0.5], 4.0, 1e-3);
        // Same κ and h: the stored values.
        w.recall(4.0, 1e-3, 1, &mut out);
        assert_eq!(out, [1.0, -2.0, 0.5]);
        // κ halved: λ doubled (κλ kept); h halved: an impulse of a persistent force halves
        // (power 1), a position-level one (impulse × time) quarters (power 2).
        w.recall(2.0, 5e-4, 1, &mut out);
        assert_eq!(out, [1.0, -2.0, 0.5]);
        w.recall(2.0, 5e-4, 2, &mut out);
        assert_eq!(out, [0.5, -1.0, 0.25]);
        // A longer slice than stored: the rest is zero.
        let mut long = [9.0; 6];
        w.recall(4.0, 1e-3, 1, &mut long);
        assert_eq!(long, [1.0, -2.0, 0.5, 0.0, 0.0, 0.0]);
    }
}

#[cfg(test)]
mod history_tests {
    use super::{ContactHistory, LOAD_MEMORY};

    /// The loads of the last 32 stages; none for a new contact.
    #[test]
    fn loads_are_remembered_for_32_stages() {
        let mut h = ContactHistory::default();
        assert!(!h.loaded());
        assert_eq!(h.loads_within(LOAD_MEMORY), 0);
        h.record_load(true);
        assert!(h.loaded());
        h.record_load(false);
        h.record_load(false);
        assert!(!h.loaded());
        assert_eq!(h.loads_within(2), 0);
        assert_eq!(h.loads_within(3), 1);
        h.record_load(true);
        assert_eq!([0, 1, 3, 4].map(|k| h.loads_within(k)), [0, 1, 1, 2]);
        // 29 stages later the loads are 29 and 32 stages old: the older one has left the
        // 32 bits (were it kept, `loads_within(40)` would be 2).
        for _ in 0..29 {
            h.record_load(false);
        }
        assert_eq!([29, 30, 32, 40].map(|k| h.loads_within(k)), [0, 1, 1, 1]);
    }

    /// Persistent: loaded in the last stage, or twice within the memory; never with 0.
    #[test]
    fn persistent_means_loaded_last_or_twice_within_the_memory() {
        let mut h = ContactHistory::default();
        h.record_load(true);
        assert_eq!(
            [0, 1, 2, 3, 32].map(|k| h.persistent(k)),
            [false, true, true, true, true]
        );
        // One load, two stages ago: a single impact, not persistent for any memory.
        h.record_load(false);
        h.record_load(false);
        assert_eq!([0, 1, 2, 3, 32].map(|k| h.persistent(k)), [false; 5]);
        // A second load, three stages after the first (which is now 4 stages old).
        h.record_load(true);
        h.record_load(false);
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 32].map(|k| h.persistent(k)),
            [false, false, false, false, false, true, true]
        );
    }
}
