//! The beam element: kinematics, internal and inertial forces, levels, outputs.

use super::*;
use saltus_core::lie::{
    inv_tangent_coefficients, inv_tangent_derivative, inv_tangent_matrix, tangent_coefficients,
    tangent_derivative, tangent_matrix,
};

/// Two-node geometrically exact shear-deformable beam (module docs for the formulation).
///
/// Residual rows and Hessians follow the module table; units: forces \[N\], moments \[N m\]
/// (material, node frames). Energy: kinetic `½ vᵀ M v`, potential
/// `½ L (Γ·C_Γ Γ + K·C_K K) − ρ A L g·(x₁ + x₂)/2` \[J\]. Outputs (section frame, at the
/// midpoint, elastic + viscous): `force` `[N₁, N₂, N₃]` \[N\], `moment` `[M₁, M₂, M₃]` \[N m\],
/// `strain` `[Γ₁, Γ₂, Γ₃]`, `curvature` `[K₁, K₂, K₃]` \[1/m\].
#[derive(Clone, Debug, PartialEq)]
pub struct Beam {
    nodes: [NodeId; 2],
    length: f64,
    /// Section frame offsets `Q_i` (section frame `Λ_i = R_i Q_i`).
    offset: [UnitQuaternion<f64>; 2],
    pub(super) offset_mat: [Matrix3<f64>; 2],
    /// Both offsets are the identity (node frames = section frames, e.g. [`BeamBuilder`]
    /// nodes): the transformation to node variables is skipped.
    pub(super) aligned: bool,
    /// Constant material mass matrix over `[x₁, Θ₁, x₂, Θ₂]`.
    mass_matrix: Mat12,
    /// Its nonzero entries ([`Inertia::mass_entries`]).
    mass_entries: Vec<MassEntry>,
    strain0: Vector6<f64>,
    stiffness: Vector6<f64>,
    line_mass: f64,
    /// Lumped rotational inertia of each node in its material frame \[kg m²\].
    inertia: [Matrix3<f64>; 2],
    lumped_mass: bool,
    alpha: f64,
    beta: f64,
}

/// Strain kinematics at one configuration: the strains and the rotation quantities that
/// `B` is made of (section variables `[δx₁, δθ₁, δx₂, δθ₂]` with `δθ_i = Q_iᵀ δΘ_i`). The
/// products `B v` and `Bᵀ s` are evaluated from them directly ([`Strain::rate`],
/// [`Strain::force`]); [`Kin`] adds `B` itself, for the tangents.
pub(super) struct Strain {
    pub(super) inv_l: f64,
    pub(super) psi: Vector3<f64>,
    /// `Eᵀ = (Λ₁ᵀ Λ₂)ᵀ`.
    pub(super) e_t: Matrix3<f64>,
    /// `exp(ψ/2)ᵀ`.
    pub(super) h_t: Matrix3<f64>,
    pub(super) t_inv: Matrix3<f64>,
    /// `T(ψ/2)`.
    pub(super) t_half: Matrix3<f64>,
    pub(super) k_inv: [f64; 4],
    pub(super) k_half: [f64; 6],
    /// `Λ_mᵀ`.
    pub(super) lm_t: Matrix3<f64>,
    /// `γ = Λ_mᵀ (x₂ − x₁)`.
    pub(super) gamma: Vector3<f64>,
    /// `ε − ε₀`.
    pub(super) strain: Vector6<f64>,
}

/// [`Strain`] with the variation matrices (`Kin` dereferences to its `Strain`).
pub(super) struct Kin {
    pub(super) base: Strain,
    /// `δΦ = P_Φ δq`: material variation of `Λ₁ᵀΛ₂`.
    pub(super) p_phi: Mat3x12,
    /// `δψ = P_ψ δq`.
    pub(super) p_psi: Mat3x12,
    /// `δθ_m = P_m δq`: material variation of `Λ_m`.
    pub(super) p_m: Mat3x12,
    /// `δε = B δq`.
    pub(super) b: Mat6x12,
}

impl std::ops::Deref for Kin {
    type Target = Strain;
    fn deref(&self) -> &Strain {
        &self.base
    }
}

