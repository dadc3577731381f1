//! Sparse LU refactorization with a fixed pivot sequence (the structure of a previous
//! factorization of the same pattern): left-looking, column by column, along the known patterns
//! of `L` and `U` — no pivot search and no structure search (depth-first reach) per
//! factorization. A pivot that became too small for the old sequence is reported, and the
//! caller factorizes with partial pivoting again.
//!
//! With `P A Q = L U` (row `i` of `P A Q` is row `row_perm[i]` of `A`, column `j` is column
//! `col_perm[j]`), column `j` of the factors is computed from column `col_perm[j]` of `A`
//! scattered into pivot positions, `x = P a`:
//!
//! ```text
//! for k in pattern(U[:, j]), ascending:   U[k, j] = x[k];  x[r] −= L[r, k] U[k, j]  (r > k)
//! U[j, j] = x[j];                          L[r, j] = x[r] / U[j, j]                   (r > j)
//! ```

use faer::sparse::SparseColMatRef;

/// Smallest accepted `|U_jj| / max_r |x_r|` over the column (pivot growth ≤ 1/τ): below it the
/// old pivot order is abandoned for a factorization with partial pivoting.
const PIVOT_TOL: f64 = 1e-2;

/// Factors with a fixed pivot order and fixed patterns (see the module docs).
#[derive(Debug, Default)]
pub(super) struct StaticLu {
    n: usize,
    row_perm: Vec<usize>,
    /// Inverse of `row_perm`: pivot position of original row `r`.
    row_pos: Vec<usize>,
    col_perm: Vec<usize>,
    /// Strictly lower part of `L` by columns (rows in pivot positions, any order).
    l_ptr: Vec<usize>,
    l_idx: Vec<usize>,
    l_val: Vec<f64>,
    /// Strictly upper part of `U` by columns (rows ascending).
    u_ptr: Vec<usize>,
    u_idx: Vec<usize>,
    u_val: Vec<f64>,
    u_diag: Vec<f64>,
    /// Dense work vector, zero between columns.
    x: Vec<f64>,
    /// Sorting buffer of [`StaticLu::set_from`].
    pairs: Vec<(usize, f64)>,
    /// Largest `L` and `U` pattern sizes stored so far (for [`StaticLu::reserve_twice`]).
    max_l: usize,
    max_u: usize,
    /// Whether the stored structure may be refactorized.
    pub(super) valid: bool,
}

/// The old pivot sequence no longer serves (small pivot, or an entry outside the patterns).
#[derive(Debug)]
pub(super) struct PivotFailure;

impl StaticLu {
    /// Take the structure and values of factors `P A Q = L U` computed with pivoting (`l` unit
    /// lower triangular with its diagonal stored, `u` upper triangular; row indices in pivot
    /// positions, in any order). Reuses the storage's capacity.
    pub(super) fn set_from(
        &mut self,
        l: SparseColMatRef<'_, usize, f64>,
        u: SparseColMatRef<'_, usize, f64>,
        row_perm: &[usize],
        col_perm: &[usize],
    ) {
        let n = row_perm.len();
        self.n = n;
        self.row_perm.clear();
        self.row_perm.extend_from_slice(row_perm);
        self.row_pos.clear();
        self.row_pos.resize(n, 0);
        for (i, &r) in row_perm.iter().enumerate() {
            self.row_pos[r] = i;
        }
        self.col_perm.clear();
        self.col_perm.extend_from_slice(col_perm);
        self.l_ptr.clear();
        self.l_idx.clear();
        self.l_val.clear();
        self.u_ptr.clear();
        self.u_idx.clear();
        self.u_val.clear();
        self.u_diag.clear();
        self.u_diag.resize(n, 0.0);
        self.l_ptr.push(0);
        self.u_ptr.push(0);
        for j in 0..n {
            for (&r, &v) in l.row_idx_of_col_raw(j).iter().zip(l.val_of_col(j)) {
                if r > j {
                    self.l_idx.push(r);
                    self.l_val.push(v);
                }
            }
            self.l_ptr.push(self.l_idx.len());
            self.pairs.clear();
            for (&r, &v) in u.row_idx_of_col_raw(j).iter().zip(u.val_of_col(j)) {
                if r == j {
                    self.u_diag[j] = v;
                } else {
                    self.pairs.push((r, v));
                }
            }
            // Ascending rows: a valid elimination order for the left-looking update.
            self.pairs.sort_unstable_by_key(|p| p.0);
            for &(r, v) in &self.pairs {
                self.u_idx.push(r);
                self.u_val.push(v);
            }
            self.u_ptr.push(self.u_idx.len());
        }
        self.x.clear();
        self.x.resize(n, 0.0);
        self.max_l = self.max_l.max(self.l_idx.len());
        self.max_u = self.max_u.max(self.u_idx.len());
        self.valid = true;
    }

