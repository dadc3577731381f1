//! The roller–crank mechanism of validation cases V05/V06 (thesis Ch. 3.1.3, A.6), shared by
//! `tests/roller_crank.rs` (rigid) and `tests/roller_crank_flexible.rs` (rigid vs flexible rod).
//!
//! Crank (0.1 m, 0.12 kg, 0.002 kg m²) hinged to the ground, connecting rod (0.3 m, 0.3 kg,
//! 0.002 kg m²; or 8 geometrically exact beam elements, A = 1.1323e-4 m², I = 1.0685e-9 m⁴,
//! E = 4.14e9 Pa, ν = 0.3, ρ = 7850 kg/m³), spherical roller (r = 0.05 m, 0.1 kg, 0.001 kg m²)
//! hinged to the rod and in frictional contact (μ = 0.1, e_N = e_T = 0) with the plane y = 0;
//! perfect revolute joints about Z. The thesis gives the layout only in a figure: the crank
//! pivot is at the roller centre's height (0, r) and the crank starts vertical, so the roller
//! sits at (√(l² − c²), r). Initial crank speed 4 rad/s, roller spin 8 rad/s counter-clockwise,
//! rod and roller with the rigid slider–crank velocities at θ = 90°. Besides the two rods of
//! the thesis, [`Rod::Stiffened`] scales the flexible rod's E and [`Rod::BeamLimit`] is the
//! rigid body it tends to as E → ∞ (for the rigid-limit test of V06).

#![allow(dead_code)]

use saltus::elements::beam::{BeamBuilder, BeamSpec};
use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;
use std::f64::consts::PI;

/// Crank length \[m\].
pub const LC: f64 = 0.1;
/// Rod length \[m\].
pub const LR: f64 = 0.3;
/// Roller radius \[m\].
pub const R: f64 = 0.05;
/// Initial crank speed \[rad/s\].
pub const WC: f64 = 4.0;
/// Initial roller spin \[rad/s\].
pub const WR: f64 = 8.0;
/// Roller–plane friction coefficient.
pub const MU: f64 = 0.1;
/// Beam data of the flexible rod (V06).
pub const E: f64 = 4.14e9;
pub const NU: f64 = 0.3;
pub const RHO: f64 = 7850.0;
pub const AREA: f64 = 1.1323e-4;
pub const INERTIA: f64 = 1.0685e-9;
/// Beam elements of the flexible rod.
pub const N_EL: usize = 8;

/// Rigid or flexible connecting rod.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rod {
    /// Rigid rod of the thesis' Table 3.1 (0.3 kg, 0.002 kg m²).
    Rigid,
    /// The flexible rod (V06 beam data).
    Flexible,
    /// The flexible rod with Young's modulus `E` multiplied by the factor (shear modulus with
    /// it, `ν` unchanged): the same mass distribution, all compliances divided by the factor.
    Stiffened(f64),
    /// The rigid limit of the flexible rod: one rigid body with the beam's mass
    /// ([`beam_rod_mass`]) and central inertia about z ([`beam_rod_inertia_z`]), so that
    /// `Stiffened(s)` tends to it as `s → ∞`.
    BeamLimit,
}

/// Mass of the beam rod, `ρ A l` \[kg\].
pub fn beam_rod_mass() -> f64 {
    RHO * AREA * LR
}

/// Central moment of inertia about z of the beam rod moving rigidly \[kg m²\]: the consistent
/// translational mass carries `ρ A l³/12` exactly for a rigid motion, and the lumped nodal
/// section inertias add `ρ I l` (rotation about the section axis z).
pub fn beam_rod_inertia_z() -> f64 {
    RHO * AREA * LR.powi(3) / 12.0 + RHO * INERTIA * LR
}

