//! Nodes: 3-D frame nodes (position + rotation, 6 velocity unknowns) and point nodes
//! (position only, 3 unknowns), with their kinematic state.

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// Handle of a node in a [`crate::Model`] (index into its node list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index of the node in the model's node list.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What kind of unknowns a node carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// Position `x ∈ R³` and rotation `R ∈ SO(3)`; velocity unknowns `[ẋ; Ω]` with `Ω` the
    /// **material** angular velocity (`ω = R Ω`). 6 unknowns per level.
    Frame,
    /// Position `x ∈ R³` only; velocity `ẋ`. 3 unknowns per level.
    Point,
}

impl NodeKind {
    /// Number of unknowns the node contributes per level (6 or 3).
    #[inline]
    pub fn ndof(self) -> usize {
        match self {
            NodeKind::Frame => 6,
            NodeKind::Point => 3,
        }
    }
}

/// Kinematic state of one node at one instant or Newton iterate.
///
/// Units: `x` \[m\], `v` \[m/s\], `omega` \[rad/s\] (material frame), `vdot` \[m/s²\],
/// `omegadot` [rad/s²]. For point nodes `r` is the identity and the angular parts are zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeState {
    /// Position `x` \[m\] in the inertial frame.
    pub x: Vector3<f64>,
    /// Rotation `R` (body → inertial), as a unit quaternion.
    pub r: UnitQuaternion<f64>,
    /// Translational velocity `ẋ` \[m/s\].
    pub v: Vector3<f64>,
    /// Material angular velocity `Ω` \[rad/s\].
    pub omega: Vector3<f64>,
    /// Translational (smooth) acceleration `ẍ` \[m/s²\].
    pub vdot: Vector3<f64>,
    /// Material (smooth) angular acceleration `Ω̇` [rad/s²].
    pub omegadot: Vector3<f64>,
}

impl Default for NodeState {
    fn default() -> Self {
        Self {
            x: Vector3::zeros(),
            r: UnitQuaternion::identity(),
            v: Vector3::zeros(),
            omega: Vector3::zeros(),
            vdot: Vector3::zeros(),
            omegadot: Vector3::zeros(),
        }
    }
}

impl NodeState {
    /// A node at rest at `x` with orientation `r`.
    pub fn at(x: Vector3<f64>, r: UnitQuaternion<f64>) -> Self {
        Self {
            x,
            r,
            ..Self::default()
        }
    }

    /// Spatial angular velocity `ω = R Ω` \[rad/s\].
    #[inline]
    pub fn omega_spatial(&self) -> Vector3<f64> {
        self.r * self.omega
    }
}

/// Definition of a node in a model: name, kind, initial state and whether it is fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeDef {
    /// Unique name (used in model files, HDF5 `/nodes/names` and error messages).
    pub name: String,
    /// Frame or point node.
    pub kind: NodeKind,
    /// Initial state at `t = 0` (accelerations are recomputed by the solver).
    pub initial: NodeState,
    /// A fixed node has no unknowns: it keeps its initial state, or follows `motion`.
    pub fixed: bool,
    /// Prescribed motion of a fixed node (`None`: at rest in its initial state).
    pub motion: Option<PrescribedMotion>,
}

/// Kinematics imposed on a node that has no unknowns (a moving support, a driven frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrescribedMotion {
    /// Uniform motion from the initial state: `x(t) = x₀ + v t`, `R(t) = exp(hat(ω t)) R₀` with
    /// the translational velocity `v` \[m/s\] and the **spatial** angular velocity `ω` \[rad/s\]
    /// constant.
    ConstantVelocity {
        /// Translational velocity `v` \[m/s\].
        velocity: Vector3<f64>,
        /// Spatial angular velocity `ω` \[rad/s\].
        angular_velocity: Vector3<f64>,
    },
}

impl PrescribedMotion {
    /// State at time `t` \[s\] of a node whose state at `t = 0` is `initial`.
    pub fn state_at(&self, initial: &NodeState, t: f64) -> NodeState {
        match *self {
            PrescribedMotion::ConstantVelocity {
                velocity,
                angular_velocity,
            } => {
                let r = UnitQuaternion::from_scaled_axis(angular_velocity * t) * initial.r;
                NodeState {
                    x: initial.x + velocity * t,
                    r,
                    v: velocity,
                    omega: r.inverse() * angular_velocity,
                    vdot: Vector3::zeros(),
                    omegadot: Vector3::zeros(),
                }
            }
        }
    }
}
