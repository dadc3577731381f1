//! `torsional_spring`: rotational spring and viscous damper about an axis.

use super::{add_terms, rotation, Layout, Mat12, Row12, Vec12};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use saltus_core::lie::hat;
use saltus_core::physics::Dependence;
use saltus_core::registry::{
    check_non_negative, invalid, parse_params, require_finite, require_non_negative,
};
use saltus_core::{
    BuildCx, BuildError, Element, ElementDef, ElementError, Force, ForceTerms, NodeId, NodeKind,
    NodeState, OutputSpec, OutputState, PhysicsState,
};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

const TYPE_NAME: &str = "torsional_spring";

/// Model-file parameters of `torsional_spring` (two frame nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TorsionalSpringSpec {
    /// Rotational stiffness `k` \[N m/rad\], >= 0.
    pub stiffness: f64,
    /// Rotational viscous damping `c` \[N m s/rad\], >= 0 (default 0).
    #[serde(default)]
    pub damping: f64,
    /// Spring axis \[-\] in the inertial frame at the initial configuration (any non-zero length;
    /// normalised). Stored in both body frames.
    pub axis: [f64; 3],
    /// Rest angle `θ0` \[rad\] (default 0; the initial relative angle is 0).
    #[serde(default)]
    pub rest_angle: f64,
}

/// Rotational spring and viscous damper between two frame nodes about an axis
/// (`nsga.md` §11.2, force element).
///
/// The axis `a` and a reference vector `b ⊥ a` given at the initial configuration are stored
/// in the body frame of node 1 (`a₁`, `b₁`, `c₁ = a₁ × b₁`) and `b` in that of node 2 (`b₂`).
/// The relative angle \[rad\] is `θ = atan2(B₂·C₁, B₂·B₁)` with `B₁ = R₁b₁`, `C₁ = R₁c₁`,
/// `B₂ = R₂b₂` (angle of body 2's reference vector about body 1's axis; 0 initially),
/// unwrapped across ±π to the branch nearest the last committed angle (turns are tracked by
/// [`Element::commit`]). The moment on node 2 about the axis is `−M`, on node 1 `+M`, with
/// `M = k(θ − θ0) + c θ̇` \[N m\] (`k` \[N m/rad\], `c` \[N m s/rad\]); generalized force
/// `f = −M ∂θ/∂q`. Energy: potential `½ k (θ − θ0)²` \[J\]. Outputs: `angle` \[rad\],
/// `moment` = `M` \[N m\]. Undefined (error) when body 2's reference vector is parallel to the
/// axis of body 1.
#[derive(Clone, Debug, PartialEq)]
pub struct TorsionalSpring {
    nodes: [NodeId; 2],
    b1: Vector3<f64>,
    c1: Vector3<f64>,
    b2: Vector3<f64>,
    stiffness: f64,
    damping: f64,
    rest_angle: f64,
    /// Last committed (unwrapped) angle \[rad\].
    angle_ref: f64,
}

/// Angle kinematics of a torsional spring at one configuration.
struct AngleKin {
    theta: f64,
    /// `∂θ/∂q` as a column (local unknowns).
    j: Vec12,
    /// Spatial gradient `u` (`δθ = u·(δθ₂ − δθ₁)` for spatial rotation variations).
    u: Vector3<f64>,
    r1: Matrix3<f64>,
    r2: Matrix3<f64>,
    /// `du = du1 δθ₁ + du2 δθ₂` (spatial variations).
    du1: Matrix3<f64>,
    du2: Matrix3<f64>,
}

impl TorsionalSpring {
    /// A torsional spring between the frame nodes `nodes` about `axis` (inertial frame, at
    /// the initial rotations `initial_rotations` of the two nodes), stiffness `stiffness`
    /// \[N m/rad\] >= 0, damping `damping` \[N m s/rad\] >= 0, rest angle 0.
    pub fn new(
        nodes: [NodeId; 2],
        initial_rotations: [UnitQuaternion<f64>; 2],
        axis: Vector3<f64>,
        stiffness: f64,
        damping: f64,
    ) -> Result<Self, BuildError> {
        Self::checked(
            &format!("<{TYPE_NAME}>"),
            nodes,
            initial_rotations,
            axis,
            stiffness,
            damping,
            0.0,
        )
    }

    /// Set the rest angle `θ0` \[rad\].
    pub fn with_rest_angle(mut self, rest_angle: f64) -> Result<Self, BuildError> {
        if !rest_angle.is_finite() {
            return Err(invalid(
                &format!("<{TYPE_NAME}>"),
                "rest_angle",
                format!("must be finite, got {rest_angle}"),
            ));
        }
        self.rest_angle = rest_angle;
        Ok(self)
    }

