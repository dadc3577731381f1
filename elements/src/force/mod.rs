//! Force elements: nodal loads, translational spring–dampers and torsional spring–dampers.
//!
//! Each states its physics as a [`saltus_core::Force`] (`nsga.md` §11.2, force element): the
//! applied generalized force `f(q, v, t)`, its stiffness `K = −∂f/∂q` with respect to material
//! variations and its damping `C = −∂f/∂v`. The stage assembly ([`saltus_core::stage`]) turns
//! them into every stage's residual and Hessian.

mod nodal_load;
mod spring_damper;
mod torsional_spring;

pub use nodal_load::{build_nodal_load, NodalLoad, NodalLoadSpec};
pub use spring_damper::{build_spring_damper, Attachment, SpringDamper, SpringDamperSpec};
pub use torsional_spring::{build_torsional_spring, TorsionalSpring, TorsionalSpringSpec};

use nalgebra::{Matrix3, RowSVector, SMatrix, SVector};
use saltus_core::{ForceTerms, NodeKind, NodeState};

type Vec12 = SVector<f64, 12>;
type Row12 = RowSVector<f64, 12>;
type Mat12 = SMatrix<f64, 12, 12>;
type Mat12x3 = SMatrix<f64, 12, 3>;

fn rotation(n: &NodeState) -> Matrix3<f64> {
    n.r.to_rotation_matrix().into_inner()
}

/// Local unknown layout of a force element with one or two nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    kinds: [NodeKind; 2],
    count: usize,
}

impl Layout {
    fn new(kinds: &[NodeKind]) -> Self {
        let mut k = [NodeKind::Point; 2];
        k[..kinds.len()].copy_from_slice(kinds);
        Self {
            kinds: k,
            count: kinds.len(),
        }
    }

    fn offset(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.kinds[0].ndof()
        }
    }

    fn n(&self) -> usize {
        self.kinds[..self.count].iter().map(|k| k.ndof()).sum()
    }

    /// Node velocities `[ẋ; Ω]` in local unknown order.
    fn velocity(&self, nodes: &[NodeState]) -> Vec12 {
        let mut v = Vec12::zeros();
        for i in 0..self.count {
            let o = self.offset(i);
            v.fixed_rows_mut::<3>(o).copy_from(&nodes[i].v);
            if self.kinds[i] == NodeKind::Frame {
                v.fixed_rows_mut::<3>(o + 3).copy_from(&nodes[i].omega);
            }
        }
        v
    }
}

/// Add the leading `n` entries of fixed-size terms `f`, `K`, `C` into the stage buffers.
fn add_terms(out: &mut ForceTerms<'_>, n: usize, f: &Vec12, k: &Mat12, c: &Mat12) {
    for i in 0..n {
        out.f[i] += f[i];
    }
    for j in 0..n {
        for i in 0..n {
            out.stiffness[(i, j)] += k[(i, j)];
            out.damping[(i, j)] += c[(i, j)];
        }
    }
}

#[cfg(test)]
mod tests;
