//! The inverse of a block-diagonal sparse matrix, block by block.
//!
//! A stage matrix without its contacts is block diagonal when no element couples two nodes: a
//! granular model's rigid bodies, each with its own inertia and forces (the contacts'
//! multiplier rows, switched off, hold only their diagonal). Its inverse is then the inverse of each block, and
//! `A⁻¹ b` for a `b` that lives on a few unknowns touches only their blocks — what the
//! contact-space Gauss–Seidel ([`super::settle`]) needs once per contact, where a sparse LU
//! solve would cost a pass over all `n` unknowns per contact.

use saltus_core::linear::{dense_lu, dense_solve_in_place};
use sprs::CsMat;

/// Largest block factorized densely (a frame node has 6 unknowns; a node with its own
/// single-node constraints a few more). A larger coupled group: not block diagonal for us.
pub(super) const MAX_BLOCK: usize = 24;

/// `A⁻¹` of a block-diagonal `A`, stored as the dense LU factors of each block (the connected
/// components of `A`'s nonzero entries; `saltus_core::linear::dense_lu`) and each block's
/// explicit inverse (for the three-column products of [`BlockInverse::apply3`], one per
/// contact and linearization: granular landing N = 1 000, −4 % time per step with the same
/// sweeps). Its arrays are reused from one [`BlockInverse::rebuild`] to the next: no
/// allocation once they have grown to the model.
#[derive(Debug, Default)]
pub(super) struct BlockInverse {
    /// Per unknown: its block.
    block: Vec<usize>,
    /// Per unknown: its position within its block.
    pos: Vec<usize>,
    /// Per block: start of its members in `members` (one more entry than blocks).
    start: Vec<usize>,
    /// Unknowns, grouped by block, ascending within a block.
    members: Vec<usize>,
    /// Per block: start of its dense factors (column major) in `lu`.
    lu_start: Vec<usize>,
    /// The blocks' LU factors.
    lu: Vec<f64>,
    /// The blocks' inverses (column major, laid out as `lu`), for [`BlockInverse::apply3`]: a
    /// contact's `Y_e` as matrix products, without the triangular solves' divisions.
    inv: Vec<f64>,
    /// Per unknown (grouped as `members`): its block's row permutation, local indices.
    perm: Vec<usize>,
    /// Build scratch: union–find parents.
    parent: Vec<usize>,
    /// The matrix of the last rebuild: its pattern generation, values and outcome (a rebuild
    /// for the same matrix keeps everything: the contacts' linearizations of one stage
    /// often see the same inertia blocks).
    last: Option<(u64, bool)>,
    /// Values of the last rebuild's matrix.
    values: Vec<f64>,
    /// The last rebuild found the matrix of the one before (same pattern and values).
    reused: bool,
}

/// Union–find root of `i`, halving the path.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

impl BlockInverse {
    /// Rebuild as the block inverse of the square CSC or CSR matrix `a` (its pattern is
    /// symmetric in the stages: an entry `(i, j)` and its transpose couple the same two
    /// unknowns); `false` (and unusable) when a group of coupled unknowns exceeds
    /// [`MAX_BLOCK`] or a block is singular. Explicit zeros couple nothing.
    pub(super) fn rebuild(&mut self, a: &CsMat<f64>, generation: u64) -> bool {
        if let Some((g, ok)) = self.last {
            if g == generation && self.values[..] == *a.data() {
                self.reused = true;
                return ok;
            }
        }
        self.reused = false;
        self.values.clear();
        self.values.extend_from_slice(a.data());
        let ok = self.rebuild_from(a);
        self.last = Some((generation, ok));
        ok
    }

    /// Whether the last [`BlockInverse::rebuild`] found the same matrix as the one before.
    pub(super) fn reused(&self) -> bool {
        self.reused
    }

