//! Sparse LU: a factorization with threshold pivoting that prefers the diagonal
//! ([`StaticLu::factor`], Gilbert–Peierls), then refactorizations with its fixed pivot sequence
//! ([`StaticLu::refactor`]): left-looking, column by column, along the known patterns of `L`
//! and `U` — no pivot search and no structure search per refactorization. A pivot that became
//! too small for the old sequence is reported, and the caller factorizes with pivoting again.
//!
//! With `P A Q = L U` (row `i` of `P A Q` is row `row_perm[i]` of `A`, column `j` is column
//! `col_perm[j]`), column `j` of the factors is computed from column `col_perm[j]` of `A`
//! scattered into pivot positions, `x = P a`:
//!
//! ```text
//! for k in pattern(U[:, j]), ascending:   U[k, j] = x[k];  x[r] −= L[r, k] U[k, j]  (r > k)
//! U[j, j] = x[j];                          L[r, j] = x[r] / U[j, j]                   (r > j)
//! ```
//!
//! When the factors fill (contact networks: a settling pile's `L` holds six times the
//! matrix), consecutive columns of `L` share their rows below a dense diagonal block
//! (supernodes); the refactorization and the forward solve then update from each supernode
//! with dense column operations and one scattered subtraction per shared row
//! ([`StaticLu::build_supernodes`]). Sparse factors (chains) stay column by column.

/// Smallest accepted `|U_jj| / max_r |x_r|` of a refactorization, the maximum over the
/// column's candidates of the column's kind (see [`StaticLu::factor`]): below it the old pivot
/// order is abandoned for a new factorization with pivot search.
const PIVOT_TOL: f64 = 1e-3;

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
    l_idx: Vec<Pos>,
    l_val: Vec<f64>,
    /// Strictly upper part of `U` by columns (rows ascending).
    u_ptr: Vec<usize>,
    u_idx: Vec<Pos>,
    u_val: Vec<f64>,
    u_diag: Vec<f64>,
    /// Per entry of the factorized matrix's CSC storage: the pivot position of its row (the
    /// refactorization scatters a column straight to its positions).
    a_pos: Vec<Pos>,
    /// Per pivot position: its row is a node row (`row_perm[r] < primary`).
    node_row: Vec<bool>,
    /// Dense work vector, zero between columns.
    x: Vec<f64>,
    /// Forward-substitution vector of [`StaticLu::refactor_solve`] (pivot positions).
    y: Vec<f64>,
    /// Work of [`StaticLu::factor`]: the column last reaching each pivot position and each
    /// original row, the worklist and the reached pivot positions.
    mark: Vec<usize>,
    row_mark: Vec<usize>,
    stack: Vec<usize>,
    reach: Vec<usize>,
    /// Largest `L` and `U` pattern sizes stored so far (for [`StaticLu::reserve_twice`]).
    max_l: usize,
    max_u: usize,
    /// Supernodal copy of `L` (see [`StaticLu::build_supernodes`]): supernode `s` holds the
    /// columns `sn_start[s] .. sn_start[s + 1]`, whose rows below the supernode are
    /// `sn_rows[sn_rows_ptr[s] ..]` (pivot positions, ascending), in a dense column-major
    /// block at `sn_val[sn_val_ptr[s] ..]` of `w + |rows|` rows (the supernode's own `w`
    /// rows first; the strictly lower triangle of that square is `L`, the rest unused).
    sn_start: Vec<usize>,
    sn_of: Vec<usize>,
    sn_rows_ptr: Vec<usize>,
    sn_rows: Vec<Pos>,
    sn_val_ptr: Vec<usize>,
    sn_val: Vec<f64>,
    /// Dense accumulator of a supernode's update of the rows below it (zero between uses).
    sn_tmp: Vec<f64>,
    /// Work of [`StaticLu::symbolic_diagonal`]: the symmetrized lower adjacency, a cursor,
    /// the elimination tree and the ancestors of its construction.
    sym_ptr: Vec<usize>,
    sym_adj: Vec<usize>,
    sym_cursor: Vec<usize>,
    sym_parent: Vec<usize>,
    sym_ancestor: Vec<usize>,
    /// Sorting buffer of [`StaticLu::build_supernodes`].
    sort_buf: Vec<(Pos, f64)>,
    /// The refactorization and the forward solve run on the supernodes (else on the
    /// columns of `L`, and the supernode arrays are empty).
    supernodal: bool,
    /// Unknowns `< primary` are node unknowns, the others multipliers: a pivot is judged
    /// against the candidates of its own kind (see [`StaticLu::factor`]).
    primary: usize,
    /// Whether the stored structure may be refactorized.
    pub(super) valid: bool,
}

/// The old pivot sequence no longer serves (small pivot, or an entry outside the patterns).
#[derive(Debug)]
pub(super) struct PivotFailure;

/// Column `j` of the column order has no nonzero pivot candidate (singular matrix).
#[derive(Debug)]
pub(super) struct Singular(pub(super) usize);

