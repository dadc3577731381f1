//! Spinning resistance: the spinning couple on the spin rate about the normal.

use super::*;

/// Spinning (drilling) resistance (velocity level only, spec §8.5): adds `F` over `[v; χ_N]`
/// and the exact tangent over `[v; Λ_N; χ_N]` into `out` and returns the status.
///
/// `σ_N` as in [`rolling`]; `η_N = κχ_N − π ω_N`, `s = sgn(η_N)`, interval radius `γ_sσ_N`
/// (`γ_s` \[m\] spinning length):
///
/// * **Gap** (`σ_N ≤ 0`): `F[χ_N] = −κ²/π χ_N`, `K_χχ = −κ²/π`.
/// * **Stick** (`|η_N| < γ_sσ_N`): `F = [−W_N^Tη_N; −κω_N]`, `K_vv = πW_N^TW_N`,
///   `K_vχ = −κW_N^T`, `K_χv = −κW_N`.
/// * **Slip** (`|η_N| ≥ γ_sσ_N`): `F = [−γ_sσ_N s W_N^T; κ/π(−κχ_N + γ_sσ_N s)]`,
///   `K_vv = γ_sπ s W_N^TG_N`, `K_vΛN = −γ_sκ s W_N^T`, `K_χv = −κγ_s s G_N`,
///   `K_χΛN = κ²/π γ_s s`, `K_χχ = −κ²/π`.
///
/// `γ_s = 0` (or not `> 0`) gives the gap row `−κ²/π χ_N` and, when `σ_N > 0`, status
/// [`Status::Slip`] (§8.6 item 3). Reads `m.lambda_n`, `m.chi_n`; writes rows `l.x .. l.x+n`,
/// `l.chi_n` and columns `l.x .. l.x+n`, `l.lambda_n`, `l.chi_n`.
///
/// # Panics
/// If `normal.n >` [`MAX_NODE_UNKNOWNS`] or an index of `l` is outside the sink.
///
/// # Scalings
/// `sc` scales the couple multiplier (`η_N = κ_r χ_N − π_r ω_N`); `normal_sc` defines
/// `σ_N` and the radius `γ_s σ_N` (see [`rolling`]).
pub fn spinning<S: Sink + ?Sized>(
    sc: Scaling,
    normal_sc: Scaling,
    gamma_s: f64,
    normal: &SlidingGaps,
    rate: &SpinningRate,
    m: &Multipliers,
    l: &Layout,
    out: &mut S,
) -> Status {
    let n = normal.n;
    check_n(n);
    let sigma_n = normal.zeta_n(normal_sc, m.lambda_n);
    if sigma_n <= 0.0 {
        return spinning_forced_gap(sc, m, l, out);
    }
    if !resists(gamma_s) {
        gap_row(out, sc, l.chi_n, m.chi_n);
        return Status::Slip;
    }
    let (k, p) = (sc.k, sc.p);
    let (kn, pn) = (normal_sc.k, normal_sc.p);
    let gn = &normal.grad_n;
    let w = &rate.grad_n;
    let eta = sc.augmented(m.chi_n, rate.omega_n);
    let radius = gamma_s * sigma_n;
    if eta.abs() < radius {
        // Stick: no spin.
        add_fx(out, l, n, &(-eta * w));
        out.add_residual(l.chi_n, -k * rate.omega_n);
        if out.tangents() {
            add_kxx(out, l, n, &(p * w * w.transpose()));
            let kw: NodeVector = -k * w;
            add_kx_col(out, l, n, l.chi_n, &kw);
            add_k_row_x(out, l, n, l.chi_n, &kw);
        }
        Status::Stick
    } else {
        // Slip (spinning): |η_N| ≥ γ_sσ_N > 0, so s = ±1.
        let s = eta.signum();
        let c = sc.gap_factor();
        add_fx(out, l, n, &(-(radius * s) * w));
        out.add_residual(l.chi_n, (k / p) * (-k * m.chi_n + radius * s));
        if !out.tangents() {
            return Status::Slip;
        }
        add_kxx(out, l, n, &((gamma_s * pn * s) * w * gn.transpose()));
        add_kx_col(out, l, n, l.lambda_n, &(-(gamma_s * kn * s) * w));
        add_k_row_x(out, l, n, l.chi_n, &(-(k * pn / p * gamma_s * s) * gn));
        out.add_tangent(l.chi_n, l.lambda_n, k * kn / p * gamma_s * s);
        out.add_tangent(l.chi_n, l.chi_n, -c);
        Status::Slip
    }
}

/// Spinning "forced gap" (spec §8.5 gap row, §8.6 item 2): `F[χ_N] = −κ²/π χ_N`,
/// `K_χχ = −κ²/π`. Used when the contact is not in `𝒜_{n+1}` and by [`spinning`] when
/// `σ_N ≤ 0`. Always returns [`Status::Gap`].
pub fn spinning_forced_gap<S: Sink + ?Sized>(
    sc: Scaling,
    m: &Multipliers,
    l: &Layout,
    out: &mut S,
) -> Status {
    gap_row(out, sc, l.chi_n, m.chi_n);
    Status::Gap
}
