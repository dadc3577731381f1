//! Global state of a model during a solve, and assembly of one level into its sparse system.
//!
//! [`Workspace`] owns every buffer the Newton loop needs (node states, increments, tangents,
//! multipliers, gather buffers, local residual/Hessian, the three level systems and their LU
//! factorizations), so an iteration allocates nothing.

use crate::error::SolveError;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3, Vector6};
use saltus_core::assembly::{LevelSystem, NodeNumbering};
use saltus_core::linear::SparseLu;
use saltus_core::stage::{evaluate_element, Scratch};
use saltus_core::{
    Level, LocalState, LocalSystem, Model, NodeKind, NodeState, OutputState, StepCx,
};

/// Everything the Newton loops of all levels work in.
pub struct Workspace {
    /// Node unknown numbering (shared by all levels).
    pub numbering: NodeNumbering,
    /// Level systems: smooth, position, velocity, static.
    pub systems: [LevelSystem; 4],
    /// Sparse LU per level.
    pub lu: [SparseLu; 4],
    /// Converged state at `t_n`.
    pub prev: Vec<NodeState>,
    /// Converged smooth state of the current step.
    pub smooth: Vec<NodeState>,
    /// Current iterate.
    pub cur: Vec<NodeState>,
    /// Per-node increment of the current level (see `LocalState::incr`).
    pub incr: Vec<Vector6<f64>>,
    /// Per-node rotation tangent of the current level.
    pub tangent: Vec<Matrix3<f64>>,
    /// Multipliers per level (smooth, position, velocity, static).
    pub mult: [Vec<f64>; 4],
    g_kinds: Vec<NodeKind>,
    g_nodes: Vec<NodeState>,
    g_prev: Vec<NodeState>,
    g_smooth: Vec<NodeState>,
    g_tangent: Vec<Matrix3<f64>>,
    g_incr: Vec<Vector6<f64>>,
    r_loc: DVector<f64>,
    h_loc: DMatrix<f64>,
    scratch: Scratch,
    /// Solution / correction vector (length of the largest level system).
    pub delta: Vec<f64>,
    /// Per node: the current level's unknown (smooth `ṽ − ṽ*`, position/static `U`, velocity `W`).
    pub unknown: Vec<Vector6<f64>>,
    /// Node kinds.
    pub kinds: Vec<NodeKind>,
    /// Line-search backtracks of the last Newton loop.
    pub backtracks: usize,
    saved_unknown: Vec<Vector6<f64>>,
    saved_mult: Vec<f64>,
}

/// Newton tolerances: converged when `‖r‖ ≤ tol (Σ‖r_k‖ + tol_f)` (spec §10, B.44) plus the
/// round-off floor of the constraint rows, or when a correction is below round-off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance `tol_r`.
    pub tol: f64,
    /// Reference residual `tol_f`.
    pub tol_f: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Backtrack (halve the correction, up to 6 times) when a full Newton correction does not
    /// decrease `‖r‖` (Armijo, sufficient decrease 10⁻⁴).
    pub line_search: bool,
}

/// Norms of one assembled residual.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResidualNorms {
    /// `‖r‖₂` of the assembled residual.
    pub norm: f64,
    /// `Σ_k ‖r_k‖`: sum of element residual norms and element-reported force magnitudes
    /// (reference of the convergence test, spec §10).
    pub reference: f64,
}

