//! Fixed-size storage of constraint kinematics ([`Kinematics`]) and its finite-difference check
//! ([`check_kinematics`]).

use super::*;
use crate::lie;
use crate::node::NodeState;
use nalgebra::Vector3;

/// Constraint kinematics at one configuration and time: `g`, `g_q`, `g_t`, `∂g_t/∂q` and the
/// per-row second derivatives `H_j = ∂(g_q)_j/∂q` (see the [module documentation](super)).
///
/// Fixed-size storage (about 8 kB, no allocation); the accessors return views of exactly `m`
/// rows and `n` columns.
#[derive(Clone, Debug)]
pub struct Kinematics {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) g: RowVector,
    pub(crate) g_q: RowJacobian,
    pub(crate) g_t: RowVector,
    pub(crate) g_t_q: RowJacobian,
    /// `H_j` of row `j` (leading `n × n` block).
    pub(crate) hess: [LocalMatrix; MAX_ROWS],
    /// Whether the `H_j` are kept (else the setters skip them and they are not to be read).
    pub(crate) hessians: bool,
    /// `∂g_t/∂q` was written since the last [`Kinematics::reset`] (only rheonomic joints
    /// write it: the others leave it zero, and `reset` skips it).
    g_t_q_written: bool,
}

/// Equal sizes and values (whether `∂g_t/∂q` was written, bookkeeping of `reset`, is not
/// compared).
impl PartialEq for Kinematics {
    fn eq(&self, other: &Self) -> bool {
        self.m == other.m
            && self.n == other.n
            && self.g == other.g
            && self.g_q == other.g_q
            && self.g_t == other.g_t
            && self.g_t_q == other.g_t_q
            && self.hess == other.hess
            && self.hessians == other.hessians
    }
}

impl Default for Kinematics {
    /// Empty kinematics (0 rows, 0 unknowns).
    fn default() -> Self {
        Self::zeros(0, 0)
    }
}

impl Kinematics {
    /// Zero kinematics of `m` rows and `n` node unknowns.
    ///
    /// # Panics
    ///
    /// If `m > MAX_ROWS` or `n > MAX_DOFS`.
    pub fn zeros(m: usize, n: usize) -> Self {
        assert!(
            m <= MAX_ROWS && n <= MAX_DOFS,
            "Kinematics: {m} rows and {n} unknowns exceed the limits ({MAX_ROWS} rows, {MAX_DOFS} unknowns)"
        );
        Self {
            m,
            n,
            g: RowVector::zeros(),
            g_q: RowJacobian::zeros(),
            g_t: RowVector::zeros(),
            g_t_q: RowJacobian::zeros(),
            hess: [LocalMatrix::zeros(); MAX_ROWS],
            hessians: true,
            g_t_q_written: false,
        }
    }

