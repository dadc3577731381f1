//! Result streaming: the solver hands each converged step to a [`ResultSink`]
//! (the HDF5 writer of `saltus-io`, an in-memory recorder for tests, ...).

use crate::element::{Energy, OutputSpec};
use crate::node::NodeState;

/// Static description of what every step record contains.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutputLayout {
    /// Node names, in node order.
    pub node_names: Vec<String>,
    /// Element names, in element order.
    pub element_names: Vec<String>,
    /// Element type names, in element order.
    pub element_types: Vec<String>,
    /// Output channels of each element.
    pub element_outputs: Vec<Vec<OutputSpec>>,
    /// Per element: offset of its first channel in [`StepRecord::element_values`].
    pub element_offsets: Vec<usize>,
    /// Total number of element output values per step.
    pub n_element_values: usize,
    /// Names of the scheme's stages (columns of the per-step solver statistics).
    pub stage_names: Vec<String>,
    /// Element handles ([`crate::ElementId::to_bits`]), in element order: a contact's id in the
    /// contact table (empty when the layout was not built from a model).
    pub element_ids: Vec<u64>,
    /// Node indices of each element, in element order (empty when the layout was not built
    /// from a model): the connectivity that post-processors draw (beams as polylines).
    pub element_nodes: Vec<Vec<usize>>,
}

impl OutputLayout {
    /// Build the layout, computing the offsets.
    pub fn new(
        node_names: Vec<String>,
        element_names: Vec<String>,
        element_types: Vec<String>,
        element_outputs: Vec<Vec<OutputSpec>>,
    ) -> Self {
        let mut element_offsets = Vec::with_capacity(element_outputs.len());
        let mut n = 0;
        for outs in &element_outputs {
            element_offsets.push(n);
            n += outs.iter().map(|o| o.len).sum::<usize>();
        }
        Self {
            node_names,
            element_names,
            element_types,
            element_outputs,
            element_offsets,
            n_element_values: n,
            stage_names: Vec::new(),
            element_ids: Vec::new(),
            element_nodes: Vec::new(),
        }
    }
}

impl OutputLayout {
    /// The layout of `model`'s nodes and elements as they are now, with the scheme's stage
    /// names (the columns of the per-step solver statistics).
    pub fn for_model(model: &crate::Model, stage_names: &[&str]) -> Self {
        let mut layout = Self::new(
            model.nodes().iter().map(|d| d.name.clone()).collect(),
            model.element_names().to_vec(),
            model
                .elements()
                .iter()
                .map(|e| e.type_name().to_string())
                .collect(),
            model.elements().iter().map(|e| e.outputs()).collect(),
        );
        layout.stage_names = stage_names.iter().map(|s| s.to_string()).collect();
        layout.element_ids = model
            .element_handles()
            .iter()
            .map(|h| h.to_bits())
            .collect();
        layout.element_nodes = model
            .elements()
            .iter()
            .map(|e| e.nodes().iter().map(|n| n.0 as usize).collect())
            .collect();
        layout
    }
}

/// Largest number of stages a scheme may report per step.
pub const MAX_STAGES: usize = 8;

/// Newton statistics of one stage within one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageStep {
    /// Newton iterations (linear solves), summed over the stage's solves in the step.
    pub iterations: usize,
    /// Final residual norm of the stage's last solve.
    pub residual: f64,
    /// Line-search backtracks (spec §10).
    pub backtracks: usize,
    /// Number of solves of the stage in the step (1, or more when a stage repeats, e.g. the
    /// velocity stage of an impact sequence).
    pub solves: usize,
}

/// Newton statistics of one step, per stage in the order of [`OutputLayout::stage_names`]
/// (allocation-free, at most [`MAX_STAGES`] stages).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    stages: [StageStep; MAX_STAGES],
    n_stages: usize,
    /// Step size actually used \[s\] (smaller than the nominal one after step halving).
    pub h: f64,
    /// Contacts closed at position level in this step (the position active set).
    pub active_contacts: usize,
}