impl Strain {
    pub(super) fn new(beam: &Beam, nodes: &[NodeState]) -> Result<Self, ElementError> {
        let (n1, n2) = (&nodes[0], &nodes[1]);
        let finite = n1.x.iter().chain(n2.x.iter()).all(|v| v.is_finite())
            && n1
                .r
                .coords
                .iter()
                .chain(n2.r.coords.iter())
                .all(|v| v.is_finite());
        if !finite {
            return Err(ElementError::InvalidState(
                "beam: non-finite node position or rotation".into(),
            ));
        }
        let l1 = n1.r * beam.offset[0];
        let l2 = n2.r * beam.offset[1];
        let rel = l1.inverse() * l2;
        let psi = lie::log(&rel);
        let half_rot = lie::exp(&(psi * 0.5));
        let lm = l1 * half_rot;
        let e_t = rel.to_rotation_matrix().into_inner().transpose();
        let h_t = half_rot.to_rotation_matrix().into_inner().transpose();
        let phi = psi.norm();
        let k_inv = inv_tangent_coefficients(phi);
        let half = psi * 0.5;
        let k_half = tangent_coefficients(0.5 * phi);
        let t_inv = inv_tangent_matrix(&psi, &k_inv);
        let t_half = tangent_matrix(&half, &k_half);
        let lm_t = lm.to_rotation_matrix().into_inner().transpose();
        let d = n2.x - n1.x;
        let gamma = lm_t * d;
        let inv_l = 1.0 / beam.length;
        let mut strain = Vector6::zeros();
        strain.fixed_rows_mut::<3>(0).copy_from(&(gamma * inv_l));
        strain.fixed_rows_mut::<3>(3).copy_from(&(psi * inv_l));
        strain -= beam.strain0;
        Ok(Self {
            inv_l,
            psi,
            e_t,
            h_t,
            t_inv,
            t_half,
            k_inv,
            k_half,
            lm_t,
            gamma,
            strain,
        })
    }

    /// Strain rates `ε̇ = B v` of the section-variable velocities `v = [ẋ₁, ω₁, ẋ₂, ω₂]`:
    ///
    /// ```text
    /// ψ̇ = T⁻¹ (ω₂ − Eᵀ ω₁),  θ̇_m = ½ T_½ ψ̇ + exp(ψ/2)ᵀ ω₁,
    /// Γ̇ = (γ × θ̇_m + Λ_mᵀ (ẋ₂ − ẋ₁))/L,  K̇ = ψ̇/L
    /// ```
    pub(super) fn rate(&self, v: &Vec12) -> Vector6<f64> {
        let (x1, w1) = (v.fixed_rows::<3>(0), v.fixed_rows::<3>(3));
        let (x2, w2) = (v.fixed_rows::<3>(6), v.fixed_rows::<3>(9));
        let psi_dot = self.t_inv * (w2 - self.e_t * w1);
        let theta_m = self.t_half * psi_dot * 0.5 + self.h_t * w1;
        let gamma_dot = self.gamma.cross(&theta_m) + self.lm_t * (x2 - x1);
        let mut out = Vector6::zeros();
        out.fixed_rows_mut::<3>(0)
            .copy_from(&(gamma_dot * self.inv_l));
        out.fixed_rows_mut::<3>(3)
            .copy_from(&(psi_dot * self.inv_l));
        out
    }

    /// `Bᵀ s` for section forces `s = [n; m]` (the transpose of [`Strain::rate`]): with
    /// `a = n × γ` and `z = T⁻ᵀ (m + ½ T_½ᵀ a)`,
    ///
    /// ```text
    /// L Bᵀ s = [−Λ_m n;  exp(ψ/2) a − E z;  Λ_m n;  z]
    /// ```
    pub(super) fn force(&self, s: &Vector6<f64>) -> Vec12 {
        let n = s.fixed_rows::<3>(0).into_owned();
        let m = s.fixed_rows::<3>(3).into_owned();
        let a = n.cross(&self.gamma);
        let z = self.t_inv.transpose() * (m + self.t_half.transpose() * a * 0.5);
        let ln = self.lm_t.transpose() * n;
        let mut out = Vec12::zeros();
        out.fixed_rows_mut::<3>(0).copy_from(&(-ln));
        out.fixed_rows_mut::<3>(3)
            .copy_from(&(self.h_t.transpose() * a - self.e_t.transpose() * z));
        out.fixed_rows_mut::<3>(6).copy_from(&ln);
        out.fixed_rows_mut::<3>(9).copy_from(&z);
        out * self.inv_l
    }
}

