//! Physics interfaces: what an element *is*, independent of any time-stepping scheme.
//!
//! An element states its physics through one or more of these traits and exposes them with
//! [`crate::Element::as_force`] / [`crate::Element::as_inertia`]. The stage assembly
//! ([`crate::stage`]) turns them into every stage's residual and Hessian, applying the stage
//! factors and the rotation tangent `T` in one place; an element never sees them.
//!
//! Conventions shared by all interfaces (`nsga.md` §11, §12):
//! * Local unknown order: the element's nodes in order, `[δx(3), δΘ(3)]` per frame node and
//!   `[δx(3)]` per point node ([`PhysicsState::offset`]).
//! * Generalized forces are `[f_x ; m]` per frame node: the force `f_x` \[N\] in the inertial frame
//!   and the moment `m` \[N m\] in the node's **material** frame (`m = Rᵀ m_spatial`).
//! * Configuration derivatives are taken with respect to material variations: `δx`, and `δΘ`
//!   with `δR = R hat(δΘ)`. Velocity derivatives are with respect to `[ẋ ; Ω]`, `Ω` material.

use crate::element::ElementError;
use crate::node::{NodeKind, NodeState};
use nalgebra::{DMatrixViewMut, DVectorViewMut, Matrix3, Vector3};

/// The state a force or an inertia is evaluated at.
#[derive(Clone, Copy, Debug)]
pub struct PhysicsState<'a> {
    /// Node configurations `q` and velocities `v` (element-local order). Zero velocities in a
    /// static solve.
    pub nodes: &'a [NodeState],
    /// Node kinds (element-local order).
    pub kinds: &'a [NodeKind],
    /// Time `t` \[s\] (in a static solve: the load factor, as for raw elements).
    pub t: f64,
    /// Factor on external loads: 1 in dynamics, the load step `λ ∈ (0, 1]` in a static solve.
    pub load_factor: f64,
    /// Whether this is a static (load-stepped) solve: loads are at `load_factor` times their
    /// final value, time ramps do not apply.
    pub statics: bool,
    /// Gravity acceleration \[m/s²\] already multiplied by `load_factor`.
    pub gravity: Vector3<f64>,
    /// Whether any tangent is needed (`stiffness || damping`); when `false` an element may
    /// skip them (residual-only evaluation: line search, convergence checks, reference states).
    pub tangents: bool,
    /// Whether the stiffness `K` is read (the stage moves the configuration: `∂q/∂u ≠ 0`).
    pub stiffness: bool,
    /// Whether the damping `C` is read (the stage moves the velocities: `∂v/∂u ≠ 0`).
    pub damping: bool,
}

impl PhysicsState<'_> {
    /// First local unknown of node `i`.
    #[inline]
    pub fn offset(&self, i: usize) -> usize {
        self.kinds[..i].iter().map(|k| k.ndof()).sum()
    }

    /// Number of local node unknowns.
    #[inline]
    pub fn n(&self) -> usize {
        self.kinds.iter().map(|k| k.ndof()).sum()
    }

    /// Whether node `i` is a frame node (has rotational unknowns).
    #[inline]
    pub fn is_frame(&self, i: usize) -> bool {
        self.kinds[i] == NodeKind::Frame
    }

    /// Position `x` \[m\] of node `i`.
    #[inline]
    pub fn x(&self, i: usize) -> Vector3<f64> {
        self.nodes[i].x
    }

    /// Translational velocity `ẋ` \[m/s\] of node `i`.
    #[inline]
    pub fn v(&self, i: usize) -> Vector3<f64> {
        self.nodes[i].v
    }

    /// Rotation matrix `R` (body → inertial) of node `i`.
    #[inline]
    pub fn rotation(&self, i: usize) -> Matrix3<f64> {
        self.nodes[i].r.to_rotation_matrix().into_inner()
    }
}

/// Output buffers of a force evaluation (pre-zeroed, local unknown order, `n × n` tangents).
pub struct ForceTerms<'a> {
    /// Applied generalized force `f(q, v, t)`: forces \[N\], material moments \[N m\].
    pub f: DVectorViewMut<'a, f64>,
    /// Stiffness `K = −∂f/∂q` (material variations, before any rotation tangent).
    pub stiffness: DMatrixViewMut<'a, f64>,
    /// Damping `C = −∂f/∂v`.
    pub damping: DMatrixViewMut<'a, f64>,
}

