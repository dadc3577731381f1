//! Contact groups: run-time contact detection that creates and removes sphere–sphere and
//! sphere–plane contact elements between steps (a [`Detector`] of the model).
//!
//! A group declares which bodies may touch and with what law, not the pairs: its member
//! spheres (frame nodes with radii) touch each other (unless `self_contact` is off) and the
//! group's fixed planes, all with one [`ContactLaw`]. Before every step the broad phase finds
//! the pairs whose gap is below the creation threshold `margin + 2h(|v_a| + |v_b|)` and adds a
//! contact element for each new one; an element whose gap exceeds the keeping threshold
//! `2 margin + 4h(|v_a| + |v_b|)` is removed (the hysteresis avoids creating and removing the
//! same contact on alternate steps; the velocity terms make sure a contact exists before two
//! bodies can meet within the step). Contacts closed at position level are never removed
//! while they are within the threshold, so a removed element carries no history worth keeping.
//!
//! Broad phase: a list of candidate sphere pairs kept between steps (a Verlet list): the pairs
//! whose centres were within `r_a + r_b + c` when it was built, from an R*-tree of the centres
//! (`rstar`, bulk-loaded) queried with each sphere's reach, so a model of `N` spheres costs
//! `O(N log N)` per build instead of the `N²/2` pairs. The collection distance `c` is the
//! largest keeping threshold at the build, `2 margin + 8h max|v|`, plus a skin of half the
//! smallest radius. A pair outside the list is still farther than `c` minus what its two
//! spheres moved since, so the list holds every pair that can qualify while
//! `2 max|x − x_build| + 2 margin + 8h max|v| ≤ c` (with a round-off allowance of 1e-9 of
//! `c + r_max`); otherwise, or when `c` exceeds twice the current `2 margin + 8h max|v|` plus
//! skin (a burst of speed has passed), it is rebuilt first. One fast sphere sets
//! `max|v|` for every pair, so its presence enlarges every pair's reach. Each step
//! then tests only the listed pairs, with the same gaps and thresholds: the same contacts as a
//! full search, found without it while the spheres stay within the skin (a resting pile, most
//! steps of a granular run). Planes are checked against every member (their count is small).
//! Two groups may share members, e.g. ball–ball with one law and ball–cloth with another.

use super::plane::PlaneContact;
use super::spheres::SphereContact;
use nalgebra::Vector3;
use rstar::primitives::GeomWithData;
use rstar::RTree;
use saltus_core::contact::ContactLaw;
use saltus_core::contact_force::ForceRecoverySpec;
use saltus_core::registry::{CompositeDef, CompositeError};
use saltus_core::{
    BuildError, Detector, ElementDef, ElementId, Model, NodeId, NodeKind, NodeState,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::iter::Peekable;

/// A fixed plane of a group: a point \[m\] and the unit normal pointing to the admissible side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupPlane {
    /// A point of the plane \[m\].
    pub point: Vector3<f64>,
    /// Unit normal.
    pub normal: Vector3<f64>,
}

/// What a detected contact is between: two members `(i, j)`, `i < j`, or member `i` and plane
/// `p`. Ordered, so contacts are created and removed in a deterministic order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Pair {
    Spheres(u32, u32),
    Plane(u32, u32),
}

/// A contact group (module docs). Build with [`ContactGroup::new`] and the builder methods,
/// add with [`Model::add_detector`].
#[derive(Clone, Debug)]
pub struct ContactGroup {
    name: String,
    members: Vec<(NodeId, f64)>,
    planes: Vec<GroupPlane>,
    self_contact: bool,
    law: ContactLaw,
    /// Force recovery of every contact the group creates.
    force: Option<ForceRecoverySpec>,
    margin: Option<f64>,
    /// The contact elements the group has in the model.
    contacts: BTreeMap<Pair, ElementId>,
    created: usize,
    removed: usize,
    /// [`ContactGroup::validate`] passed (checked at the first update).
    validated: bool,
    /// The candidate sphere pairs (module docs).
    candidates: Candidates,
}

/// The candidate sphere pairs of a group (module docs: the Verlet list).
#[derive(Clone, Debug, Default)]
struct Candidates {
    /// Member centres \[m\] at the build; empty: not built.
    x_build: Vec<Vector3<f64>>,
    /// Collection distance `c` \[m\] beyond `r_a + r_b`.
    reach: f64,
    /// The pairs `(i, j)`, `i < j`, ascending.
    pairs: Vec<(u32, u32)>,
    /// Builds so far.
    builds: usize,
}

