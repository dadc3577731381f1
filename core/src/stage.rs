//! Stage assembly of one element: its physics interfaces ([`crate::physics`]) turned into a
//! stage's residual and Hessian. This is the only place that knows the level table; the
//! assembler and the finite-difference harness both call [`evaluate_element`].
//!
//! A stage's node unknown `u` moves the state as `dq = ∂q/∂u · T du` (`T` the per-node rotation
//! tangent on rotational columns, identity for translations), `dv = ∂v/∂u du`,
//! `dv̇ = ∂v̇/∂u du` ([`StepCx`] `dq_dv`, `dv_dv`, `dvdot_dv`). With `w` the stage's force weight,
//! `f_base` the force at the stage's base state (the converged smooth state `(q̃, ṽ)`) when the
//! stage measures force differences, and `a` the inertia measure (`v̇` or the increment `u`):
//!
//! | term | residual | Hessian |
//! |---|---|---|
//! | inertia `M` | `M a` | `∂a/∂u · M` |
//! | inertial force `f_in` | `−w (f_in − f_in,base)` | `w (∂q/∂u · K_in T + ∂v/∂u · C_in)` |
//! | force `f` | `−w (f − f_base)` | `w (∂q/∂u · K T + ∂v/∂u · C)` |
//!
//! The NSGA levels (`nsga.md` §§4–6) are the rows of this table:
//!
//! | level | `a`, `∂a/∂u` | `w` | `f_base` | `∂q/∂u` | `∂v/∂u` |
//! |---|---|---|---|---|---|
//! | smooth (§4) | `v̇`, `(1−α_m)/(hγ(1−α_f))` | 1 | – | `hβ/γ` | 1 |
//! | position (§5) | `U`, 1 | `h²/2` | `f(q̃, ṽ)` | 1 | 0 |
//! | velocity (§6) | `W`, 1 | `h` | `f(q̃, ṽ)` | 0 | 1 |
//! | static | – | 1 | – | 1 | 0 |
//!
//! A static stage evaluates forces at rest (`v = 0`) with loads and gravity scaled by the load
//! factor. Elements that implement the raw per-level methods of [`Element`] (the escape hatch)
//! add their own contribution after the physics terms.

use crate::element::{Element, ElementError, InertiaTerm, Level, LocalState, LocalSystem, StepCx};
use crate::node::{NodeKind, NodeState};
use crate::physics::{ForceTerms, PhysicsState};
use nalgebra::{DMatrix, DVector, Vector3};

/// Per-evaluation scratch of [`evaluate_element`], sized once for the largest element so that
/// evaluation never allocates.
#[derive(Clone, Debug)]
pub struct Scratch {
    f: DVector<f64>,
    k: DMatrix<f64>,
    c: DMatrix<f64>,
    m: DMatrix<f64>,
    a: DVector<f64>,
    d: DVector<f64>,
    at_rest: Vec<NodeState>,
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new(0, 0)
    }
}

impl Scratch {
    /// Scratch for elements with up to `max_nodes` nodes and `max_node_dofs` node unknowns.
    pub fn new(max_nodes: usize, max_node_dofs: usize) -> Self {
        let n = max_node_dofs;
        Self {
            f: DVector::zeros(n),
            k: DMatrix::zeros(n, n),
            c: DMatrix::zeros(n, n),
            m: DMatrix::zeros(n, n),
            a: DVector::zeros(n),
            d: DVector::zeros(n),
            at_rest: vec![NodeState::default(); max_nodes],
        }
    }

    /// Scratch sized for the elements of a model.
    pub fn for_elements(elements: &[Box<dyn Element>], kinds: &[NodeKind]) -> Self {
        let mut nodes = 0;
        let mut dofs = 0;
        for e in elements {
            nodes = nodes.max(e.nodes().len());
            dofs = dofs.max(
                e.nodes()
                    .iter()
                    .map(|id| kinds[id.index()].ndof())
                    .sum::<usize>(),
            );
        }
        Self::new(nodes, dofs)
    }

    fn fits(&self, nodes: usize, n: usize) -> bool {
        self.f.len() >= n && self.at_rest.len() >= nodes
    }
}

