//! Sliding friction: normal contact and Coulomb friction on the (incremental) tangential gap.

use super::*;
use nalgebra::Matrix2;

/// Sliding contact (Alart–Curnier, spec §8.3 with the status logic of §8.6 item 1–2): adds the
/// force vector `F` over `[x; λ_N; λ_T]` and its exact tangent `K = ∂F/∂[x; λ_N; λ_T]` into
/// `out` and returns the status.
///
/// With `ζ_N = κλ_N − π ḡ_N`, `ζ_T = κλ_T − π ḡ_T`, `τ = ζ_T/‖ζ_T‖`,
/// `P_τ = (I₂ − ττ^T)/‖ζ_T‖`:
///
/// * **Gap** (`ζ_N ≤ 0`): `F = [0; −κ²/π λ_N; −κ²/π λ_T]`, `K = diag(0, −κ²/π, −κ²/π I₂)`.
/// * **Stick** (`ζ_N > 0`, `‖ζ_T‖ ≤ μζ_N`): `F = [−G_N^Tζ_N − G_T^Tζ_T; −κḡ_N; −κḡ_T]`,
///   `K_xx = π(G_N^TG_N + G_T^TG_T) − ζ_N H_N − Σ_α ζ_Tα H_Tα`, `K_xλN = −κG_N^T`,
///   `K_xλT = −κG_T^T`, `K_λN x = −κG_N`, `K_λT x = −κG_T`.
/// * **Slip** (`ζ_N > 0`, `‖ζ_T‖ > μζ_N`):
///   `F = [−G_N^Tζ_N − μζ_N G_T^Tτ; −κḡ_N; κ/π(−κλ_T + μζ_Nτ)]`,
///   `K_xx = πG_N^TG_N + μπG_T^TτG_N + μπζ_N G_T^TP_τG_T − ζ_NH_N − μζ_N Σ_α τ_αH_Tα`,
///   `K_xλN = −κG_N^T − μκG_T^Tτ`, `K_xλT = −μκζ_N G_T^TP_τ`, `K_λN x = −κG_N`,
///   `K_λT x = −μκτG_N − μκζ_N P_τG_T`, `K_λTλN = μκ²/π τ`, `K_λTλT = κ²/π(−I₂ + μζ_N P_τ)`.
///
/// `μ ≥ 0` is the sliding friction coefficient; `μ = 0` (or any value not `> 0`) skips the
/// friction branches entirely: the tangential rows are the gap rows `−κ²/π λ_T` and a closed
/// contact reports [`Status::Slip`] (§8.6 item 3). `curvature` (`H_N`, `H_Tα`) is for the
/// position level only; pass `None` at velocity level (or when the element neglects it, as the
/// thesis does for the sphere–plane, contact-elements.md §4.3). The slip tangent is
/// non-symmetric (spec §8.3). Reads `m.lambda_n`, `m.lambda_t`; writes rows/columns `l.x ..
/// l.x+n`, `l.lambda_n`, `l.lambda_t .. l.lambda_t+2`.
///
/// # Panics
/// If `gaps.n >` [`MAX_NODE_UNKNOWNS`] or an index of `l` is outside the sink.
pub fn sliding<S: Sink + ?Sized>(
    sc: Scaling,
    mu: f64,
    gaps: &SlidingGaps,
    curvature: Option<&Curvature>,
    m: &Multipliers,
    l: &Layout,
    out: &mut S,
) -> Status {
    let n = gaps.n;
    check_n(n);
    let (k, p) = (sc.k, sc.p);
    let zeta_n = gaps.zeta_n(sc, m.lambda_n);
    if zeta_n <= 0.0 {
        return sliding_forced_gap(sc, m, l, out);
    }
    let gn = &gaps.grad_n;
    let gt = &gaps.grad_t;

    // Normal part, common to stick and slip. `t`: the sink keeps tangents (else only `F`).
    let t = out.tangents();
    let mut fx: NodeVector = -zeta_n * gn;
    let mut kxx: NodeMatrix = if t {
        p * gn * gn.transpose()
    } else {
        NodeMatrix::zeros()
    };
    if let Some(c) = curvature.filter(|_| t) {
        kxx -= zeta_n * c.h_n;
    }
    out.add_residual(l.lambda_n, -k * gaps.g_n);
    if t {
        let kgn: NodeVector = -k * gn;
        add_kx_col(out, l, n, l.lambda_n, &kgn);
        add_k_row_x(out, l, n, l.lambda_n, &kgn);
    }

    let status = if !resists(mu) {
        // Frictionless (§8.6 item 3): never evaluate the friction branches.
        gap_rows2(out, sc, l.lambda_t, &m.lambda_t);
        Status::Slip
    } else {
        let zeta_t = gaps.zeta_t(sc, m.lambda_t);
        let norm = zeta_t.norm();
        let radius = mu * zeta_n;
        if norm <= radius {
            // Stick.
            fx -= gt.transpose() * zeta_t;
            add_f2(out, l.lambda_t, &(-k * gaps.g_t));
            if t {
                kxx += p * gt.transpose() * gt;
                if let Some(c) = curvature {
                    kxx -= zeta_t[0] * c.h_t[0] + zeta_t[1] * c.h_t[1];
                }
                let kgt: TangentialGradient = -k * gt;
                add_kx_cols2(out, l, n, l.lambda_t, &kgt.transpose());
                add_k_rows2_x(out, l, n, l.lambda_t, &kgt);
            }
            Status::Stick
        } else {
            // Slip: ‖ζ_T‖ > μζ_N > 0, so τ and P_τ are well defined.
            let (tau, p_tau) = direction(&zeta_t, norm);
            let gt_tau: NodeVector = gt.transpose() * tau;
            fx -= radius * gt_tau;
            add_f2(
                out,
                l.lambda_t,
                &((k / p) * (-k * m.lambda_t + radius * tau)),
            );
            if t {
                let gt_p: NodeColumns2 = gt.transpose() * p_tau;
                kxx += (mu * p) * gt_tau * gn.transpose() + (mu * p * zeta_n) * gt_p * gt;
                if let Some(c) = curvature {
                    kxx -= radius * (tau[0] * c.h_t[0] + tau[1] * c.h_t[1]);
                }
                add_kx_col(out, l, n, l.lambda_n, &(-(mu * k) * gt_tau));
                add_kx_cols2(out, l, n, l.lambda_t, &(-(mu * k * zeta_n) * gt_p));
                let ktx: TangentialGradient =
                    -(mu * k) * tau * gn.transpose() - (mu * k * zeta_n) * p_tau * gt;
                add_k_rows2_x(out, l, n, l.lambda_t, &ktx);
                let c = sc.gap_factor();
                add_k2_col(out, l.lambda_t, l.lambda_n, &((mu * c) * tau));
                add_k22(
                    out,
                    l.lambda_t,
                    l.lambda_t,
                    &(c * (radius * p_tau - Matrix2::identity())),
                );
            }
            Status::Slip
        }
    };
    add_fx(out, l, n, &fx);
    if t {
        add_kxx(out, l, n, &kxx);
    }
    status
}

/// Sliding "forced gap" (spec §8.3 gap rows, §8.6 item 2): all sliding multipliers driven to
/// zero, `F[λ_N] = −κ²/π λ_N`, `F[λ_T] = −κ²/π λ_T`, `K = −κ²/π I₃` on those rows, nothing on the
/// node rows. Used at velocity level when the contact is not in the position active set
/// `𝒜_{n+1}`, and by [`sliding`] when `ζ_N ≤ 0`. Always returns [`Status::Gap`].
pub fn sliding_forced_gap<S: Sink + ?Sized>(
    sc: Scaling,
    m: &Multipliers,
    l: &Layout,
    out: &mut S,
) -> Status {
    gap_row(out, sc, l.lambda_n, m.lambda_n);
    gap_rows2(out, sc, l.lambda_t, &m.lambda_t);
    Status::Gap
}
