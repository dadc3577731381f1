//! [`ContactElement`]: the element made of a contact geometry ([`UnilateralContact`]), its law
//! data and its history. The stage rows are formed by the stage assembly of `saltus-core`; this
//! wrapper adds the builders of the law data and the output channels.

use saltus_core::constraint::Layout;
use saltus_core::contact::{
    ContactHistory, ContactJacobian, ContactLaw, ContactRef, FrictionDecay, UnilateralContact,
};
use saltus_core::contact_force::ForceRecoverySpec;
use saltus_core::stage::{contact_level_converged, contact_warm_start};
use saltus_core::{
    BuildError, Element, LocalState, NodeId, NodeKind, OutputSpec, OutputState, StepCx,
};

/// A unilateral frictional contact element: geometry `G`, friction/restitution/resistance data
/// and the converged history (position active set, statuses). Outputs: `gap`,
/// `position_multiplier`, `impulse`, `status`, `slip_velocity` and, with couples,
/// `rolling_couple`, `spinning_couple`.
#[derive(Clone, Debug)]
pub struct ContactElement<G> {
    geometry: G,
    law: ContactLaw,
    history: ContactHistory,
}

impl<G: UnilateralContact> ContactElement<G> {
    /// A frictionless, perfectly plastic contact (`μ = e_N = e_T = 0`) of `geometry`.
    pub fn from_geometry(geometry: G) -> Self {
        Self {
            geometry,
            law: ContactLaw::default(),
            history: ContactHistory::default(),
        }
    }

    /// Coulomb friction coefficient `μ ≥ 0`.
    pub fn friction(mut self, mu: f64) -> Self {
        self.law.friction = mu;
        self
    }

    /// Friction falling with the sliding speed: `μ(v) = μ + extra · e^{−rate v}` at the
    /// step-start relative sliding speed `v` of the contact points (`rate` in s/m; see
    /// [`FrictionDecay`]).
    pub fn friction_decay(mut self, extra: f64, rate: f64) -> Self {
        self.law.friction_decay = FrictionDecay { extra, rate };
        self
    }

    /// Normal and tangential restitution coefficients `e_N ∈ [0,1]`, `e_T ∈ [−1,1]`.
    pub fn restitution(mut self, e_n: f64, e_t: f64) -> Self {
        self.law.restitution = e_n;
        self.law.tangential_restitution = e_t;
        self
    }

    /// Rolling and spinning resistance lengths `ρ`, `γ_s` \[m\] (contacts with couples; a
    /// geometry with optional couples turns them on when either is > 0).
    pub fn resistance(mut self, rolling: f64, spinning: f64) -> Self {
        self.law.rolling_resistance = rolling;
        self.law.spinning_resistance = spinning;
        self.geometry.set_couples(rolling > 0.0 || spinning > 0.0);
        self
    }

    /// Recover this contact's forces from its impulses while the model runs
    /// (`saltus_core::contact_force`): the stiffness given, or Hertz's from the geometry's
    /// surfaces and the materials of `spec`. Fails, naming `force_recovery`, if the spec is
    /// incomplete or the geometry has no curved surfaces for a Hertz stiffness.
    pub fn force_recovery(mut self, spec: &ForceRecoverySpec) -> Result<Self, BuildError> {
        let model = spec
            .resolve(self.geometry.surface_curvatures())
            .map_err(|e| BuildError::InvalidParameter {
                element: format!("<{}>", self.geometry.type_name()),
                parameter: "force_recovery".into(),
                message: e.to_string(),
            })?;
        self.law.force_model = Some(model);
        Ok(self)
    }

    /// The contact geometry.
    pub fn geometry(&self) -> &G {
        &self.geometry
    }

    /// Friction, restitution and resistance data.
    pub fn law(&self) -> &ContactLaw {
        &self.law
    }

    /// Converged history (position active set, statuses).
    pub fn history(&self) -> &ContactHistory {
        &self.history
    }

    /// Mutable history (warm starts, tests that set the position active set).
    pub fn history_mut(&mut self) -> &mut ContactHistory {
        &mut self.history
    }

    fn contact(&self) -> ContactRef<'_> {
        ContactRef {
            geometry: &self.geometry,
            law: &self.law,
            history: &self.history,
        }
    }
}

impl<G: UnilateralContact + Clone + 'static> Element for ContactElement<G> {
    fn type_name(&self) -> &'static str {
        self.geometry.type_name()
    }
    fn nodes(&self) -> &[NodeId] {
        self.geometry.nodes()
    }
    fn node_kinds(&self) -> Vec<Option<NodeKind>> {
        self.geometry
            .node_kinds()
            .iter()
            .map(|k| Some(*k))
            .collect()
    }
    fn as_contact(&self) -> Option<ContactRef<'_>> {
        Some(self.contact())
    }
    fn level_converged(&mut self, cx: &StepCx, s: &LocalState<'_>) {
        let mut history = self.history;
        contact_level_converged(&self.contact(), &mut history, cx, s);
        self.history = history;
    }
    /// Statuses and warm-start multipliers are kept after the position and velocity levels;
    /// the statuses are those the converged evaluation recorded (`contact_level_converged`).
    fn level_hook(&self, level: saltus_core::Level) -> saltus_core::LevelHook {
        match level {
            saltus_core::Level::Position | saltus_core::Level::Velocity => {
                saltus_core::LevelHook::Memo
            }
            _ => saltus_core::LevelHook::Skip,
        }
    }

    fn warm_start(&self, cx: &StepCx, mult: &mut [f64]) {
        contact_warm_start(&self.history, cx, mult);
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        let mut v = vec![
            OutputSpec {
                name: "gap",
                len: 1,
                unit: "m",
                description: "normal gap g_N (positive when separated)",
            },
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
                description: "tangential velocity of the contact point of body a relative to body b, −G_T v (components along T1, T2)",
            },
        ];
        if self.geometry.couple_radius().is_some() {
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
        out[0] = self.geometry.frame(s.nodes).gap;
        for k in 0..3 {
            out[1 + k] = s.k[1] * s.mult_position[k];
            out[4 + k] = s.k[2] * s.mult_velocity[k];
        }
        for (k, st) in self.history.status.iter().enumerate() {
            out[7 + k] = st.code();
        }
        // −G_T v at the converged state: the relative velocity itself (no restitution term),
        // in the tangent frame of that state.
        let layout = Layout::new(self.geometry.node_kinds());
        let mut j = ContactJacobian::zeros();
        self.geometry.jacobian(s.nodes, s.nodes, &mut j);
        let slip = -(j.tangential * layout.velocity(s.nodes));
        out[11] = slip[0];
        out[12] = slip[1];
        if let Some(r) = self.geometry.couple_radius() {
            let kr = s.k[2] * r;
            out[13] = kr * s.mult_velocity[4];
            out[14] = kr * s.mult_velocity[5];
            out[15] = kr * s.mult_velocity[3];
        }
    }
}
