//! Frictional contact of a rigid sphere (frame node) or a point (point node) with a fixed
//! plane (contact-elements.md §4; laws nsga.md §8).
//!
//! Plane: point `X_P` \[m\], unit normal `N`, tangents `T₁, T₂` with `T₁ × T₂ = N`. Sphere of
//! radius `r` \[m\] centred on node A (position `x`, rotation `R`); a point node is `r = 0`
//! without rotation.
//!
//! Position level (unknowns `U`, multipliers `ν_N, ν_T`): `g_N = N·(x − X_P) − r`, incremental
//! tangential gap `g_Tα = c_α·ψ_s − T_α·(x − x_n)` with `c₁ = r T₂`, `c₂ = −r T₁` and the spatial
//! rotation increment `ψ_s = vect log(R R_nᵀ)` (§4.2, corrected form), exact gradients
//! (`∂ψ_s/∂Θ = T_s⁻¹(ψ_s) R`) and curvatures.
//!
//! Velocity level (unknowns `W`, multipliers `Λ_N, Λ_T, χ_N, χ_T`; configuration frozen):
//! Newton law `ĝ̇_N = N·(v + e_N v_n)`,
//! `ĝ̇_T1 = (r T₂·ω − T₁·v) + e_T (r T₂·ω_n − T₁·v_n)`, `ĝ̇_T2 = (−r T₁·ω − T₂·v) + e_T(…)` with
//! `ω = R Ω`; rolling `ω_T = [T₁·ω, T₂·ω]` with resistance length `ρ`, spinning `ω_N = N·ω` with
//! length `γ_s` (§4.4). A contact that was open at position level (`ξ_N ≤ 0` at convergence)
//! drives all its velocity multipliers to zero (velocity active set ⊂ position active set).

use super::element::ContactElement;
use super::kinematics::SpatialIncrement;
use nalgebra::{Vector2, Vector3};
use saltus_core::contact::law::{Curvature, SlidingGaps};
use saltus_core::contact::{ContactFrame, ContactJacobian, UnilateralContact};
use saltus_core::registry::{
    parse_params, require_finite, require_non_negative, require_positive, BuildCx, ElementDef,
};
use saltus_core::{BuildError, Element, NodeId, NodeKind, NodeState};
use serde::{Deserialize, Serialize};

const SPHERE_PLANE: &str = "sphere_plane_contact";
const POINT_PLANE: &str = "point_plane_contact";

/// Model-file parameters shared by `sphere_plane_contact` and `point_plane_contact`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaneContactSpec {
    /// Sphere radius `r` \[m\] (> 0; `sphere_plane_contact` only).
    #[serde(default)]
    pub radius: Option<f64>,
    /// A point of the plane `X_P` \[m\] (default origin).
    #[serde(default)]
    pub point: Option<[f64; 3]>,
    /// Plane normal `N` \[-\], pointing to the admissible side (normalized; default +z).
    #[serde(default)]
    pub normal: Option<[f64; 3]>,
    /// Coulomb friction coefficient `μ` \[-\] (≥ 0, default 0).
    #[serde(default)]
    pub friction: f64,
    /// Normal restitution `e_N ∈ [0, 1]` \[-\] (default 0).
    #[serde(default)]
    pub restitution: f64,
    /// Tangential restitution `e_T ∈ [−1, 1]` \[-\] (default 0).
    #[serde(default)]
    pub tangential_restitution: f64,
    /// Rolling resistance length `ρ` \[m\] (≥ 0, default 0; sphere only).
    #[serde(default)]
    pub rolling_resistance: f64,
    /// Spinning resistance length `γ_s` \[m\] (≥ 0, default 0; sphere only).
    #[serde(default)]
    pub spinning_resistance: f64,
    /// Friction falling with the sliding speed `v` \[-\]: `μ(v) = friction + friction_decay ·
    /// e^{−friction_decay_rate · v}` (≥ 0, default 0: constant μ).
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
    pub force_recovery: Option<saltus_core::contact_force::ForceRecoverySpec>,
}

/// Geometry of a sphere (frame node) or a point (point node) against a fixed plane.
#[derive(Clone, Debug)]
pub struct PlaneGeometry {
    node: [NodeId; 1],
    kind: [NodeKind; 1],
    radius: f64,
    point: Vector3<f64>,
    normal: Vector3<f64>,
    t1: Vector3<f64>,
    t2: Vector3<f64>,
}

/// Contact of a sphere or a point with a fixed plane (the element).
pub type PlaneContact = ContactElement<PlaneGeometry>;
/// `sphere_plane_contact` element type (frame node).
pub type SpherePlaneContact = PlaneContact;
/// `point_plane_contact` element type (point node).
pub type PointPlaneContact = PlaneContact;