    /// [`BlockInverse::rebuild`] itself.
    fn rebuild_from(&mut self, a: &CsMat<f64>) -> bool {
        let n = a.rows();
        // Connected components by union–find over the nonzero entries.
        let parent = &mut self.parent;
        parent.clear();
        parent.extend(0..n);
        for (outer, lane) in a.outer_iterator().enumerate() {
            for (inner, &v) in lane.iter() {
                if v != 0.0 && inner != outer {
                    let (ra, rb) = (root(parent, outer), root(parent, inner));
                    if ra != rb {
                        parent[ra.max(rb)] = ra.min(rb);
                    }
                }
            }
        }
        // Blocks numbered by their smallest unknown (each root is its component's smallest
        // unknown); `start` counts the sizes first.
        self.block.clear();
        self.block.resize(n, usize::MAX);
        self.start.clear();
        for i in 0..n {
            let r = root(parent, i);
            if r == i {
                self.block[i] = self.start.len();
                self.start.push(0);
            } else {
                self.block[i] = self.block[r];
            }
            self.start[self.block[i]] += 1;
        }
        if self.start.iter().any(|&s| s > MAX_BLOCK) {
            return false;
        }
        self.lu_start.clear();
        let (mut s0, mut v0) = (0, 0);
        for k in 0..self.start.len() {
            let s = self.start[k];
            self.start[k] = s0;
            self.lu_start.push(v0);
            s0 += s;
            v0 += s * s;
        }
        self.start.push(s0);
        self.lu_start.push(v0);
        self.members.clear();
        self.members.resize(n, 0);
        self.pos.clear();
        self.pos.resize(n, 0);
        // `parent` reused as each block's fill pointer.
        parent.clear();
        parent.extend_from_slice(&self.start);
        for i in 0..n {
            let b = self.block[i];
            self.pos[i] = parent[b] - self.start[b];
            self.members[parent[b]] = i;
            parent[b] += 1;
        }
        // Each block densely, then factorized in place.
        self.lu.clear();
        self.lu.resize(v0, 0.0);
        self.perm.clear();
        self.perm.resize(n, 0);
        for (outer, lane) in a.outer_iterator().enumerate() {
            for (inner, &v) in lane.iter() {
                let (row, col) = if a.is_csc() {
                    (inner, outer)
                } else {
                    (outer, inner)
                };
                let b = self.block[col];
                if self.block[row] == b {
                    let s = self.start[b + 1] - self.start[b];
                    self.lu[self.lu_start[b] + self.pos[col] * s + self.pos[row]] += v;
                }
            }
        }
        self.inv.clear();
        self.inv.resize(v0, 0.0);
        let mut work = [0.0; MAX_BLOCK];
        for b in 0..self.start.len() - 1 {
            let (p0, s) = (self.start[b], self.start[b + 1] - self.start[b]);
            let range = self.lu_start[b]..self.lu_start[b] + s * s;
            let lu = &mut self.lu[range.clone()];
            let perm = &mut self.perm[p0..p0 + s];
            dense_lu(lu, s, perm);
            // A zero (or non-finite) pivot: singular; a non-finite entry: unusable.
            let pivots_ok = (0..s).all(|k| lu[k * s + k] != 0.0 && lu[k * s + k].is_finite());
            if !pivots_ok || !lu.iter().all(|v| v.is_finite()) {
                return false;
            }
            // The inverse, column by column from the factors.
            let inv = &mut self.inv[range];
            for (j, col) in inv.chunks_exact_mut(s).enumerate() {
                col[j] = 1.0;
                dense_solve_in_place(lu, s, perm, col, &mut work[..s]);
            }
        }
        true
    }

    /// Block `b`'s size, LU factors and row permutation.
    fn factors(&self, b: usize) -> (usize, &[f64], &[usize]) {
        let (p0, s) = (self.start[b], self.start[b + 1] - self.start[b]);
        (
            s,
            &self.lu[self.lu_start[b]..self.lu_start[b] + s * s],
            &self.perm[p0..p0 + s],
        )
    }

    /// `x ← A⁻¹ x`.
    pub(super) fn solve_in_place(&self, x: &mut [f64]) {
        let (mut local, mut work) = ([0.0; MAX_BLOCK], [0.0; MAX_BLOCK]);
        for b in 0..self.start.len() - 1 {
            let members = &self.members[self.start[b]..self.start[b + 1]];
            let (s, lu, perm) = self.factors(b);
            for (k, &i) in members.iter().enumerate() {
                local[k] = x[i];
            }
            dense_solve_in_place(lu, s, perm, &mut local[..s], &mut work[..s]);
            for (k, &i) in members.iter().enumerate() {
                x[i] = local[k];
            }
        }
    }

