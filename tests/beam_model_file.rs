//! `[[beam_lines]]` with the real `beam` element: a model file meshes exactly like
//! `BeamBuilder` (same nodes bit for bit, same elements — identical trajectories), for a
//! general 3-D case and for the shipped `models/flexible_crank.toml`, which also runs on the
//! rigid closed form.

use saltus::elements::beam::{BeamBuilder, BeamSpec};
use saltus::io::{parse_str, Format, ModelFile};
use saltus::prelude::*;
use std::collections::HashSet;
use std::f64::consts::PI;

/// A beam line of a model file: (name, from, to, elements).
type Line<'a> = (&'a str, &'a str, &'a str, usize);

/// The model of `mf` rebuilt in code: its file nodes, then every beam line through
/// `BeamBuilder` (section from the line's parameters), then the `[[elements]]` entries.
fn rebuild_with_builder(mf: &ModelFile, lines: &[Line<'_>]) -> Model {
    let generated: HashSet<String> = lines
        .iter()
        .flat_map(|(name, _, _, n)| (1..*n).map(move |k| format!("{name}_n{k}")))
        .collect();
    let mut model = Model::new();
    for def in mf.model.nodes() {
        if !generated.contains(&def.name) {
            model.add_node(def.clone()).unwrap();
        }
    }
    let mut beams = HashSet::new();
    for (name, from, to, n) in lines {
        let first = mf
            .elements
            .iter()
            .find(|d| d.name == format!("{name}_e1"))
            .unwrap();
        let spec: BeamSpec = serde_json::from_value(first.parameters.clone()).unwrap();
        let (a, b) = (model.node_id(from).unwrap(), model.node_id(to).unwrap());
        BeamBuilder::new(*name, spec)
            .line(&mut model, a, b, *n)
            .unwrap();
        beams.extend((1..=*n).map(|k| format!("{name}_e{k}")));
    }
    for def in &mf.elements {
        if !beams.contains(&def.name) {
            model.add_element_def(def).unwrap();
        }
    }
    model
}

/// Same nodes (exactly) and elements (names), and bit-identical states after `steps` NSGA
/// steps from both models.
fn assert_same(file: &mut Model, code: &mut Model, opts: &NsgaOptions, steps: usize) {
    assert_eq!(file.nodes(), code.nodes());
    assert_eq!(file.element_names(), code.element_names());
    let mut a = Nsga::new(file, opts.clone()).unwrap();
    let mut b = Nsga::new(code, opts.clone()).unwrap();
    for _ in 0..steps {
        a.step(file).unwrap();
        b.step(code).unwrap();
    }
    assert_eq!(a.nodes(), b.nodes());
    let moved = a
        .nodes()
        .iter()
        .zip(file.nodes())
        .map(|(s, d)| (s.x - d.initial.x).norm())
        .fold(0.0, f64::max);
    eprintln!(
        "{} nodes, {} elements: identical after {steps} steps (largest displacement {moved:.3e} m)",
        file.nodes().len(),
        file.elements().len()
    );
    assert!(moved > 0.0);
}

/// A clamped, inclined line with a rotated, moving tip and an `orientation`, continued by a
/// vertical line (default section rule: axis 2 = e_x) to a free end; gravity. Exercises every
/// interpolation (positions, rotations, velocities, spatial angular velocities).
const GENERAL: &str = r#"
[[nodes]]
name = "root"
position = [0.1, -0.2, 0.3]
rotation_vector = [0.2, 0.1, -0.4]
fixed = true

[[nodes]]
name = "joint"
position = [0.8, 0.5, 0.1]
rotation_vector = [-0.5, 0.3, 1.2]
velocity = [0.1, -0.2, 0.3]
angular_velocity = [0.5, -0.1, 0.8]

[[nodes]]
name = "end"
position = [0.8, 0.5, 1.1]
velocity = [0.0, 0.4, 0.0]

[[beam_lines]]
name = "arm"
from = "root"
to = "joint"
elements = 5
E = 2.0e9
nu = 0.3
A = 3e-4
I2 = 2e-8
I3 = 1e-8
rho = 1200.0
orientation = [0.0, 0.3, 1.0]
alpha = 0.5
beta = 1e-4

[[beam_lines]]
name = "mast"
from = "joint"
to = "end"
elements = 3
E = 2.0e9
G = 0.8e9
A = 3e-4
I2 = 2e-8
I3 = 2e-8
rho = 1200.0
"#;

#[test]
fn beam_lines_mesh_exactly_like_beam_builder() {
    let mut mf = parse_str(GENERAL, Format::Toml, "general.toml").unwrap();
    let lines = [("arm", "root", "joint", 5), ("mast", "joint", "end", 3)];
    let mut code = rebuild_with_builder(&mf, &lines);
    // The generated elements are stress-free in the initial configuration (also checks that
    // the file's section frames agree with the element's rule).
    let nodes: Vec<NodeState> = mf.model.nodes().iter().map(|d| d.initial).collect();
    for (name, e) in mf.model.element_names().iter().zip(mf.model.elements()) {
        let local: Vec<NodeState> = e.nodes().iter().map(|id| nodes[id.index()]).collect();
        let os = saltus::core::OutputState {
            t: 0.0,
            nodes: &local,
            kinds: &[NodeKind::Frame; 2],
            mult_smooth: &[],
            mult_position: &[],
            mult_velocity: &[],
            k: [1.0; 3],
            h: 1e-3,
            gravity: Vector3::zeros(),
        };
        assert!(e.energy(&os).potential.abs() < 1e-12, "{name}");
    }
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 1.0,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        ..NsgaOptions::default()
    };
    assert_same(&mut mf.model, &mut code, &opts, 20);
}

