//! [`BilateralJoint`]: a constraint's kinematics assembled into the element levels (module
//! table of [`super`]).

use super::kinematics::{add_at_b, add_at_x, axpy};
use super::*;
use nalgebra::Vector3;
use saltus_core::element::{
    Element, ElementError, Level, Levels, LocalState, LocalSystem, OutputSpec, OutputState, StepCx,
};
use saltus_core::model::BuildError;
use saltus_core::node::{NodeId, NodeKind, NodeState};

/// The [`Element`] made of a [`BilateralConstraint`]: `m` always-active multipliers at every
/// level, exact Hessians, and the outputs `reaction_smooth`, `position_multiplier`, `impulse`,
/// `force`/`moment` (if the constraint has a reaction node), `violation` and the constraint's
/// extra channels. Its level methods do not allocate (if the constraint's `evaluate` does not).
#[derive(Clone, Debug)]
pub struct BilateralJoint<C> {
    constraint: C,
    layout: Layout,
    /// Time of the last converged level (for rheonomic outputs) [s].
    t_out: f64,
}

impl<C: BilateralConstraint> BilateralJoint<C> {
    /// Wrap a constraint into an element.
    ///
    /// # Errors
    ///
    /// [`BuildError::InvalidParameter`] (element: the type name) if `constraint.node_kinds()`
    /// and `constraint.nodes()` differ in length, or the constraint exceeds the fixed-size
    /// storage: more than [`MAX_NODES`] nodes, [`MAX_DOFS`] node unknowns or [`MAX_ROWS`] rows.
    pub fn from_constraint(constraint: C) -> Result<Self, BuildError> {
        let name = constraint.type_name();
        let invalid = |parameter: &str, message: String| BuildError::InvalidParameter {
            element: name.to_string(),
            parameter: parameter.to_string(),
            message,
        };
        let kinds = constraint.node_kinds();
        let n_nodes = constraint.nodes().len();
        if kinds.len() != n_nodes {
            return Err(invalid(
                "nodes",
                format!(
                    "node_kinds() has {} entries for {n_nodes} nodes",
                    kinds.len()
                ),
            ));
        }
        let layout = Layout::new(kinds);
        if !layout.fits() {
            return Err(invalid(
                "nodes",
                format!(
                    "{n_nodes} nodes with {} unknowns exceed the joint storage \
                     (at most {MAX_NODES} nodes and {MAX_DOFS} unknowns, e.g. two frame nodes)",
                    layout.n
                ),
            ));
        }
        let m = constraint.n_constraints();
        if m > MAX_ROWS {
            return Err(invalid(
                "constraints",
                format!("{m} constraint rows exceed the joint storage (at most {MAX_ROWS})"),
            ));
        }
        Ok(Self {
            constraint,
            layout,
            t_out: 0.0,
        })
    }
    /// The wrapped constraint.
    pub fn constraint(&self) -> &C {
        &self.constraint
    }
    /// Mutable access to the wrapped constraint.
    pub fn constraint_mut(&mut self) -> &mut C {
        &mut self.constraint
    }
    /// Local unknown layout of the nodes.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// Kinematics at the node states `nodes` (local order) and time `t` \[s\].
    pub fn kinematics(&self, nodes: &[NodeState], t: f64) -> Kinematics {
        KinCx::new(nodes, t, &self.layout).kinematics(&self.constraint)
    }

    fn n_mult(&self) -> usize {
        self.constraint.n_constraints()
    }