/// Skin of the candidate list as a fraction of the smallest member radius: how far the
/// spheres may move (together with the growth of the velocity terms) before the list is
/// rebuilt. (A group of very different radii therefore rebuilds more often.)
pub const SKIN_FRACTION: f64 = 0.5;

/// Default detection margin as a fraction of the smallest member radius.
pub const DEFAULT_MARGIN_FRACTION: f64 = 0.05;

impl ContactGroup {
    /// An empty group named `name` (prefix of its contact elements' names), self contact on,
    /// frictionless and plastic until set.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            members: Vec::new(),
            planes: Vec::new(),
            self_contact: true,
            law: ContactLaw::default(),
            force: None,
            margin: None,
            contacts: BTreeMap::new(),
            created: 0,
            removed: 0,
            validated: false,
            candidates: Candidates::default(),
        }
    }

    /// Add a member sphere of radius `radius` \[m\] centred on frame node `node`.
    pub fn sphere(mut self, node: NodeId, radius: f64) -> Self {
        self.members.push((node, radius));
        self
    }

    /// Add member spheres of the same radius \[m\].
    pub fn spheres(mut self, nodes: &[NodeId], radius: f64) -> Self {
        self.members.extend(nodes.iter().map(|n| (*n, radius)));
        self
    }

    /// Add a fixed plane through `point` \[m\] with normal `normal` (normalized).
    pub fn plane(mut self, point: Vector3<f64>, normal: Vector3<f64>) -> Self {
        self.planes.push(GroupPlane { point, normal });
        self
    }

    /// Add an open square box: the floor `z = 0` (normal `+z`) and four walls at
    /// `x = ±half_width`, `y = ±half_width` \[m\] facing inwards.
    pub fn open_box(self, half_width: f64) -> Self {
        let h = half_width;
        self.plane(Vector3::zeros(), Vector3::z())
            .plane(Vector3::new(-h, 0.0, 0.0), Vector3::x())
            .plane(Vector3::new(h, 0.0, 0.0), -Vector3::x())
            .plane(Vector3::new(0.0, -h, 0.0), Vector3::y())
            .plane(Vector3::new(0.0, h, 0.0), -Vector3::y())
    }

    /// Whether members touch each other (default true; off for a group of planes only).
    pub fn self_contact(mut self, on: bool) -> Self {
        self.self_contact = on;
        self
    }

    /// Coulomb friction coefficient `μ ≥ 0`.
    pub fn friction(mut self, mu: f64) -> Self {
        self.law.friction = mu;
        self
    }

    /// Normal and tangential restitution `e_N ∈ [0, 1]`, `e_T ∈ [−1, 1]`.
    pub fn restitution(mut self, e_n: f64, e_t: f64) -> Self {
        self.law.restitution = e_n;
        self.law.tangential_restitution = e_t;
        self
    }

    /// Rolling and spinning resistance lengths `ρ`, `γ_s` \[m\].
    pub fn resistance(mut self, rolling: f64, spinning: f64) -> Self {
        self.law.rolling_resistance = rolling;
        self.law.spinning_resistance = spinning;
        self
    }

    /// Recover the forces of every contact the group creates while the model runs (see
    /// [`ContactElement::force_recovery`](super::element::ContactElement::force_recovery)).
    pub fn force_recovery(mut self, spec: ForceRecoverySpec) -> Self {
        self.force = Some(spec);
        self
    }

    /// Friction falling with the sliding speed, `μ(v) = μ + extra · e^{−rate v}` (`rate` in
    /// s/m; `saltus_core::contact::FrictionDecay`).
    pub fn friction_decay(mut self, extra: f64, rate: f64) -> Self {
        self.law.friction_decay = saltus_core::contact::FrictionDecay { extra, rate };
        self
    }

    /// Detection margin \[m\] (≥ 0); default [`DEFAULT_MARGIN_FRACTION`] of the smallest radius.
    pub fn margin(mut self, margin: f64) -> Self {
        self.margin = Some(margin);
        self
    }

    /// The group's name.
    pub fn group_name(&self) -> &str {
        &self.name
    }

    /// Contact elements the group has in the model now.
    pub fn contact_count(&self) -> usize {
        self.contacts.len()
    }

    /// Contact elements created and removed so far.
    pub fn churn(&self) -> (usize, usize) {
        (self.created, self.removed)
    }

    /// Builds of the candidate pair list so far (module docs).
    pub fn candidate_builds(&self) -> usize {
        self.candidates.builds
    }

    /// Check the data against `model` (members are distinct frame nodes of the model, radii
    /// and margin valid, law in range); errors name the group and the parameter.
    pub fn validate(&self, model: &Model) -> Result<(), BuildError> {
        let bad = |parameter: &str, message: String| BuildError::InvalidParameter {
            element: format!("contact group `{}`", self.name),
            parameter: parameter.into(),
            message,
        };
        let mut seen = std::collections::HashSet::new();
        for (node, r) in &self.members {
            let Some(def) = model.nodes().get(node.index()) else {
                return Err(bad("nodes", format!("unknown node index {}", node.index())));
            };
            if def.kind != NodeKind::Frame {
                return Err(bad(
                    "nodes",
                    format!("node `{}` must be a frame node (spheres rotate)", def.name),
                ));
            }
            if !seen.insert(*node) {
                return Err(bad("nodes", format!("node `{}` is listed twice", def.name)));
            }
            if !(r.is_finite() && *r > 0.0) {
                return Err(bad(
                    "radius",
                    format!("must be finite and > 0, got {r} (node `{}`)", def.name),
                ));
            }
        }
        for p in &self.planes {
            let n = p.normal.norm();
            if !(p.point.iter().all(|x| x.is_finite()) && n.is_finite() && n > 1e-12) {
                return Err(bad(
                    "planes",
                    format!(
                        "a plane needs a finite point and a finite non-zero normal, got {:?}, {:?}",
                        p.point, p.normal
                    ),
                ));
            }
        }
        if let Some(m) = self.margin {
            if !(m.is_finite() && m >= 0.0) {
                return Err(bad("margin", format!("must be finite and >= 0, got {m}")));
            }
        }
        let l = &self.law;
        for (name, v) in [
            ("friction", l.friction),
            ("rolling_resistance", l.rolling_resistance),
            ("spinning_resistance", l.spinning_resistance),
            ("friction_decay", l.friction_decay.extra),
            ("friction_decay_rate", l.friction_decay.rate),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(name, format!("must be finite and >= 0, got {v}")));
            }
        }
        if !(0.0..=1.0).contains(&l.restitution) {
            return Err(bad(
                "restitution",
                format!("must be in [0, 1], got {}", l.restitution),
            ));
        }
        if !(-1.0..=1.0).contains(&l.tangential_restitution) {
            return Err(bad(
                "tangential_restitution",
                format!("must be in [-1, 1], got {}", l.tangential_restitution),
            ));
        }
        Ok(())
    }

    fn margin_value(&self) -> f64 {
        self.margin.unwrap_or_else(|| {
            DEFAULT_MARGIN_FRACTION
                * self
                    .members
                    .iter()
                    .map(|m| m.1)
                    .fold(f64::INFINITY, f64::min)
        })
    }

    /// The pairs that should have a contact element at the node states `nodes`, before a step
    /// of size `h` (module docs: creation and keeping thresholds), ascending.
    fn wanted(&mut self, h: f64, nodes: &[NodeState]) -> Vec<Pair> {
        let margin = self.margin_value();
        let speed = |i: usize| nodes[self.members[i].0.index()].v.norm();
        let centre = |i: usize| nodes[self.members[i].0.index()].x;
        // Keeping threshold of a pair the group has, creation threshold of a new one.
        let threshold = |held: bool, reach: f64| {
            if held {
                2.0 * margin + 4.0 * h * reach
            } else {
                margin + 2.0 * h * reach
            }
        };
        let n = self.members.len();
        let mut out = Vec::new();
        if self.self_contact && n > 1 {
            // Largest of non-negative values, a NaN kept (it forces a rebuild below).
            let largest = |m: f64, x: f64| if x > m || x.is_nan() { x } else { m };
            let v_max = (0..n).map(speed).fold(0.0, largest);
            // The largest threshold any pair can have now: 2 margin + 4h(|v_a| + |v_b|).
            let bound = 2.0 * margin + 8.0 * h * v_max;
            let list = &self.candidates;
            let moved = if list.x_build.len() == n {
                (0..n)
                    .map(|i| (centre(i) - list.x_build[i]).norm())
                    .fold(0.0, largest)
            } else {
                f64::INFINITY
            };
            let r_max = self.members.iter().map(|m| m.1).fold(0.0, f64::max);
            let r_min = self
                .members
                .iter()
                .map(|m| m.1)
                .fold(f64::INFINITY, f64::min);
            let skin = SKIN_FRACTION * r_min;
            // Round-off allowance of the distances compared.
            let slack = 1e-9 * (r_max + list.reach);
            // The list holds every pair that can qualify; and it is not more than twice as
            // large as now needed (after a burst of speed has passed). Not `>`: NaN rebuilds.
            let holds =
                2.0 * moved + bound + slack <= list.reach && list.reach <= 2.0 * (bound + skin);
            if !holds {
                build_candidates(&mut self.candidates, &self.members, bound + skin, nodes);
            }
            // The listed pairs (ascending, as the group's contacts: one walk over both).
            let mut have = self.contacts.keys().peekable();
            for &(i, j) in &self.candidates.pairs {
                let pair = Pair::Spheres(i, j);
                let held = walk_to(&mut have, pair);
                let (i, j) = (i as usize, j as usize);
                let gap = (centre(i) - centre(j)).norm() - self.members[i].1 - self.members[j].1;
                if gap < threshold(held, speed(i) + speed(j)) {
                    out.push(pair);
                }
            }
        }
        // Member–plane pairs in ascending order, walked with the group's plane contacts.
        let mut have = self
            .contacts
            .range(Pair::Plane(0, 0)..)
            .map(|(p, _)| p)
            .peekable();
        let normals: Vec<Vector3<f64>> = self.planes.iter().map(|p| p.normal.normalize()).collect();
        for i in 0..n {
            for (p, (plane, normal)) in self.planes.iter().zip(&normals).enumerate() {
                let gap = normal.dot(&(centre(i) - plane.point)) - self.members[i].1;
                let pair = Pair::Plane(i as u32, p as u32);
                if gap < threshold(walk_to(&mut have, pair), speed(i)) {
                    out.push(pair);
                }
            }
        }
        // Ascending already: the sphere pairs in order, then the plane pairs in order.
        out
    }

    /// The contact element of `pair`, with its name.
    fn element(&self, model: &Model, pair: Pair) -> Result<(String, ContactKind), BuildError> {
        let node_name = |i: u32| &model.nodes()[self.members[i as usize].0.index()].name;
        let law = &self.law;
        match pair {
            Pair::Spheres(i, j) => {
                let (a, ra) = self.members[i as usize];
                let (b, rb) = self.members[j as usize];
                let c = SphereContact::spheres(a, b, ra, rb)?
                    .friction(law.friction)
                    .friction_decay(law.friction_decay.extra, law.friction_decay.rate)
                    .restitution(law.restitution, law.tangential_restitution)
                    .resistance(law.rolling_resistance, law.spinning_resistance);
                let c = match &self.force {
                    Some(f) => c.force_recovery(f)?,
                    None => c,
                };
                Ok((
                    format!("{}:{}-{}", self.name, node_name(i), node_name(j)),
                    ContactKind::Spheres(c),
                ))
            }
            Pair::Plane(i, p) => {
                let (a, ra) = self.members[i as usize];
                let plane = self.planes[p as usize];
                let c = PlaneContact::sphere(a, ra, plane.point, plane.normal)?
                    .friction(law.friction)
                    .friction_decay(law.friction_decay.extra, law.friction_decay.rate)
                    .restitution(law.restitution, law.tangential_restitution)
                    .resistance(law.rolling_resistance, law.spinning_resistance);
                let c = match &self.force {
                    Some(f) => c.force_recovery(f)?,
                    None => c,
                };
                Ok((
                    format!("{}:{}-plane{}", self.name, node_name(i), p + 1),
                    ContactKind::Plane(c),
                ))
            }
        }
    }
}

