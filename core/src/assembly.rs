//! Sparse assembly of one level's residual and iteration matrix.
//!
//! The sparsity pattern is built once per topology (element set and fixed nodes): the union of
//! every element's dense local block over its global unknowns (of the elements in the pattern:
//! [`LevelSystem::without`] leaves some out), in CSC form, and a *slot map* records, for each
//! local entry `(i, j)`, its index in the CSC value array. Each Newton iteration then scatters
//! the element blocks in place: no allocation, no sorting (architecture.md §2.4). The first
//! write to each value (in element order) assigns instead of adding, so the values need no
//! zeroing pass beforehand ([`LevelSystem::zero`]).
//!
//! Global unknown order of a level: the free nodes' unknowns (node order), then the
//! multipliers of the elements contributing to that level (element order).

use crate::element::{Element, Level};
use crate::node::NodeDef;
use nalgebra::{DMatrix, DVector};
use sprs::CsMat;

/// Marks a local unknown that has no global unknown (fixed node).
pub const FIXED: usize = usize::MAX;

/// Marks a local block entry with no matrix value (a fixed row or column). Elements left out of
/// the pattern have no entries at all.
const NO_SLOT: u32 = u32::MAX;

/// Flag of a slot that is the first write to its value in a whole assembly (elements in
/// order, each block column-major): it assigns, the later ones add. The value index is the
/// slot without this bit ([`SLOT_INDEX`]).
const FIRST_WRITE: u32 = 1 << 31;

/// Mask of a slot's value index.
const SLOT_INDEX: u32 = !FIRST_WRITE;

