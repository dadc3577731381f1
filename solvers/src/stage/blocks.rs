//! The inverse of a block-diagonal sparse matrix, block by block.
//!
//! A stage matrix without its contacts is block diagonal when no element couples two nodes: a
//! granular model's rigid bodies, each with its own inertia and forces (the contacts' rows,
//! switched off, are identity rows). Its inverse is then the inverse of each block, and
//! `A⁻¹ b` for a `b` that lives on a few unknowns touches only their blocks — what the
//! contact-space Gauss–Seidel ([`super::settle`]) needs once per contact, where a sparse LU
//! solve would cost a pass over all `n` unknowns per contact.

use nalgebra::DMatrix;
use sprs::CsMat;

/// Largest block inverted densely (a frame node has 6 unknowns; a node with its own
/// single-node constraints a few more). A larger coupled group: not block diagonal for us.
const MAX_BLOCK: usize = 24;

/// `A⁻¹` of a block-diagonal `A`, stored as one dense inverse per block (the connected
/// components of `A`'s nonzero entries).
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
    /// Per block: start of its dense inverse (column major) in `inv`.
    inv_start: Vec<usize>,
    /// The blocks' inverses.
    inv: Vec<f64>,
}

impl BlockInverse {
    /// The block inverse of the square CSC or CSR matrix `a` (its pattern is symmetric in
    /// the stages: an entry `(i, j)` and its transpose couple the same two unknowns), or
    /// `None` when a group of coupled unknowns exceeds [`MAX_BLOCK`] or a block is singular.
    /// Explicit zeros couple nothing.
    pub(super) fn new(a: &CsMat<f64>) -> Option<Self> {
        let n = a.rows();
        // Connected components by union–find over the nonzero entries.
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for (outer, lane) in a.outer_iterator().enumerate() {
            for (inner, &v) in lane.iter() {
                if v != 0.0 && inner != outer {
                    let (ra, rb) = (root(&mut parent, outer), root(&mut parent, inner));
                    if ra != rb {
                        parent[ra.max(rb)] = ra.min(rb);
                    }
                }
            }
        }
        // Blocks numbered by their smallest unknown; members ascending.
        let mut block = vec![usize::MAX; n];
        let mut size = Vec::new();
        for i in 0..n {
            let r = root(&mut parent, i);
            if block[r] == usize::MAX {
                block[r] = size.len();
                size.push(0);
            }
            block[i] = block[r];
            size[block[i]] += 1;
        }
        if size.iter().any(|&s| s > MAX_BLOCK) {
            return None;
        }
        let mut start = Vec::with_capacity(size.len() + 1);
        let mut inv_start = Vec::with_capacity(size.len() + 1);
        let (mut s0, mut v0) = (0, 0);
        for &s in &size {
            start.push(s0);
            inv_start.push(v0);
            s0 += s;
            v0 += s * s;
        }
        start.push(s0);
        inv_start.push(v0);
        let mut members = vec![0; n];
        let mut pos = vec![0; n];
        let mut fill = start.clone();
        for i in 0..n {
            let b = block[i];
            pos[i] = fill[b] - start[b];
            members[fill[b]] = i;
            fill[b] += 1;
        }
        // Each block densely, then inverted (LU with partial pivoting).
        let mut inv = vec![0.0; v0];
        for (outer, lane) in a.outer_iterator().enumerate() {
            for (inner, &v) in lane.iter() {
                let (row, col) = if a.is_csc() {
                    (inner, outer)
                } else {
                    (outer, inner)
                };
                let b = block[col];
                if block[row] == b {
                    let s = size[b];
                    inv[inv_start[b] + pos[col] * s + pos[row]] += v;
                }
            }
        }
        for (b, &s) in size.iter().enumerate() {
            let dense = &mut inv[inv_start[b]..inv_start[b] + s * s];
            let m = DMatrix::from_column_slice(s, s, dense).try_inverse()?;
            if m.iter().any(|v: &f64| !v.is_finite()) {
                return None;
            }
            dense.copy_from_slice(m.as_slice());
        }
        Some(Self {
            block,
            pos,
            start,
            members,
            inv_start,
            inv,
        })
    }

    /// Block `b`'s size and dense inverse.
    fn inverse(&self, b: usize) -> (usize, &[f64]) {
        let s = self.start[b + 1] - self.start[b];
        (s, &self.inv[self.inv_start[b]..self.inv_start[b] + s * s])
    }

