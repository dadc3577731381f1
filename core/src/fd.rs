//! Finite-difference checks of element Hessians against their residuals, at every level,
//! with Lie-group perturbations for rotations (the contract of [`crate::element`]).
//!
//! A check draws a random but reproducible local state, evaluates the element's residual and
//! Hessian, and compares every Hessian column with the central difference
//! `(r(u + ε e_j) − r(u − ε e_j)) / 2ε`, where moving the unknown `u` moves the state exactly as
//! the solver does at that level (module docs of [`crate::element`]).

use crate::element::{
    Element, ElementError, InertiaTerm, Level, LocalState, LocalSystem, StageMotion, StepCx,
};
use crate::lie;
use crate::node::{NodeKind, NodeState};
use crate::stage::{evaluate_element, evaluate_element_residual, Scratch};
use nalgebra::{DMatrix, DVector, Matrix3, UnitQuaternion, Vector3, Vector6};

/// Small deterministic generator (xorshift64*) so checks are reproducible without a
/// dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator (seed 0 is remapped).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in `[-1, 1)`.
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        2.0 * (x as f64 / (1u64 << 53) as f64) - 1.0
    }
    /// Vector with components uniform in `[-a, a)`.
    pub fn vec3(&mut self, a: f64) -> Vector3<f64> {
        Vector3::new(self.uniform() * a, self.uniform() * a, self.uniform() * a)
    }
    /// A random rotation (rotation vector of norm < √3·π).
    pub fn rotation(&mut self) -> UnitQuaternion<f64> {
        lie::exp(&self.vec3(std::f64::consts::PI))
    }
}

/// A local state of one element at one level, with the bases from which the level's unknowns
/// are measured.
#[derive(Clone, Debug)]
pub struct LocalFixture {
    /// Node kinds, in local order.
    pub kinds: Vec<NodeKind>,
    /// Converged state at `t_n`.
    pub prev: Vec<NodeState>,
    /// Converged smooth state (base of position and velocity levels).
    pub smooth: Vec<NodeState>,
    /// Level increment per node: smooth `[Δx; Δψ]` from `prev`, position/static `U` from
    /// `smooth`, velocity `W` from `smooth`.
    pub incr: Vec<Vector6<f64>>,
    /// Multipliers of the level.
    pub mult: Vec<f64>,
    /// Converged smooth multipliers.
    pub mult_smooth: Vec<f64>,
}

impl LocalFixture {
    /// Random fixture: O(1) positions and velocities, random rotations, increments of size
    /// `incr_size` (rad or m), multipliers in `[-1, 1)`.
    pub fn random(
        kinds: &[NodeKind],
        n_mult: usize,
        n_mult_smooth: usize,
        incr_size: f64,
        rng: &mut Rng,
    ) -> Self {
        let mut prev = Vec::new();
        let mut smooth = Vec::new();
        let mut incr = Vec::new();
        for &k in kinds {
            let frame = k == NodeKind::Frame;
            let mut p = NodeState::at(rng.vec3(1.0), UnitQuaternion::identity());
            let mut s = NodeState::at(p.x + rng.vec3(incr_size), UnitQuaternion::identity());
            p.v = rng.vec3(1.0);
            s.v = rng.vec3(1.0);
            s.vdot = rng.vec3(1.0);
            if frame {
                p.r = rng.rotation();
                s.r = p.r * lie::exp(&rng.vec3(incr_size));
                p.omega = rng.vec3(1.0);
                s.omega = rng.vec3(1.0);
                s.omegadot = rng.vec3(1.0);
            }
            let mut d = Vector6::zeros();
            d.fixed_rows_mut::<3>(0).copy_from(&rng.vec3(incr_size));
            if frame {
                d.fixed_rows_mut::<3>(3).copy_from(&rng.vec3(incr_size));
            }
            prev.push(p);
            smooth.push(s);
            incr.push(d);
        }
        Self {
            kinds: kinds.to_vec(),
            prev,
            smooth,
            incr,
            mult: (0..n_mult).map(|_| rng.uniform()).collect(),
            mult_smooth: (0..n_mult_smooth).map(|_| rng.uniform()).collect(),
        }
    }

    /// Number of local unknowns (node unknowns + multipliers).
    pub fn n_unknowns(&self) -> usize {
        self.kinds.iter().map(|k| k.ndof()).sum::<usize>() + self.mult.len()
    }

