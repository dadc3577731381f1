//! Step halving (`adaptive`): a pendulum stepped with h = 0.02 s and only two Newton
//! iterations allowed fails without halving once it speeds up; with halving the run completes,
//! retrying the failed steps as half steps, and is at least as accurate as the same step size
//! with an unlimited iteration budget.

use saltus::elements::body::RigidBody;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;

fn pendulum() -> Model {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let bob = model
        .add_node(NodeDef::frame("bob", Vector3::new(1.0, 0.0, 0.0)))
        .unwrap();
    model
        .add_element(
            "bob",
            RigidBody::principal(bob, 2.0, Vector3::new(2e-3, 2e-3, 2e-3)).unwrap(),
        )
        .unwrap();
    let hinge =
        RevoluteJoint::new(model.nodes(), ground, bob, Vector3::zeros(), Vector3::y()).unwrap();
    model.add_element("hinge", hinge).unwrap();
    model
}

fn run(
    h: f64,
    max_iterations: usize,
    adaptive: bool,
) -> Result<(Vector3<f64>, RunSummary), SolveError> {
    let mut model = pendulum();
    let opts = NsgaOptions {
        h,
        t_end: 3.0,
        tol: 1e-10,
        max_iterations,
        adaptive,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts)?;
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut model, &mut sink, &mut |_| {})?;
    Ok((sink.nodes.last().unwrap()[1].x, summary))
}

#[test]
fn halving_recovers_non_converged_steps() {
    let err = run(0.02, 2, false).unwrap_err();
    assert!(
        matches!(err, SolveError::NonConvergence { step, .. } if step > 1),
        "{err}"
    );

    let (x_adaptive, s) = run(0.02, 2, true).unwrap();
    let (x_nominal, _) = run(0.02, 50, false).unwrap();
    let (x_ref, _) = run(1e-3, 50, false).unwrap();
    let e_adaptive = (x_adaptive - x_ref).norm();
    let e_nominal = (x_nominal - x_ref).norm();
    eprintln!(
        "halvings {}, steps {}; error adaptive {e_adaptive:.3e} m, nominal {e_nominal:.3e} m",
        s.halvings, s.steps
    );
    assert!(s.halvings > 0 && s.steps > 150);
    assert!((s.t - 3.0).abs() < 1e-12);
    assert!(s.max_iterations().iter().all(|&i| i <= 2));
    // Half steps only reduce the local truncation error (O(h³) per step); the global error of
    // the mixed-step run must not exceed the uniform-step one (10 % margin for the changed
    // error-propagation pattern).
    assert!(e_adaptive <= 1.1 * e_nominal, "{e_adaptive} vs {e_nominal}");
}