    fn checked(
        element: &str,
        nodes: [NodeId; 2],
        initial_rotations: [UnitQuaternion<f64>; 2],
        axis: Vector3<f64>,
        stiffness: f64,
        damping: f64,
        rest_angle: f64,
    ) -> Result<Self, BuildError> {
        check_non_negative(element, "stiffness", stiffness)?;
        check_non_negative(element, "damping", damping)?;
        if !rest_angle.is_finite() {
            return Err(invalid(
                element,
                "rest_angle",
                format!("must be finite, got {rest_angle}"),
            ));
        }
        let norm = axis.norm();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(invalid(
                element,
                "axis",
                format!("must be finite and non-zero, got {:?}", axis.as_slice()),
            ));
        }
        let a = axis / norm;
        // Reference vector: the global axis least aligned with `a`, made orthogonal to it.
        let i = a.iamin();
        let e = Vector3::ith(i, 1.0);
        let b = (e - a * a.dot(&e)).normalize();
        let c = a.cross(&b);
        let [q1, q2] = initial_rotations;
        Ok(Self {
            nodes,
            b1: q1.inverse() * b,
            c1: q1.inverse() * c,
            b2: q2.inverse() * b,
            stiffness,
            damping,
            rest_angle,
            angle_ref: 0.0,
        })
    }

    /// Relative rotation angle `θ` \[rad\] of node 2 with respect to node 1 at the given local
    /// node states, on the branch nearest the last committed angle.
    pub fn angle(&self, nodes: &[NodeState]) -> Result<f64, ElementError> {
        Ok(self.kin(nodes)?.theta)
    }

    fn kin(&self, nodes: &[NodeState]) -> Result<AngleKin, ElementError> {
        let r1 = rotation(&nodes[0]);
        let r2 = rotation(&nodes[1]);
        let bb1 = r1 * self.b1;
        let cc1 = r1 * self.c1;
        let bb2 = r2 * self.b2;
        let x = bb2.dot(&bb1);
        let y = bb2.dot(&cc1);
        let rho2 = x * x + y * y;
        if !(rho2.is_finite() && rho2 > 1e-24) {
            return Err(ElementError::InvalidState(format!(
                "torsional_spring: reference vector of node 2 is parallel to the axis of node 1 \
                 (projection {rho2:e})"
            )));
        }
        let raw = y.atan2(x);
        let theta = raw + 2.0 * PI * ((self.angle_ref - raw) / (2.0 * PI)).round();
        let z = cc1 * x - bb1 * y;
        let u = bb2.cross(&z) / rho2;
        let mut j = Vec12::zeros();
        j.fixed_rows_mut::<3>(3).copy_from(&(-(r1.transpose() * u)));
        j.fixed_rows_mut::<3>(9).copy_from(&(r2.transpose() * u));
        // du = (dB₂ × z + B₂ × dz)/ρ² − u dρ²/ρ², with δφ = δθ₂ − δθ₁ (spatial):
        // dx = (B₂×B₁)·δφ, dy = (B₂×C₁)·δφ, dz = [C₁(B₂×B₁)ᵀ − B₁(B₂×C₁)ᵀ] δφ − hat(z) δθ₁.
        let gx = bb2.cross(&bb1);
        let gy = bb2.cross(&cc1);
        let hb2 = hat(&bb2);
        let hz = hat(&z);
        let m_phi = (hb2 * (cc1 * gx.transpose() - bb1 * gy.transpose())
            - u * (2.0 * (gx * x + gy * y)).transpose())
            / rho2;
        let du2 = hz * hb2 / rho2 + m_phi;
        let du1 = -(hb2 * hz) / rho2 - m_phi;
        Ok(AngleKin {
            theta,
            j,
            u,
            r1,
            r2,
            du1,
            du2,
        })
    }

    /// `f = −M ∂θ/∂q`, `K = −∂f/∂q`, `C = −∂f/∂v` (fixed-size, local unknown order).
    fn terms(&self, nodes: &[NodeState]) -> Result<(Vec12, Mat12, Mat12), ElementError> {
        let k = self.kin(nodes)?;
        let damped = self.damping != 0.0;
        let v = Layout::new(&[NodeKind::Frame; 2]).velocity(nodes);
        let theta_dot = if damped { k.j.dot(&v) } else { 0.0 };
        let moment = self.stiffness * (k.theta - self.rest_angle) + self.damping * theta_dot;
        // ∂(∂θ/∂q)/∂q on the rotational blocks (material variations δΘᵢ, δθᵢ = Rᵢ δΘᵢ).
        let (r1, r2, u) = (k.r1, k.r2, k.u);
        let mut dj = Mat12::zeros();
        dj.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(-(r1.transpose() * k.du1 * r1) - hat(&(r1.transpose() * u))));
        dj.fixed_view_mut::<3, 3>(3, 9)
            .copy_from(&(-(r1.transpose() * k.du2 * r2)));
        dj.fixed_view_mut::<3, 3>(9, 3)
            .copy_from(&(r2.transpose() * k.du1 * r1));
        dj.fixed_view_mut::<3, 3>(9, 9)
            .copy_from(&(r2.transpose() * k.du2 * r2 + hat(&(r2.transpose() * u))));
        let mut dm: Row12 = k.j.transpose() * self.stiffness;
        let mut c = Mat12::zeros();
        if damped {
            // θ̇ = u·(ω₂ − ω₁), ωᵢ = Rᵢ Ωᵢ.
            let w1 = r1 * nodes[0].omega;
            let w2 = r2 * nodes[1].omega;
            let dw = w2 - w1;
            let mut dthdot = Row12::zeros();
            dthdot
                .fixed_columns_mut::<3>(3)
                .copy_from(&((dw.transpose() * k.du1 - w1.cross(&u).transpose()) * r1));
            dthdot
                .fixed_columns_mut::<3>(9)
                .copy_from(&((dw.transpose() * k.du2 + w2.cross(&u).transpose()) * r2));
            dm += dthdot * self.damping;
            c = k.j * k.j.transpose() * self.damping;
        }
        Ok((-k.j * moment, k.j * dm + dj * moment, c))
    }
}