impl Workspace {
    /// Number the unknowns, build the four level patterns and the buffers.
    pub fn new(model: &Model) -> Self {
        let nodes = model.nodes();
        let numbering = NodeNumbering::new(nodes);
        let elements = model.elements();
        let mk =
            |level| LevelSystem::new(level, nodes, &numbering, elements, level_generation(level));
        let systems = [
            mk(Level::Smooth),
            mk(Level::Position),
            mk(Level::Velocity),
            mk(Level::Static),
        ];
        let max_nodes = elements.iter().map(|e| e.nodes().len()).max().unwrap_or(0);
        let max_local = systems.iter().map(|s| s.max_local).max().unwrap_or(0);
        let max_n = systems.iter().map(|s| s.n).max().unwrap_or(0);
        let mult = [0, 1, 2, 3].map(|i| vec![0.0; systems[i].n - systems[i].n_node_dofs]);
        let init: Vec<NodeState> = nodes.iter().map(|n| n.initial).collect();
        Self {
            numbering,
            systems,
            lu: [
                SparseLu::new(),
                SparseLu::new(),
                SparseLu::new(),
                SparseLu::new(),
            ],
            prev: init.clone(),
            smooth: init.clone(),
            cur: init,
            incr: vec![Vector6::zeros(); nodes.len()],
            tangent: vec![Matrix3::identity(); nodes.len()],
            mult,
            g_kinds: vec![NodeKind::Point; max_nodes],
            g_nodes: vec![NodeState::default(); max_nodes],
            g_prev: vec![NodeState::default(); max_nodes],
            g_smooth: vec![NodeState::default(); max_nodes],
            g_tangent: vec![Matrix3::identity(); max_nodes],
            g_incr: vec![Vector6::zeros(); max_nodes],
            r_loc: DVector::zeros(max_local),
            h_loc: DMatrix::zeros(max_local, max_local),
            scratch: Scratch::for_elements(
                elements,
                &nodes.iter().map(|n| n.kind).collect::<Vec<_>>(),
            ),
            delta: vec![0.0; max_n],
            unknown: vec![Vector6::zeros(); nodes.len()],
            kinds: nodes.iter().map(|n| n.kind).collect(),
            backtracks: 0,
            saved_unknown: vec![Vector6::zeros(); nodes.len()],
            saved_mult: vec![0.0; max_n],
        }
    }

    /// Assemble `cx.level` into its system (residual in `rhs`, iteration matrix values).
    /// `names` are the element names (for error messages); `step` for error context.
    pub fn assemble(
        &mut self,
        model: &Model,
        cx: &StepCx,
        step: usize,
    ) -> Result<ResidualNorms, SolveError> {
        let li = cx.level.index();
        let Self {
            systems,
            cur,
            prev,
            smooth,
            incr,
            tangent,
            mult,
            kinds,
            g_kinds,
            g_nodes,
            g_prev,
            g_smooth,
            g_tangent,
            g_incr,
            r_loc,
            h_loc,
            scratch,
            ..
        } = self;
        let (smooth_sys, sys) = if li == 0 {
            // The smooth multipliers' layout is the smooth system's own.
            let (a, _) = systems.split_at_mut(1);
            (None, &mut a[0])
        } else {
            let (a, b) = systems.split_at_mut(li);
            (Some(&a[0]), &mut b[0])
        };
        sys.zero();
        let mut reference = 0.0;
        let smooth_ranges = smooth_sys.map(|s| &s.mult_range);
        for (ie, element) in model.elements().iter().enumerate() {
            if !sys.active[ie] {
                continue;
            }
            let ids = element.nodes();
            for (k, id) in ids.iter().enumerate() {
                let i = id.index();
                g_kinds[k] = kinds[i];
                g_nodes[k] = cur[i];
                g_prev[k] = prev[i];
                g_smooth[k] = smooth[i];
                g_tangent[k] = tangent[i];
                g_incr[k] = incr[i];
            }
            let nn = ids.len();
            let (m0, m) = sys.mult_range[ie];
            let (s0, sm) = match smooth_ranges {
                Some(r) => r[ie],
                None => sys.mult_range[ie],
            };
            let n = sys.local_size(ie);
            // Zero the top-left n×n block column by column on the raw column-major storage
            // (nalgebra's strided view fill is an element-by-element loop).
            let ld = h_loc.nrows();
            let hs = h_loc.as_mut_slice();
            for j in 0..n {
                hs[j * ld..j * ld + n].fill(0.0);
            }
            r_loc.as_mut_slice()[..n].fill(0.0);
            let state = LocalState {
                kinds: &g_kinds[..nn],
                nodes: &g_nodes[..nn],
                prev: &g_prev[..nn],
                smooth: if li == 0 {
                    &g_nodes[..nn]
                } else {
                    &g_smooth[..nn]
                },
                rot_tangent: &g_tangent[..nn],
                incr: &g_incr[..nn],
                mult: &mult[li][m0..m0 + m],
                mult_smooth: &mult[0][s0..s0 + sm],
            };
            let mut out = LocalSystem {
                residual: r_loc.rows_mut(0, n),
                hessian: h_loc.view_mut((0, 0), (n, n)),
                reference: 0.0,
            };
            evaluate_element(element.as_ref(), cx, &state, &mut out, scratch).map_err(
                |source| SolveError::Element {
                    step,
                    t: cx.t,
                    level: cx.level,
                    element: model.element_names()[ie].clone(),
                    source,
                },
            )?;
            let extra = out.reference;
            let rn = r_loc.rows(0, n).norm();
            if !rn.is_finite() || h_loc.view((0, 0), (n, n)).iter().any(|v| !v.is_finite()) {
                return Err(SolveError::NonFinite {
                    step,
                    t: cx.t,
                    level: cx.level,
                    what: format!("element `{}`", model.element_names()[ie]),
                });
            }
            reference += rn + extra;
            sys.scatter(ie, r_loc, Some(h_loc));
        }
        let norm = sys.rhs.iter().map(|v| v * v).sum::<f64>().sqrt();
        Ok(ResidualNorms { norm, reference })
    }

