//! Rolling resistance: the rolling couple on the rolling angular rates.

use super::*;
use nalgebra::Matrix2;

/// Rolling resistance (velocity level only, spec §8.4): adds `F` over `[v; χ_T]` and the exact
/// tangent over `[v; Λ_N; χ_T]` into `out` and returns the status.
///
/// `σ_N = κΛ_N − π ĝ̇_N` is the velocity-level sliding normal augmented multiplier, taken from
/// `normal` (the same [`SlidingGaps`] passed to [`sliding`]) and `m.lambda_n`; its gradient is
/// `∂σ_N/∂v = −πG_N`, `∂σ_N/∂Λ_N = κ`. With `η_T = κχ_T − π ω_T`, `τ_w = η_T/‖η_T‖`,
/// `P_w = (I₂ − τ_wτ_w^T)/‖η_T‖`, cone radius `ρσ_N` (`ρ` \[m\] rolling length):
///
/// * **Gap** (`σ_N ≤ 0`): `F[χ_T] = −κ²/π χ_T`, `K_χχ = −κ²/π I₂`.
/// * **Stick** (no rotation, `‖η_T‖ < ρσ_N`): `F = [−W_T^Tη_T; −κω_T]`, `K_vv = πW_T^TW_T`,
///   `K_vχ = −κW_T^T`, `K_χv = −κW_T`.
/// * **Slip** (rolling, `‖η_T‖ ≥ ρσ_N`): `F = [−ρσ_N W_T^Tτ_w; κ/π(−κχ_T + ρσ_Nτ_w)]`,
///   `K_vv = ρπW_T^Tτ_wG_N + ρπσ_N W_T^TP_wW_T`, `K_vΛN = −ρκW_T^Tτ_w`,
///   `K_vχ = −ρκσ_N W_T^TP_w`, `K_χv = −κρτ_wG_N − κρσ_N P_wW_T`, `K_χΛN = κ²/π ρτ_w`,
///   `K_χχ = κ²/π(−I₂ + ρσ_N P_w)`.
///
/// `ρ = 0` (or not `> 0`) gives the gap rows `−κ²/π χ_T` and, when `σ_N > 0`, status
/// [`Status::Slip`] (§8.6 item 3). Reads `m.lambda_n`, `m.chi_t`; writes rows `l.x .. l.x+n`,
/// `l.chi_t .. l.chi_t+2` and columns `l.x .. l.x+n`, `l.lambda_n`, `l.chi_t .. l.chi_t+2`.
///
/// # Panics
/// If `normal.n >` [`MAX_NODE_UNKNOWNS`] or an index of `l` is outside the sink.
///
/// # Scalings
/// `sc` scales the couple multipliers (`η_T = κ_r χ_T − π_r ω_T`); `normal_sc` is the sliding
/// normal's scaling, which defines `σ_N = κ Λ_N − π ĝ̇_N` and the cone radius `ρ σ_N`.
/// Using a couple scaling of rotational dimensions (e.g. `κ r`, `π r²`) keeps the stick interval
/// wide enough for Newton; the solution does not depend on it.
pub fn rolling<S: Sink + ?Sized>(
    sc: Scaling,
    normal_sc: Scaling,
    rho: f64,
    normal: &SlidingGaps,
    rates: &RollingRates,
    m: &Multipliers,
    l: &Layout,
    out: &mut S,
) -> Status {
    let n = normal.n;
    check_n(n);
    let sigma_n = normal.zeta_n(normal_sc, m.lambda_n);
    if sigma_n <= 0.0 {
        return rolling_forced_gap(sc, m, l, out);
    }
    if !resists(rho) {
        gap_rows2(out, sc, l.chi_t, &m.chi_t);
        return Status::Slip;
    }
    let (k, p) = (sc.k, sc.p);
    let (kn, pn) = (normal_sc.k, normal_sc.p);
    let gn = &normal.grad_n;
    let w = &rates.grad_t;
    let eta = k * m.chi_t - p * rates.omega_t;
    let norm = eta.norm();
    let radius = rho * sigma_n;
    if norm < radius {
        // Stick: no rotation.
        add_fx(out, l, n, &(-(w.transpose() * eta)));
        add_f2(out, l.chi_t, &(-k * rates.omega_t));
        if out.tangents() {
            add_kxx(out, l, n, &(p * w.transpose() * w));
            let kw: TangentialGradient = -k * w;
            add_kx_cols2(out, l, n, l.chi_t, &kw.transpose());
            add_k_rows2_x(out, l, n, l.chi_t, &kw);
        }
        Status::Stick
    } else {
        // Slip (rolling): ‖η_T‖ ≥ ρσ_N > 0.
        let (tau, p_w) = direction(&eta, norm);
        let w_tau: NodeVector = w.transpose() * tau;
        add_fx(out, l, n, &(-radius * w_tau));
        add_f2(out, l.chi_t, &((k / p) * (-k * m.chi_t + radius * tau)));
        if out.tangents() {
            let w_p: NodeColumns2 = w.transpose() * p_w;
            add_kxx(
                out,
                l,
                n,
                &((rho * pn) * w_tau * gn.transpose() + (rho * p * sigma_n) * w_p * w),
            );
            add_kx_col(out, l, n, l.lambda_n, &(-(rho * kn) * w_tau));
            add_kx_cols2(out, l, n, l.chi_t, &(-(rho * k * sigma_n) * w_p));
            let kchv: TangentialGradient =
                -(rho * k * pn / p) * tau * gn.transpose() - (rho * k * sigma_n) * p_w * w;
            add_k_rows2_x(out, l, n, l.chi_t, &kchv);
            let c = sc.gap_factor();
            add_k2_col(out, l.chi_t, l.lambda_n, &((rho * k * kn / p) * tau));
            add_k22(
                out,
                l.chi_t,
                l.chi_t,
                &(c * (radius * p_w - Matrix2::identity())),
            );
        }
        Status::Slip
    }
}

/// Rolling "forced gap" (spec §8.4 gap row, §8.6 item 2): `F[χ_T] = −κ²/π χ_T`,
/// `K_χχ = −κ²/π I₂`. Used when the contact is not in `𝒜_{n+1}` and by [`rolling`] when
/// `σ_N ≤ 0`. Always returns [`Status::Gap`].
pub fn rolling_forced_gap<S: Sink + ?Sized>(
    sc: Scaling,
    m: &Multipliers,
    l: &Layout,
    out: &mut S,
) -> Status {
    gap_rows2(out, sc, l.chi_t, &m.chi_t);
    Status::Gap
}
