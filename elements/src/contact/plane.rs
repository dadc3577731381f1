//! Frictional contact of a rigid sphere (frame node) or a point (point node) with a fixed
//! plane (contact-elements.md §4; laws nsga.md §8).
//!
//! Plane: point `X_P` [m], unit normal `N`, tangents `T₁, T₂` with `T₁ × T₂ = N`. Sphere of
//! radius `r` [m] centred on node A (position `x`, rotation `R`); a point node is `r = 0`
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

use super::kinematics::SpatialIncrement;
use super::law::{
    self, Curvature, Layout, Multipliers, RollingRates, Scaling, SlidingGaps, SpinningRate, Status,
};
use nalgebra::{Matrix3, Vector2, Vector3};
use saltus_core::registry::{
    parse_params, require_finite, require_non_negative, require_positive, BuildCx, ElementDef,
};
use saltus_core::{
    BuildError, Element, ElementError, Level, Levels, LocalState, LocalSystem, NodeId, NodeKind,
    OutputSpec, OutputState, StepCx,
};
use serde::{Deserialize, Serialize};

const SPHERE_PLANE: &str = "sphere_plane_contact";
const POINT_PLANE: &str = "point_plane_contact";

/// Model-file parameters shared by `sphere_plane_contact` and `point_plane_contact`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneContactSpec {
    /// Sphere radius `r` [m] (> 0; `sphere_plane_contact` only).
    #[serde(default)]
    pub radius: Option<f64>,
    /// A point of the plane `X_P` [m] (default origin).
    #[serde(default)]
    pub point: Option<[f64; 3]>,
    /// Plane normal `N`, pointing to the admissible side (normalized; default +z).
    #[serde(default)]
    pub normal: Option<[f64; 3]>,
    /// Coulomb friction coefficient `μ` (≥ 0, default 0).
    #[serde(default)]
    pub friction: f64,
    /// Normal restitution `e_N ∈ [0, 1]` (default 0).
    #[serde(default)]
    pub restitution: f64,
    /// Tangential restitution `e_T ∈ [−1, 1]` (default 0).
    #[serde(default)]
    pub tangential_restitution: f64,
    /// Rolling resistance length `ρ` [m] (≥ 0, default 0; sphere only).
    #[serde(default)]
    pub rolling_resistance: f64,
    /// Spinning resistance length `γ_s` [m] (≥ 0, default 0; sphere only).
    #[serde(default)]
    pub spinning_resistance: f64,
}

