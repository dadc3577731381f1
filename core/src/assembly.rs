//! Sparse assembly of one level's residual and iteration matrix.
//!
//! The sparsity pattern is built once per topology (element set and fixed nodes): the union of
//! every element's dense local block over its global unknowns, in CSC form, and a *slot map*
//! records, for each local entry `(i, j)`, its index in the
//! CSC value array. Each Newton iteration then zeroes the values and scatters the element blocks
//! in place: no allocation, no sorting (architecture.md §2.4).
//!
//! Global unknown order of a level: the free nodes' unknowns (node order), then the
//! multipliers of the elements contributing to that level (element order).

use crate::element::{Element, Level};
use crate::node::NodeDef;
use nalgebra::{DMatrix, DVector};
use sprs::CsMat;

/// Marks a local unknown that has no global unknown (fixed node).
pub const FIXED: usize = usize::MAX;

/// Marks a local block entry with no matrix value (a fixed row or column).
const NO_SLOT: u32 = u32::MAX;

/// Numbering of the node unknowns shared by all levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeNumbering {
    /// First global unknown of each node, or [`FIXED`] for fixed nodes.
    pub offset: Vec<usize>,
    /// Number of node unknowns (6 per free frame node, 3 per free point node).
    pub n_dofs: usize,
}

impl NodeNumbering {
    /// Number the free nodes' unknowns consecutively in node order.
    pub fn new(nodes: &[NodeDef]) -> Self {
        let mut offset = Vec::with_capacity(nodes.len());
        let mut n = 0;
        for node in nodes {
            if node.fixed {
                offset.push(FIXED);
            } else {
                offset.push(n);
                n += node.kind.ndof();
            }
        }
        Self { offset, n_dofs: n }
    }
}

/// Pattern, slot map and value storage of one level's linear system.
#[derive(Clone, Debug)]
pub struct LevelSystem {
    /// Level this system belongs to.
    pub level: Level,
    /// Total unknowns (node unknowns + multipliers).
    pub n: usize,
    /// Number of node unknowns (multipliers start here).
    pub n_node_dofs: usize,
    /// Per element: first global multiplier unknown (index into the multiplier vector of this
    /// level, i.e. relative to `n_node_dofs`) and count.
    pub mult_range: Vec<(usize, usize)>,
    /// Per element: contributes to this level.
    pub active: Vec<bool>,
    /// Per element: range into `dofs` (local unknown → global unknown or [`FIXED`]).
    dof_range: Vec<(usize, usize)>,
    dofs: Vec<usize>,
    /// Per element: start of its column-major local block in `slots`.
    slot_start: Vec<usize>,
    /// Per entry of each element's local block: its index in the matrix values, or
    /// [`NO_SLOT`]. 32 bits: the scatter streams this map at every assembly, and on large
    /// models it is bound by memory bandwidth (rigid chain N = 10 000: 3.3 million entries).
    slots: Vec<u32>,
    /// The iteration matrix in CSC form (pattern fixed; values refilled every iteration).
    pub matrix: CsMat<f64>,
    /// Right-hand side / residual vector.
    pub rhs: Vec<f64>,
    /// Largest local system size over the elements of this level.
    pub max_local: usize,
    /// Pattern generation (changes when the pattern is rebuilt).
    pub generation: u64,
    /// CSC value index of each multiplier's diagonal entry.
    mult_diag_slots: Vec<usize>,
}