impl Kin {
    pub(super) fn new(beam: &Beam, nodes: &[NodeState]) -> Result<Self, ElementError> {
        let base = Strain::new(beam, nodes)?;
        let (inv_l, e_t, h_t) = (base.inv_l, base.e_t, base.h_t);
        let (t_inv, t_half, lm_t, gamma) = (base.t_inv, base.t_half, base.lm_t, base.gamma);
        let mut p_phi = Mat3x12::zeros();
        p_phi.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-e_t));
        p_phi
            .fixed_view_mut::<3, 3>(0, 9)
            .copy_from(&Matrix3::identity());
        let p_psi = t_inv * p_phi;
        let mut p_m = t_half * p_psi * 0.5;
        {
            let mut blk = p_m.fixed_view_mut::<3, 3>(0, 3);
            blk += h_t;
        }
        let mut bg = hat(&gamma) * p_m;
        {
            let mut blk = bg.fixed_view_mut::<3, 3>(0, 0);
            blk -= lm_t;
        }
        {
            let mut blk = bg.fixed_view_mut::<3, 3>(0, 6);
            blk += lm_t;
        }
        let mut b = Mat6x12::zeros();
        b.fixed_view_mut::<3, 12>(0, 0).copy_from(&(bg * inv_l));
        b.fixed_view_mut::<3, 12>(3, 0).copy_from(&(p_psi * inv_l));
        Ok(Self {
            base,
            p_phi,
            p_psi,
            p_m,
            b,
        })
    }

    /// `∂(sᵀ B(q) a)/∂q` at fixed `s` and `a` (a row over the section variables): the second
    /// variation of the strains contracted with `s`, in the directions `a` and `δq`.
    pub(super) fn second(&self, s: &Vector6<f64>, a: &Vec12) -> Row12 {
        let n = s.fixed_rows::<3>(0).into_owned();
        let m = s.fixed_rows::<3>(3).into_owned();
        let a1 = a.fixed_rows::<3>(0).into_owned();
        let al1 = a.fixed_rows::<3>(3).into_owned();
        let a2 = a.fixed_rows::<3>(6).into_owned();
        let al2 = a.fixed_rows::<3>(9).into_owned();
        let eta1 = self.e_t * al1;
        let phi_a = al2 - eta1;
        let psi_a = self.t_inv * phi_a;
        let h1 = self.h_t * al1;
        let m_a = h1 + self.t_half * psi_a * 0.5;
        let u = n.cross(&self.gamma);
        let w = self.t_half.transpose() * u * 0.5 + m;
        let c_m = n.cross(&(self.lm_t * (a2 - a1)));
        let c_b = m_a.cross(&n);
        let half = self.psi * 0.5;
        let dt = tangent_derivative(&half, &psi_a, &self.k_half);
        let dinv = inv_tangent_derivative(&self.psi, &phi_a, &self.k_inv);
        let c_psi = self.t_half.transpose() * u.cross(&h1) * 0.5
            + dt.transpose() * u * 0.25
            + dinv.transpose() * w;
        let c_phi = eta1.cross(&(self.t_inv.transpose() * w));
        (c_m.transpose() * self.p_m
            + c_psi.transpose() * self.p_psi
            + c_phi.transpose() * self.p_phi)
            * self.inv_l
            + c_b.transpose() * self.b.fixed_view::<3, 12>(0, 0)
    }
}

