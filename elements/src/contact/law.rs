//! Alart–Curnier frictional contact laws: sliding (spec `nsga.md` §8.3), rolling resistance
//! (§8.4) and spinning resistance (§8.5), with the status logic of §8.6.
//!
//! Pure, allocation-free functions shared by the contact elements (sphere–plane, point–plane,
//! sphere–sphere, ...). A law knows nothing about nodes: the element supplies the "gaps" and
//! their gradients with respect to its `n ≤ 12` node unknowns ([`MAX_NODE_UNKNOWNS`]), the
//! multipliers, and where they live in its local system ([`Layout`]); the law **adds** its
//! force vector `F` and exact tangent `K = ∂F/∂Φ` into a [`Sink`] (normally the element's
//! [`LocalSystem`]). All work arrays are fixed-size nalgebra matrices on the stack.
//!
//! # Quantities (spec §8.2–§8.3)
//!
//! | symbol | position level (§5) | velocity level (§6) |
//! |---|---|---|
//! | node unknowns `x` | `U` (material rotation columns) | `W` (`v = ṽ + W`) |
//! | `κ`, `π` ([`Scaling`]) | `k_p`, `p_p` | `k_v`, `p_v` |
//! | `ḡ_N`, `ḡ_T` ([`SlidingGaps`]) | `g_N` \[m\], incremental `g_T` \[m\] | `ĝ̇_N`, `ĝ̇_T` \[m/s\] (Newton law) |
//! | `G_N` (1×n), `G_T` (2×n) | `∂g/∂q` | `∂ĝ̇/∂v` (constant, `q_{n+1}` frozen) |
//! | `H_N`, `H_Tα` ([`Curvature`]) | `∂G_N^T/∂q`, `∂G_Tα^T/∂q` | none (zero) |
//! | `λ_N`, `λ_T` ([`Multipliers`]) | `ν_N`, `ν_T` | `Λ_N`, `Λ_T` |
//! | `ω_T`, `W_T`; `ω_N`, `W_N` | – | rolling / spinning rates ([`RollingRates`], [`SpinningRate`]) |
//! | `χ_T`, `χ_N` | – | rolling / spinning couples |
//!
//! Augmented multipliers: `ζ_N = κλ_N − π ḡ_N`, `ζ_T = κλ_T − π ḡ_T` (sliding, written `ξ` at
//! position and `σ` at velocity level), `η_T = κχ_T − π ω_T`, `η_N = κχ_N − π ω_N`. The physical
//! reaction of the level is `κλ` (impulse \[N·s\] at velocity level; "position impulse" \[kg·m\]
//! when `k_p` is a mass, spec §5), and every augmented multiplier has the units of `κλ`.
//! Cone radii: `μζ_N` (sliding), `ρσ_N` (rolling, `ρ` \[m\] rolling length) and `γ_s σ_N`
//! (spinning, `γ_s` \[m\] spinning length), where `σ_N = ζ_N` of the velocity-level sliding law:
//! rolling and spinning are coupled to the normal impulse `Λ_N` and, through `G_N`, to `v`.
//!
//! # Sign convention
//!
//! The element residual is `… + F` (spec §5–§6: inertia − forces − constraint forces), the solver
//! solves `S Δ = −r`. At convergence in contact the node rows of `F` are `−G_N^T κλ_N − G_T^T κλ_T`,
//! i.e. minus the physical generalized reaction.
//!
//! # Layout convention
//!
//! The law writes only into the rows/columns named by a [`Layout`]: the `n` node unknowns start
//! at `x`, and `λ_N`, `λ_T` (two consecutive), `χ_N`, `χ_T` (two consecutive) sit at the given
//! indices. [`Layout::contiguous`] is the standard element order
//! `[x (n); λ_N; λ_T1; λ_T2; χ_N; χ_T1; χ_T2]` (spec §8.4 `Φ^v = [v; Λ_N; Λ_T; χ_N; χ_T]`), in
//! which [`Multipliers::from_slice`] reads the element's `LocalState::mult`. An element with
//! sliding only (3 multipliers) uses the same layout and never touches the `χ` indices.
//! Sliding, rolling and spinning add into the same buffers, so a sphere–plane velocity level is
//!
//! ```ignore
//! let (sc, l, m) = (Scaling::from_cx(cx), Layout::contiguous(6), Multipliers::from_slice(s.mult));
//! if self.position_active {
//!     law::sliding(sc, mu, &gaps, None, &m, &l, out);
//!     law::rolling(sc_couple, sc, rho, &gaps, &roll, &m, &l, out);
//!     law::spinning(sc_couple, sc, gamma_s, &gaps, &spin, &m, &l, out);
//! } else {
//!     law::sliding_forced_gap(sc, &m, &l, out);
//!     law::rolling_forced_gap(sc, &m, &l, out);
//!     law::spinning_forced_gap(sc, &m, &l, out);
//! }
//! ```
//!
//! # Zero coefficients (spec §8.6)
//!
//! With `μ = 0` (resp. `ρ = 0`, `γ_s = 0`; any value that is not `> 0`, e.g. NaN, counts as
//! zero) the friction (rolling, spinning) branches are never evaluated: the tangential
//! multipliers get the gap rows `−κ²/π λ_T` (resp. `−κ²/π χ_T`, `−κ²/π χ_N`), so there is no
//! division by `‖ζ_T‖` and no spurious stick constraint at `ζ_T = 0`. This is exactly the slip
//! branch with a zero cone radius, so the reported status is then [`Status::Slip`] whenever the
//! normal is closed (free, unresisted sliding / rolling / spinning).

use nalgebra::{Matrix2, SMatrix, SVector, Vector2};
use saltus_core::element::{LocalSystem, StepCx};

/// Largest number of node unknowns `n` a contact law supports (two frame nodes: 2 × 6).
pub const MAX_NODE_UNKNOWNS: usize = 12;

/// A column over the node unknowns (e.g. `G_N^T`, `W_N^T`); entries `≥ n` are ignored.
pub type NodeVector = SVector<f64, MAX_NODE_UNKNOWNS>;

/// An `n × n` block over the node unknowns (e.g. `H_N`); entries outside `n × n` are ignored.
pub type NodeMatrix = SMatrix<f64, MAX_NODE_UNKNOWNS, MAX_NODE_UNKNOWNS>;

/// A `2 × n` gradient of a tangential quantity (e.g. `G_T`, `W_T`); columns `≥ n` are ignored.
pub type TangentialGradient = SMatrix<f64, 2, MAX_NODE_UNKNOWNS>;

/// `n × 2` block (node rows, two multiplier columns).
type NodeColumns2 = SMatrix<f64, MAX_NODE_UNKNOWNS, 2>;

/// Scale `κ` and penalty `π` of the level's augmented Lagrangian (spec §8.3, §10):
/// `κ = k_p, π = p_p` at position level, `κ = k_v, π = p_v` at velocity level.
///
/// `π > 0` is required (the gap rows are `−κ²/π λ`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scaling {
    /// Multiplier scale `κ`: the physical reaction is `κλ`.
    pub k: f64,
    /// Penalty `π` (> 0).
    pub p: f64,
}

impl Scaling {
    /// `κ = k`, `π = p`.
    pub const fn new(k: f64, p: f64) -> Self {
        Self { k, p }
    }

    /// The level's scale and penalty, `κ = cx.k`, `π = cx.p`.
    pub fn from_cx(cx: &StepCx) -> Self {
        Self { k: cx.k, p: cx.p }
    }

    /// Coefficient `κ²/π` of the gap rows `−κ²/π λ` (spec §7, §8.3).
    #[inline]
    pub fn gap_factor(&self) -> f64 {
        self.k * self.k / self.p
    }

    /// Augmented multiplier `κλ − π g` of one scalar pair.
    #[inline]
    pub fn augmented(&self, lambda: f64, gap: f64) -> f64 {
        self.k * lambda - self.p * gap
    }
}