    /// Make `self` the zero kinematics of `m` rows and `n` node unknowns in place, keeping the
    /// second derivatives only with `hessians` (a first-order evaluation then neither zeroes
    /// nor copies the `m` blocks `H_j`, which it must not read). No allocation.
    ///
    /// # Panics
    ///
    /// If `m > MAX_ROWS` or `n > MAX_DOFS`.
    pub(crate) fn reset(&mut self, m: usize, n: usize, hessians: bool) {
        assert!(
            m <= MAX_ROWS && n <= MAX_DOFS,
            "Kinematics: {m} rows and {n} unknowns exceed the limits ({MAX_ROWS} rows, {MAX_DOFS} unknowns)"
        );
        self.m = m;
        self.n = n;
        self.g.as_mut_slice().fill(0.0);
        self.g_q.as_mut_slice().fill(0.0);
        self.g_t.as_mut_slice().fill(0.0);
        if self.g_t_q_written {
            self.g_t_q.as_mut_slice().fill(0.0);
            self.g_t_q_written = false;
        }
        self.hessians = hessians;
        if hessians {
            for h in &mut self.hess[..m] {
                h.as_mut_slice().fill(0.0);
            }
        }
    }
    /// Number of rows `m`.
    #[inline]
    pub fn m(&self) -> usize {
        self.m
    }
    /// Number of node unknowns `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }
    /// Constraint values `g` (length `m`).
    #[inline]
    pub fn g(&self) -> RowView<'_> {
        self.g.rows(0, self.m)
    }
    /// Mutable `g`, for joints that write their kinematics by hand.
    #[inline]
    pub fn g_mut(&mut self) -> RowViewMut<'_> {
        self.g.rows_mut(0, self.m)
    }
    /// Jacobian `g_q` (`m × n`, material rotation variations).
    #[inline]
    pub fn g_q(&self) -> JacobianView<'_> {
        self.g_q.view((0, 0), (self.m, self.n))
    }
    /// Mutable `g_q`, for joints that write their derivatives by hand.
    #[inline]
    pub fn g_q_mut(&mut self) -> JacobianViewMut<'_> {
        self.g_q.view_mut((0, 0), (self.m, self.n))
    }
    /// Explicit time derivative `g_t = ∂g/∂t` (length `m`).
    #[inline]
    pub fn g_t(&self) -> RowView<'_> {
        self.g_t.rows(0, self.m)
    }
    /// Mutable `g_t`.
    #[inline]
    pub fn g_t_mut(&mut self) -> RowViewMut<'_> {
        self.g_t.rows_mut(0, self.m)
    }
    /// `∂g_t/∂q` (`m × n`; zero unless `g_t` depends on the configuration).
    #[inline]
    pub fn g_t_q(&self) -> JacobianView<'_> {
        self.g_t_q.view((0, 0), (self.m, self.n))
    }
    /// Mutable `∂g_t/∂q`.
    #[inline]
    pub fn g_t_q_mut(&mut self) -> JacobianViewMut<'_> {
        self.g_t_q_written = true;
        self.g_t_q.view_mut((0, 0), (self.m, self.n))
    }
    /// `g` as a padded fixed-size vector.
    #[inline]
    pub fn g_padded(&self) -> &RowVector {
        &self.g
    }
    /// `g_q` as a padded fixed-size matrix.
    #[inline]
    pub fn g_q_padded(&self) -> &RowJacobian {
        &self.g_q
    }
    /// Set row `j` (value, gradient, second derivative) from a scalar expression.
    pub fn set_row(&mut self, j: usize, s: &Scalar) {
        let (m, n) = (self.m, self.n);
        assert!(j < m, "Kinematics::set_row: row {j} of {m}");
        self.g[j] = s.value;
        for a in 0..n {
            self.g_q[(j, a)] = s.grad[a];
        }
        if !self.hessians {
            return;
        }
        // Column by column: only the leading n × n block (the padding stays zero).
        let (dst, src) = (self.hess[j].as_mut_slice(), s.hess.as_slice());
        for b in 0..n {
            let c = b * MAX_DOFS;
            dst[c..c + n].copy_from_slice(&src[c..c + n]);
        }
    }
    /// Set row `j` to the scalar `u · v`: the same as `set_row(j, &cx.dot(u, v))`, without the
    /// intermediate [`Scalar`] (1.3 kB zeroed and copied per row).
    pub fn set_dot_row(&mut self, j: usize, cx: &KinCx<'_>, u: &KinVec, v: &KinVec) {
        let (m, n) = (self.m, self.n);
        assert!(j < m, "Kinematics::set_dot_row: row {j} of {m}");
        debug_assert_eq!(cx.n(), n);
        let mut grad = LocalVector::zeros();
        let hess = if self.hessians {
            self.hess[j].as_mut_slice().fill(0.0);
            Some(&mut self.hess[j])
        } else {
            None
        };
        self.g[j] = cx.dot_into(u, v, &mut grad, hess);
        for a in 0..n {
            self.g_q[(j, a)] = grad[a];
        }
    }
    /// Set the three rows `j0 .. j0+3` to the inertial components of `u`.
    pub fn set_vector_rows(&mut self, j0: usize, cx: &KinCx<'_>, u: &KinVec) {
        let (m, n) = (self.m, self.n);
        assert!(
            j0 + 3 <= m,
            "Kinematics::set_vector_rows: rows {j0}..{} of {m}",
            j0 + 3
        );
        debug_assert_eq!(cx.n(), n);
        let value = cx.value(u);
        // The rows' three entries of each column (column-major, MAX_ROWS per column).
        for col in self.g_q.as_mut_slice().chunks_exact_mut(MAX_ROWS).take(n) {
            col[j0..j0 + 3].fill(0.0);
        }
        // The Jacobian's nonzero 3 × 3 blocks, straight into the rows.
        cx.for_blocks(u, |o, block| {
            let mut rows = self.g_q.fixed_view_mut::<3, 3>(j0, o);
            rows += block;
        });
        for k in 0..3 {
            let j = j0 + k;
            self.g[j] = value[k];
            if !self.hessians {
                continue;
            }
            self.hess[j].as_mut_slice().fill(0.0);
            if cx.needs_hessians() {
                cx.add_curvature(u, &Vector3::ith(k, 1.0), &mut self.hess[j]);
            }
        }
    }
    /// Add an explicit (configuration-independent) term to `g_j`, e.g. `−θ(t)`.
    pub fn add_value(&mut self, j: usize, value: f64) {
        assert!(j < self.m, "Kinematics::add_value: row {j} of {}", self.m);
        self.g[j] += value;
    }
    /// Add to the explicit time derivative `(g_t)_j`.
    pub fn add_g_t(&mut self, j: usize, value: f64) {
        assert!(j < self.m, "Kinematics::add_g_t: row {j} of {}", self.m);
        self.g_t[j] += value;
    }
    /// Add a configuration-dependent explicit time derivative to row `j`: `s.value` to `g_t`
    /// and `s.grad` to `∂g_t/∂q` (`s.hess` is not needed).
    pub fn add_g_t_scalar(&mut self, j: usize, s: &Scalar) {
        assert!(
            j < self.m,
            "Kinematics::add_g_t_scalar: row {j} of {}",
            self.m
        );
        self.g_t[j] += s.value;
        self.g_t_q_written = true;
        for a in 0..self.n {
            self.g_t_q[(j, a)] += s.grad[a];
        }
    }
    /// Second derivative `H_j = ∂(g_q)_j/∂q` of row `j` (`n × n`).
    pub fn row_hessian(&self, j: usize) -> HessianView<'_> {
        assert!(j < self.m, "Kinematics::row_hessian: row {j} of {}", self.m);
        self.hess[j].view((0, 0), (self.n, self.n))
    }
    /// Mutable `H_j`, for joints that write their derivatives by hand.
    pub fn row_hessian_mut(&mut self, j: usize) -> HessianViewMut<'_> {
        assert!(
            j < self.m,
            "Kinematics::row_hessian_mut: row {j} of {}",
            self.m
        );
        self.hess[j].view_mut((0, 0), (self.n, self.n))
    }
    /// `∂(g_qᵀ μ)/∂q = Σ_j μ_j H_j` (`n × n`, padded) for a fixed `μ` (its first `m` entries).
    ///
    /// # Panics
    ///
    /// If `mu` has fewer than `m` entries.
    pub fn d_gqt_mu(&self, mu: &[f64]) -> LocalMatrix {
        let mut a = LocalMatrix::zeros();
        self.add_d_gqt_mu(&mut a, mu, 1.0);
        a
    }
    /// `out += scale · Σ_j μ_j H_j`.
    pub(crate) fn add_d_gqt_mu(&self, out: &mut LocalMatrix, mu: &[f64], scale: f64) {
        for (h, &mj) in self.hess.iter().zip(&mu[..self.m]) {
            let f = scale * mj;
            if f != 0.0 {
                axpy(out.as_mut_slice(), f, h.as_slice());
            }
        }
    }
    /// `∂(g_q w)/∂q` (`m × n`, padded) for a fixed local velocity `w`: row `j` is `wᵀ H_j`.
    pub fn d_gq_w(&self, w: &LocalVector) -> RowJacobian {
        let mut b = RowJacobian::zeros();
        let w = w.as_slice();
        for j in 0..self.m {
            let h = self.hess[j].as_slice();
            for c in 0..self.n {
                b[(j, c)] = dot(w, &h[c * MAX_DOFS..(c + 1) * MAX_DOFS]);
            }
        }
        b
    }
    /// Constraint rate `ġ = g_q v + g_t` (padded) for the local velocity `v`.
    pub fn rate(&self, v: &LocalVector) -> RowVector {
        let mut r = self.g_t;
        let g_q = self.g_q.as_slice();
        for c in 0..self.n {
            axpy(
                r.as_mut_slice(),
                v[c],
                &g_q[c * MAX_ROWS..(c + 1) * MAX_ROWS],
            );
        }
        r
    }
}