impl StepStats {
    /// Statistics for `n_stages` stages, all zero.
    pub fn new(n_stages: usize) -> Self {
        assert!(n_stages <= MAX_STAGES, "at most {MAX_STAGES} stages");
        Self {
            n_stages,
            ..Self::default()
        }
    }

    /// Per-stage statistics.
    pub fn stages(&self) -> &[StageStep] {
        &self.stages[..self.n_stages]
    }

    /// Mutable per-stage statistics.
    pub fn stages_mut(&mut self) -> &mut [StageStep] {
        &mut self.stages[..self.n_stages]
    }

    /// Newton iterations of stage `i` in this step.
    pub fn iterations(&self, i: usize) -> usize {
        self.stages()[i].iterations
    }
}

/// One row of the per-step contact table: the state of one contact element at one recorded
/// step (`docs/hdf5-layout.md`, `/contacts`). Built by [`crate::contact::contact_row`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactRow {
    /// Contact id: the element handle ([`crate::ElementId::to_bits`]), unique over the run
    /// even when contacts are created and removed.
    pub contact: u64,
    /// Node index of body a.
    pub body_a: i64,
    /// Node index of body b, −1 for a fixed obstacle (e.g. the plane).
    pub body_b: i64,
    /// Contact point \[m\]: midway between the contact points on a and b.
    pub point: [f64; 3],
    /// Unit normal `n̂`, from b to a.
    pub normal: [f64; 3],
    /// Normal gap `g_N` \[m\] (positive when separated).
    pub gap: f64,
    /// Position-level multipliers `k_p [ν_N, ν_T1, ν_T2]` \[kg m\] (normal, along `t̂₁`, `t̂₂`).
    pub position_impulse: [f64; 3],
    /// Impulses of the step `k_v [Λ_N, Λ_T1, Λ_T2]` \[N s\] (normal, along `t̂₁`, `t̂₂`).
    pub impulse: [f64; 3],
    /// Normal relative velocity `ġ_N` \[m/s\] (positive separating): before the contact's
    /// impact in the step (`G_N(q_n) V⁻`, with `V⁻` the pre-impact velocity of the first impact
    /// problem in which it took an impulse; NaN if it took none, and in the initial record)
    /// and at the end of the step. Its negative is the approach speed `δ̇_i` of the contact
    /// force recovery (`contact-force.md` §2.3).
    pub normal_velocity: [f64; 2],
    /// Normal restitution `e_N` of the contact's law.
    pub restitution: f64,
    /// Effective radius `R* = 1/(1/R_a + 1/R_b)` \[m\] of the touching surfaces (Hertz contact,
    /// `contact-force.md` §4); NaN for a contact without curved surfaces.
    pub radius: f64,
    /// A ball on a bearing race ([`crate::contact_force::ForceRecoverySpec::race`]): ball
    /// radius, race radius, groove radius \[m\] (signed as in
    /// [`crate::contact_force::RaceContact`]); NaN otherwise.
    pub race: [f64; 3],
    /// The contact's force recovery during the run, if it declares one
    /// ([`crate::contact::ContactLaw::force_model`]).
    pub force_model: Option<crate::contact_force::ForceModel>,
    /// Statuses (0 open, 1 stick, 2 slip): position sliding, velocity sliding, rolling,
    /// spinning.
    pub status: [u8; 4],
}

/// One converged step.
#[derive(Clone, Copy, Debug)]
pub struct StepRecord<'a> {
    /// Step index (0 = initial state).
    pub step: usize,
    /// Time \[s\].
    pub t: f64,
    /// Node states at `t`.
    pub nodes: &'a [NodeState],
    /// Element output values, laid out by [`OutputLayout::element_offsets`].
    pub element_values: &'a [f64],
    /// Newton statistics (zeros for the initial state).
    pub stats: StepStats,
    /// Total mechanical energy of the model.
    pub energy: Energy,
    /// One row per contact element present at this step ([`ContactRow`]; contacts created and
    /// removed while the model runs included).
    pub contacts: &'a [ContactRow],
}

