//! A model: nodes and elements, built in code or from a model file through the registry.

use crate::element::{Element, Level};
use crate::node::{NodeDef, NodeId, NodeKind, NodeState, PrescribedMotion};
use crate::registry::{element_kind, BuildCx, ElementDef};
use nalgebra::{UnitQuaternion, Vector3};
use std::collections::HashSet;

/// Stable handle of an element in a [`Model`]: a slot and the generation of its occupant. It
/// stays valid while the element exists, whatever is added or removed around it; once the
/// element is removed the handle is stale (a later element reusing the slot has another
/// generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ElementId {
    slot: u32,
    generation: u32,
}

impl ElementId {
    /// The handle as one integer, `generation << 32 | slot` (ids in result files).
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.slot)
    }

    /// The handle of [`ElementId::to_bits`].
    pub fn from_bits(bits: u64) -> Self {
        Self {
            slot: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

/// A slot of the element handle table.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    generation: u32,
    /// Position of the occupant in the element order, `None` when free.
    index: Option<usize>,
}

/// Errors found while building or validating a model. Each names the offending item.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// The element type is not registered.
    #[error(
        "element `{element}`: unknown type `{type_name}`; registered types: {} (a type from \
         another crate is registered only if that crate is linked into the program: call one \
         of its functions, such as its `link()`)",
        known.join(", ")
    )]
    UnknownType {
        /// Element name.
        element: String,
        /// The unknown type name.
        type_name: String,
        /// Registered type names.
        known: Vec<String>,
    },
    /// An element refers to a node that does not exist.
    #[error("element `{element}`: unknown node `{node}`")]
    UnknownNode {
        /// Element name.
        element: String,
        /// Node name.
        node: String,
    },
    /// Wrong number of nodes for the element type.
    #[error("element `{element}` ({type_name}): parameter `nodes` expects {expected} node(s), got {got}")]
    NodeCount {
        /// Element name.
        element: String,
        /// Element type.
        type_name: String,
        /// Expected count.
        expected: usize,
        /// Given count.
        got: usize,
    },
    /// A node has the wrong kind for the element.
    #[error("element `{element}`: node `{node}` must be a {expected:?} node")]
    NodeKind {
        /// Element name.
        element: String,
        /// Node name.
        node: String,
        /// Required kind.
        expected: NodeKind,
    },
    /// The parameters could not be deserialized (unknown field, wrong type, missing field).
    #[error("element `{element}` ({type_name}): {message}")]
    Parameters {
        /// Element name.
        element: String,
        /// Element type.
        type_name: String,
        /// serde's message (names the field).
        message: String,
    },
    /// A parameter has an invalid value (negative mass, zero length, ...).
    #[error("element `{element}`: parameter `{parameter}` {message}")]
    InvalidParameter {
        /// Element name.
        element: String,
        /// Parameter name.
        parameter: String,
        /// What is wrong.
        message: String,
    },
    /// Two nodes or two elements share a name.
    #[error("duplicate {what} name `{name}`")]
    DuplicateName {
        /// "node" or "element".
        what: &'static str,
        /// The duplicated name.
        name: String,
    },
    /// A node definition is invalid (non-finite position, ...).
    #[error("node `{node}`: {message}")]
    InvalidNode {
        /// Node name.
        node: String,
        /// What is wrong.
        message: String,
    },
    /// The model as a whole is unusable (e.g. a free node without mass).
    #[error("model: {0}")]
    Model(String),
}

/// Adds and removes elements between steps from the converged node states, e.g. the contact
/// elements of a broad-phase contact detection. Integrators run every detector of the model
/// before each step ([`Model::run_detectors`]); elements that stay keep their history.
pub trait Detector: Send + Sync + std::fmt::Debug {
    /// Name for messages (e.g. the contact group).
    fn name(&self) -> &str;
    /// Update the model's elements for the node states `nodes` at time `t` \[s\], before a
    /// step of size `h` \[s\].
    fn update(
        &mut self,
        model: &mut Model,
        t: f64,
        h: f64,
        nodes: &[NodeState],
    ) -> Result<(), BuildError>;
}

