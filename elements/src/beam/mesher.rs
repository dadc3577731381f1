//! [`BeamBuilder`]: meshing a straight line between two frame nodes into beam elements.

use super::*;

/// Nodes and elements created by [`BeamBuilder`].
#[derive(Clone, Debug, PartialEq)]
pub struct BeamLine {
    /// All `n + 1` nodes along the line, from the first end to the second (ends included).
    pub nodes: Vec<NodeId>,
    /// The `n` beam elements, in order.
    pub elements: Vec<ElementId>,
}

/// Code-first mesher: discretizes the straight line between two frame nodes into `n` equal
/// [`Beam`] elements.
///
/// Intermediate nodes are free frame nodes named `<name>_n1 … <name>_n{n−1}`, equally spaced,
/// rotated to the section frame of the line (body axis x along the beam, y along section
/// axis 2), with initial velocities interpolated linearly from the end nodes (translational
/// velocity and spatial angular velocity; exact for a rigid motion of the line). Elements are
/// named `<name>_e1 … <name>_e{n}`. The end nodes keep their own rotations (any).
#[derive(Clone, Debug, PartialEq)]
pub struct BeamBuilder {
    name: String,
    spec: BeamSpec,
}

impl BeamBuilder {
    /// A builder creating elements of section `spec`, names prefixed by `name`.
    pub fn new(name: impl Into<String>, spec: BeamSpec) -> Self {
        Self {
            name: name.into(),
            spec,
        }
    }

    /// Discretize the line from the existing frame node `a` to the existing frame node `b`
    /// into `n ≥ 1` elements. The model is left unchanged on error (checked before adding).
    pub fn line(
        &self,
        model: &mut Model,
        a: NodeId,
        b: NodeId,
        n: usize,
    ) -> Result<BeamLine, BuildError> {
        let name = &self.name;
        if n == 0 {
            return Err(invalid(name, "n", "at least one element is required"));
        }
        let section = self.spec.section(name)?;
        let mut ends = [NodeState::default(); 2];
        for (k, id) in [a, b].iter().enumerate() {
            let Some(def) = model.nodes().get(id.index()) else {
                return Err(BuildError::UnknownNode {
                    element: name.clone(),
                    node: format!("#{}", id.0),
                });
            };
            if def.kind != NodeKind::Frame {
                return Err(BuildError::NodeKind {
                    element: name.clone(),
                    node: def.name.clone(),
                    expected: NodeKind::Frame,
                });
            }
            ends[k] = def.initial;
        }
        let frame = section.frame(name, &(ends[1].x - ends[0].x))?;
        let rot = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(frame));
        for k in 1..n {
            let node = format!("{name}_n{k}");
            if model.node_id(&node).is_some() {
                return Err(BuildError::DuplicateName {
                    what: "node",
                    name: node,
                });
            }
        }
        for k in 1..=n {
            let el = format!("{name}_e{k}");
            if model.element_id(&el).is_some() {
                return Err(BuildError::DuplicateName {
                    what: "element",
                    name: el,
                });
            }
        }
        let w = [ends[0].omega_spatial(), ends[1].omega_spatial()];
        let mut nodes = vec![a];
        for k in 1..n {
            let t = k as f64 / n as f64;
            let x = ends[0].x * (1.0 - t) + ends[1].x * t;
            let v = ends[0].v * (1.0 - t) + ends[1].v * t;
            let omega = w[0] * (1.0 - t) + w[1] * t;
            let def = NodeDef::frame(format!("{name}_n{k}"), x)
                .rotation(rot)
                .velocity(v)
                .angular_velocity(omega);
            nodes.push(model.add_node(def)?);
        }
        nodes.push(b);
        let mut elements = Vec::with_capacity(n);
        for k in 0..n {
            let ids = [nodes[k], nodes[k + 1]];
            let initial = [
                model.nodes()[ids[0].index()].initial,
                model.nodes()[ids[1].index()].initial,
            ];
            let el = format!("{name}_e{}", k + 1);
            let beam = Beam::from_section(&el, ids, &initial, &section)?;
            elements.push(model.add_element(el, beam)?);
        }
        Ok(BeamLine { nodes, elements })
    }

    /// Create the end nodes `<name>_n0` at `xa` and `<name>_n{n}` at `xb` \[m\] (free frame
    /// nodes at rest, rotated to the section frame) and discretize the line between them.
    pub fn line_from_points(
        &self,
        model: &mut Model,
        xa: Vector3<f64>,
        xb: Vector3<f64>,
        n: usize,
    ) -> Result<BeamLine, BuildError> {
        let name = &self.name;
        if n == 0 {
            return Err(invalid(name, "n", "at least one element is required"));
        }
        let section = self.spec.section(name)?;
        let rot = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(
            section.frame(name, &(xb - xa))?,
        ));
        let a = model.add_node(NodeDef::frame(format!("{name}_n0"), xa).rotation(rot))?;
        let b = model.add_node(NodeDef::frame(format!("{name}_n{n}"), xb).rotation(rot))?;
        self.line(model, a, b, n)
    }
}