    /// Gather element `ie`'s node data into the workspace buffers; returns the node count.
    pub fn gather(&mut self, model: &Model, ie: usize) -> usize {
        let ids = model.elements()[ie].nodes();
        for (k, id) in ids.iter().enumerate() {
            let i = id.index();
            self.g_kinds[k] = self.kinds[i];
            self.g_nodes[k] = self.cur[i];
            self.g_prev[k] = self.prev[i];
            self.g_smooth[k] = self.smooth[i];
            self.g_tangent[k] = self.tangent[i];
            self.g_incr[k] = self.incr[i];
        }
        ids.len()
    }

    /// Multipliers of element `ie` at `level` (smooth, position, velocity or static).
    pub fn element_mult(&self, level: Level, ie: usize) -> &[f64] {
        let li = level.index();
        let (a, n) = self.systems[li].mult_range[ie];
        &self.mult[li][a..a + n]
    }

    /// Local state of element `ie` at `level` from the buffers filled by [`Workspace::gather`]
    /// (`nn` nodes).
    pub fn gathered(&self, level: Level, ie: usize, nn: usize) -> LocalState<'_> {
        LocalState {
            kinds: &self.g_kinds[..nn],
            nodes: &self.g_nodes[..nn],
            prev: &self.g_prev[..nn],
            smooth: if level == Level::Smooth {
                &self.g_nodes[..nn]
            } else {
                &self.g_smooth[..nn]
            },
            rot_tangent: &self.g_tangent[..nn],
            incr: &self.g_incr[..nn],
            mult: self.element_mult(level, ie),
            mult_smooth: self.element_mult(Level::Smooth, ie),
        }
    }

    /// Converged outputs view of element `ie` from the buffers filled by [`Workspace::gather`].
    pub fn output_state(
        &self,
        ie: usize,
        nn: usize,
        t: f64,
        k: [f64; 3],
        h: f64,
        gravity: Vector3<f64>,
    ) -> OutputState<'_> {
        OutputState {
            t,
            nodes: &self.g_nodes[..nn],
            mult_smooth: self.element_mult(Level::Smooth, ie),
            mult_position: self.element_mult(Level::Position, ie),
            mult_velocity: self.element_mult(Level::Velocity, ie),
            k,
            h,
            gravity,
        }
    }

    /// Factorize the assembled matrix of `level` and solve `S Δ = −r` into `self.delta`.
    ///
    /// The multiplier block of the iteration matrix is regularized by `−ε k²/p` (ε =
    /// [`REGULARIZATION`]): redundant constraints (a planar mechanism built from 3-D joints, a
    /// stick row repeating a joint row) make the exact saddle-point matrix singular. Only the
    /// Jacobian is modified, never the residual, so the converged state still satisfies the
    /// exact equations; redundant multipliers are split along the Newton path.
    pub fn solve(&mut self, cx: &StepCx, step: usize) -> Result<(), SolveError> {
        let (level, t) = (cx.level, cx.t);
        let li = level.index();
        self.systems[li].add_to_multiplier_diagonal(-REGULARIZATION * cx.k * cx.k / cx.p);
        let sys = &self.systems[li];
        let lu = &mut self.lu[li];
        let err = |source| SolveError::Linear {
            step,
            t,
            level,
            source,
        };
        lu.factorize(&sys.matrix, sys.generation).map_err(err)?;
        let n = sys.n;
        let delta = &mut self.delta[..n];
        for (d, r) in delta.iter_mut().zip(&sys.rhs) {
            *d = -r;
        }
        lu.solve_in_place(delta).map_err(err)?;
        if delta.iter().any(|v| !v.is_finite()) {
            return Err(SolveError::NonFinite {
                step,
                t,
                level,
                what: "Newton correction (singular iteration matrix: redundant constraints, or a motion without mass?)".into(),
            });
        }
        Ok(())
    }
}