/// `y += a x` (slices of equal length).
#[inline]
pub(crate) fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// `x · y` (slices of equal length).
#[inline]
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(x, y)| x * y).sum()
}

/// `out += s aᵀ x` over the first `n` node unknowns (`a` padded, `m × n`).
pub(crate) fn add_at_x(out: &mut LocalVector, a: &RowJacobian, x: &RowVector, s: f64, n: usize) {
    let a = a.as_slice();
    for c in 0..n {
        out[c] += s * dot(&a[c * MAX_ROWS..(c + 1) * MAX_ROWS], x.as_slice());
    }
}

/// `out += s aᵀ b` over the leading `n × n` block (`a`, `b` padded, `m × n`).
pub(crate) fn add_at_b(out: &mut LocalMatrix, a: &RowJacobian, b: &RowJacobian, s: f64, n: usize) {
    // Column c of aᵀ b is Σ_r b_rc (row r of a): axpys over the contiguous columns of aᵀ.
    let at = a.transpose();
    let (at, b, o) = (at.as_slice(), b.as_slice(), out.as_mut_slice());
    for c in 0..n {
        let col = &mut o[c * MAX_DOFS..(c + 1) * MAX_DOFS];
        for r in 0..MAX_ROWS {
            let f = s * b[c * MAX_ROWS + r];
            if f != 0.0 {
                axpy(col, f, &at[r * MAX_DOFS..(r + 1) * MAX_DOFS]);
            }
        }
    }
}