impl ForceTerms<'_> {
    /// Add the 3-vector `value` to the force rows starting at local unknown `row`.
    #[inline]
    pub fn add_force(&mut self, row: usize, value: &Vector3<f64>) {
        for k in 0..3 {
            self.f[row + k] += value[k];
        }
    }

    /// Add the 3×3 block `value` to the stiffness at local unknowns `(row, col)`.
    #[inline]
    pub fn add_stiffness(&mut self, row: usize, col: usize, value: &Matrix3<f64>) {
        add_block(&mut self.stiffness, row, col, value);
    }

    /// Add the 3×3 block `value` to the damping at local unknowns `(row, col)`.
    #[inline]
    pub fn add_damping(&mut self, row: usize, col: usize, value: &Matrix3<f64>) {
        add_block(&mut self.damping, row, col, value);
    }
}

#[inline]
fn add_block(m: &mut DMatrixViewMut<'_, f64>, row: usize, col: usize, value: &Matrix3<f64>) {
    for j in 0..3 {
        for i in 0..3 {
            m[(row + i, col + j)] += value[(i, j)];
        }
    }
}

/// What a force depends on besides time and load factor. The stage assembly skips terms that
/// are exactly zero: the tangent a force does not have, and the difference `f − f_base` of a
/// force that cannot have changed. The finite-difference checks verify the declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependence {
    /// `f` depends on the configuration `q` (has a stiffness).
    pub configuration: bool,
    /// `f` depends on the velocities `v` (has a damping).
    pub velocity: bool,
}

impl Dependence {
    /// Depends on `q` and `v` (the default).
    pub const ALL: Dependence = Dependence {
        configuration: true,
        velocity: true,
    };
    /// Constant in `q` and `v` (e.g. gravity, a fixed-direction load).
    pub const NONE: Dependence = Dependence {
        configuration: false,
        velocity: false,
    };
    /// Depends on `q` only (e.g. an elastic spring, a follower load).
    pub const CONFIGURATION: Dependence = Dependence {
        configuration: true,
        velocity: false,
    };
    /// Depends on `v` only (e.g. a linear damper on absolute velocity, a gyroscopic moment).
    pub const VELOCITY: Dependence = Dependence {
        configuration: false,
        velocity: true,
    };
}

/// An applied force `f(q, v, t)` on the element's nodes: loads, springs, dampers, internal
/// elastic forces of flexible members, gravity (`nsga.md` §11.2, force element).
///
/// The element reports `f`, its stiffness `K = −∂f/∂q` and damping `C = −∂f/∂v`; the stage
/// assembly forms the residual `−w (f − f_base)` and Hessian `w (∂q/∂u K T + ∂v/∂u C)` of each
/// stage. External loads scale with [`PhysicsState::load_factor`]; gravity arrives already
/// scaled.
pub trait Force: Send + Sync {
    /// Add `f`, and (when `s.tangents`) `K` and `C`, into `out`.
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError>;

    /// What `f` depends on (default: configuration and velocity).
    fn dependence(&self) -> Dependence {
        Dependence::ALL
    }

    /// Potential energy `V(q, t)` \[J\] of the conservative part of `f` (elastic energy, the
    /// potential of gravity and of constant loads: `f_cons = −∂V/∂q`), for the energy outputs.
    /// Default: 0 (dissipative or non-conservative forces).
    fn potential_energy(&self, _s: &PhysicsState<'_>) -> f64 {
        0.0
    }
}

/// Inertia of the element's nodes (`contact-elements.md` §2.1, `nsga.md` §11.2): a
/// configuration-independent **material** mass matrix `M` and the inertial (fictitious) force
/// `f_in(q, v)` — e.g. the gyroscopic moment `−Ω × JΩ` — such that the equations of motion read
/// `M v̇ = f_in + f`.
///
/// Material (Géradin–Cardona) form: `M` constant makes `∂(M U)/∂q = 0` and `M(q) − M(q̃) = 0`
/// in the correction stages. Configuration-dependent inertia belongs in `f_in`.
pub trait Inertia: Send + Sync {
    /// Total mass \[kg\] (characteristic mass of the multiplier scaling, `nsga.md` §10).
    fn total_mass(&self) -> f64;

