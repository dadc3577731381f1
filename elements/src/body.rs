//! Inertial elements: the rigid body (frame node at the centre of mass) and the point mass
//! (point node), both carrying their own weight.
//!
//! Material (Géradin–Cardona) form, `contact-elements.md` §2.1: with the node velocity
//! `[ẋ; Ω]` (`Ω` the material angular velocity) the equations of motion are
//!
//! ```text
//! m ẍ            = m g + f_x
//! J Ω̇ + Ω × J Ω  = m_mat
//! ```
//!
//! with the **constant** material mass matrix `M = diag(m I, J)` and the gyroscopic moment
//! `−Ω × JΩ` as the inertial force ([`saltus_core::Inertia`]), and the weight `m g` as the
//! applied force ([`saltus_core::Force`]). The stage assembly ([`saltus_core::stage`]) forms
//! every stage's residual and Hessian from them.

use nalgebra::DMatrixViewMut;
use nalgebra::{Matrix3, SymmetricEigen, Vector3};
use saltus_core::physics::Dependence;
use saltus_core::physics::{add_gyroscopic, rigid_mass_matrix};
use saltus_core::registry::{parse_params, require_positive};
use saltus_core::{
    BuildCx, BuildError, Element, ElementDef, ElementError, Force, ForceTerms, Inertia, NodeId,
    NodeInertia, NodeKind, PhysicsState,
};
use serde::{Deserialize, Serialize};

/// Relative tolerance on the asymmetry `max|J − Jᵀ| / max|J|` of a full inertia tensor.
const SYMMETRY_TOL: f64 = 1e-9;

use saltus_core::registry::invalid;

const RIGID_BODY: &str = "rigid_body";
const POINT_MASS: &str = "point_mass";

fn check_mass(element: &str, mass: f64) -> Result<(), BuildError> {
    saltus_core::registry::check_positive(element, "mass", mass).map(|_| ())
}

/// Validate an inertia tensor (finite, symmetric, positive definite) and return its exactly
/// symmetric part.
fn check_inertia(element: &str, j: &Matrix3<f64>) -> Result<Matrix3<f64>, BuildError> {
    if !j.iter().all(|v| v.is_finite()) {
        return Err(invalid(
            element,
            "inertia",
            format!("must be finite, got {j}"),
        ));
    }
    let scale = j.amax();
    let asym = (j - j.transpose()).amax();
    if asym > SYMMETRY_TOL * scale {
        return Err(invalid(
            element,
            "inertia",
            format!("must be symmetric (max |J - J^T| = {asym:e}), got {j}"),
        ));
    }
    let sym = 0.5 * (j + j.transpose());
    let eig = SymmetricEigen::new(sym).eigenvalues;
    let min_eig = eig.min();
    if min_eig.is_nan() || min_eig <= 0.0 {
        return Err(invalid(
            element,
            "inertia",
            format!("must be positive definite (smallest eigenvalue {min_eig:e} kg m^2)"),
        ));
    }
    // A body's principal moments obey the triangle inequality J₁ + J₂ ≥ J₃ (J₃ = Σ m (x² + y²)
    // ≤ Σ m (y² + z²) + Σ m (x² + z²)); a tensor that violates it belongs to no body. Round-off
    // of the eigen-solve allowed (a thin disc or rod sits exactly on the bound).
    let (big, sum) = (eig.max(), eig.sum());
    if sum - big < big * (1.0 - 1e-9) {
        return Err(invalid(
            element,
            "inertia",
            format!(
                "principal moments {:e}, {:e}, {:e} kg m^2 violate the triangle inequality \
                 (the largest must not exceed the sum of the other two): no body has them",
                eig[0], eig[1], eig[2]
            ),
        ));
    }
    Ok(sym)
}

/// Inertia tensor parameter of a [`RigidBodySpec`], in the body frame, about the centre of
/// mass \[kg m²\].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum InertiaSpec {
    /// Principal moments `[Jxx, Jyy, Jzz]` \[kg m²\] about the body axes (all > 0).
    Principal([f64; 3]),
    /// Full symmetric positive-definite tensor, row by row
    /// `[[Jxx, Jxy, Jxz], [Jyx, Jyy, Jyz], [Jzx, Jzy, Jzz]]` \[kg m²\].
    Full([[f64; 3]; 3]),
}