/// Rows/columns of the law's unknowns in the caller's local system (module docs, "Layout
/// convention"). All indices are absolute in the [`Sink`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// First of the `n` node unknowns (`x = q` increment or `v`).
    pub x: usize,
    /// Normal multiplier `λ_N` (`ν_N` or `Λ_N`).
    pub lambda_n: usize,
    /// First of the two tangential multipliers `λ_T1, λ_T2`.
    pub lambda_t: usize,
    /// Spinning couple `χ_N` (read only by [`spinning`]).
    pub chi_n: usize,
    /// First of the two rolling couples `χ_T1, χ_T2` (read only by [`rolling`]).
    pub chi_t: usize,
}

impl Layout {
    /// The standard element order `[x (n); λ_N; λ_T1; λ_T2; χ_N; χ_T1; χ_T2]`, i.e. the node
    /// unknowns followed by the element's multipliers in the order of
    /// [`Multipliers::from_slice`].
    pub const fn contiguous(n: usize) -> Self {
        Self {
            x: 0,
            lambda_n: n,
            lambda_t: n + 1,
            chi_n: n + 3,
            chi_t: n + 4,
        }
    }
}

/// Current values of the contact multipliers of one level (scaled: reaction `κλ`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Multipliers {
    /// Normal multiplier `λ_N` (`ν_N` position, `Λ_N` velocity).
    pub lambda_n: f64,
    /// Tangential multipliers `λ_T` (`ν_T`, `Λ_T`).
    pub lambda_t: Vector2<f64>,
    /// Spinning couple `χ_N` (velocity level; physical couple impulse `κχ_N` \[N·m·s\]).
    pub chi_n: f64,
    /// Rolling couples `χ_T` (velocity level; physical couple impulse `κχ_T` \[N·m·s\]).
    pub chi_t: Vector2<f64>,
}

impl Multipliers {
    /// Read `[λ_N, λ_T1, λ_T2]` or `[λ_N, λ_T1, λ_T2, χ_N, χ_T1, χ_T2]` (the multiplier order of
    /// [`Layout::contiguous`]); missing couples are zero.
    ///
    /// # Panics
    /// If `m` has fewer than 3 entries, or between 4 and 5.
    pub fn from_slice(m: &[f64]) -> Self {
        let mut out = Self {
            lambda_n: m[0],
            lambda_t: Vector2::new(m[1], m[2]),
            ..Self::default()
        };
        if m.len() > 3 {
            out.chi_n = m[3];
            out.chi_t = Vector2::new(m[4], m[5]);
        }
        out
    }
}

/// The sliding "gaps" of one contact and their gradients (spec §8.3).
///
/// Position level: normal gap `ḡ_N = g_N` \[m\] (positive when open) and incremental tangential
/// gap `ḡ_T = g_T` \[m\] over the step, `G = ∂g/∂q` with respect to the node unknowns (rotational
/// columns: material variations times the node's tangent `T`). Velocity level: the Newton-law
/// velocities `ḡ_N = ĝ̇_N`, `ḡ_T = ĝ̇_T` \[m/s\] and `G = ∂ĝ̇/∂v`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlidingGaps {
    /// Number of node unknowns `n ≤` [`MAX_NODE_UNKNOWNS`].
    pub n: usize,
    /// Normal gap `ḡ_N`.
    pub g_n: f64,
    /// Tangential gap `ḡ_T`.
    pub g_t: Vector2<f64>,
    /// `G_N^T` (first `n` entries).
    pub grad_n: NodeVector,
    /// `G_T` (first `n` columns).
    pub grad_t: TangentialGradient,
}

impl SlidingGaps {
    /// Zero gaps and gradients for `n` node unknowns.
    pub fn zeros(n: usize) -> Self {
        Self {
            n,
            g_n: 0.0,
            g_t: Vector2::zeros(),
            grad_n: NodeVector::zeros(),
            grad_t: TangentialGradient::zeros(),
        }
    }

    /// Normal augmented multiplier `ζ_N = κλ_N − π ḡ_N` (`ξ_N` position, `σ_N` velocity level).
    #[inline]
    pub fn zeta_n(&self, sc: Scaling, lambda_n: f64) -> f64 {
        sc.augmented(lambda_n, self.g_n)
    }

    /// Tangential augmented multiplier `ζ_T = κλ_T − π ḡ_T`.
    #[inline]
    pub fn zeta_t(&self, sc: Scaling, lambda_t: Vector2<f64>) -> Vector2<f64> {
        sc.k * lambda_t - sc.p * self.g_t
    }
}

/// Curvature (geometric stiffness) terms of the position-level gaps (spec §8.3):
/// `H_N = ∂(G_N^T)/∂q`, `H_Tα = ∂(G_Tα^T)/∂q` (`n × n`, row = component of the gradient,
/// column = unknown). They enter the tangent as `−ζ_N H_N − Σ_α ζ_Tα H_Tα` (stick) or
/// `−ζ_N H_N − μζ_N Σ_α τ_α H_Tα` (slip). Absent (zero) at velocity level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curvature {
    /// `H_N` \[1/m for a translational gap\].
    pub h_n: NodeMatrix,
    /// `H_T1`, `H_T2`.
    pub h_t: [NodeMatrix; 2],
}

impl Curvature {
    /// All curvature terms zero.
    pub fn zeros() -> Self {
        Self {
            h_n: NodeMatrix::zeros(),
            h_t: [NodeMatrix::zeros(); 2],
        }
    }
}

/// Tangential angular velocity of a rolling contact (spec §8.4): `ω_T = W_T v` \[rad/s\] in the
/// contact frame (sphere–plane: `ω_Tα = T_α · ω_A`, contact-elements.md §4.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RollingRates {
    /// `ω_T` at the current velocity iterate.
    pub omega_t: Vector2<f64>,
    /// `W_T = ∂ω_T/∂v` (`2 × n`, constant at velocity level).
    pub grad_t: TangentialGradient,
}

/// Normal (drilling) angular velocity of a spinning contact (spec §8.5): `ω_N = W_N v` \[rad/s\]
/// (sphere–plane: `ω_N = N · ω_A`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpinningRate {
    /// `ω_N` at the current velocity iterate.
    pub omega_n: f64,
    /// `W_N^T = (∂ω_N/∂v)^T` (first `n` entries).
    pub grad_n: NodeVector,
}

/// Status of one contact law at the current iterate (spec §8.6), for outputs and diagnostics.
///
/// | law | `Gap` | `Stick` | `Slip` |
/// |---|---|---|---|
/// | sliding (§8.3) | `ζ_N ≤ 0` or forced (open contact) | `‖ζ_T‖ ≤ μζ_N` ("pure rolling" in the thesis) | `‖ζ_T‖ > μζ_N` (sliding) |
/// | rolling (§8.4) | `σ_N ≤ 0` or forced | `‖η_T‖ < ρσ_N` (no rotation) | `‖η_T‖ ≥ ρσ_N` (rolling) |
/// | spinning (§8.5) | `σ_N ≤ 0` or forced | `|η_N| < γ_sσ_N` (no spin) | `|η_N| ≥ γ_sσ_N` (spinning) |
///
/// With a zero coefficient (`μ`, `ρ`, `γ_s`) a closed contact reports `Slip` (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Status {
    /// Open contact: all multipliers of the law driven to zero.
    #[default]
    Gap,
    /// Closed, inside the cone: the relative motion of the law is suppressed.
    Stick,
    /// Closed, on the cone: the reaction has the cone radius and opposes the motion.
    Slip,
}

impl Status {
    /// Numeric code for output channels: `Gap = 0`, `Stick = 1`, `Slip = 2`.
    pub fn code(self) -> f64 {
        match self {
            Status::Gap => 0.0,
            Status::Stick => 1.0,
            Status::Slip => 2.0,
        }
    }

