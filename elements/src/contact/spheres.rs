//! Frictional contact between two rigid spheres (contact-elements.md §5) and of a sphere
//! inside the spherical cavity of another body (§6: clearance joints, ball–outer-race
//! contact); laws nsga.md §8.
//!
//! Both are one geometry. Sphere a (node a, radius `r_a`) touches body b (node b) on a sphere
//! of radius `r_b` centred on node b: *outside* it (`sphere_sphere_contact`) or *inside* it
//! (`sphere_in_sphere_contact`, `r_b` the cavity radius). With `d = ‖x_a − x_b‖` and the side
//! `s = +1` outside, `−1` inside:
//!
//! - contact normal (a's admissible direction) `n̂ = s (x_a − x_b)/d`;
//! - normal gap `g_N = s d − (ρ_a + ρ_b)`, `ρ_a = r_a`, `ρ_b = s r_b`: `d − r_a − r_b`
//!   outside (§5.1), `r_b − r_a − d` inside (§6);
//! - contact points `p_a = x_a − ρ_a n̂`, `p_b = x_b + ρ_b n̂` (`p_a − p_b = g_N n̂`);
//! - relative velocity of the contact points `ẋ_a − ẋ_b + n̂ × (ρ_a ω_a + ρ_b ω_b)`.
//!
//! Position level: the incremental tangential gap over the step in the frame `(n̂_n, t̂₁, t̂₂)`
//! frozen at `t_n` (§5.2, §6), with the sign of the sphere–plane contact (minus the slip of a
//! relative to b, so every contact reports its friction the same way):
//! `g_Tα = −t_α·(Δx_a − Δx_b) + c_α·(ρ_a ψ_a + ρ_b ψ_b)`, `c₁ = t₂`, `c₂ = −t₁`, with the
//! spatial rotation increments `ψ_K = vect log(R_K R_K,nᵀ)` (exact gradients and curvatures).
//! `H_N = ±[[P, −P], [−P, P]]` on the translations, `P = s (I − u uᵀ)/d`, `u = (x_a − x_b)/d`
//! (B.42); `H_T` only from the rotation increments (the frame is frozen).
//!
//! Velocity level (configuration `q_{n+1}` frozen): `ĝ̇_N = n̂·(v_a − v_b)` at `q_{n+1}`, the
//! tangential rows in the frame frozen at `t_n` (§5.4),
//! `ĝ̇_Tα = −t_α·(v_a − v_b) + c_α·(ρ_a ω_a + ρ_b ω_b)` (`ω = R Ω`), restitution
//! `+ e G(q_n) v_n` by the stage. With rolling or spinning resistance: the relative angular
//! velocity `ω_a − ω_b`, its tangential components `t_α·(ω_a − ω_b)` (rolling) and its normal
//! one `n̂·(ω_a − ω_b)` (spinning), as for the sphere–plane contact.
//!
//! Tangent frame (§5.1): `t̂₁ = e × n̂/‖e × n̂‖`, `t̂₂ = n̂ × t̂₁`, `e` the global axis least
//! aligned with `n̂_n`: a function of the step-start configuration only, so it can switch only
//! between steps.

use super::element::ContactElement;
use super::kinematics::SpatialIncrement;
use super::located;
use nalgebra::{Matrix3, UnitQuaternion, Vector2, Vector3};
use saltus_core::contact::law::{Curvature, SlidingGaps};
use saltus_core::contact::{ContactFrame, ContactJacobian, UnilateralContact};
use saltus_core::contact_force::ForceRecoverySpec;
use saltus_core::registry::{
    parse_params, require_non_negative, require_positive, BuildCx, ElementDef,
};
use saltus_core::{BuildError, Element, NodeId, NodeKind, NodeState};
use serde::{Deserialize, Serialize};

const SPHERE_SPHERE: &str = "sphere_sphere_contact";
const SPHERE_IN_SPHERE: &str = "sphere_in_sphere_contact";

/// Sphere a touches body b's sphere from outside or from inside (its cavity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Two convex spheres (`sphere_sphere_contact`).
    Outside,
    /// Sphere a inside the spherical cavity of body b (`sphere_in_sphere_contact`).
    Inside,
}

impl Side {
    fn sign(self) -> f64 {
        match self {
            Side::Outside => 1.0,
            Side::Inside => -1.0,
        }
    }
}