    /// The element's view at the stage `cx` of the current node states `nodes` and rotation
    /// tangents `tangents` (from [`LocalFixture::states`]), node increments `incr` and
    /// multipliers `mult`.
    pub fn local_state<'a>(
        &'a self,
        cx: &StepCx,
        nodes: &'a [NodeState],
        tangents: &'a [Matrix3<f64>],
        incr: &'a [Vector6<f64>],
        mult: &'a [f64],
    ) -> LocalState<'a> {
        LocalState {
            kinds: &self.kinds,
            nodes,
            prev: &self.prev,
            smooth: if cx.motion() == StageMotion::Rates {
                nodes
            } else {
                &self.smooth
            },
            rot_tangent: tangents,
            incr,
            mult,
            mult_smooth: &self.mult_smooth,
            admissible: true,
            memo: None,
            base: None,
        }
    }

    /// Current node states and rotation tangents at `level` for the given node increments.
    pub fn states(
        &self,
        cx: &StepCx,
        incr: &[Vector6<f64>],
    ) -> (Vec<NodeState>, Vec<Matrix3<f64>>) {
        let mut nodes = Vec::new();
        let mut tangents = Vec::new();
        for (k, kind) in self.kinds.iter().enumerate() {
            let frame = *kind == NodeKind::Frame;
            let d = &incr[k];
            let lin = d.fixed_rows::<3>(0).into_owned();
            let ang = d.fixed_rows::<3>(3).into_owned();
            let base = &self.smooth[k];
            let (s, t) = match cx.motion() {
                StageMotion::Rates => {
                    // u = ṽ; the fixture stores Δq; moving u by du moves Δq by dq_dv du.
                    let p = &self.prev[k];
                    let mut s = *base;
                    s.x = p.x + lin;
                    if frame {
                        s.r = p.r * lie::exp(&ang);
                    }
                    (
                        s,
                        if frame {
                            lie::tangent(&ang)
                        } else {
                            Matrix3::identity()
                        },
                    )
                }
                StageMotion::Configuration => {
                    let mut s = *base;
                    s.x = base.x + lin;
                    if frame {
                        s.r = base.r * lie::exp(&ang);
                    }
                    (
                        s,
                        if frame {
                            lie::tangent(&ang)
                        } else {
                            Matrix3::identity()
                        },
                    )
                }
                StageMotion::Velocity => {
                    let mut s = *base;
                    s.v = base.v + lin;
                    if frame {
                        s.omega = base.omega + ang;
                    }
                    (s, Matrix3::identity())
                }
            };
            nodes.push(s);
            tangents.push(t);
        }
        (nodes, tangents)
    }
}

/// Result of a Hessian check.
#[derive(Clone, Debug)]
pub struct FdReport {
    /// Largest `|H_ij − H^FD_ij|`.
    pub max_abs_error: f64,
    /// Largest `|H_ij|`.
    pub max_entry: f64,
    /// Position `(row, col)` of the largest error.
    pub worst: (usize, usize),
    /// Analytic Hessian.
    pub analytic: DMatrix<f64>,
    /// Finite-difference Hessian.
    pub numeric: DMatrix<f64>,
    /// Difference of the residual-only evaluation's residual from the full one,
    /// `max|r − r_only| / (1 + max|r|)` (exactly zero when both paths agree).
    pub residual_only_error: f64,
}

impl FdReport {
    /// Error relative to the largest entry, `max|H − H^FD| / (1 + max|H|)`, or the
    /// residual-only path's mismatch if larger.
    pub fn relative_error(&self) -> f64 {
        (self.max_abs_error / (1.0 + self.max_entry)).max(self.residual_only_error)
    }
}

/// Residual and Hessian of `element` at the stage `cx` on an explicit local state, through the
/// stage assembly (allocates; for tests and checks).
pub fn evaluate(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
) -> Result<(DVector<f64>, DMatrix<f64>), ElementError> {
    let n = s.kinds.iter().map(|k| k.ndof()).sum::<usize>() + s.mult.len();
    let mut r = DVector::zeros(n);
    let mut h = DMatrix::zeros(n, n);
    let mut out = LocalSystem {
        residual: r.rows_mut(0, n),
        hessian: h.view_mut((0, 0), (n, n)),
        reference: 0.0,
    };
    let mut scratch = Scratch::new(s.nodes.len(), n);
    evaluate_element(element, cx, s, &mut out, &mut scratch)?;
    Ok((r, h))
}