    /// Whether the normal contact is closed (`Stick` or `Slip`).
    pub fn is_closed(self) -> bool {
        self != Status::Gap
    }
}

/// Destination of the law's additions: a residual vector and its tangent, indexed by the
/// absolute rows/columns of a [`Layout`]. Implementations add (never overwrite).
pub trait Sink {
    /// `r[i] += value`.
    fn add_residual(&mut self, i: usize, value: f64);
    /// `K[(i, j)] += value`.
    fn add_tangent(&mut self, i: usize, j: usize, value: f64);
}

impl Sink for LocalSystem<'_> {
    /// Adds into `residual[i]` (panics if out of range).
    #[inline]
    fn add_residual(&mut self, i: usize, value: f64) {
        self.residual[i] += value;
    }
    /// Adds into `hessian[(i, j)]` (panics if out of range).
    #[inline]
    fn add_tangent(&mut self, i: usize, j: usize, value: f64) {
        self.hessian[(i, j)] += value;
    }
}

/// Whether a coefficient (`μ`, `ρ`, `γ_s`) activates its law: `> 0`; zero, negative and NaN
/// values mean "no resistance" (spec §8.6 item 3).
#[inline]
fn resists(coefficient: f64) -> bool {
    coefficient > 0.0
}

#[inline]
fn check_n(n: usize) {
    assert!(
        n <= MAX_NODE_UNKNOWNS,
        "contact law: {n} node unknowns exceed MAX_NODE_UNKNOWNS = {MAX_NODE_UNKNOWNS}"
    );
}

/// `F[x] += v`.
fn add_fx<S: Sink + ?Sized>(out: &mut S, l: &Layout, n: usize, v: &NodeVector) {
    for i in 0..n {
        out.add_residual(l.x + i, v[i]);
    }
}

/// `F[row0 .. row0+2] += v`.
fn add_f2<S: Sink + ?Sized>(out: &mut S, row0: usize, v: &Vector2<f64>) {
    out.add_residual(row0, v[0]);
    out.add_residual(row0 + 1, v[1]);
}

/// `K[x, x] += m`.
fn add_kxx<S: Sink + ?Sized>(out: &mut S, l: &Layout, n: usize, m: &NodeMatrix) {
    for j in 0..n {
        for i in 0..n {
            out.add_tangent(l.x + i, l.x + j, m[(i, j)]);
        }
    }
}

/// `K[x, col] += v` (one multiplier column).
fn add_kx_col<S: Sink + ?Sized>(out: &mut S, l: &Layout, n: usize, col: usize, v: &NodeVector) {
    for i in 0..n {
        out.add_tangent(l.x + i, col, v[i]);
    }
}

/// `K[row, x] += v^T` (one multiplier row).
fn add_k_row_x<S: Sink + ?Sized>(out: &mut S, l: &Layout, n: usize, row: usize, v: &NodeVector) {
    for j in 0..n {
        out.add_tangent(row, l.x + j, v[j]);
    }
}

/// `K[x, col0 .. col0+2] += m`.
fn add_kx_cols2<S: Sink + ?Sized>(
    out: &mut S,
    l: &Layout,
    n: usize,
    col0: usize,
    m: &NodeColumns2,
) {
    for a in 0..2 {
        for i in 0..n {
            out.add_tangent(l.x + i, col0 + a, m[(i, a)]);
        }
    }
}

/// `K[row0 .. row0+2, x] += m`.
fn add_k_rows2_x<S: Sink + ?Sized>(
    out: &mut S,
    l: &Layout,
    n: usize,
    row0: usize,
    m: &TangentialGradient,
) {
    for j in 0..n {
        for a in 0..2 {
            out.add_tangent(row0 + a, l.x + j, m[(a, j)]);
        }
    }
}

/// `K[row0 .. row0+2, col] += v`.
fn add_k2_col<S: Sink + ?Sized>(out: &mut S, row0: usize, col: usize, v: &Vector2<f64>) {
    out.add_tangent(row0, col, v[0]);
    out.add_tangent(row0 + 1, col, v[1]);
}

/// `K[row0 .. row0+2, col0 .. col0+2] += m`.
fn add_k22<S: Sink + ?Sized>(out: &mut S, row0: usize, col0: usize, m: &Matrix2<f64>) {
    for b in 0..2 {
        for a in 0..2 {
            out.add_tangent(row0 + a, col0 + b, m[(a, b)]);
        }
    }
}

/// Gap rows of two consecutive multipliers: `F += −κ²/π λ`, `K += −κ²/π I₂`.
fn gap_rows2<S: Sink + ?Sized>(out: &mut S, sc: Scaling, row0: usize, lambda: &Vector2<f64>) {
    let c = sc.gap_factor();
    add_f2(out, row0, &(-c * lambda));
    out.add_tangent(row0, row0, -c);
    out.add_tangent(row0 + 1, row0 + 1, -c);
}

/// Gap row of one multiplier: `F += −κ²/π λ`, `K += −κ²/π`.
fn gap_row<S: Sink + ?Sized>(out: &mut S, sc: Scaling, row: usize, lambda: f64) {
    let c = sc.gap_factor();
    out.add_residual(row, -c * lambda);
    out.add_tangent(row, row, -c);
}