impl Kin {
    /// All 12 directional second variations at once: row `i` is [`Kin::second`]`(s, e_i)`,
    /// i.e. the geometric part `∂(Bᵀ s)/∂q` of the section stiffness. Every quantity of
    /// `second` is linear in the direction `a`, so with `φ_a = P_Φ a`, `ψ_a = P_ψ a`,
    /// `m_a = P_m a`, `η = [0 Eᵀ 0 0] a`, `h = [0 Hᵀ 0 0] a` and the derivative matrices of the
    /// tangents contracted once (`D_T(x)ᵀ u = G_T x`, `D_T⁻¹(x)ᵀ w = G_I x`):
    ///
    /// ```text
    /// C_m = n̂ Λ_mᵀ [−I 0 I 0],   C_b = −n̂ P_m,   C_φ = −(T⁻ᵀ w)^ [0 Eᵀ 0 0],
    /// C_ψ = ½ T_½ᵀ û [0 Hᵀ 0 0] + ¼ G_T P_ψ + G_I P_Φ,
    /// K = (C_mᵀ P_m + C_ψᵀ P_ψ + C_φᵀ P_Φ)/L + C_bᵀ B_γ
    /// ```
    pub(super) fn second_all(&self, s: &Vector6<f64>) -> Mat12 {
        let n = s.fixed_rows::<3>(0).into_owned();
        let m = s.fixed_rows::<3>(3).into_owned();
        let u = n.cross(&self.gamma);
        let w = self.t_half.transpose() * u * 0.5 + m;
        let (n_hat, u_hat) = (hat(&n), hat(&u));
        let half = self.psi * 0.5;
        let mut g_t = Matrix3::zeros();
        let mut g_i = Matrix3::zeros();
        for k in 0..3 {
            let e = Vector3::ith(k, 1.0);
            g_t.set_column(
                k,
                &(tangent_derivative(&half, &e, &self.k_half).transpose() * u),
            );
            g_i.set_column(
                k,
                &(inv_tangent_derivative(&self.psi, &e, &self.k_inv).transpose() * w),
            );
        }
        let mut sel_e = Mat3x12::zeros();
        sel_e.fixed_view_mut::<3, 3>(0, 3).copy_from(&self.e_t);
        let mut sel_h = Mat3x12::zeros();
        sel_h.fixed_view_mut::<3, 3>(0, 3).copy_from(&self.h_t);
        let mut c_m = Mat3x12::zeros();
        let nl = n_hat * self.lm_t;
        c_m.fixed_view_mut::<3, 3>(0, 0).copy_from(&(-nl));
        c_m.fixed_view_mut::<3, 3>(0, 6).copy_from(&nl);
        let c_b = -(n_hat * self.p_m);
        let c_phi = -(hat(&(self.t_inv.transpose() * w)) * sel_e);
        let c_psi = self.t_half.transpose() * u_hat * sel_h * 0.5
            + g_t * self.p_psi * 0.25
            + g_i * self.p_phi;
        (c_m.transpose() * self.p_m
            + c_psi.transpose() * self.p_psi
            + c_phi.transpose() * self.p_phi)
            * self.inv_l
            + c_b.transpose() * self.b.fixed_view::<3, 12>(0, 0)
    }
}

/// Internal forces at one state, in node variables (before the rotation tangents `T`).
pub(super) struct Internal {
    /// `f_int = L Bᵀ s`.
    pub(super) r: Vec12,
    /// Section forces `s = C (ε + β ε̇)`.
    pub(super) section: Vector6<f64>,
    /// `ε − ε₀`.
    pub(super) strain: Vector6<f64>,
}

/// Tangents of the internal forces, in node variables (filled by [`Beam::internal`] as its
/// [`Want`] asks; the caller owns the storage, so a residual-only evaluation touches none).
#[derive(Default)]
pub(super) struct Tangents {
    /// `∂f_int/∂q` (material variations).
    pub(super) k: Mat12,
    /// `∂f_int/∂v`.
    pub(super) c: Mat12,
}

/// Which tangents [`Beam::internal`] computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Want {
    /// `∂f_int/∂q`.
    pub(super) k: bool,
    /// `∂f_int/∂v`.
    pub(super) c: bool,
}

impl Want {
    /// Residual and both tangents.
    #[cfg(test)]
    pub(super) const TANGENT: Want = Want { k: true, c: true };