/// Geometry of two spheres on frame nodes a and b (module docs).
#[derive(Clone, Debug)]
pub struct TwoSphereGeometry {
    nodes: [NodeId; 2],
    kinds: [NodeKind; 2],
    side: Side,
    /// `r_a` \[m\].
    radius_a: f64,
    /// `r_b` \[m\]: sphere b's radius (outside) or the cavity radius (inside).
    radius_b: f64,
    /// The velocity stage carries rolling and spinning couples.
    couples: bool,
}

/// Contact of two spheres (the element).
pub type SphereContact = ContactElement<TwoSphereGeometry>;

/// Centre distance below which the normal is undefined \[m\]: concentric spheres (a journal
/// centred in its bearing, the start of a clearance joint).
const CONCENTRIC: f64 = 1e-15;

/// The unit contact normal from the centre difference, `n̂ = s (x_a − x_b)/d`, with `d`. For
/// concentric centres (`d ≤` [`CONCENTRIC`]) the normal is undefined and any unit vector will
/// do (`s x̂`): inside a cavity the contact is then open by the whole clearance, and the
/// position and velocity rows of an open contact do not depend on it.
fn normal(side: Side, xa: &Vector3<f64>, xb: &Vector3<f64>) -> (Vector3<f64>, f64) {
    let diff = xa - xb;
    let d = diff.norm();
    if d <= CONCENTRIC {
        return (side.sign() * Vector3::x(), d);
    }
    (side.sign() * diff / d, d)
}

/// `t̂₁ = e × n̂/‖e × n̂‖`, `t̂₂ = n̂ × t̂₁` with `e` the global axis least aligned with `n̂`.
fn tangents(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = n.abs();
    let e = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let t1 = e.cross(n).normalize();
    (t1, n.cross(&t1))
}

fn rotation(r: &UnitQuaternion<f64>) -> Matrix3<f64> {
    r.to_rotation_matrix().into_inner()
}

impl SphereContact {
    /// Two spheres of radii `radius_a`, `radius_b` \[m\] centred on frame nodes `a`, `b`;
    /// frictionless and plastic until set with the builders.
    pub fn spheres(a: NodeId, b: NodeId, radius_a: f64, radius_b: f64) -> Result<Self, BuildError> {
        Self::two_spheres(
            &format!("<{SPHERE_SPHERE}>"),
            Side::Outside,
            [a, b],
            radius_a,
            radius_b,
        )
    }

    /// Sphere of radius `radius` \[m\] on frame node `ball` inside the spherical cavity of
    /// radius `cavity_radius` \[m\] (> `radius`) centred on frame node `cavity`.
    pub fn inside(
        ball: NodeId,
        cavity: NodeId,
        radius: f64,
        cavity_radius: f64,
    ) -> Result<Self, BuildError> {
        Self::two_spheres(
            &format!("<{SPHERE_IN_SPHERE}>"),
            Side::Inside,
            [ball, cavity],
            radius,
            cavity_radius,
        )
    }

    fn two_spheres(
        element: &str,
        side: Side,
        nodes: [NodeId; 2],
        radius_a: f64,
        radius_b: f64,
    ) -> Result<Self, BuildError> {
        let bad = |parameter: &str, message: String| BuildError::InvalidParameter {
            element: element.to_string(),
            parameter: parameter.to_string(),
            message,
        };
        let (name_a, name_b) = match side {
            Side::Outside => ("radius_a", "radius_b"),
            Side::Inside => ("radius", "cavity_radius"),
        };
        for (name, r) in [(name_a, radius_a), (name_b, radius_b)] {
            if !(r.is_finite() && r > 0.0) {
                return Err(bad(name, format!("must be finite and > 0, got {r}")));
            }
        }
        if side == Side::Inside && radius_b <= radius_a {
            return Err(bad(
                "cavity_radius",
                format!("must exceed the ball radius {radius_a} m, got {radius_b}"),
            ));
        }
        if nodes[0] == nodes[1] {
            return Err(bad(
                "nodes",
                "the two spheres must be on different nodes".into(),
            ));
        }
        Ok(ContactElement::from_geometry(TwoSphereGeometry {
            nodes,
            kinds: [NodeKind::Frame; 2],
            side,
            radius_a,
            radius_b,
            couples: false,
        }))
    }
}

impl TwoSphereGeometry {
    /// Outside (two spheres) or inside (a cavity).
    pub fn side(&self) -> Side {
        self.side
    }

