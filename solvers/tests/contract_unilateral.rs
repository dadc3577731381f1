//! Contract test: a unilateral contact (frictionless point–plane, spec `nsga.md` §7) and a
//! point mass written *outside* core, against the unchanged `Element` trait, integrated by the
//! NSGA solver. The contact owns one multiplier at position and velocity level, decides its
//! status from the augmented multiplier every Newton iterate, freezes the position status in
//! `level_converged`, and applies Newton's impact law with restitution `e` (spec §6).

use nalgebra::{Matrix3, Vector3};
use saltus_core::{
    Element, ElementError, Level, Levels, LocalState, LocalSystem, MemorySink, Model, NodeDef,
    NodeId, NodeKind, OutputSpec, OutputState, StepCx,
};
use saltus_solvers::{Nsga, NsgaOptions};
use std::ops::AddAssign;

#[derive(Debug)]
struct ToyMass {
    node: [NodeId; 1],
    m: f64,
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
struct ToyPlaneContact {
    node: [NodeId; 1],
    restitution: f64,
    /// Converged position status (contact in the position active set 𝒜).
    closed: bool,
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

#[test]
fn bouncing_point_mass_through_unchanged_core() {
    let (m, e, z0, h) = (0.5, 0.8, 1.0, 1e-3);
    let g = 9.81;
    let mut model = Model::new();
    let n = model
        .add_node(NodeDef::point("ball", Vector3::new(0.0, 0.0, z0)))
        .unwrap();
    model.add_element("mass", ToyMass { node: [n], m }).unwrap();
    model
        .add_element(
            "floor",
            ToyPlaneContact {
                node: [n],
                restitution: e,
                closed: false,
            },
        )
        .unwrap();
    let opts = NsgaOptions {
        h,
        t_end: 2.5,
        rho_inf: 0.8,
        gravity: Vector3::new(0.0, 0.0, -g),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();

    let z: Vec<f64> = sink.nodes.iter().map(|n| n[0].x.z).collect();
    // No penetration: the position correction enforces g ≥ 0 exactly (to Newton tolerance).
    let min_gap = z.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(min_gap >= -1e-10, "penetration {min_gap}");

    // Apex heights h0·e^{2k}. The impact is resolved at the first step whose prediction
    // penetrates, so the ball is lifted by at most one step of travel v_impact·h per impact
    // (v_impact ≤ √(2 g z0) ≈ 4.43 m/s → 4.4e-3 m); the tolerance is that bound.
    let v_impact = (2.0 * g * z0).sqrt();
    let mut apexes = Vec::new();
    for i in 1..z.len() - 1 {
        if z[i] > z[i - 1] && z[i] >= z[i + 1] && z[i] > 1e-3 {
            apexes.push(z[i]);
        }
    }
    eprintln!("apexes {apexes:?}, min gap {min_gap:e}");
    assert!(apexes.len() >= 2, "apexes {apexes:?}");
    for (k, a) in apexes.iter().take(2).enumerate() {
        let expected = z0 * e.powi(2 * (k as i32 + 1));
        assert!(
            (a - expected).abs() <= v_impact * h,
            "apex {k}: {a} vs {expected}"
        );
    }
    // The velocity jump follows Newton's law: impulse ≈ m (1 + e) v_impact at the first impact.
    let imp = sink.channel("floor", "impulse").unwrap();
    let first = imp.iter().map(|v| v[0]).find(|v| *v > 0.0).unwrap();
    let expected = m * (1.0 + e) * v_impact;
    // The pre-impact velocity is v_n, one step (g·h) short of the exact impact velocity at most.
    assert!(
        (first - expected).abs() <= m * (1.0 + e) * g * h * 2.0,
        "impulse {first} vs {expected}"
    );
    // Iteration counts stay small: the semi-smooth Newton converges in a few iterations.
    let stats = solver.summary();
    eprintln!("first impulse {first} (expected {expected}); stats {stats:?}");
    assert!(stats.max_iterations.iter().all(|&i| i <= 10), "{stats:?}");
    assert_eq!(stats.symbolic_factorizations, [1, 1, 1]);
}