/// Add (or, for a first write when `assign`, store) one column `col` of a local block into the
/// matrix values along its slots.
#[inline]
fn scatter_column(data: &mut [f64], slots: &[u32], col: &[f64], assign: bool) {
    for (&s, &v) in slots.iter().zip(col) {
        if s != NO_SLOT {
            let d = &mut data[(s & SLOT_INDEX) as usize];
            if assign && s & FIRST_WRITE != 0 {
                *d = v;
            } else {
                *d += v;
            }
        }
    }
}

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
    /// Per element: start of its column-major local block in `slots` (an element left out of
    /// the pattern owns no block: its start is the next one's, never indexed).
    slot_start: Vec<usize>,
    /// Per entry of each element's local block: its index in the matrix values, flagged
    /// [`FIRST_WRITE`] where it is the value's first write, or [`NO_SLOT`]. 32 bits: the
    /// scatter streams this map at every assembly, and on large models it is bound by memory
    /// bandwidth (rigid chain N = 10 000: 3.3 million entries).
    slots: Vec<u32>,
    /// Matrix values that no slot writes (a diagonal entry of an unknown no element in the
    /// pattern touches): [`LevelSystem::zero`] zeroes them.
    unwritten: Vec<u32>,
    /// The `active` flags the [`FIRST_WRITE`] flags hold for (those at construction): while
    /// `active` equals them, every value is written by its first write in each assembly.
    first_write_active: Vec<bool>,
    /// The current assembly stores first writes ([`LevelSystem::zero`] found `active`
    /// unchanged) instead of adding onto zeroed values.
    assign: bool,
    /// The element after the last one whose Hessian was scattered since [`LevelSystem::zero`]
    /// (debug builds check that the scatters come in element order).
    next_hessian: usize,
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
    /// Per element: its block is in the pattern ([`LevelSystem::without`] leaves some out; a
    /// Hessian scattered for one of those would be lost, which debug builds refuse).
    in_pattern: Vec<bool>,
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
        Self::build(level, nodes, numbering, elements, generation, &|_| true)
    }

    /// The system of [`LevelSystem::new`] — the same unknowns, multipliers and element unknown
    /// lists — with the matrix pattern of the elements that `leave_out` does not name: those
    /// scatter residuals, but their Hessian blocks have no slot (nothing is added). A stage
    /// solved without some of its elements in the matrix (the contact-space Gauss–Seidel:
    /// `A` of the bodies alone) then zeroes, scans and factorizes their pattern only.
    pub fn without(
        level: Level,
        nodes: &[NodeDef],
        numbering: &NodeNumbering,
        elements: &[Box<dyn Element>],
        generation: u64,
        leave_out: &dyn Fn(&dyn Element) -> bool,
    ) -> Self {
        let keep = |ie: usize| !leave_out(elements[ie].as_ref());
        Self::build(level, nodes, numbering, elements, generation, &keep)
    }

    /// [`LevelSystem::new`] with the matrix pattern of the elements `in_pattern` accepts.
    fn build(
        level: Level,
        nodes: &[NodeDef],
        numbering: &NodeNumbering,
        elements: &[Box<dyn Element>],
        generation: u64,
        in_pattern: &dyn Fn(usize) -> bool,
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

        // Unknown groups, each touched whole by every element touching it: a free node's
        // unknowns, an element's multipliers. Sorted starts, `n` closing the last.
        let mut group_start: Vec<usize> = numbering
            .offset
            .iter()
            .zip(nodes)
            .filter(|(off, node)| **off != FIXED && node.kind.ndof() > 0)
            .map(|(off, _)| *off)
            .chain(
                mult_range
                    .iter()
                    .filter(|(_, m)| *m > 0)
                    .map(|(m0, _)| n_node_dofs + m0),
            )
            .collect();
        group_start.sort_unstable();
        group_start.push(n);
        let in_pattern: Vec<bool> = (0..elements.len()).map(in_pattern).collect();
        let (matrix, slot_start, mut slots, max_local) =
            block_pattern(n, &group_start, &dof_range, &dofs, &in_pattern);
        let unwritten = flag_first_writes(&mut slots, matrix.nnz());
        // Index of entry (r, c) in the value array (present by construction).
        let slot = |r: usize, c: usize| -> usize {
            let (lo, hi) = (matrix.indptr().index(c), matrix.indptr().index(c + 1));
            matrix.indices()[lo..hi]
                .binary_search(&r)
                .map_or(FIXED, |k| lo + k)
        };
        let mult_diag_slots = (n_node_dofs..n).map(|i| slot(i, i)).collect();
        Self {
            first_write_active: active.clone(),
            mult_diag_slots,
            in_pattern,
            level,
            n,
            n_node_dofs,
            mult_range,
            active,
            dof_range,
            dofs,
            slot_start,
            slots,
            unwritten,
            assign: false,
            next_hessian: 0,
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

    /// Prepare an assembly of the matrix and the right-hand side (pattern kept): the
    /// right-hand side zeroed and the matrix values as zero for the scatters that follow.
    /// While `active` is as at construction, every value is written first by one slot of an
    /// active element, which stores instead of adding: only the values no slot writes are
    /// zeroed, not all of them (rigid chain N = 10 000: 2.5 million values, a pass over 20 MB
    /// per assembly). Otherwise (elements switched off for an assembly) all are zeroed and
    /// every scatter adds. The scatters must then cover every active element in the pattern,
    /// in element order, as a stage's assembly does.
    pub fn zero(&mut self) {
        self.assign = self.active == self.first_write_active;
        self.next_hessian = 0;
        let data = self.matrix.data_mut();
        if self.assign {
            for &i in &self.unwritten {
                data[i as usize] = 0.0;
            }
        } else {
            data.fill(0.0);
        }
        self.rhs.fill(0.0);
    }

    /// Zero the right-hand side only (a residual-only assembly keeps the matrix values).
    pub fn zero_rhs(&mut self) {
        self.rhs.fill(0.0);
    }

    /// Debug builds: element `e`'s Hessian comes after those scattered since
    /// [`LevelSystem::zero`], as the first-write flags assume.
    #[inline]
    fn check_order(&mut self, e: usize) {
        debug_assert!(
            !self.assign || e >= self.next_hessian,
            "Hessian of element {e} scattered after element {}'s: first writes assume element order",
            self.next_hessian.saturating_sub(1)
        );
        self.next_hessian = e + 1;
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
    /// (column-major `n × n`, contiguous) into `rhs` and the matrix values (a value's first
    /// write after [`LevelSystem::zero`] stores: see there for the order and coverage).
    pub fn scatter_slices(&mut self, e: usize, r: &[f64], h: &[f64]) {
        self.scatter_residual(e, r);
        self.scatter_hessian(e, h, self.local_size(e));
    }

    /// Add element `e`'s local residual (first `n` entries of `r`) into `rhs` and, if
    /// `hessian` is given, its local matrix (top-left `n×n` block) into the matrix values (as
    /// [`LevelSystem::scatter_slices`]).
    pub fn scatter(&mut self, e: usize, r: &DVector<f64>, hessian: Option<&DMatrix<f64>>) {
        self.scatter_residual(e, r.as_slice());
        if let Some(h) = hessian {
            self.scatter_hessian(e, h.as_slice(), h.nrows());
        }
    }

    /// Add element `e`'s local matrix, the top-left `n × n` block of the column-major `h` of
    /// leading dimension `ld`, into the matrix values along its slots.
    fn scatter_hessian(&mut self, e: usize, h: &[f64], ld: usize) {
        debug_assert!(
            self.in_pattern[e],
            "Hessian of element {e}, left out of the pattern"
        );
        let n = self.local_size(e);
        if !self.in_pattern[e] || n == 0 {
            return; // no slots: nothing to add
        }
        self.check_order(e);
        let s0 = self.slot_start[e];
        let data = self.matrix.data_mut();
        for (j, slots) in self.slots[s0..s0 + n * n].chunks_exact(n).enumerate() {
            scatter_column(data, slots, &h[j * ld..j * ld + n], self.assign);
        }
    }
}

/// Flag each value's first slot (in element and column-major order, the scatters' order)
/// [`FIRST_WRITE`]; returns the values of the `nnz` that no slot writes.
fn flag_first_writes(slots: &mut [u32], nnz: usize) -> Vec<u32> {
    let mut written = vec![false; nnz];
    for s in slots.iter_mut().filter(|s| **s != NO_SLOT) {
        let w = &mut written[*s as usize];
        if !*w {
            *w = true;
            *s |= FIRST_WRITE;
        }
    }
    (0..nnz as u32).filter(|&i| !written[i as usize]).collect()
}

/// Sort `v` and move its distinct values to the front: their count.
fn sort_dedup(v: &mut [u32]) -> usize {
    v.sort_unstable();
    let mut k = 0;
    for i in 0..v.len() {
        if k == 0 || v[i] != v[k - 1] {
            v[k] = v[i];
            k += 1;
        }
    }
    k
}

/// The CSC pattern of a level and its slot map, built group by group: `group_start` are the
/// sorted first unknowns of the unknown groups (a free node's unknowns, an element's
/// multipliers; `n` closes the last), and every element (`dofs[dof_range[e]]`, [`FIXED`] for a
/// fixed node's) touches a group whole. The rows of a column are then those of its group:
/// the union of the groups of every element touching it (the diagonal alone for a group no
/// element touches, so that every diagonal entry is present and the LU well-posed), found by
/// sorting a few group indices per group instead of tens of rows per column — a topology change
/// at run time (contacts found every step) rebuilds this. Returns the matrix (zero values),
/// each element's first slot, the slots (column-major local blocks, [`NO_SLOT`] on fixed rows
/// and columns; none for an element not `in_pattern`, which adds nothing to the pattern) and
/// the largest local size.
fn block_pattern(
    n: usize,
    group_start: &[usize],
    dof_range: &[(usize, usize)],
    dofs: &[usize],
    in_pattern: &[bool],
) -> (CsMat<f64>, Vec<usize>, Vec<u32>, usize) {
    let n_groups = group_start.len() - 1;
    let size = |g: usize| group_start[g + 1] - group_start[g];
    let mut group_of = vec![0u32; n];
    for g in 0..n_groups {
        group_of[group_start[g]..group_start[g + 1]].fill(g as u32);
    }
    // Each element's groups (sorted, distinct), contiguous.
    let mut elem_groups: Vec<u32> = Vec::with_capacity(dofs.len());
    let mut elem_range = Vec::with_capacity(dof_range.len());
    for (&(a, b), &kept) in dof_range.iter().zip(in_pattern) {
        let g0 = elem_groups.len();
        let b = if kept { b } else { a };
        elem_groups.extend(
            dofs[a..b]
                .iter()
                .filter(|&&d| d != FIXED)
                .map(|&d| group_of[d]),
        );
        let k = sort_dedup(&mut elem_groups[g0..]);
        elem_groups.truncate(g0 + k);
        elem_range.push((g0, g0 + k));
    }
    // Each group's row groups: its elements' groups, counted, filled, sorted, deduplicated.
    let mut bound = vec![0usize; n_groups + 1];
    for &(a, b) in &elem_range {
        for &g in &elem_groups[a..b] {
            bound[g as usize] += b - a;
        }
    }
    let mut total = 0;
    for b in bound.iter_mut() {
        let k = *b;
        *b = total;
        total += k;
    }
    let mut rows_of: Vec<u32> = vec![0; total];
    let mut fill: Vec<usize> = bound[..n_groups].to_vec();
    for &(a, b) in &elem_range {
        for &g in &elem_groups[a..b] {
            let f = &mut fill[g as usize];
            rows_of[*f..*f + (b - a)].copy_from_slice(&elem_groups[a..b]);
            *f += b - a;
        }
    }
    // `list[g]`: the range of `rows_of` holding group g's sorted distinct row groups;
    // `offset_in_column[k]`: the position, within a column of that group, of the first row
    // of the row group `rows_of[k]`.
    let mut list = Vec::with_capacity(n_groups);
    let mut offset_in_column = vec![0usize; total];
    for g in 0..n_groups {
        let (lo, hi) = (bound[g], fill[g]);
        let k = sort_dedup(&mut rows_of[lo..hi]);
        let mut at = 0;
        for (offset, &r) in offset_in_column[lo..lo + k]
            .iter_mut()
            .zip(&rows_of[lo..lo + k])
        {
            *offset = at;
            at += size(r as usize);
        }
        list.push((lo, lo + k));
    }
    let mut indptr = Vec::with_capacity(n + 1);
    // Sized once: a column of group g has the rows of its row groups (or its diagonal).
    let nnz: usize = (0..n_groups)
        .map(|g| {
            let (lo, hi) = list[g];
            let rows: usize = rows_of[lo..hi].iter().map(|&r| size(r as usize)).sum();
            size(g) * rows.max(1)
        })
        .sum();
    let mut indices = Vec::with_capacity(nnz);
    indptr.push(0);
    for g in 0..n_groups {
        let (lo, hi) = list[g];
        for c in group_start[g]..group_start[g + 1] {
            if lo == hi {
                indices.push(c);
            } else {
                for &r in &rows_of[lo..hi] {
                    let r = r as usize;
                    indices.extend(group_start[r]..group_start[r + 1]);
                }
            }
            indptr.push(indices.len());
        }
    }
    // The values allocated below (8 bytes each) would exhaust memory long before.
    assert!(
        indices.len() < SLOT_INDEX as usize,
        "iteration matrix with {} entries: the slot map indexes fewer than 2^31 - 1",
        indices.len()
    );
    let data = vec![0.0; indices.len()];
    let matrix = CsMat::new_csc((n, n), indptr, indices, data);

    // Slot map: entry (i, j) of an element's block, rows r of group R in column c of group G,
    // is at `indptr[c] + offset of R in G's column + (r − start of R)`.
    let indptr = matrix.indptr();
    let mut slot_start = Vec::with_capacity(dof_range.len());
    // Elements left out of the pattern have no slots (their Hessians are not scattered).
    let mut slots = Vec::with_capacity(
        dof_range
            .iter()
            .zip(in_pattern)
            .filter(|(_, &kept)| kept)
            .map(|(&(a, b), _)| (b - a) * (b - a))
            .sum(),
    );
    let mut max_local = 0;
    // Per local row: the position of its group among the element's groups; per element
    // group: the value index of its first row in the current column, and that row.
    let (mut row_group, mut at_group) = (Vec::new(), Vec::new());
    for (e, (&(a, b), &(ga, gb))) in dof_range.iter().zip(&elem_range).enumerate() {
        let start = slots.len();
        slot_start.push(start);
        let nl = b - a;
        max_local = max_local.max(nl);
        if !in_pattern[e] {
            // Left out of the pattern: no slots at all (a granular model's contacts, left
            // out at every topology change, would otherwise fill most of the map).
            continue;
        }
        slots.resize(start + nl * nl, NO_SLOT);
        if ga == gb {
            // Only on fixed nodes: no slot.
            continue;
        }
        let own = &elem_groups[ga..gb];
        row_group.clear();
        row_group.extend(dofs[a..b].iter().map(|&r| {
            if r == FIXED {
                usize::MAX
            } else {
                own.binary_search(&group_of[r])
                    .expect("an element's own group")
            }
        }));
        for (j, &c) in dofs[a..b].iter().enumerate() {
            if c == FIXED {
                continue;
            }
            let (lo, hi) = list[group_of[c] as usize];
            let base = indptr.index(c);
            // Present: the element's groups are among its columns' row groups.
            at_group.clear();
            at_group.extend(own.iter().map(|&rg| {
                let k = rows_of[lo..hi]
                    .binary_search(&rg)
                    .expect("an element's group in its columns");
                (base + offset_in_column[lo + k], group_start[rg as usize])
            }));
            for (i, &r) in dofs[a..b].iter().enumerate() {
                if r != FIXED {
                    let (first, r0) = at_group[row_group[i]];
                    slots[start + j * nl + i] = (first + (r - r0)) as u32;
                }
            }
        }
    }
    (matrix, slot_start, slots, max_local)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pattern and slots by the plain definition: every free `(row, column)` pair of
    /// every element plus the diagonal, sorted; each slot found by search.
    fn reference(
        n: usize,
        dof_range: &[(usize, usize)],
        dofs: &[usize],
        in_pattern: &[bool],
    ) -> (Vec<usize>, Vec<usize>, Vec<u32>) {
        let mut entries: Vec<(usize, usize)> = (0..n).map(|c| (c, c)).collect();
        for (&(a, b), _) in dof_range.iter().zip(in_pattern).filter(|(_, &k)| k) {
            for &c in dofs[a..b].iter().filter(|&&d| d != FIXED) {
                for &r in dofs[a..b].iter().filter(|&&d| d != FIXED) {
                    entries.push((c, r));
                }
            }
        }
        entries.sort_unstable();
        entries.dedup();
        let mut indptr = vec![0; n + 1];
        for &(c, _) in &entries {
            indptr[c + 1] += 1;
        }
        for c in 0..n {
            indptr[c + 1] += indptr[c];
        }
        let indices: Vec<usize> = entries.iter().map(|&(_, r)| r).collect();
        // Elements left out of the pattern have no slots.
        let mut slots = Vec::new();
        for (&(a, b), _) in dof_range.iter().zip(in_pattern).filter(|(_, &k)| k) {
            for &c in &dofs[a..b] {
                for &r in &dofs[a..b] {
                    slots.push(if c == FIXED || r == FIXED {
                        NO_SLOT
                    } else {
                        let k = entries.binary_search(&(c, r)).unwrap();
                        k as u32
                    });
                }
            }
        }
        (indptr, indices, slots)
    }

    /// A layout as [`LevelSystem::build`] hands it to [`block_pattern`]: order, group starts,
    /// element unknown ranges and lists, and which elements are in the pattern.
    type Layout = (
        usize,
        Vec<usize>,
        Vec<(usize, usize)>,
        Vec<usize>,
        Vec<bool>,
    );

    /// Random layout number `layout` — nodes of 3 or 6 unknowns, some fixed, elements on one
    /// to three nodes (a node listed twice included) with 0–6 multipliers, some groups
    /// untouched, and in every fourth layout some elements left out of the pattern.
    fn random_layout(layout: usize, next: &mut impl FnMut(usize) -> usize) -> Layout {
        let n_nodes = 1 + next(12);
        // Node groups (None: fixed).
        let mut nodes = Vec::new();
        let mut n = 0;
        for _ in 0..n_nodes {
            if next(5) == 0 {
                nodes.push(None);
            } else {
                let k = if next(2) == 0 { 3 } else { 6 };
                nodes.push(Some((n, k)));
                n += k;
            }
        }
        let n_node = n;
        let n_elements = next(10);
        let mut elem_nodes = Vec::new();
        let mut mults = Vec::new();
        for _ in 0..n_elements {
            let count = 1 + next(3);
            elem_nodes.push((0..count).map(|_| next(n_nodes)).collect::<Vec<_>>());
            mults.push(next(7));
        }
        let mut group_start: Vec<usize> = nodes.iter().flatten().map(|&(s, _)| s).collect();
        let (mut dofs, mut dof_range) = (Vec::new(), Vec::new());
        let mut m_total = 0;
        for (e, listed) in elem_nodes.iter().enumerate() {
            let a = dofs.len();
            for &id in listed {
                match nodes[id] {
                    Some((s, k)) => dofs.extend(s..s + k),
                    None => dofs.extend([FIXED; 6]),
                }
            }
            let m = mults[e];
            if m > 0 {
                group_start.push(n_node + m_total);
            }
            dofs.extend(n_node + m_total..n_node + m_total + m);
            m_total += m;
            dof_range.push((a, dofs.len()));
        }
        n += m_total;
        group_start.push(n);
        let in_pattern: Vec<bool> = (0..n_elements)
            .map(|_| layout % 4 != 3 || next(2) == 0)
            .collect();
        (n, group_start, dof_range, dofs, in_pattern)
    }

    /// xorshift64: the tests' deterministic source of layouts and values.
    fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        }
    }

    /// Random layouts ([`random_layout`]) give the reference's pattern and slots exactly.
    #[test]
    fn block_pattern_is_the_union_of_the_element_blocks() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for layout in 0..200 {
            let (n, group_start, dof_range, dofs, in_pattern) = random_layout(layout, &mut next);
            let (matrix, slot_start, slots, max_local) =
                block_pattern(n, &group_start, &dof_range, &dofs, &in_pattern);
            let (indptr, indices, expected) = reference(n, &dof_range, &dofs, &in_pattern);
            assert_eq!(matrix.indptr().raw_storage(), &indptr[..]);
            assert_eq!(matrix.indices(), &indices[..]);
            assert_eq!(slots, expected);
            let sizes: Vec<usize> = dof_range.iter().map(|&(a, b)| b - a).collect();
            assert_eq!(max_local, sizes.iter().copied().max().unwrap_or(0));
            let mut at = 0;
            for (e, &s) in slot_start.iter().enumerate() {
                assert_eq!(s, at);
                if in_pattern[e] {
                    at += sizes[e] * sizes[e];
                }
            }
            assert_eq!(slots.len(), at);
        }
    }

    /// Scattering with first writes stored ([`flag_first_writes`]) onto values holding
    /// garbage, the unwritten values zeroed, gives exactly what adding every block onto zeroed
    /// values gives (`0 + v = v` in floating point, up to the sign of a zero; the later
    /// additions are the same in the same order), on the random layouts of [`random_layout`].
    #[test]
    fn first_writes_stored_equal_additions_onto_zeros() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for layout in 0..200 {
            let (n, group_start, dof_range, dofs, in_pattern) = random_layout(layout, &mut next);
            let (matrix, slot_start, plain, _) =
                block_pattern(n, &group_start, &dof_range, &dofs, &in_pattern);
            let mut flagged = plain.clone();
            let unwritten = flag_first_writes(&mut flagged, matrix.nnz());
            let mut added = vec![0.0; matrix.nnz()];
            let mut stored = vec![f64::NAN; matrix.nnz()];
            for &i in &unwritten {
                stored[i as usize] = 0.0;
            }
            for (e, &(a, b)) in dof_range.iter().enumerate() {
                let nl = b - a;
                if !in_pattern[e] || nl == 0 {
                    continue;
                }
                let block: Vec<f64> = (0..nl * nl).map(|_| next(2001) as f64 - 1000.0).collect();
                let s0 = slot_start[e];
                for (j, col) in block.chunks_exact(nl).enumerate() {
                    let cols = s0 + j * nl..s0 + (j + 1) * nl;
                    scatter_column(&mut added, &plain[cols.clone()], col, false);
                    scatter_column(&mut stored, &flagged[cols], col, true);
                }
            }
            assert_eq!(stored, added, "layout {layout}");
            // Every value is written once first, or listed as unwritten.
            let firsts = flagged
                .iter()
                .filter(|&&s| s != NO_SLOT && s & FIRST_WRITE != 0);
            assert_eq!(firsts.count() + unwritten.len(), matrix.nnz());
        }
    }
}