    /// `(r_a, r_b)` \[m\].
    pub fn radii(&self) -> (f64, f64) {
        (self.radius_a, self.radius_b)
    }

    /// `ρ_a = r_a`, `ρ_b = s r_b`: signed distances from the centres to the contact point
    /// along `−n̂` (a) and `n̂` (b).
    fn rho(&self) -> (f64, f64) {
        (self.radius_a, self.side.sign() * self.radius_b)
    }

    /// The frame frozen at the step start: `n̂_n` and `c₁ = t₂`, `c₂ = −t₁` with `t_α`.
    fn frozen_frame(&self, prev: &[NodeState]) -> ([Vector3<f64>; 2], [Vector3<f64>; 2]) {
        let (n, _) = normal(self.side, &prev[0].x, &prev[1].x);
        let (t1, t2) = tangents(&n);
        ([t1, t2], [t2, -t1])
    }
}

impl UnilateralContact for TwoSphereGeometry {
    fn type_name(&self) -> &'static str {
        match self.side {
            Side::Outside => SPHERE_SPHERE,
            Side::Inside => SPHERE_IN_SPHERE,
        }
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn node_kinds(&self) -> &[NodeKind] {
        &self.kinds
    }
    /// `r_a` when the couples are on: the scaling radius of the couple multipliers (the
    /// converged solution does not depend on it) and of the couple outputs `κ r_a χ`.
    fn couple_radius(&self) -> Option<f64> {
        self.couples.then_some(self.radius_a)
    }
    /// `[1/r_a, ±1/r_b]`: the cavity of a sphere-in-sphere contact is concave.
    fn surface_curvatures(&self) -> Option<[f64; 2]> {
        let b = match self.side {
            Side::Outside => 1.0 / self.radius_b,
            Side::Inside => -1.0 / self.radius_b,
        };
        Some([1.0 / self.radius_a, b])
    }
    /// Couples only with rolling or spinning resistance (3 more velocity multipliers).
    fn set_couples(&mut self, on: bool) {
        self.couples = on;
    }

    fn frame(&self, nodes: &[NodeState]) -> ContactFrame {
        let (n, d) = normal(self.side, &nodes[0].x, &nodes[1].x);
        let (t1, t2) = tangents(&n);
        let (rho_a, rho_b) = self.rho();
        ContactFrame {
            gap: self.side.sign() * d - rho_a - rho_b,
            normal: n,
            t1,
            t2,
            point_a: nodes[0].x - rho_a * n,
            point_b: nodes[1].x + rho_b * n,
        }
    }

    /// `g_N = s d − ρ_a − ρ_b`, `G_N = [n̂, 0, −n̂, 0]`, `H_N` on the translations;
    /// `g_Tα = −t_α·(Δx_a − Δx_b) + c_α·(ρ_a ψ_a + ρ_b ψ_b)` with exact rotation gradients and
    /// curvatures.
    fn position_gaps(
        &self,
        nodes: &[NodeState],
        prev: &[NodeState],
        g: &mut SlidingGaps,
        curv: Option<&mut Curvature>,
    ) {
        let (rho_a, rho_b) = self.rho();
        let (n, d) = normal(self.side, &nodes[0].x, &nodes[1].x);
        g.g_n = self.side.sign() * d - rho_a - rho_b;
        let (t, c) = self.frozen_frame(prev);
        let dx = (nodes[0].x - prev[0].x) - (nodes[1].x - prev[1].x);
        let inc = [
            SpatialIncrement::new(&nodes[0].r, &prev[0].r),
            SpatialIncrement::new(&nodes[1].r, &prev[1].r),
        ];
        let spin = rho_a * inc[0].psi + rho_b * inc[1].psi;
        g.g_t = Vector2::new(
            -t[0].dot(&dx) + c[0].dot(&spin),
            -t[1].dot(&dx) + c[1].dot(&spin),
        );
        for i in 0..3 {
            g.grad_n[i] = n[i];
            g.grad_n[6 + i] = -n[i];
            for a in 0..2 {
                g.grad_t[(a, i)] = -t[a][i];
                g.grad_t[(a, 6 + i)] = t[a][i];
            }
        }
        for a in 0..2 {
            let row_a = (rho_a * c[a]).transpose() * inc[0].grad;
            let row_b = (rho_b * c[a]).transpose() * inc[1].grad;
            for j in 0..3 {
                g.grad_t[(a, 3 + j)] = row_a[j];
                g.grad_t[(a, 9 + j)] = row_b[j];
            }
        }
        if let Some(curv) = curv {
            let u = self.side.sign() * n;
            // H_N = ∂n̂/∂x_a grows as 1/d; at concentric centres (an open cavity contact,
            // where it is never used) it is set to zero rather than infinity.
            let p = if d > CONCENTRIC {
                self.side.sign() * (Matrix3::identity() - u * u.transpose()) / d
            } else {
                Matrix3::zeros()
            };
            for i in 0..3 {
                for j in 0..3 {
                    curv.h_n[(i, j)] = p[(i, j)];
                    curv.h_n[(i, 6 + j)] = -p[(i, j)];
                    curv.h_n[(6 + i, j)] = -p[(i, j)];
                    curv.h_n[(6 + i, 6 + j)] = p[(i, j)];
                }
            }
            for a in 0..2 {
                let ha = inc[0].curvature(&(rho_a * c[a]));
                let hb = inc[1].curvature(&(rho_b * c[a]));
                for i in 0..3 {
                    for j in 0..3 {
                        curv.h_t[a][(3 + i, 3 + j)] = ha[(i, j)];
                        curv.h_t[a][(9 + i, 9 + j)] = hb[(i, j)];
                    }
                }
            }
        }
    }

