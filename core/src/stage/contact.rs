//! Stage rows of a unilateral frictional contact ([`crate::contact`]): the Alart–Curnier laws
//! of [`crate::contact::law`] on the contact's kinematics record (`nsga.md` §§5–8, the contact
//! row of §11.2).
//!
//! | stage | multipliers | law input |
//! |---|---|---|
//! | position (§5) | `ν_N, ν_T` | `g_N`, incremental `g_T(q; q_n)`, `G = ∂g/∂q`, `H_N`, `H_Tα` |
//! | velocity (§6), closed at position | `Λ_N, Λ_T (, χ_N, χ_T)` | `ĝ̇ = G(q) v + e G(q_n) v_n`, `ω_T = W_T v`, `ω_N = W_N v` |
//! | velocity (§6), open at position, or not admissible in the current impact problem (§9) | same | forced gap rows `−κ²/π λ` (all multipliers → 0) |
//!
//! Scales: `κ = cx.k`, `π = cx.p` for sliding; the couples use `κ_r = κ r`, `π_r = ⅖ π r²`
//! ([`UnilateralContact::couple_radius`](crate::contact::UnilateralContact::couple_radius)), so
//! that `η = κ_r χ − π_r ω` is a couple impulse and the penalty matches the rotational inertia
//! of a sphere (a much larger penalty makes the semi-smooth Newton cycle across the narrow
//! stick interval); the converged solution does not depend on the scaling (§10). Physical couple
//! impulse: `κ_r χ`. Configuration columns (position stage) are multiplied by the rotation
//! tangent `T` and `∂q/∂u`, velocity columns by `∂v/∂u`. Contacts take no part in other stages.

use crate::constraint::{Layout, MAX_DOFS};
use crate::contact::law::{self, Curvature, Multipliers, Scaling, SlidingGaps, Status};
use crate::contact::{velocity_gaps, ContactHistory, ContactRef};
use crate::element::{ElementError, Level, LevelMemo, LocalState, LocalSystem, StepCx};
use crate::node::NodeKind;
use nalgebra::SMatrix;

/// Largest local system of a contact: 12 node unknowns and 6 multipliers.
const MAX_LOCAL: usize = 18;

/// Fixed-size local system the laws add into before the column factors are applied.
#[derive(Clone, Debug)]
struct Block {
    r: [f64; MAX_LOCAL],
    k: SMatrix<f64, MAX_LOCAL, MAX_LOCAL>,
}

impl Block {
    /// Zero the leading `size` rows of `r` and the leading `size × size` block of `k` (the
    /// only entries the laws and the scatter below touch).
    fn reset(&mut self, size: usize) {
        self.r[..size].fill(0.0);
        for j in 0..size {
            self.k.column_mut(j).as_mut_slice()[..size].fill(0.0);
        }
    }

    /// Zero the leading `size` rows of `r` only (a residual-only evaluation: whatever the laws
    /// add to `k` is not read).
    fn reset_residual(&mut self, size: usize) {
        self.r[..size].fill(0.0);
    }
}

/// Reused storage of [`add_contact_terms`] (kept in the element scratch, ~6 kB: zeroing it
/// whole per evaluation cost more than the contact law).
#[derive(Clone, Debug)]
pub(super) struct ContactScratch {
    block: Block,
    curv: Curvature,
}

impl Default for ContactScratch {
    fn default() -> Self {
        Self {
            block: Block {
                r: [0.0; MAX_LOCAL],
                k: SMatrix::zeros(),
            },
            curv: Curvature::zeros(),
        }
    }
}

impl law::Sink for Block {
    #[inline]
    fn add_residual(&mut self, i: usize, value: f64) {
        self.r[i] += value;
    }
    #[inline]
    fn add_tangent(&mut self, i: usize, j: usize, value: f64) {
        self.k[(i, j)] += value;
    }
}

