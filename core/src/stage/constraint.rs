//! Stage rows of a bilateral constraint `g(q, t) = 0` ([`BilateralConstraint`]): the
//! augmented-Lagrangian residual and its exact Hessian (`nsga.md` §§4–6, the bilateral-joint row
//! of §11.2), from the kinematics `g`, `g_q`, `g_t`, `H_j` alone.
//!
//! With the scaled multipliers `μ` of the stage (`λ̃`, `ν`, `Λ`), `k = cx.k`, `p = cx.p`,
//! `w = cx.force_weight` and the measured quantity `c` — the rate `ġ = g_q v + g_t` on a stage
//! whose unknown moves velocities (`∂v/∂u ≠ 0`: smooth, velocity) and the value `g(q, t)`
//! otherwise (position, static; `t = 0` in statics):
//!
//! | rows | residual |
//! |---|---|
//! | node | `−g_qᵀ(k μ − p c) − w (g_q(q) − g_q(q̃))ᵀ k_s λ̃` (second term on difference stages) |
//! | multiplier | `−k c` |
//!
//! The `k_s λ̃` term is the constraint's part of `−w (f − f(q̃, ṽ))` (§5, §6); Newton's
//! restitution coefficient is zero for bilateral constraints. Every row is active at every
//! stage. Hessian (with `ξ = k μ − p c`, `M = ξ + w k_s λ̃` on difference stages):
//!
//! | block | value |
//! |---|---|
//! | node × node | `∂v/∂u · p g_qᵀ g_q + ∂q/∂u · (p g_qᵀ ∂ġ/∂q − Σ_j M_j H_j) T` (rates), `∂q/∂u · (p g_qᵀ g_q − Σ_j M_j H_j) T` (values) |
//! | multiplier × node | `−k (∂v/∂u · g_q + ∂q/∂u · ∂ġ/∂q T)` (rates), `−k ∂q/∂u · g_q T` (values) |
//! | node × multiplier | `−k g_qᵀ` |
//!
//! with `∂ġ/∂q = ∂(g_q v)/∂q + ∂g_t/∂q` (row `j`: `vᵀ H_j`). Second derivatives are evaluated
//! only when `∂q/∂u ≠ 0`; `g_q(q̃)` is a first-order evaluation.

use crate::constraint::kinematics::{add_at_b, add_at_x, axpy};
use crate::constraint::{
    padded_rows, BilateralConstraint, KinCx, Kinematics, Layout, LocalMatrix, LocalVector,
    MAX_DOFS, MAX_ROWS,
};
use crate::element::{ElementError, Level, LocalState, LocalSystem, StepCx};