fn tangents(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = if n.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let t1 = (a - n * n.dot(&a)).normalize();
    (t1, n.cross(&t1))
}

impl PlaneContact {
    /// Sphere of radius `radius` \[m\] on frame node `node` against the plane through `point`
    /// with normal `normal`; friction and restitution zero until set with the builders.
    pub fn sphere(
        node: NodeId,
        radius: f64,
        point: Vector3<f64>,
        normal: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        Self::plane(
            &format!("<{SPHERE_PLANE}>"),
            node,
            NodeKind::Frame,
            radius,
            point,
            normal,
        )
    }

    /// Point node `node` against the plane through `point` with normal `normal`.
    pub fn point(
        node: NodeId,
        point: Vector3<f64>,
        normal: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        Self::plane(
            &format!("<{POINT_PLANE}>"),
            node,
            NodeKind::Point,
            0.0,
            point,
            normal,
        )
    }

    fn plane(
        element: &str,
        node: NodeId,
        kind: NodeKind,
        radius: f64,
        point: Vector3<f64>,
        normal: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        let bad = |parameter: &str, message: String| BuildError::InvalidParameter {
            element: element.to_string(),
            parameter: parameter.to_string(),
            message,
        };
        if kind == NodeKind::Frame && !(radius.is_finite() && radius > 0.0) {
            return Err(bad(
                "radius",
                format!("must be finite and > 0, got {radius}"),
            ));
        }
        if !point.iter().all(|v| v.is_finite()) {
            return Err(bad("point", format!("must be finite, got {point:?}")));
        }
        let len = normal.norm();
        if !(len.is_finite() && len > 1e-12) {
            return Err(bad(
                "normal",
                format!("must be a finite nonzero vector, got {normal:?}"),
            ));
        }
        let normal = normal / len;
        let (t1, t2) = tangents(&normal);
        Ok(ContactElement::from_geometry(PlaneGeometry {
            node: [node],
            kind: [kind],
            radius,
            point,
            normal,
            t1,
            t2,
        }))
    }
}

impl PlaneGeometry {
    fn is_sphere(&self) -> bool {
        self.kind[0] == NodeKind::Frame
    }

    /// Sphere radius `r` \[m\] (0 for a point).
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Unit plane normal `N`.
    pub fn normal(&self) -> Vector3<f64> {
        self.normal
    }

    /// `c₁ = r T₂`, `c₂ = −r T₁`: the tangential gaps' coefficients of the spatial rotation.
    fn c(&self) -> [Vector3<f64>; 2] {
        [self.radius * self.t2, -self.radius * self.t1]
    }
}

impl UnilateralContact for PlaneGeometry {
    fn type_name(&self) -> &'static str {
        if self.is_sphere() {
            SPHERE_PLANE
        } else {
            POINT_PLANE
        }
    }
    fn nodes(&self) -> &[NodeId] {
        &self.node
    }
    fn node_kinds(&self) -> &[NodeKind] {
        &self.kind
    }
    fn couple_radius(&self) -> Option<f64> {
        self.is_sphere().then_some(self.radius)
    }
    /// A sphere of radius `r` on a plane: `[1/r, 0]`; a point has none.
    fn surface_curvatures(&self) -> Option<[f64; 2]> {
        (self.is_sphere() && self.radius > 0.0).then(|| [1.0 / self.radius, 0.0])
    }

    /// `g_N = N·(x − X_P) − r`; contact points `x − r N` (sphere) and its projection on the
    /// plane.
    fn frame(&self, nodes: &[NodeState]) -> ContactFrame {
        let x = nodes[0].x;
        let gap = self.normal.dot(&(x - self.point)) - self.radius;
        let point_a = x - self.radius * self.normal;
        ContactFrame {
            gap,
            normal: self.normal,
            t1: self.t1,
            t2: self.t2,
            point_a,
            point_b: point_a - gap * self.normal,
        }
    }

    /// `g_N = N·(x − X_P) − r`, `g_Tα = c_α·ψ_s − T_α·(x − x_n)` with
    /// `∂ψ_s/∂Θ = T_s⁻¹(ψ_s) R` and the curvature of `c_α·ψ_s` (`H_N = 0`).
    fn position_gaps(
        &self,
        nodes: &[NodeState],
        prev: &[NodeState],
        g: &mut SlidingGaps,
        mut curv: Option<&mut Curvature>,
    ) {
        let (node, prev) = (&nodes[0], &prev[0]);
        let dx = node.x - prev.x;
        g.g_n = self.normal.dot(&(node.x - self.point)) - self.radius;
        g.g_t = Vector2::new(-self.t1.dot(&dx), -self.t2.dot(&dx));
        for i in 0..3 {
            g.grad_n[i] = self.normal[i];
            g.grad_t[(0, i)] = -self.t1[i];
            g.grad_t[(1, i)] = -self.t2[i];
        }
        if self.is_sphere() {
            let inc = SpatialIncrement::new(&node.r, &prev.r);
            for (a, ca) in self.c().iter().enumerate() {
                g.g_t[a] += ca.dot(&inc.psi);
                let row = ca.transpose() * inc.grad;
                for j in 0..3 {
                    g.grad_t[(a, 3 + j)] = row[j];
                }
                if let Some(curv) = curv.as_deref_mut() {
                    let h = inc.curvature(ca);
                    for i in 0..3 {
                        for j in 0..3 {
                            curv.h_t[a][(3 + i, 3 + j)] = h[(i, j)];
                        }
                    }
                }
            }
        }
    }

    /// `G_N = [Nᵀ, 0]`, `G_Tα = [−T_αᵀ, c_αᵀ R]`, `W_Tα = [0, T_αᵀ R]`, `W_N = [0, Nᵀ R]`
    /// (`ω = R Ω`).
    fn jacobian(&self, nodes: &[NodeState], _prev: &[NodeState], out: &mut ContactJacobian) {
        for i in 0..3 {
            out.normal[i] = self.normal[i];
            out.tangential[(0, i)] = -self.t1[i];
            out.tangential[(1, i)] = -self.t2[i];
        }
        if self.is_sphere() {
            let r = nodes[0].r.to_rotation_matrix().into_inner();
            for (a, ca) in self.c().iter().enumerate() {
                let row = ca.transpose() * r;
                for j in 0..3 {
                    out.tangential[(a, 3 + j)] = row[j];
                }
            }
            let (w1, w2, wn) = (
                self.t1.transpose() * r,
                self.t2.transpose() * r,
                self.normal.transpose() * r,
            );
            for j in 0..3 {
                out.rolling[(0, 3 + j)] = w1[j];
                out.rolling[(1, 3 + j)] = w2[j];
                out.spinning[3 + j] = wn[j];
            }
        }
    }
}

