//! Radial ball bearing (contact-elements.md §7, thesis Ch. 4) as a composite: it expands into
//! ordinary nodes and elements, so every output of the balls, contacts and cage stays
//! available.
//!
//! Inner race: a sphere of radius `r_i` on an existing frame node (the shaft or crank pin, or
//! a body jointed to it); outer race: the spherical cavity of radius `r_e` of another existing
//! frame node (housing, rod). `N_b` balls of radius `r_b` (rigid bodies, steel by default)
//! start equally spaced on the cage circle `r_j = (r_i + r_e)/2` about the inner race's centre,
//! in the plane normal to `axis`. Each ball touches the inner race (`sphere_sphere_contact`)
//! and the outer race (`sphere_in_sphere_contact`) with friction `μ` and restitution `e_N`,
//! `e_T`; the cage is a ring of `spring_damper`s joining consecutive balls at their initial
//! distance. Radial clearance `c = r_e − r_i − 2 r_b ≥ 0` (give `outer_radius` or
//! `clearance`). The groove radius `r_r` of the races enters only the contact stresses
//! (contact-force.md §7) and is kept for them; the kinematics is planar.
//!
//! Analytic cage speed for zero clearance, fixed outer race and rolling without slip:
//! `ω_cage/ω_i = r_i/(r_i + r_e)` (eqs. 4.6–4.11).

use nalgebra::{UnitQuaternion, Vector3};
use saltus_core::contact_force::{ForceRecoverySpec, RaceGeometry};
use saltus_core::registry::{CompositeDef, CompositeError};
use saltus_core::{BuildError, ElementDef, Model, NodeDef, NodeId, NodeKind};
use serde::Deserialize;
use serde_json::json;

/// Density of steel \[kg/m³\]: the default ball material.
pub const STEEL_DENSITY: f64 = 7850.0;

/// Largest number of balls of one bearing (a guard against typos: each ball adds a node and
/// four elements, and a billion of them exhaust the memory before anything else is checked).
pub const MAX_BALLS: usize = 10_000;

/// Parameters of a ball bearing (module docs). Lengths in m, masses in kg, stiffness in N/m,
/// damping in N·s/m.
#[derive(Clone, Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BallBearing {
    /// Name: prefix of the generated nodes and elements.
    pub name: String,
    /// Frame node carrying the inner race.
    pub inner: String,
    /// Frame node carrying the outer race.
    pub outer: String,
    /// Number of balls `N_b` \[-\] (2 ..= [`MAX_BALLS`]).
    pub balls: usize,
    /// Ball radius `r_b` \[m\].
    pub ball_radius: f64,
    /// Ball mass \[kg\] (default: solid steel sphere).
    #[serde(default)]
    pub ball_mass: Option<f64>,
    /// Ball central moment of inertia \[kg·m²\] (default `⅖ m r_b²`).
    #[serde(default)]
    pub ball_inertia: Option<f64>,
    /// Inner race radius `r_i` \[m\].
    pub inner_radius: f64,
    /// Outer race radius `r_e` \[m\] (or `clearance`).
    #[serde(default)]
    pub outer_radius: Option<f64>,
    /// Radial clearance `c = r_e − r_i − 2 r_b ≥ 0` \[m\] (or `outer_radius`).
    #[serde(default)]
    pub clearance: Option<f64>,
    /// Groove radius `r_r` \[m\] of the races, normal to the race (stresses only; sign: negative
    /// for a concave groove, as in the thesis' table).
    #[serde(default)]
    pub groove_radius: Option<f64>,
    /// Cage spring stiffness between consecutive balls \[N/m\].
    pub cage_stiffness: f64,
    /// Cage damping \[N s/m\] (default 0).
    #[serde(default)]
    pub cage_damping: f64,
    /// Ball–race friction `μ` \[-\] (default 0).
    #[serde(default)]
    pub friction: f64,
    /// Ball–race normal restitution `e_N` \[-\] (default 0).
    #[serde(default)]
    pub restitution: f64,
    /// Ball–race tangential restitution `e_T` \[-\] (default 0).
    #[serde(default)]
    pub tangential_restitution: f64,
    /// Bearing axis \[-\] (default +z): the balls lie in the plane normal to it.
    #[serde(default)]
    pub axis: Option<[f64; 3]>,
    /// Angle of ball 1 about the axis from the first in-plane direction \[rad\] (default 0).
    #[serde(default)]
    pub phase: f64,
    /// Contact forces of the ball–race contacts recovered while the model runs (see
    /// `saltus_core::contact_force::ForceRecoverySpec`). With `young`, `poisson` and the
    /// bearing's `groove_radius`, each contact is a ball on its race: stiffness from Hertz's
    /// elliptical contact and the contact stresses (maximum pressure, shears, depth) of every
    /// step in `/contact_forces`.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub force_recovery: Option<ForceRecoverySpec>,
}