impl InertiaSpec {
    /// The tensor as a matrix (not validated).
    pub fn matrix(&self) -> Matrix3<f64> {
        match self {
            InertiaSpec::Principal(d) => Matrix3::from_diagonal(&Vector3::from(*d)),
            InertiaSpec::Full(rows) => Matrix3::from_fn(|i, k| rows[i][k]),
        }
    }
}

/// Model-file parameters of `rigid_body`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RigidBodySpec {
    /// Mass `m` \[kg\], finite and > 0.
    pub mass: f64,
    /// Inertia `J` about the centre of mass in the body frame \[kg m²\]: principal moments
    /// `[Jxx, Jyy, Jzz]` or a full symmetric positive-definite 3×3 tensor.
    pub inertia: InertiaSpec,
}

/// Rigid body on one frame node placed at its centre of mass (`contact-elements.md` §2.1,
/// `nsga.md` §4–§6, §11.2).
///
/// Inertia `M = diag(m I, J)`, inertial force `[0 ; −Ω × JΩ]`, applied force `[m g ; 0]`
/// (`m` \[kg\], `J` \[kg m²\] in the body frame, `g` \[m/s²\], `Ω` \[rad/s\] material).
/// Energy: kinetic `½ m |v|² + ½ ΩᵀJΩ`, potential `−m g·x` \[J\].
#[derive(Clone, Debug, PartialEq)]
pub struct RigidBody {
    node: [NodeId; 1],
    mass: f64,
    inertia: Matrix3<f64>,
    lumped: [NodeInertia; 1],
}

impl RigidBody {
    /// A rigid body of mass `mass` \[kg\] and inertia `inertia` \[kg m²\] (body frame, about the
    /// centre of mass = the frame node). Errors on a non-positive mass or a non-symmetric /
    /// non-positive-definite inertia.
    pub fn new(node: NodeId, mass: f64, inertia: Matrix3<f64>) -> Result<Self, BuildError> {
        Self::checked(&format!("<{RIGID_BODY}>"), node, mass, &inertia)
    }

    /// A rigid body with principal moments `[Jxx, Jyy, Jzz]` \[kg m²\] along the body axes.
    pub fn principal(node: NodeId, mass: f64, moments: Vector3<f64>) -> Result<Self, BuildError> {
        Self::new(node, mass, Matrix3::from_diagonal(&moments))
    }

    /// A homogeneous sphere of mass `mass` \[kg\] and radius `radius` \[m\]: `J = (2/5) m r² I`.
    pub fn sphere(node: NodeId, mass: f64, radius: f64) -> Result<Self, BuildError> {
        if !(radius.is_finite() && radius > 0.0) {
            return Err(invalid(
                &format!("<{RIGID_BODY}>"),
                "radius",
                format!("must be finite and > 0, got {radius}"),
            ));
        }
        check_mass(&format!("<{RIGID_BODY}>"), mass)?;
        Self::new(
            node,
            mass,
            Matrix3::identity() * (0.4 * mass * radius * radius),
        )
    }

    fn checked(
        element: &str,
        node: NodeId,
        mass: f64,
        inertia: &Matrix3<f64>,
    ) -> Result<Self, BuildError> {
        check_mass(element, mass)?;
        let inertia = check_inertia(element, inertia)?;
        Ok(Self {
            node: [node],
            mass,
            inertia,
            lumped: [NodeInertia { mass, inertia }],
        })
    }

    /// Material inertia tensor `J` \[kg m²\] (body frame, about the node).
    pub fn inertia(&self) -> &Matrix3<f64> {
        &self.inertia
    }
}