fn build(
    def: &ElementDef,
    cx: &BuildCx<'_>,
    kind: NodeKind,
) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[Some(kind)])?;
    let spec: PlaneContactSpec = parse_params(def)?;
    let sphere = kind == NodeKind::Frame;
    let radius = match (sphere, spec.radius) {
        (true, Some(r)) => {
            require_positive(def, "radius", r)?;
            r
        }
        (true, None) => {
            return Err(BuildError::InvalidParameter {
                element: def.name.clone(),
                parameter: "radius".into(),
                message: "is required (sphere radius in m)".into(),
            })
        }
        (false, Some(_)) => {
            return Err(BuildError::InvalidParameter {
                element: def.name.clone(),
                parameter: "radius".into(),
                message: "is not a parameter of point_plane_contact (use sphere_plane_contact)"
                    .into(),
            })
        }
        (false, None) => 0.0,
    };
    let point = spec.point.unwrap_or([0.0; 3]);
    let normal = spec.normal.unwrap_or([0.0, 0.0, 1.0]);
    require_finite(def, "point", &point)?;
    require_finite(def, "normal", &normal)?;
    require_non_negative(def, "friction", spec.friction)?;
    require_non_negative(def, "rolling_resistance", spec.rolling_resistance)?;
    require_non_negative(def, "spinning_resistance", spec.spinning_resistance)?;
    require_non_negative(def, "friction_decay", spec.friction_decay)?;
    require_non_negative(def, "friction_decay_rate", spec.friction_decay_rate)?;
    if !(0.0..=1.0).contains(&spec.restitution) {
        return Err(BuildError::InvalidParameter {
            element: def.name.clone(),
            parameter: "restitution".into(),
            message: format!("must be in [0, 1], got {}", spec.restitution),
        });
    }
    if !(-1.0..=1.0).contains(&spec.tangential_restitution) {
        return Err(BuildError::InvalidParameter {
            element: def.name.clone(),
            parameter: "tangential_restitution".into(),
            message: format!("must be in [-1, 1], got {}", spec.tangential_restitution),
        });
    }
    if !sphere && (spec.rolling_resistance > 0.0 || spec.spinning_resistance > 0.0) {
        return Err(BuildError::InvalidParameter {
            element: def.name.clone(),
            parameter: "rolling_resistance".into(),
            message: "rolling/spinning resistance needs a sphere (sphere_plane_contact)".into(),
        });
    }
    let c = PlaneContact::plane(
        &def.name,
        ids[0],
        kind,
        radius,
        Vector3::from(point),
        Vector3::from(normal),
    )
    .map_err(|e| super::located(def, e))?;
    let c = c
        .friction(spec.friction)
        .friction_decay(spec.friction_decay, spec.friction_decay_rate)
        .restitution(spec.restitution, spec.tangential_restitution)
        .resistance(spec.rolling_resistance, spec.spinning_resistance);
    let c = match &spec.force_recovery {
        Some(f) => c.force_recovery(f).map_err(|e| super::located(def, e))?,
        None => c,
    };
    Ok(Box::new(c))
}

