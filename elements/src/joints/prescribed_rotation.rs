//! Prescribed relative rotation (rheonomic driver) between two frame nodes (nsga.md §4,
//! §11.2, §11.4; contact-elements.md §2.3 "imposed rotation speeds").

use super::common::{distinct, finite, node, parse, perpendicular, rotation, unit_axis, v3};
use super::constraint::{BilateralConstraint, ConstraintUnits, KinCx, KinVec, Kinematics, Scalar};
use crate::joints::BilateralJoint;
use nalgebra::Vector3;
use saltus_core::element::{Element, OutputSpec};
use saltus_core::model::BuildError;
use saltus_core::node::{NodeDef, NodeId, NodeKind};
use saltus_core::registry::{BuildCx, ElementDef};
use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;

const TYPE_NAME: &str = "prescribed_rotation";
const KINDS: [NodeKind; 2] = [NodeKind::Frame, NodeKind::Frame];

/// `x` wrapped to `[−π, π]` (`x − 2π round(x/2π)`).
fn wrap(x: f64) -> f64 {
    x - TAU * (x / TAU).round()
}

/// Kinematics of the rotation driver: the rotation angle `φ` of node 2 relative to node 1 about
/// the axis fixed in body 1 follows `θ(t) = θ₀ + ω s(t) + α t²/2` (1 rheonomic constraint,
/// \[rad\]), with `s(t) = t`, or with a ramp time `T_r > 0` the half-cosine start
/// `s(t) = (t − T_r/π sin(π t/T_r))/2` for `t < T_r` and `T_r/2 + (t − T_r)` after (the speed
/// `ω (1 − cos(π t/T_r))/2` rises smoothly from 0 to `ω`, with zero acceleration at both ends):
///
/// ```text
/// φ = atan2((R₂ b₂) · (R₁ c₁), (R₂ b₂) · (R₁ b₁))
/// g = wrap(φ − θ(t)),   g_t = −θ̇(t) = −(ω ṡ(t) + α t)
/// ```
///
/// `b₁`, `c₁ = a₁ × b₁` are unit directions of body 1 perpendicular to its axis `a₁`, and `b₂`
/// is the direction of body 2 that coincides with `b₁` at the initial configuration, so `φ = 0`
/// initially (set `θ₀ = 0` for a consistent start). `wrap` maps to `[−π, π]`: the constraint is
/// smooth wherever `|φ − θ| mod 2π < π`, in particular at the solution, for any number of turns.
/// Only the angle is imposed: use it together with a revolute joint on the same pair of nodes.
/// The multiplier `k_s λ̃` is the driving torque \[N m\] applied to node 2 about the axis. At
/// the static level the angle is `θ(0) = θ₀`. Spec: nsga.md §4 (rheonomic `g_t`), §§5–6, §11.2.
#[derive(Clone, Debug, PartialEq)]
pub struct PrescribedRotationConstraint {
    nodes: [NodeId; 2],
    b1: Vector3<f64>,
    c1: Vector3<f64>,
    b2: Vector3<f64>,
    angle0: f64,
    angular_velocity: f64,
    angular_acceleration: f64,
    ramp_time: f64,
}

/// Rotation driver element (registered as `prescribed_rotation`); see
/// [`PrescribedRotationConstraint`].
pub type PrescribedRotation = BilateralJoint<PrescribedRotationConstraint>;

/// Model-file parameters of `prescribed_rotation` (nodes: two frame nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrescribedRotationSpec {
    /// Rotation axis \[-\] (inertial frame, initial configuration; fixed in body 1; normalised, must
    /// be nonzero).
    pub axis: [f64; 3],
    /// Angle `θ₀` at `t = 0` \[rad\] (default 0, consistent with the initial configuration).
    #[serde(default)]
    pub angle0: f64,
    /// Angular velocity `ω` \[rad/s\] (default 0).
    #[serde(default)]
    pub angular_velocity: f64,
    /// Angular acceleration `α` \[rad/s²\] (default 0).
    #[serde(default)]
    pub angular_acceleration: f64,
    /// Ramp time `T_r` \[s\], >= 0 (default 0: `ω` from the start): `ω` is reached from rest by
    /// a half-cosine speed ramp over `T_r`.
    #[serde(default)]
    pub ramp_time: f64,
}