    /// The tangents a stage reads (`PhysicsState::stiffness`, `PhysicsState::damping`).
    pub(super) fn stage(s: &PhysicsState<'_>) -> Want {
        Want {
            k: s.stiffness,
            c: s.damping,
        }
    }
}

fn node_velocity(nodes: &[NodeState]) -> Vec12 {
    let mut v = Vec12::zeros();
    for (i, n) in nodes.iter().take(2).enumerate() {
        v.fixed_rows_mut::<3>(6 * i).copy_from(&n.v);
        v.fixed_rows_mut::<3>(6 * i + 3).copy_from(&n.omega);
    }
    v
}

impl Beam {
    /// A beam between the frame nodes `a` and `b` of `nodes` (the model's node definitions,
    /// e.g. `model.nodes()`), stress-free in their initial states, with the section `spec`.
    pub fn new(
        nodes: &[NodeDef],
        a: NodeId,
        b: NodeId,
        spec: &BeamSpec,
    ) -> Result<Self, BuildError> {
        let section = spec.section("<beam>")?;
        let mut states = [NodeState::default(); 2];
        for (k, id) in [a, b].iter().enumerate() {
            let Some(def) = nodes.get(id.index()) else {
                return Err(BuildError::UnknownNode {
                    element: "<beam>".into(),
                    node: format!("#{}", id.0),
                });
            };
            if def.kind != NodeKind::Frame {
                return Err(BuildError::NodeKind {
                    element: "<beam>".into(),
                    node: def.name.clone(),
                    expected: NodeKind::Frame,
                });
            }
            states[k] = def.initial;
        }
        Self::from_section("<beam>", [a, b], &states, &section)
    }