impl Workspace {
    /// Global offset of node `i`'s unknowns, `None` for a fixed node.
    #[inline]
    pub fn offset(&self, i: usize) -> Option<usize> {
        let off = self.numbering.offset[i];
        (off != saltus_core::assembly::FIXED).then_some(off)
    }

    /// Reset the unknowns, increments and tangents of every node (start of a level).
    pub fn reset_level(&mut self, level: Level) {
        self.unknown.fill(Vector6::zeros());
        self.incr.fill(Vector6::zeros());
        self.tangent.fill(Matrix3::identity());
        self.mult[level.index()].fill(0.0);
    }

    /// Newton loop on `cx.level` (step index `step` for error messages). Each iteration
    /// assembles, tests convergence, solves `S Δ = −r`, adds the node part of `Δ` to
    /// [`Workspace::unknown`] and the multiplier part to the level's multipliers, then calls
    /// `update(ws)` to recompute the node states from the unknowns. Returns (iterations,
    /// final residual norm). Allocation-free.
    pub fn newton(
        &mut self,
        model: &Model,
        cx: &StepCx,
        tol: &Tolerance,
        step: usize,
        mut update: impl FnMut(&mut Workspace),
    ) -> Result<(usize, f64), SolveError> {
        let li = cx.level.index();
        let mut it = 0;
        // Backtracking (Armijo on ‖r‖, spec §10 "line search"): the last full correction and
        // the iterate it started from, the step fraction and the residual before the step.
        let mut alpha = 1.0;
        let mut prev_norm = f64::INFINITY;
        let mut backtracks = 0;
        self.backtracks = 0;
        loop {
            let ResidualNorms { norm, reference } = self.assemble(model, cx, step)?;
            // Spec §10 test, plus the round-off floor of the constraint rows `k g(q)` (position,
            // static) and `k g_q v` (smooth, velocity): `g` is computed from coordinates of size
            // `state_scale`, so it cannot be resolved below ~ε·state_scale.
            let round_off = ROUND_OFF * cx.k * self.state_scale(cx.level);
            let tolerance = tol.tol * (reference + tol.tol_f) + round_off;
            let can_backtrack = tol.line_search && it > 0 && backtracks < MAX_BACKTRACKS;
            if !norm.is_finite() && !can_backtrack {
                return Err(SolveError::NonFinite {
                    step,
                    t: cx.t,
                    level: cx.level,
                    what: "assembled residual".into(),
                });
            }
            if norm <= tolerance {
                return Ok((it, norm));
            }
            // Not enough decrease (or a non-finite residual): retry with half the step.
            // (A NaN residual fails `sufficient` and is backtracked too.)
            let sufficient = norm <= (1.0 - ARMIJO * alpha) * prev_norm;
            if can_backtrack && !sufficient {
                alpha *= 0.5;
                backtracks += 1;
                self.backtracks += 1;
                self.set_iterate(li, alpha);
                update(self);
                continue;
            }
            if it == tol.max_iterations {
                return Err(SolveError::NonConvergence {
                    step,
                    t: cx.t,
                    level: cx.level,
                    iterations: it,
                    residual: norm,
                    tolerance,
                });
            }
            self.solve(cx, step)?;
            let nd = self.systems[li].n_node_dofs;
            let n = self.systems[li].n;
            // Round-off plateau: a correction below the resolution of the unknowns cannot
            // reduce the residual further; nor can one below `tol` (relative to the corrected
            // quantities) once the residual has stopped decreasing — the residual is then at
            // the round-off floor of forces computed from absolute coordinates (e.g. EA ε|x|/L of
            // a stiff beam), which the residual test cannot know.
            let (sn, sm) = (self.state_scale(cx.level), amax(&self.mult[li]));
            let (dn, dm) = (amax(&self.delta[..nd]), amax(&self.delta[nd..n]));
            let at_round_off = dn <= STAGNATION * (1.0 + sn) && dm <= STAGNATION * (1.0 + sm);
            let plateau = it > 0
                && norm > 0.5 * prev_norm
                && norm <= PLATEAU_FACTOR * tolerance
                && dn <= tol.tol * (1.0 + sn)
                && dm <= tol.tol * (1.0 + sm);
            let stagnated = at_round_off || plateau;
            self.saved_unknown.copy_from_slice(&self.unknown);
            self.saved_mult[..n - nd].copy_from_slice(&self.mult[li]);
            // Damping of large rotation corrections: a rotation increment beyond π aliases
            // (exp is 2π-periodic), so Newton could converge to a spurious extra turn.
            let rot = self.max_rotation_correction(cx.dq_dv);
            alpha = if rot > MAX_ROTATION_STEP {
                MAX_ROTATION_STEP / rot
            } else {
                1.0
            };
            backtracks = 0;
            prev_norm = norm;
            self.set_iterate(li, alpha);
            update(self);
            it += 1;
            if stagnated {
                return Ok((it, norm));
            }
        }
    }