/// Scaling of the rolling/spinning couples of a contact of couple radius `r` (module docs).
pub(crate) fn couple_scaling(sc: Scaling, r: f64) -> Scaling {
    Scaling::new(sc.k * r, 0.4 * sc.p * r * r)
}

/// Add the contact rows of `c` at the stage `cx` into `out` (module table), using the reused
/// storage `scratch`. Returns what [`contact_level_converged`] needs if this evaluation is at
/// the converged state (the statuses the laws decided; [`memo_values`]), `None` where it
/// cannot tell (a closed contact left out of the current impact problem).
pub(super) fn add_contact_terms(
    c: &ContactRef<'_>,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut LocalSystem<'_>,
    scratch: &mut ContactScratch,
    hessian: bool,
) -> Result<Option<LevelMemo>, ElementError> {
    let layout = Layout::new(s.kinds);
    let n = layout.n();
    let nm = c.n_mult(cx.level);
    if nm == 0 {
        return Ok(None);
    }
    let sc = Scaling::from_cx(cx);
    let m = Multipliers::from_slice(&s.mult[..nm]);
    let l = law::Layout::contiguous(n);
    let ContactScratch { block: b, curv } = scratch;
    if hessian {
        b.reset(n + nm);
    } else {
        b.reset_residual(n + nm);
    }
    let couples = c.geometry.couple_radius();
    let mut memo = None;
    if cx.level == Level::Position {
        // Curvatures enter the Hessian only.
        let curvatures = hessian && cx.dq_dv != 0.0;
        if curvatures {
            for h in std::iter::once(&mut curv.h_n).chain(curv.h_t.iter_mut()) {
                for j in 0..n {
                    h.column_mut(j).as_mut_slice()[..n].fill(0.0);
                }
            }
        }
        let gaps = position_gaps(c, s, curvatures.then_some(&mut *curv))?;
        let curv = curvatures.then_some(&*curv);
        let mu = c.friction(s.prev, &layout);
        let st = if hessian {
            law::sliding(sc, mu, &gaps, curv, &m, &l, b)
        } else {
            law::sliding(sc, mu, &gaps, curv, &m, &l, &mut law::ResidualOnly(b))
        };
        memo = Some(memo_values(cx.level, [st, Status::Gap, Status::Gap], false));
        if hessian {
            // Configuration columns: ∂q/∂u · T on rotational unknowns.
            apply_tangent(&mut b.k, &layout, s, n + nm);
            scale_node_columns(&mut b.k, n, n + nm, cx.dq_dv);
        }
    } else if !c.history.closed || !s.admissible {
        if !c.history.closed {
            memo = Some(memo_values(cx.level, [Status::Gap; 3], false));
        }
        law::sliding_forced_gap(sc, &m, &l, b);
        if let Some(r) = couples {
            let sr = couple_scaling(sc, r);
            law::rolling_forced_gap(sr, &m, &l, b);
            law::spinning_forced_gap(sr, &m, &l, b);
        }
    } else {
        let (gaps, roll, spin) = velocity_gaps(c, s.nodes, s.prev, &layout);
        check_finite(c, &gaps)?;
        let mu = c.friction(s.prev, &layout);
        let st = if hessian {
            law::sliding(sc, mu, &gaps, None, &m, &l, b)
        } else {
            law::sliding(sc, mu, &gaps, None, &m, &l, &mut law::ResidualOnly(b))
        };
        let mut found = [st, Status::Gap, Status::Gap];
        if let Some(r) = couples {
            let sr = couple_scaling(sc, r);
            let (rho, gamma) = (c.law.rolling_resistance, c.law.spinning_resistance);
            if hessian {
                found[1] = law::rolling(sr, sc, rho, &gaps, &roll, &m, &l, b);
                found[2] = law::spinning(sr, sc, gamma, &gaps, &spin, &m, &l, b);
            } else {
                let r = &mut law::ResidualOnly(b);
                found[1] = law::rolling(sr, sc, rho, &gaps, &roll, &m, &l, r);
                found[2] = law::spinning(sr, sc, gamma, &gaps, &spin, &m, &l, r);
            }
        }
        memo = Some(memo_values(cx.level, found, couples.is_some()));
        if hessian {
            scale_node_columns(&mut b.k, n, n + nm, cx.dv_dv);
        }
    }
    let size = n + nm;
    if hessian {
        for j in 0..size {
            let mut col = out.hessian.column_mut(j);
            for i in 0..size {
                col[i] += b.k[(i, j)];
            }
        }
    }
    for i in 0..size {
        out.residual[i] += b.r[i];
    }
    Ok(memo)
}