/// `P = (I₂ − ττ^T)/‖ζ‖` and `τ = ζ/‖ζ‖` for `‖ζ‖ > 0` (spec §8.3, `Δτ = P Δζ`).
#[inline]
fn direction(zeta: &Vector2<f64>, norm: f64) -> (Vector2<f64>, Matrix2<f64>) {
    let tau = zeta / norm;
    let proj = (Matrix2::identity() - tau * tau.transpose()) / norm;
    (tau, proj)
}

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

    // Normal part, common to stick and slip.
    let mut fx: NodeVector = -zeta_n * gn;
    let mut kxx: NodeMatrix = p * gn * gn.transpose();
    if let Some(c) = curvature {
        kxx -= zeta_n * c.h_n;
    }
    out.add_residual(l.lambda_n, -k * gaps.g_n);
    let kgn: NodeVector = -k * gn;
    add_kx_col(out, l, n, l.lambda_n, &kgn);
    add_k_row_x(out, l, n, l.lambda_n, &kgn);

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
            kxx += p * gt.transpose() * gt;
            if let Some(c) = curvature {
                kxx -= zeta_t[0] * c.h_t[0] + zeta_t[1] * c.h_t[1];
            }
            add_f2(out, l.lambda_t, &(-k * gaps.g_t));
            let kgt: TangentialGradient = -k * gt;
            add_kx_cols2(out, l, n, l.lambda_t, &kgt.transpose());
            add_k_rows2_x(out, l, n, l.lambda_t, &kgt);
            Status::Stick
        } else {
            // Slip: ‖ζ_T‖ > μζ_N > 0, so τ and P_τ are well defined.
            let (tau, p_tau) = direction(&zeta_t, norm);
            let gt_tau: NodeVector = gt.transpose() * tau;
            let gt_p: NodeColumns2 = gt.transpose() * p_tau;
            fx -= radius * gt_tau;
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
            add_f2(
                out,
                l.lambda_t,
                &((k / p) * (-k * m.lambda_t + radius * tau)),
            );
            add_k2_col(out, l.lambda_t, l.lambda_n, &((mu * c) * tau));
            add_k22(
                out,
                l.lambda_t,
                l.lambda_t,
                &(c * (radius * p_tau - Matrix2::identity())),
            );
            Status::Slip
        }
    };
    add_fx(out, l, n, &fx);
    add_kxx(out, l, n, &kxx);
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
        add_kxx(out, l, n, &(p * w.transpose() * w));
        let kw: TangentialGradient = -k * w;
        add_kx_cols2(out, l, n, l.chi_t, &kw.transpose());
        add_k_rows2_x(out, l, n, l.chi_t, &kw);
        Status::Stick
    } else {
        // Slip (rolling): ‖η_T‖ ≥ ρσ_N > 0.
        let (tau, p_w) = direction(&eta, norm);
        let w_tau: NodeVector = w.transpose() * tau;
        let w_p: NodeColumns2 = w.transpose() * p_w;
        add_fx(out, l, n, &(-radius * w_tau));
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
        add_f2(out, l.chi_t, &((k / p) * (-k * m.chi_t + radius * tau)));
        add_k2_col(out, l.chi_t, l.lambda_n, &((rho * k * kn / p) * tau));
        add_k22(
            out,
            l.chi_t,
            l.chi_t,
            &(c * (radius * p_w - Matrix2::identity())),
        );
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
        add_kxx(out, l, n, &(p * w * w.transpose()));
        let kw: NodeVector = -k * w;
        add_kx_col(out, l, n, l.chi_n, &kw);
        add_k_row_x(out, l, n, l.chi_n, &kw);
        Status::Stick
    } else {
        // Slip (spinning): |η_N| ≥ γ_sσ_N > 0, so s = ±1.
        let s = eta.signum();
        let c = sc.gap_factor();
        add_fx(out, l, n, &(-(radius * s) * w));
        out.add_residual(l.chi_n, (k / p) * (-k * m.chi_n + radius * s));
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

#[cfg(test)]
mod tests {
    //! Finite-difference, Lagrangian, consistency and zero-coefficient checks of the laws.
    //!
    //! FD tolerance: central differences with step `ε = 1e-6` on O(1) data have a truncation
    //! error `O(ε² |F'''|) ≈ 1e-12·|F'''|` and a round-off error `O(1e-16 |F| / ε) ≈ 1e-10 |F|`;
    //! with `|F|, |F'''| = O(10)` here both stay below ~1e-9, so `1e-7` relative to
    //! `1 + max|K|` leaves two orders of margin while still catching any sign, factor or
    //! transposition error (those are O(1)). The states are built with margins of O(1) from the
    //! kinks (`ζ_N = ±2`, cone ratios 0.4 or 2.5), far beyond the `O(ε)` perturbations, and the
    //! status is asserted at every perturbed point.

    use super::*;
    use nalgebra::{DMatrix, DVector};
    use saltus_core::fd::Rng;

    const SC: Scaling = Scaling::new(1.7, 2.3);
    /// Couple scaling for rolling/spinning, distinct from the normal's to exercise the coupling.
    const SC_COUPLE: Scaling = Scaling::new(0.9, 3.1);
    const EPS: f64 = 1e-6;
    const TOL: f64 = 1e-7;
    const MU: f64 = 0.4;
    const RHO: f64 = 0.3;
    const GAMMA: f64 = 0.2;

    /// Target state of one law.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Target {
        Gap,
        Stick,
        Slip,
        /// Spinning only: stick / slip with η_N < 0.
        StickNeg,
        SlipNeg,
    }

    impl Target {
        fn status(self) -> Status {
            match self {
                Target::Gap => Status::Gap,
                Target::Stick | Target::StickNeg => Status::Stick,
                Target::Slip | Target::SlipNeg => Status::Slip,
            }
        }
        /// Ratio `‖augmented‖ / radius` and sign.
        fn ratio(self) -> f64 {
            match self {
                Target::Gap => 1.0,
                Target::Stick => 0.4,
                Target::Slip => 2.5,
                Target::StickNeg => -0.4,
                Target::SlipNeg => -2.5,
            }
        }
    }

    /// Which laws a case evaluates.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Law {
        Sliding,
        Rolling,
        Spinning,
        All,
    }

    fn rand_vec(rng: &mut Rng, n: usize) -> NodeVector {
        NodeVector::from_fn(|i, _| if i < n { rng.uniform() } else { 0.0 })
    }

    fn rand_tg(rng: &mut Rng, n: usize) -> TangentialGradient {
        let mut g = TangentialGradient::zeros();
        for a in 0..2 {
            for j in 0..n {
                g[(a, j)] = rng.uniform();
            }
        }
        g
    }

    fn rand_sym(rng: &mut Rng, n: usize) -> NodeMatrix {
        let mut a = NodeMatrix::zeros();
        for i in 0..n {
            for j in 0..n {
                a[(i, j)] = rng.uniform();
            }
        }
        0.5 * (a + a.transpose())
    }

    fn unit2(rng: &mut Rng) -> Vector2<f64> {
        let a = std::f64::consts::PI * rng.uniform();
        Vector2::new(a.cos(), a.sin())
    }

    /// Gaps as functions of the node unknowns: `ḡ = ḡ0 + G0 Δx + ½ Δxᵀ H Δx`, `G = G0 + (HΔx)ᵀ`
    /// (affine without curvature), rates `ω = ω0 + W Δx`.
    #[derive(Clone, Debug)]
    struct Case {
        n: usize,
        mu: f64,
        rho: f64,
        gamma: f64,
        sc: Scaling,
        /// Scaling of the rolling/spinning couples (distinct from the normal's).
        sc_couple: Scaling,
        g_n: f64,
        g_t: Vector2<f64>,
        gn: NodeVector,
        gt: TangentialGradient,
        curv: Option<Curvature>,
        omega_t: Vector2<f64>,
        w_t: TangentialGradient,
        omega_n: f64,
        w_n: NodeVector,
        /// Base point `Φ0 = [Δx (n); λ_N; λ_T; χ_N; χ_T]`.
        phi0: DVector<f64>,
    }

    impl Case {
        fn m(&self) -> usize {
            self.n + 6
        }

        fn gaps(&self, dx: &NodeVector) -> SlidingGaps {
            let mut g = SlidingGaps::zeros(self.n);
            g.g_n = self.g_n + self.gn.dot(dx);
            g.grad_n = self.gn;
            for a in 0..2 {
                g.g_t[a] = self.g_t[a] + self.gt.row(a).transpose().dot(dx);
            }
            g.grad_t = self.gt;
            if let Some(c) = &self.curv {
                g.g_n += 0.5 * dx.dot(&(c.h_n * dx));
                g.grad_n += c.h_n * dx;
                for a in 0..2 {
                    g.g_t[a] += 0.5 * dx.dot(&(c.h_t[a] * dx));
                    let row = (c.h_t[a] * dx).transpose();
                    let mut r = g.grad_t.row_mut(a);
                    r += row;
                }
            }
            g
        }

        fn rolling_rates(&self, dx: &NodeVector) -> RollingRates {
            RollingRates {
                omega_t: self.omega_t + self.w_t * dx,
                grad_t: self.w_t,
            }
        }

        fn spinning_rate(&self, dx: &NodeVector) -> SpinningRate {
            SpinningRate {
                omega_n: self.omega_n + self.w_n.dot(dx),
                grad_n: self.w_n,
            }
        }

        fn split(&self, phi: &DVector<f64>) -> (NodeVector, Multipliers) {
            let n = self.n;
            let dx = NodeVector::from_fn(|i, _| if i < n { phi[i] } else { 0.0 });
            (dx, Multipliers::from_slice(&phi.as_slice()[n..n + 6]))
        }

        /// Add the selected laws at `phi` into `out`; statuses (sliding, rolling, spinning).
        fn apply<S: Sink + ?Sized>(
            &self,
            law: Law,
            phi: &DVector<f64>,
            out: &mut S,
        ) -> [Option<Status>; 3] {
            let (dx, m) = self.split(phi);
            let gaps = self.gaps(&dx);
            let l = Layout::contiguous(self.n);
            let mut st = [None; 3];
            if matches!(law, Law::Sliding | Law::All) {
                st[0] = Some(sliding(
                    self.sc,
                    self.mu,
                    &gaps,
                    self.curv.as_ref(),
                    &m,
                    &l,
                    out,
                ));
            }
            if matches!(law, Law::Rolling | Law::All) {
                let r = self.rolling_rates(&dx);
                st[1] = Some(rolling(
                    self.sc_couple,
                    self.sc,
                    self.rho,
                    &gaps,
                    &r,
                    &m,
                    &l,
                    out,
                ));
            }
            if matches!(law, Law::Spinning | Law::All) {
                let r = self.spinning_rate(&dx);
                st[2] = Some(spinning(
                    self.sc_couple,
                    self.sc,
                    self.gamma,
                    &gaps,
                    &r,
                    &m,
                    &l,
                    out,
                ));
            }
            st
        }

        fn eval(
            &self,
            law: Law,
            phi: &DVector<f64>,
        ) -> (DVector<f64>, DMatrix<f64>, [Option<Status>; 3]) {
            let m = self.m();
            let mut r = DVector::zeros(m);
            let mut k = DMatrix::zeros(m, m);
            let st = {
                let mut out = LocalSystem {
                    residual: r.rows_mut(0, m),
                    hessian: k.view_mut((0, 0), (m, m)),
                    reference: 0.0,
                };
                self.apply(law, phi, &mut out)
            };
            (r, k, st)
        }

        /// Augmented Lagrangian of §8.2 (sliding + rolling + spinning parts as selected) with
        /// the cone radii frozen at `radii` (sliding, rolling, spinning; 0 = the cone `{0}`).
        fn lagrangian(&self, law: Law, phi: &DVector<f64>, radii: [f64; 3]) -> f64 {
            let (k, p) = (self.sc.k, self.sc.p);
            let (dx, m) = self.split(phi);
            let g = self.gaps(&dx);
            let mut l = 0.0;
            if matches!(law, Law::Sliding | Law::All) {
                let zn = g.zeta_n(self.sc, m.lambda_n);
                let zt = g.zeta_t(self.sc, m.lambda_t);
                let dn = zn.min(0.0);
                let dt = (zt.norm() - radii[0]).max(0.0);
                l += -k * g.g_n * m.lambda_n + 0.5 * p * g.g_n * g.g_n - dn * dn / (2.0 * p);
                l += -k * g.g_t.dot(&m.lambda_t) + 0.5 * p * g.g_t.norm_squared()
                    - dt * dt / (2.0 * p);
            }
            let (k, p) = (self.sc_couple.k, self.sc_couple.p);
            if matches!(law, Law::Rolling | Law::All) {
                let w = self.rolling_rates(&dx).omega_t;
                let eta = k * m.chi_t - p * w;
                let d = (eta.norm() - radii[1]).max(0.0);
                l += -k * w.dot(&m.chi_t) + 0.5 * p * w.norm_squared() - d * d / (2.0 * p);
            }
            if matches!(law, Law::Spinning | Law::All) {
                let w = self.spinning_rate(&dx).omega_n;
                let eta = k * m.chi_n - p * w;
                let d = (eta.abs() - radii[2]).max(0.0);
                l += -k * w * m.chi_n + 0.5 * p * w * w - d * d / (2.0 * p);
            }
            l
        }

        /// Cone radii at the base point (0 when the normal is open).
        fn radii(&self) -> [f64; 3] {
            let (dx, m) = self.split(&self.phi0);
            let zn = self.gaps(&dx).zeta_n(self.sc, m.lambda_n).max(0.0);
            [self.mu * zn, self.rho * zn, self.gamma * zn]
        }
    }

    /// Random case with `n` node unknowns whose base point lands in the targeted statuses
    /// (the sliding target fixes the normal: `Gap` makes every law open).
    fn make_case(
        seed: u64,
        n: usize,
        curvature: bool,
        slide: Target,
        roll: Target,
        spin: Target,
    ) -> Case {
        let mut rng = Rng::new(seed);
        let curv = curvature.then(|| Curvature {
            h_n: rand_sym(&mut rng, n),
            h_t: [rand_sym(&mut rng, n), rand_sym(&mut rng, n)],
        });
        let mut case = Case {
            n,
            mu: MU,
            rho: RHO,
            gamma: GAMMA,
            sc: SC,
            sc_couple: SC_COUPLE,
            g_n: 0.5 * rng.uniform(),
            g_t: Vector2::new(rng.uniform(), rng.uniform()),
            gn: rand_vec(&mut rng, n),
            gt: rand_tg(&mut rng, n),
            curv,
            omega_t: Vector2::new(rng.uniform(), rng.uniform()),
            w_t: rand_tg(&mut rng, n),
            omega_n: rng.uniform(),
            w_n: rand_vec(&mut rng, n),
            phi0: DVector::zeros(n + 6),
        };
        let dx = rand_vec(&mut rng, n) * 0.3;
        let (k, p) = (SC.k, SC.p);
        let g = case.gaps(&dx);
        let zeta_n = if slide == Target::Gap { -2.0 } else { 2.0 };
        let zeta_t = if slide == Target::Gap {
            unit2(&mut rng)
        } else {
            slide.ratio() * MU * zeta_n * unit2(&mut rng)
        };
        let sigma = zeta_n.max(0.0);
        let eta_t = if sigma > 0.0 {
            roll.ratio() * RHO * sigma * unit2(&mut rng)
        } else {
            unit2(&mut rng)
        };
        let eta_n = if sigma > 0.0 {
            spin.ratio() * GAMMA * sigma
        } else {
            0.7
        };
        let omega_t = case.rolling_rates(&dx).omega_t;
        let omega_n = case.spinning_rate(&dx).omega_n;
        for i in 0..n {
            case.phi0[i] = dx[i];
        }
        case.phi0[n] = (zeta_n + p * g.g_n) / k;
        case.phi0[n + 1] = (zeta_t[0] + p * g.g_t[0]) / k;
        case.phi0[n + 2] = (zeta_t[1] + p * g.g_t[1]) / k;
        let (kr, pr) = (SC_COUPLE.k, SC_COUPLE.p);
        case.phi0[n + 3] = (eta_n + pr * omega_n) / kr;
        case.phi0[n + 4] = (eta_t[0] + pr * omega_t[0]) / kr;
        case.phi0[n + 5] = (eta_t[1] + pr * omega_t[1]) / kr;
        case
    }

    /// Max |K − K_FD| / (1 + max|K|) at the base point; asserts the statuses never change.
    fn fd_error(case: &Case, law: Law) -> (f64, [Option<Status>; 3]) {
        let m = case.m();
        let (_, k, st0) = case.eval(law, &case.phi0);
        let mut num = DMatrix::zeros(m, m);
        for j in 0..m {
            let mut plus = case.phi0.clone();
            let mut minus = case.phi0.clone();
            plus[j] += EPS;
            minus[j] -= EPS;
            let (fp, _, sp) = case.eval(law, &plus);
            let (fm, _, sm) = case.eval(law, &minus);
            assert_eq!(sp, st0, "status changed under +ε on unknown {j}");
            assert_eq!(sm, st0, "status changed under −ε on unknown {j}");
            num.set_column(j, &((fp - fm) / (2.0 * EPS)));
        }
        assert!(k.iter().all(|v| v.is_finite()));
        ((&k - &num).amax() / (1.0 + k.amax()), st0)
    }

    /// Max |F − ∇𝓛| / (1 + max|F|) at the base point, cone radii frozen.
    fn lagrangian_error(case: &Case, law: Law) -> f64 {
        let m = case.m();
        let radii = case.radii();
        let (f, _, _) = case.eval(law, &case.phi0);
        let mut grad = DVector::zeros(m);
        for j in 0..m {
            let mut plus = case.phi0.clone();
            let mut minus = case.phi0.clone();
            plus[j] += EPS;
            minus[j] -= EPS;
            grad[j] = (case.lagrangian(law, &plus, radii) - case.lagrangian(law, &minus, radii))
                / (2.0 * EPS);
        }
        (&f - &grad).amax() / (1.0 + f.amax())
    }

    const SEEDS: [u64; 4] = [1, 7, 42, 1234];

    #[test]
    fn sliding_tangent_matches_fd_in_every_status() {
        for (level, n, curv) in [
            ("position", 12, true),
            ("velocity", 6, false),
            ("point", 3, true),
        ] {
            for target in [Target::Gap, Target::Stick, Target::Slip] {
                let mut worst: f64 = 0.0;
                for seed in SEEDS {
                    let case = make_case(seed, n, curv, target, Target::Stick, Target::Stick);
                    let (err, st) = fd_error(&case, Law::Sliding);
                    assert_eq!(st[0], Some(target.status()));
                    assert!(err < TOL, "sliding {level} {target:?} seed {seed}: {err:e}");
                    worst = worst.max(err);
                }
                eprintln!("FD sliding {level:8} n={n:2} {target:?}: max rel error {worst:.2e}");
            }
        }
    }

    #[test]
    fn rolling_tangent_matches_fd_in_every_status() {
        for (slide, target) in [
            (Target::Gap, Target::Gap),
            (Target::Slip, Target::Stick),
            (Target::Stick, Target::Slip),
            (Target::Slip, Target::Slip),
        ] {
            let mut worst: f64 = 0.0;
            for seed in SEEDS {
                let case = make_case(seed, 6, false, slide, target, Target::Stick);
                let (err, st) = fd_error(&case, Law::Rolling);
                assert_eq!(st[1], Some(target.status()));
                assert!(err < TOL, "rolling {target:?} seed {seed}: {err:e}");
                worst = worst.max(err);
            }
            eprintln!("FD rolling  {target:?} (sliding {slide:?}): max rel error {worst:.2e}");
        }
    }

    #[test]
    fn spinning_tangent_matches_fd_in_every_status_and_sign() {
        for (slide, target) in [
            (Target::Gap, Target::Gap),
            (Target::Slip, Target::Stick),
            (Target::Slip, Target::StickNeg),
            (Target::Stick, Target::Slip),
            (Target::Stick, Target::SlipNeg),
        ] {
            let mut worst: f64 = 0.0;
            for seed in SEEDS {
                let case = make_case(seed, 6, false, slide, Target::Stick, target);
                let (err, st) = fd_error(&case, Law::Spinning);
                assert_eq!(st[2], Some(target.status()));
                assert!(err < TOL, "spinning {target:?} seed {seed}: {err:e}");
                worst = worst.max(err);
            }
            eprintln!("FD spinning {target:?} (sliding {slide:?}): max rel error {worst:.2e}");
        }
    }

    #[test]
    fn combined_velocity_level_tangent_matches_fd() {
        // All three laws in the same buffers (sphere–plane velocity level), with the rolling and
        // spinning cones coupled to Λ_N and v through σ_N.
        let combos = [
            (Target::Stick, Target::Stick, Target::Stick),
            (Target::Slip, Target::Slip, Target::SlipNeg),
            (Target::Stick, Target::Slip, Target::Slip),
            (Target::Slip, Target::Stick, Target::StickNeg),
            (Target::Gap, Target::Gap, Target::Gap),
        ];
        for (a, b, c) in combos {
            let mut worst: f64 = 0.0;
            for (i, seed) in SEEDS.iter().enumerate() {
                let n = [6, 12, 9, 3][i];
                let case = make_case(*seed, n, false, a, b, c);
                let (err, st) = fd_error(&case, Law::All);
                assert_eq!(st, [Some(a.status()), Some(b.status()), Some(c.status())]);
                assert!(err < TOL, "combined {a:?}/{b:?}/{c:?} seed {seed}: {err:e}");
                worst = worst.max(err);
            }
            eprintln!("FD combined sliding {a:?} rolling {b:?} spinning {c:?}: {worst:.2e}");
        }
    }

    #[test]
    fn force_is_gradient_of_augmented_lagrangian_with_frozen_radius() {
        let mut cases = Vec::new();
        for t in [Target::Gap, Target::Stick, Target::Slip] {
            cases.push((
                "sliding/position",
                Law::Sliding,
                t,
                make_case(3, 12, true, t, t, t),
            ));
            cases.push((
                "sliding/velocity",
                Law::Sliding,
                t,
                make_case(4, 6, false, t, t, t),
            ));
            let slide = if t == Target::Gap {
                Target::Gap
            } else {
                Target::Slip
            };
            cases.push((
                "rolling",
                Law::Rolling,
                t,
                make_case(5, 6, false, slide, t, t),
            ));
            cases.push((
                "spinning",
                Law::Spinning,
                t,
                make_case(6, 6, false, slide, t, t),
            ));
        }
        let slip_neg = make_case(8, 6, false, Target::Stick, Target::Slip, Target::SlipNeg);
        cases.push(("spinning", Law::Spinning, Target::SlipNeg, slip_neg.clone()));
        cases.push(("all", Law::All, Target::Slip, slip_neg));
        for (name, law, t, case) in cases {
            let err = lagrangian_error(&case, law);
            eprintln!("dL {name:16} {t:?}: max rel error {err:.2e}");
            assert!(err < TOL, "{name} {t:?}: F ≠ ∇𝓛 ({err:e})");
        }
    }

    /// Point mass with rotary inertia on the plane z = 0 at velocity level: unknowns
    /// `[v (3); ω (3); Λ_N; Λ_T; χ_N; χ_T]`, residual `M v − b + F`, ĝ̇_N = v_z, ĝ̇_T = v_xy,
    /// ω_T = ω_xy, ω_N = ω_z. Solved by semi-smooth Newton with the law's tangent.
    fn solve_block(sc: Scaling, b: [f64; 6]) -> (DVector<f64>, [Option<Status>; 3], Case, usize) {
        let n = 6;
        let mut case = Case {
            n,
            mu: 0.5,
            rho: 0.1,
            gamma: 0.05,
            sc,
            sc_couple: sc,
            g_n: 0.0,
            g_t: Vector2::zeros(),
            gn: NodeVector::zeros(),
            gt: TangentialGradient::zeros(),
            curv: None,
            omega_t: Vector2::zeros(),
            w_t: TangentialGradient::zeros(),
            omega_n: 0.0,
            w_n: NodeVector::zeros(),
            phi0: DVector::zeros(n + 6),
        };
        case.gn[2] = 1.0;
        case.gt[(0, 0)] = 1.0;
        case.gt[(1, 1)] = 1.0;
        case.w_t[(0, 3)] = 1.0;
        case.w_t[(1, 4)] = 1.0;
        case.w_n[5] = 1.0;
        let mass = [2.0, 2.0, 2.0, 0.4, 0.4, 0.4];
        let m = case.m();
        let system = |phi: &DVector<f64>| {
            let (mut r, mut k, st) = case.eval(Law::All, phi);
            for i in 0..n {
                r[i] += mass[i] * phi[i] - b[i];
                k[(i, i)] += mass[i];
            }
            (r, k, st)
        };
        let mut phi = DVector::zeros(m);
        for it in 0..100 {
            let (r, k, st) = system(&phi);
            if r.amax() < 1e-13 {
                return (phi, st, case, it);
            }
            let d = k.lu().solve(&(-&r)).expect("regular iteration matrix");
            // Backtracking (Armijo on ‖r‖, spec §10): the undamped semi-smooth Newton iteration
            // of the augmented Lagrangian can cycle between two statuses.
            let norm = r.norm();
            let mut alpha = 1.0;
            while alpha > 1e-6
                && system(&(&phi + alpha * &d)).0.norm() > (1.0 - 1e-4 * alpha) * norm
            {
                alpha *= 0.5;
            }
            phi += alpha * d;
        }
        panic!("semi-smooth Newton did not converge");
    }

    #[test]
    fn converged_states_satisfy_stick_and_slip_relations() {
        let (mu, rho, gamma, m_lin, m_rot) = (0.5, 0.1, 0.05, 2.0, 0.4);
        let cases = [
            // [b_x, b_y, b_z, c_x, c_y, c_z]; B = −b_z = 3 presses onto the plane.
            ("all stick", [0.6, -0.5, -3.0, 0.2, 0.1, 0.1]),
            ("all slip", [2.0, -1.5, -3.0, 0.5, 0.4, -0.4]),
            ("mixed", [-1.0, 1.6, -3.0, -0.1, 0.2, 0.3]),
            ("open", [1.0, 0.5, 2.0, 0.3, 0.2, 0.1]),
        ];
        for (name, b) in cases {
            let mut first: Option<DVector<f64>> = None;
            for sc in [Scaling::new(1.7, 2.3), Scaling::new(0.6, 4.0)] {
                let (phi, st, case, iters) = solve_block(sc, b);
                let (k, n) = (sc.k, 6);
                let (dx, mult) = case.split(&phi);
                let g = case.gaps(&dx);
                let big_b = -b[2];
                let (bt, ct) = (Vector2::new(b[0], b[1]), Vector2::new(b[3], b[4]));
                eprintln!(
                    "Newton {name:9} k={} p={}: {iters} iterations, {st:?}",
                    sc.k, sc.p
                );
                if big_b <= 0.0 {
                    assert_eq!(st, [Some(Status::Gap); 3]);
                    for i in 0..6 {
                        assert!(phi[n + i].abs() < 1e-12);
                    }
                    for i in 0..n {
                        let mass = if i < 3 { m_lin } else { m_rot };
                        assert!((phi[i] - b[i] / mass).abs() < 1e-12);
                    }
                    continue;
                }
                // Normal: Newton law ĝ̇_N = 0, physical impulse κΛ_N = B.
                assert!(g.g_n.abs() < 1e-12);
                assert!((k * mult.lambda_n - big_b).abs() < 1e-12);
                // Sliding.
                let zeta_t = g.zeta_t(sc, mult.lambda_t);
                if bt.norm() <= mu * big_b {
                    assert_eq!(st[0], Some(Status::Stick), "{name}");
                    assert!(g.g_t.norm() < 1e-12, "converged stick: ḡ_T = 0");
                    assert!((k * mult.lambda_t + bt).norm() < 1e-12);
                    assert!(mult.lambda_t.norm() <= mu * mult.lambda_n + 1e-12);
                } else {
                    assert_eq!(st[0], Some(Status::Slip), "{name}");
                    let tau = zeta_t / zeta_t.norm();
                    assert!((mult.lambda_t - mu * mult.lambda_n * tau).norm() < 1e-12);
                    // The reaction opposes the tangential gap rate.
                    assert!((tau + g.g_t / g.g_t.norm()).norm() < 1e-10);
                    let v_exact = bt * (1.0 - mu * big_b / bt.norm()) / m_lin;
                    assert!((g.g_t - v_exact).norm() < 1e-12);
                }
                // Rolling.
                let w = case.rolling_rates(&dx).omega_t;
                if ct.norm() <= rho * big_b {
                    assert_eq!(st[1], Some(Status::Stick), "{name}");
                    assert!(w.norm() < 1e-12, "converged stick: ω_T = 0");
                } else {
                    assert_eq!(st[1], Some(Status::Slip), "{name}");
                    let eta = k * mult.chi_t - sc.p * w;
                    let tau = eta / eta.norm();
                    assert!((mult.chi_t - rho * mult.lambda_n * tau).norm() < 1e-12);
                    let w_exact = ct * (1.0 - rho * big_b / ct.norm()) / m_rot;
                    assert!((w - w_exact).norm() < 1e-12);
                }
                // Spinning.
                let wn = case.spinning_rate(&dx).omega_n;
                if b[5].abs() <= gamma * big_b {
                    assert_eq!(st[2], Some(Status::Stick), "{name}");
                    assert!(wn.abs() < 1e-12, "converged stick: ω_N = 0");
                } else {
                    assert_eq!(st[2], Some(Status::Slip), "{name}");
                    let s = (k * mult.chi_n - sc.p * wn).signum();
                    assert!((mult.chi_n - gamma * mult.lambda_n * s).abs() < 1e-12);
                    assert_eq!(s, -wn.signum(), "the couple opposes the spin");
                    let w_exact = b[5] * (1.0 - gamma * big_b / b[5].abs()) / m_rot;
                    assert!((wn - w_exact).abs() < 1e-12);
                }
                // Physical solution (velocities, impulses κλ) independent of κ, π (spec §7).
                let mut phys = phi.clone();
                for i in n..n + 6 {
                    phys[i] *= k;
                }
                match &first {
                    None => first = Some(phys),
                    Some(f) => assert!((f - &phys).amax() < 1e-11, "{name}: depends on κ, π"),
                }
            }
        }
    }

    #[test]
    fn zero_coefficients_give_no_resistance_and_no_nan() {
        let (k, p) = (SC.k, SC.p);
        let c = SC.gap_factor();
        // Closed contact with ζ_T = 0, η_T = 0, η_N = 0 exactly.
        let mut case = make_case(11, 6, true, Target::Stick, Target::Stick, Target::Stick);
        case.mu = 0.0;
        case.rho = 0.0;
        case.gamma = 0.0;
        let n = case.n;
        let (dx, _) = case.split(&case.phi0);
        let g = case.gaps(&dx);
        let (wt, wn) = (
            case.rolling_rates(&dx).omega_t,
            case.spinning_rate(&dx).omega_n,
        );
        for a in 0..2 {
            case.phi0[n + 1 + a] = p * g.g_t[a] / k;
            case.phi0[n + 4 + a] = p * wt[a] / k;
        }
        case.phi0[n + 3] = p * wn / k;
        let (_, m) = case.split(&case.phi0);
        assert!(g.zeta_t(SC, m.lambda_t).norm() < 1e-15);
        let (f, kk, st) = case.eval(Law::All, &case.phi0);
        assert_eq!(st, [Some(Status::Slip); 3]);
        assert!(f.iter().chain(kk.iter()).all(|v| v.is_finite()));
        // Node rows: the normal reaction only (no tangential, rolling or spinning force).
        let zn = g.zeta_n(SC, m.lambda_n);
        for i in 0..n {
            assert!((f[i] + zn * g.grad_n[i]).abs() < 1e-14);
        }
        // Tangential / couple rows: the gap rows −κ²/π λ, decoupled from everything else.
        for (row, value) in [
            (n + 1, m.lambda_t[0]),
            (n + 2, m.lambda_t[1]),
            (n + 3, m.chi_n),
            (n + 4, m.chi_t[0]),
            (n + 5, m.chi_t[1]),
        ] {
            // Couple rows use the couple scaling.
            let c = if row > n + 2 {
                SC_COUPLE.gap_factor()
            } else {
                c
            };
            assert!((f[row] + c * value).abs() < 1e-14);
            for j in 0..case.m() {
                let expect = if j == row { -c } else { 0.0 };
                assert_eq!(kk[(row, j)], expect, "row {row} col {j}");
                if j != row {
                    assert_eq!(kk[(j, row)], 0.0, "col {row} row {j}");
                }
            }
        }
        // Same with λ_T = 0 (ζ_T = −π ḡ_T ≠ 0): still no tangential force, and F = ∇𝓛, K = FD.
        let mut case2 = make_case(12, 6, true, Target::Slip, Target::Slip, Target::Slip);
        case2.mu = 0.0;
        case2.rho = 0.0;
        case2.gamma = 0.0;
        for i in 1..6 {
            case2.phi0[n + i] = 0.0;
        }
        let (f2, _, _) = case2.eval(Law::All, &case2.phi0);
        let (dx2, m2) = case2.split(&case2.phi0);
        let g2 = case2.gaps(&dx2);
        let zn2 = g2.zeta_n(SC, m2.lambda_n);
        for i in 0..n {
            assert!((f2[i] + zn2 * g2.grad_n[i]).abs() < 1e-14);
        }
        for i in 1..6 {
            assert_eq!(f2[n + i], 0.0);
        }
        let (err, st2) = fd_error(&case2, Law::All);
        assert_eq!(st2, [Some(Status::Slip); 3]);
        assert!(err < TOL, "{err:e}");
        assert!(lagrangian_error(&case2, Law::All) < TOL);
        // Open contact with zero coefficients: plain gap.
        let mut case3 = make_case(13, 6, false, Target::Gap, Target::Gap, Target::Gap);
        case3.mu = 0.0;
        case3.rho = 0.0;
        case3.gamma = 0.0;
        let (_, _, st3) = case3.eval(Law::All, &case3.phi0);
        assert_eq!(st3, [Some(Status::Gap); 3]);
    }

    #[test]
    fn forced_gap_drives_every_multiplier_to_zero() {
        // A state that would be in contact (slip) still gets only the gap rows when forced.
        let case = make_case(21, 6, false, Target::Slip, Target::Slip, Target::Slip);
        let n = case.n;
        let mm = case.m();
        let (_, m) = case.split(&case.phi0);
        let l = Layout::contiguous(n);
        let mut r = DVector::zeros(mm);
        let mut k = DMatrix::zeros(mm, mm);
        {
            let mut out = LocalSystem {
                residual: r.rows_mut(0, mm),
                hessian: k.view_mut((0, 0), (mm, mm)),
                reference: 0.0,
            };
            assert_eq!(sliding_forced_gap(SC, &m, &l, &mut out), Status::Gap);
            assert_eq!(rolling_forced_gap(SC, &m, &l, &mut out), Status::Gap);
            assert_eq!(spinning_forced_gap(SC, &m, &l, &mut out), Status::Gap);
        }
        let c = SC.gap_factor();
        for i in 0..mm {
            let expect = if i < n { 0.0 } else { -c * case.phi0[i] };
            assert!((r[i] - expect).abs() < 1e-15);
            for j in 0..mm {
                let expect = if i == j && i >= n { -c } else { 0.0 };
                assert_eq!(k[(i, j)], expect);
            }
        }
    }

    #[test]
    fn layout_offsets_are_respected() {
        // Multipliers first, node unknowns last, χ before λ: the result must be the permutation
        // of the contiguous one, and nothing else may be touched.
        let case = make_case(31, 6, false, Target::Slip, Target::Slip, Target::SlipNeg);
        let n = case.n;
        let mm = case.m() + 2; // two foreign unknowns the law must leave alone
        let l = Layout {
            x: 7,
            lambda_n: 3,
            lambda_t: 4,
            chi_n: 6,
            chi_t: 1,
        };
        // perm[contiguous index] = index in the shuffled layout.
        let mut perm: Vec<usize> = (0..n).map(|i| l.x + i).collect();
        perm.extend([
            l.lambda_n,
            l.lambda_t,
            l.lambda_t + 1,
            l.chi_n,
            l.chi_t,
            l.chi_t + 1,
        ]);
        let (f, kk, st) = case.eval(Law::All, &case.phi0);
        let (dx, m) = case.split(&case.phi0);
        let gaps = case.gaps(&dx);
        let mut r = DVector::zeros(mm);
        let mut k = DMatrix::zeros(mm, mm);
        {
            let mut out = LocalSystem {
                residual: r.rows_mut(0, mm),
                hessian: k.view_mut((0, 0), (mm, mm)),
                reference: 0.0,
            };
            let s0 = sliding(SC, case.mu, &gaps, None, &m, &l, &mut out);
            let s1 = rolling(
                SC_COUPLE,
                SC,
                case.rho,
                &gaps,
                &case.rolling_rates(&dx),
                &m,
                &l,
                &mut out,
            );
            let s2 = spinning(
                SC_COUPLE,
                SC,
                case.gamma,
                &gaps,
                &case.spinning_rate(&dx),
                &m,
                &l,
                &mut out,
            );
            assert_eq!([Some(s0), Some(s1), Some(s2)], st);
        }
        for i in 0..case.m() {
            assert_eq!(r[perm[i]], f[i]);
            for j in 0..case.m() {
                assert_eq!(k[(perm[i], perm[j])], kk[(i, j)]);
            }
        }
        for foreign in [0, 13] {
            assert_eq!(r[foreign], 0.0);
            assert!(k
                .row(foreign)
                .iter()
                .chain(k.column(foreign).iter())
                .all(|v| *v == 0.0));
        }
    }

    #[test]
    fn storage_beyond_n_is_ignored() {
        // Entries of the fixed-size storage outside the first n are never read into the result,
        // even when they hold NaN.
        let case = make_case(41, 5, true, Target::Slip, Target::Slip, Target::Slip);
        let (f, k, st) = case.eval(Law::All, &case.phi0);
        let (n, rest) = (case.n, MAX_NODE_UNKNOWNS - case.n);
        let (dx, m) = case.split(&case.phi0);
        let mut gaps = case.gaps(&dx);
        let mut roll = case.rolling_rates(&dx);
        let mut spin = case.spinning_rate(&dx);
        let mut curv = case.curv.expect("curvature");
        gaps.grad_n.rows_mut(n, rest).fill(f64::NAN);
        gaps.grad_t.columns_mut(n, rest).fill(f64::NAN);
        roll.grad_t.columns_mut(n, rest).fill(f64::NAN);
        spin.grad_n.rows_mut(n, rest).fill(f64::NAN);
        curv.h_n.rows_mut(n, rest).fill(f64::NAN);
        curv.h_n.columns_mut(n, rest).fill(f64::NAN);
        for h in curv.h_t.iter_mut() {
            h.rows_mut(n, rest).fill(f64::NAN);
            h.columns_mut(n, rest).fill(f64::NAN);
        }
        let mm = case.m();
        let l = Layout::contiguous(n);
        let mut r = DVector::zeros(mm);
        let mut kk = DMatrix::zeros(mm, mm);
        {
            let mut out = LocalSystem {
                residual: r.rows_mut(0, mm),
                hessian: kk.view_mut((0, 0), (mm, mm)),
                reference: 0.0,
            };
            let s0 = sliding(SC, case.mu, &gaps, Some(&curv), &m, &l, &mut out);
            let s1 = rolling(SC_COUPLE, SC, case.rho, &gaps, &roll, &m, &l, &mut out);
            let s2 = spinning(SC_COUPLE, SC, case.gamma, &gaps, &spin, &m, &l, &mut out);
            assert_eq!([Some(s0), Some(s1), Some(s2)], st);
        }
        assert_eq!(r, f);
        assert_eq!(kk, k);
    }

    #[test]
    fn multipliers_and_status_helpers() {
        let m = Multipliers::from_slice(&[1.0, 2.0, 3.0]);
        assert_eq!(m.lambda_n, 1.0);
        assert_eq!(m.lambda_t, Vector2::new(2.0, 3.0));
        assert_eq!((m.chi_n, m.chi_t), (0.0, Vector2::zeros()));
        let m = Multipliers::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!((m.chi_n, m.chi_t), (4.0, Vector2::new(5.0, 6.0)));
        assert_eq!(
            Layout::contiguous(6),
            Layout {
                x: 0,
                lambda_n: 6,
                lambda_t: 7,
                chi_n: 9,
                chi_t: 10
            }
        );
        assert_eq!(
            [
                Status::Gap.code(),
                Status::Stick.code(),
                Status::Slip.code()
            ],
            [0.0, 1.0, 2.0]
        );
        assert!(!Status::Gap.is_closed() && Status::Stick.is_closed() && Status::Slip.is_closed());
        let cx = saltus_core::fd::test_cx(saltus_core::Level::Velocity);
        assert_eq!(Scaling::from_cx(&cx), Scaling::new(cx.k, cx.p));
    }
}