/// Contact of a sphere (frame node) or a point (point node) with a fixed plane.
#[derive(Clone, Debug)]
pub struct PlaneContact {
    node: [NodeId; 1],
    kind: NodeKind,
    radius: f64,
    point: Vector3<f64>,
    normal: Vector3<f64>,
    t1: Vector3<f64>,
    t2: Vector3<f64>,
    mu: f64,
    e_n: f64,
    e_t: f64,
    rho: f64,
    gamma_s: f64,
    /// Converged position status: in the position active set 𝒜 (`ξ_N > 0`).
    closed: bool,
    /// Converged statuses (sliding at position, sliding / rolling / spinning at velocity level).
    status: [Status; 4],
}

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
    /// Sphere of radius `radius` [m] on frame node `node` against the plane through `point`
    /// with normal `normal`; friction and restitution zero until set with the builders.
    pub fn sphere(
        node: NodeId,
        radius: f64,
        point: Vector3<f64>,
        normal: Vector3<f64>,
    ) -> Result<Self, BuildError> {
        Self::new(
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
        Self::new(
            &format!("<{POINT_PLANE}>"),
            node,
            NodeKind::Point,
            0.0,
            point,
            normal,
        )
    }

    fn new(
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
        Ok(Self {
            node: [node],
            kind,
            radius,
            point,
            normal,
            t1,
            t2,
            mu: 0.0,
            e_n: 0.0,
            e_t: 0.0,
            rho: 0.0,
            gamma_s: 0.0,
            closed: false,
            status: [Status::Gap; 4],
        })
    }

    /// Coulomb friction coefficient `μ ≥ 0`.
    pub fn friction(mut self, mu: f64) -> Self {
        self.mu = mu;
        self
    }

    /// Normal and tangential restitution coefficients `e_N ∈ [0,1]`, `e_T ∈ [−1,1]`.
    pub fn restitution(mut self, e_n: f64, e_t: f64) -> Self {
        self.e_n = e_n;
        self.e_t = e_t;
        self
    }

    /// Rolling and spinning resistance lengths `ρ`, `γ_s` [m] (sphere only).
    pub fn resistance(mut self, rolling: f64, spinning: f64) -> Self {
        self.rho = rolling;
        self.gamma_s = spinning;
        self
    }

    fn is_sphere(&self) -> bool {
        self.kind == NodeKind::Frame
    }

    fn n_node(&self) -> usize {
        self.kind.ndof()
    }

    /// Position-level gaps, material gradients and curvatures at the current iterate.
    fn position_gaps(&self, s: &LocalState<'_>) -> (SlidingGaps, Curvature) {
        let node = &s.nodes[0];
        let prev = &s.prev[0];
        let mut g = SlidingGaps::zeros(self.n_node());
        let dx = node.x - prev.x;
        g.g_n = self.normal.dot(&(node.x - self.point)) - self.radius;
        g.g_t = Vector2::new(-self.t1.dot(&dx), -self.t2.dot(&dx));
        for i in 0..3 {
            g.grad_n[i] = self.normal[i];
            g.grad_t[(0, i)] = -self.t1[i];
            g.grad_t[(1, i)] = -self.t2[i];
        }
        let mut curv = Curvature::zeros();
        if self.is_sphere() {
            let inc = SpatialIncrement::new(&node.r, &prev.r);
            let c = [self.radius * self.t2, -self.radius * self.t1];
            for (a, ca) in c.iter().enumerate() {
                g.g_t[a] += ca.dot(&inc.psi);
                let row = ca.transpose() * inc.grad;
                for j in 0..3 {
                    g.grad_t[(a, 3 + j)] = row[j];
                }
                let h = inc.curvature(ca);
                for i in 0..3 {
                    for j in 0..3 {
                        curv.h_t[a][(3 + i, 3 + j)] = h[(i, j)];
                    }
                }
            }
        }
        (g, curv)
    }

    /// Velocity-level Newton-law gaps and rolling/spinning rates (configuration frozen).
    fn velocity_gaps(&self, s: &LocalState<'_>) -> (SlidingGaps, RollingRates, SpinningRate) {
        let node = &s.nodes[0];
        let prev = &s.prev[0];
        let mut g = SlidingGaps::zeros(self.n_node());
        g.g_n = self.normal.dot(&(node.v + self.e_n * prev.v));
        g.g_t = Vector2::new(
            -self.t1.dot(&(node.v + self.e_t * prev.v)),
            -self.t2.dot(&(node.v + self.e_t * prev.v)),
        );
        for i in 0..3 {
            g.grad_n[i] = self.normal[i];
            g.grad_t[(0, i)] = -self.t1[i];
            g.grad_t[(1, i)] = -self.t2[i];
        }
        let mut roll = RollingRates {
            omega_t: Vector2::zeros(),
            grad_t: law::TangentialGradient::zeros(),
        };
        let mut spin = SpinningRate {
            omega_n: 0.0,
            grad_n: law::NodeVector::zeros(),
        };
        if self.is_sphere() {
            let r = node.r.to_rotation_matrix().into_inner();
            let omega = r * node.omega;
            let omega_n = prev.r * prev.omega;
            let c = [self.radius * self.t2, -self.radius * self.t1];
            for (a, ca) in c.iter().enumerate() {
                g.g_t[a] += ca.dot(&(omega + self.e_t * omega_n));
                let row = ca.transpose() * r;
                for j in 0..3 {
                    g.grad_t[(a, 3 + j)] = row[j];
                }
            }
            roll.omega_t = Vector2::new(self.t1.dot(&omega), self.t2.dot(&omega));
            spin.omega_n = self.normal.dot(&omega);
            let (w1, w2, wn) = (
                self.t1.transpose() * r,
                self.t2.transpose() * r,
                self.normal.transpose() * r,
            );
            for j in 0..3 {
                roll.grad_t[(0, 3 + j)] = w1[j];
                roll.grad_t[(1, 3 + j)] = w2[j];
                spin.grad_n[3 + j] = wn[j];
            }
        }
        (g, roll, spin)
    }

    /// Post-multiply the rotational node columns by the rotation tangent `T` (element contract).
    fn apply_tangent(&self, s: &LocalState<'_>, out: &mut LocalSystem<'_>) {
        if !self.is_sphere() {
            return;
        }
        let t: Matrix3<f64> = s.rot_tangent[0];
        let rows = out.hessian.nrows();
        for i in 0..rows {
            let row = Vector3::new(
                out.hessian[(i, 3)],
                out.hessian[(i, 4)],
                out.hessian[(i, 5)],
            );
            let new = t.transpose() * row;
            for j in 0..3 {
                out.hessian[(i, 3 + j)] = new[j];
            }
        }
    }

    /// Scaling of the rolling/spinning couples: `κ_r = κ r`, `π_r = ⅖ π r²` (the inertia of a
    /// uniform sphere of the characteristic mass), so that `η = κ_r χ − π_r ω` is a couple
    /// impulse and the penalty matches the sphere's rotational inertia (a penalty far above it
    /// makes the semi-smooth Newton cycle across the narrow stick interval). Physical couple
    /// impulse: `κ_r χ`. The converged solution does not depend on the choice (spec §10).
    fn couple_scaling(&self, sc: Scaling) -> Scaling {
        Scaling::new(sc.k * self.radius, 0.4 * sc.p * self.radius * self.radius)
    }

    fn velocity_multipliers(&self) -> usize {
        if self.is_sphere() {
            6
        } else {
            3
        }
    }
}