/// Build a `rigid_body` from a model-file entry (one frame node).
pub fn build_rigid_body(
    def: &ElementDef,
    cx: &BuildCx<'_>,
) -> Result<Box<dyn Element>, BuildError> {
    let nodes = cx.resolve_nodes(def, &[Some(NodeKind::Frame)])?;
    let spec: RigidBodySpec = parse_params(def)?;
    require_positive(def, "mass", spec.mass)?;
    Ok(Box::new(RigidBody::checked(
        &def.name,
        nodes[0],
        spec.mass,
        &spec.inertia.matrix(),
    )?))
}

fn rigid_body_example() -> serde_json::Value {
    serde_json::json!({
        "mass": 2.0,
        "inertia": [[0.3, 0.01, -0.02], [0.01, 0.4, 0.03], [-0.02, 0.03, 0.5]],
    })
}

saltus_core::register_element! {
    type_name: RIGID_BODY,
    summary: "Rigid body (mass, inertia tensor, own weight) on a frame node at its centre of mass",
    build: build_rigid_body,
    example: rigid_body_example,
    example_nodes: &[NodeKind::Frame],
    params: RigidBodySpec,
}

impl Inertia for RigidBody {
    fn total_mass(&self) -> f64 {
        self.mass
    }

    fn mass_matrix(&self, _kinds: &[NodeKind], m: &mut DMatrixViewMut<'_, f64>) {
        rigid_mass_matrix(self.mass, &self.inertia, 0, m);
    }

    fn node_inertia(&self) -> Option<&[NodeInertia]> {
        Some(&self.lumped)
    }

    fn inertial_force(
        &self,
        s: &PhysicsState<'_>,
        out: &mut ForceTerms<'_>,
    ) -> Result<(), ElementError> {
        add_gyroscopic(&self.inertia, &s.nodes[0].omega, 0, s.tangents, out);
        Ok(())
    }

    fn inertial_force_dependence(&self) -> Dependence {
        Dependence::VELOCITY
    }
}

impl Force for RigidBody {
    /// Weight `m g` on the centre of mass.
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        out.add_force(0, &(self.mass * s.gravity));
        Ok(())
    }

    fn dependence(&self) -> Dependence {
        Dependence::NONE
    }

    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        // Gravity: V = −m g·x.
        -self.mass * s.gravity.dot(&s.nodes[0].x)
    }
}

impl Element for RigidBody {
    /// No per-level history: the stage skips this element after a level converges.
    fn level_hook(&self, _level: saltus_core::Level) -> saltus_core::LevelHook {
        saltus_core::LevelHook::Skip
    }
    fn type_name(&self) -> &'static str {
        RIGID_BODY
    }

    fn nodes(&self) -> &[NodeId] {
        &self.node
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(NodeKind::Frame)]
    }

    fn as_inertia(&self) -> Option<&dyn Inertia> {
        Some(self)
    }

    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }
}

/// Model-file parameters of `point_mass`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PointMassSpec {
    /// Mass `m` \[kg\], finite and > 0.
    pub mass: f64,
}

/// Point mass on one point node (translational part of [`RigidBody`], `nsga.md` §4–§6, §11.2).
///
/// Inertia `M = m I`, applied force `m g` \[N\].
/// Energy: kinetic `½ m |v|²`, potential `−m g·x` \[J\].
#[derive(Clone, Debug, PartialEq)]
pub struct PointMass {
    node: [NodeId; 1],
    mass: f64,
    lumped: [NodeInertia; 1],
}

impl PointMass {
    /// A point mass of `mass` \[kg\] (finite, > 0) on the point node `node`.
    pub fn new(node: NodeId, mass: f64) -> Result<Self, BuildError> {
        check_mass(&format!("<{POINT_MASS}>"), mass)?;
        Ok(Self::unchecked(node, mass))
    }
}

/// Build a `point_mass` from a model-file entry (one point node).
pub fn build_point_mass(
    def: &ElementDef,
    cx: &BuildCx<'_>,
) -> Result<Box<dyn Element>, BuildError> {
    let nodes = cx.resolve_nodes(def, &[Some(NodeKind::Point)])?;
    let spec: PointMassSpec = parse_params(def)?;
    require_positive(def, "mass", spec.mass)?;
    Ok(Box::new(PointMass::unchecked(nodes[0], spec.mass)))
}