    /// `G_N = [n̂ᵀ, 0, −n̂ᵀ, 0]` at `nodes`; `G_Tα = [−t_αᵀ, ρ_a c_αᵀ R_a, t_αᵀ, ρ_b c_αᵀ R_b]`,
    /// `W_Tα = [0, t_αᵀ R_a, 0, −t_αᵀ R_b]` in the frame of `prev`; `W_N = [0, n̂ᵀ R_a, 0, −n̂ᵀ R_b]`.
    fn jacobian(&self, nodes: &[NodeState], prev: &[NodeState], out: &mut ContactJacobian) {
        let (rho_a, rho_b) = self.rho();
        let (n, _) = normal(self.side, &nodes[0].x, &nodes[1].x);
        let (t, c) = self.frozen_frame(prev);
        let (ra, rb) = (rotation(&nodes[0].r), rotation(&nodes[1].r));
        for i in 0..3 {
            out.normal[i] = n[i];
            out.normal[6 + i] = -n[i];
            for a in 0..2 {
                out.tangential[(a, i)] = -t[a][i];
                out.tangential[(a, 6 + i)] = t[a][i];
            }
        }
        for a in 0..2 {
            let ga = (rho_a * c[a]).transpose() * ra;
            let gb = (rho_b * c[a]).transpose() * rb;
            let wa = t[a].transpose() * ra;
            let wb = t[a].transpose() * rb;
            for j in 0..3 {
                out.tangential[(a, 3 + j)] = ga[j];
                out.tangential[(a, 9 + j)] = gb[j];
                if self.couples {
                    out.rolling[(a, 3 + j)] = wa[j];
                    out.rolling[(a, 9 + j)] = -wb[j];
                }
            }
        }
        if self.couples {
            let (wa, wb) = (n.transpose() * ra, n.transpose() * rb);
            for j in 0..3 {
                out.spinning[3 + j] = wa[j];
                out.spinning[9 + j] = -wb[j];
            }
        }
    }
}

/// Model-file parameters of `sphere_sphere_contact` (nodes `[a, b]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SphereSphereSpec {
    /// Radius of sphere a \[m\] (> 0).
    pub radius_a: f64,
    /// Radius of sphere b \[m\] (> 0).
    pub radius_b: f64,
    /// Contact law (friction, restitution, resistance).
    #[serde(flatten)]
    pub law: LawSpec,
}

/// Model-file parameters of `sphere_in_sphere_contact` (nodes `[ball, cavity]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SphereInSphereSpec {
    /// Ball radius \[m\] (> 0).
    pub radius: f64,
    /// Cavity radius \[m\] (> `radius`).
    pub cavity_radius: f64,
    /// Contact law (friction, restitution, resistance).
    #[serde(flatten)]
    pub law: LawSpec,
}

