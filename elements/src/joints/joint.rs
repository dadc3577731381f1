//! [`BilateralJoint`]: the element made of a constraint's kinematics. The stage rows are formed
//! by the stage assembly ([`saltus_core::stage`]); this wrapper adds the reaction outputs.

use nalgebra::Vector3;
use saltus_core::constraint::*;
use saltus_core::element::{Element, Level, LocalState, OutputSpec, OutputState, StepCx};
use saltus_core::model::BuildError;
use saltus_core::node::{NodeId, NodeKind, NodeState};

/// The [`Element`] made of a [`BilateralConstraint`]: `m` always-active multipliers at every
/// stage (rows formed by [`saltus_core::stage`]), and the outputs `reaction_smooth`, `position_multiplier`, `impulse`,
/// `force`/`moment` (if the constraint has a reaction node), `violation` and the constraint's
/// extra channels. Its level methods do not allocate (if the constraint's `evaluate` does not).
#[derive(Clone, Debug)]
pub struct BilateralJoint<C> {
    constraint: C,
    layout: Layout,
    /// Time of the last converged level (for rheonomic outputs) \[s\].
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
                    layout.n()
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

    fn has_moment(&self) -> Option<(usize, bool)> {
        self.constraint
            .reaction_node()
            .map(|i| (i, self.layout.is_frame(i)))
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
    fn as_constraint(&self) -> Option<&dyn BilateralConstraint> {
        Some(&self.constraint)
    }
    fn level_converged(&mut self, cx: &StepCx, _s: &LocalState<'_>) {
        self.t_out = if cx.level == Level::Static { 0.0 } else { cx.t };
    }
    fn level_hook(&self, _level: Level) -> saltus_core::LevelHook {
        saltus_core::LevelHook::Context
    }
    fn commit(&mut self, s: &OutputState<'_>) {
        let cx = KinCx::new(s.nodes, self.t_out, &self.layout);
        self.constraint.commit(&cx);
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
            let f = kin.g_q_padded().tr_mul(&lam);
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
        out[o] = kin.g().norm();
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