/// Nodes and elements of a mechanism.
#[derive(Debug, Default)]
pub struct Model {
    nodes: Vec<NodeDef>,
    elements: Vec<Box<dyn Element>>,
    element_names: Vec<String>,
    /// Handle of each element, in element order.
    element_handles: Vec<ElementId>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    /// Counts element additions and removals (solvers rebuild their patterns when it changes).
    topology: u64,
    node_names: HashSet<String>,
    element_name_set: HashSet<String>,
    detectors: Vec<Box<dyn Detector>>,
}

impl NodeDef {
    /// A free frame node at `x` \[m\] with identity rotation, at rest.
    pub fn frame(name: impl Into<String>, x: Vector3<f64>) -> Self {
        Self {
            name: name.into(),
            kind: NodeKind::Frame,
            initial: NodeState::at(x, UnitQuaternion::identity()),
            fixed: false,
            motion: None,
        }
    }
    /// A free point node at `x` \[m\], at rest.
    pub fn point(name: impl Into<String>, x: Vector3<f64>) -> Self {
        Self {
            kind: NodeKind::Point,
            ..Self::frame(name, x)
        }
    }
    /// Set the initial rotation (body → inertial).
    pub fn rotation(mut self, r: UnitQuaternion<f64>) -> Self {
        self.initial.r = r;
        self
    }
    /// Set the initial translational velocity \[m/s\].
    pub fn velocity(mut self, v: Vector3<f64>) -> Self {
        self.initial.v = v;
        self
    }
    /// Set the initial angular velocity \[rad/s\], given in the **inertial** (spatial) frame.
    /// Call after [`NodeDef::rotation`].
    pub fn angular_velocity(mut self, omega_spatial: Vector3<f64>) -> Self {
        self.initial.omega = self.initial.r.inverse() * omega_spatial;
        self
    }
    /// Make the node fixed (its state never changes; no unknowns).
    pub fn fixed(mut self) -> Self {
        self.fixed = true;
        self
    }
    /// Prescribe the node's motion (no unknowns): e.g. a support moving at constant velocity.
    /// For [`PrescribedMotion::ConstantVelocity`] the initial velocities are set to the
    /// motion's.
    pub fn prescribed(mut self, motion: PrescribedMotion) -> Self {
        self.fixed = true;
        self.motion = Some(motion);
        self.initial = motion.state_at(&self.initial, 0.0);
        self
    }
}

impl Model {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a detector run before every step ([`Detector`]).
    pub fn add_detector(&mut self, detector: impl Detector + 'static) {
        self.detectors.push(Box::new(detector));
    }

    /// The model's detectors.
    pub fn detectors(&self) -> &[Box<dyn Detector>] {
        &self.detectors
    }

    /// Run every detector for the node states `nodes` at `t` before a step of size `h`
    /// (in the order they were added). An error names the detector.
    pub fn run_detectors(&mut self, t: f64, h: f64, nodes: &[NodeState]) -> Result<(), BuildError> {
        if self.detectors.is_empty() {
            return Ok(());
        }
        let mut detectors = std::mem::take(&mut self.detectors);
        let result = detectors
            .iter_mut()
            .try_for_each(|d| d.update(self, t, h, nodes));
        // Detectors added by a detector (none expected) come after the existing ones.
        detectors.append(&mut self.detectors);
        self.detectors = detectors;
        result
    }

    /// Add a node; errors on a duplicate name or a non-finite initial state.
    pub fn add_node(&mut self, def: NodeDef) -> Result<NodeId, BuildError> {
        let s = &def.initial;
        let finite =
            s.x.iter()
                .chain(s.v.iter())
                .chain(s.omega.iter())
                .all(|v| v.is_finite())
                && s.r.coords.iter().all(|v| v.is_finite());
        if !finite {
            return Err(BuildError::InvalidNode {
                node: def.name.clone(),
                message: "non-finite position, rotation or velocity".into(),
            });
        }
        if !self.node_names.insert(def.name.clone()) {
            return Err(BuildError::DuplicateName {
                what: "node",
                name: def.name,
            });
        }
        self.nodes.push(def);
        Ok(NodeId(self.nodes.len() as u32 - 1))
    }