/// Whether `pair` is among the pairs `have` yields in ascending order, advancing it past the
/// smaller ones: queries in ascending order walk both lists once.
fn walk_to<'p>(have: &mut Peekable<impl Iterator<Item = &'p Pair>>, pair: Pair) -> bool {
    while have.next_if(|p| **p < pair).is_some() {}
    have.peek() == Some(&&pair)
}

/// Rebuild `list` for the spheres `members` (node, radius) at `nodes`: every pair whose centres
/// are within `r_a + r_b + reach`, found with an R*-tree of the centres queried with each
/// sphere's radius plus the largest radius plus `reach` (module docs).
fn build_candidates(
    list: &mut Candidates,
    members: &[(NodeId, f64)],
    reach: f64,
    nodes: &[NodeState],
) {
    let centre = |i: usize| nodes[members[i].0.index()].x;
    let n = members.len();
    let points: Vec<GeomWithData<[f64; 3], usize>> = (0..n)
        .map(|i| GeomWithData::new(centre(i).into(), i))
        .collect();
    let tree = RTree::bulk_load(points);
    let r_max = members.iter().map(|m| m.1).fold(0.0, f64::max);
    list.pairs.clear();
    for i in 0..n {
        let r_i = members[i].1;
        let query = r_i + r_max + reach;
        let x_i: [f64; 3] = centre(i).into();
        for other in tree.locate_within_distance(x_i, query * query) {
            let j = other.data;
            if j > i && (centre(i) - centre(j)).norm() < r_i + members[j].1 + reach {
                list.pairs.push((i as u32, j as u32));
            }
        }
    }
    list.pairs.sort_unstable();
    list.x_build.clear();
    list.x_build.extend((0..n).map(centre));
    list.reach = reach;
    list.builds += 1;
}

