//! LU factorization of the iteration matrices, by size: a dense LU with partial pivoting up to
//! [`DENSE_MAX`] unknowns, a sparse LU above: a fill-reducing column order (faer's COLAMD, or
//! for saddle-point patterns AMD on the node block with each multiplier after its nodes), a
//! factorization with threshold pivoting that prefers the diagonal, then refactorizations
//! along its pivot order and patterns (`static_lu`) while their pivots stay acceptable. Both
//! keep their storage and (sparse) column order while the pattern generation holds. Pivoting:
//! the iteration matrices are unsymmetric (friction, Lie-group tangents) and their multiplier
//! diagonals can vanish (closed contacts).
//!
//! Both keep their factors (`P A Q = L U`, `L` unit lower triangular, `Q = I` for the dense
//! LU), so besides solves they give the sign and magnitude of `det A` ([`Lu::determinant`]) at
//! the cost of one pass over `U`'s diagonal.

mod ordering;
mod static_lu;

use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuSymbolicParams};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::SymbolicSparseColMatRef;
use static_lu::StaticLu;

/// Largest order factorized by the dense LU. Measured with `benches/lu.rs` on the iteration
/// matrices of rigid chains and beams (factorization + solve, single thread), against the
/// sparse refactorization along a fixed pivot order: dense/sparse time 0.5–0.7 at n = 11–44,
/// 1.0 at n = 48–66, 1.4 at n = 72–88, 2.2 at n = 132.
///
/// The dense LU is this module's unblocked kernel (`dense_lu`), not faer's blocked one: on
/// these matrices it took 0.45–0.8 of faer's time up to n = 132 (faer's recursion and SIMD
/// dispatch outweigh the arithmetic at these sizes, and the kernel skips the structural zeros
/// of the rank-one updates).
pub const DENSE_MAX: usize = 48;

/// Failure of the LU factorization.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinearError {
    /// The matrix storage is not a plain CSC (offset indptr) or has bad indices.
    #[error("malformed sparse matrix: {0}")]
    Malformed(String),
    /// Symbolic analysis failed.
    #[error("symbolic LU failed: {0}")]
    Symbolic(String),
    /// Numeric factorization failed (singular or non-finite matrix).
    #[error("numeric LU failed (singular or non-finite iteration matrix): {0}")]
    Numeric(String),
    /// Workspace allocation failed.
    #[error("out of memory for the LU workspace")]
    OutOfMemory,
}

/// The CSC pattern of `a` for faer: order, column pointers and checked structure.
fn pattern(
    a: &sprs::CsMat<f64>,
) -> Result<(usize, &[usize], SymbolicSparseColMatRef<'_, usize>), LinearError> {
    let n = a.rows();
    let col_ptr = a.indptr().into_raw_storage();
    if col_ptr.first().is_some_and(|&p| p != 0) {
        return Err(LinearError::Malformed(
            "CSC index pointer has an offset".into(),
        ));
    }
    let pattern = SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, a.indices());
    Ok((n, col_ptr, pattern))
}

/// Sign and magnitude of a determinant, `det A = sign · exp(ln_abs)` (the magnitude of the
/// determinant of an iteration matrix over- or underflows `f64` for all but tiny models).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Determinant {
    /// `+1`, `−1`, or `0` when a pivot of `U` is zero or not finite (numerically singular).
    pub sign: i8,
    /// `ln |det A|` (`−∞` when `sign == 0`).
    pub ln_abs: f64,
}

/// Sign of a permutation given as `perm[i]` = image of `i`: `(−1)^(n − cycles)`.
fn permutation_sign(perm: &[usize], visited: &mut [bool]) -> i8 {
    visited.fill(false);
    let mut transpositions = 0usize;
    for start in 0..perm.len() {
        if visited[start] {
            continue;
        }
        let mut i = start;
        let mut len = 0usize;
        while !visited[i] {
            visited[i] = true;
            i = perm[i];
            len += 1;
        }
        transpositions += len - 1;
    }
    if transpositions.is_multiple_of(2) {
        1
    } else {
        -1
    }
}

/// Dense factors: the matrix overwritten by `L` (strictly lower part) and `U` (upper part),
/// column-major, and the row permutation.
struct Dense {
    n: usize,
    lu: Vec<f64>,
    perm: Vec<usize>,
    /// Row transpositions of the factorization (`sgn P = (−1)^count`).
    transpositions: usize,
    /// Permuted right-hand side of [`dense_solve`].
    work: Vec<f64>,
}

/// Unblocked LU with partial pivoting of the column-major `n × n` matrix `a`, in place
/// (`P A = L U`: `L` unit lower triangular below the diagonal, `U` on and above it; row `i` of
/// `P A` is row `perm[i]` of `A`). Returns the number of row transpositions. A zero pivot is
/// left in `U` (its solves give non-finite values, which the callers detect). Allocates
/// nothing: also for small dense blocks elsewhere (the solvers' block-diagonal inverses).
pub fn dense_lu(a: &mut [f64], n: usize, perm: &mut [usize]) -> usize {
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    let mut transpositions = 0;
    for k in 0..n {
        let col = &a[k * n..(k + 1) * n];
        let mut p = k;
        let mut best = col[k].abs();
        for (i, v) in col.iter().enumerate().skip(k + 1) {
            if v.abs() > best {
                best = v.abs();
                p = i;
            }
        }
        if p != k {
            for j in 0..n {
                a.swap(j * n + k, j * n + p);
            }
            perm.swap(k, p);
            transpositions += 1;
        }
        let (left, right) = a.split_at_mut((k + 1) * n);
        let col = &mut left[k * n..];
        let pivot = col[k];
        if pivot != 0.0 {
            let inv = 1.0 / pivot;
            for v in &mut col[k + 1..] {
                *v *= inv;
            }
        }
        // Rank-one update of the trailing columns.
        for colj in right.chunks_exact_mut(n) {
            let akj = colj[k];
            if akj != 0.0 {
                for (x, l) in colj[k + 1..].iter_mut().zip(&col[k + 1..]) {
                    *x -= l * akj;
                }
            }
        }
    }
    transpositions
}