    /// Add the constant material mass matrix `M` (`n × n`, local unknown order) into `m`.
    fn mass_matrix(&self, kinds: &[NodeKind], m: &mut DMatrixViewMut<'_, f64>);

    /// The nonzero entries of [`Inertia::mass_matrix`] in column-major order
    /// ([`mass_entries_of`]), if the element keeps them (a beam's 30 of 144): the stage then
    /// forms `M a` and `∂a/∂u M` from them instead of the dense `M`, with the same result to
    /// the bit for finite accelerations (the dense products add the zeros). Must agree with
    /// `mass_matrix` entry for entry, for the element's node kinds (the entries take none).
    /// Default: `None` (dense `M`, or [`Inertia::node_inertia`]).
    fn mass_entries(&self) -> Option<&[MassEntry]> {
        None
    }

    /// The inertia as one [`NodeInertia`] per node, if `M` is block diagonal that way (rigid
    /// bodies, point masses, lumped masses): the stage then works on 3×3 blocks instead of the
    /// dense `M`. Must agree with [`Inertia::mass_matrix`] (checked by the FD tests through
    /// both paths). Default: `None` (dense `M`).
    fn node_inertia(&self) -> Option<&[NodeInertia]> {
        None
    }

    /// Add the inertial force `f_in(q, v)` with its tangents `−∂f_in/∂q`, `−∂f_in/∂v` (e.g.
    /// `−Ω × JΩ` and `hat(Ω)J − hat(JΩ)`). Default: none (point masses).
    fn inertial_force(
        &self,
        _s: &PhysicsState<'_>,
        _out: &mut ForceTerms<'_>,
    ) -> Result<(), ElementError> {
        Ok(())
    }

    /// What the inertial force depends on (default: nothing, i.e. no inertial force).
    fn inertial_force_dependence(&self) -> Dependence {
        Dependence::NONE
    }

    /// Kinetic energy `½ vᵀ M v` \[J\] with `v = [ẋ; Ω]` per node (material `Ω`), for the energy
    /// outputs. The default evaluates it from [`Inertia::node_inertia`] or, without it, from
    /// [`Inertia::mass_matrix`] (a dense matrix: outputs only, never inside a step).
    fn kinetic_energy(&self, s: &PhysicsState<'_>) -> f64 {
        if let Some(blocks) = self.node_inertia() {
            return s
                .nodes
                .iter()
                .zip(s.kinds)
                .zip(blocks)
                .map(|((n, k), b)| {
                    let rot = if *k == NodeKind::Frame {
                        n.omega.dot(&(b.inertia * n.omega))
                    } else {
                        0.0
                    };
                    0.5 * (b.mass * n.v.norm_squared() + rot)
                })
                .sum();
        }
        let n = s.n();
        let mut m = nalgebra::DMatrix::zeros(n, n);
        self.mass_matrix(s.kinds, &mut m.as_view_mut());
        let mut v = nalgebra::DVector::zeros(n);
        for (i, node) in s.nodes.iter().enumerate() {
            let o = s.offset(i);
            v.fixed_rows_mut::<3>(o).copy_from(&node.v);
            if s.is_frame(i) {
                v.fixed_rows_mut::<3>(o + 3).copy_from(&node.omega);
            }
        }
        0.5 * v.dot(&(m * &v))
    }
}

/// One nonzero entry of a constant mass matrix (local unknown order): `M[row, col] = value`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassEntry {
    /// Row (local unknown).
    pub row: usize,
    /// Column (local unknown).
    pub col: usize,
    /// `M[row, col]` \[kg or kg m²\].
    pub value: f64,
}

/// The nonzero entries of the column-major `n × n` matrix `m`, column by column
/// ([`Inertia::mass_entries`]).
pub fn mass_entries_of(m: &[f64], n: usize) -> Vec<MassEntry> {
    assert_eq!(m.len(), n * n, "mass_entries_of: not an n × n matrix");
    m.chunks_exact(n)
        .enumerate()
        .flat_map(|(col, c)| {
            c.iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(move |(row, &value)| MassEntry { row, col, value })
        })
        .collect()
}

/// Inertia carried by one node: translational mass `m` \[kg\] (`m I` on `δx`) and, for a frame
/// node, the material inertia tensor `J` \[kg m²\] on `δΘ`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeInertia {
    /// Mass `m` \[kg\].
    pub mass: f64,
    /// Material inertia tensor `J` \[kg m²\] (zero for point nodes).
    pub inertia: Matrix3<f64>,
}

/// Rigid-body inertia on one frame node at its centre of mass: `M = diag(m I, J)` and the
/// gyroscopic moment `−Ω × JΩ` (`m` \[kg\], `J` \[kg m²\] material).
pub fn rigid_mass_matrix(mass: f64, j: &Matrix3<f64>, row: usize, m: &mut DMatrixViewMut<'_, f64>) {
    add_block(m, row, row, &(Matrix3::identity() * mass));
    add_block(m, row + 3, row + 3, j);
}

/// Add the gyroscopic moment `−Ω × JΩ` of the frame node with local offset `row`, and its
/// velocity tangent `∂(Ω × JΩ)/∂Ω = hat(Ω)J − hat(JΩ)`, into `out` (configuration tangent zero).
pub fn add_gyroscopic(
    j: &Matrix3<f64>,
    omega: &Vector3<f64>,
    row: usize,
    tangents: bool,
    out: &mut ForceTerms<'_>,
) {
    let jw = j * omega;
    out.add_force(row + 3, &(-omega.cross(&jw)));
    if tangents {
        let c = crate::lie::hat(omega) * j - crate::lie::hat(&jw);
        out.add_damping(row + 3, row + 3, &c);
    }
}