/// What [`BallBearing::expand`] added to the model.
#[derive(Clone, Debug)]
pub struct BearingParts {
    /// The ball nodes, in order around the cage.
    pub balls: Vec<NodeId>,
    /// Definitions of the generated elements (ball bodies, inner and outer contacts, cage
    /// springs), in the order added.
    pub elements: Vec<ElementDef>,
    /// Outer race radius `r_e`.
    pub outer_radius: f64,
}

impl BallBearing {
    /// Outer race radius from `outer_radius` or `clearance`.
    pub fn outer(&self) -> Result<f64, CompositeError> {
        match (self.outer_radius, self.clearance) {
            (Some(r), None) => Ok(r),
            (None, Some(c)) => Ok(self.inner_radius + 2.0 * self.ball_radius + c),
            (Some(_), Some(_)) => Err(CompositeError::at(
                "clearance",
                "give either `outer_radius` or `clearance`, not both",
            )),
            (None, None) => Err(CompositeError::at(
                "outer_radius",
                "missing: the outer race radius in m (or `clearance`)",
            )),
        }
    }

    /// Check the parameters (errors name the key).
    pub fn validate(&self) -> Result<(), CompositeError> {
        let positive = |key: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(CompositeError::at(
                    key,
                    format!("must be finite and > 0, got {v}"),
                ))
            }
        };
        let non_negative = |key: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(CompositeError::at(
                    key,
                    format!("must be finite and >= 0, got {v}"),
                ))
            }
        };
        if self.balls < 2 {
            return Err(CompositeError::at(
                "balls",
                format!("needs at least 2 balls, got {}", self.balls),
            ));
        }
        if self.balls > MAX_BALLS {
            return Err(CompositeError::at(
                "balls",
                format!("at most {MAX_BALLS} balls, got {}", self.balls),
            ));
        }
        if self.inner == self.outer {
            return Err(CompositeError::at(
                "outer",
                format!(
                    "the inner and outer race must be different nodes, got `{}` for both",
                    self.inner
                ),
            ));
        }
        positive("ball_radius", self.ball_radius)?;
        positive("inner_radius", self.inner_radius)?;
        if let Some(m) = self.ball_mass {
            positive("ball_mass", m)?;
        }
        if let Some(i) = self.ball_inertia {
            positive("ball_inertia", i)?;
        }
        let r_e = self.outer()?;
        positive("outer_radius", r_e)?;
        let c = r_e - self.inner_radius - 2.0 * self.ball_radius;
        if c < 0.0 {
            return Err(CompositeError::at(
                if self.clearance.is_some() {
                    "clearance"
                } else {
                    "outer_radius"
                },
                format!(
                    "negative radial clearance r_e − r_i − 2 r_b = {c:e} m: the balls do not fit"
                ),
            ));
        }
        if let Some(g) = self.groove_radius {
            if !(g.is_finite() && g != 0.0) {
                return Err(CompositeError::at(
                    "groove_radius",
                    format!("must be finite and non-zero, got {g}"),
                ));
            }
        }
        non_negative("cage_stiffness", self.cage_stiffness)?;
        non_negative("cage_damping", self.cage_damping)?;
        non_negative("friction", self.friction)?;
        if !(0.0..=1.0).contains(&self.restitution) {
            return Err(CompositeError::at(
                "restitution",
                format!("must be in [0, 1], got {}", self.restitution),
            ));
        }
        if !(-1.0..=1.0).contains(&self.tangential_restitution) {
            return Err(CompositeError::at(
                "tangential_restitution",
                format!("must be in [-1, 1], got {}", self.tangential_restitution),
            ));
        }
        if let Some(a) = self.axis {
            let n = Vector3::from(a).norm();
            if !(n.is_finite() && n > 1e-12) {
                return Err(CompositeError::at(
                    "axis",
                    format!("must be a finite non-zero vector, got {a:?}"),
                ));
            }
        }
        if !self.phase.is_finite() {
            return Err(CompositeError::at("phase", "must be finite"));
        }
        Ok(())
    }

    /// Add the bearing's nodes and elements to `model` (through the element registry, as a
    /// model file would).
    pub fn expand(&self, model: &mut Model) -> Result<BearingParts, CompositeError> {
        self.validate()?;
        let frame = |key: &str, name: &str| -> Result<NodeId, CompositeError> {
            let id = model
                .node_id(name)
                .ok_or_else(|| CompositeError::at(key, format!("unknown node `{name}`")))?;
            if model.nodes()[id.index()].kind != NodeKind::Frame {
                return Err(CompositeError::at(
                    key,
                    format!("node `{name}` must be a frame node (races rotate)"),
                ));
            }
            Ok(id)
        };
        let inner = frame("inner", &self.inner)?;
        frame("outer", &self.outer)?;
        let r_e = self.outer()?;
        let (r_i, r_b) = (self.inner_radius, self.ball_radius);
        let r_j = 0.5 * (r_i + r_e);
        let m_b = self
            .ball_mass
            .unwrap_or(STEEL_DENSITY * 4.0 / 3.0 * std::f64::consts::PI * r_b.powi(3));
        let i_b = self.ball_inertia.unwrap_or(0.4 * m_b * r_b * r_b);
        let axis = Vector3::from(self.axis.unwrap_or([0.0, 0.0, 1.0])).normalize();
        // In-plane directions e₁, e₂ = axis × e₁.
        let seed = if axis.x.abs() < 0.9 {
            Vector3::x()
        } else {
            Vector3::y()
        };
        let e1 = (seed - axis * axis.dot(&seed)).normalize();
        let e2 = axis.cross(&e1);
        let centre = model.nodes()[inner.index()].initial.x;
        let n = self.balls;
        let blame = |e: BuildError| match e {
            BuildError::DuplicateName { what, name } => CompositeError::at(
                "name",
                format!("generated {what} name `{name}` is already used"),
            ),
            other => CompositeError {
                parameter: None,
                message: other.to_string(),
            },
        };
        let mut balls = Vec::with_capacity(n);
        for k in 0..n {
            let angle = self.phase + 2.0 * std::f64::consts::PI * k as f64 / n as f64;
            let x = centre + r_j * (angle.cos() * e1 + angle.sin() * e2);
            let def = NodeDef::frame(format!("{}_ball{}", self.name, k + 1), x)
                .rotation(UnitQuaternion::identity());
            balls.push(model.add_node(def).map_err(blame)?);
        }
        let node_name = |id: NodeId, model: &Model| model.nodes()[id.index()].name.clone();
        let law = json!({
            "friction": self.friction,
            "restitution": self.restitution,
            "tangential_restitution": self.tangential_restitution,
        });
        let with_law = |mut v: serde_json::Value| {
            if let (Some(o), Some(l)) = (v.as_object_mut(), law.as_object()) {
                o.extend(l.clone());
            }
            v
        };
        // The force recovery of a contact against the race of radius `race` (signed).
        let recovery = |race: f64| -> Option<serde_json::Value> {
            let mut spec = self.force_recovery?;
            if let (Some(g), Some(_), Some(_)) = (self.groove_radius, spec.young, spec.poisson) {
                spec.race = Some(RaceGeometry {
                    race_radius: race,
                    groove_radius: g,
                });
            }
            serde_json::to_value(spec).ok()
        };
        let with_recovery = |mut v: serde_json::Value, race: f64| {
            if let (Some(o), Some(r)) = (v.as_object_mut(), recovery(race)) {
                o.insert("force_recovery".into(), r);
            }
            v
        };
        let chord = 2.0 * r_j * (std::f64::consts::PI / n as f64).sin();
        let mut elements = Vec::new();
        for k in 0..n {
            let ball = node_name(balls[k], model);
            let next = node_name(balls[(k + 1) % n], model);
            let p = &self.name;
            let b = k + 1;
            elements.push(ElementDef {
                name: format!("{p}_ball{b}_body"),
                type_name: "rigid_body".into(),
                nodes: vec![ball.clone()],
                parameters: json!({ "mass": m_b, "inertia": [i_b, i_b, i_b] }),
            });
            elements.push(ElementDef {
                name: format!("{p}_inner{b}"),
                type_name: "sphere_sphere_contact".into(),
                nodes: vec![ball.clone(), self.inner.clone()],
                parameters: with_recovery(
                    with_law(json!({ "radius_a": r_b, "radius_b": r_i })),
                    r_i,
                ),
            });
            elements.push(ElementDef {
                name: format!("{p}_outer{b}"),
                type_name: "sphere_in_sphere_contact".into(),
                nodes: vec![ball.clone(), self.outer.clone()],
                parameters: with_recovery(
                    with_law(json!({ "radius": r_b, "cavity_radius": r_e })),
                    -r_e,
                ),
            });
            elements.push(ElementDef {
                name: format!("{p}_cage{b}"),
                type_name: "spring_damper".into(),
                nodes: vec![ball, next],
                parameters: json!({
                    "stiffness": self.cage_stiffness,
                    "damping": self.cage_damping,
                    "rest_length": chord,
                }),
            });
        }
        for def in &elements {
            model.add_element_def(def).map_err(blame)?;
        }
        Ok(BearingParts {
            balls,
            elements,
            outer_radius: r_e,
        })
    }
}

/// `[[ball_bearings]]` entries.
fn expand_bearing(
    def: &CompositeDef,
    model: &mut Model,
) -> Result<Vec<ElementDef>, CompositeError> {
    let spec: BallBearing =
        serde_json::from_value(serde_json::Value::Object(def.parameters.clone())).map_err(|e| {
            let message = saltus_core::registry::name_offending_key::<BallBearing>(
                &serde_json::Value::Object(def.parameters.clone()),
                e.to_string(),
            );
            // The key the message names (not a value in backticks, e.g. integer `-8`).
            let parameter = saltus_core::registry::backticked(&message)
                .filter(|k| def.parameters.contains_key(k) || message.starts_with("missing"));
            CompositeError { parameter, message }
        })?;
    Ok(spec.expand(model)?.elements)
}

saltus_core::register_composite! {
    key: "ball_bearings",
    label: "ball bearing",
    summary: "A radial ball bearing between two frame nodes (inner and outer race): balls, ball–race contacts and a cage of springs",
    expand: expand_bearing,
    params: BallBearing,
}
