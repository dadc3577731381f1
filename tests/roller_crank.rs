//! Rigid roller–crank mechanism of the thesis (validation case V05, after Marques et al.):
//! crank (0.1 m, 0.12 kg, 0.002 kg m²) hinged to the ground, connecting rod (0.3 m, 0.3 kg,
//! 0.002 kg m²), spherical roller (r = 0.05 m, 0.1 kg, 0.001 kg m²) hinged to the rod and in
//! frictional contact (μ = 0.1, e_N = e_T = 0) with the ground plane y = 0 (perfect revolute
//! joints ground–crank, crank–rod, rod–roller); gravity −Y; initial
//! crank speed 4 rad/s about Z, roller spin 8 rad/s counter-clockwise; h = 1e-3 s, ρ∞ = 0,
//! T = 2 s. The thesis gives the layout only in a figure: here the crank pivot is at the roller
//! centre's height (0, r) and the crank starts vertical (θ = 90°), so the mechanism starts as an
//! offset-free slider–crank whose "slider" is the roller. Checked: it runs stably to T with the
//! contact enforced exactly (no penetration while closed, joints to 1e-10), and the Newton
//! counts are of the thesis' order (max 1/3/2, mean 1/2/1).

use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::joints::RevoluteJoint;
use saltus::prelude::*;

