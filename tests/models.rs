//! Every model file shipped in `models/` loads and integrates (a few steps); the built-in
//! default model parses.

use saltus::prelude::*;

fn run_steps(file: &mut saltus::io::ModelFile, steps: usize) -> Vec<NodeState> {
    let mut opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    opts.t_end = steps as f64 * opts.h;
    let mut solver = Nsga::new(&mut file.model, opts).unwrap();
    for _ in 0..steps {
        solver.step(&mut file.model).unwrap();
    }
    solver.nodes().to_vec()
}

#[test]
fn shipped_models_load_and_run() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/models");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml" || e == "json") {
            let mut file =
                saltus::io::load_model(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let nodes = run_steps(&mut file, 20);
            assert!(
                nodes.iter().all(|s| s.x.iter().all(|v| v.is_finite())),
                "{}",
                path.display()
            );
            n += 1;
        }
    }
    assert!(n >= 2, "models found: {n}");
}

#[test]
fn built_in_default_model_parses() {
    let file = saltus::io::parse_str(
        saltus::driver::DEFAULT_MODEL,
        saltus::io::Format::Toml,
        "default",
    )
    .unwrap();
    assert_eq!(file.model.nodes().len(), 4);
}

/// `[simulation] impacts`, `impact_tolerance`, `max_impact_problems`, `persistent_steps`: the
/// model-file defaults
/// are the solver's, each value reaches the solver, bad values are refused by name.
#[test]
fn impact_settings_reach_the_solver() {
    use saltus::io::model_file::{
        ImpactMode, SimulationSettings, DEFAULT_IMPACT_TOLERANCE, DEFAULT_MAX_IMPACT_PROBLEMS,
        DEFAULT_PERSISTENT_STEPS, MAX_PERSISTENT_STEPS,
    };
    use saltus::solvers::{ImpactSequence, DEFAULT_IMPACT_TOLERANCE as TOL};
    assert_eq!(MAX_PERSISTENT_STEPS, saltus::solvers::MAX_PERSISTENT_STEPS);
    assert_eq!(DEFAULT_IMPACT_TOLERANCE, TOL);
    assert_eq!(
        DEFAULT_MAX_IMPACT_PROBLEMS,
        saltus::solvers::DEFAULT_MAX_IMPACT_PROBLEMS
    );
    assert_eq!(
        DEFAULT_PERSISTENT_STEPS,
        saltus::solvers::DEFAULT_PERSISTENT_STEPS
    );
    let options =
        |sim: SimulationSettings| saltus::driver::nsga_options(&sim, &Default::default()).impacts;
    assert_eq!(
        options(SimulationSettings::default()),
        Some(ImpactSequence::default())
    );
    let custom = SimulationSettings {
        impact_tolerance: 1e-4,
        max_impact_problems: 7,
        persistent_steps: 3,
        ..Default::default()
    };
    assert_eq!(
        options(custom),
        Some(ImpactSequence {
            tolerance: 1e-4,
            max_problems: 7,
            persistent_steps: 3,
        })
    );
    let simultaneous = SimulationSettings {
        impacts: ImpactMode::Simultaneous,
        ..Default::default()
    };
    assert_eq!(options(simultaneous), None);
    // Parsed from a file, with the key named in errors.
    let node = "[[nodes]]\nname = \"a\"\nkind = \"frame\"\nposition = [0.0, 0.0, 0.0]\n";
    let text = format!("[simulation]\nimpacts = \"simultaneous\"\nimpact_tolerance = 1e-5\n{node}");
    let file = saltus::io::parse_str(&text, saltus::io::Format::Toml, "m.toml").unwrap();
    assert_eq!(file.simulation.impacts, ImpactMode::Simultaneous);
    let text = format!("[simulation]\npersistent_steps = 0\n{node}");
    let file = saltus::io::parse_str(&text, saltus::io::Format::Toml, "m.toml").unwrap();
    assert_eq!(file.simulation.persistent_steps, 0);
    for value in ["-1", "33"] {
        let bad = format!("[simulation]\npersistent_steps = {value}\n{node}");
        let err = saltus::io::parse_str(&bad, saltus::io::Format::Toml, "m.toml").unwrap_err();
        assert!(
            err.to_string().contains("persistent_steps"),
            "{value}: {err}"
        );
    }
    let bad = format!("[simulation]\nimpact_tolerance = -1.0\n{node}");
    let err = saltus::io::parse_str(&bad, saltus::io::Format::Toml, "m.toml").unwrap_err();
    assert!(err.to_string().contains("impact_tolerance"), "{err}");
    let bad = format!("[simulation]\nimpacts = \"sometimes\"\n{node}");
    let err = saltus::io::parse_str(&bad, saltus::io::Format::Toml, "m.toml").unwrap_err();
    assert!(err.to_string().contains("impacts"), "{err}");
}