    fn check(&self, kin: &Kinematics) -> Result<(), ElementError> {
        let values = kin.g.as_slice().iter().chain(kin.g_q.as_slice());
        if values.into_iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(ElementError::InvalidState(format!(
                "{}: non-finite constraint value or Jacobian",
                self.constraint.type_name()
            )))
        }
    }

    fn assemble(
        &self,
        level: Level,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let (n, m) = (self.layout.n, self.n_mult());
        let t = if level == Level::Static { 0.0 } else { cx.t };
        // The second derivatives enter only through configuration columns: none at the
        // velocity level (q frozen), nor at the smooth level if dq_dv = 0.
        let hessians = match level {
            Level::Smooth => cx.dq_dv != 0.0,
            Level::Velocity | Level::Custom => false,
            Level::Position | Level::Static => true,
        };
        let mut kin = Kinematics::zeros(m, n);
        let kcx = KinCx::new(s.nodes, t, &self.layout);
        let kcx = if hessians { kcx } else { kcx.first_order() };
        self.constraint.evaluate(&kcx, &mut kin);
        self.check(&kin)?;
        let g_q = &kin.g_q;
        let (k, p) = (cx.k, cx.p);

        // Padded local blocks: node rows r_q; configuration/velocity block h_qq
        // (node × node); multiplier × node block h_mq (before the factor −k). The multiplier
        // rows are −k c and the node × multiplier block −k g_qᵀ.
        let mut r_q = LocalVector::zeros();
        let mut h_qq = LocalMatrix::zeros();
        let mut h_mq;

        // Joint part of −w (g_q(q) − g_q(q̃))ᵀ k_s λ̃ (position and velocity levels, §5–6);
        // only g_q is needed at q̃ (first-order evaluation).
        let lam_s = if matches!(level, Level::Position | Level::Velocity) {
            let lam = padded_rows(&s.mult_smooth[..m], cx.k_s);
            let mut kin_s = Kinematics::zeros(m, n);
            self.constraint.evaluate(
                &KinCx::new(s.smooth, t, &self.layout).first_order(),
                &mut kin_s,
            );
            add_at_x(&mut r_q, &(g_q - kin_s.g_q), &lam, -cx.force_weight, n);
            Some(lam)
        } else {
            None
        };

        let rate_level = matches!(level, Level::Smooth | Level::Velocity);
        let v = if rate_level {
            self.layout.velocity(s.nodes)
        } else {
            LocalVector::zeros()
        };
        // c = ġ (smooth, velocity) or g (position, static); ξ = k μ − p c.
        let c = if rate_level { kin.rate(&v) } else { kin.g };
        let xi = padded_rows(&s.mult[..m], k) - c * p;
        add_at_x(&mut r_q, g_q, &xi, -1.0, n);

        if rate_level {
            h_mq = g_q * cx.dv_dv;
            if hessians {
                // Smooth level, configuration columns: ∂/∂q at fixed v, times dq_dv T.
                let mut c_q = kin.d_gq_w(&v) + kin.g_t_q;
                add_at_b(&mut h_qq, g_q, &c_q, p, n);
                kin.add_d_gqt_mu(&mut h_qq, xi.as_slice(), -1.0);
                self.layout.apply_tangent(&mut h_qq, s.rot_tangent);
                scale(h_qq.as_mut_slice(), cx.dq_dv);
                self.layout.apply_tangent(&mut c_q, s.rot_tangent);
                h_mq += c_q * cx.dq_dv;
            }
            add_at_b(&mut h_qq, g_q, g_q, p * cx.dv_dv, n);
        } else {
            // μ = ξ + w k_s λ̃ collects both ∂(g_qᵀ ·)/∂q terms.
            let mut mu = xi;
            if let Some(lam) = &lam_s {
                mu += lam * cx.force_weight;
            }
            add_at_b(&mut h_qq, g_q, g_q, p, n);
            kin.add_d_gqt_mu(&mut h_qq, mu.as_slice(), -1.0);
            self.layout.apply_tangent(&mut h_qq, s.rot_tangent);
            scale(h_qq.as_mut_slice(), cx.dq_dv);
            h_mq = *g_q;
            self.layout.apply_tangent(&mut h_mq, s.rot_tangent);
            h_mq *= cx.dq_dv;
        }

        // Scatter column by column (the local output is column-major with unit row stride).
        let res = out.residual.as_mut_slice();
        axpy(&mut res[..n], 1.0, &r_q.as_slice()[..n]);
        axpy(&mut res[n..n + m], -k, &c.as_slice()[..m]);
        let (h_qq, h_mq, g_qt) = (h_qq.as_slice(), h_mq.as_slice(), g_q.transpose());
        for b in 0..n {
            let mut col = out.hessian.column_mut(b);
            let col = col.as_mut_slice();
            axpy(&mut col[..n], 1.0, &h_qq[b * MAX_DOFS..b * MAX_DOFS + n]);
            axpy(
                &mut col[n..n + m],
                -k,
                &h_mq[b * MAX_ROWS..b * MAX_ROWS + m],
            );
        }
        let g_qt = g_qt.as_slice();
        for j in 0..m {
            let mut col = out.hessian.column_mut(n + j);
            let col = col.as_mut_slice();
            axpy(&mut col[..n], -k, &g_qt[j * MAX_DOFS..j * MAX_DOFS + n]);
        }
        Ok(())
    }

    fn has_moment(&self) -> Option<(usize, bool)> {
        self.constraint
            .reaction_node()
            .map(|i| (i, self.layout.is_frame(i)))
    }
}