impl Element for PlaneContact {
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
    fn levels(&self) -> Levels {
        Levels::CONTACT
    }
    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(self.kind)]
    }
    fn n_mult(&self, level: Level) -> usize {
        match level {
            Level::Position => 3,
            Level::Velocity => self.velocity_multipliers(),
            Level::Smooth | Level::Static | Level::Custom => 0,
        }
    }

    fn position(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let sc = Scaling::from_cx(cx);
        let m = Multipliers::from_slice(s.mult);
        let (gaps, curv) = self.position_gaps(s);
        let layout = Layout::contiguous(self.n_node());
        law::sliding(sc, self.mu, &gaps, Some(&curv), &m, &layout, out);
        self.apply_tangent(s, out);
        Ok(())
    }

    fn velocity(
        &self,
        cx: &StepCx,
        s: &LocalState<'_>,
        out: &mut LocalSystem<'_>,
    ) -> Result<(), ElementError> {
        let sc = Scaling::from_cx(cx);
        let m = Multipliers::from_slice(s.mult);
        let layout = Layout::contiguous(self.n_node());
        if !self.closed {
            law::sliding_forced_gap(sc, &m, &layout, out);
            if self.is_sphere() {
                let sr = self.couple_scaling(sc);
                law::rolling_forced_gap(sr, &m, &layout, out);
                law::spinning_forced_gap(sr, &m, &layout, out);
            }
            return Ok(());
        }
        let (gaps, roll, spin) = self.velocity_gaps(s);
        law::sliding(sc, self.mu, &gaps, None, &m, &layout, out);
        if self.is_sphere() {
            let sr = self.couple_scaling(sc);
            law::rolling(sr, sc, self.rho, &gaps, &roll, &m, &layout, out);
            law::spinning(sr, sc, self.gamma_s, &gaps, &spin, &m, &layout, out);
        }
        Ok(())
    }

    fn level_converged(&mut self, cx: &StepCx, s: &LocalState<'_>) {
        let sc = Scaling::from_cx(cx);
        let m = Multipliers::from_slice(s.mult);
        match cx.level {
            Level::Position => {
                let (gaps, _) = self.position_gaps(s);
                let xi_n = gaps.zeta_n(sc, m.lambda_n);
                self.closed = xi_n > 0.0;
                self.status = [Status::Gap; 4];
                if self.closed {
                    let xi_t = gaps.zeta_t(sc, m.lambda_t);
                    self.status[0] = if self.mu > 0.0 && xi_t.norm() <= self.mu * xi_n {
                        Status::Stick
                    } else {
                        Status::Slip
                    };
                }
            }
            Level::Velocity if self.closed => {
                let (gaps, roll, spin) = self.velocity_gaps(s);
                let sigma_n = gaps.zeta_n(sc, m.lambda_n);
                if sigma_n > 0.0 {
                    let st = |radius: f64, eta: f64| {
                        if radius > 0.0 && eta < radius * sigma_n {
                            Status::Stick
                        } else {
                            Status::Slip
                        }
                    };
                    let sigma_t = gaps.zeta_t(sc, m.lambda_t);
                    self.status[1] = if self.mu > 0.0 && sigma_t.norm() <= self.mu * sigma_n {
                        Status::Stick
                    } else {
                        Status::Slip
                    };
                    if self.is_sphere() {
                        let sr = self.couple_scaling(sc);
                        let eta_t = sr.k * m.chi_t - sr.p * roll.omega_t;
                        let eta_n = sr.k * m.chi_n - sr.p * spin.omega_n;
                        self.status[2] = st(self.rho, eta_t.norm());
                        self.status[3] = st(self.gamma_s, eta_n.abs());
                    }
                }
            }
            _ => {}
        }
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        let mut v = vec![
            OutputSpec { name: "gap", len: 1, unit: "m", description: "normal gap g_N = N·(x − X_P) − r" },
            OutputSpec {
                name: "position_multiplier",
                len: 3,
                unit: "kg*m",
                description: "position-level multipliers k_p [ν_N, ν_T1, ν_T2]",
            },
            OutputSpec {
                name: "impulse",
                len: 3,
                unit: "N*s",
                description: "contact impulse of the step k_v [Λ_N, Λ_T1, Λ_T2] (normal, tangential along T1, T2)",
            },
            OutputSpec {
                name: "status",
                len: 4,
                unit: "1",
                description: "0 open, 1 stick, 2 slip: position sliding, velocity sliding, rolling, spinning",
            },
            OutputSpec {
                name: "slip_velocity",
                len: 2,
                unit: "m/s",
                description: "tangential velocity of the contact point (components along T1, T2)",
            },
        ];
        if self.is_sphere() {
            v.push(OutputSpec {
                name: "rolling_couple",
                len: 2,
                unit: "N*m*s",
                description: "rolling-resistance couple impulse κ_r χ_T = k_v r χ_T (along T1, T2)",
            });
            v.push(OutputSpec {
                name: "spinning_couple",
                len: 1,
                unit: "N*m*s",
                description: "spinning-resistance couple impulse κ_r χ_N = k_v r χ_N (about N)",
            });
        }
        v
    }

    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        let node = &s.nodes[0];
        out[0] = self.normal.dot(&(node.x - self.point)) - self.radius;
        for k in 0..3 {
            out[1 + k] = s.k[1] * s.mult_position[k];
            out[4 + k] = s.k[2] * s.mult_velocity[k];
        }
        for (k, st) in self.status.iter().enumerate() {
            out[7 + k] = st.code();
        }
        let omega = node.omega_spatial();
        let vp = node.v - self.radius * omega.cross(&self.normal);
        out[11] = self.t1.dot(&vp);
        out[12] = self.t2.dot(&vp);
        if self.is_sphere() {
            let kr = s.k[2] * self.radius;
            out[13] = kr * s.mult_velocity[4];
            out[14] = kr * s.mult_velocity[5];
            out[15] = kr * s.mult_velocity[3];
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
    let c = PlaneContact::new(
        &def.name,
        ids[0],
        kind,
        radius,
        Vector3::from(point),
        Vector3::from(normal),
    )
    .map_err(|e| match e {
        BuildError::InvalidParameter {
            parameter, message, ..
        } => BuildError::InvalidParameter {
            element: def.name.clone(),
            parameter,
            message,
        },
        other => other,
    })?;
    Ok(Box::new(
        c.friction(spec.friction)
            .restitution(spec.restitution, spec.tangential_restitution)
            .resistance(spec.rolling_resistance, spec.spinning_resistance),
    ))
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
}