    /// Largest rotation [rad] that the last correction applies to a frame node:
    /// `dq_dv · |Δ_rot|` (the rotational part of the node unknowns moves the configuration by
    /// `dq_dv` per unit, see `saltus_core::element`).
    fn max_rotation_correction(&self, dq_dv: f64) -> f64 {
        let mut m: f64 = 0.0;
        for i in 0..self.kinds.len() {
            if self.kinds[i] != NodeKind::Frame {
                continue;
            }
            if let Some(off) = self.offset(i) {
                let d = &self.delta[off + 3..off + 6];
                m = m.max((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt());
            }
        }
        m * dq_dv
    }

    /// Unknowns and multipliers of level `li` = saved iterate + `alpha` × last correction.
    fn set_iterate(&mut self, li: usize, alpha: f64) {
        let nd = self.systems[li].n_node_dofs;
        let n = self.systems[li].n;
        for ((m, m0), d) in self.mult[li]
            .iter_mut()
            .zip(&self.saved_mult)
            .zip(&self.delta[nd..n])
        {
            *m = m0 + alpha * d;
        }
        for i in 0..self.kinds.len() {
            self.unknown[i] = self.saved_unknown[i];
            if let Some(off) = self.offset(i) {
                for k in 0..self.kinds[i].ndof() {
                    self.unknown[i][k] += alpha * self.delta[off + k];
                }
            }
        }
    }

    /// Largest magnitude of the quantities the level's unknowns correct: positions at the
    /// position/static level, velocities at the smooth and velocity levels.
    fn state_scale(&self, level: Level) -> f64 {
        let mut s: f64 = 0.0;
        for (i, n) in self.cur.iter().enumerate() {
            if self.offset(i).is_none() {
                continue;
            }
            s = match level {
                Level::Position | Level::Static => s.max(n.x.amax()),
                Level::Smooth | Level::Velocity => s.max(n.v.amax()).max(n.omega.amax()),
            };
        }
        s
    }
}

/// Relative size of a Newton correction at which the iterate has stopped changing beyond
/// round-off (≈ 500 ulp).
const STAGNATION: f64 = 1e-13;

/// Relative regularization of the multiplier diagonal of the iteration matrices (see
/// [`Workspace::solve`]): small enough to leave Newton's convergence quadratic in practice,
/// large enough to keep redundant constraint sets factorizable in double precision.
pub const REGULARIZATION: f64 = 1e-10;

/// Largest rotation [rad] a single Newton correction may apply to a node (larger ones are
/// scaled down): well below π, where the exponential map aliases.
const MAX_ROTATION_STEP: f64 = 0.5;

/// A residual plateau is accepted as converged only within this factor of the tolerance.
const PLATEAU_FACTOR: f64 = 1e4;

/// Sufficient-decrease constant of the line search.
const ARMIJO: f64 = 1e-4;

/// Largest number of step halvings per Newton correction.
const MAX_BACKTRACKS: usize = 6;

/// Round-off floor factor of constraint rows: `10³ ε ≈ 2.2e-13` times `k` times the size of
/// the coordinates (so `|g| ≲ 2e-13 |x|` at convergence, far below the 1e-10 requirement).
const ROUND_OFF: f64 = 1e3 * f64::EPSILON;

fn amax(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

fn level_generation(level: Level) -> u64 {
    level.index() as u64
}