impl LevelSystem {
    /// Build the pattern of `level` for the given elements.
    pub fn new(
        level: Level,
        nodes: &[NodeDef],
        numbering: &NodeNumbering,
        elements: &[Box<dyn Element>],
        generation: u64,
    ) -> Self {
        let mut mult_range = Vec::with_capacity(elements.len());
        let mut active = Vec::with_capacity(elements.len());
        let mut n_mult = 0;
        for e in elements {
            let on = crate::stage::participates(e.as_ref(), level);
            let m = if on { e.n_mult(level) } else { 0 };
            mult_range.push((n_mult, m));
            active.push(on);
            n_mult += m;
        }
        let n_node_dofs = numbering.n_dofs;
        let n = n_node_dofs + n_mult;

        let mut dof_range = Vec::with_capacity(elements.len());
        let mut dofs = Vec::new();
        for (ie, e) in elements.iter().enumerate() {
            let start = dofs.len();
            if active[ie] {
                for id in e.nodes() {
                    let node = &nodes[id.index()];
                    let off = numbering.offset[id.index()];
                    for k in 0..node.kind.ndof() {
                        dofs.push(if off == FIXED { FIXED } else { off + k });
                    }
                }
                let (m0, m) = mult_range[ie];
                dofs.extend((0..m).map(|k| n_node_dofs + m0 + k));
            }
            dof_range.push((start, dofs.len()));
        }

        // Every diagonal entry is structurally present (keeps the LU well-posed when a
        // level has no contribution to some unknown, e.g. a massless free node). Built column
        // by column: each column's candidate rows (its diagonal, then the free unknowns of every
        // element touching it) are counted, filled, sorted and deduplicated in place — a
        // topology change at run time rebuilds this, and sorting short columns is far cheaper
        // than sorting all triplets.
        let free = |d: &usize| *d != FIXED;
        let mut bound = vec![1usize; n + 1];
        for &(a, b) in &dof_range {
            let k = dofs[a..b].iter().filter(|d| free(d)).count();
            for &c in dofs[a..b].iter().filter(|d| free(d)) {
                bound[c] += k;
            }
        }
        // Exclusive prefix sum: `bound[c]` becomes the start of column c's candidates.
        let mut total = 0;
        for b in bound.iter_mut() {
            let k = *b;
            *b = total;
            total += k;
        }
        let mut candidates = vec![0usize; total];
        let mut fill: Vec<usize> = bound[..n].to_vec();
        for (c, f) in fill.iter_mut().enumerate() {
            candidates[*f] = c;
            *f += 1;
        }
        for &(a, b) in &dof_range {
            for &c in dofs[a..b].iter().filter(|d| free(d)) {
                for &r in dofs[a..b].iter().filter(|d| free(d)) {
                    candidates[fill[c]] = r;
                    fill[c] += 1;
                }
            }
        }
        let mut indptr = Vec::with_capacity(n + 1);
        let mut indices = Vec::with_capacity(total);
        indptr.push(0);
        for c in 0..n {
            let col = &mut candidates[bound[c]..fill[c]];
            col.sort_unstable();
            let start = indices.len();
            for &r in col.iter() {
                if indices.len() == start || indices[indices.len() - 1] != r {
                    indices.push(r);
                }
            }
            indptr.push(indices.len());
        }
        let data = vec![0.0; indices.len()];
        let matrix = CsMat::new_csc((n, n), indptr, indices, data);
        // Index of entry (r, c) in the value array (present by construction).
        let slot = |r: usize, c: usize| -> usize {
            let (lo, hi) = (matrix.indptr().index(c), matrix.indptr().index(c + 1));
            matrix.indices()[lo..hi]
                .binary_search(&r)
                .map_or(FIXED, |k| lo + k)
        };

        // Slot map: per element, its free rows sorted by global index once, then one merge
        // scan along each of its columns (every row of the element is in each of its columns).
        let mut slot_start = Vec::with_capacity(elements.len());
        let mut slots = Vec::new();
        let mut max_local = 0;
        let mut rows: Vec<(usize, usize)> = Vec::new();
        let indices = matrix.indices();
        // The values allocated above (8 bytes each) would exhaust memory long before.
        assert!(
            indices.len() < NO_SLOT as usize,
            "iteration matrix with {} entries: above the 2^32 - 1 the slot map indexes",
            indices.len()
        );
        for &(a, b) in &dof_range {
            let start = slots.len();
            slot_start.push(start);
            let nl = b - a;
            max_local = max_local.max(nl);
            slots.resize(start + nl * nl, NO_SLOT);
            rows.clear();
            rows.extend(
                dofs[a..b]
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| free(d))
                    .map(|(i, &d)| (d, i)),
            );
            rows.sort_unstable();
            for (j, &c) in dofs[a..b].iter().enumerate() {
                if c == FIXED {
                    continue;
                }
                let mut k = matrix.indptr().index(c);
                for &(r, i) in &rows {
                    while indices[k] != r {
                        k += 1;
                    }
                    slots[start + j * nl + i] = k as u32;
                }
            }
        }
        let mult_diag_slots = (n_node_dofs..n).map(|i| slot(i, i)).collect();
        Self {
            mult_diag_slots,
            level,
            n,
            n_node_dofs,
            mult_range,
            active,
            dof_range,
            dofs,
            slot_start,
            slots,
            matrix,
            rhs: vec![0.0; n],
            max_local,
            generation,
        }
    }

    /// Whether the iteration matrix has the same order and nonzero pattern as `other`'s (the
    /// element-to-slot maps may differ).
    pub fn same_pattern(&self, other: &LevelSystem) -> bool {
        self.n == other.n
            && self.matrix.indptr().raw_storage() == other.matrix.indptr().raw_storage()
            && self.matrix.indices() == other.matrix.indices()
    }

    /// Number of local unknowns of element `e` at this level (0 if it does not contribute).
    #[inline]
    pub fn local_size(&self, e: usize) -> usize {
        let (a, b) = self.dof_range[e];
        b - a
    }

    /// Global unknowns of element `e` (local order), [`FIXED`] for fixed-node unknowns.
    #[inline]
    pub fn element_dofs(&self, e: usize) -> &[usize] {
        let (a, b) = self.dof_range[e];
        &self.dofs[a..b]
    }

    /// Set the diagonal entries of element `e`'s multiplier rows to `value` (e.g. to decouple the
    /// rows of an element left out of an assembly, whose rows are otherwise empty).
    pub fn set_multiplier_diagonal(&mut self, e: usize, value: f64) {
        let (a, n) = self.mult_range[e];
        let data = self.matrix.data_mut();
        for &s in &self.mult_diag_slots[a..a + n] {
            if s != FIXED {
                data[s] = value;
            }
        }
    }

    /// Zero the matrix values and the right-hand side (pattern kept).
    pub fn zero(&mut self) {
        self.matrix.data_mut().fill(0.0);
        self.rhs.fill(0.0);
    }

    /// Zero the right-hand side only (a residual-only assembly keeps the matrix values).
    pub fn zero_rhs(&mut self) {
        self.rhs.fill(0.0);
    }

    /// Add element `e`'s local residual `r` (its `n` local unknowns) into `rhs`.
    pub fn scatter_residual(&mut self, e: usize, r: &[f64]) {
        let (a, b) = self.dof_range[e];
        for (g, v) in self.dofs[a..b].iter().zip(r) {
            if *g != FIXED {
                self.rhs[*g] += v;
            }
        }
    }

    /// Add `value` to the diagonal entry of every multiplier unknown (Jacobian regularization).
    pub fn add_to_multiplier_diagonal(&mut self, value: f64) {
        let data = self.matrix.data_mut();
        for &s in &self.mult_diag_slots {
            if s != FIXED {
                data[s] += value;
            }
        }
    }

    /// Add element `e`'s local residual `r` (its `n` local unknowns) and local matrix `h`
    /// (column-major `n × n`, contiguous) into `rhs` and the matrix values.
    pub fn scatter_slices(&mut self, e: usize, r: &[f64], h: &[f64]) {
        let (a, b) = self.dof_range[e];
        let n = b - a;
        for (g, v) in self.dofs[a..b].iter().zip(r) {
            if *g != FIXED {
                self.rhs[*g] += v;
            }
        }
        let s0 = self.slot_start[e];
        let data = self.matrix.data_mut();
        for (slots, col) in self.slots[s0..s0 + n * n]
            .chunks_exact(n)
            .zip(h.chunks_exact(n))
        {
            for (&s, &v) in slots.iter().zip(col) {
                if s != NO_SLOT {
                    data[s as usize] += v;
                }
            }
        }
    }

    /// Add element `e`'s local residual (first `n` entries of `r`) into `rhs` and, if
    /// `hessian` is given, its local matrix (top-left `n×n` block) into the matrix values.
    pub fn scatter(&mut self, e: usize, r: &DVector<f64>, hessian: Option<&DMatrix<f64>>) {
        let (a, b) = self.dof_range[e];
        let n = b - a;
        for i in 0..n {
            let g = self.dofs[a + i];
            if g != FIXED {
                self.rhs[g] += r[i];
            }
        }
        if let Some(h) = hessian {
            let s0 = self.slot_start[e];
            let data = self.matrix.data_mut();
            let ld = h.nrows();
            let hs = h.as_slice();
            for j in 0..n {
                let slots = &self.slots[s0 + j * n..s0 + (j + 1) * n];
                let col = &hs[j * ld..j * ld + n];
                for (&s, &v) in slots.iter().zip(col) {
                    if s != NO_SLOT {
                        data[s as usize] += v;
                    }
                }
            }
        }
    }
}