enum ContactKind {
    Spheres(SphereContact),
    Plane(PlaneContact),
}

impl Detector for ContactGroup {
    fn name(&self) -> &str {
        &self.name
    }

    fn update(
        &mut self,
        model: &mut Model,
        _t: f64,
        h: f64,
        nodes: &[NodeState],
    ) -> Result<(), BuildError> {
        if !self.validated {
            self.validate(model)?;
            self.validated = true;
        }
        let wanted = self.wanted(h, nodes);
        debug_assert!(
            wanted.windows(2).all(|w| w[0] < w[1]),
            "contact group {}: wanted pairs not sorted and distinct",
            self.name
        );
        // One walk over the two sorted lists: the contacts no longer wanted and the new pairs.
        let (mut stale, mut new) = (Vec::new(), Vec::new());
        let mut have = self.contacts.keys().copied().peekable();
        for &pair in &wanted {
            while let Some(p) = have.next_if(|p| *p < pair) {
                stale.push(p);
            }
            if have.next_if_eq(&pair).is_none() {
                new.push(pair);
            }
        }
        stale.extend(have);
        for pair in stale {
            if let Some(id) = self.contacts.remove(&pair) {
                model.remove_element(id)?;
                self.removed += 1;
            }
        }
        for pair in new {
            let (name, element) = self.element(model, pair)?;
            let id = match element {
                ContactKind::Spheres(c) => model.add_element(name, c)?,
                ContactKind::Plane(c) => model.add_element(name, c)?,
            };
            self.contacts.insert(pair, id);
            self.created += 1;
        }
        Ok(())
    }
}

