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
