//! Toy elements written outside core against the unchanged `Element` trait (test support).

use nalgebra::{Matrix3, Vector3};
use saltus_core::{
    Element, ElementError, Level, Levels, LocalState, LocalSystem, NodeId, NodeKind, OutputSpec,
    OutputState, StepCx,
};
use std::ops::AddAssign;

#[derive(Debug)]
pub struct ToyMass {
    pub node: [NodeId; 1],
    pub m: f64,
}

impl Element for ToyMass {
    fn type_name(&self) -> &'static str {
        "toy_mass"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.node
    }
    fn levels(&self) -> Levels {
        Levels::ALL
    }
    fn mass(&self) -> f64 {
        self.m
    }
    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(NodeKind::Point)]
    }
    fn smooth(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let r = self.m * s.nodes[0].vdot - self.m * cx.gravity;
        out.residual.fixed_rows_mut::<3>(0).add_assign(&r);
        out.hessian
            .fixed_view_mut::<3, 3>(0, 0)
            .add_assign(&(Matrix3::identity() * (self.m * cx.dvdot_dv)));
        out.reference += (self.m * cx.gravity).norm();
        Ok(())
    }
    fn position(
        &self,
        _cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let u = s.incr[0].fixed_rows::<3>(0) * self.m;
        out.residual.fixed_rows_mut::<3>(0).add_assign(&u);
        out.hessian
            .fixed_view_mut::<3, 3>(0, 0)
            .add_assign(&(Matrix3::identity() * self.m));
        Ok(())
    }
    fn velocity(
        &self,
        _cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let w = s.incr[0].fixed_rows::<3>(0) * self.m;
        out.residual.fixed_rows_mut::<3>(0).add_assign(&w);
        out.hessian
            .fixed_view_mut::<3, 3>(0, 0)
            .add_assign(&(Matrix3::identity() * self.m));
        Ok(())
    }
    fn energy(&self, s: &OutputState<'_>) -> saltus_core::Energy {
        saltus_core::Energy {
            kinetic: 0.5 * self.m * s.nodes[0].v.norm_squared(),
            potential: -self.m * s.gravity.dot(&s.nodes[0].x),
        }
    }
}

/// Frictionless contact of a point node with the plane `z = 0` (normal +z).
#[derive(Debug)]
pub struct ToyPlaneContact {
    pub node: [NodeId; 1],
    pub restitution: f64,
    /// Converged position status (contact in the position active set 𝒜).
    pub closed: bool,
}

const EZ: Vector3<f64> = Vector3::new(0.0, 0.0, 1.0);

impl Element for ToyPlaneContact {
    fn type_name(&self) -> &'static str {
        "toy_plane_contact"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.node
    }
    fn levels(&self) -> Levels {
        Levels::CONTACT
    }
    fn n_mult(&self, level: Level) -> usize {
        usize::from(matches!(level, Level::Position | Level::Velocity))
    }
    fn position(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let g = s.nodes[0].x.z;
        let xi = cx.k * s.mult[0] - cx.p * g;
        if xi > 0.0 {
            out.residual.fixed_rows_mut::<3>(0).add_assign(&(-EZ * xi));
            out.residual[3] += -cx.k * g;
            out.hessian[(2, 2)] += cx.p;
            out.hessian[(2, 3)] += -cx.k;
            out.hessian[(3, 2)] += -cx.k;
        } else {
            out.residual[3] += -cx.k * cx.k / cx.p * s.mult[0];
            out.hessian[(3, 3)] += -cx.k * cx.k / cx.p;
        }
        Ok(())
    }
    fn velocity(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let gdot = s.nodes[0].v.z + self.restitution * s.prev[0].v.z;
        let sigma = cx.k * s.mult[0] - cx.p * gdot;
        if self.closed && sigma > 0.0 {
            out.residual
                .fixed_rows_mut::<3>(0)
                .add_assign(&(-EZ * sigma));
            out.residual[3] += -cx.k * gdot;
            out.hessian[(2, 2)] += cx.p;
            out.hessian[(2, 3)] += -cx.k;
            out.hessian[(3, 2)] += -cx.k;
        } else {
            out.residual[3] += -cx.k * cx.k / cx.p * s.mult[0];
            out.hessian[(3, 3)] += -cx.k * cx.k / cx.p;
        }
        Ok(())
    }
    fn level_converged(&mut self, cx: &StepCx, s: &LocalState<'_>) {
        if cx.level == Level::Position {
            self.closed = cx.k * s.mult[0] - cx.p * s.nodes[0].x.z > 0.0;
        }
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec {
                name: "gap",
                len: 1,
                unit: "m",
                description: "normal gap",
            },
            OutputSpec {
                name: "impulse",
                len: 1,
                unit: "N*s",
                description: "normal impulse k_v Λ",
            },
        ]
    }
    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        out[0] = s.nodes[0].x.z;
        out[1] = s.k[2] * s.mult_velocity[0];
    }
}

/// Linear spring along z between two point nodes: force on node 2 `−k (z2 − z1 − ℓ0)`.
#[derive(Debug)]
pub struct ToySpringZ {
    pub nodes: [NodeId; 2],
    pub k: f64,
    pub rest: f64,
}

impl ToySpringZ {
    fn force2(&self, s: &[saltus_core::NodeState]) -> f64 {
        -self.k * (s[1].x.z - s[0].x.z - self.rest)
    }
    fn add(&self, w: f64, f: f64, dq: f64, out: &mut LocalSystem<'_>) {
        // r = −w f: node 1 gets −f2, node 2 gets +f2; ∂f2/∂z2 = −k, ∂f2/∂z1 = k.
        out.residual[2] += w * f;
        out.residual[5] += -w * f;
        let kk = w * self.k * dq;
        out.hessian[(2, 2)] += kk;
        out.hessian[(2, 5)] += -kk;
        out.hessian[(5, 2)] += -kk;
        out.hessian[(5, 5)] += kk;
    }
}

impl Element for ToySpringZ {
    fn type_name(&self) -> &'static str {
        "toy_spring_z"
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn levels(&self) -> Levels {
        Levels::ALL
    }
    fn smooth(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.add(1.0, self.force2(s.nodes), cx.dq_dv, out);
        Ok(())
    }
    fn position(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let df = self.force2(s.nodes) - self.force2(s.smooth);
        self.add(cx.force_weight, df, 1.0, out);
        Ok(())
    }
    fn velocity(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let df = self.force2(s.nodes) - self.force2(s.smooth);
        self.add(cx.force_weight, df, 0.0, out);
        Ok(())
    }
}