/// Model-file entry of `[[contact_groups]]` (also what `saltus elements contact_groups`
/// lists: keep every field documented, units in brackets).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct GroupSpec {
    /// Name of the group (prefix of the contact elements it creates).
    name: String,
    /// Member frame nodes.
    nodes: Vec<String>,
    /// One radius for every member \[m\] (or `radii`).
    #[serde(default)]
    radius: Option<f64>,
    /// One radius per member \[m\] (or `radius`).
    #[serde(default)]
    radii: Option<Vec<f64>>,
    /// Fixed planes the members may touch: tables `{ point = [x, y, z], normal = [x, y, z] }`,
    /// `point` a point of the plane in metres (default the origin), `normal` pointing to the
    /// admissible side.
    #[serde(default)]
    planes: Vec<PlaneSpec>,
    /// Members may touch each other (default `true`; `false`: planes only).
    #[serde(default = "yes")]
    self_contact: bool,
    /// Coulomb friction coefficient `μ` \[-\] (≥ 0).
    #[serde(default)]
    friction: f64,
    /// Normal restitution `e_N ∈ [0, 1]` \[-\].
    #[serde(default)]
    restitution: f64,
    /// Tangential restitution `e_T ∈ [−1, 1]` \[-\].
    #[serde(default)]
    tangential_restitution: f64,
    /// Rolling resistance length `ρ` \[m\] (≥ 0).
    #[serde(default)]
    rolling_resistance: f64,
    /// Spinning resistance length `γ_s` \[m\] (≥ 0).
    #[serde(default)]
    spinning_resistance: f64,
    /// Friction falling with the sliding speed `v` \[-\]: `μ(v) = friction + friction_decay ·
    /// e^{−friction_decay_rate · v}` (≥ 0; 0: constant μ).
    #[serde(default)]
    friction_decay: f64,
    /// Decay rate of `friction_decay` \[s/m\] (≥ 0).
    #[serde(default)]
    friction_decay_rate: f64,
    /// Detection margin \[m\] (≥ 0): a contact element is created when the gap falls below
    /// `margin + 2h(|v_a| + |v_b|)` (default: `DEFAULT_MARGIN_FRACTION` = 5 % of the smallest
    /// radius).
    #[serde(default)]
    margin: Option<f64>,
    /// Contact forces recovered while the model runs (see
    /// `saltus_core::contact_force::ForceRecoverySpec`).
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    force_recovery: Option<ForceRecoverySpec>,
}