/// Error reported by a sink (I/O failure, ...).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("result sink: {0}")]
pub struct SinkError(pub String);

/// Value of a run-level solver result ([`ResultSink::solver_attributes`]).
#[derive(Clone, Debug, PartialEq)]
pub enum AttributeValue {
    /// A flag.
    Bool(bool),
    /// A count.
    Int(i64),
    /// A number (NaN: not applicable).
    Float(f64),
    /// A message.
    Text(String),
}

/// Consumer of converged steps.
pub trait ResultSink {
    /// Called once before the first record.
    fn begin(&mut self, layout: &OutputLayout) -> Result<(), SinkError>;
    /// Called for the initial state and after every converged step.
    fn record(&mut self, record: &StepRecord<'_>) -> Result<(), SinkError>;
    /// Run-level results of the solver as `(name, value)` pairs (e.g. the stability of a
    /// static solve), given after the last record and before [`ResultSink::finish`]; a name
    /// given again replaces its value. The HDF5 sink writes them as attributes of `/solver`.
    /// Default: ignored.
    fn solver_attributes(
        &mut self,
        attributes: &[(&str, AttributeValue)],
    ) -> Result<(), SinkError> {
        let _ = attributes;
        Ok(())
    }
    /// Called at the end of the run, also after a failure (flush what was written).
    fn finish(&mut self) -> Result<(), SinkError>;
}

/// A sink that keeps everything in memory (tests, small studies).
#[derive(Clone, Debug, Default)]
pub struct MemorySink {
    /// The layout given at `begin`.
    pub layout: OutputLayout,
    /// Times \[s\].
    pub time: Vec<f64>,
    /// Node states per record.
    pub nodes: Vec<Vec<NodeState>>,
    /// Element values per record.
    pub element_values: Vec<Vec<f64>>,
    /// Statistics per record.
    pub stats: Vec<StepStats>,
    /// Energy per record.
    pub energy: Vec<Energy>,
    /// Contact table per record.
    pub contacts: Vec<Vec<ContactRow>>,
    /// Run-level solver results ([`ResultSink::solver_attributes`]), in the order given.
    pub solver_attributes: Vec<(String, AttributeValue)>,
}

impl MemorySink {
    /// Values of channel `output` of element `element` at every record.
    pub fn channel(&self, element: &str, output: &str) -> Option<Vec<Vec<f64>>> {
        let e = self
            .layout
            .element_names
            .iter()
            .position(|n| n == element)?;
        let mut off = self.layout.element_offsets[e];
        for o in &self.layout.element_outputs[e] {
            if o.name == output {
                return Some(
                    self.element_values
                        .iter()
                        .map(|v| v[off..off + o.len].to_vec())
                        .collect(),
                );
            }
            off += o.len;
        }
        None
    }
}

impl ResultSink for MemorySink {
    fn begin(&mut self, layout: &OutputLayout) -> Result<(), SinkError> {
        self.layout = layout.clone();
        Ok(())
    }
    fn record(&mut self, r: &StepRecord<'_>) -> Result<(), SinkError> {
        self.time.push(r.t);
        self.nodes.push(r.nodes.to_vec());
        self.element_values.push(r.element_values.to_vec());
        self.stats.push(r.stats);
        self.energy.push(r.energy);
        self.contacts.push(r.contacts.to_vec());
        Ok(())
    }
    fn solver_attributes(
        &mut self,
        attributes: &[(&str, AttributeValue)],
    ) -> Result<(), SinkError> {
        for (name, value) in attributes {
            match self.solver_attributes.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => *v = value.clone(),
                None => self
                    .solver_attributes
                    .push((name.to_string(), value.clone())),
            }
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}