/// Whether `element` contributes to `level` (physics interfaces or raw level methods).
pub fn participates(element: &dyn Element, level: Level) -> bool {
    element.levels().contains(level)
        || element.as_force().is_some()
        || (element.as_inertia().is_some() && level != Level::Static)
}

/// Add `element`'s contribution at the stage `cx` into `out` (pre-zeroed): its inertia and
/// forces through the level table of this module, then its raw level method if it has one.
pub fn evaluate_element(
    element: &dyn Element,
    cx: &StepCx,
    s: &LocalState<'_>,
    out: &mut LocalSystem<'_>,
    sc: &mut Scratch,
) -> Result<(), ElementError> {
    let inertia = element.as_inertia();
    let force = element.as_force();
    if inertia.is_some() || force.is_some() {
        let n: usize = s.kinds.iter().map(|k| k.ndof()).sum();
        if !sc.fits(s.nodes.len(), n) {
            *sc = Scratch::new(s.nodes.len(), n);
        }
        let statics = cx.level == Level::Static;
        let nodes = if statics {
            // Static equilibrium: forces at rest.
            for (r, n) in sc.at_rest.iter_mut().zip(s.nodes) {
                *r = NodeState {
                    v: Vector3::zeros(),
                    omega: Vector3::zeros(),
                    vdot: Vector3::zeros(),
                    omegadot: Vector3::zeros(),
                    ..*n
                };
            }
            &sc.at_rest[..s.nodes.len()]
        } else {
            s.nodes
        };
        // Split borrows: `nodes` may borrow `sc.at_rest`, the terms borrow the other buffers.
        let Scratch {
            f, k, c, m, a, d, ..
        } = sc;
        let ps = PhysicsState {
            nodes,
            kinds: s.kinds,
            t: cx.t,
            load_factor: cx.load_factor,
            statics,
            gravity: cx.gravity * cx.load_factor,
            tangents: true,
        };
        let base = PhysicsState {
            nodes: s.smooth,
            tangents: false,
            ..ps
        };
        // Reference of the convergence test (spec §10): the magnitudes of the individual terms
        // (per 3-vector block), which may cancel in the element residual. A single term adds
        // nothing beyond the element residual norm the assembler takes anyway.
        let mut terms = 0;
        let mut reference = 0.0;
        if let Some(inertia) = inertia.filter(|_| cx.inertia != InertiaTerm::None) {
            reference += add_inertia(inertia, cx, s, n, out, m, a);
            let eval =
                |st: &PhysicsState<'_>, t: &mut ForceTerms<'_>| inertia.inertial_force(st, t);
            reference += add_force_terms(eval, cx, s, &ps, &base, n, out, f, k, c, d)?;
            terms += 2;
        }
        if let Some(force) = force {
            let eval = |st: &PhysicsState<'_>, t: &mut ForceTerms<'_>| force.force(st, t);
            reference += add_force_terms(eval, cx, s, &ps, &base, n, out, f, k, c, d)?;
            terms += 1;
        }
        if terms > 1 {
            out.reference += reference;
        }
    }
    if element.levels().contains(cx.level) {
        element.evaluate(cx, s, out)?;
    }
    Ok(())
}

/// `r += M a`, `H += ∂a/∂u · M` with `a = v̇` (smooth) or `a = u` (corrections); returns the
/// block norms of `M a`.
fn add_inertia(
    inertia: &dyn crate::physics::Inertia,
    cx: &StepCx,
    s: &LocalState<'_>,
    n: usize,
    out: &mut LocalSystem<'_>,
    m: &mut DMatrix<f64>,
    a: &mut DVector<f64>,
) -> f64 {
    let mut mv = m.view_mut((0, 0), (n, n));
    mv.fill(0.0);
    inertia.mass_matrix(s.kinds, &mut mv);
    let da = match cx.inertia {
        InertiaTerm::Acceleration => cx.dvdot_dv,
        _ => 1.0,
    };
    let mut o = 0;
    for (i, kind) in s.kinds.iter().enumerate() {
        let nd = kind.ndof();
        match cx.inertia {
            InertiaTerm::Acceleration => {
                let st = &s.nodes[i];
                for d in 0..3 {
                    a[o + d] = st.vdot[d];
                    if nd == 6 {
                        a[o + 3 + d] = st.omegadot[d];
                    }
                }
            }
            _ => {
                for d in 0..nd {
                    a[o + d] = s.incr[i][d];
                }
            }
        }
        o += nd;
    }
    let mut blocks = [0.0; 3];
    let mut norms = 0.0;
    for i in 0..n {
        let mut ma = 0.0;
        for j in 0..n {
            let mij = m[(i, j)];
            ma += mij * a[j];
            out.hessian[(i, j)] += da * mij;
        }
        out.residual[i] += ma;
        blocks[i % 3] = ma;
        if i % 3 == 2 {
            norms += (blocks[0] * blocks[0] + blocks[1] * blocks[1] + blocks[2] * blocks[2]).sqrt();
        }
    }
    norms
}