/// Solve `A x = b` in place with the factors of [`dense_lu`] (`work`: `n` scratch entries).
pub fn dense_solve_in_place(lu: &[f64], n: usize, perm: &[usize], b: &mut [f64], work: &mut [f64]) {
    for (w, &p) in work.iter_mut().zip(perm) {
        *w = b[p];
    }
    b.copy_from_slice(&work[..n]);
    for j in 0..n {
        let xj = b[j];
        if xj != 0.0 {
            for (x, l) in b[j + 1..].iter_mut().zip(&lu[j * n + j + 1..(j + 1) * n]) {
                *x -= l * xj;
            }
        }
    }
    for j in (0..n).rev() {
        b[j] /= lu[j * n + j];
        let xj = b[j];
        for (x, u) in b[..j].iter_mut().zip(&lu[j * n..j * n + j]) {
            *x -= u * xj;
        }
    }
}

/// LU solver of one pattern: dense below `Lu::dense_max` unknowns, sparse above, keeping the
/// column order and all storage between calls (no allocation after [`Lu::analyze`] while the
/// factors' fill stays within the reserved room).
pub struct Lu {
    generation: Option<u64>,
    /// Dense factors when the order is at most `dense_max`.
    dense: Option<Dense>,
    /// Fill-reducing column order of the sparse pattern (see [`Lu::set_primary`]); empty for
    /// the dense path.
    col_perm: Vec<usize>,
    /// The sparse factors: from a factorization with threshold pivoting, then refactorized
    /// along its pivot order and patterns while its pivots stay acceptable.
    fixed: StaticLu,
    /// Whether the factors belong to a successful factorization.
    factorized: bool,
    dense_max: usize,
    /// Number of leading node unknowns of the patterns to come (the rest are multipliers):
    /// sparse patterns are then ordered by [`ordering::saddle_point_order`]; `None`: COLAMD.
    primary: Option<usize>,
    /// Number of symbolic analyses performed (for benchmarks and tests).
    pub symbolic_count: usize,
    /// Number of numeric factorizations performed.
    pub numeric_count: usize,
    /// Of these, sparse factorizations with a pivot and structure search (the others reuse
    /// the pivot order and patterns of the last one, of the diagonal pivots, or adopted from
    /// another solver: [`Lu::adopt_pivot_order`]; dense ones are not counted).
    pub pivoting_count: usize,
    /// The diagonal pivots were tried on the current pattern (see [`Lu::factorize`]).
    diagonal_tried: bool,
}

impl std::fmt::Debug for Lu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lu")
            .field("generation", &self.generation)
            .field("dense", &self.dense.is_some())
            .field("symbolic_count", &self.symbolic_count)
            .field("numeric_count", &self.numeric_count)
            .finish()
    }
}

impl Default for Lu {
    fn default() -> Self {
        Self::new()
    }
}

impl Lu {
    /// A solver with no factorization yet (sequential faer kernels, dense up to [`DENSE_MAX`]).
    pub fn new() -> Self {
        Self {
            generation: None,
            dense: None,
            col_perm: Vec::new(),
            fixed: StaticLu::default(),
            factorized: false,
            dense_max: DENSE_MAX,
            primary: None,
            symbolic_count: 0,
            numeric_count: 0,
            pivoting_count: 0,
            diagonal_tried: false,
        }
    }

    /// The same solver factorizing orders up to `dense_max` densely (0: always sparse,
    /// `usize::MAX`: always dense); for benchmarks and tests of the two paths.
    pub fn with_dense_max(mut self, dense_max: usize) -> Self {
        self.dense_max = dense_max;
        self.generation = None;
        self
    }

    /// Declare that the first `primary` unknowns of the next patterns are node unknowns and the
    /// rest multipliers (orders each multiplier after its nodes; see the `ordering` module), or
    /// (`None`) nothing: faer's COLAMD order. Takes effect at the next analysis.
    pub fn set_primary(&mut self, primary: Option<usize>) {
        self.primary = primary;
    }

    /// Unknowns `< kinds(n)` are node unknowns for the pivot choice of an order-`n` pattern
    /// (all of them when no split was declared).
    fn kinds(&self, n: usize) -> usize {
        self.primary.unwrap_or(n).min(n)
    }

    /// Whether the current pattern is factorized densely.
    pub fn is_dense(&self) -> bool {
        self.dense.is_some()
    }

    /// Analysis of the pattern of `a` for pattern `generation`: the choice dense or sparse, for
    /// sparse the column order and storage for the factors sized by a sample factorization:
    /// everything a later [`Lu::factorize`] of the same generation would otherwise allocate.
    /// A no-op when `generation` was already analyzed.
    pub fn analyze(&mut self, a: &sprs::CsMat<f64>, generation: u64) -> Result<(), LinearError> {
        self.analyze_pattern(a, generation, true)
    }