/// A fixed plane of a contact group.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct PlaneSpec {
    /// A point of the plane \[m\] (default the origin).
    #[serde(default)]
    point: [f64; 3],
    /// Plane normal \[-\], pointing to the admissible side.
    normal: [f64; 3],
}

fn yes() -> bool {
    true
}

/// Expand a `[[contact_groups]]` entry: a detector added to the model (no elements now).
fn expand_group(def: &CompositeDef, model: &mut Model) -> Result<Vec<ElementDef>, CompositeError> {
    let spec: GroupSpec = serde_json::from_value(serde_json::Value::Object(def.parameters.clone()))
        .map_err(|e| {
            let message = saltus_core::registry::name_offending_key::<GroupSpec>(
                &serde_json::Value::Object(def.parameters.clone()),
                e.to_string(),
            );
            let parameter = message
                .split('`')
                .nth(1)
                .filter(|k| def.parameters.contains_key(*k) || message.contains("missing"))
                .map(str::to_string);
            CompositeError { parameter, message }
        })?;
    let radii = match (spec.radius, spec.radii) {
        (Some(r), None) => vec![r; spec.nodes.len()],
        (None, Some(r)) if r.len() == spec.nodes.len() => r,
        (None, Some(r)) => {
            return Err(CompositeError::at(
                "radii",
                format!("has {} entries for {} nodes", r.len(), spec.nodes.len()),
            ))
        }
        (Some(_), Some(_)) => {
            return Err(CompositeError::at(
                "radii",
                "give either `radius` (all members) or `radii` (one per node), not both",
            ))
        }
        (None, None) => {
            return Err(CompositeError::at(
                "radius",
                "missing: the members' radius in m (or `radii`, one per node)",
            ))
        }
    };
    if spec.nodes.is_empty() {
        return Err(CompositeError::at("nodes", "must list at least one node"));
    }
    let mut group = ContactGroup::new(spec.name)
        .self_contact(spec.self_contact)
        .friction(spec.friction)
        .restitution(spec.restitution, spec.tangential_restitution)
        .resistance(spec.rolling_resistance, spec.spinning_resistance)
        .friction_decay(spec.friction_decay, spec.friction_decay_rate);
    if let Some(m) = spec.margin {
        group = group.margin(m);
    }
    if let Some(f) = spec.force_recovery {
        // Check the declaration now (a sphere pair of the group's smallest radii), so a bad
        // one is reported with the model file, not at the first contact.
        if let Err(e) = f.resolve(Some([1.0, 1.0])) {
            return Err(CompositeError::at("force_recovery", e.to_string()));
        }
        group = group.force_recovery(f);
    }
    for (node, r) in spec.nodes.iter().zip(radii) {
        let Some(id) = model.node_id(node) else {
            return Err(CompositeError::at(
                "nodes",
                format!("unknown node `{node}`"),
            ));
        };
        group = group.sphere(id, r);
    }
    for p in &spec.planes {
        group = group.plane(Vector3::from(p.point), Vector3::from(p.normal));
    }
    group.validate(model).map_err(|e| match e {
        BuildError::InvalidParameter {
            parameter, message, ..
        } => CompositeError {
            parameter: Some(parameter),
            message,
        },
        other => CompositeError {
            parameter: None,
            message: other.to_string(),
        },
    })?;
    model.add_detector(group);
    Ok(Vec::new())
}

saltus_core::register_composite! {
    key: "contact_groups",
    label: "contact group",
    summary: "Spheres (frame nodes with radii) that may touch each other and fixed planes, with one contact law; contact elements are created and removed during the run",
    expand: expand_group,
    params: GroupSpec,
}
