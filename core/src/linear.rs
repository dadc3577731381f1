//! Sparse LU (faer) with the symbolic factorization reused while the pattern generation holds.
//! Partial pivoting: the iteration matrices are unsymmetric (friction, Lie-group tangents).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::lu::{
    factorize_symbolic_lu, LuRef, LuSymbolicParams, NumericLu, SymbolicLu,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

/// Failure of the sparse LU.
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

/// Sparse LU solver keeping the symbolic factorization and all workspaces between calls.
pub struct SparseLu {
    generation: Option<u64>,
    symbolic: Option<SymbolicLu<usize>>,
    numeric: NumericLu<usize, f64>,
    mem: MemBuffer,
    par: Par,
    /// Number of symbolic factorizations performed (for benchmarks and tests).
    pub symbolic_count: usize,
    /// Number of numeric factorizations performed.
    pub numeric_count: usize,
}

impl std::fmt::Debug for SparseLu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLu")
            .field("generation", &self.generation)
            .field("symbolic_count", &self.symbolic_count)
            .field("numeric_count", &self.numeric_count)
            .finish()
    }
}

impl Default for SparseLu {
    fn default() -> Self {
        Self::new()
    }
}

impl SparseLu {
    /// A solver with no factorization yet (sequential faer kernels).
    pub fn new() -> Self {
        Self {
            generation: None,
            symbolic: None,
            numeric: NumericLu::new(),
            mem: MemBuffer::new(StackReq::EMPTY),
            par: Par::Seq,
            symbolic_count: 0,
            numeric_count: 0,
        }
    }

    /// Symbolic analysis (ordering + structure) of the pattern of `a` for pattern `generation`,
    /// and the workspaces of the numeric factorization and solves: everything a later
    /// [`SparseLu::factorize`] of the same generation would otherwise allocate. A no-op when
    /// `generation` was already analyzed.
    pub fn analyze(&mut self, a: &sprs::CsMat<f64>, generation: u64) -> Result<(), LinearError> {
        if self.generation == Some(generation) && self.symbolic.is_some() {
            return Ok(());
        }
        let (n, col_ptr, pattern) = pattern(a)?;
        {
            // Simplicial: its numeric factorization keeps its storage between calls, while the
            // supernodal one allocates temporaries on every call (no allocation inside a step).
            let params = LuSymbolicParams {
                supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
                ..Default::default()
            };
            let sym = factorize_symbolic_lu(pattern, params)
                .map_err(|e| LinearError::Symbolic(format!("{e:?}")))?;
            let req = sym
                .factorize_numeric_lu_scratch::<f64>(self.par, Default::default())
                .or(sym.solve_in_place_scratch::<f64>(1, self.par));
            self.mem = MemBuffer::try_new(req).map_err(|_| LinearError::OutOfMemory)?;
            // Size the numeric storage now: faer grows L and U while it factorizes (the fill
            // depends on the pivot sequence) and offers no way to reserve them. Factorizing
            // representative matrices on the pattern — no pivoting, then pivoting away from
            // weak diagonals with pseudo-random values — makes later factorizations of the
            // same pattern reuse storage (amortized growth covers smaller variations).
            let nnz = a.nnz();
            let mut values = vec![0.0; nnz];
            let mut seed = 0x9E37_79B9_7F4A_7C15u64;
            for weak_diagonal in [false, true] {
                for (col, range) in col_ptr.windows(2).enumerate() {
                    for k in range[0]..range[1] {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let r = (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                        values[k] = match (a.indices()[k] == col, weak_diagonal) {
                            (true, false) => n as f64 + 1.0,
                            (true, true) => 1e-3 * r,
                            (false, _) => r,
                        };
                    }
                }
                // A failure (structurally singular sample) only leaves less storage sized.
                let _ = sym.factorize_numeric_lu(
                    &mut self.numeric,
                    SparseColMatRef::new(pattern, &values),
                    self.par,
                    MemStack::new(&mut self.mem),
                    Default::default(),
                );
            }
            self.symbolic = Some(sym);
            self.generation = Some(generation);
            self.symbolic_count += 1;
        }
        Ok(())
    }

    /// Factorize `a` (square CSC), analyzing its pattern first if `generation` is new (see
    /// [`SparseLu::analyze`]); the numeric factorization reuses storage.
    pub fn factorize(&mut self, a: &sprs::CsMat<f64>, generation: u64) -> Result<(), LinearError> {
        self.analyze(a, generation)?;
        let (_, _, pattern) = pattern(a)?;
        let Some(sym) = self.symbolic.as_ref() else {
            return Err(LinearError::Symbolic("no symbolic factorization".into()));
        };
        sym.factorize_numeric_lu(
            &mut self.numeric,
            SparseColMatRef::new(pattern, a.data()),
            self.par,
            MemStack::new(&mut self.mem),
            Default::default(),
        )
        .map_err(|e| LinearError::Numeric(format!("{e:?}")))?;
        self.numeric_count += 1;
        Ok(())
    }

    /// Solve `A x = b` in place (`b` overwritten by `x`) with the last factorization.
    pub fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinearError> {
        let Some(sym) = self.symbolic.as_ref() else {
            return Err(LinearError::Symbolic("solve before factorize".into()));
        };
        let n = b.len();
        let rhs = MatMut::from_column_major_slice_mut(b, n, 1);
        LuRef::new_unchecked(sym, &self.numeric).solve_in_place_with_conj(
            Conj::No,
            rhs,
            self.par,
            MemStack::new(&mut self.mem),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sprs::TriMat;

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
        let mut a: sprs::CsMat<f64> = t.to_csc();
        let mut lu = SparseLu::new();
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
