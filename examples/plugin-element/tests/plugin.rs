//! The plugin's elements are registered next to Saltus' own, have exact Hessians at every
//! stage of every scheme, and reproduce analytic solutions (drag velocity, cubic-spring
//! equilibrium).

use saltus::core::fd::{check_hessian, stage_contexts, LocalFixture, Rng};
use saltus::core::registry::{element_kind, element_type_names, BuildCx, ElementDef};
use saltus::prelude::*;
use saltus_plugin_drag::CubicSpring;

#[test]
fn registered_alongside_the_library() {
    saltus_plugin_drag::link();
    let names = element_type_names();
    for name in ["viscous_drag", "cubic_spring", "rigid_body"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}

/// FD check of the registered example of `type_name` at every stage, for several states.
fn check_every_stage(type_name: &str, tol: f64) {
    saltus_plugin_drag::link();
    let kind = element_kind(type_name, "e").unwrap();
    let mut rng = Rng::new(11);
    let nodes: Vec<NodeDef> = kind
        .example_nodes
        .iter()
        .enumerate()
        .map(|(i, k)| NodeDef {
            name: format!("n{i}"),
            kind: *k,
            initial: NodeState::at(rng.vec3(1.0), rng.rotation()),
            fixed: false,
            motion: None,
        })
        .collect();
    let def = ElementDef {
        name: "e".into(),
        type_name: type_name.into(),
        nodes: nodes.iter().map(|n| n.name.clone()).collect(),
        parameters: (kind.example)(),
    };
    let e = (kind.build)(&def, &BuildCx::new(&nodes)).unwrap();
    for (stage, cx) in stage_contexts() {
        for seed in 1..6 {
            let fx = LocalFixture::random(kind.example_nodes, 0, 0, 0.3, &mut Rng::new(seed));
            let rep = check_hessian(e.as_ref(), &cx, &fx, 1e-6).unwrap();
            assert!(
                rep.relative_error() < tol,
                "{type_name} {stage} seed {seed}: {:e} at {:?}",
                rep.relative_error(),
                rep.worst
            );
        }
    }
}

#[test]
fn drag_hessians_match_finite_differences() {
    // Linear in the velocity: central differences are exact up to round-off (~1e-10).
    check_every_stage("viscous_drag", 1e-8);
}

#[test]
fn cubic_spring_hessians_match_finite_differences() {
    // Central differences, ε = 1e-6: truncation ε²|r'''| ≈ 1e-9 (k₃ = 900) and round-off
    // 1e-16 |r|/ε ≈ 1e-9; 1e-6 catches any missing term of relative size 1e-6.
    check_every_stage("cubic_spring", 1e-6);
}

#[test]
fn cubic_spring_static_equilibrium_matches_the_cubic_root() {
    // A point mass m hanging from a fixed node on a cubic spring: k e + k₃ e³ = m g, whose
    // unique real root is Cardano's e = ∛(q/2 + √D) + ∛(q/2 − √D), q = m g/k₃, p = k/k₃,
    // D = (q/2)² + (p/3)³. The bob starts below the rest length: a slack spring has no
    // transverse stiffness (N/ℓ = 0) and the static tangent would be singular.
    let (m, g, k, k3, l0) = (2.0, 9.81, 40.0, 900.0, 0.6);
    let mut model = Model::new();
    let top = model
        .add_node(NodeDef::point("top", Vector3::zeros()).fixed())
        .unwrap();
    let bob = model
        .add_node(NodeDef::point("bob", Vector3::new(0.0, 0.0, -l0 - 0.05)))
        .unwrap();
    model
        .add_element(
            "mass",
            saltus::elements::body::PointMass::new(bob, m).unwrap(),
        )
        .unwrap();
    model
        .add_element("spring", CubicSpring::new([top, bob], k, k3, l0))
        .unwrap();
    let opts = StaticOptions {
        gravity: Vector3::new(0.0, 0.0, -g),
        ..Default::default()
    };
    solve_static(&mut model, &opts).unwrap();
    let (p, q) = (k / k3, m * g / k3);
    let d = (q / 2.0).powi(2) + (p / 3.0).powi(3);
    let e = (q / 2.0 + d.sqrt()).cbrt() + (q / 2.0 - d.sqrt()).cbrt();
    let z = model.nodes()[bob.index()].initial.x.z;
    // Converged when ‖r‖ ≤ 1e-10 (Σ‖r_k‖ + 1e-6) ≈ 1e-10 · 2 m g ≈ 4e-9 N; with the tangent
    // dN/de = k + 3 k₃ e² ≈ 179 N/m that bounds the elongation error by 2.2e-11 m.
    let bound = 1e-10 * (2.0 * m * g + 1e-6) / (k + 3.0 * k3 * e * e);
    assert!((-z - l0 - e).abs() < bound, "elongation {} vs {e}", -z - l0);
    assert!(e > 0.01, "the cubic term matters: e = {e}");
}

#[test]
fn model_file_reaches_the_analytic_drag_velocity() {
    saltus_plugin_drag::link();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/drag.toml");
    let mut file = saltus::io::load_model(path).unwrap();
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    let mut solver = Nsga::new(&mut file.model, opts).unwrap();
    let mut results = MemorySink::default();
    solver
        .run(&mut file.model, &mut results, &mut |_| {})
        .unwrap();
    let (m, c, g) = (2.0, 0.8, 9.81);
    for (t, n) in results.time.iter().zip(&results.nodes).step_by(100) {
        let exact = -(m * g / c) * (1.0 - (-c * t / m).exp());
        // Second-order generalized-α on ẍ = −g − (c/m) ẋ: error O((c h/m)²) ≈ 1.6e-5
        // relative per unit time; 1e-3 of the terminal velocity is a safe bound.
        assert!(
            (n[0].v.z - exact).abs() < 1e-3 * m * g / c,
            "t = {t}: {} vs {exact}",
            n[0].v.z
        );
    }
}

/// The plugin's one-line binary is the whole `saltus` command line with the plugin's types:
/// `elements` lists them and `run` integrates a model file that uses them into HDF5.
#[test]
fn cli_plugin_binary_runs_a_model_with_plugin_elements() {
    let exe = env!("CARGO_BIN_EXE_saltus-plugin-drag");
    let listing = std::process::Command::new(exe)
        .args(["elements", "viscous_drag"])
        .output()
        .unwrap();
    assert!(listing.status.success(), "{listing:?}");
    let text = String::from_utf8_lossy(&listing.stdout);
    assert!(
        text.contains("viscous_drag") && text.contains("coefficient"),
        "{text}"
    );

    let dir = std::env::temp_dir().join(format!("saltus-plugin-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("drag.h5");
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/drag.toml");
    let run = std::process::Command::new(exe)
        .args(["run", model, "--quiet", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let file = hdf5_metno::File::open(&out).unwrap();
    let t: Vec<f64> = file.dataset("time").unwrap().read_raw().unwrap();
    let v = file
        .dataset("nodes/velocity")
        .unwrap()
        .read_dyn::<f64>()
        .unwrap();
    let (m, c, g) = (2.0, 0.8, 9.81);
    let t_end = *t.last().unwrap();
    assert!((t_end - 20.0).abs() < 1e-9, "t_end {t_end}");
    let exact = -(m * g / c) * (1.0 - (-c * t_end / m).exp());
    let vz = v[[t.len() - 1, 0, 2]];
    // Same bound as the in-process run above: second-order error O((c h/m)^2) per unit time.
    assert!((vz - exact).abs() < 1e-3 * m * g / c, "{vz} vs {exact}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_plugin_keys_are_documented_with_units() {
    saltus_plugin_drag::link();
    let kind = element_kind("cubic_spring", "e").unwrap();
    let docs = (kind.params.expect("cubic_spring registers params:"))();
    let line = |key: &str| {
        let p = docs.iter().find(|p| p.key == key).unwrap();
        (p.unit.clone(), p.status())
    };
    assert_eq!(line("stiffness"), (Some("N/m".into()), "required".into()));
    assert_eq!(
        line("cubic_stiffness"),
        (Some("N/m³".into()), "required".into())
    );
    assert_eq!(line("rest_length"), (Some("m".into()), "optional".into()));
    let listing = saltus::driver::elements_listing(Some("viscous_drag")).unwrap();
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("  coefficient  [N s/m]  required  Drag")),
        "{listing}"
    );
}