    /// Add an element built in code; errors on a duplicate name, an unknown node id or a wrong
    /// node kind.
    pub fn add_element(
        &mut self,
        name: impl Into<String>,
        element: impl Element + 'static,
    ) -> Result<ElementId, BuildError> {
        self.add_boxed(name.into(), Box::new(element))
    }

    /// Add an element from a model-file entry through the registry.
    pub fn add_element_def(&mut self, def: &ElementDef) -> Result<ElementId, BuildError> {
        let kind = element_kind(&def.type_name, &def.name)?;
        let cx = BuildCx::new(&self.nodes);
        let element = (kind.build)(def, &cx)?;
        self.add_boxed(def.name.clone(), element)
    }

    fn add_boxed(
        &mut self,
        name: String,
        element: Box<dyn Element>,
    ) -> Result<ElementId, BuildError> {
        for (k, (id, kind)) in element.nodes().iter().zip(element.node_kinds()).enumerate() {
            let Some(node) = self.nodes.get(id.index()) else {
                return Err(BuildError::UnknownNode {
                    element: name,
                    node: format!("#{} (local node {k})", id.0),
                });
            };
            if let Some(kind) = kind {
                if node.kind != kind {
                    return Err(BuildError::NodeKind {
                        element: name,
                        node: node.name.clone(),
                        expected: kind,
                    });
                }
            }
        }
        if !self.element_name_set.insert(name.clone()) {
            return Err(BuildError::DuplicateName {
                what: "element",
                name,
            });
        }
        let index = self.elements.len();
        let id = match self.free_slots.pop() {
            Some(slot) => {
                let s = &mut self.slots[slot as usize];
                s.index = Some(index);
                ElementId {
                    slot,
                    generation: s.generation,
                }
            }
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    index: Some(index),
                });
                ElementId {
                    slot: self.slots.len() as u32 - 1,
                    generation: 0,
                }
            }
        };
        self.elements.push(element);
        self.element_names.push(name);
        self.element_handles.push(id);
        self.topology += 1;
        Ok(id)
    }

    /// Remove an element (e.g. a contact whose bodies moved apart) and return it. The order of
    /// the remaining elements is kept. Errors on a stale or unknown handle.
    pub fn remove_element(&mut self, id: ElementId) -> Result<Box<dyn Element>, BuildError> {
        let index = self.element_index(id).ok_or_else(|| {
            BuildError::Model(format!(
                "remove_element: element handle {id:?} is stale or unknown"
            ))
        })?;
        let element = self.elements.remove(index);
        let name = self.element_names.remove(index);
        self.element_handles.remove(index);
        self.element_name_set.remove(&name);
        let slot = &mut self.slots[id.slot as usize];
        slot.index = None;
        slot.generation = slot.generation.wrapping_add(1);
        self.free_slots.push(id.slot);
        for h in &self.element_handles[index..] {
            if let Some(i) = self.slots[h.slot as usize].index.as_mut() {
                *i -= 1;
            }
        }
        self.topology += 1;
        Ok(element)
    }

    /// Position of the element `id` in the element order, `None` if the handle is stale.
    pub fn element_index(&self, id: ElementId) -> Option<usize> {
        let slot = self.slots.get(id.slot as usize)?;
        if slot.generation == id.generation {
            slot.index
        } else {
            None
        }
    }

    /// The element `id`, `None` if the handle is stale.
    pub fn element(&self, id: ElementId) -> Option<&dyn Element> {
        self.element_index(id).map(|i| self.elements[i].as_ref())
    }

    /// Handles of the elements, in element order.
    pub fn element_handles(&self) -> &[ElementId] {
        &self.element_handles
    }

    /// Topology counter: changes whenever an element is added or removed.
    pub fn topology(&self) -> u64 {
        self.topology
    }

    /// Look up a node by name.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| NodeId(i as u32))
    }

    /// Look up an element by name.
    pub fn element_id(&self, name: &str) -> Option<ElementId> {
        self.element_names
            .iter()
            .position(|n| n == name)
            .map(|i| self.element_handles[i])
    }

    /// Node definitions in id order.
    pub fn nodes(&self) -> &[NodeDef] {
        &self.nodes
    }

    /// Mutable node definitions (e.g. to set initial states from a static solve).
    pub fn nodes_mut(&mut self) -> &mut [NodeDef] {
        &mut self.nodes
    }

    /// Elements in id order.
    pub fn elements(&self) -> &[Box<dyn Element>] {
        &self.elements
    }

    /// Mutable access to the elements (for `commit`).
    pub fn elements_mut(&mut self) -> &mut [Box<dyn Element>] {
        &mut self.elements
    }

    /// Element names in id order.
    pub fn element_names(&self) -> &[String] {
        &self.element_names
    }

    /// Characteristic mass \[kg\] for multiplier scaling (spec §10): the mean mass of the
    /// mass-carrying elements, 1 if there is none.
    pub fn characteristic_mass(&self) -> f64 {
        let masses: Vec<f64> = self
            .elements
            .iter()
            .map(|e| e.mass())
            .filter(|m| *m > 0.0)
            .collect();
        if masses.is_empty() {
            1.0
        } else {
            masses.iter().sum::<f64>() / masses.len() as f64
        }
    }

    /// Check the model before a static solve: every free node must be reached by an element
    /// that takes part in static equilibrium (a force, a constraint). Statics needs no mass, so
    /// massless connector nodes are allowed.
    pub fn validate_static(&self) -> Result<(), BuildError> {
        let mut reached = vec![false; self.nodes.len()];
        for e in &self.elements {
            if crate::stage::participates(e.as_ref(), Level::Static) {
                for id in e.nodes() {
                    reached[id.index()] = true;
                }
            }
        }
        for (node, ok) in self.nodes.iter().zip(reached) {
            if !node.fixed && !ok {
                return Err(BuildError::Model(format!(
                    "free node `{}` is not connected to any element that takes part in static \
                     equilibrium (add a force or a joint on it, or make it fixed)",
                    node.name
                )));
            }
        }
        Ok(())
    }

    /// Check the model before a run: every free node must be reached by an element that
    /// contributes to all three dynamic levels (inertia), otherwise the iteration matrices
    /// are singular; and no mass may sit on fixed nodes only (a body that can never move is a
    /// modelling error: a node fixed by mistake, or a body meant for another node).
    pub fn validate(&self) -> Result<(), BuildError> {
        let mut has_inertia = vec![false; self.nodes.len()];
        for (ie, e) in self.elements.iter().enumerate() {
            if e.mass() > 0.0 && crate::stage::participates(e.as_ref(), Level::Velocity) {
                for id in e.nodes() {
                    has_inertia[id.index()] = true;
                }
                let nodes = e.nodes();
                if !nodes.is_empty() && nodes.iter().all(|id| self.nodes[id.index()].fixed) {
                    let names: Vec<&str> = nodes
                        .iter()
                        .map(|id| self.nodes[id.index()].name.as_str())
                        .collect();
                    return Err(BuildError::Model(format!(
                        "element `{}` ({}): its mass is on fixed node(s) `{}` only and can never \
                         move (free the node, or remove the element)",
                        self.element_names[ie],
                        e.type_name(),
                        names.join("`, `")
                    )));
                }
            }
        }
        for (node, ok) in self.nodes.iter().zip(has_inertia) {
            if !node.fixed && !ok {
                return Err(BuildError::Model(format!(
                    "free node `{}` carries no mass (add a rigid_body/point_mass on it, or make it fixed)",
                    node.name
                )));
            }
        }
        Ok(())
    }
}