    /// `Y = A⁻¹ B` for a sparse `B` of three columns given by its nonzero rows
    /// `(unknown, [B_i0, B_i1, B_i2])`: the rows of `Y` in the blocks `B` touches, appended to
    /// `y` (rows of exact zeros left out).
    pub(super) fn apply3(&self, b: &[(usize, [f64; 3])], y: &mut Vec<(usize, [f64; 3])>) {
        // `B`'s rows in the block, and the block's rows of `Y = A_b⁻¹ B`.
        let mut local = [[0.0; 3]; MAX_BLOCK];
        let mut out = [[0.0; 3]; MAX_BLOCK];
        for (k, &(i, _)) in b.iter().enumerate() {
            let blk = self.block[i];
            // Each block once: at its first row in `b`.
            if b[..k].iter().any(|&(j, _)| self.block[j] == blk) {
                continue;
            }
            let s = self.start[blk + 1] - self.start[blk];
            let inv = &self.inv[self.lu_start[blk]..self.lu_start[blk] + s * s];
            local[..s].fill([0.0; 3]);
            out[..s].fill([0.0; 3]);
            for &(j, bj) in b {
                if self.block[j] == blk {
                    let row = &mut local[self.pos[j]];
                    for (v, w) in row.iter_mut().zip(bj) {
                        *v += w;
                    }
                }
            }
            // `Y_b = Σ_c (column c of A_b⁻¹) ⊗ (row c of B_b)`, over B's nonzero rows.
            for (col, bc) in inv.chunks_exact(s).zip(&local[..s]) {
                if *bc == [0.0; 3] {
                    continue;
                }
                for (o, a) in out[..s].iter_mut().zip(col) {
                    for (ok, bk) in o.iter_mut().zip(bc) {
                        *ok += a * bk;
                    }
                }
            }
            for (&unknown, row) in self.members[self.start[blk]..self.start[blk + 1]]
                .iter()
                .zip(&out[..s])
            {
                if *row != [0.0; 3] {
                    y.push((unknown, *row));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use saltus_core::fd::Rng;
    use sprs::TriMat;

    /// A random block-diagonal matrix (blocks of sizes `sizes`, unknowns interleaved so that
    /// blocks are not contiguous), dense and sparse.
    fn random(sizes: &[usize], rng: &mut Rng) -> (DMatrix<f64>, CsMat<f64>) {
        let n: usize = sizes.iter().sum();
        // Unknown `i` of the permuted numbering: block members spread over the range.
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = ((rng.uniform() + 1.0) * 0.5 * (i as f64 + 1.0)) as usize % (i + 1);
            order.swap(i, j);
        }
        let mut dense = DMatrix::zeros(n, n);
        let mut k = 0;
        for &s in sizes {
            let idx = &order[k..k + s];
            for &i in idx {
                for &j in idx {
                    dense[(i, j)] = rng.uniform();
                }
                dense[(i, i)] += 4.0;
            }
            k += s;
        }
        let mut tri = TriMat::new((n, n));
        for j in 0..n {
            for i in 0..n {
                if dense[(i, j)] != 0.0 {
                    tri.add_triplet(i, j, dense[(i, j)]);
                }
            }
            // An explicit zero across blocks couples nothing.
            tri.add_triplet((j + 1) % n, j, 0.0);
        }
        (dense, tri.to_csc())
    }

    /// Largest entry of `x − want` relative to the largest of `want`.
    fn relative_error(x: &[f64], want: &nalgebra::DVector<f64>) -> f64 {
        let err = x
            .iter()
            .zip(want.iter())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        err / want.amax()
    }

    /// `A⁻¹ b` and `A⁻¹ B` (three sparse columns, on blocks of one and several unknowns, more
    /// than eight blocks) against the dense inverse, from the matrix in CSC and in CSR form.
    #[test]
    fn solves_and_sparse_products_match_the_dense_inverse() {
        let mut rng = Rng::new(5);
        let sizes = [6, 6, 1, 3, 6, 2, 1, 1, 1, 1, 1, 1, 1, 1, 3];
        let (dense, sparse) = random(&sizes, &mut rng);
        let n = dense.nrows();
        let inv = dense.clone().try_inverse().unwrap();
        let b: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
        let want = &inv * nalgebra::DVector::from_column_slice(&b);
        // `B` on every unknown: every block, single ones before a multi-member one.
        let rows: Vec<(usize, [f64; 3])> = (0..n)
            .map(|i| (i, [rng.uniform(), rng.uniform(), rng.uniform()]))
            .collect();
        for matrix in [sparse.clone(), sparse.to_csr()] {
            let mut blocks = BlockInverse::default();
            assert!(blocks.rebuild(&matrix, 1), "block diagonal");
            // The blocks are random entries in [−1, 1) plus 4 on the diagonal: condition
            // numbers of a few units, so the inverse holds to a few ε; 1e-13 relative.
            let mut x = b.clone();
            blocks.solve_in_place(&mut x);
            assert!(relative_error(&x, &want) <= 1e-13, "{x:?}");
            for take in [&rows[..3], &rows[..]] {
                let mut y = Vec::new();
                blocks.apply3(take, &mut y);
                // Each row of `Y` once.
                let mut seen: Vec<usize> = y.iter().map(|&(i, _)| i).collect();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), y.len(), "a row of Y written twice");
                for k in 0..3 {
                    let mut col = nalgebra::DVector::zeros(n);
                    for &(i, v) in take {
                        col[i] = v[k];
                    }
                    let want = &inv * col;
                    let got: Vec<f64> = (0..n)
                        .map(|i| y.iter().find(|&&(j, _)| j == i).map_or(0.0, |&(_, v)| v[k]))
                        .collect();
                    assert!(relative_error(&got, &want) <= 1e-13, "column {k}");
                }
            }
        }
    }

    #[test]
    fn a_coupled_group_beyond_the_largest_block_or_a_singular_block_is_refused() {
        let mut rng = Rng::new(6);
        let mut blocks = BlockInverse::default();
        let (_, sparse) = random(&[MAX_BLOCK + 1, 6], &mut rng);
        assert!(!blocks.rebuild(&sparse, 1));
        // Reused after a refusal: the largest block.
        let (dense, sparse) = random(&[MAX_BLOCK, 6], &mut rng);
        assert!(blocks.rebuild(&sparse, 2));
        let mut x: Vec<f64> = (0..dense.nrows()).map(|i| i as f64).collect();
        let want = dense.clone().try_inverse().unwrap() * nalgebra::DVector::from_column_slice(&x);
        blocks.solve_in_place(&mut x);
        // LU with partial pivoting of a 24 × 24 block of the kind above (condition
        // number of order 10): 1e-12 relative.
        assert!(relative_error(&x, &want) <= 1e-12);
        let mut tri = TriMat::new((3, 3));
        for (i, j, v) in [
            (0, 0, 1.0),
            (0, 1, 2.0),
            (1, 0, 2.0),
            (1, 1, 4.0),
            (2, 2, 1.0),
        ] {
            tri.add_triplet(i, j, v);
        }
        let singular = tri.to_csc();
        assert!(!blocks.rebuild(&singular, 3), "singular 2 × 2 block");
        // New values in the same pattern: rebuilt.
        let mut regular = singular.clone();
        regular.data_mut()[0] = 3.0;
        assert!(
            blocks.rebuild(&regular, 3),
            "the changed values are factorized"
        );
    }

    /// The same matrix (generation and values) keeps the blocks: a marker written into them
    /// survives; a new generation or changed values rebuild them.
    #[test]
    fn the_same_matrix_keeps_its_blocks() {
        let mut rng = Rng::new(7);
        let (_, sparse) = random(&[6, 3], &mut rng);
        let mut blocks = BlockInverse::default();
        assert!(blocks.rebuild(&sparse, 4));
        let kept = blocks.lu[0];
        blocks.lu[0] = 42.0;
        assert!(blocks.rebuild(&sparse, 4));
        assert_eq!(blocks.lu[0], 42.0, "kept");
        assert!(blocks.rebuild(&sparse, 5));
        assert_eq!(blocks.lu[0], kept, "a new generation: rebuilt");
        blocks.lu[0] = 42.0;
        let mut changed = sparse.clone();
        changed.data_mut()[0] *= 1.0 + 1e-15 + f64::EPSILON;
        assert!(blocks.rebuild(&changed, 5));
        assert_ne!(blocks.lu[0], 42.0, "changed values: rebuilt");
    }
}