fn build_sphere(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    build(def, cx, NodeKind::Frame)
}

fn build_point(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    build(def, cx, NodeKind::Point)
}

saltus_core::register_element! {
    type_name: SPHERE_PLANE,
    summary: "Sphere (frame node) against a fixed plane: unilateral, Coulomb friction, restitution, rolling and spinning resistance",
    build: build_sphere,
    example: || serde_json::json!({
        "radius": 0.05, "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0], "friction": 0.3,
        "restitution": 0.5, "tangential_restitution": 0.0, "rolling_resistance": 0.002, "spinning_resistance": 0.001
    }),
    example_nodes: &[NodeKind::Frame],
    params: PlaneContactSpec,
}

saltus_core::register_element! {
    type_name: POINT_PLANE,
    summary: "Point node against a fixed plane: unilateral, Coulomb friction, restitution",
    build: build_point,
    example: || serde_json::json!({ "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0], "friction": 0.3, "restitution": 0.5 }),
    example_nodes: &[NodeKind::Point],
    params: PlaneContactSpec,
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Matrix3;
    use saltus_core::contact::UnilateralContact;
    use saltus_core::fd::stage_contexts;
    use saltus_core::stage::participates;
    use saltus_core::{Level, LocalState};

    fn sphere() -> PlaneContact {
        PlaneContact::sphere(
            NodeId(0),
            0.3,
            Vector3::new(0.1, -0.2, 0.05),
            Vector3::new(0.2, 0.3, 1.0),
        )
        .unwrap()
        .friction(0.4)
        .restitution(0.5, 0.2)
        .resistance(0.05, 0.03)
    }

    fn position_gaps(e: &PlaneContact, s: &LocalState<'_>) -> SlidingGaps {
        let mut g = SlidingGaps::zeros(s.kinds[0].ndof());
        let mut curv = Curvature::zeros();
        e.geometry()
            .position_gaps(s.nodes, s.prev, &mut g, Some(&mut curv));
        g
    }

    /// A contact joins exactly the position and velocity stages (3 and 3 or 6 multipliers).
    #[test]
    fn contact_stages_and_multipliers() {
        let point = PlaneContact::point(NodeId(0), Vector3::zeros(), Vector3::z()).unwrap();
        for (e, nv) in [(sphere(), 6), (point, 3)] {
            assert!(e.as_contact().is_some());
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
        let point = PlaneContact::point(NodeId(0), Vector3::zeros(), Vector3::z())
            .unwrap()
            .friction(0.4)
            .restitution(0.3, 0.1);
        for base in [sphere(), point] {
            super::super::fd_support::check_every_status(&base, 100);
        }
    }

    #[test]
    fn pure_rolling_gives_zero_incremental_slip_over_many_turns() {
        // Sphere of radius r on z = 0 rolling along +x: it turns about +y by Δθ per step while
        // its centre advances by r Δθ (contact point at rest).
        let r = 0.3;
        let e = PlaneContact::sphere(NodeId(0), r, Vector3::zeros(), Vector3::z()).unwrap();
        let mut x_n = Vector3::new(0.0, 0.0, r);
        let mut r_n = nalgebra::UnitQuaternion::identity();
        let dtheta = 0.37;
        let mut worst: f64 = 0.0;
        for _ in 0..60 {
            let x = x_n + Vector3::new(r * dtheta, 0.0, 0.0);
            let rot = saltus_core::lie::exp(&Vector3::new(0.0, dtheta, 0.0)) * r_n;
            let nodes = [saltus_core::NodeState::at(x, rot)];
            let prev = [saltus_core::NodeState::at(x_n, r_n)];
            let s = LocalState {
                kinds: &[NodeKind::Frame],
                nodes: &nodes,
                prev: &prev,
                smooth: &nodes,
                rot_tangent: &[Matrix3::identity()],
                incr: &[nalgebra::Vector6::zeros()],
                mult: &[0.0; 3],
                mult_smooth: &[],
                admissible: true,
                memo: None,
                base: None,
            };
            let g = position_gaps(&e, &s);
            worst = worst.max(g.g_t.norm()).max(g.g_n.abs());
            x_n = x;
            r_n = rot;
        }
        // 60 steps of 0.37 rad (3.5 turns): exact rolling gives g_T = 0 to round-off.
        assert!(worst < 1e-14, "{worst}");
    }
}