/// Threshold of [`StaticLu::factor`]'s pivot choice: the diagonal entry of the column is kept
/// as pivot when `|x_c| ≥ DIAGONAL_PREFERENCE · max_r |x_r|` over the candidates of the
/// column's kind, the largest candidate otherwise. Above [`PIVOT_TOL`], so that a fresh pivot
/// order passes its own refactorization test.
const DIAGONAL_PREFERENCE: f64 = 0.01;

/// Mean number of shared rows per supernode (rows of `L` below a supernode) from which the
/// refactorization runs on supernodes: below it the supernodes are too small for their dense
/// updates to pay (measured: rigid chain, 6 rows, 37 % more instructions in the
/// refactorization; granular pile, 37 rows, 13 % less time per step).
const SUPERNODAL_SHARED_ROWS: usize = 16;

/// Whether `d` serves as the pivot of a refactorization against the largest candidate `big`
/// below it ([`PIVOT_TOL`]; non-finite values fail).
fn pivot_ok(d: f64, big: f64) -> bool {
    d.is_finite() && big.is_finite() && d.abs() >= PIVOT_TOL * big && d != 0.0
}

/// Geometry of one supernode (see [`StaticLu::build_supernodes`]).
struct Supernode {
    /// First and last column (pivot positions).
    first: usize,
    last: usize,
    /// Width `last + 1 − first`.
    w: usize,
    /// Its shared rows: `sn_rows[r0..r1]`.
    r0: usize,
    r1: usize,
    /// Rows of its dense block: `w + r1 − r0`.
    height: usize,
}

/// Marks a row without a pivot position yet.
const UNSET: usize = usize::MAX;

/// A pivot position or row index as the factors store it: 32 bits halve the index traffic
/// of the refactorization and the solves, which stream the patterns once each and are bound
/// by memory bandwidth on large models (rigid chain N = 10 000: 3 million entries of `L`
/// and `U`). [`Lu`](super::Lu) refuses orders above [`MAX_ORDER`].
type Pos = u32;

/// Largest order the factors index ([`Pos`]).
pub(super) const MAX_ORDER: usize = Pos::MAX as usize;

/// One column of the forward substitution `L y = P b` on the column path: `y_i −= L_ij y_j`
/// over column `j` of `L` (`y_j` final once the columns before it are applied).
#[inline]
fn forward_column(l_ptr: &[usize], l_idx: &[Pos], l_val: &[f64], y: &mut [f64], j: usize) {
    let yj = y[j];
    if yj != 0.0 {
        let (a, b) = (l_ptr[j], l_ptr[j + 1]);
        for (&i, &l) in l_idx[a..b].iter().zip(&l_val[a..b]) {
            y[i as usize] -= l * yj;
        }
    }
}