fn load_flexible_crank() -> ModelFile {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/flexible_crank.toml");
    saltus::io::load_model(path).unwrap()
}

#[test]
fn shipped_flexible_crank_equals_builder_model() {
    let mut mf = load_flexible_crank();
    assert_eq!(mf.model.nodes().len(), 6 + 3 + 3);
    assert_eq!(
        mf.elements.iter().filter(|d| d.type_name == "beam").count(),
        8
    );
    let lines = [
        ("crank", "crank_root", "crank_tip", 4),
        ("rod", "rod_root", "rod_tip", 4),
    ];
    let mut code = rebuild_with_builder(&mf, &lines);
    let opts = saltus::driver::nsga_options(&mf.simulation, &Default::default());
    assert_same(&mut mf.model, &mut code, &opts, 50);
}

/// The shipped model over a quarter turn: the slider follows the rigid closed form
/// `x_s = r cos θ + √(l² − r² sin² θ)` to the elastic deformations (≲ 3e-5 m, see
/// tests/flexible_slider_crank.rs).
#[test]
fn shipped_flexible_crank_follows_the_rigid_mechanism() {
    let mut mf = load_flexible_crank();
    let mut opts = saltus::driver::nsga_options(&mf.simulation, &Default::default());
    let omega = 5000.0 * 2.0 * PI / 60.0;
    opts.t_end = 0.5 * PI / omega;
    let mut solver = Nsga::new(&mut mf.model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut mf.model, &mut sink, &mut |_| {}).unwrap();
    let slider = mf.model.node_id("slider").unwrap().index();
    let (r, l) = (0.05, 0.12);
    let mut worst: f64 = 0.0;
    for (t, nodes) in sink.time.iter().zip(&sink.nodes) {
        let th = omega * t;
        let exact = r * th.cos() + (l * l - (r * th.sin()).powi(2)).sqrt();
        worst = worst.max((nodes[slider].x.x - exact).abs());
    }
    eprintln!(
        "flexible_crank.toml: {} steps, max |x_s − x_rigid| = {worst:.3e} m; Newton max {:?}, \
         mean {:.2?}",
        summary.steps,
        summary.max_iterations(),
        summary.mean_iterations()
    );
    assert!(worst < 3.5e-5 && worst > 1e-7, "{worst:e}");
}