/// Sum of the Euclidean norms of the 3-vector blocks of `v[..n]`.
fn block_norms(v: &DVector<f64>, n: usize) -> f64 {
    (0..n / 3).map(|b| v.rows(3 * b, 3).norm()).sum()
}

/// Force-like term (module table): evaluate at the current state with tangents and, for a
/// difference stage, at the base state without; add `−w (f − f_base)` and
/// `w (∂q/∂u · K T + ∂v/∂u · C)`. Returns the block norms of the added residual.
fn add_force_terms(
    eval: impl Fn(&PhysicsState<'_>, &mut ForceTerms<'_>) -> Result<(), ElementError>,
    cx: &StepCx,
    s: &LocalState<'_>,
    ps: &PhysicsState<'_>,
    base: &PhysicsState<'_>,
    n: usize,
    out: &mut LocalSystem<'_>,
    f: &mut DVector<f64>,
    k: &mut DMatrix<f64>,
    c: &mut DMatrix<f64>,
    d: &mut DVector<f64>,
) -> Result<f64, ElementError> {
    let w = cx.force_weight;
    let (cq, cv) = (w * cx.dq_dv, w * cx.dv_dv);
    let need_k = cq != 0.0;
    let need_c = cv != 0.0;
    zero(f, k, c, n);
    {
        let mut terms = ForceTerms {
            f: f.rows_mut(0, n),
            stiffness: k.view_mut((0, 0), (n, n)),
            damping: c.view_mut((0, 0), (n, n)),
        };
        let st = PhysicsState {
            tangents: need_k || need_c,
            ..*ps
        };
        eval(&st, &mut terms)?;
    }
    for i in 0..n {
        d[i] = -w * f[i];
    }
    if need_k {
        // Rotational columns of frame nodes: material variation δΘ = T δu.
        let mut o = 0;
        for (i, kind) in s.kinds.iter().enumerate() {
            if *kind == NodeKind::Frame {
                let t = &s.rot_tangent[i];
                for r in 0..n {
                    let row = [k[(r, o + 3)], k[(r, o + 4)], k[(r, o + 5)]];
                    for col in 0..3 {
                        k[(r, o + 3 + col)] =
                            row[0] * t[(0, col)] + row[1] * t[(1, col)] + row[2] * t[(2, col)];
                    }
                }
            }
            o += kind.ndof();
        }
        for j in 0..n {
            for i in 0..n {
                out.hessian[(i, j)] += cq * k[(i, j)];
            }
        }
    }
    if need_c {
        for j in 0..n {
            for i in 0..n {
                out.hessian[(i, j)] += cv * c[(i, j)];
            }
        }
    }
    if cx.force_difference {
        zero(f, k, c, n);
        let mut terms = ForceTerms {
            f: f.rows_mut(0, n),
            stiffness: k.view_mut((0, 0), (n, n)),
            damping: c.view_mut((0, 0), (n, n)),
        };
        eval(base, &mut terms)?;
        for i in 0..n {
            d[i] += w * f[i];
        }
    }
    for i in 0..n {
        out.residual[i] += d[i];
    }
    Ok(block_norms(d, n))
}

fn zero(f: &mut DVector<f64>, k: &mut DMatrix<f64>, c: &mut DMatrix<f64>, n: usize) {
    f.rows_mut(0, n).fill(0.0);
    let ld = k.nrows();
    let ks = k.as_mut_slice();
    for j in 0..n {
        ks[j * ld..j * ld + n].fill(0.0);
    }
    let ld = c.nrows();
    let cs = c.as_mut_slice();
    for j in 0..n {
        cs[j * ld..j * ld + n].fill(0.0);
    }
}