impl StaticLu {
    /// Factorize `P A Q = L U` of the square CSC matrix `a` (`col_ptr`, `rows` sorted or not,
    /// `values`) along the column order `col_perm`, choosing each pivot by threshold partial
    /// pivoting with a preference for the diagonal: column `j` (column `c = col_perm[j]` of
    /// `A`) keeps row `c` as pivot when it is within [`DIAGONAL_PREFERENCE`] of the largest
    /// candidate *of its kind* — node rows for a node column, multiplier rows for a multiplier
    /// column (`primary` separates them; `primary = n`: one kind) — else takes the largest
    /// candidate. The iteration matrices are saddle-point matrices `[A Gᵀ; G D]` with a
    /// symmetric pattern, `A` dominated by inertia and penalty `p gᵀg`: like a quasi-definite
    /// matrix they are factorized stably along a symmetric order with diagonal pivots, while
    /// their node and multiplier rows have unrelated scales (a sphere's rotation column holds
    /// `I/(β h²)` on the diagonal and a larger `k g` in a friction row). Keeping the diagonal
    /// keeps the fill of the symmetric order, where partial pivoting swaps rows for any larger
    /// entry and fills the factors of large contact models (the old path, faer's simplicial
    /// LU: most of the time of a settling 1 000-sphere pile).
    ///
    /// Left-looking (Gilbert–Peierls): per column, the reach of its entries through the
    /// columns of `L` gives the structure of `U[:, j]`, processed in ascending
    /// pivot position (a topological order, `L` being lower triangular in pivot positions),
    /// and `L[:, j]` is the rest of the reach. The patterns are structural (entries that
    /// cancel numerically are kept), so [`StaticLu::refactor`] can reuse them. On failure
    /// `valid` is false.
    pub(super) fn factor(
        &mut self,
        col_ptr: &[usize],
        rows: &[usize],
        values: &[f64],
        col_perm: &[usize],
        primary: usize,
    ) -> Result<(), Singular> {
        let n = col_perm.len();
        self.n = n;
        self.primary = primary;
        let capacity = (self.l_idx.capacity(), self.u_idx.capacity());
        self.valid = false;
        self.col_perm.clear();
        self.col_perm.extend_from_slice(col_perm);
        self.row_perm.clear();
        self.row_perm.resize(n, UNSET);
        self.row_pos.clear();
        self.row_pos.resize(n, UNSET);
        self.x.clear();
        self.x.resize(n, 0.0);
        self.y.clear();
        self.y.resize(n, 0.0);
        for m in [&mut self.mark, &mut self.row_mark] {
            m.clear();
            m.resize(n, UNSET);
        }
        for v in [&mut self.l_ptr, &mut self.u_ptr] {
            v.clear();
            v.push(0);
        }
        self.l_idx.clear();
        self.l_val.clear();
        self.u_idx.clear();
        self.u_val.clear();
        self.u_diag.clear();
        self.u_diag.resize(n, 0.0);
        for j in 0..n {
            let c = col_perm[j];
            let (a0, a1) = (col_ptr[c], col_ptr[c + 1]);
            // Reach: pivoted rows of the column and, through L, every pivot position they
            // update; rows without a pivot yet are the candidates (`L` holds original row
            // indices until the end). A worklist: the order is fixed by the sort below.
            self.reach.clear();
            self.stack.clear();
            let l_start = self.l_idx.len();
            for &r in &rows[a0..a1] {
                self.visit(r, j);
            }
            while let Some(k) = self.stack.pop() {
                self.reach.push(k);
                for q in self.l_ptr[k]..self.l_ptr[k + 1] {
                    self.visit(self.l_idx[q] as usize, j);
                }
            }
            // The update needs a topological order: ascending pivot positions is one.
            self.reach.sort_unstable();
            for (&r, &v) in rows[a0..a1].iter().zip(&values[a0..a1]) {
                self.x[r] += v;
            }
            for &k in &self.reach {
                let ukj = self.x[self.row_perm[k]];
                self.x[self.row_perm[k]] = 0.0;
                self.u_idx.push(k as Pos);
                self.u_val.push(ukj);
                if ukj != 0.0 {
                    for q in self.l_ptr[k]..self.l_ptr[k + 1] {
                        self.x[self.l_idx[q] as usize] -= self.l_val[q] * ukj;
                    }
                }
            }
            self.u_ptr.push(self.u_idx.len());
            // Pivot: the diagonal row c if strong enough against the candidates of its kind,
            // else the largest candidate.
            let candidates = &self.l_idx[l_start..];
            let kind = c < primary;
            let (mut big, mut arg, mut big_kind) = (0.0f64, UNSET, 0.0f64);
            for &r in candidates {
                let r = r as usize;
                let v = self.x[r].abs();
                if v > big || v.is_nan() {
                    big = v;
                    arg = r;
                }
                if (r < primary) == kind && (v > big_kind || v.is_nan()) {
                    big_kind = v;
                }
            }
            let diagonal = self.row_pos[c] == UNSET
                && self.row_mark[c] == j
                && self.x[c].abs() >= DIAGONAL_PREFERENCE * big_kind;
            let pivot = if diagonal { c } else { arg };
            let d = if pivot == UNSET { 0.0 } else { self.x[pivot] };
            if !(d.is_finite() && d != 0.0) {
                for &r in &self.l_idx[l_start..] {
                    self.x[r as usize] = 0.0;
                }
                return Err(Singular(j));
            }
            self.row_pos[pivot] = j;
            self.row_perm[j] = pivot;
            self.u_diag[j] = d;
            // L[:, j]: the other candidates (the pivot's slot is dropped).
            let inv = 1.0 / d;
            let mut w = l_start;
            for q in l_start..self.l_idx.len() {
                let r = self.l_idx[q] as usize;
                if r != pivot {
                    self.l_idx[w] = r as Pos;
                    self.l_val.push(self.x[r] * inv);
                    w += 1;
                }
                self.x[r] = 0.0;
            }
            self.l_idx.truncate(w);
            self.l_ptr.push(w);
        }
        // L's rows in pivot positions.
        for r in &mut self.l_idx {
            *r = self.row_pos[*r as usize] as Pos;
        }
        self.finish_structure(capacity, rows);
        Ok(())
    }

    /// The factors' structure is complete: storage that had to grow (its capacities were
    /// `capacity` before) gets room for twice this fill, so that later pivot orders of the
    /// pattern fit without allocating; supernodes built; the factors valid.
    fn finish_structure(&mut self, capacity: (usize, usize), rows: &[usize]) {
        self.a_pos.clear();
        self.a_pos
            .extend(rows.iter().map(|&r| self.row_pos[r] as Pos));
        self.node_row.clear();
        let primary = self.primary;
        self.node_row
            .extend(self.row_perm.iter().map(|&r| r < primary));
        self.max_l = self.max_l.max(self.l_idx.len());
        self.max_u = self.max_u.max(self.u_idx.len());
        if (self.l_idx.capacity(), self.u_idx.capacity()) != capacity {
            self.reserve_twice();
        }
        self.build_supernodes();
        self.valid = true;
    }