/// Round-off allowance of an open contact's gap for [`inert_contact`]: `1e3 ε` times the size
/// of the coordinates (at least 1 m), so that the geometry's frame gap and the law's `g_N`
/// agree in sign beyond it.
const GAP_ROUND_OFF: f64 = 1e3 * f64::EPSILON;

/// Whether the contact's rows at the stage `cx` vanish exactly at `s` ([`super::inert_residual`]):
/// `Some(memo)` with the memo [`add_contact_terms`] would record (`None` inside: none), or
/// `None` when the laws must be evaluated. Zero multipliers and either the position stage with
/// the contact open (`ζ_N = −π g_N < 0`) or the velocity stage's forced-gap branch.
pub(super) fn inert_contact(
    c: &ContactRef<'_>,
    cx: &StepCx,
    s: &LocalState<'_>,
) -> Option<Option<LevelMemo>> {
    match inert_contact_by_status(c, cx, s.mult, s.admissible) {
        ByStatus::Inert(memo) => Some(memo),
        ByStatus::Active => None,
        ByStatus::NeedsState => {
            // The position stage: open by more than the round-off of `g_N`.
            let size = s.nodes.iter().fold(1.0_f64, |m, n| m.max(n.x.amax()));
            let gap = c.geometry.frame(s.nodes).gap;
            (gap > GAP_ROUND_OFF * size)
                .then(|| Some(memo_values(Level::Position, [Status::Gap; 3], false)))
        }
    }
}

/// What [`inert_contact_by_status`] decides without the nodes' states.
pub(super) enum ByStatus {
    /// Inert, with the memo the evaluation would record (`None`: the default one).
    Inert(Option<LevelMemo>),
    /// Not inert: evaluate it.
    Active,
    /// Decided only by the gap (the position stage).
    NeedsState,
}

/// The part of [`inert_contact`] that needs only the contact's multipliers `mult`, statuses and
/// admissibility: nothing to evaluate without multipliers; a multiplier: active; all zero —
/// at the position stage the gap decides, at the velocity stage a contact open at position
/// level or not admissible is inert (forced-gap rows).
pub(super) fn inert_contact_by_status(
    c: &ContactRef<'_>,
    cx: &StepCx,
    mult: &[f64],
    admissible: bool,
) -> ByStatus {
    let nm = c.n_mult(cx.level);
    if nm == 0 {
        return ByStatus::Inert(None);
    }
    if mult.len() < nm || mult[..nm].iter().any(|&m| m != 0.0) {
        return ByStatus::Active;
    }
    match cx.level {
        Level::Position => ByStatus::NeedsState,
        _ if !c.history.closed => {
            ByStatus::Inert(Some(memo_values(cx.level, [Status::Gap; 3], false)))
        }
        _ if !admissible => ByStatus::Inert(None),
        _ => ByStatus::Active,
    }
}

/// The memo of a contact evaluation at `level` from the statuses its laws returned (sliding,
/// then rolling and spinning when `couples`): `[closed or loaded, sliding, rolling, spinning]`
/// as [`Status::code`]s, NaN for a status the evaluation did not decide. The closed (position)
/// and loaded (velocity) flags are `ξ_N > 0` and `σ_N > 0`, i.e. a sliding status other than
/// [`Status::Gap`] (the laws' forced-gap branch is taken exactly when they are `≤ 0`).
fn memo_values(level: Level, found: [Status; 3], couples: bool) -> LevelMemo {
    let closed = found[0].is_closed();
    let code = |st: Status, decided: bool| if decided { st.code() } else { f64::NAN };
    LevelMemo {
        level: Some(level),
        values: [
            if closed { 1.0 } else { 0.0 },
            code(found[0], closed),
            code(found[1], closed && couples),
            code(found[2], closed && couples),
        ],
    }
}