impl PrescribedRotationConstraint {
    /// Driver of frame node `n2` relative to frame node `n1` of `nodes` about `axis` (inertial
    /// frame at the initial states) with `θ(t) = angle0 + angular_velocity t` \[rad\]. `element`
    /// names the element in errors.
    pub fn from_initial(
        element: &str,
        nodes: &[NodeDef],
        n1: NodeId,
        n2: NodeId,
        axis: Vector3<f64>,
        angle0: f64,
        angular_velocity: f64,
    ) -> Result<Self, BuildError> {
        let def1 = node(nodes, element, n1, Some(NodeKind::Frame))?;
        let def2 = node(nodes, element, n2, Some(NodeKind::Frame))?;
        distinct(element, n1, n2)?;
        let a = unit_axis(element, "axis", &axis)?;
        let b = perpendicular(&a);
        let c = a.cross(&b);
        let (r1t, r2t) = (rotation(def1).transpose(), rotation(def2).transpose());
        Ok(Self {
            nodes: [n1, n2],
            b1: r1t * b,
            c1: r1t * c,
            b2: r2t * b,
            angle0: finite(element, "angle0", angle0)?,
            angular_velocity: finite(element, "angular_velocity", angular_velocity)?,
            angular_acceleration: 0.0,
            ramp_time: 0.0,
        })
    }

    /// Set the ramp time `T_r` \[s\] of the half-cosine start (`element` names the element in
    /// errors); `T_r >= 0`, 0 for none.
    pub fn set_ramp_time(&mut self, element: &str, ramp_time: f64) -> Result<(), BuildError> {
        let t = finite(element, "ramp_time", ramp_time)?;
        if t < 0.0 {
            return Err(BuildError::InvalidParameter {
                element: element.to_string(),
                parameter: "ramp_time".into(),
                message: format!("must be >= 0 s, got {t}"),
            });
        }
        self.ramp_time = t;
        Ok(())
    }

    /// The ramped time `s(t)` and its rate `ṡ(t)` (type docs).
    fn ramp(&self, t: f64) -> (f64, f64) {
        let tr = self.ramp_time;
        if tr > 0.0 && t < tr {
            let a = std::f64::consts::PI / tr;
            (0.5 * (t - (a * t).sin() / a), 0.5 * (1.0 - (a * t).cos()))
        } else {
            (t - 0.5 * tr, 1.0)
        }
    }

    /// Set the angular acceleration `α` [rad/s²] (`element` names the element in errors).
    pub fn set_angular_acceleration(
        &mut self,
        element: &str,
        alpha: f64,
    ) -> Result<(), BuildError> {
        self.angular_acceleration = finite(element, "angular_acceleration", alpha)?;
        Ok(())
    }

    /// Prescribed angle `θ(t)` \[rad\].
    pub fn theta(&self, t: f64) -> f64 {
        self.angle0
            + self.angular_velocity * self.ramp(t).0
            + 0.5 * self.angular_acceleration * t * t
    }

    /// Prescribed angular velocity `θ̇(t)` \[rad/s\].
    pub fn theta_dot(&self, t: f64) -> f64 {
        self.angular_velocity * self.ramp(t).1 + self.angular_acceleration * t
    }

    /// Measured relative angle `φ` \[rad\] in `(−π, π]` with its derivatives.
    pub fn angle(&self, cx: &KinCx<'_>) -> Scalar {
        let u = KinVec::body(1, self.b2);
        let y = cx.dot(&u, &KinVec::body(0, self.c1));
        let x = cx.dot(&u, &KinVec::body(0, self.b1));
        Scalar::atan2(&y, &x)
    }
}