/// Model-file contact-law parameters of the sphere contacts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LawSpec {
    /// Coulomb friction coefficient `μ` \[-\] (≥ 0, default 0).
    #[serde(default)]
    pub friction: f64,
    /// Normal restitution `e_N ∈ [0, 1]` \[-\] (default 0).
    #[serde(default)]
    pub restitution: f64,
    /// Tangential restitution `e_T ∈ [−1, 1]` \[-\] (default 0).
    #[serde(default)]
    pub tangential_restitution: f64,
    /// Rolling resistance length `ρ` \[m\] (≥ 0, default 0).
    #[serde(default)]
    pub rolling_resistance: f64,
    /// Spinning resistance length `γ_s` \[m\] (≥ 0, default 0).
    #[serde(default)]
    pub spinning_resistance: f64,
    /// Friction falling with the sliding speed `v` \[-\]: `μ(v) = friction + friction_decay ·
    /// e^{−friction_decay_rate · v}` (≥ 0, default 0: constant μ; see
    /// `saltus_core::contact::FrictionDecay`).
    #[serde(default)]
    pub friction_decay: f64,
    /// Decay rate of `friction_decay` \[s/m\] (≥ 0, default 0).
    #[serde(default)]
    pub friction_decay_rate: f64,
    /// Contact forces recovered while the model runs (`{ stiffness = K }` or
    /// `{ young = E, poisson = ν }`, optional `damping`, `method`, `exponent`, `young_b`,
    /// `poisson_b`; see `saltus_core::contact_force::ForceRecoverySpec`).
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub force_recovery: Option<ForceRecoverySpec>,
}

impl LawSpec {
    /// Check the ranges; errors name the element and the parameter.
    pub fn validate(&self, def: &ElementDef) -> Result<(), BuildError> {
        require_non_negative(def, "friction", self.friction)?;
        require_non_negative(def, "rolling_resistance", self.rolling_resistance)?;
        require_non_negative(def, "spinning_resistance", self.spinning_resistance)?;
        require_non_negative(def, "friction_decay", self.friction_decay)?;
        require_non_negative(def, "friction_decay_rate", self.friction_decay_rate)?;
        let range = |parameter: &str, v: f64, lo: f64| {
            if (lo..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(BuildError::InvalidParameter {
                    element: def.name.clone(),
                    parameter: parameter.into(),
                    message: format!("must be in [{lo}, 1], got {v}"),
                })
            }
        };
        range("restitution", self.restitution, 0.0)?;
        range("tangential_restitution", self.tangential_restitution, -1.0)
    }

    /// Apply the law to a sphere contact (errors name `force_recovery` and the element `def`).
    pub fn apply(&self, def: &ElementDef, c: SphereContact) -> Result<SphereContact, BuildError> {
        let c = c
            .friction(self.friction)
            .friction_decay(self.friction_decay, self.friction_decay_rate)
            .restitution(self.restitution, self.tangential_restitution)
            .resistance(self.rolling_resistance, self.spinning_resistance);
        match &self.force_recovery {
            Some(spec) => c.force_recovery(spec).map_err(|e| located(def, e)),
            None => Ok(c),
        }
    }
}

fn build_outside(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[Some(NodeKind::Frame), Some(NodeKind::Frame)])?;
    let spec: SphereSphereSpec = parse_params(def)?;
    require_positive(def, "radius_a", spec.radius_a)?;
    require_positive(def, "radius_b", spec.radius_b)?;
    spec.law.validate(def)?;
    let c = SphereContact::spheres(ids[0], ids[1], spec.radius_a, spec.radius_b)
        .map_err(|e| located(def, e))?;
    Ok(Box::new(spec.law.apply(def, c)?))
}

fn build_inside(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[Some(NodeKind::Frame), Some(NodeKind::Frame)])?;
    let spec: SphereInSphereSpec = parse_params(def)?;
    require_positive(def, "radius", spec.radius)?;
    require_positive(def, "cavity_radius", spec.cavity_radius)?;
    spec.law.validate(def)?;
    let c = SphereContact::inside(ids[0], ids[1], spec.radius, spec.cavity_radius)
        .map_err(|e| located(def, e))?;
    Ok(Box::new(spec.law.apply(def, c)?))
}

saltus_core::register_element! {
    type_name: SPHERE_SPHERE,
    summary: "Two spheres (frame nodes a, b): unilateral, Coulomb friction, restitution, rolling and spinning resistance",
    build: build_outside,
    example: || serde_json::json!({
        "radius_a": 0.05, "radius_b": 0.05, "friction": 0.2, "restitution": 0.9,
        "tangential_restitution": 0.0, "rolling_resistance": 0.0, "spinning_resistance": 0.0
    }),
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: SphereSphereSpec,
}