/// The status of a [`Status::code`] (NaN: none).
fn status_of(code: f64) -> Option<Status> {
    match code {
        c if c == Status::Gap.code() => Some(Status::Gap),
        c if c == Status::Stick.code() => Some(Status::Stick),
        c if c == Status::Slip.code() => Some(Status::Slip),
        _ => None,
    }
}

/// Position-level gaps (with curvatures into `curv`, zeroed by the caller, when given),
/// checked finite.
fn position_gaps(
    c: &ContactRef<'_>,
    s: &LocalState<'_>,
    curv: Option<&mut Curvature>,
) -> Result<SlidingGaps, ElementError> {
    let n = s.kinds.iter().map(|k| k.ndof()).sum();
    let mut gaps = SlidingGaps::zeros(n);
    c.geometry.position_gaps(s.nodes, s.prev, &mut gaps, curv);
    check_finite(c, &gaps)?;
    Ok(gaps)
}

fn check_finite(c: &ContactRef<'_>, g: &SlidingGaps) -> Result<(), ElementError> {
    // Only the first `n` entries are set (the rest stay zero); the gradient `G_T` is stored
    // column-major, 2 rows per node unknown.
    let n = g.n;
    let finite = g.g_n.is_finite()
        && g.g_t.iter().all(|x| x.is_finite())
        && g.grad_n.as_slice()[..n].iter().all(|x| x.is_finite())
        && g.grad_t.as_slice()[..2 * n].iter().all(|x| x.is_finite());
    if finite {
        Ok(())
    } else {
        Err(ElementError::InvalidState(format!(
            "{}: non-finite contact gap or Jacobian",
            c.geometry.type_name()
        )))
    }
}

/// Post-multiply the rotational node columns of the leading `size × size` block by `T`.
fn apply_tangent(
    k: &mut SMatrix<f64, MAX_LOCAL, MAX_LOCAL>,
    layout: &Layout,
    s: &LocalState<'_>,
    size: usize,
) {
    for (i, kind) in layout.kinds().iter().enumerate() {
        if *kind != NodeKind::Frame {
            continue;
        }
        let t = &s.rot_tangent[i];
        let o = layout.offset(i) + 3;
        for r in 0..size {
            let row = [k[(r, o)], k[(r, o + 1)], k[(r, o + 2)]];
            for j in 0..3 {
                k[(r, o + j)] = row[0] * t[(0, j)] + row[1] * t[(1, j)] + row[2] * t[(2, j)];
            }
        }
    }
}

/// Multiply the node columns `0..n` of the leading `size` rows by `f`.
fn scale_node_columns(k: &mut SMatrix<f64, MAX_LOCAL, MAX_LOCAL>, n: usize, size: usize, f: f64) {
    if f == 1.0 {
        return;
    }
    for j in 0..n {
        for i in 0..size {
            k[(i, j)] *= f;
        }
    }
}

/// Slot of [`ContactHistory::last`] for a correction level.
fn warm_slot(level: Level) -> usize {
    usize::from(level != Level::Position)
}