    /// Set up the factors' structure for pivots on the diagonal along `col_perm` (no
    /// numeric work; [`StaticLu::refactor`] then computes the values and checks the pivots):
    /// with `B = Qᵀ A Q` symmetrized, `L` has the pattern of `B`'s Cholesky factor and `U`
    /// its transpose — row `k` of `L` is the reach of row `k` of `B` in the elimination tree
    /// (Liu's algorithm for the tree). The structure of a structurally unsymmetric `A` is
    /// that of `A + Aᵀ`, a superset of its fill, so no fill is missed. Cheaper than
    /// [`StaticLu::factor`]'s per-column reach and sort when a contact model's pattern
    /// changes every step and its pivots stay on the diagonal. Allocates (a new pattern).
    pub(super) fn symbolic_diagonal(
        &mut self,
        col_ptr: &[usize],
        rows: &[usize],
        col_perm: &[usize],
        primary: usize,
    ) {
        let n = col_perm.len();
        self.n = n;
        self.primary = primary;
        self.valid = false;
        let capacity = (self.l_idx.capacity(), self.u_idx.capacity());
        self.col_perm.clear();
        self.col_perm.extend_from_slice(col_perm);
        self.row_perm.clear();
        self.row_perm.extend_from_slice(col_perm);
        self.row_pos.clear();
        self.row_pos.resize(n, UNSET);
        for (j, &c) in col_perm.iter().enumerate() {
            self.row_pos[c] = j;
        }
        self.x.clear();
        self.x.resize(n, 0.0);
        self.y.clear();
        self.y.resize(n, 0.0);
        // Lower neighbours i < k of each pivot position k in the symmetrized pattern (work
        // arrays kept between calls: a pattern analyzed before the steps allocates nothing).
        let mut ptr = std::mem::take(&mut self.sym_ptr);
        let mut adj = std::mem::take(&mut self.sym_adj);
        let mut fill = std::mem::take(&mut self.sym_cursor);
        let mut parent = std::mem::take(&mut self.sym_parent);
        let mut ancestor = std::mem::take(&mut self.sym_ancestor);
        ptr.clear();
        ptr.resize(n + 1, 0);
        for c in 0..n {
            let pc = self.row_pos[c];
            for &r in &rows[col_ptr[c]..col_ptr[c + 1]] {
                let pr = self.row_pos[r];
                if pr != pc {
                    ptr[pr.max(pc) + 1] += 1;
                }
            }
        }
        for k in 0..n {
            ptr[k + 1] += ptr[k];
        }
        adj.clear();
        adj.resize(ptr[n], 0);
        fill.clear();
        fill.extend_from_slice(&ptr);
        for c in 0..n {
            let pc = self.row_pos[c];
            for &r in &rows[col_ptr[c]..col_ptr[c + 1]] {
                let pr = self.row_pos[r];
                if pr != pc {
                    let (lo, hi) = (pr.min(pc), pr.max(pc));
                    adj[fill[hi]] = lo;
                    fill[hi] += 1;
                }
            }
        }
        // Elimination tree (with path compression through `ancestor`).
        parent.clear();
        parent.resize(n, UNSET);
        ancestor.clear();
        ancestor.resize(n, UNSET);
        for k in 0..n {
            for &i in &adj[ptr[k]..ptr[k + 1]] {
                let mut r = i;
                while ancestor[r] != UNSET && ancestor[r] != k {
                    let next = ancestor[r];
                    ancestor[r] = k;
                    r = next;
                }
                if ancestor[r] == UNSET {
                    ancestor[r] = k;
                    parent[r] = k;
                }
            }
        }
        // U[:, k] = the reach of row k (ascending); L = its transpose.
        self.mark.clear();
        self.mark.resize(n, UNSET);
        self.u_ptr.clear();
        self.u_ptr.push(0);
        self.u_idx.clear();
        for k in 0..n {
            self.mark[k] = k;
            let start = self.u_idx.len();
            for &i in &adj[ptr[k]..ptr[k + 1]] {
                let mut j = i;
                while self.mark[j] != k {
                    self.mark[j] = k;
                    self.u_idx.push(j as Pos);
                    j = parent[j];
                }
            }
            self.u_idx[start..].sort_unstable();
            self.u_ptr.push(self.u_idx.len());
        }
        self.l_ptr.clear();
        self.l_ptr.resize(n + 1, 0);
        for &j in &self.u_idx {
            self.l_ptr[j as usize + 1] += 1;
        }
        for j in 0..n {
            self.l_ptr[j + 1] += self.l_ptr[j];
        }
        self.l_idx.clear();
        self.l_idx.resize(self.u_idx.len(), 0);
        fill.clear();
        fill.extend_from_slice(&self.l_ptr);
        for k in 0..n {
            for q in self.u_ptr[k]..self.u_ptr[k + 1] {
                let j = self.u_idx[q] as usize;
                self.l_idx[fill[j]] = k as Pos;
                fill[j] += 1;
            }
        }
        (self.sym_ptr, self.sym_adj, self.sym_cursor) = (ptr, adj, fill);
        (self.sym_parent, self.sym_ancestor) = (parent, ancestor);
        self.l_val.clear();
        self.l_val.resize(self.l_idx.len(), 0.0);
        self.u_val.clear();
        self.u_val.resize(self.u_idx.len(), 0.0);
        self.u_diag.clear();
        self.u_diag.resize(n, 0.0);
        self.finish_structure(capacity, rows);
    }

