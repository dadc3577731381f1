//! The plugin's element is registered next to Saltus' own, has exact Hessians, and a model
//! file using it reproduces the analytic drag solution.

use saltus::core::fd::{check_hessian, test_cx, LocalFixture, Rng};
use saltus::core::registry::{element_kind, element_type_names, BuildCx, ElementDef};
use saltus::core::{NodeDef, NodeKind};
use saltus::prelude::*;

#[test]
fn registered_alongside_the_library() {
    saltus_plugin_drag::link();
    let names = element_type_names();
    assert!(
        names.contains(&"viscous_drag") && names.contains(&"rigid_body"),
        "{names:?}"
    );
}

#[test]
fn hessians_match_finite_differences() {
    saltus_plugin_drag::link();
    let kind = element_kind("viscous_drag", "air").unwrap();
    let nodes = vec![NodeDef::point("a", Vector3::new(0.1, 0.2, 0.3))];
    let def = ElementDef {
        name: "air".into(),
        type_name: "viscous_drag".into(),
        nodes: vec!["a".into()],
        parameters: (kind.example)(),
    };
    let e = (kind.build)(&def, &BuildCx::new(&nodes)).unwrap();
    for level in saltus_plugin_drag::LEVELS {
        let fx = LocalFixture::random(&[NodeKind::Point], 0, 0, 0.3, &mut Rng::new(7));
        let rep = check_hessian(e.as_ref(), &test_cx(level), &fx, 1e-6).unwrap();
        // Linear element: central differences are exact up to round-off (~1e-10 relative).
        assert!(
            rep.relative_error() < 1e-8,
            "{level}: {}",
            rep.relative_error()
        );
    }
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