    /// `x ← A⁻¹ x`.
    pub(super) fn solve_in_place(&self, x: &mut [f64]) {
        let mut local = [0.0; MAX_BLOCK];
        for b in 0..self.start.len() - 1 {
            let members = &self.members[self.start[b]..self.start[b + 1]];
            let (s, inv) = self.inverse(b);
            for (k, &i) in members.iter().enumerate() {
                local[k] = x[i];
            }
            for (k, &i) in members.iter().enumerate() {
                x[i] = (0..s).map(|l| inv[l * s + k] * local[l]).sum();
            }
        }
    }

    /// `Y = A⁻¹ B` for a sparse `B` of three columns given by its nonzero rows
    /// `(unknown, [B_i0, B_i1, B_i2])`: the rows of `Y` in the blocks `B` touches, appended to
    /// `y` (rows of exact zeros left out).
    pub(super) fn apply3(&self, b: &[(usize, [f64; 3])], y: &mut Vec<(usize, [f64; 3])>) {
        let mut done: [usize; 8] = [usize::MAX; 8];
        let mut n_done = 0;
        let mut local = [[0.0; 3]; MAX_BLOCK];
        for &(i, _) in b {
            let blk = self.block[i];
            if done[..n_done].contains(&blk) {
                continue;
            }
            if n_done < done.len() {
                done[n_done] = blk;
                n_done += 1;
            }
            let (s, inv) = self.inverse(blk);
            for l in local[..s].iter_mut() {
                *l = [0.0; 3];
            }
            for &(j, bj) in b {
                if self.block[j] == blk {
                    for (k, v) in bj.iter().enumerate() {
                        local[self.pos[j]][k] += v;
                    }
                }
            }
            for (r, &unknown) in self.members[self.start[blk]..self.start[blk + 1]]
                .iter()
                .enumerate()
            {
                let mut row = [0.0; 3];
                for (l, col) in local[..s].iter().enumerate() {
                    let a = inv[l * s + r];
                    for k in 0..3 {
                        row[k] += a * col[k];
                    }
                }
                if row != [0.0; 3] {
                    y.push((unknown, row));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn solves_and_sparse_products_match_the_dense_inverse() {
        let mut rng = Rng::new(5);
        let (dense, sparse) = random(&[6, 6, 1, 3, 6, 2], &mut rng);
        let n = dense.nrows();
        let inv = dense.clone().try_inverse().unwrap();
        let blocks = BlockInverse::new(&sparse).expect("block diagonal");
        // Round-off of a 6 × 6 inverse of a diagonally dominant block: 1e-13.
        let b: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
        let mut x = b.clone();
        blocks.solve_in_place(&mut x);
        let want = &inv * nalgebra::DVector::from_column_slice(&b);
        for i in 0..n {
            assert!(
                (x[i] - want[i]).abs() <= 1e-13,
                "{i}: {} vs {}",
                x[i],
                want[i]
            );
        }
        // Three sparse columns on unknowns of two blocks.
        let rows = [
            (0, [1.0, 0.0, 2.0]),
            (5, [0.5, -1.0, 0.0]),
            (n - 1, [0.0, 3.0, 1.0]),
        ];
        let mut y = Vec::new();
        blocks.apply3(&rows, &mut y);
        for k in 0..3 {
            let mut col = nalgebra::DVector::zeros(n);
            for &(i, v) in &rows {
                col[i] = v[k];
            }
            let want = &inv * col;
            for i in 0..n {
                let got = y.iter().find(|&&(j, _)| j == i).map_or(0.0, |&(_, v)| v[k]);
                assert!(
                    (got - want[i]).abs() <= 1e-13,
                    "({i}, {k}): {got} vs {}",
                    want[i]
                );
            }
        }
    }

    #[test]
    fn a_coupled_group_beyond_the_largest_block_is_refused() {
        let mut rng = Rng::new(6);
        let (_, sparse) = random(&[MAX_BLOCK + 1, 6], &mut rng);
        assert!(BlockInverse::new(&sparse).is_none());
        let (_, sparse) = random(&[MAX_BLOCK, 6], &mut rng);
        assert!(BlockInverse::new(&sparse).is_some());
    }
}