    /// Sort each column of `L` by row and copy `L` into supernodes: maximal runs of columns
    /// `k` whose pattern is `{k + 1} ∪ pattern(k + 1)` (the diagonal block below `k` is dense
    /// and the rows below the run are shared). The refactorization and the forward solve then
    /// update from a whole supernode with dense column operations on contiguous slices and
    /// one scattered subtraction per shared row, instead of one per entry of `L`. Storage
    /// that has to grow gets room for twice the size (as [`StaticLu::reserve_twice`]).
    fn build_supernodes(&mut self) {
        let n = self.n;
        for j in 0..n {
            let (a, b) = (self.l_ptr[j], self.l_ptr[j + 1]);
            self.sort_buf.clear();
            self.sort_buf.extend(
                self.l_idx[a..b]
                    .iter()
                    .copied()
                    .zip(self.l_val[a..b].iter().copied()),
            );
            self.sort_buf.sort_unstable_by_key(|&(r, _)| r);
            for (q, &(r, v)) in (a..b).zip(&self.sort_buf) {
                self.l_idx[q] = r;
                self.l_val[q] = v;
            }
        }
        // Supernode boundaries: extend column j's run while its pattern is
        // {j + 1} ∪ pattern(j + 1).
        self.sn_start.clear();
        let (mut shared, mut j) = (0, 0);
        while j < n {
            self.sn_start.push(j);
            while j + 1 < n {
                let (a, b) = (self.l_ptr[j], self.l_ptr[j + 1]);
                let (c, d) = (self.l_ptr[j + 1], self.l_ptr[j + 2]);
                let joins = b - a == d - c + 1
                    && self.l_idx[a] as usize == j + 1
                    && self.l_idx[a + 1..b] == self.l_idx[c..d];
                if !joins {
                    break;
                }
                j += 1;
            }
            shared += self.l_ptr[j + 1] - self.l_ptr[j];
            j += 1;
        }
        let count = self.sn_start.len();
        self.sn_start.push(n);
        self.sn_of.clear();
        self.sn_rows_ptr.clear();
        self.sn_rows.clear();
        self.sn_val_ptr.clear();
        self.sn_val.clear();
        self.supernodal = shared >= SUPERNODAL_SHARED_ROWS * count;
        if !self.supernodal {
            self.sn_start.clear();
            return;
        }
        fn grow<T>(v: &mut Vec<T>, len: usize) {
            if v.capacity() < len {
                v.reserve(2 * len - v.len());
            }
        }
        grow(&mut self.sn_of, n);
        self.sn_of.resize(n, 0);
        self.sn_rows_ptr.push(0);
        self.sn_val_ptr.push(0);
        let mut widest_rows = 0;
        for sn in 0..count {
            let (start, end) = (self.sn_start[sn], self.sn_start[sn + 1] - 1);
            let w = end + 1 - start;
            for k in start..=end {
                self.sn_of[k] = sn;
            }
            let (a, b) = (self.l_ptr[end], self.l_ptr[end + 1]);
            let below = b - a;
            widest_rows = widest_rows.max(below);
            let len = self.sn_rows.len() + below;
            grow(&mut self.sn_rows, len);
            self.sn_rows.extend_from_slice(&self.l_idx[a..b]);
            self.sn_rows_ptr.push(self.sn_rows.len());
            let rows = w + below;
            let off = self.sn_val.len();
            if self.sn_val.capacity() < off + rows * w {
                self.sn_val.reserve(2 * (off + rows * w) - off);
            }
            self.sn_val.resize(off + rows * w, 0.0);
            for k in start..=end {
                // Column k's pattern: rows k + 1 ..= end of the supernode, then the shared
                // ones.
                let col = off + (k - start) * rows;
                let (a, b) = (self.l_ptr[k], self.l_ptr[k + 1]);
                for (i, &v) in self.l_val[a..b].iter().enumerate() {
                    let at = if i < end - k {
                        k + 1 + i - start
                    } else {
                        w + i - (end - k)
                    };
                    self.sn_val[col + at] = v;
                }
            }
            self.sn_val_ptr.push(self.sn_val.len());
        }
        if self.sn_tmp.len() < widest_rows {
            self.sn_tmp.resize(2 * widest_rows, 0.0);
        }
    }