/// The mechanism (nodes: ground, crank, rod (rigid) or rod_a, rod_b, …, roller; elements crank,
/// rod, roller bodies, joints bearing, crank_pin, wrist_pin, contact ground_contact), with
/// rolling resistance `rolling` \[m\] at the roller.
pub fn roller_crank_model(rod: Rod, rolling: f64) -> Model {
    let mut model = Model::new();
    let pivot = Vector3::new(0.0, R, 0.0);
    let pin = pivot + Vector3::new(0.0, LC, 0.0);
    let wrist = Vector3::new((LR * LR - LC * LC).sqrt(), R, 0.0);
    let ground = model
        .add_node(NodeDef::frame("ground", pivot).fixed())
        .unwrap();
    let crank_c = pivot + Vector3::new(0.0, LC / 2.0, 0.0);
    let wz = Vector3::new(0.0, 0.0, WC);
    let crank = model
        .add_node(
            NodeDef::frame("crank", crank_c)
                .velocity(wz.cross(&(crank_c - pivot)))
                .angular_velocity(wz),
        )
        .unwrap();
    // Rigid slider–crank velocities at θ = 90° (as tests/roller_crank.rs): the rod turns so
    // that the wrist moves horizontally.
    let v_pin = wz.cross(&(pin - pivot));
    let rod_dir = wrist - pin;
    let w_rod = Vector3::new(0.0, 0.0, -v_pin.y / rod_dir.x);
    let v_wrist = v_pin + w_rod.cross(&rod_dir);
    // Rod end nodes (the same node for the rigid rod): crank pin side, roller side.
    let (rod_a, rod_b) = match rod {
        Rod::Rigid | Rod::BeamLimit => {
            let rod_c = 0.5 * (pin + wrist);
            let id = model
                .add_node(
                    NodeDef::frame("rod", rod_c)
                        .velocity(v_pin + w_rod.cross(&(rod_c - pin)))
                        .angular_velocity(w_rod),
                )
                .unwrap();
            (id, id)
        }
        Rod::Flexible | Rod::Stiffened(_) => {
            let a = model
                .add_node(
                    NodeDef::frame("rod_a", pin)
                        .velocity(v_pin)
                        .angular_velocity(w_rod),
                )
                .unwrap();
            let b = model
                .add_node(
                    NodeDef::frame("rod_b", wrist)
                        .velocity(v_wrist)
                        .angular_velocity(w_rod),
                )
                .unwrap();
            (a, b)
        }
    };
    let roller = model
        .add_node(
            NodeDef::frame("roller", wrist)
                .velocity(v_wrist)
                .angular_velocity(Vector3::new(0.0, 0.0, WR)),
        )
        .unwrap();
    model
        .add_element(
            "crank",
            RigidBody::principal(crank, 0.12, Vector3::new(0.002, 0.002, 0.002)).unwrap(),
        )
        .unwrap();
    match rod {
        Rod::Rigid => {
            model
                .add_element(
                    "rod",
                    RigidBody::principal(rod_a, 0.3, Vector3::new(0.002, 0.002, 0.002)).unwrap(),
                )
                .unwrap();
        }
        Rod::BeamLimit => {
            // Only the moment about z enters the planar motion (a diagonal inertia couples no
            // other axis to a rotation about z); the other two are placeholders (the beam's
            // axial value and the z value), not the inclined rod's true tensor.
            let jz = beam_rod_inertia_z();
            model
                .add_element(
                    "rod",
                    RigidBody::principal(
                        rod_a,
                        beam_rod_mass(),
                        Vector3::new(2.0 * RHO * INERTIA * LR, jz, jz),
                    )
                    .unwrap(),
                )
                .unwrap();
        }
        Rod::Flexible | Rod::Stiffened(_) => {
            let factor = match rod {
                Rod::Stiffened(f) => f,
                _ => 1.0,
            };
            let spec = BeamSpec {
                i2: INERTIA,
                i3: INERTIA,
                torsion_constant: Some(2.0 * INERTIA),
                ..BeamSpec::circular(factor * E, NU, RHO, (AREA / PI).sqrt())
            };
            // Intermediate nodes: linear interpolation of the end velocities (exact rigid
            // motion of the straight rod).
            let line = BeamBuilder::new("rod", spec)
                .line(&mut model, rod_a, rod_b, N_EL)
                .unwrap();
            assert_eq!(line.nodes.len(), N_EL + 1);
        }
    }
    model
        .add_element(
            "roller",
            RigidBody::principal(roller, 0.1, Vector3::new(0.001, 0.001, 0.001)).unwrap(),
        )
        .unwrap();
    let z = Vector3::z();
    model
        .add_element(
            "bearing",
            RevoluteJoint::new(model.nodes(), ground, crank, pivot, z).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "crank_pin",
            RevoluteJoint::new(model.nodes(), crank, rod_a, pin, z).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "wrist_pin",
            RevoluteJoint::new(model.nodes(), rod_b, roller, wrist, z).unwrap(),
        )
        .unwrap();
    let contact = PlaneContact::sphere(roller, R, Vector3::zeros(), Vector3::y())
        .unwrap()
        .friction(MU)
        .resistance(rolling, 0.0);
    model.add_element("ground_contact", contact).unwrap();

    model
}