impl BilateralConstraint for PrescribedRotationConstraint {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }
    fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }
    fn node_kinds(&self) -> &[NodeKind] {
        &KINDS
    }
    fn n_constraints(&self) -> usize {
        1
    }
    fn evaluate(&self, cx: &KinCx<'_>, out: &mut Kinematics) {
        let mut g = self.angle(cx);
        g.value = wrap(g.value - self.theta(cx.t()));
        out.set_row(0, &g);
        out.add_g_t(0, -self.theta_dot(cx.t()));
    }
    fn units(&self) -> ConstraintUnits {
        ConstraintUnits::ANGLE
    }
    fn extra_outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec {
            name: "angle",
            len: 1,
            unit: "rad",
            description:
                "measured relative angle, unwrapped next to the prescribed θ(t) (θ(t) + g)",
        }]
    }
    fn write_extra_outputs(&self, cx: &KinCx<'_>, kin: &Kinematics, out: &mut [f64]) {
        out[0] = self.theta(cx.t()) + kin.g()[0];
    }
}

impl PrescribedRotation {
    /// Driver of frame node `n2` relative to frame node `n1` of `nodes` (e.g. `model.nodes()`)
    /// about `axis` (inertial frame at the initial configuration, fixed in body 1):
    /// `θ(t) = angle0 + angular_velocity · t` \[rad\]. Add an angular acceleration with
    /// [`PrescribedRotation::with_angular_acceleration`].
    pub fn new(
        nodes: &[NodeDef],
        n1: NodeId,
        n2: NodeId,
        axis: Vector3<f64>,
        angle0: f64,
        angular_velocity: f64,
    ) -> Result<Self, BuildError> {
        PrescribedRotationConstraint::from_initial(
            TYPE_NAME,
            nodes,
            n1,
            n2,
            axis,
            angle0,
            angular_velocity,
        )
        .and_then(BilateralJoint::from_constraint)
    }

    /// Add the angular acceleration `α` [rad/s²]: `θ(t) = θ₀ + ω t + α t²/2`.
    pub fn with_angular_acceleration(mut self, alpha: f64) -> Result<Self, BuildError> {
        self.constraint_mut()
            .set_angular_acceleration(TYPE_NAME, alpha)?;
        Ok(self)
    }

    /// Reach `ω` from rest by a half-cosine speed ramp over `ramp_time` \[s\] (see
    /// [`PrescribedRotationConstraint`]).
    pub fn with_ramp_time(mut self, ramp_time: f64) -> Result<Self, BuildError> {
        self.constraint_mut().set_ramp_time(TYPE_NAME, ramp_time)?;
        Ok(self)
    }
}

fn build(def: &ElementDef, cx: &BuildCx<'_>) -> Result<Box<dyn Element>, BuildError> {
    let ids = cx.resolve_nodes(def, &KINDS.map(Some))?;
    let spec: PrescribedRotationSpec = parse(def)?;
    let mut c = PrescribedRotationConstraint::from_initial(
        &def.name,
        cx.nodes,
        ids[0],
        ids[1],
        v3(spec.axis),
        spec.angle0,
        spec.angular_velocity,
    )?;
    c.set_angular_acceleration(&def.name, spec.angular_acceleration)?;
    c.set_ramp_time(&def.name, spec.ramp_time)?;
    Ok(Box::new(BilateralJoint::from_constraint(c)?))
}