    /// Reach of column `j` at original row `r`: a row without a pivot becomes a candidate
    /// (appended to `L`'s current column), a pivoted one is queued for the reach search; each
    /// once per column.
    fn visit(&mut self, r: usize, j: usize) {
        let k = self.row_pos[r];
        if k == UNSET {
            if self.row_mark[r] != j {
                self.row_mark[r] = j;
                self.l_idx.push(r as Pos);
            }
        } else if self.mark[k] != j {
            self.mark[k] = j;
            self.stack.push(k);
        }
    }

    /// Take `other`'s pivot order and factor patterns (valid factors of a matrix of the
    /// pattern these factors were analyzed for), reusing this storage; the values follow at
    /// the next [`StaticLu::refactor`]. Room for `L` and `U` is then reserved as after a
    /// factorization (the supernode arrays are copied at their size; they grow, as in
    /// [`StaticLu::build_supernodes`], if a later pivot order needs more).
    pub(super) fn copy_structure(&mut self, other: &StaticLu) {
        self.n = other.n;
        self.row_perm.clone_from(&other.row_perm);
        self.row_pos.clone_from(&other.row_pos);
        self.col_perm.clone_from(&other.col_perm);
        self.l_ptr.clone_from(&other.l_ptr);
        self.l_idx.clone_from(&other.l_idx);
        self.l_val.clone_from(&other.l_val);
        self.u_ptr.clone_from(&other.u_ptr);
        self.u_idx.clone_from(&other.u_idx);
        self.u_val.clone_from(&other.u_val);
        self.u_diag.clone_from(&other.u_diag);
        self.a_pos.clone_from(&other.a_pos);
        self.node_row.clone_from(&other.node_row);
        self.sn_start.clone_from(&other.sn_start);
        self.sn_of.clone_from(&other.sn_of);
        self.sn_rows_ptr.clone_from(&other.sn_rows_ptr);
        self.sn_rows.clone_from(&other.sn_rows);
        self.sn_val_ptr.clone_from(&other.sn_val_ptr);
        self.sn_val.clone_from(&other.sn_val);
        self.supernodal = other.supernodal;
        self.primary = other.primary;
        let n = self.n;
        for v in [&mut self.x, &mut self.y] {
            v.clear();
            v.resize(n, 0.0);
        }
        if self.sn_tmp.len() < other.sn_tmp.len() {
            self.sn_tmp.resize(other.sn_tmp.len(), 0.0);
        }
        self.sn_tmp.fill(0.0);
        for m in [&mut self.mark, &mut self.row_mark] {
            m.clear();
            m.resize(n, UNSET);
        }
        self.max_l = self.max_l.max(other.l_idx.len());
        self.max_u = self.max_u.max(other.u_idx.len());
        self.reserve_twice();
        self.valid = other.valid;
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
        self.refactor_solve(col_ptr, rows, values, None).map(|_| ())
    }

    /// [`StaticLu::refactor`], and with `b` (length `n`) also `A x = b` solved in place when
    /// the factors are on the column path: the forward substitution `L y = P b` applies each
    /// column of `L` right after computing it, while it is still in cache, instead of reading
    /// `L` again in [`StaticLu::solve`] (the same operations in the same order: the same
    /// result to the bit). Returns whether `b` was solved; on failure `b` is unchanged.
    pub(super) fn refactor_solve(
        &mut self,
        col_ptr: &[usize],
        rows: &[usize],
        values: &[f64],
        b: Option<&mut [f64]>,
    ) -> Result<bool, PivotFailure> {
        let fused = !self.supernodal && b.as_ref().is_some_and(|b| b.len() == self.n);
        if fused {
            if let Some(b) = b.as_deref() {
                for (yi, &r) in self.y.iter_mut().zip(&self.row_perm) {
                    *yi = b[r];
                }
            }
        }
        // Every entry of `a` lies in the stored patterns (the structural reach of its
        // pattern, or the symmetrized Cholesky pattern that contains it), so a column leaves
        // nothing in `x` outside them. `a` must have the analyzed pattern (`Lu::factorize`'s
        // generation contract); one with another number of entries is refused here.
        if rows.len() != self.a_pos.len() || values.len() != rows.len() {
            return self.fail();
        }
        for j in 0..self.n {
            let c = self.col_perm[j];
            self.load_column(col_ptr, values, c);
            if self.supernodal {
                self.update_from_supernodes(j);
            } else {
                self.update_from_columns(j);
            }
            let d = self.x[j];
            self.x[j] = 0.0;
            let kind = c < self.primary;
            if self.supernodal {
                let Supernode { last, r0, r1, .. } = self.supernode(self.sn_of[j]);
                let below = (j + 1..=last).chain(self.sn_rows[r0..r1].iter().map(|&r| r as usize));
                if !pivot_ok(d, self.largest_candidate(below, kind)) {
                    return self.fail();
                }
                self.store_supernodal_column(j, 1.0 / d);
            } else {
                // The pivot test on the candidates as they are stored (a failure discards
                // the values anyway).
                let big = self.store_column(j, 1.0 / d, kind);
                if !pivot_ok(d, big) {
                    return self.fail();
                }
                if fused {
                    forward_column(&self.l_ptr, &self.l_idx, &self.l_val, &mut self.y, j);
                }
            }
            self.u_diag[j] = d;
        }
        if let Some(b) = b.filter(|_| fused) {
            let mut y = std::mem::take(&mut self.y);
            self.backward(&mut y, b);
            self.y = y;
        }
        Ok(fused)
    }