/// The contact's starting multipliers for a solve of the correction stage `cx` (zeros before
/// its first converged solve, and for a contact that was open): the last converged ones, same
/// physical `κλ`, the position level's scaled by `(h/h_n)²` and the velocity level's by
/// `h/h_n` (a persistent force's impulses). See [`crate::contact::WarmStart`].
///
/// An open contact's exact multipliers are zero; its converged iterate may keep a residue
/// within the tolerance (e.g. 1e-22), which would otherwise be carried from step to step and
/// keep the contact's rows from vanishing exactly (`inert_contact`).
pub fn contact_warm_start(history: &ContactHistory, cx: &StepCx, mult: &mut [f64]) {
    match cx.level {
        Level::Position if history.closed => history.last[0].recall(cx.k, cx.h, 2, mult),
        Level::Velocity if history.closed => history.last[1].recall(cx.k, cx.h, 1, mult),
        _ => mult.fill(0.0),
    }
}

/// Update the contact's history after the stage `cx` converged (`nsga.md` §8.6): the position
/// stage fixes the position active set `𝒜` (`ξ_N > 0`) and the position sliding status; the
/// velocity stage, for a contact closed at position level, the velocity sliding, rolling and
/// spinning statuses.
pub fn contact_level_converged(
    c: &ContactRef<'_>,
    history: &mut ContactHistory,
    cx: &StepCx,
    s: &LocalState<'_>,
) {
    let sc = Scaling::from_cx(cx);
    let nm = c.n_mult(cx.level);
    if nm == 0 || s.mult.len() < nm {
        return;
    }
    match cx.level {
        Level::Position | Level::Velocity => {
            history.last[warm_slot(cx.level)].store(&s.mult[..nm], cx.k, cx.h)
        }
        _ => {}
    }
    // The statuses the last evaluation at the converged state found (the same tests as below).
    if let Some(memo) = s.memo.filter(|m| m.level == Some(cx.level)) {
        let [flag, sliding, rolling, spinning] = memo.values;
        let closed = flag > 0.0;
        match cx.level {
            Level::Position => {
                history.closed = closed;
                history.status = [Status::Gap; 4];
            }
            Level::Velocity => {
                history.record_load(history.closed && closed && s.mult[0] > cx.load_tolerance)
            }
            _ => return,
        }
        let slot = usize::from(cx.level == Level::Velocity);
        for (k, code) in [(slot, sliding), (2, rolling), (3, spinning)] {
            if let Some(st) = status_of(code) {
                history.status[k] = st;
            }
        }
        return;
    }
    let m = Multipliers::from_slice(&s.mult[..nm]);
    let mu = c.friction(s.prev, &Layout::new(s.kinds));
    match cx.level {
        Level::Position => {
            let n = s.kinds.iter().map(|k| k.ndof()).sum();
            let mut gaps = SlidingGaps::zeros(n);
            c.geometry.position_gaps(s.nodes, s.prev, &mut gaps, None);
            let xi_n = gaps.zeta_n(sc, m.lambda_n);
            history.closed = xi_n > 0.0;
            history.status = [Status::Gap; 4];
            if history.closed {
                let xi_t = gaps.zeta_t(sc, m.lambda_t);
                history.status[0] = if mu > 0.0 && xi_t.norm() <= mu * xi_n {
                    Status::Stick
                } else {
                    Status::Slip
                };
            }
        }
        Level::Velocity if !history.closed => history.record_load(false),
        Level::Velocity => {
            let layout = Layout::new(s.kinds);
            let (gaps, roll, spin) = velocity_gaps(c, s.nodes, s.prev, &layout);
            let sigma_n = gaps.zeta_n(sc, m.lambda_n);
            history.record_load(sigma_n > 0.0 && m.lambda_n > cx.load_tolerance);
            if sigma_n > 0.0 {
                let st = |radius: f64, eta: f64| {
                    if radius > 0.0 && eta < radius * sigma_n {
                        Status::Stick
                    } else {
                        Status::Slip
                    }
                };
                let sigma_t = gaps.zeta_t(sc, m.lambda_t);
                history.status[1] = if mu > 0.0 && sigma_t.norm() <= mu * sigma_n {
                    Status::Stick
                } else {
                    Status::Slip
                };
                if let Some(r) = c.geometry.couple_radius() {
                    let sr = couple_scaling(sc, r);
                    let eta_t = sr.k * m.chi_t - sr.p * roll.omega_t;
                    let eta_n = sr.k * m.chi_n - sr.p * spin.omega_n;
                    history.status[2] = st(c.law.rolling_resistance, eta_t.norm());
                    history.status[3] = st(c.law.spinning_resistance, eta_n.abs());
                }
            }
        }
        _ => {}
    }
}