fn point_mass_example() -> serde_json::Value {
    serde_json::json!({ "mass": 1.5 })
}

saltus_core::register_element! {
    type_name: POINT_MASS,
    summary: "Point mass with its own weight on a point node",
    build: build_point_mass,
    example: point_mass_example,
    example_nodes: &[NodeKind::Point],
    params: PointMassSpec,
}

impl PointMass {
    fn unchecked(node: NodeId, mass: f64) -> Self {
        Self {
            node: [node],
            mass,
            lumped: [NodeInertia {
                mass,
                inertia: Matrix3::zeros(),
            }],
        }
    }
}

impl Inertia for PointMass {
    fn total_mass(&self) -> f64 {
        self.mass
    }

    fn node_inertia(&self) -> Option<&[NodeInertia]> {
        Some(&self.lumped)
    }

    fn mass_matrix(&self, _kinds: &[NodeKind], m: &mut DMatrixViewMut<'_, f64>) {
        for i in 0..3 {
            m[(i, i)] += self.mass;
        }
    }
}

impl Force for PointMass {
    /// Weight `m g`.
    fn force(&self, s: &PhysicsState<'_>, out: &mut ForceTerms<'_>) -> Result<(), ElementError> {
        out.add_force(0, &(self.mass * s.gravity));
        Ok(())
    }

    fn dependence(&self) -> Dependence {
        Dependence::NONE
    }

    fn potential_energy(&self, s: &PhysicsState<'_>) -> f64 {
        // Gravity: V = −m g·x.
        -self.mass * s.gravity.dot(&s.nodes[0].x)
    }
}