    /// Geometry of supernode `sn`.
    fn supernode(&self, sn: usize) -> Supernode {
        let (first, last) = (self.sn_start[sn], self.sn_start[sn + 1] - 1);
        let (r0, r1) = (self.sn_rows_ptr[sn], self.sn_rows_ptr[sn + 1]);
        let w = last + 1 - first;
        Supernode {
            first,
            last,
            w,
            r0,
            r1,
            height: w + r1 - r0,
        }
    }

    /// Scatter column `c` of `a` into `x` at the pivot positions of its rows.
    #[inline]
    fn load_column(&mut self, col_ptr: &[usize], values: &[f64], c: usize) {
        let (a0, a1) = (col_ptr[c], col_ptr[c + 1]);
        for (&p, &v) in self.a_pos[a0..a1].iter().zip(&values[a0..a1]) {
            self.x[p as usize] = v;
        }
    }

    /// Largest `|x_r|` over the pivot positions `below` whose rows are of the kind `kind`
    /// (node rows or multiplier rows, as in [`StaticLu::factor`]); a NaN propagates.
    #[inline]
    fn largest_candidate(&self, below: impl Iterator<Item = usize>, kind: bool) -> f64 {
        below.fold(0.0f64, |m, r| {
            let v = self.x[r].abs();
            if v.is_nan() || (v > m && self.node_row[r] == kind) {
                v
            } else {
                m
            }
        })
    }

    /// Abandon the refactorization: the work arrays back to zero, the factors invalid.
    fn fail<T>(&mut self) -> Result<T, PivotFailure> {
        self.valid = false;
        self.x.fill(0.0);
        self.sn_tmp.fill(0.0);
        Err(PivotFailure)
    }

    /// `U[:, j]` from `x` and the update of `x` by the columns of `L` it involves, column by
    /// column (module docs).
    fn update_from_columns(&mut self, j: usize) {
        let (u0, u1) = (self.u_ptr[j], self.u_ptr[j + 1]);
        let x = &mut self.x;
        for (&k, u) in self.u_idx[u0..u1].iter().zip(&mut self.u_val[u0..u1]) {
            let k = k as usize;
            let ukj = x[k];
            x[k] = 0.0;
            *u = ukj;
            if ukj != 0.0 {
                let (a, b) = (self.l_ptr[k], self.l_ptr[k + 1]);
                for (&i, &l) in self.l_idx[a..b].iter().zip(&self.l_val[a..b]) {
                    x[i as usize] -= l * ukj;
                }
            }
        }
    }

    /// `L[:, j] = x / U_jj` (`inv = 1/U_jj`) along the column's pattern; `x` back to zero there.
    /// Returns the largest candidate `|x_r|` of the kind `kind`, as
    /// [`StaticLu::largest_candidate`].
    fn store_column(&mut self, j: usize, inv: f64, kind: bool) -> f64 {
        let (a, b) = (self.l_ptr[j], self.l_ptr[j + 1]);
        let mut big = 0.0f64;
        for (&r, l) in self.l_idx[a..b].iter().zip(&mut self.l_val[a..b]) {
            let r = r as usize;
            let x = self.x[r];
            let v = x.abs();
            if v.is_nan() || (v > big && self.node_row[r] == kind) {
                big = v;
            }
            *l = x * inv;
            self.x[r] = 0.0;
        }
        big
    }