    /// A beam on the nodes `ids` whose initial (stress-free) states are `initial`.
    pub fn from_section(
        element: &str,
        ids: [NodeId; 2],
        initial: &[NodeState; 2],
        section: &BeamSection,
    ) -> Result<Self, BuildError> {
        let d = initial[1].x - initial[0].x;
        let frame = section.frame(element, &d)?;
        let length = d.norm();
        let lambda0 =
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(frame));
        // Offsets within 1e-12 rad of the identity are snapped to it (the reference strains
        // below absorb the difference, so the element stays exactly stress-free).
        let offset = [0, 1].map(|i| {
            let q = initial[i].r.inverse() * lambda0;
            if q.angle() < 1e-12 {
                UnitQuaternion::identity()
            } else {
                q
            }
        });
        let aligned = offset.iter().all(|q| *q == UnitQuaternion::identity());
        let offset_mat = offset.map(|q| q.to_rotation_matrix().into_inner());
        let j_sec = Matrix3::from_diagonal(&section.line_inertia) * (0.5 * length);
        let inertia = offset_mat.map(|q| q * j_sec * q.transpose());
        let mut beam = Self {
            nodes: ids,
            length,
            offset,
            offset_mat,
            aligned,
            mass_matrix: Mat12::zeros(),
            mass_entries: Vec::new(),
            strain0: Vector6::zeros(),
            stiffness: section.stiffness,
            line_mass: section.line_mass,
            inertia,
            lumped_mass: section.lumped_mass,
            alpha: section.alpha,
            beta: section.beta,
        };
        let kin =
            Strain::new(&beam, initial).map_err(|e| invalid(element, "nodes", e.to_string()))?;
        beam.strain0 = kin.strain;
        beam.mass_matrix = beam.build_mass_matrix();
        beam.mass_entries = mass_entries_of(beam.mass_matrix.as_slice(), 12);
        Ok(beam)
    }

    /// Initial (reference) length `L` \[m\].
    pub fn length(&self) -> f64 {
        self.length
    }

    /// Rayleigh coefficients `(α [1/s], β \[s\])`.
    pub fn rayleigh(&self) -> (f64, f64) {
        (self.alpha, self.beta)
    }

    /// Strains `[Γ₁, Γ₂, Γ₃, K₁, K₂, K₃]` (`K` in 1/m) at the given local node states.
    pub fn strains(&self, nodes: &[NodeState]) -> Result<Vector6<f64>, ElementError> {
        Ok(Strain::new(self, nodes)?.strain)
    }

    /// Section forces `[N₁, N₂, N₃, M₁, M₂, M₃]` \[N, N m\] (section frame, elastic + viscous)
    /// at the given local node states.
    pub fn section_forces(&self, nodes: &[NodeState]) -> Result<Vector6<f64>, ElementError> {
        Ok(self.internal(nodes, true, None)?.section)
    }

    /// Constant material mass matrix `M` over `[x₁, Θ₁, x₂, Θ₂]`.
    fn build_mass_matrix(&self) -> Mat12 {
        let m = self.line_mass * self.length / 6.0;
        // Consistent ρAL/6 [2 1; 1 2], or lumped ρAL/2 per node (row sums).
        let (diag, off) = if self.lumped_mass {
            (3.0 * m, 0.0)
        } else {
            (2.0 * m, m)
        };
        let mut out = Mat12::zeros();
        for i in 0..3 {
            out[(i, i)] = diag;
            out[(i + 6, i + 6)] = diag;
            out[(i, i + 6)] = off;
            out[(i + 6, i)] = off;
        }
        out.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.inertia[0]);
        out.fixed_view_mut::<3, 3>(9, 9).copy_from(&self.inertia[1]);
        out
    }

    /// Consistent nodal weights `ρ A L g/2` (translational rows).
    pub(super) fn weight(&self, g: &Vector3<f64>) -> Vec12 {
        let w = g * (0.5 * self.line_mass * self.length);
        let mut f = Vec12::zeros();
        f.fixed_rows_mut::<3>(0).copy_from(&w);
        f.fixed_rows_mut::<3>(6).copy_from(&w);
        f
    }

    /// Section variables from node variables: `P v` with `P = diag(I, Q₁ᵀ, I, Q₂ᵀ)`.
    fn to_section(&self, v: &Vec12) -> Vec12 {
        let mut out = *v;
        if !self.aligned {
            for i in 0..2 {
                let o = 6 * i + 3;
                let w = self.offset_mat[i].transpose() * v.fixed_rows::<3>(o);
                out.fixed_rows_mut::<3>(o).copy_from(&w);
            }
        }
        out
    }

    /// Node-variable residual `Pᵀ r` of a section-variable residual `r`.
    fn residual_to_nodes(&self, r: &Vec12) -> Vec12 {
        let mut out = *r;
        if !self.aligned {
            for i in 0..2 {
                let o = 6 * i + 3;
                let w = self.offset_mat[i] * r.fixed_rows::<3>(o);
                out.fixed_rows_mut::<3>(o).copy_from(&w);
            }
        }
        out
    }

    /// `out = Pᵀ K P`: the node-variable matrix of a section-variable matrix `K` (3×3 blocks).
    fn matrix_to_nodes(&self, k: &Mat12, out: &mut Mat12) {
        out.copy_from(k);
        if self.aligned {
            return;
        }
        for bi in 0..4 {
            for bj in 0..4 {
                if bi % 2 == 0 && bj % 2 == 0 {
                    continue;
                }
                let mut blk: Matrix3<f64> = k.fixed_view::<3, 3>(3 * bi, 3 * bj).into_owned();
                if bi % 2 == 1 {
                    blk = self.offset_mat[bi / 2] * blk;
                }
                if bj % 2 == 1 {
                    blk *= self.offset_mat[bj / 2].transpose();
                }
                out.fixed_view_mut::<3, 3>(3 * bi, 3 * bj).copy_from(&blk);
            }
        }
    }

    /// Internal forces `f_int = L Bᵀ C (ε + β ε̇)` (with `damped`, else elastic only) in node
    /// variables and, with `tangents`, their exact tangents as its [`Want`] asks.
    pub(super) fn internal(
        &self,
        nodes: &[NodeState],
        damped: bool,
        tangents: Option<(Want, &mut Tangents)>,
    ) -> Result<Internal, ElementError> {
        let damped = damped && self.beta > 0.0;
        let v_sec = self.to_section(&node_velocity(nodes));
        // The residual from the strain quantities alone (`B v` and `Bᵀ s` as vector
        // products, the same arithmetic with or without tangents); `B` only for the tangents.
        let tangents = tangents.filter(|(w, _)| w.k || w.c);
        let kin = match tangents {
            Some(_) => Some(Kin::new(self, nodes)?),
            None => None,
        };
        let own;
        let st: &Strain = match &kin {
            Some(kin) => kin,
            None => {
                own = Strain::new(self, nodes)?;
                &own
            }
        };
        let edot = if damped {
            st.rate(&v_sec)
        } else {
            Vector6::zeros()
        };
        let section = self
            .stiffness
            .component_mul(&(st.strain + edot * self.beta));
        let l = self.length;
        let r_sec = st.force(&section) * l;
        let out = Internal {
            r: self.residual_to_nodes(&r_sec),
            section,
            strain: st.strain,
        };
        let (Some((want, t)), Some(kin)) = (tangents, kin) else {
            return Ok(out);
        };
        let mut cb = kin.b;
        for r in 0..6 {
            let mut row = cb.row_mut(r);
            row *= self.stiffness[r];
        }
        let btcb = bt_cb(&kin.b, &cb);
        if want.c {
            if damped {
                self.matrix_to_nodes(&(btcb * (l * self.beta)), &mut t.c);
            } else {
                t.c.fill(0.0);
            }
        }
        if !want.k {
            return Ok(out);
        }
        let mut k_sec = btcb * l + kin.second_all(&section) * l;
        if damped {
            let mut dv = Mat6x12::zeros();
            for r in 0..6 {
                dv.set_row(r, &kin.second(&Vector6::ith(r, 1.0), &v_sec));
            }
            k_sec += cb.transpose() * dv * (l * self.beta);
        }
        self.matrix_to_nodes(&k_sec, &mut t.k);
        Ok(out)
    }
}

