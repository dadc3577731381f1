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

mod rolling;
mod sliding;
mod spinning;
#[cfg(test)]
mod tests;

use crate::element::{LocalSystem, StepCx};
pub use rolling::{rolling, rolling_forced_gap};
pub use sliding::{sliding, sliding_forced_gap};
pub use spinning::{spinning, spinning_forced_gap};

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
    /// Whether the sink keeps the tangent `K` (default). A residual-only sink returns `false`:
    /// the laws then skip forming the tangent blocks (a residual check of a Newton loop).
    fn tangents(&self) -> bool {
        true
    }
}

/// A [`Sink`] that keeps the force vector only: the laws skip their tangent blocks.
pub struct ResidualOnly<'a, S: Sink + ?Sized>(pub &'a mut S);

impl<S: Sink + ?Sized> Sink for ResidualOnly<'_, S> {
    #[inline]
    fn add_residual(&mut self, i: usize, value: f64) {
        self.0.add_residual(i, value);
    }
    #[inline]
    fn add_tangent(&mut self, _i: usize, _j: usize, _value: f64) {}
    #[inline]
    fn tangents(&self) -> bool {
        false
    }
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