saltus_core::register_element! {
    type_name: TYPE_NAME,
    summary: "Rheonomic driver: relative rotation of node 2 about an axis of node 1 equals θ(t)",
    build: build,
    example: || serde_json::json!({"axis": [0.0, 0.0, 1.0], "angular_velocity": 2.0}),
    example_nodes: &[NodeKind::Frame, NodeKind::Frame],
    params: PrescribedRotationSpec,
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{check_kin, check_levels, nan_vec, random_nodes, states};
    use super::*;
    use saltus_core::fd::Rng;
    use saltus_core::lie;
    use saltus_core::node::NodeState;

    fn driver(
        seed: u64,
        omega: f64,
        alpha: f64,
    ) -> (PrescribedRotation, Vec<NodeDef>, Vector3<f64>) {
        let mut rng = Rng::new(seed);
        let nodes = random_nodes(&KINDS, &mut rng);
        let axis = rng.vec3(1.0);
        let d = PrescribedRotation::new(&nodes, NodeId(0), NodeId(1), axis, 0.0, omega)
            .unwrap()
            .with_angular_acceleration(alpha)
            .unwrap();
        (d, nodes, axis.normalize())
    }

    /// Node states with body 2 turned by `angle` about the (spatial) axis relative to the
    /// initial configuration, and body 1 moved by an arbitrary rigid rotation together with it.
    fn turned(q: &[NodeState], axis: &Vector3<f64>, angle: f64) -> Vec<NodeState> {
        let common = lie::exp(&Vector3::new(0.7, -0.2, 0.4));
        let mut out = q.to_vec();
        out[1].r = lie::exp(&(axis * angle)) * q[1].r;
        for s in &mut out {
            s.r = common * s.r;
        }
        out
    }

    #[test]
    fn satisfied_at_initial_configuration() {
        for seed in 1..=5 {
            let (d, nodes, _) = driver(seed, 2.0, 0.5);
            // θ(0) = 0 = φ at the initial configuration; round-off 1e-14 is ~100 ulps.
            assert!(d.kinematics(&states(&nodes), 0.0).g().amax() < 1e-14);
        }
    }

    #[test]
    fn angle_is_correct_over_several_turns() {
        let (d, nodes, axis) = driver(3, 2.0, 0.0);
        let q = states(&nodes);
        for angle in [0.5, 3.0, 3.5, -3.5, 7.5, 20.0, -13.0] {
            let t = angle / 2.0;
            let q2 = turned(&q, &axis, angle);
            let kin = d.kinematics(&q2, t);
            // Round-off in atan2 of O(1) dot products and in the wrap: 1e-12.
            assert!(
                kin.g()[0].abs() < 1e-12,
                "angle {angle}: g = {}",
                kin.g()[0]
            );
            // Off by 0.1 rad: g = 0.1 whatever the number of turns.
            let kin = d.kinematics(&turned(&q, &axis, angle + 0.1), t);
            assert!(
                (kin.g()[0] - 0.1).abs() < 1e-12,
                "angle {angle}: g = {}",
                kin.g()[0]
            );
            let cx = KinCx::new(&q2, t, d.layout());
            let mut out = [0.0];
            d.constraint().write_extra_outputs(&cx, &kin, &mut out);
            assert!((out[0] - (angle + 0.1)).abs() < 1e-12);
        }
    }

    #[test]
    fn rate_includes_the_explicit_time_derivative() {
        let (d, nodes, axis) = driver(4, 2.0, 0.5);
        let mut q = turned(&states(&nodes), &axis, 1.0);
        // At rest: ġ = g_t = −θ̇(t).
        for s in &mut q {
            s.v = Vector3::zeros();
            s.omega = Vector3::zeros();
        }
        let t = 0.8;
        let kin = d.kinematics(&q, t);
        let v = d.layout().velocity(&q);
        assert!((kin.rate(&v)[0] + (2.0 + 0.5 * t)).abs() < 1e-14);
        // Node 2 spinning at θ̇(t) about the axis (spatial): ġ = 0.
        q[1].omega =
            q[1].r.inverse() * (q[0].r * (nodes[0].initial.r.inverse() * axis)) * (2.0 + 0.5 * t);
        let v = d.layout().velocity(&q);
        assert!(kin.rate(&v)[0].abs() < 1e-13);
    }

    /// The half-cosine ramp: `θ` and `θ̇` continuous at `T_r`, `θ̇ = dθ/dt` (central
    /// differences), the closed-form values at `T_r/2` and after, and `ġ` of the constraint
    /// against the time derivative of `g` on and after the ramp.
    #[test]
    fn half_cosine_ramp() {
        let (omega, tr) = (150.0, 0.05);
        let d = driver(5, omega, 0.0).0.with_ramp_time(tr).unwrap();
        let c = d.constraint();
        // θ(T_r/2) = ω (T_r/2 − T_r/π)/2, θ̇(T_r/2) = ω/2, θ(t ≥ T_r) = ω (t − T_r/2).
        let half = 0.5 * tr;
        assert!((c.theta(half) - 0.5 * omega * (half - tr / std::f64::consts::PI)).abs() < 1e-13);
        assert!((c.theta_dot(half) - 0.5 * omega).abs() < 1e-13);
        assert!((c.theta(0.2) - omega * (0.2 - 0.5 * tr)).abs() < 1e-12);
        assert_eq!(c.theta_dot(0.2), omega);
        assert_eq!((c.theta(0.0), c.theta_dot(0.0)), (0.0, 0.0));
        // Continuity at T_r (round-off of the sine: 1e-12 rad); θ̈(T_r) = 0, so θ̇ on either
        // side differs by round-off of ω only.
        let e = 1e-12;
        assert!((c.theta(tr - e) - c.theta(tr + e)).abs() < 1e-9);
        assert!((c.theta_dot(tr - e) - c.theta_dot(tr + e)).abs() < 1e-12);
        // θ̇ against central differences (step 1e-6 s: truncation ω (π/T_r)² δ²/6 ≈ 1e-7).
        for t in [0.001, 0.013, 0.031, 0.049, 0.06] {
            let fd = (c.theta(t + 1e-6) - c.theta(t - 1e-6)) / 2e-6;
            assert!(
                (fd - c.theta_dot(t)).abs() < 1e-6,
                "t = {t}: {fd} vs {}",
                c.theta_dot(t)
            );
        }
        // The constraint's rate (g_q v + g_t) against the time derivative of g.
        for t in [0.02, 0.07] {
            let err = check_kin(c, t, 5);
            assert!(err < 1e-6, "t = {t}: {err:e}");
        }
        assert!(matches!(
            driver(1, 1.0, 0.0).0.with_ramp_time(-1.0),
            Err(BuildError::InvalidParameter { ref parameter, .. }) if parameter == "ramp_time"
        ));
    }

    #[test]
    fn kinematics_match_finite_differences() {
        let (d, ..) = driver(3, 2.0, 0.5);
        let err = check_kin(d.constraint(), 0.37, 5);
        eprintln!("prescribed_rotation kinematics max FD error {err:e}");
    }

    #[test]
    fn hessians_match_finite_differences_at_all_levels() {
        for seed in [1, 6] {
            let (d, ..) = driver(seed, 2.0, 0.5);
            let err = check_levels(&d, 4);
            eprintln!("prescribed_rotation max relative FD error {err:e}");
        }
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let nodes = random_nodes(&KINDS, &mut Rng::new(1));
        assert!(matches!(
            PrescribedRotation::new(&nodes, NodeId(0), NodeId(1), Vector3::zeros(), 0.0, 1.0),
            Err(BuildError::InvalidParameter { ref parameter, .. }) if parameter == "axis"
        ));
        assert!(matches!(
            PrescribedRotation::new(&nodes, NodeId(0), NodeId(1), nan_vec(), 0.0, 1.0),
            Err(BuildError::InvalidParameter { ref parameter, .. }) if parameter == "axis"
        ));
        assert!(matches!(
            PrescribedRotation::new(&nodes, NodeId(0), NodeId(1), Vector3::z(), 0.0, f64::NAN),
            Err(BuildError::InvalidParameter { ref parameter, .. }) if parameter == "angular_velocity"
        ));
        let cx = BuildCx::new(&nodes);
        let def = |p: serde_json::Value| ElementDef {
            name: "crank_drive".into(),
            type_name: TYPE_NAME.into(),
            nodes: vec!["n0".into(), "n1".into()],
            parameters: p,
        };
        assert!(build(
            &def(serde_json::json!({"axis": [0, 0, 1], "angular_velocity": 3.0})),
            &cx
        )
        .is_ok());
        assert!(matches!(
            build(
                &def(serde_json::json!({"axis": [0, 0, 1], "speed": 3.0})),
                &cx
            ),
            Err(BuildError::Parameters { .. })
        ));
    }
}