    /// [`Lu::analyze`]; without `size_storage` the factors' storage grows at the first
    /// factorization instead of being sized by a sample (a new pattern met inside a step:
    /// after a topology change, which allocates anyway).
    fn analyze_pattern(
        &mut self,
        a: &sprs::CsMat<f64>,
        generation: u64,
        size_storage: bool,
    ) -> Result<(), LinearError> {
        if self.generation == Some(generation) {
            return Ok(());
        }
        let (n, col_ptr, pattern) = pattern(a)?;
        self.factorized = false;
        if n > static_lu::MAX_ORDER {
            return Err(LinearError::Malformed(format!(
                "order {n} above {}, the largest the sparse LU indexes",
                static_lu::MAX_ORDER
            )));
        }
        if n <= self.dense_max {
            self.dense = Some(Dense {
                n,
                lu: vec![0.0; n * n],
                perm: vec![0; n],
                transpositions: 0,
                work: vec![0.0; n],
            });
            self.col_perm.clear();
        } else {
            self.dense = None;
            // The column order: nodes by AMD, each multiplier after its nodes, when the stage
            // declared its node unknowns; faer's COLAMD otherwise. The numeric factorizations
            // are this module's (`StaticLu::factor`: threshold pivoting with a diagonal
            // preference, then refactorizations along its pivot order).
            self.col_perm.clear();
            match self
                .primary
                .and_then(|p| ordering::saddle_point_order(col_ptr, a.indices(), p))
            {
                Some(order) => self.col_perm.extend_from_slice(&order),
                None => {
                    let params = LuSymbolicParams {
                        supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
                        ..Default::default()
                    };
                    let sym = factorize_symbolic_lu(pattern, params)
                        .map_err(|e| LinearError::Symbolic(format!("{e:?}")))?;
                    self.col_perm.extend_from_slice(sym.col_perm().arrays().0);
                }
            }
            if size_storage {
                // Size the factors' storage with a sample of strong diagonals (diagonal pivots:
                // the fill of the column order); room for twice that below, for pivot orders
                // found later (an active-set change) without allocating inside a step.
                let values: Vec<f64> = col_ptr
                    .windows(2)
                    .enumerate()
                    .flat_map(|(col, range)| {
                        a.indices()[range[0]..range[1]].iter().map(move |&r| {
                            if r == col {
                                n as f64 + 1.0
                            } else {
                                0.5
                            }
                        })
                    })
                    .collect();
                // A failure (singular sample) only leaves less storage sized.
                let _ =
                    self.fixed
                        .factor(col_ptr, a.indices(), &values, &self.col_perm, self.kinds(n));
                self.fixed.reserve_twice();
                // The structure of diagonal pivots (tried first with declared node unknowns,
                // see `factorize`): its work arrays sized here too.
                if self.primary.is_some() {
                    self.fixed.symbolic_diagonal(
                        col_ptr,
                        a.indices(),
                        &self.col_perm,
                        self.kinds(n),
                    );
                }
            }
            self.fixed.valid = false;
            self.diagonal_tried = false;
        }
        self.generation = Some(generation);
        self.symbolic_count += 1;
        Ok(())
    }

    /// Whether the current analysis is that of pattern `generation`.
    pub fn analyzed_for(&self, generation: u64) -> bool {
        self.generation == Some(generation)
    }

    /// The constant-time part of [`Lu::adopt_pivot_order`]'s conditions: both analyzed and
    /// sparse with the same declared node unknowns, `other` factorized and this one not (a
    /// caller checks it before comparing patterns).
    pub fn may_adopt(&self, other: &Lu) -> bool {
        !self.fixed.valid
            && other.fixed.valid
            && self.generation.is_some()
            && other.generation.is_some()
            && self.dense.is_none()
            && other.dense.is_none()
            && self.primary == other.primary
    }

    /// Start from `other`'s pivot order and factor patterns instead of a pivot search at the
    /// first factorization of the current pattern: for two solvers analyzed on matrices of the
    /// same pattern (a scheme's stages on one model), where `other` has factorized and this
    /// one has not. The next [`Lu::factorize`] refactorizes along them, and searches pivots
    /// only if one fails the refactorization's test, as for any reused order. Returns whether
    /// the structure was taken (both sparse with the same column order and entry count).
    pub fn adopt_pivot_order(&mut self, other: &Lu) -> bool {
        let fits = self.may_adopt(other)
            && self.fixed.entries() == other.fixed.entries()
            && self.col_perm == other.col_perm;
        if fits {
            self.fixed.copy_structure(&other.fixed);
        }
        fits
    }

    /// Factorize `a` (square CSC), analyzing its pattern first if `generation` is new (see
    /// [`Lu::analyze`]); the numeric factorization reuses storage. A matrix of another pattern
    /// must come with another `generation`: within one, the refactorization trusts the
    /// analyzed pattern (it checks the number of entries only).
    pub fn factorize(&mut self, a: &sprs::CsMat<f64>, generation: u64) -> Result<(), LinearError> {
        self.factorize_fused(a, generation, None).map(|_| ())
    }

    /// [`Lu::factorize`] followed by [`Lu::solve_in_place`] of `b`, with the same result to
    /// the bit. A refactorization along the stored pivot order applies the forward
    /// substitution column by column as `L` is computed, saving a pass over `L` (the solve's
    /// larger half of the memory traffic on large models).
    pub fn factorize_solve(
        &mut self,
        a: &sprs::CsMat<f64>,
        generation: u64,
        b: &mut [f64],
    ) -> Result<(), LinearError> {
        if !self.factorize_fused(a, generation, Some(&mut *b))? {
            self.solve_in_place(b)?;
        }
        Ok(())
    }