/// A contact at a correction stage, linearized at the current iterate: what a contact-space
/// solver needs ([`linearized_contact`]).
#[derive(Clone, Debug)]
pub struct LinearizedContact {
    /// Node unknowns `n ≤ 12` of the element (its first `n` local unknowns).
    pub n: usize,
    /// Gaps `ḡ = (ḡ_N, ḡ_T1, ḡ_T2)` of the sliding law (module table): position level `g_N`
    /// and the incremental `g_T` \[m\]; velocity level `ĝ̇_N`, `ĝ̇_T` \[m/s\] (Newton law).
    pub gaps: nalgebra::Vector3<f64>,
    /// `∂ḡ/∂u` (first `n` columns) with respect to the stage's node unknowns `u`, with the
    /// column factors of the stage Hessian applied (rotation tangent `T` and `∂q/∂u` at
    /// position level, `∂v/∂u` at velocity level).
    pub jacobian: SMatrix<f64, 3, MAX_DOFS>,
    /// Friction coefficient `μ` of the step ([`ContactRef::friction`]).
    pub friction: f64,
    /// Rolling or spinning resistance takes part (velocity level, a contact with couples and
    /// `ρ > 0` or `γ_s > 0`): the three sliding rows do not describe the contact alone.
    pub resisted_couples: bool,
}

/// Contact `c` at the stage `cx`, linearized at the state `s`: at the solution of the stage its
/// physical reaction `r = κλ` (sliding multipliers) and its gaps `ḡ` satisfy Signorini's
/// condition `0 ≤ r_N ⊥ ḡ_N ≥ 0` and Coulomb's law with the cone radius `μ r_N` (stick
/// `ḡ_T = 0`, or slip with `r_T = −μ r_N ḡ_T/‖ḡ_T‖`), which is what the Alart–Curnier contact
/// rows of this module state (`nsga.md` §8.3). `Ok(None)`: the contact takes no part (a
/// stage other than position or velocity; at velocity level, open at position level or not
/// admissible in the current impact problem: its multipliers are zero).
pub fn linearized_contact(
    c: &ContactRef<'_>,
    cx: &StepCx,
    s: &LocalState<'_>,
) -> Result<Option<LinearizedContact>, ElementError> {
    let layout = Layout::new(s.kinds);
    let n = layout.n();
    let (gaps, factor, resisted_couples) = match cx.level {
        Level::Position => (position_gaps(c, s, None)?, cx.dq_dv, false),
        Level::Velocity if c.history.closed && s.admissible => {
            let (gaps, _, _) = velocity_gaps(c, s.nodes, s.prev, &layout);
            check_finite(c, &gaps)?;
            (gaps, cx.dv_dv, c.resists_couples())
        }
        _ => return Ok(None),
    };
    let mut jacobian = SMatrix::<f64, 3, MAX_DOFS>::zeros();
    for j in 0..n {
        jacobian[(0, j)] = gaps.grad_n[j];
        jacobian[(1, j)] = gaps.grad_t[(0, j)];
        jacobian[(2, j)] = gaps.grad_t[(1, j)];
    }
    if cx.level == Level::Position {
        // Configuration columns: ∂q/∂u · T on rotational unknowns.
        layout.apply_tangent(&mut jacobian, s.rot_tangent);
    }
    jacobian *= factor;
    Ok(Some(LinearizedContact {
        n,
        gaps: nalgebra::Vector3::new(gaps.g_n, gaps.g_t[0], gaps.g_t[1]),
        jacobian,
        friction: c.friction(s.prev, &layout),
        resisted_couples,
    }))
}