saltus_core::register_element! {
    type_name: POINT_PLANE,
    summary: "Point node against a fixed plane: unilateral, Coulomb friction, restitution",
    build: build_point,
    example: || serde_json::json!({ "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0], "friction": 0.3, "restitution": 0.5 }),
    example_nodes: &[NodeKind::Point],
}

#[cfg(test)]
mod tests {
    use super::*;
    use saltus_core::fd::{check_hessian, test_cx, LocalFixture, Rng};

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

    /// Multipliers chosen so that the augmented multipliers land in `status` for an O(1)
    /// random state (|g| ≲ 2, κ = 1.7, π = 2.3): gap λ_N ≪ 0; stick λ_N ≫ 0 with small
    /// tangential parts; slip λ_N moderate with large tangential parts.
    fn mults(status: Status, n: usize) -> Vec<f64> {
        let v = match status {
            Status::Gap => [-40.0, 3.0, -2.0, 1.0, 0.5, -0.7],
            Status::Stick => [40.0, 0.3, -0.2, 30.0, 0.2, -0.1],
            Status::Slip => [12.0, 30.0, -25.0, 1.0, 25.0, -30.0],
        };
        v[..n].to_vec()
    }

    fn check(e: &PlaneContact, level: Level, status: Status) -> f64 {
        let kinds = [e.kind];
        let mut worst: f64 = 0.0;
        for seed in 0..4 {
            let mut fx =
                LocalFixture::random(&kinds, e.n_mult(level), 0, 0.2, &mut Rng::new(100 + seed));
            fx.mult = mults(status, e.n_mult(level));
            let cx = test_cx(level);
            if level == Level::Position || e.closed {
                assert_eq!(sliding_status(e, &cx, &fx), status, "seed {seed}");
            }
            let rep = check_hessian(e, &cx, &fx, 1e-6).unwrap();
            worst = worst.max(rep.relative_error());
        }
        worst
    }

    /// Sliding status the fixture's state lands in (checks that each test case covers the
    /// status it claims).
    fn sliding_status(e: &PlaneContact, cx: &StepCx, fx: &LocalFixture) -> Status {
        let (nodes, tangents) = fx.states(cx, &fx.incr);
        let s = LocalState {
            kinds: &fx.kinds,
            nodes: &nodes,
            prev: &fx.prev,
            smooth: &fx.smooth,
            rot_tangent: &tangents,
            incr: &fx.incr,
            mult: &fx.mult,
            mult_smooth: &[],
        };
        let gaps = if cx.level == Level::Position {
            e.position_gaps(&s).0
        } else {
            e.velocity_gaps(&s).0
        };
        let sc = Scaling::from_cx(cx);
        let m = Multipliers::from_slice(&fx.mult);
        let (zn, zt) = (gaps.zeta_n(sc, m.lambda_n), gaps.zeta_t(sc, m.lambda_t));
        if zn <= 0.0 {
            Status::Gap
        } else if zt.norm() <= e.mu * zn {
            Status::Stick
        } else {
            Status::Slip
        }
    }

    #[test]
    fn hessians_match_finite_differences_for_every_status() {
        let point = PlaneContact::point(NodeId(0), Vector3::zeros(), Vector3::z())
            .unwrap()
            .friction(0.4)
            .restitution(0.3, 0.1);
        for base in [sphere(), point] {
            for status in [Status::Gap, Status::Stick, Status::Slip] {
                let p = check(&base, Level::Position, status);
                let mut closed = base.clone();
                closed.closed = true;
                let v = check(&closed, Level::Velocity, status);
                let open = check(&base, Level::Velocity, status);
                eprintln!(
                    "{} {status:?}: position {p:.1e}, velocity {v:.1e}, velocity (open at position) {open:.1e}",
                    base.type_name()
                );
                // Central differences with ε = 1e-6: truncation O(ε²) ≈ 1e-12 and round-off
                // ≈ 1e-16·|F|/ε ≈ 1e-9 for |F| ~ 1e2; 1e-6 still catches any missing term.
                assert!(
                    p < 1e-6 && v < 1e-6 && open < 1e-6,
                    "{status:?}: {p} {v} {open}"
                );
            }
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
            };
            let (g, _) = e.position_gaps(&s);
            worst = worst.max(g.g_t.norm()).max(g.g_n.abs());
            x_n = x;
            r_n = rot;
        }
        // 60 steps of 0.37 rad (3.5 turns): exact rolling gives g_T = 0 to round-off.
        assert!(worst < 1e-14, "{worst}");
    }
}