/// Evaluate residual (and Hessian) of `element` at `level` for the fixture with node increments
/// `incr` and multipliers `mult`.
pub fn eval_local(
    element: &dyn Element,
    cx: &StepCx,
    fx: &LocalFixture,
    incr: &[Vector6<f64>],
    mult: &[f64],
) -> Result<(DVector<f64>, DMatrix<f64>), ElementError> {
    eval_local_with(element, cx, fx, incr, mult, true)
}

/// [`eval_local`] through the residual-only evaluation of the stage assembly
/// ([`evaluate_element_residual`]: line searches, convergence checks); the Hessian returned is
/// whatever that path leaves (zero for the physics interfaces).
pub fn eval_local_residual(
    element: &dyn Element,
    cx: &StepCx,
    fx: &LocalFixture,
    incr: &[Vector6<f64>],
    mult: &[f64],
) -> Result<DVector<f64>, ElementError> {
    eval_local_with(element, cx, fx, incr, mult, false).map(|(r, _)| r)
}

fn eval_local_with(
    element: &dyn Element,
    cx: &StepCx,
    fx: &LocalFixture,
    incr: &[Vector6<f64>],
    mult: &[f64],
    hessian: bool,
) -> Result<(DVector<f64>, DMatrix<f64>), ElementError> {
    let n = fx.n_unknowns();
    // At the smooth level `incr` carries only Δq; `check_hessian` shifts the rates.
    let (nodes, tangents) = fx.states(cx, incr);
    let mut r = DVector::zeros(n);
    let mut h = DMatrix::zeros(n, n);
    {
        let s = fx.local_state(cx, &nodes, &tangents, incr, mult);
        let mut out = LocalSystem {
            residual: r.rows_mut(0, n),
            hessian: h.view_mut((0, 0), (n, n)),
            reference: 0.0,
        };
        let mut scratch = Scratch::new(fx.kinds.len(), n);
        if hessian {
            evaluate_element(element, cx, &s, &mut out, &mut scratch)?;
        } else {
            evaluate_element_residual(element, cx, &s, &mut out, &mut scratch)?;
        }
    }
    Ok((r, h))
}

/// Compare the Hessian of `element` at `cx.level` with central differences of its residual.
///
/// At the smooth level the fixture's node rates are shifted together with the configuration:
/// a unit change of the unknown `ṽ` moves `Δq` by `dq_dv`, `v` by 1 and `v̇` by `dvdot_dv`.
pub fn check_hessian(
    element: &dyn Element,
    cx: &StepCx,
    fx: &LocalFixture,
    eps: f64,
) -> Result<FdReport, ElementError> {
    let (r0, analytic) = eval_smooth_aware(element, cx, fx, &fx.incr, &fx.mult, None)?;
    // The residual-only path (line searches, convergence checks) must give the same residual.
    let r_only = eval_local_residual(element, cx, fx, &fx.incr, &fx.mult)?;
    let residual_only_error = (&r0 - &r_only).amax() / (1.0 + r0.amax());
    let n = fx.n_unknowns();
    let mut numeric = DMatrix::zeros(n, n);
    let n_node: usize = fx.kinds.iter().map(|k| k.ndof()).sum();
    for j in 0..n {
        let mut rs = [DVector::zeros(0), DVector::zeros(0)];
        for (side, sign) in [(0usize, 1.0f64), (1, -1.0)] {
            let mut incr = fx.incr.clone();
            let mut mult = fx.mult.clone();
            let mut rate_shift = None;
            if j < n_node {
                let (node, dof) = locate(&fx.kinds, j);
                let du = sign * eps;
                match cx.motion() {
                    StageMotion::Rates => {
                        incr[node][dof] += cx.dq_dv * du;
                        rate_shift = Some((node, dof, du));
                    }
                    _ => incr[node][dof] += du,
                }
            } else {
                mult[j - n_node] += sign * eps;
            }
            let (r, _) = eval_smooth_aware(element, cx, fx, &incr, &mult, rate_shift)?;
            rs[side] = r;
        }
        let col = (&rs[0] - &rs[1]) / (2.0 * eps);
        numeric.set_column(j, &col);
    }
    let diff = &analytic - &numeric;
    let mut worst = (0, 0);
    let mut max_abs_error = 0.0;
    for j in 0..n {
        for i in 0..n {
            if diff[(i, j)].abs() > max_abs_error {
                max_abs_error = diff[(i, j)].abs();
                worst = (i, j);
            }
        }
    }
    Ok(FdReport {
        max_abs_error,
        max_entry: analytic.amax(),
        worst,
        analytic,
        numeric,
        residual_only_error,
    })
}