/// `[simulation] warm_start` and `contact_fallback`: on by default as in the solver, `false`
/// reaches it.
#[test]
fn switch_settings_reach_the_solver() {
    use saltus::io::model_file::SimulationSettings;
    use saltus::solvers::NsgaOptions;
    type Switch = fn(&NsgaOptions) -> bool;
    let switches: [(&str, Switch); 2] = [
        ("warm_start", |o| o.warm_start),
        ("contact_fallback", |o| o.contact_fallback),
    ];
    let node = "[[nodes]]\nname = \"a\"\nkind = \"frame\"\nposition = [0.0, 0.0, 0.0]\n";
    for (key, get) in switches {
        let options =
            |sim: SimulationSettings| get(&saltus::driver::nsga_options(&sim, &Default::default()));
        assert!(get(&NsgaOptions::default()), "{key}");
        assert!(options(SimulationSettings::default()), "{key}");
        let text = format!("[simulation]\n{key} = false\n{node}");
        let file = saltus::io::parse_str(&text, saltus::io::Format::Toml, "m.toml").unwrap();
        assert!(!options(file.simulation), "{key}");
    }
}

/// `[simulation] contact_solver`: Newton by default as in the solver, `"gauss_seidel"` reaches
/// it, anything else is refused naming the key.
#[test]
fn contact_solver_setting_reaches_the_solver() {
    use saltus::io::model_file::SimulationSettings;
    let node = "[[nodes]]\nname = \"a\"\nkind = \"frame\"\nposition = [0.0, 0.0, 0.0]\n";
    let solver = |sim: &SimulationSettings| {
        saltus::driver::nsga_options(sim, &Default::default()).contact_solver
    };
    assert_eq!(NsgaOptions::default().contact_solver, ContactSolver::Newton);
    assert_eq!(
        solver(&SimulationSettings::default()),
        ContactSolver::Newton
    );
    for (value, want) in [
        ("newton", ContactSolver::Newton),
        ("gauss_seidel", ContactSolver::GaussSeidel),
    ] {
        let text = format!("[simulation]\ncontact_solver = \"{value}\"\n{node}");
        let file = saltus::io::parse_str(&text, saltus::io::Format::Toml, "m.toml").unwrap();
        assert_eq!(solver(&file.simulation), want, "{value}");
    }
    let bad = format!("[simulation]\ncontact_solver = \"jacobi\"\n{node}");
    let err = saltus::io::parse_str(&bad, saltus::io::Format::Toml, "m.toml").unwrap_err();
    assert!(err.to_string().contains("contact_solver"), "{err}");
}

/// `[simulation] jacobian_reuse`: the model-file default is the solver's, 0 selects full Newton,
/// any other value is the solver's contraction factor.
#[test]
fn jacobian_reuse_setting_reaches_the_solver() {
    use saltus::io::model_file::{SimulationSettings, DEFAULT_JACOBIAN_REUSE};
    use saltus::solvers::nsga::DEFAULT_JACOBIAN_REUSE as SOLVER_DEFAULT;
    assert_eq!(DEFAULT_JACOBIAN_REUSE, SOLVER_DEFAULT);
    let options = |theta: f64| {
        let sim = SimulationSettings {
            jacobian_reuse: theta,
            ..Default::default()
        };
        saltus::driver::nsga_options(&sim, &Default::default()).jacobian_reuse
    };
    assert_eq!(options(DEFAULT_JACOBIAN_REUSE), Some(SOLVER_DEFAULT));
    assert_eq!(options(0.0), None);
    assert_eq!(options(0.6), Some(0.6));
}