    /// [`StaticLu::update_from_columns`] supernode by supernode (see
    /// [`StaticLu::build_supernodes`]): the pattern of `U[:, j]` is ascending, so a supernode's
    /// entries are consecutive in it.
    fn update_from_supernodes(&mut self, j: usize) {
        let (u0, u1) = (self.u_ptr[j], self.u_ptr[j + 1]);
        let mut q = u0;
        while q < u1 {
            let sn = self.sn_of[self.u_idx[q] as usize];
            let Supernode {
                first,
                last,
                w,
                r0,
                r1,
                height,
            } = self.supernode(sn);
            let block = &self.sn_val[self.sn_val_ptr[sn]..self.sn_val_ptr[sn + 1]];
            let shared = &self.sn_rows[r0..r1];
            let group_end = q + self.u_idx[q..u1].partition_point(|&k| k as usize <= last);
            // One column of the supernode: its shared rows are updated in place; more:
            // accumulated densely and subtracted once per shared row.
            let direct = group_end - q == 1;
            let tmp = &mut self.sn_tmp[..r1 - r0];
            while q < group_end {
                let k = self.u_idx[q] as usize;
                let ukj = self.x[k];
                self.x[k] = 0.0;
                self.u_val[q] = ukj;
                q += 1;
                if ukj == 0.0 {
                    continue;
                }
                let col = &block[(k - first) * height..(k - first + 1) * height];
                // Rows k + 1 ..= last of the supernode: contiguous in x.
                for (xr, l) in self.x[k + 1..=last].iter_mut().zip(&col[k + 1 - first..w]) {
                    *xr -= l * ukj;
                }
                if direct {
                    for (&r, l) in shared.iter().zip(&col[w..]) {
                        self.x[r as usize] -= l * ukj;
                    }
                } else {
                    for (t, l) in tmp.iter_mut().zip(&col[w..]) {
                        *t += l * ukj;
                    }
                }
            }
            if !direct {
                for (t, &r) in tmp.iter_mut().zip(shared) {
                    self.x[r as usize] -= *t;
                    *t = 0.0;
                }
            }
        }
    }

    /// [`StaticLu::store_column`] into column `j` of its supernode's block: rows `j + 1 ..= last`,
    /// then the shared rows.
    fn store_supernodal_column(&mut self, j: usize, inv: f64) {
        let sn = self.sn_of[j];
        let Supernode {
            first,
            last,
            w,
            r0,
            r1,
            height,
        } = self.supernode(sn);
        let off = self.sn_val_ptr[sn] + (j - first) * height;
        let col = &mut self.sn_val[off..off + height];
        for (l, xr) in col[j + 1 - first..w]
            .iter_mut()
            .zip(&mut self.x[j + 1..=last])
        {
            *l = *xr * inv;
            *xr = 0.0;
        }
        for (l, &r) in col[w..].iter_mut().zip(&self.sn_rows[r0..r1]) {
            let r = r as usize;
            *l = self.x[r] * inv;
            self.x[r] = 0.0;
        }
    }

    /// Solve `A x = b` in place with the stored factors.
    pub(super) fn solve(&mut self, b: &mut [f64]) {
        let n = self.n;
        // The work vector, taken out of `self` for the solve (no allocation).
        let mut work = std::mem::take(&mut self.x);
        let y = &mut work;
        for (yi, &r) in y.iter_mut().zip(&self.row_perm) {
            *yi = b[r];
        }
        if !self.supernodal {
            for j in 0..n {
                forward_column(&self.l_ptr, &self.l_idx, &self.l_val, y, j);
            }
        }
        // Forward: supernode by supernode (dense columns, one scattered update per shared row).
        for sn in 0..self.sn_start.len().saturating_sub(1) {
            let Supernode {
                first,
                last,
                w,
                r0,
                r1,
                height,
            } = self.supernode(sn);
            let block = &self.sn_val[self.sn_val_ptr[sn]..self.sn_val_ptr[sn + 1]];
            let tmp = &mut self.sn_tmp[..r1 - r0];
            for k in first..=last {
                let yk = y[k];
                if yk == 0.0 {
                    continue;
                }
                let col = &block[(k - first) * height..(k - first + 1) * height];
                for (yr, l) in y[k + 1..=last].iter_mut().zip(&col[k + 1 - first..w]) {
                    *yr -= l * yk;
                }
                for (t, l) in tmp.iter_mut().zip(&col[w..]) {
                    *t += l * yk;
                }
            }
            for (t, &r) in tmp.iter_mut().zip(&self.sn_rows[r0..r1]) {
                y[r as usize] -= *t;
                *t = 0.0;
            }
        }
        self.backward(y, b);
        y.fill(0.0);
        self.x = work;
    }

    /// The backward substitution `U z = y` (`y` in pivot positions, overwritten) and
    /// `b = Q z`.
    fn backward(&self, y: &mut [f64], b: &mut [f64]) {
        for j in (0..self.n).rev() {
            y[j] /= self.u_diag[j];
            let yj = y[j];
            if yj != 0.0 {
                let (a, b) = (self.u_ptr[j], self.u_ptr[j + 1]);
                for (&i, &u) in self.u_idx[a..b].iter().zip(&self.u_val[a..b]) {
                    y[i as usize] -= u * yj;
                }
            }
        }
        for (j, &c) in self.col_perm.iter().enumerate() {
            b[c] = y[j];
        }
    }

    /// Capacity of the stored patterns (`L`, `U`), for tests of the storage bound.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> (usize, usize) {
        (self.l_idx.capacity(), self.u_idx.capacity())
    }

    /// Whether the refactorization and the forward solve run on supernodes.
    #[cfg(test)]
    pub(super) fn is_supernodal(&self) -> bool {
        self.supernodal
    }

    /// Number of matrix entries the stored structure maps to pivot positions.
    pub(super) fn entries(&self) -> usize {
        self.a_pos.len()
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