    /// Reserve room for patterns twice the size of the largest stored so far (the capacity
    /// stays bounded over any number of patterns).
    pub(super) fn reserve_twice(&mut self) {
        let (l, u) = (2 * self.max_l, 2 * self.max_u);
        self.l_idx.reserve(l.saturating_sub(self.l_idx.len()));
        self.l_val.reserve(l.saturating_sub(self.l_val.len()));
        self.u_idx.reserve(u.saturating_sub(self.u_idx.len()));
        self.u_val.reserve(u.saturating_sub(self.u_val.len()));
    }

    /// Refactorize `a` (CSC of the same pattern) along the stored pivot order and patterns.
    /// On failure the stored values are garbage and `valid` is false.
    pub(super) fn refactor(
        &mut self,
        col_ptr: &[usize],
        rows: &[usize],
        values: &[f64],
    ) -> Result<(), PivotFailure> {
        let fail = |s: &mut Self| {
            s.valid = false;
            s.x.fill(0.0);
            Err(PivotFailure)
        };
        for j in 0..self.n {
            let c = self.col_perm[j];
            for k in col_ptr[c]..col_ptr[c + 1] {
                self.x[self.row_pos[rows[k]]] = values[k];
            }
            let (u0, u1) = (self.u_ptr[j], self.u_ptr[j + 1]);
            let x = &mut self.x;
            for (&k, u) in self.u_idx[u0..u1].iter().zip(&mut self.u_val[u0..u1]) {
                let ukj = x[k];
                x[k] = 0.0;
                *u = ukj;
                if ukj != 0.0 {
                    let (a, b) = (self.l_ptr[k], self.l_ptr[k + 1]);
                    for (&i, &l) in self.l_idx[a..b].iter().zip(&self.l_val[a..b]) {
                        x[i] -= l * ukj;
                    }
                }
            }
            let d = self.x[j];
            self.x[j] = 0.0;
            let (l0, l1) = (self.l_ptr[j], self.l_ptr[j + 1]);
            // Largest candidate below the pivot; a NaN propagates (and fails the test below).
            let big = self.l_idx[l0..l1].iter().fold(0.0f64, |m, &r| {
                let v = self.x[r].abs();
                if v > m || v.is_nan() {
                    v
                } else {
                    m
                }
            });
            if !(d.is_finite() && big.is_finite() && d.abs() >= PIVOT_TOL * big && d != 0.0) {
                return fail(self);
            }
            self.u_diag[j] = d;
            let inv = 1.0 / d;
            for q in l0..l1 {
                let r = self.l_idx[q];
                self.l_val[q] = self.x[r] * inv;
                self.x[r] = 0.0;
            }
            // An entry of `a` outside the stored patterns would be left in `x` (fill outside
            // them cannot occur: the patterns are faer's full structural reach, see the pinned
            // version in the workspace manifest).
            for k in col_ptr[c]..col_ptr[c + 1] {
                if self.x[self.row_pos[rows[k]]] != 0.0 {
                    return fail(self);
                }
            }
        }
        Ok(())
    }

    /// Solve `A x = b` in place with the stored factors.
    pub(super) fn solve(&mut self, b: &mut [f64]) {
        let n = self.n;
        let y = &mut self.x;
        for (yi, &r) in y.iter_mut().zip(&self.row_perm) {
            *yi = b[r];
        }
        for j in 0..n {
            let yj = y[j];
            if yj != 0.0 {
                let (a, b) = (self.l_ptr[j], self.l_ptr[j + 1]);
                for (&i, &l) in self.l_idx[a..b].iter().zip(&self.l_val[a..b]) {
                    y[i] -= l * yj;
                }
            }
        }
        for j in (0..n).rev() {
            y[j] /= self.u_diag[j];
            let yj = y[j];
            if yj != 0.0 {
                let (a, b) = (self.u_ptr[j], self.u_ptr[j + 1]);
                for (&i, &u) in self.u_idx[a..b].iter().zip(&self.u_val[a..b]) {
                    y[i] -= u * yj;
                }
            }
        }
        for (j, &c) in self.col_perm.iter().enumerate() {
            b[c] = y[j];
        }
        y.fill(0.0);
    }

    /// Capacity of the stored patterns (`L`, `U`), for tests of the storage bound.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> (usize, usize) {
        (self.l_idx.capacity(), self.u_idx.capacity())
    }

    /// The pivots `U_jj`.
    pub(super) fn pivots(&self) -> &[f64] {
        &self.u_diag
    }

    /// Row and column permutations (`row_perm`, `col_perm`).
    pub(super) fn permutations(&self) -> (&[usize], &[usize]) {
        (&self.row_perm, &self.col_perm)
    }
}