    /// [`Lu::factorize`]; with `b`, solved on the way where the refactorization can (returns
    /// whether it was).
    fn factorize_fused(
        &mut self,
        a: &sprs::CsMat<f64>,
        generation: u64,
        b: Option<&mut [f64]>,
    ) -> Result<bool, LinearError> {
        self.analyze_pattern(a, generation, false)?;
        let mut solved = false;
        self.factorized = false;
        if let Some(d) = self.dense.as_mut() {
            let col_ptr = a.indptr().into_raw_storage();
            if col_ptr.len() != d.n + 1 || col_ptr.first().is_some_and(|&p| p != 0) {
                return Err(LinearError::Malformed(
                    "CSC index pointer does not match the analyzed order".into(),
                ));
            }
            // Scatter the CSC values into the column-major dense storage.
            let n = d.n;
            d.lu.fill(0.0);
            let (rows, values) = (a.indices(), a.data());
            for (j, range) in col_ptr.windows(2).enumerate() {
                let col = &mut d.lu[j * n..(j + 1) * n];
                for k in range[0]..range[1] {
                    col[rows[k]] = values[k];
                }
            }
            d.transpositions = dense_lu(&mut d.lu, n, &mut d.perm);
        } else {
            if self.col_perm.is_empty() {
                return Err(LinearError::Symbolic("no symbolic factorization".into()));
            }
            // The pattern is the analyzed one (same generation): the refactorization reads the
            // raw arrays; the pivoting factorization checks them.
            let col_ptr = a.indptr().into_raw_storage();
            let refactored = self.fixed.valid
                && col_ptr.len() == self.fixed.pivots().len() + 1
                && match self.fixed.refactor_solve(col_ptr, a.indices(), a.data(), b) {
                    Ok(fused) => {
                        solved = fused;
                        true
                    }
                    Err(_) => false,
                };
            // A new pattern of a stage with contacts: pivots on the diagonal first (the
            // saddle-point order is made for them), along the structure they imply; a pivot
            // search only if one of them fails.
            let diagonal = !refactored && self.primary.is_some() && !self.diagonal_tried && {
                self.diagonal_tried = true;
                pattern(a)?;
                let n = col_ptr.len() - 1;
                self.fixed
                    .symbolic_diagonal(col_ptr, a.indices(), &self.col_perm, self.kinds(n));
                self.fixed.refactor(col_ptr, a.indices(), a.data()).is_ok()
            };
            if !refactored && !diagonal {
                pattern(a)?;
                let n = col_ptr.len() - 1;
                self.fixed
                    .factor(
                        col_ptr,
                        a.indices(),
                        a.data(),
                        &self.col_perm,
                        self.kinds(n),
                    )
                    .map_err(|e| {
                        LinearError::Numeric(format!(
                            "no nonzero pivot in column {} of the column order",
                            e.0
                        ))
                    })?;
                self.pivoting_count += 1;
            }
        }
        self.factorized = true;
        self.numeric_count += 1;
        Ok(solved)
    }

    /// Sign and magnitude of the determinant of the last factorized matrix, from the factors:
    /// `P A Q = L U` with `L` unit lower triangular gives
    /// `det A = sgn(P) sgn(Q) Π_i U_ii`. `None` before a successful factorization.
    ///
    /// The sign is that of the computed factors, i.e. of `det(A + E)` with `E` the backward
    /// error of the LU (`‖E‖ ≈ ε ‖A‖` times the pivot growth): it is reliable unless `A` is
    /// within that distance of a singular matrix. Allocates one `bool` per row (sparse).
    pub fn determinant(&self) -> Option<Determinant> {
        if !self.factorized {
            return None;
        }
        if let Some(d) = self.dense.as_ref() {
            let n = d.n;
            let sign = if d.transpositions.is_multiple_of(2) {
                1
            } else {
                -1
            };
            return Some(diagonal_determinant(sign, (0..n).map(|j| d.lu[j * n + j])));
        }
        let (rows, cols) = self.fixed.permutations();
        let mut visited = vec![false; rows.len()];
        let sign = permutation_sign(rows, &mut visited) * permutation_sign(cols, &mut visited);
        Some(diagonal_determinant(
            sign,
            self.fixed.pivots().iter().copied(),
        ))
    }

    /// Solve `A x = b` in place (`b` overwritten by `x`) with the last factorization.
    pub fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinearError> {
        if !self.factorized {
            return Err(LinearError::Numeric("solve without a factorization".into()));
        }
        let n = b.len();
        if let Some(d) = self.dense.as_mut() {
            if n != d.n {
                return Err(LinearError::Malformed(format!(
                    "right-hand side of length {n} for order {}",
                    d.n
                )));
            }
            dense_solve_in_place(&d.lu, n, &d.perm, b, &mut d.work);
            return Ok(());
        }
        if n != self.fixed.pivots().len() {
            return Err(LinearError::Malformed(format!(
                "right-hand side of length {n} for order {}",
                self.fixed.pivots().len()
            )));
        }
        self.fixed.solve(b);
        Ok(())
    }
}