/// Largest finite-difference errors of a constraint's kinematics, each relative to
/// `1 + max|analytic|` (see [`check_kinematics`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KinematicsCheck {
    /// `g_q` against central differences of `g` under material perturbations.
    pub jacobian: f64,
    /// `H_j` against central differences of `g_q`.
    pub hessian: f64,
    /// `g_q v + g_t` against the time derivative of `g` along `x + v τ`, `R exp(Ω τ)`, `t + τ`.
    pub rate: f64,
}

impl KinematicsCheck {
    /// The largest of the three errors.
    pub fn max(&self) -> f64 {
        self.jacobian.max(self.hessian).max(self.rate)
    }
}

fn perturbed(layout: &Layout, nodes: &[NodeState], j: usize, d: f64) -> Vec<NodeState> {
    let mut out = nodes.to_vec();
    let node = (0..layout.len())
        .rev()
        .find(|&i| layout.offset(i) <= j)
        .unwrap_or(0);
    let dof = j - layout.offset(node);
    if dof < 3 {
        out[node].x[dof] += d;
    } else {
        out[node].r = lie::perturb(&out[node].r, &Vector3::ith(dof - 3, d));
    }
    out
}

/// Check a constraint's kinematics against central differences with step `eps` at the node
/// states `nodes` (local order, with velocities) and time `t`: `g_q` and every `H_j`
/// (material perturbations `R exp(ε e_k)`), and `ġ = g_q v + g_t` along the motion
/// `x + v τ`, `R exp(Ω τ)`, `t + τ`. Use it when writing a new joint; errors of order
/// `eps²` (truncation) and `1e-16/eps` (round-off) are expected. Also checks that a
/// first-order evaluation ([`KinCx::first_order`]) gives the same `g`, `g_q`, `g_t`, `∂g_t/∂q`
/// (its mismatch, if any, is counted in the `jacobian` error).
///
/// # Panics
///
/// If the constraint's layout does not [fit](Layout::fits).
pub fn check_kinematics<C: BilateralConstraint + ?Sized>(
    constraint: &C,
    nodes: &[NodeState],
    t: f64,
    eps: f64,
) -> KinematicsCheck {
    let layout = Layout::new(constraint.node_kinds());
    let eval = |q: &[NodeState], t: f64| KinCx::new(q, t, &layout).kinematics(constraint);
    let kin = eval(nodes, t);
    let (m, n) = (kin.m(), kin.n());
    let rel = |err: f64, reference: f64| err / (1.0 + reference);
    let first = KinCx::new(nodes, t, &layout)
        .first_order()
        .kinematics(constraint);
    let mut jac_err: f64 = (first.g - kin.g)
        .amax()
        .max((first.g_q - kin.g_q).amax())
        .max((first.g_t - kin.g_t).amax())
        .max((first.g_t_q - kin.g_t_q).amax());
    let mut hess_err: f64 = 0.0;
    let mut hess_ref: f64 = 0.0;
    for b in 0..n {
        let kp = eval(&perturbed(&layout, nodes, b, eps), t);
        let km = eval(&perturbed(&layout, nodes, b, -eps), t);
        let dg = (kp.g - km.g) / (2.0 * eps);
        jac_err = jac_err.max((dg - kin.g_q.column(b)).amax());
        let dgq = (kp.g_q - km.g_q) / (2.0 * eps);
        for j in 0..m {
            let col = kin.hess[j].column(b);
            hess_err = hess_err.max((dgq.row(j).transpose() - col).amax());
            hess_ref = hess_ref.max(col.amax());
        }
    }
    let v = layout.velocity(nodes);
    let moved = |tau: f64| -> Vec<NodeState> {
        nodes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut s = *s;
                s.x += s.v * tau;
                if layout.is_frame(i) {
                    s.r = lie::perturb(&s.r, &(s.omega * tau));
                }
                s
            })
            .collect()
    };
    let gdot = (eval(&moved(eps), t + eps).g - eval(&moved(-eps), t - eps).g) / (2.0 * eps);
    let rate = kin.rate(&v);
    KinematicsCheck {
        jacobian: rel(jac_err, kin.g_q.amax()),
        hessian: rel(hess_err, hess_ref),
        rate: rel((gdot - rate).amax(), rate.amax()),
    }
}