/// `scale · src` as a padded row vector (`src.len() ≤ MAX_ROWS`).
fn padded_rows(src: &[f64], scale: f64) -> RowVector {
    let mut v = RowVector::zeros();
    for (d, s) in v.iter_mut().zip(src) {
        *d = scale * s;
    }
    v
}

/// `x *= a`.
#[inline]
fn scale(x: &mut [f64], a: f64) {
    for x in x {
        *x *= a;
    }
}

fn copy_scaled(dst: &mut [f64], src: &[f64], scale: f64) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = scale * s;
    }
}

impl<C: BilateralConstraint> Element for BilateralJoint<C> {
    fn type_name(&self) -> &'static str {
        self.constraint.type_name()
    }
    fn nodes(&self) -> &[NodeId] {
        self.constraint.nodes()
    }
    fn levels(&self) -> Levels {
        Levels::ALL
    }
    fn n_mult(&self, _level: Level) -> usize {
        self.constraint.n_constraints()
    }
    fn smooth(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Smooth, cx, s, out)
    }
    fn position(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Position, cx, s, out)
    }
    fn velocity(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Velocity, cx, s, out)
    }
    fn static_eq(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        self.assemble(Level::Static, cx, s, out)
    }
    fn level_converged(&mut self, cx: &StepCx, _s: &LocalState<'_>) {
        self.t_out = if cx.level == Level::Static { 0.0 } else { cx.t };
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        let m = self.n_mult();
        let u = self.constraint.units();
        let mut v = vec![
            OutputSpec {
                name: "reaction_smooth",
                len: m,
                unit: u.reaction,
                description: "physical smooth reactions k_s λ̃, one per constraint row",
            },
            OutputSpec {
                name: "position_multiplier",
                len: m,
                unit: u.position_multiplier,
                description:
                    "physical position multipliers k_p ν (position-correction impulse × time)",
            },
            OutputSpec {
                name: "impulse",
                len: m,
                unit: u.impulse,
                description: "physical velocity-level impulses k_v Λ over the step",
            },
        ];
        if let Some((_, frame)) = self.has_moment() {
            v.push(OutputSpec {
                name: "force",
                len: 3,
                unit: "N",
                description: "smooth reaction force g_qᵀ k_s λ̃ applied by the joint to its reaction node (last node), inertial frame",
            });
            if frame {
                v.push(OutputSpec {
                    name: "moment",
                    len: 3,
                    unit: "N*m",
                    description: "smooth reaction moment g_qᵀ k_s λ̃ applied by the joint to its reaction node (last node), inertial frame, about the node",
                });
            }
        }
        v.push(OutputSpec {
            name: "violation",
            len: 2,
            unit: u.violation,
            description: "constraint violation |g(q, t)| and |g_q v + g_t| at the converged state",
        });
        v.extend(self.constraint.extra_outputs());
        v
    }
    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        let m = self.n_mult();
        let cx = KinCx::new(s.nodes, self.t_out, &self.layout);
        let kin = cx.kinematics(&self.constraint);
        let mut o = 0;
        copy_scaled(&mut out[o..o + m], s.mult_smooth, s.k[0]);
        o += m;
        copy_scaled(&mut out[o..o + m], s.mult_position, s.k[1]);
        o += m;
        copy_scaled(&mut out[o..o + m], s.mult_velocity, s.k[2]);
        o += m;
        if let Some((node, frame)) = self.has_moment() {
            let lam = padded_rows(&s.mult_smooth[..m], s.k[0]);
            let f = kin.g_q.tr_mul(&lam);
            let off = self.layout.offset(node);
            let force: Vector3<f64> = f.fixed_rows::<3>(off).into_owned();
            out[o..o + 3].copy_from_slice(force.as_slice());
            o += 3;
            if frame {
                let mom = s.nodes[node].r * f.fixed_rows::<3>(off + 3).into_owned();
                out[o..o + 3].copy_from_slice(mom.as_slice());
                o += 3;
            }
        }
        let v = self.layout.velocity(s.nodes);
        out[o] = kin.g.norm();
        out[o + 1] = kin.rate(&v).norm();
        o += 2;
        self.constraint
            .write_extra_outputs(&cx, &kin, &mut out[o..]);
    }
    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        self.constraint
            .node_kinds()
            .iter()
            .map(|k| Some(*k))
            .collect()
    }
}