/// `sign · Π d_i` as a [`Determinant`]; sign 0 when a pivot is zero or not finite.
fn diagonal_determinant(mut sign: i8, pivots: impl Iterator<Item = f64>) -> Determinant {
    let mut ln_abs = 0.0;
    for d in pivots {
        if d == 0.0 || !d.is_finite() {
            return Determinant {
                sign: 0,
                ln_abs: f64::NEG_INFINITY,
            };
        }
        if d < 0.0 {
            sign = -sign;
        }
        ln_abs += d.abs().ln();
    }
    Determinant { sign, ln_abs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sprs::TriMat;

    /// The sparse and the dense path of the same solver.
    fn both() -> [Lu; 2] {
        [
            Lu::new().with_dense_max(0),
            Lu::new().with_dense_max(usize::MAX),
        ]
    }

    #[test]
    fn solves_unsymmetric_saddle_point_and_reuses_symbolic() {
        // [[2,1,1],[0,3,1],[1,1,0]] x = b: zero diagonal needs pivoting.
        let mut t = TriMat::new((3, 3));
        for (r, c, v) in [
            (0, 0, 2.0),
            (0, 1, 1.0),
            (0, 2, 1.0),
            (1, 1, 3.0),
            (1, 2, 1.0),
            (2, 0, 1.0),
            (2, 1, 1.0),
            (2, 2, 0.0),
        ] {
            t.add_triplet(r, c, v);
        }
        let a0: sprs::CsMat<f64> = t.to_csc();
        for mut lu in both() {
            let mut a = a0.clone();
            for k in 0..3 {
                let scale = 1.0 + k as f64;
                for v in a.data_mut() {
                    *v *= scale;
                }
                lu.factorize(&a, 7).unwrap();
                let x = [1.0, -2.0, 0.5];
                let mut b = vec![0.0; 3];
                for (v, (r, c)) in a.iter() {
                    b[r] += v * x[c];
                }
                lu.solve_in_place(&mut b).unwrap();
                for i in 0..3 {
                    // well-conditioned 3×3: round-off only.
                    assert!((b[i] - x[i]).abs() < 1e-12);
                }
            }
            assert_eq!(lu.symbolic_count, 1);
            assert_eq!(lu.numeric_count, 3);
        }
    }

    /// A saddle-point matrix like a contact model's: node block `A` = diagonal (some entries
    /// small, like a small sphere's rotational inertia) + a penalty `p Gᵀ G`, multiplier block
    /// `−k G` / `−k Gᵀ` with `k G` larger than the small diagonals, and a multiplier diagonal
    /// of `−10⁻¹⁰` (closed contacts). With the node unknowns declared, the factorization keeps
    /// every pivot on the diagonal (partial pivoting would swap the rows of the small
    /// diagonals for multiplier rows), solves to round-off, and refactorizes a perturbed
    /// matrix along the same pivot order.
    #[test]
    fn saddle_point_factorization_keeps_diagonal_pivots() {
        let (nq, nm) = (30, 12);
        let n = nq + nm;
        let mut rand = uniform(0x2545_F491_4F6C_DD1D);
        // G: each multiplier couples 6 consecutive node unknowns (two "bodies" of 3).
        let mut g = vec![vec![0.0; nq]; nm];
        for (i, row) in g.iter_mut().enumerate() {
            for c in (2 * i)..(2 * i + 6) {
                row[c % nq] = rand();
            }
        }
        let (p, k) = (1.0, 10.0);
        let matrix = |scale: f64| {
            let mut e = Vec::new();
            for i in 0..nq {
                // Every third unknown has a small diagonal (0.01 against k G ≈ 5).
                let d = if i % 3 == 2 { 0.01 } else { 50.0 };
                e.push((i, i, d * scale));
            }
            for (m, row) in g.iter().enumerate() {
                for (a, &ga) in row.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                    for (b, &gb) in row.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                        e.push((a, b, p * ga * gb));
                    }
                    e.push((nq + m, a, -k * ga));
                    e.push((a, nq + m, -k * ga));
                }
                e.push((nq + m, nq + m, -1e-10));
            }
            csc(n, &e)
        };
        let mut lu = Lu::new().with_dense_max(0);
        lu.set_primary(Some(nq));
        for (i, scale) in [1.0, 1.3].into_iter().enumerate() {
            let a = matrix(scale);
            lu.factorize(&a, 1).unwrap();
            let (rows, cols) = lu.fixed.permutations();
            assert_eq!(rows, cols, "every pivot on the diagonal");
            // The diagonal pivots along their implied structure serve both matrices: no pivot
            // search at all.
            assert_eq!((lu.numeric_count, lu.pivoting_count), (i + 1, 0));
            let x: Vec<f64> = (0..n).map(|i| 1.0 + 0.1 * i as f64).collect();
            let mut b = vec![0.0; n];
            for (v, (r, c)) in a.iter() {
                b[r] += v * x[c];
            }
            lu.solve_in_place(&mut b).unwrap();
            let err = b
                .iter()
                .zip(&x)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            // 2-norm condition number of the first matrix 5.3e3 (numpy); backward-stable
            // factors give an error ≲ cond · ε · ‖x‖ = 5.3e3 · 2.2e-16 · 5.1 = 6e-12 (observed
            // 2e-14 and 1e-13): bound 1e-11.
            assert!(err < 1e-11, "solution error {err:e}");
        }
    }

    /// Uniform numbers in [−0.5, 0.5) from a xorshift generator seeded with `seed`.
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        }
    }

    fn csc(n: usize, entries: &[(usize, usize, f64)]) -> sprs::CsMat<f64> {
        let mut t = TriMat::new((n, n));
        for &(r, c, v) in entries {
            t.add_triplet(r, c, v);
        }
        t.to_csc()
    }

    /// Determinant of a dense copy by Gaussian elimination with partial pivoting (reference).
    fn dense_det(a: &sprs::CsMat<f64>) -> f64 {
        let n = a.rows();
        let mut m = vec![vec![0.0; n]; n];
        for (v, (r, c)) in a.iter() {
            m[r][c] += v;
        }
        let mut det = 1.0;
        for k in 0..n {
            let p = (k..n)
                .max_by(|&i, &j| m[i][k].abs().total_cmp(&m[j][k].abs()))
                .unwrap();
            if p != k {
                m.swap(p, k);
                det = -det;
            }
            det *= m[k][k];
            for i in k + 1..n {
                let f = m[i][k] / m[k][k];
                for j in k..n {
                    m[i][j] -= f * m[k][j];
                }
            }
        }
        det
    }

    #[test]
    fn determinant_sign_and_magnitude_match_dense_elimination() {
        // Zero diagonal (row pivoting) and an unsymmetric fill pattern (column ordering).
        let a = csc(
            4,
            &[
                (0, 0, 0.0),
                (0, 1, 2.0),
                (0, 3, -1.0),
                (1, 0, 3.0),
                (1, 1, 1.0),
                (2, 2, -4.0),
                (2, 0, 1.5),
                (3, 1, 0.5),
                (3, 3, 2.5),
                (3, 2, 1.0),
            ],
        );
        for mut lu in both() {
            assert!(lu.determinant().is_none(), "no factorization yet");
            lu.factorize(&a, 1).unwrap();
            let d = lu.determinant().unwrap();
            let reference = dense_det(&a);
            assert_eq!(d.sign as f64, reference.signum(), "{lu:?}");
            // 4×4 with O(1) entries: ln|det| agrees to round-off.
            assert!(
                (d.ln_abs - reference.abs().ln()).abs() < 1e-12,
                "{d:?} vs {reference}"
            );
        }
    }

    /// A saddle-point matrix `[[K, Gᵀ], [G, −δI]]` with `K` positive definite on the null space
    /// of `G` has the inertia `(n, m, 0)`: `sign det = (−1)^m`. One negative eigenvalue of the
    /// reduced stiffness flips it. This is what static stability monitoring relies on.
    #[test]
    fn saddle_point_determinant_sign_counts_constraints_and_reduced_stiffness() {
        // Three node unknowns, one constraint x0 − x1 = 0 (m = 1), tiny regularization.
        let build = |k11: f64| {
            csc(
                4,
                &[
                    (0, 0, 2.0),
                    (0, 1, -1.0),
                    (1, 0, -1.0),
                    (1, 1, k11),
                    (1, 2, -1.0),
                    (2, 1, -1.0),
                    (2, 2, 2.0),
                    (0, 3, 1.0),
                    (1, 3, -1.0),
                    (3, 0, 1.0),
                    (3, 1, -1.0),
                    (3, 3, -1e-10),
                ],
            )
        };
        for mut lu in both() {
            // Reduced stiffness on x0 = x1 = a, x2 = b: vᵀKv = k11 a² − 2ab + 2b², i.e.
            // [[k11, −1], [−1, 2]]: positive definite for k11 > 1/2, one negative eigenvalue below.
            lu.factorize(&build(4.0), 1).unwrap();
            assert_eq!(lu.determinant().unwrap().sign, -1, "(−1)^m with m = 1");
            lu.factorize(&build(0.25), 1).unwrap();
            assert_eq!(lu.determinant().unwrap().sign, 1, "one unstable direction");
        }
    }

    #[test]
    fn permutation_signs() {
        let mut v = vec![false; 4];
        assert_eq!(permutation_sign(&[0, 1, 2, 3], &mut v), 1);
        assert_eq!(permutation_sign(&[1, 0, 2, 3], &mut v), -1);
        assert_eq!(permutation_sign(&[1, 2, 0, 3], &mut v), 1);
        assert_eq!(permutation_sign(&[1, 2, 3, 0], &mut v), -1);
    }

    /// The dense and the sparse path give the same solution on a larger unsymmetric matrix
    /// with a zero diagonal block (saddle point), and the dense path is the default below
    /// [`DENSE_MAX`].
    #[test]
    fn dense_and_sparse_paths_agree() {
        let (n, m) = (30, 6);
        let mut entries = Vec::new();
        for i in 0..n {
            entries.push((i, i, 4.0 + i as f64 * 0.1));
            if i + 1 < n {
                entries.push((i, i + 1, -1.0));
                entries.push((i + 1, i, -1.5));
            }
        }
        for k in 0..m {
            // Constraint rows x_{5k} − x_{5k+2} = …, with their transposes.
            entries.push((n + k, 5 * k, 1.0));
            entries.push((n + k, 5 * k + 2, -1.0));
            entries.push((5 * k, n + k, 1.0));
            entries.push((5 * k + 2, n + k, -1.0));
            entries.push((n + k, n + k, 0.0));
        }
        let a = csc(n + m, &entries);
        let b: Vec<f64> = (0..n + m).map(|i| (i as f64 * 0.7).sin()).collect();
        let mut x = [b.clone(), b.clone()];
        let mut dets = Vec::new();
        for (lu, x) in both().iter_mut().zip(x.iter_mut()) {
            lu.factorize(&a, 1).unwrap();
            lu.solve_in_place(x).unwrap();
            dets.push(lu.determinant().unwrap());
            // Residual of the solution: well-conditioned, round-off only.
            let mut r = b.clone();
            for (v, (i, j)) in a.iter() {
                r[i] -= v * x[j];
            }
            assert!(r.iter().all(|v| v.abs() < 1e-12), "{lu:?}: {r:?}");
        }
        for d in &dets[1..] {
            assert_eq!(dets[0].sign, d.sign);
            // Same determinant from two factorizations: round-off of 36 pivots.
            assert!((dets[0].ln_abs - d.ln_abs).abs() < 1e-10);
        }
        let mut lu = Lu::new();
        lu.analyze(&a, 1).unwrap();
        assert!(lu.is_dense(), "order {} below DENSE_MAX", n + m);
    }

    /// A sparse LU analyzed for one pattern, then for a smaller one (a contact removed):
    /// the numeric storage of the first must not leak into the second (faer asserted on the
    /// column-pointer length).
    #[test]
    fn sparse_path_survives_a_smaller_pattern() {
        let system = |n: usize| {
            let mut e = Vec::new();
            for i in 0..n {
                e.push((i, i, 4.0));
                if i + 1 < n {
                    e.push((i, i + 1, -1.0));
                    e.push((i + 1, i, -1.0));
                }
            }
            csc(n, &e)
        };
        let mut lu = Lu::new().with_dense_max(0);
        for (generation, n) in [(1, 80), (2, 74), (3, 90)] {
            let a = system(n);
            lu.analyze(&a, generation).unwrap();
            assert!(!lu.is_dense());
            lu.factorize(&a, generation).unwrap();
            let mut x = vec![1.0; n];
            lu.solve_in_place(&mut x).unwrap();
            let mut r = vec![1.0; n];
            for (v, (i, j)) in a.iter() {
                r[i] -= v * x[j];
            }
            // Diagonally dominant: round-off only.
            assert!(r.iter().all(|v| v.abs() < 1e-13), "n = {n}");
        }
    }

    /// The 6 × 6 tridiagonal matrix with `a00`, `a10` in its first column, 4 on the rest of the
    /// diagonal, 1 above and −1 below: a small `a00` makes a pivot search take row 1.
    fn tridiagonal(a00: f64, a10: f64) -> sprs::CsMat<f64> {
        let n = 6;
        let mut e = Vec::new();
        for i in 0..n {
            e.push((i, i, if i == 0 { a00 } else { 4.0 }));
            if i + 1 < n {
                e.push((i, i + 1, 1.0));
                e.push((i + 1, i, if i == 0 { a10 } else { -1.0 }));
            }
        }
        csc(n, &e)
    }

    /// Factorize the well-conditioned `a` with `lu` and check that it solves `a x = a x̂` for
    /// `x̂ = (1, 2, …)` to round-off (1e-12 on these 6 × 6 matrices).
    fn factorize_and_check_solve(lu: &mut Lu, a: &sprs::CsMat<f64>) {
        let x: Vec<f64> = (0..a.rows()).map(|i| 1.0 + i as f64).collect();
        let mut b = vec![0.0; a.rows()];
        for (v, (r, c)) in a.iter() {
            b[r] += v * x[c];
        }
        lu.factorize(a, 1).unwrap();
        lu.solve_in_place(&mut b).unwrap();
        for (bi, xi) in b.iter().zip(&x) {
            assert!((bi - xi).abs() < 1e-12, "{b:?}");
        }
    }

    /// The sparse path refactorizes along the first pivot order while its pivots serve, and
    /// factorizes with partial pivoting again when a pivot of that order becomes too small.
    #[test]
    fn sparse_refactorization_keeps_the_pivot_order_until_a_pivot_fails() {
        // Tridiagonal with a small (0,0) entry that makes the first factorization pivot rows 0
        // and 1; then the (0,0) entry grows and the (1,0) entry vanishes, so the old order's
        // pivot is zero and the solver must pivot again.
        let build = tridiagonal;
        let check = |lu: &mut Lu, a: &sprs::CsMat<f64>| {
            factorize_and_check_solve(lu, a);
            let reference = dense_det(a);
            let d = lu.determinant().unwrap();
            assert_eq!(d.sign as f64, reference.signum());
            assert!((d.ln_abs - reference.abs().ln()).abs() < 1e-12);
        };
        let mut lu = Lu::new().with_dense_max(0);
        for scale in [1.0, 1.5, 2.0] {
            check(&mut lu, &build(1e-3 * scale, 3.0 * scale));
        }
        assert_eq!((lu.numeric_count, lu.pivoting_count), (3, 1));
        check(&mut lu, &build(5.0, 0.0));
        assert_eq!((lu.numeric_count, lu.pivoting_count), (4, 2));
        check(&mut lu, &build(5.5, 0.0));
        assert_eq!((lu.numeric_count, lu.pivoting_count), (5, 2));
    }

    /// A solver that adopts another's pivot order for the same pattern refactorizes at its
    /// first factorization (no pivot search) and solves as one that searched; one that adopts
    /// an order whose pivot fails its matrix searches anyway; no adoption from an unfactorized
    /// solver, nor across patterns.
    #[test]
    fn an_adopted_pivot_order_serves_the_first_factorization() {
        // A small (0,0) entry pivots rows 0 and 1.
        let (build, solve) = (tridiagonal, factorize_and_check_solve);
        let a = build(1e-3, 3.0);
        let mut donor = Lu::new().with_dense_max(0);
        donor.analyze(&a, 1).unwrap();
        let mut taker = Lu::new().with_dense_max(0);
        taker.analyze(&a, 1).unwrap();
        assert!(
            !taker.adopt_pivot_order(&donor),
            "the donor has not factorized"
        );
        solve(&mut donor, &a);
        assert_eq!(donor.pivoting_count, 1);
        assert!(taker.adopt_pivot_order(&donor));
        solve(&mut taker, &build(1.5e-3, 4.5));
        assert_eq!((taker.numeric_count, taker.pivoting_count), (1, 0));
        // The donor's order pivots on row 1 for column 0; with a10 = 0 that pivot is zero.
        let mut failing = Lu::new().with_dense_max(0);
        failing.analyze(&a, 1).unwrap();
        assert!(failing.adopt_pivot_order(&donor));
        solve(&mut failing, &build(5.0, 0.0));
        assert_eq!((failing.numeric_count, failing.pivoting_count), (1, 1));
        // Another pattern (order 7): refused.
        let mut other = Lu::new().with_dense_max(0);
        other
            .analyze(&csc(7, &(0..7).map(|i| (i, i, 1.0)).collect::<Vec<_>>()), 1)
            .unwrap();
        assert!(!other.adopt_pivot_order(&donor));
    }

    /// `factorize_solve` gives `factorize` + `solve_in_place` to the bit: on the first
    /// factorization (pivot search, solved after), on refactorizations along the stored order
    /// (forward substitution fused), and on the dense path; a right-hand side of the wrong
    /// length is refused.
    #[test]
    fn factorize_solve_matches_factorize_then_solve() {
        // A chain-like banded unsymmetric matrix (the column path: no supernodes).
        let n = 40;
        let mut rand = uniform(7);
        let build = |rand: &mut dyn FnMut() -> f64| {
            let mut e = Vec::new();
            for i in 0..n {
                e.push((i, i, 4.0 + rand()));
                for k in [1, 3] {
                    if i + k < n {
                        e.push((i, i + k, rand()));
                        e.push((i + k, i, rand()));
                    }
                }
            }
            csc(n, &e)
        };
        for dense_max in [0, usize::MAX] {
            let (mut fused, mut plain) = (
                Lu::new().with_dense_max(dense_max),
                Lu::new().with_dense_max(dense_max),
            );
            for round in 0..3 {
                let a = build(&mut rand);
                let b0: Vec<f64> = (0..n).map(|_| rand()).collect();
                let (mut x, mut y) = (b0.clone(), b0.clone());
                fused.factorize_solve(&a, 1, &mut x).unwrap();
                plain.factorize(&a, 1).unwrap();
                plain.solve_in_place(&mut y).unwrap();
                assert_eq!(x, y, "round {round}, dense_max {dense_max}");
                // And it solves: residual at round-off for this diagonally dominant matrix.
                let mut r = b0.clone();
                for (v, (i, j)) in a.iter() {
                    r[i] -= v * x[j];
                }
                assert!(r.iter().all(|v| v.abs() < 1e-13), "{r:?}");
            }
            if dense_max == 0 {
                // Rounds 1 and 2 refactorized along the stored order, where the forward
                // substitution is fused (the column path: it reports solving).
                assert_eq!((fused.numeric_count, fused.pivoting_count), (3, 1));
                let a = build(&mut rand);
                let col_ptr = a.indptr().into_raw_storage();
                let mut b = vec![1.0; n];
                let solved =
                    fused
                        .fixed
                        .refactor_solve(col_ptr, a.indices(), a.data(), Some(&mut b));
                assert!(matches!(solved, Ok(true)));
            }
            let a = build(&mut rand);
            assert!(fused.factorize_solve(&a, 1, &mut vec![1.0; n - 1]).is_err());
        }
    }

    /// A 3-D grid operator (7-point stencil, unsymmetric values, 12³ unknowns) fills its
    /// factors enough that the refactorization runs on supernodes: the factorization, and
    /// refactorizations of perturbed values along its pivot order, solve as the dense LU does.
    #[test]
    fn supernodal_refactorization_matches_the_dense_lu() {
        let m = 12;
        let n = m * m * m;
        let id = |i: usize, j: usize, k: usize| (i * m + j) * m + k;
        let mut rand = uniform(0x9E37_79B9_7F4A_7C15);
        let build = |rand: &mut dyn FnMut() -> f64| {
            let mut e = Vec::new();
            for i in 0..m {
                for j in 0..m {
                    for k in 0..m {
                        let r = id(i, j, k);
                        e.push((r, r, 8.0 + rand()));
                        for (di, dj, dk) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                            let (a, b, c) = (i + di, j + dj, k + dk);
                            if a < m && b < m && c < m {
                                let q = id(a, b, c);
                                e.push((r, q, -1.0 + 0.5 * rand()));
                                e.push((q, r, -1.0 + 0.5 * rand()));
                            }
                        }
                    }
                }
            }
            csc(n, &e)
        };
        let mut sparse = Lu::new().with_dense_max(0);
        let mut dense = Lu::new().with_dense_max(usize::MAX);
        for round in 0..3 {
            let a = build(&mut rand);
            let b: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
            let (mut xs, mut xd) = (b.clone(), b.clone());
            sparse.factorize(&a, 1).unwrap();
            dense.factorize(&a, 1).unwrap();
            assert!(sparse.fixed.is_supernodal());
            sparse.solve_in_place(&mut xs).unwrap();
            dense.solve_in_place(&mut xd).unwrap();
            // Diagonally dominant (8 against at most 6 × 1.25): condition number ≈ 10, so
            // both solutions agree to a few ulps of their size.
            for (s, d) in xs.iter().zip(&xd) {
                assert!(
                    (s - d).abs() < 1e-12 * (1.0 + d.abs()),
                    "round {round}: {s} {d}"
                );
            }
        }
        // One pivot order served all three (refactorizations, no new pivot search).
        assert_eq!((sparse.numeric_count, sparse.pivoting_count), (3, 1));
    }

    /// With declared node unknowns, a new pattern is first refactorized on diagonal pivots; a
    /// diagonal too small for them (here 1e-9 against off-diagonals of 3) falls back to the
    /// factorization with pivot search, which solves as well.
    #[test]
    fn failed_diagonal_pivots_fall_back_to_pivot_search() {
        let n = 8;
        let mut e = Vec::new();
        for i in 0..n {
            e.push((i, i, if i == 0 { 1e-9 } else { 4.0 }));
            if i + 1 < n {
                e.push((i, i + 1, 3.0));
                e.push((i + 1, i, -3.0));
            }
        }
        let a = csc(n, &e);
        let mut lu = Lu::new().with_dense_max(0);
        lu.set_primary(Some(n));
        let x: Vec<f64> = (0..n).map(|i| 1.0 - 0.2 * i as f64).collect();
        let mut b = vec![0.0; n];
        for (v, (r, c)) in a.iter() {
            b[r] += v * x[c];
        }
        lu.factorize(&a, 1).unwrap();
        lu.solve_in_place(&mut b).unwrap();
        // Well-conditioned with row pivoting (|det| ≈ 3⁸ against entries ≤ 4): round-off.
        for (bi, xi) in b.iter().zip(&x) {
            assert!((bi - xi).abs() < 1e-12, "{b:?}");
        }
        assert_eq!((lu.numeric_count, lu.pivoting_count), (1, 1));
        let (rows, cols) = lu.fixed.permutations();
        assert_ne!(rows, cols, "the first pivot is off the diagonal");
    }

    /// Re-analyzing patterns (an element set that changes between steps) keeps the sparse
    /// factors' reserved storage bounded: twice the largest pattern, not doubling per analysis.
    #[test]
    fn reanalysis_keeps_the_factor_storage_bounded() {
        let n = 60;
        let mut e = Vec::new();
        for i in 0..n {
            e.push((i, i, 4.0));
            if i + 1 < n {
                e.push((i, i + 1, 1.0));
                e.push((i + 1, i, -1.0));
            }
        }
        let a = csc(n, &e);
        let mut lu = Lu::new().with_dense_max(0);
        lu.analyze(&a, 1).unwrap();
        let first = lu.fixed.capacity();
        for generation in 2..=40 {
            lu.analyze(&a, generation).unwrap();
        }
        assert_eq!(lu.fixed.capacity(), first);
        assert_eq!(lu.symbolic_count, 40);
    }
}