#[test]
fn roller_crank_runs_with_exact_contact_and_few_iterations() {
    let (lc, lr, r): (f64, f64, f64) = (0.1, 0.3, 0.05);
    let (wc, wr) = (4.0, 8.0);
    let mut model = Model::new();
    let pivot = Vector3::new(0.0, r, 0.0);
    let pin = pivot + Vector3::new(0.0, lc, 0.0);
    let roller_x = (lr * lr - lc * lc).sqrt();
    let wrist = Vector3::new(roller_x, r, 0.0);
    let ground = model
        .add_node(NodeDef::frame("ground", pivot).fixed())
        .unwrap();
    // Crank spinning at ωc about z: its centre moves at ωc × (centre − pivot).
    let crank_c = pivot + Vector3::new(0.0, lc / 2.0, 0.0);
    let wz = Vector3::new(0.0, 0.0, wc);
    let crank = model
        .add_node(
            NodeDef::frame("crank", crank_c)
                .velocity(wz.cross(&(crank_c - pivot)))
                .angular_velocity(wz),
        )
        .unwrap();
    // Rod and roller: start with the crank pin's velocity shared by the rod (rod rotation from
    // the slider–crank kinematics at θ = 90°: the roller is at rest in x, rod turns at −ωc lc x/(…)).
    let v_pin = wz.cross(&(pin - pivot));
    let rod_dir = wrist - pin;
    // Rod angular velocity ω_r z such that the wrist velocity is horizontal: v_wrist = v_pin + ω_r z × rod_dir, y-component 0.
    let omega_rod = -v_pin.y / rod_dir.x;
    let rod_c = 0.5 * (pin + wrist);
    let w_rod = Vector3::new(0.0, 0.0, omega_rod);
    let v_rod = v_pin + w_rod.cross(&(rod_c - pin));
    let v_wrist = v_pin + w_rod.cross(&rod_dir);
    let rod = model
        .add_node(
            NodeDef::frame("rod", rod_c)
                .velocity(v_rod)
                .angular_velocity(w_rod),
        )
        .unwrap();
    let roller = model
        .add_node(
            NodeDef::frame("roller", wrist)
                .velocity(v_wrist)
                .angular_velocity(Vector3::new(0.0, 0.0, wr)),
        )
        .unwrap();
    model
        .add_element(
            "crank",
            RigidBody::principal(crank, 0.12, Vector3::new(0.002, 0.002, 0.002)).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "rod",
            RigidBody::principal(rod, 0.3, Vector3::new(0.002, 0.002, 0.002)).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "roller",
            RigidBody::principal(roller, 0.1, Vector3::new(0.001, 0.001, 0.001)).unwrap(),
        )
        .unwrap();
    let z = Vector3::z();
    model
        .add_element(
            "bearing",
            RevoluteJoint::new(model.nodes(), ground, crank, pivot, z).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "crank_pin",
            RevoluteJoint::new(model.nodes(), crank, rod, pin, z).unwrap(),
        )
        .unwrap();
    // With the planar revolute chain, the contact's out-of-plane stick row repeats a joint row
    // whenever the roller sticks: a redundant constraint set, handled by the solver's
    // regularized Jacobian (solvers::assembler::Workspace::solve).
    model
        .add_element(
            "wrist_pin",
            RevoluteJoint::new(model.nodes(), rod, roller, wrist, z).unwrap(),
        )
        .unwrap();
    let contact = PlaneContact::sphere(roller, r, Vector3::zeros(), Vector3::y())
        .unwrap()
        .friction(0.1);
    model.add_element("ground_contact", contact).unwrap();

    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 2.0,
        rho_inf: 0.0,
        tol: 1e-8,
        gravity: Vector3::new(0.0, -9.8, 0.0),
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let s = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    let gap: Vec<f64> = sink
        .channel("ground_contact", "gap")
        .unwrap()
        .iter()
        .map(|g| g[0])
        .collect();
    let min_gap = gap.iter().cloned().fold(f64::INFINITY, f64::min);
    let mut worst_joint: f64 = 0.0;
    for j in ["bearing", "crank_pin", "wrist_pin"] {
        for v in sink.channel(j, "violation").unwrap() {
            worst_joint = worst_joint.max(v[0]).max(v[1]);
        }
    }
    let lifted = gap.iter().filter(|g| **g > 1e-6).count();
    eprintln!(
        "min gap {min_gap:e}, steps with the roller lifted {lifted}, joint violation {worst_joint:e}; iterations mean {:?} max {:?}, backtracks {:?}",
        s.mean_iterations(),
        s.max_iterations,
        s.backtracks
    );
    // Roller angular acceleration on 0–0.2 s, where Marques' discontinuous friction model shows
    // spurious oscillations and the nonsmooth scheme must not: count the step-to-step
    // alternations of its increments (an oscillation at the step frequency alternates every
    // step).
    let roller_i = 3;
    let alpha: Vec<f64> = sink
        .nodes
        .windows(2)
        .take_while(|w| w[1][roller_i].x.x.is_finite())
        .zip(sink.time.windows(2))
        .filter(|(_, t)| t[1] <= 0.2)
        .map(|(w, t)| {
            (w[1][roller_i].omega_spatial().z - w[0][roller_i].omega_spatial().z) / (t[1] - t[0])
        })
        .collect();
    let d: Vec<f64> = alpha.windows(2).map(|w| w[1] - w[0]).collect();
    let alternations = d
        .windows(2)
        .filter(|w| w[0] * w[1] < 0.0 && w[0].abs() > 1e-6 && w[1].abs() > 1e-6)
        .count();
    eprintln!("roller angular acceleration on 0–0.2 s: {} samples, range [{:.3}, {:.3}] rad/s², {alternations} alternations",
        alpha.len(), alpha.iter().cloned().fold(f64::INFINITY, f64::min), alpha.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
    // A smooth history has a few extrema over 0.2 s; a spurious oscillation at the step
    // frequency would alternate at most of the 199 samples.
    assert!(alternations <= 5, "{alternations} alternations");
    // Exact enforcement: no penetration and joints to the Newton tolerance.
    assert!(min_gap >= -1e-10);
    assert!(worst_joint <= 1e-10);
    // The thesis reports max (1, 3, 2); with our layout and scaling allow a little more but
    // require the semi-smooth Newton to stay in the few-iterations regime.
    assert!(
        s.max_iterations[0] <= 3 && s.max_iterations[1] <= 6 && s.max_iterations[2] <= 6,
        "{s:?}"
    );
}