saltus_core::register_element! {
    type_name: SPHERE_IN_SPHERE,
    summary: "Sphere (frame node ball) inside the spherical cavity of another body (frame node cavity): clearance joints, ball on outer race",
    build: build_inside,
    example: || serde_json::json!({
        "radius": 0.01, "cavity_radius": 0.0101, "friction": 0.1, "restitution": 0.5
    }),
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: SphereInSphereSpec,
}

#[cfg(test)]
mod tests {
    use super::*;
    use saltus_core::constraint::Layout;
    use saltus_core::fd::{stage_contexts, Rng};
    use saltus_core::stage::participates;
    use saltus_core::Level;

    /// Radii for O(1) random centres (|x_a − x_b| ≲ 3): gaps of either sign and O(1).
    fn outside() -> SphereContact {
        SphereContact::spheres(NodeId(0), NodeId(1), 0.4, 0.7)
            .unwrap()
            .friction(0.4)
            .restitution(0.5, 0.2)
    }

    fn inside() -> SphereContact {
        SphereContact::inside(NodeId(0), NodeId(1), 0.3, 1.6)
            .unwrap()
            .friction(0.3)
            .restitution(0.4, -0.1)
    }

    #[test]
    fn contact_stages_and_multipliers() {
        let with_couples = outside().resistance(0.01, 0.02);
        for (e, nv) in [(outside(), 3), (inside(), 3), (with_couples, 6)] {
            for (stage, cx) in stage_contexts() {
                let m = match cx.level {
                    Level::Position => 3,
                    Level::Velocity => nv,
                    _ => 0,
                };
                assert_eq!(e.n_mult(cx.level), m, "{stage}");
                assert_eq!(participates(&e, cx.level), m > 0, "{stage}");
            }
        }
    }

    #[test]
    fn hessians_match_finite_differences_for_every_status() {
        let couples = outside().resistance(0.05, 0.03);
        for base in [outside(), inside(), couples] {
            super::super::fd_support::check_every_status(&base, 300);
        }
    }