/// Add the constraint rows of `c` at the stage `cx` into `out` (module table); with
/// `hessian == false` the residual only (first-order kinematics: no `H_j`), with
/// `curvature == false` the Hessian without its `H_j` terms
/// ([`super::MatrixTerms::FirstOrderConstraints`]). `kin` and `kin_s` are reused storage for
/// the kinematics at the current and at the smooth state.
#[allow(clippy::too_many_arguments)]
pub(super) fn add_constraint_terms(
    c: &dyn BilateralConstraint,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut LocalSystem<'_>,
    hessian: bool,
    curvature: bool,
    kin: &mut Kinematics,
    kin_s: &mut Kinematics,
) -> Result<(), ElementError> {
    let layout = Layout::new(s.kinds);
    let (n, m) = (layout.n(), c.n_constraints());
    let t = if cx.level == Level::Static { 0.0 } else { cx.t };
    // Second derivatives enter only through configuration columns of the Hessian.
    let hessians = hessian && curvature && cx.dq_dv != 0.0;
    let rates = cx.dv_dv != 0.0;
    kin.reset(m, n, hessians);
    let kcx = KinCx::with_order(s.nodes, t, &layout, hessians);
    c.evaluate(&kcx, kin);
    check_finite(c, kin)?;
    let g_q = &kin.g_q;
    let (k, p) = (cx.k, cx.p);

    // Padded local blocks: node rows r_q; node × node block h_qq; multiplier × node block h_mq
    // (before the factor −k). The multiplier rows are −k c, the node × multiplier block −k g_qᵀ.
    let mut r_q = LocalVector::zeros();

    // c = ġ (rates) or g (values); ξ = k μ − p c.
    let v = if rates {
        layout.velocity(s.nodes)
    } else {
        LocalVector::zeros()
    };
    let meas = if rates { kin.rate(&v) } else { kin.g };
    let xi = padded_rows(&s.mult[..m], k) - meas * p;

    // −w (g_q(q) − g_q(q̃))ᵀ k_s λ̃ on difference stages; g_q(q̃) is first order. Zero, and
    // not evaluated, while the configuration is the smooth one (a position correction's start).
    // With it, r_q = −g_qᵀ (ξ + w k_s λ̃) + w g_q(q̃)ᵀ k_s λ̃ (one product with g_q).
    let mut weights = xi;
    let lam_s = if cx.force_difference {
        let lam = padded_rows(&s.mult_smooth[..m], cx.k_s);
        let moved = s
            .nodes
            .iter()
            .zip(s.smooth)
            .any(|(a, b)| a.x != b.x || a.r != b.r);
        if moved {
            // g_q(q̃)ᵀ k_s λ̃: the step's cached value, or evaluated here.
            let mut at_smooth = LocalVector::zeros();
            match s.base {
                Some(b) => at_smooth.as_mut_slice()[..n].copy_from_slice(&b.reaction[..n]),
                None => smooth_reaction_into(c, t, s, &lam, &mut at_smooth, kin_s),
            }
            axpy(
                &mut r_q.as_mut_slice()[..n],
                cx.force_weight,
                &at_smooth.as_slice()[..n],
            );
            weights += lam * cx.force_weight;
        }
        Some(lam)
    } else {
        None
    };
    add_at_x(&mut r_q, g_q, &weights, -1.0, n);
    let res = out.residual.as_mut_slice();
    if !hessian {
        axpy(&mut res[..n], 1.0, &r_q.as_slice()[..n]);
        axpy(&mut res[n..n + m], -k, &meas.as_slice()[..m]);
        return Ok(());
    }
    let mut h_qq = LocalMatrix::zeros();
    let mut h_mq;
    // M = ξ + w k_s λ̃ collects both ∂(g_qᵀ ·)/∂q terms.
    let mut mu = xi;
    if let Some(lam) = &lam_s {
        mu += lam * cx.force_weight;
    }

    if rates {
        h_mq = g_q * cx.dv_dv;
        if hessians {
            // Configuration columns: ∂/∂q at fixed v, times dq_dv T.
            let mut c_q = kin.d_gq_w(&v) + kin.g_t_q;
            add_at_b(&mut h_qq, g_q, &c_q, p, n);
            kin.add_d_gqt_mu(&mut h_qq, mu.as_slice(), -1.0);
            layout.apply_tangent(&mut h_qq, s.rot_tangent);
            scale(h_qq.as_mut_slice(), cx.dq_dv);
            layout.apply_tangent(&mut c_q, s.rot_tangent);
            h_mq += c_q * cx.dq_dv;
        }
        add_at_b(&mut h_qq, g_q, g_q, p * cx.dv_dv, n);
    } else {
        add_at_b(&mut h_qq, g_q, g_q, p, n);
        if hessians {
            kin.add_d_gqt_mu(&mut h_qq, mu.as_slice(), -1.0);
        }
        layout.apply_tangent(&mut h_qq, s.rot_tangent);
        scale(h_qq.as_mut_slice(), cx.dq_dv);
        h_mq = *g_q;
        layout.apply_tangent(&mut h_mq, s.rot_tangent);
        h_mq *= cx.dq_dv;
    }

    // Scatter column by column (the local output is column-major with unit row stride).
    axpy(&mut res[..n], 1.0, &r_q.as_slice()[..n]);
    axpy(&mut res[n..n + m], -k, &meas.as_slice()[..m]);
    let (h_qq, h_mq, g_qt) = (h_qq.as_slice(), h_mq.as_slice(), g_q.transpose());
    for b in 0..n {
        let mut col = out.hessian.column_mut(b);
        let col = col.as_mut_slice();
        axpy(&mut col[..n], 1.0, &h_qq[b * MAX_DOFS..b * MAX_DOFS + n]);
        axpy(
            &mut col[n..n + m],
            -k,
            &h_mq[b * MAX_ROWS..b * MAX_ROWS + m],
        );
    }
    let g_qt = g_qt.as_slice();
    for j in 0..m {
        let mut col = out.hessian.column_mut(n + j);
        let col = col.as_mut_slice();
        axpy(&mut col[..n], -k, &g_qt[j * MAX_DOFS..j * MAX_DOFS + n]);
    }
    Ok(())
}

/// `out = g_q(q̃)ᵀ lam` (padded) with `g_q(q̃)` evaluated to first order at the smooth state
/// `s.smooth` into `kin_s`.
fn smooth_reaction_into(
    c: &dyn BilateralConstraint,
    t: f64,
    s: &LocalState<'_>,
    lam: &crate::constraint::RowVector,
    out: &mut LocalVector,
    kin_s: &mut Kinematics,
) {
    let layout = Layout::new(s.kinds);
    kin_s.reset(c.n_constraints(), layout.n(), false);
    c.evaluate(&KinCx::with_order(s.smooth, t, &layout, false), kin_s);
    add_at_x(out, &kin_s.g_q, lam, 1.0, layout.n());
}

/// The constraint reaction `g_q(q̃)ᵀ k_s λ̃` of `c` at the smooth state of `s` (its smooth
/// multipliers, the stage's `k_s`) into `out` (the element's `n` node unknowns): the
/// [`crate::BaseTerms::reaction`] of the difference stages.
pub(super) fn smooth_reaction(
    c: &dyn BilateralConstraint,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut [f64],
    kin_s: &mut Kinematics,
) {
    let m = c.n_constraints();
    let t = if cx.level == Level::Static { 0.0 } else { cx.t };
    let lam = padded_rows(&s.mult_smooth[..m], cx.k_s);
    let mut r = LocalVector::zeros();
    smooth_reaction_into(c, t, s, &lam, &mut r, kin_s);
    let n = out.len();
    out.copy_from_slice(&r.as_slice()[..n]);
}

fn check_finite(c: &dyn BilateralConstraint, kin: &Kinematics) -> Result<(), ElementError> {
    // The padded storage: its entries beyond the `m × n` block are zero (finite).
    if super::all_finite(kin.g.as_slice()) && super::all_finite(kin.g_q.as_slice()) {
        Ok(())
    } else {
        Err(ElementError::InvalidState(format!(
            "{}: non-finite constraint value or Jacobian",
            c.type_name()
        )))
    }
}

/// `x *= a`.
#[inline]
fn scale(x: &mut [f64], a: f64) {
    for x in x {
        *x *= a;
    }
}