impl Element for PointMass {
    /// No per-level history: the stage skips this element after a level converges.
    fn level_hook(&self, _level: saltus_core::Level) -> saltus_core::LevelHook {
        saltus_core::LevelHook::Skip
    }
    fn type_name(&self) -> &'static str {
        POINT_MASS
    }

    fn nodes(&self) -> &[NodeId] {
        &self.node
    }

    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        vec![Some(NodeKind::Point)]
    }

    fn as_inertia(&self) -> Option<&dyn Inertia> {
        Some(self)
    }

    fn as_force(&self) -> Option<&dyn Force> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::param_error;
    use nalgebra::{DMatrix, DVector, UnitQuaternion};
    use saltus_core::fd::{check_hessian, eval_local, test_cx, LocalFixture, Rng};
    use saltus_core::stage::{evaluate_element, participates, Scratch};
    use saltus_core::{Level, LocalState, LocalSystem, NodeDef, NodeState};

    /// Central differences with ε = 1e-6: truncation O(ε²)·|r'''| ≈ 1e-12 and round-off
    /// ≈ 1e-16·|r|/ε ≈ 1e-10, so 1e-6 leaves a wide margin yet catches any missing Hessian
    /// term of relative size ≥ 1e-6.
    const FD_TOL: f64 = 1e-6;
    const ALL_LEVELS: [Level; 4] = [
        Level::Smooth,
        Level::Position,
        Level::Velocity,
        Level::Static,
    ];

    fn fd_check(e: &dyn Element, kinds: &[NodeKind]) -> f64 {
        let mut worst: f64 = 0.0;
        for level in ALL_LEVELS {
            assert!(participates(e, level));
            for seed in 1..=6u64 {
                let fx = LocalFixture::random(kinds, 0, 0, 0.3, &mut Rng::new(seed));
                let rep = check_hessian(e, &test_cx(level), &fx, 1e-6).unwrap();
                assert!(
                    rep.relative_error() < FD_TOL,
                    "{} {level} seed {seed}: rel. error {:e} at {:?}\nanalytic {}\nnumeric {}",
                    e.type_name(),
                    rep.relative_error(),
                    rep.worst,
                    rep.analytic,
                    rep.numeric
                );
                worst = worst.max(rep.relative_error());
            }
        }
        worst
    }

    fn body() -> RigidBody {
        RigidBody::new(
            NodeId(0),
            2.0,
            Matrix3::new(0.3, 0.01, -0.02, 0.01, 0.4, 0.03, -0.02, 0.03, 0.5),
        )
        .unwrap()
    }

    #[test]
    fn rigid_body_hessians_match_finite_differences() {
        let worst = fd_check(&body(), &[NodeKind::Frame]);
        eprintln!("rigid_body max FD relative error {worst:e}");
    }

    #[test]
    fn point_mass_hessians_match_finite_differences() {
        let worst = fd_check(&PointMass::new(NodeId(0), 1.5).unwrap(), &[NodeKind::Point]);
        eprintln!("point_mass max FD relative error {worst:e}");
    }

    fn eval(e: &dyn Element, level: Level, fx: &LocalFixture) -> (DVector<f64>, DMatrix<f64>) {
        eval_local(e, &test_cx(level), fx, &fx.incr, &fx.mult).unwrap()
    }

    fn fixture(state: NodeState, kind: NodeKind) -> LocalFixture {
        let mut fx = LocalFixture::random(&[kind], 0, 0, 0.0, &mut Rng::new(1));
        fx.prev[0] = state;
        fx.smooth[0] = state;
        fx.incr[0] = nalgebra::Vector6::zeros();
        fx
    }

    #[test]
    fn node_inertia_agrees_with_the_mass_matrix() {
        // The stage uses the per-node blocks; they must describe the same M as mass_matrix.
        let point = PointMass::new(NodeId(0), 1.5).unwrap();
        let body = body();
        let cases: [(&dyn Inertia, NodeKind); 2] =
            [(&body, NodeKind::Frame), (&point, NodeKind::Point)];
        for (inertia, kind) in cases {
            let n = kind.ndof();
            let mut dense = DMatrix::zeros(n, n);
            inertia.mass_matrix(&[kind], &mut dense.view_mut((0, 0), (n, n)));
            let b = inertia.node_inertia().unwrap()[0];
            let mut blocks = DMatrix::zeros(n, n);
            for d in 0..3 {
                blocks[(d, d)] = b.mass;
            }
            if kind == NodeKind::Frame {
                blocks.view_mut((3, 3), (3, 3)).copy_from(&b.inertia);
            }
            assert_eq!(dense, blocks);
        }
    }

    #[test]
    fn gyroscopic_term_for_a_known_state() {
        // J = diag(1, 2, 3), Ω = (1, 1, 0): Ω × JΩ = (1,1,0) × (1,2,0) = (0, 0, 1).
        let b = RigidBody::principal(NodeId(0), 4.0, Vector3::new(1.0, 2.0, 3.0)).unwrap();
        let mut st = NodeState::at(Vector3::zeros(), UnitQuaternion::identity());
        st.omega = Vector3::new(1.0, 1.0, 0.0);
        let (r, _) = eval(&b, Level::Smooth, &fixture(st, NodeKind::Frame));
        let g = test_cx(Level::Smooth).gravity;
        // Exact arithmetic on small integers and one product by the gravity vector.
        assert!((r.fixed_rows::<3>(0) - (-4.0 * g)).norm() < 1e-14, "{r}");
        assert!(
            (r.fixed_rows::<3>(3) - Vector3::new(0.0, 0.0, 1.0)).norm() < 1e-14,
            "{r}"
        );
    }

    #[test]
    fn velocity_level_gyroscopic_difference() {
        // Ω̃ = (1,1,0), W_Θ = (0,0,1): Ω = (1,1,1), JΩ = (1,2,3), Ω×JΩ = (1,-2,1);
        // r_Θ = J W_Θ + h (Ω×JΩ − Ω̃×JΩ̃) = (0,0,3) + h (1,-2,0).
        let b = RigidBody::principal(NodeId(0), 4.0, Vector3::new(1.0, 2.0, 3.0)).unwrap();
        let st = NodeState {
            omega: Vector3::new(1.0, 1.0, 0.0),
            ..NodeState::default()
        };
        let mut fx = fixture(st, NodeKind::Frame);
        fx.incr[0][5] = 1.0;
        let (r, _) = eval(&b, Level::Velocity, &fx);
        let h = test_cx(Level::Velocity).force_weight;
        let expect = Vector3::new(h, -2.0 * h, 3.0);
        assert!((r.fixed_rows::<3>(3) - expect).norm() < 1e-14, "{r}");
    }

    #[test]
    fn static_and_position_residuals() {
        let b = body();
        let cx = test_cx(Level::Static);
        let fx = LocalFixture::random(&[NodeKind::Frame], 0, 0, 0.3, &mut Rng::new(3));
        let (r, h) = eval(&b, Level::Static, &fx);
        assert!((r.fixed_rows::<3>(0) + cx.t * 2.0 * cx.gravity).norm() < 1e-14);
        assert_eq!(r.fixed_rows::<3>(3).norm(), 0.0);
        assert_eq!(h.norm(), 0.0);
        let (r, _) = eval(&b, Level::Position, &fx);
        let u = fx.incr[0];
        assert!((r.fixed_rows::<3>(0) - 2.0 * u.fixed_rows::<3>(0)).norm() < 1e-14);
        assert!((r.fixed_rows::<3>(3) - b.inertia() * u.fixed_rows::<3>(3)).norm() < 1e-14);
    }

    #[test]
    fn energy_formulas() {
        let b = RigidBody::principal(NodeId(0), 2.0, Vector3::new(1.0, 2.0, 3.0)).unwrap();
        let mut st = NodeState::at(Vector3::new(0.0, 0.0, 1.5), UnitQuaternion::identity());
        st.v = Vector3::new(1.0, 2.0, 0.0);
        st.omega = Vector3::new(0.0, 1.0, 1.0);
        let nodes = [st];
        let os = saltus_core::OutputState {
            t: 0.0,
            nodes: &nodes,
            kinds: &[NodeKind::Frame],
            mult_smooth: &[],
            mult_position: &[],
            mult_velocity: &[],
            k: [1.0; 3],
            h: 1e-3,
            gravity: Vector3::new(0.0, 0.0, -9.81),
        };
        let e = b.energy(&os);
        // ½·2·5 + ½(2 + 3) = 7.5; −m g·x = 2·9.81·1.5 = 29.43.
        assert!((e.kinetic - 7.5).abs() < 1e-14);
        assert!((e.potential - 29.43).abs() < 1e-12);
        let pm = PointMass::new(NodeId(0), 2.0).unwrap();
        let e = pm.energy(&os);
        assert!((e.kinetic - 5.0).abs() < 1e-14);
        assert!((e.potential - 29.43).abs() < 1e-12);
    }

    #[test]
    fn smooth_reference_sums_force_terms() {
        let b = RigidBody::principal(NodeId(0), 4.0, Vector3::new(1.0, 2.0, 3.0)).unwrap();
        let st = NodeState {
            omega: Vector3::new(1.0, 1.0, 0.0),
            ..NodeState::default()
        };
        let fx = fixture(st, NodeKind::Frame);
        let cx = test_cx(Level::Smooth);
        let (nodes, tangents) = fx.states(&cx, &fx.incr);
        let mut r = DVector::zeros(6);
        let mut h = DMatrix::zeros(6, 6);
        let s = LocalState {
            kinds: &fx.kinds,
            nodes: &nodes,
            prev: &fx.prev,
            smooth: &nodes,
            rot_tangent: &tangents,
            incr: &fx.incr,
            mult: &[],
            mult_smooth: &[],
            admissible: true,
            memo: None,
            base: None,
        };
        let mut out = LocalSystem {
            residual: r.rows_mut(0, 6),
            hessian: h.view_mut((0, 0), (6, 6)),
            reference: 0.0,
        };
        evaluate_element(&b, &cx, &s, &mut out, &mut Scratch::new(1, 6)).unwrap();
        let expect = 4.0 * cx.gravity.norm() + 1.0;
        assert!((out.reference - expect).abs() < 1e-12);
    }

    fn def(params: serde_json::Value, node: &str) -> ElementDef {
        ElementDef {
            name: "b".into(),
            type_name: "rigid_body".into(),
            nodes: vec![node.into()],
            parameters: params,
        }
    }

    #[test]
    fn build_validates_parameters() {
        let nodes = [
            NodeDef::frame("f", Vector3::zeros()),
            NodeDef::point("p", Vector3::zeros()),
        ];
        let cx = BuildCx::new(&nodes);
        let ok = build_rigid_body(
            &def(
                serde_json::json!({"mass": 1.0, "inertia": [1.0, 2.0, 2.5]}),
                "f",
            ),
            &cx,
        )
        .unwrap();
        assert_eq!(ok.mass(), 1.0);
        assert!(build_rigid_body(&def(rigid_body_example(), "f"), &cx).is_ok());
        let bad = |p| param_error(build_rigid_body(&def(p, "f"), &cx));
        assert_eq!(
            bad(serde_json::json!({"mass": -1.0, "inertia": [1.0, 1.0, 1.0]})),
            "mass"
        );
        assert_eq!(
            bad(serde_json::json!({"mass": 0.0, "inertia": [1.0, 1.0, 1.0]})),
            "mass"
        );
        assert_eq!(
            bad(serde_json::json!({"mass": 1.0, "inertia": [1.0, 0.0, 1.0]})),
            "inertia"
        );
        assert_eq!(
            bad(
                serde_json::json!({"mass": 1.0, "inertia": [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]})
            ),
            "inertia"
        );
        assert_eq!(
            bad(
                serde_json::json!({"mass": 1.0, "inertia": [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]})
            ),
            "inertia"
        );
        // Unknown field and wrong node kind.
        assert!(matches!(
            build_rigid_body(
                &def(
                    serde_json::json!({"mass": 1.0, "inertia": [1.0, 1.0, 1.0], "massa": 2}),
                    "f"
                ),
                &cx
            ),
            Err(BuildError::Parameters { .. })
        ));
        assert!(matches!(
            build_rigid_body(
                &def(
                    serde_json::json!({"mass": 1.0, "inertia": [1.0, 1.0, 1.0]}),
                    "p"
                ),
                &cx
            ),
            Err(BuildError::NodeKind { .. })
        ));
        // Point mass.
        let pdef = ElementDef {
            name: "pm".into(),
            type_name: "point_mass".into(),
            nodes: vec!["p".into()],
            parameters: serde_json::json!({"mass": -2.0}),
        };
        assert_eq!(param_error(build_point_mass(&pdef, &cx)), "mass");
        // Code-first constructors reject NaN and zero radius.
        assert!(RigidBody::new(NodeId(0), f64::NAN, Matrix3::identity()).is_err());
        assert!(RigidBody::new(NodeId(0), 1.0, Matrix3::identity() * f64::NAN).is_err());
        assert!(RigidBody::sphere(NodeId(0), 1.0, 0.0).is_err());
        assert!(PointMass::new(NodeId(0), f64::NAN).is_err());
        let s = RigidBody::sphere(NodeId(0), 2.0, 0.5).unwrap();
        assert!((s.inertia() - Matrix3::identity() * 0.2).norm() < 1e-15);
    }
}

#[cfg(test)]
mod inertia_tests {
    use super::*;

    /// The issue's example [0.001, 0.001, 0.01] (the largest moment ten times the others) is
    /// refused by name; a thin disc (J₃ = J₁ + J₂ exactly) and a rotated tensor of a real body
    /// are accepted.
    #[test]
    fn inertia_must_satisfy_the_triangle_inequality() {
        let e = RigidBody::principal(NodeId(0), 1.0, Vector3::new(0.001, 0.001, 0.01)).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("inertia") && msg.contains("triangle inequality"),
            "{msg}"
        );
        // Disc of radius 0.1 m, 2 kg: J = m r²/4, m r²/4, m r²/2.
        assert!(RigidBody::principal(NodeId(0), 2.0, Vector3::new(0.005, 0.005, 0.01)).is_ok());
        let r = nalgebra::Rotation3::from_euler_angles(0.3, -0.7, 1.1);
        let j = r * Matrix3::from_diagonal(&Vector3::new(0.3, 0.4, 0.5)) * r.transpose();
        assert!(RigidBody::new(NodeId(0), 2.0, j).is_ok());
    }
}