/// `Bᵀ (C B)` for the strain matrix `b` and `cb = C B`: the product nalgebra forms (column by
/// column, each a sum over the strain rows in order), without the curvature rows' terms on the
/// translational columns, where `B` is zero (the curvatures follow the rotations alone,
/// `Kin::new`): 648 multiply-adds instead of 864, the same values.
pub(super) fn bt_cb(b: &Mat6x12, cb: &Mat6x12) -> Mat12 {
    let bt = b.transpose();
    let mut out = Mat12::zeros();
    for j in 0..12 {
        // Columns δx₁ (0–2) and δx₂ (6–8): the force strains Γ (rows 0–2) only.
        let rows = if (j / 3) % 2 == 0 { 3 } else { 6 };
        let mut col = bt.column(0) * cb[(0, j)];
        for r in 1..rows {
            col += bt.column(r) * cb[(r, j)];
        }
        out.set_column(j, &col);
    }
    out
}

/// Build a `beam` from a model-file entry (two frame nodes).
pub fn build_beam(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[Some(NodeKind::Frame), Some(NodeKind::Frame)])?;
    let spec: BeamSpec = parse_params(def)?;
    let section = spec.section(&def.name)?;
    let initial = [
        cx.nodes[ids[0].index()].initial,
        cx.nodes[ids[1].index()].initial,
    ];
    Ok(Box::new(Beam::from_section(
        &def.name,
        [ids[0], ids[1]],
        &initial,
        &section,
    )?))
}

pub(super) fn beam_example() -> serde_json::Value {
    serde_json::json!({
        "E": 2.0e6,
        "nu": 0.3,
        "A": 1.0e-2,
        "I2": 2.0e-5,
        "I3": 1.0e-5,
        "rho": 800.0,
        "alpha": 0.4,
        "beta": 0.02,
    })
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Geometrically exact shear-deformable 3-D beam (2 frame nodes, midpoint integration, Rayleigh damping)",
    build: build_beam,
    example: beam_example,
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: BeamSpec,
}

/// Inertia (module docs): the constant material mass matrix `M` (consistent translational,
/// lumped rotational) and the gyroscopic forces `−Ω_i × J_i Ω_i`.
impl Inertia for Beam {
    fn total_mass(&self) -> f64 {
        self.line_mass * self.length
    }

    fn mass_matrix(&self, _kinds: &[NodeKind], m: &mut DMatrixViewMut<'_, f64>) {
        m.zip_apply(&self.mass_matrix, |a, b| *a += b);
    }