impl Force for TorsionalSpring {
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        let (f, k, c) = self.terms(s.nodes)?;
        add_terms(out, 12, &f, &k, &c);
        Ok(())
    }

    /// Undamped (`damping` = 0): the configuration alone.
    fn dependence(&self) -> Dependence {
        if self.damping == 0.0 {
            Dependence::CONFIGURATION
        } else {
            Dependence::ALL
        }
    }

    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        // Elastic: V = ½ k (θ − θ₀)² (the damper dissipates).
        self.angle(s.nodes).map_or(0.0, |theta| {
            0.5 * self.stiffness * (theta - self.rest_angle).powi(2)
        })
    }
}

/// Build a `torsional_spring` from a model-file entry (two frame nodes).
pub fn build_torsional_spring(
    def: &ElementDef,
    cx: &BuildCx<'_>,
) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &[Some(NodeKind::Frame), Some(NodeKind::Frame)])?;
    let spec: TorsionalSpringSpec = parse_params(def)?;
    require_non_negative(def, "stiffness", spec.stiffness)?;
    require_non_negative(def, "damping", spec.damping)?;
    require_finite(def, "axis", &spec.axis)?;
    require_finite(def, "rest_angle", &[spec.rest_angle])?;
    let rot = |k: usize| cx.nodes[ids[k].index()].initial.r;
    Ok(Box::new(TorsionalSpring::checked(
        &def.name,
        [ids[0], ids[1]],
        [rot(0), rot(1)],
        Vector3::from(spec.axis),
        spec.stiffness,
        spec.damping,
        spec.rest_angle,
    )?))
}

pub(super) fn torsional_spring_example() -> serde_json::Value {
    serde_json::json!({
        "stiffness": 20.0,
        "damping": 0.3,
        "axis": [0.0, 0.0, 1.0],
        "rest_angle": 0.2,
    })
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Rotational spring and viscous damper between two frame nodes about an axis",
    build: build_torsional_spring,
    example: torsional_spring_example,
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: TorsionalSpringSpec,
}

impl Element for TorsionalSpring {
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

    fn commit(&mut self, s: &OutputState<'_>) {
        if let Ok(theta) = self.angle(s.nodes) {
            self.angle_ref = theta;
        }
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec {
                name: "angle",
                len: 1,
                unit: "rad",
                description: "relative rotation angle of node 2 about the axis (unwrapped)",
            },
            OutputSpec {
                name: "moment",
                len: 1,
                unit: "N*m",
                description:
                    "k(theta - theta0) + c dtheta/dt (node 2 receives minus this about the axis)",
            },
        ]
    }

    fn write_outputs(&self, s: &OutputState<'_>, out: &mut [f64]) {
        match self.kin(s.nodes) {
            Ok(k) => {
                let v = Layout::new(&[NodeKind::Frame; 2]).velocity(s.nodes);
                out[0] = k.theta;
                out[1] = self.stiffness * (k.theta - self.rest_angle) + self.damping * k.j.dot(&v);
            }
            Err(_) => {
                out[0] = f64::NAN;
                out[1] = f64::NAN;
            }
        }
    }
}