    #[test]
    fn frame_gap_and_contact_points() {
        let q = UnitQuaternion::identity();
        let a = NodeState::at(Vector3::new(1.0, 2.0, 3.0), q);
        let b = NodeState::at(Vector3::new(1.0, 2.0, 4.5), q);
        // Outside: d = 1.5, r_a + r_b = 1.1 → g_N = 0.4, n̂ from b to a (−z).
        let f = outside().geometry().frame(&[a, b]);
        assert!((f.gap - 0.4).abs() < 1e-15);
        assert!((f.normal - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-15);
        assert!((f.point_a - Vector3::new(1.0, 2.0, 3.4)).norm() < 1e-15);
        assert!((f.point_a - f.point_b - f.gap * f.normal).norm() < 1e-15);
        // Inside: g_N = 1.6 − 0.3 − 1.5 = −0.2 (the ball pierces the cavity wall); n̂ = +z,
        // pointing from the wall back into the cavity; contact point on the wall at x_b − 1.6 z.
        let f = inside().geometry().frame(&[a, b]);
        assert!((f.gap + 0.2).abs() < 1e-15);
        assert!((f.normal - Vector3::z()).norm() < 1e-15);
        assert!((f.point_b - Vector3::new(1.0, 2.0, 4.5 - 1.6)).norm() < 1e-15);
        assert!((f.point_a - f.point_b - f.gap * f.normal).norm() < 1e-14);
        // The tangents complete a right-handed orthonormal frame.
        for e in [outside(), inside()] {
            let f = e.geometry().frame(&[a, b]);
            assert!((f.t1.cross(&f.t2) - f.normal).norm() < 1e-15);
            assert!(f.t1.dot(&f.normal).abs() < 1e-15);
        }
    }

    /// `−G_T v` is the tangential velocity of a's contact point relative to b's, and `G_N v`
    /// the rate of the gap, for random states (frame of the same state).
    #[test]
    fn velocity_rows_are_the_contact_point_velocities() {
        let mut rng = Rng::new(5);
        for e in [outside(), inside()] {
            for _ in 0..5 {
                let mut s = [
                    NodeState::at(rng.vec3(1.0), rng.rotation()),
                    NodeState::at(rng.vec3(1.0), rng.rotation()),
                ];
                for n in s.iter_mut() {
                    n.v = rng.vec3(1.0);
                    n.omega = rng.vec3(1.0);
                }
                let f = e.geometry().frame(&s);
                let (rho_a, rho_b) = e.geometry().rho();
                let (wa, wb) = (s[0].r * s[0].omega, s[1].r * s[1].omega);
                let rel = s[0].v - s[1].v + f.normal.cross(&(rho_a * wa + rho_b * wb));
                let mut j = ContactJacobian::zeros();
                e.geometry().jacobian(&s, &s, &mut j);
                let layout = Layout::new(&[NodeKind::Frame, NodeKind::Frame]);
                let v = layout.velocity(&s);
                let slip = -(j.tangential * v);
                assert!((slip[0] - f.t1.dot(&rel)).abs() < 1e-13);
                assert!((slip[1] - f.t2.dot(&rel)).abs() < 1e-13);
                // ġ_N by a finite difference of the gap along the motion.
                let dt = 1e-7;
                let moved = s.map(|n| {
                    let mut m = n;
                    m.x += dt * n.v;
                    m
                });
                let rate = (e.geometry().frame(&moved).gap - f.gap) / dt;
                // Forward difference: O(dt |v|²/d) ≈ 1e-7 truncation.
                assert!((rate - j.normal.dot(&v)).abs() < 1e-6);
            }
        }
    }

    /// Two spheres rolling on each other without slip over a step (a turning about the
    /// common normal-free axis): the incremental tangential gap vanishes to second order in
    /// the step (the frame is frozen at t_n).
    #[test]
    fn rigid_motion_of_the_pair_gives_no_slip() {
        let e = outside();
        let q = UnitQuaternion::identity();
        let prev = [
            NodeState::at(Vector3::new(0.0, 0.0, 1.1), q),
            NodeState::at(Vector3::zeros(), q),
        ];
        // The pair turns rigidly about the x axis through b's centre by a small angle: the
        // contact points move together, so there is no slip, only O(θ²) from the frozen frame.
        for theta in [1e-3, 1e-2] {
            let rot = saltus_core::lie::exp(&Vector3::new(theta, 0.0, 0.0));
            let nodes = [
                NodeState::at(rot * prev[0].x, rot),
                NodeState::at(Vector3::zeros(), rot),
            ];
            let mut g = SlidingGaps::zeros(12);
            e.geometry().position_gaps(&nodes, &prev, &mut g, None);
            assert!(g.g_n.abs() < 1e-15);
            assert!(
                g.g_t.norm() < 2.0 * theta * theta,
                "{theta}: {}",
                g.g_t.norm()
            );
        }
    }

    /// A journal centred in its bearing (the start of a clearance joint): finite rows, the
    /// contact open by the whole clearance.
    #[test]
    fn concentric_spheres_give_finite_rows() {
        let e = inside();
        let q = UnitQuaternion::identity();
        let s = [
            NodeState::at(Vector3::new(0.3, 0.2, 0.1), q),
            NodeState::at(Vector3::new(0.3, 0.2, 0.1), q),
        ];
        let mut g = SlidingGaps::zeros(12);
        let mut curv = Curvature::zeros();
        e.geometry().position_gaps(&s, &s, &mut g, Some(&mut curv));
        assert!((g.g_n - (1.6 - 0.3)).abs() < 1e-15);
        assert!(g
            .grad_n
            .iter()
            .chain(g.grad_t.iter())
            .all(|v| v.is_finite()));
        assert!(curv.h_n.iter().all(|v| v.is_finite()));
        let mut j = ContactJacobian::zeros();
        e.geometry().jacobian(&s, &s, &mut j);
        assert!(j
            .normal
            .iter()
            .chain(j.tangential.iter())
            .all(|v| v.is_finite()));
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(SphereContact::spheres(NodeId(0), NodeId(1), 0.0, 1.0).is_err());
        assert!(SphereContact::spheres(NodeId(0), NodeId(0), 1.0, 1.0).is_err());
        let e = SphereContact::inside(NodeId(0), NodeId(1), 0.5, 0.5).unwrap_err();
        assert!(e.to_string().contains("cavity_radius"), "{e}");
    }
}
