//! Fill-reducing column order for the iteration matrices' saddle-point structure
//! `[A Gᵀ; G D]`: node unknowns first in their own approximate-minimum-degree order (faer's
//! AMD on the node block), each multiplier placed right after the last node unknown of its
//! column.
//!
//! Why: the diagonal of a closed contact's or a joint's multiplier row is (nearly) zero — only
//! the `−10⁻¹⁰ k²/p` regularization — until the node unknowns it couples to are eliminated;
//! then it holds the Schur complement `−G A⁻¹ Gᵀ` (the Delassus operator, times −1), which is
//! a good pivot. With a general order (COLAMD) those multipliers often come first, the
//! factorization must pivot off the diagonal, and the fill grows with every such pivot: on a
//! settling pile of 1 000 spheres, L + U held 5–6 times the matrix' entries, with 3 000 of
//! 4 000 multiplier pivots off the diagonal.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::amd;
use faer::sparse::SymbolicSparseColMatRef;

/// Column order of the `n × n` CSC pattern (`col_ptr`, sorted `rows`) whose first `primary`
/// unknowns are node unknowns and the rest multipliers: `order[j]` is the column eliminated
/// `j`-th. `None` if AMD fails (the caller keeps its default order).
pub(super) fn saddle_point_order(
    col_ptr: &[usize],
    rows: &[usize],
    primary: usize,
) -> Option<Vec<usize>> {
    let n = col_ptr.len() - 1;
    let p = primary.min(n);
    // The node block's pattern (rows and columns < p; sorted as in the full pattern).
    let mut sub_ptr = Vec::with_capacity(p + 1);
    let mut sub_rows = Vec::new();
    sub_ptr.push(0);
    for c in 0..p {
        let col = &rows[col_ptr[c]..col_ptr[c + 1]];
        sub_rows.extend(col.iter().copied().take_while(|&r| r < p));
        sub_ptr.push(sub_rows.len());
    }
    let mut node_order = vec![0usize; p];
    if p > 0 {
        let mut inv = vec![0usize; p];
        let sub = SymbolicSparseColMatRef::new_checked(p, p, &sub_ptr, None, &sub_rows);
        let mut mem = MemBuffer::try_new(amd::order_scratch::<usize>(p, sub_rows.len())).ok()?;
        amd::order(
            &mut node_order,
            &mut inv,
            sub,
            amd::Control::default(),
            MemStack::new(&mut mem),
        )
        .ok()?;
    }
    let mut position = vec![0usize; p];
    for (k, &c) in node_order.iter().enumerate() {
        position[c] = k;
    }
    // Each multiplier after its last node unknown (key: that node's position + 1; 0 for a
    // multiplier without node entries), ties in index order.
    let mut multipliers: Vec<(usize, usize)> = (p..n)
        .map(|c| {
            let last = rows[col_ptr[c]..col_ptr[c + 1]]
                .iter()
                .filter(|&&r| r < p)
                .map(|&r| position[r] + 1)
                .max()
                .unwrap_or(0);
            (last, c)
        })
        .collect();
    multipliers.sort_unstable();
    let mut order = Vec::with_capacity(n);
    let mut m = multipliers.iter().peekable();
    for (k, &c) in node_order.iter().enumerate() {
        while let Some(&&(_, mc)) = m.peek().filter(|(key, _)| *key <= k) {
            order.push(mc);
            m.next();
        }
        order.push(c);
    }
    order.extend(m.map(|&(_, c)| c));
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of three nodes (one unknown each) with a multiplier between consecutive nodes:
    /// every multiplier comes after both of its nodes, and the order is a permutation.
    #[test]
    fn multipliers_follow_their_nodes() {
        // Unknowns 0..3 nodes, 3 couples (0, 1), 4 couples (1, 2). Symmetric pattern.
        let cols: Vec<Vec<usize>> = vec![
            vec![0, 1, 3],
            vec![0, 1, 2, 3, 4],
            vec![1, 2, 4],
            vec![0, 1, 3],
            vec![1, 2, 4],
        ];
        let mut col_ptr = vec![0];
        let mut rows = Vec::new();
        for c in &cols {
            rows.extend(c);
            col_ptr.push(rows.len());
        }
        let order = saddle_point_order(&col_ptr, &rows, 3).unwrap();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        let at = |c: usize| order.iter().position(|&x| x == c).unwrap();
        for (m, nodes) in [(3, [0, 1]), (4, [1, 2])] {
            for node in nodes {
                assert!(at(m) > at(node), "{order:?}");
            }
        }
    }
}