fn locate(kinds: &[NodeKind], j: usize) -> (usize, usize) {
    let mut off = 0;
    for (k, kind) in kinds.iter().enumerate() {
        if j < off + kind.ndof() {
            return (k, j - off);
        }
        off += kind.ndof();
    }
    unreachable!("unknown index {j} beyond the node unknowns")
}

fn eval_smooth_aware(
    element: &dyn Element,
    cx: &StepCx,
    fx: &LocalFixture,
    incr: &[Vector6<f64>],
    mult: &[f64],
    rate_shift: Option<(usize, usize, f64)>,
) -> Result<(DVector<f64>, DMatrix<f64>), ElementError> {
    if cx.motion() != StageMotion::Rates || rate_shift.is_none() {
        return eval_local(element, cx, fx, incr, mult);
    }
    let (node, dof, du) = rate_shift.unwrap_or((0, 0, 0.0));
    let mut shifted = fx.clone();
    let s = &mut shifted.smooth[node];
    if dof < 3 {
        s.v[dof] += du;
        s.vdot[dof] += cx.dvdot_dv * du;
    } else {
        s.omega[dof - 3] += du;
        s.omegadot[dof - 3] += cx.dvdot_dv * du;
    }
    eval_local(element, cx, &shifted, incr, mult)
}

/// Representative contexts of every stage of every built-in scheme, with their names
/// (`"nsga/smooth"`, …, `"static"`): the stages a finite-difference check must cover.
pub fn stage_contexts() -> Vec<(&'static str, StepCx)> {
    vec![
        ("nsga/smooth", test_cx(Level::Smooth)),
        ("nsga/position", test_cx(Level::Position)),
        ("nsga/velocity", test_cx(Level::Velocity)),
        ("static", test_cx(Level::Static)),
        ("custom/impulse", test_cx(Level::Custom)),
    ]
}

/// A representative context for `level`: `h = 1e-2`, `ρ∞ = 0.8` coefficients, unit scalings
/// except `k ≠ p` (catches swapped factors), gravity along −z.
pub fn test_cx(level: Level) -> StepCx {
    let (h, rho): (f64, f64) = (1e-2, 0.8);
    let alpha_m = (2.0 * rho - 1.0) / (rho + 1.0);
    let alpha_f = rho / (rho + 1.0);
    let gamma = 0.5 + alpha_f - alpha_m;
    let beta = 0.25 * (gamma + 0.5).powi(2);
    let (dq_dv, dvdot_dv, dv_dv, force_weight) = match level {
        Level::Smooth => (
            h * beta / gamma,
            (1.0 - alpha_m) / (h * gamma * (1.0 - alpha_f)),
            1.0,
            1.0,
        ),
        Level::Position => (1.0, 0.0, 0.0, 0.5 * h * h),
        Level::Velocity => (0.0, 0.0, 1.0, h),
        Level::Static => (1.0, 0.0, 0.0, 1.0),
        // A velocity-impulse stage of another scheme: M (v − v_n) − h f(q_n, v) = 0.
        Level::Custom => (0.0, 0.0, 1.0, h),
    };
    let (inertia, force_difference) = match level {
        Level::Custom => (InertiaTerm::Increment, false),
        _ => StepCx::level_terms(level),
    };
    StepCx {
        level,
        t: 0.37,
        h,
        gravity: Vector3::new(0.3, -0.2, -9.81),
        k: 1.7,
        p: 2.3,
        k_s: 1.3,
        dq_dv,
        dvdot_dv,
        dv_dv,
        force_weight,
        inertia,
        force_difference,
        // A load factor ≠ 1 at the static level catches loads that ignore it.
        load_factor: if level == Level::Static { 0.37 } else { 1.0 },
        load_tolerance: 0.0,
    }
}