    fn mass_entries(&self) -> Option<&[MassEntry]> {
        Some(&self.mass_entries)
    }

    fn inertial_force(
        &self,
        s: &PhysicsState<'_>,
        out: &mut ForceTerms<'_>,
    ) -> Result<(), ElementError> {
        for i in 0..2 {
            add_gyroscopic(&self.inertia[i], &s.nodes[i].omega, 6 * i, s.tangents, out);
        }
        Ok(())
    }

    fn inertial_force_dependence(&self) -> Dependence {
        Dependence::VELOCITY
    }
}

/// Applied forces (module docs): `f = −f_int(q, v) − α M v + ρ A L g/2` per node, with
/// `K = ∂f_int/∂q` and `C = ∂f_int/∂v + α M`.
impl Force for Beam {
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        let want = Want::stage(s);
        let mut t = None;
        let int = if want.k || want.c {
            let t = t.insert(Tangents::default());
            self.internal(s.nodes, true, Some((want, t)))?
        } else {
            self.internal(s.nodes, true, None)?
        };
        let mut f = self.weight(&s.gravity) - int.r;
        if self.alpha != 0.0 {
            // Rayleigh's mass-proportional damping (an undamped beam skips the product).
            f -= self.mass_matrix * node_velocity(s.nodes) * self.alpha;
        }
        for i in 0..12 {
            out.f[i] += f[i];
        }
        let Some(t) = t else {
            return Ok(());
        };
        if s.stiffness {
            out.stiffness.zip_apply(&t.k, |a, b| *a += b);
        }
        if s.damping {
            out.damping
                .zip_zip_apply(&t.c, &self.mass_matrix, |a, c, m| *a += c + m * self.alpha);
        }
        Ok(())
    }

    /// Undamped (`α = 0`, `β = 0`): the internal and gravity forces follow the configuration
    /// alone; Rayleigh damping adds the velocities.
    fn dependence(&self) -> Dependence {
        if self.alpha == 0.0 && self.beta <= 0.0 {
            Dependence::CONFIGURATION
        } else {
            Dependence::ALL
        }
    }

    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        // Elastic V = ½ L (ε − ε₀)·C (ε − ε₀) and gravity −ρ A L g·(x₁ + x₂)/2.
        let elastic = match Strain::new(self, s.nodes) {
            Ok(kin) => {
                0.5 * self.length * kin.strain.dot(&self.stiffness.component_mul(&kin.strain))
            }
            Err(_) => f64::NAN,
        };
        elastic - 0.5 * self.line_mass * self.length * s.gravity.dot(&(s.nodes[0].x + s.nodes[1].x))
    }
}

impl Element for Beam {
    /// No per-level history: the stage skips this element after a level converges.
    fn level_hook(&self, _level: saltus_core::Level) -> saltus_core::LevelHook {
        saltus_core::LevelHook::Skip
    }
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(NodeKind::Frame); 2]
    }

    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }

    fn as_inertia(&self) -> Option<&dyn Inertia> {
        Some(self)
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec {
                name: "force",
                len: 3,
                unit: "N",
                description: "section forces [N1 axial, N2, N3 shear] at the midpoint, section frame (elastic + viscous)",
            },
            OutputSpec {
                name: "moment",
                len: 3,
                unit: "N*m",
                description: "section moments [M1 torque, M2, M3 bending] at the midpoint, section frame (elastic + viscous)",
            },
            OutputSpec {
                name: "strain",
                len: 3,
                unit: "1",
                description: "[axial strain, shear strain 2, shear strain 3] at the midpoint",
            },
            OutputSpec {
                name: "curvature",
                len: 3,
                unit: "1/m",
                description: "[twist K1, bending curvature K2, bending curvature K3] at the midpoint",
            },
        ]
    }

    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        match self.internal(s.nodes, true, None) {
            Ok(int) => {
                out[..6].copy_from_slice(int.section.as_slice());
                out[6..12].copy_from_slice(int.strain.as_slice());
            }
            Err(_) => out[..12].fill(f64::NAN),
        }
    }
}
