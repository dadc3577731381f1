//! Validation case V20 (spec `validation-cases.md`): a rigid crank–slider with a ball bearing
//! at the crank–rod joint (Table 4.2 data), crank driven at 50 rad/s, run to 0.6 s.
//!
//! Assumed where the thesis is silent or ambiguous (spec flags): the 0.11 m member of
//! Table 4.2 is the crank and the 0.225 m member the rod (the usual proportions; the table's
//! names may be swapped); the mechanism moves in the x–y plane with gravity along −y; the
//! inner race is welded to the crank at the crank pin and the outer race to the rod's big end
//! (a revolute joint plus a zero prescribed relative rotation each); the balls start at the
//! cage positions with the crank pin's velocity; crank and rod start aligned along x;
//! h = 1e-4 s (the thesis' step is unreadable), with step halving.
//!
//! Checked: both configurations run to 0.6 s with the slider within the bearing's clearance
//! of the ideal mechanism, and the recovered ball–race forces are never pulling. Reported,
//! not asserted: the peak ball–race force. The thesis' ≈ 9 100 N (rigid) and ≈ 2 500 N
//! (flexible) are not reproduced — after the first crank turn ours are 22.9 kN (rigid) and
//! 11.2 kN (flexible), and which modelling assumption above accounts for the difference is
//! not known. That value is sensitive to round-off: the solves that the contact-space
//! Gauss–Seidel settles (`Stage::settle_contacts`) moved it between 7.0 and 25.8 kN (flexible)
//! and 22.9 and 23.5 kN (rigid) as the settling changed at the 1e-16 level (2026-11-27), with
//! the same overall peaks (29.2 and 50.3 kN) and the same bound on the slider.

use saltus::core::output::ResultSink;
use saltus::elements::beam::{BeamBuilder, BeamSpec};
use saltus::elements::body::RigidBody;
use saltus::elements::contact::bearing::BallBearing;
use saltus::elements::joints::{PrescribedRotation, PrismaticJoint, RevoluteJoint};
use saltus::prelude::*;

const OMEGA: f64 = 50.0;
const L_CRANK: f64 = 0.11;
const L_ROD: f64 = 0.225;

/// Configuration (2) of V20: crank and rod as geometrically exact beams of 4 elements each,
/// steel (E = 210 GPa, ν = 0.3, ρ = 7850 kg/m³), the spec's section areas and second moments
/// (circular out-of-plane equivalents: I₂ = I₃, J = 2I), no structural damping (the thesis
/// states none); the slider and races as in the rigid case.
fn beam_section(area: f64, i: f64) -> BeamSpec {
    let nu = 0.3;
    BeamSpec {
        youngs_modulus: 210e9,
        poisson_ratio: Some(nu),
        area,
        shear_coefficient: Some(6.0 * (1.0 + nu) / (7.0 + 6.0 * nu)),
        i2: i,
        i3: i,
        torsion_constant: Some(2.0 * i),
        rho: 7850.0,
        ..BeamSpec::default()
    }
}

fn v20(flexible: bool) -> Model {
    let mut model = Model::new();
    let z = Vector3::z();
    let pin = Vector3::new(L_CRANK, 0.0, 0.0);
    let wrist = Vector3::new(L_CRANK + L_ROD, 0.0, 0.0);
    let v_pin = Vector3::new(0.0, OMEGA * L_CRANK, 0.0);
    let w_crank = Vector3::new(0.0, 0.0, OMEGA);
    let w_rod = Vector3::new(0.0, 0.0, -OMEGA * L_CRANK / L_ROD);
    let mut node = |name: &str, x: Vector3<f64>, v: Vector3<f64>, w: Vector3<f64>| {
        model
            .add_node(NodeDef::frame(name, x).velocity(v).angular_velocity(w))
            .unwrap()
    };
    let ground = node(
        "ground",
        Vector3::zeros(),
        Vector3::zeros(),
        Vector3::zeros(),
    );
    // Rigid: one body node per member at its centre. Flexible: the members' end nodes (the
    // crank pin end carries the inner race, the rod's big end the outer race).
    let (crank, crank_pin, rod, rod_pin) = if flexible {
        let root = node("crank_root", Vector3::zeros(), Vector3::zeros(), w_crank);
        let tip = node("crank_tip", pin, v_pin, w_crank);
        let big = node("rod_root", pin, v_pin, w_rod);
        let small = node("rod_tip", wrist, Vector3::zeros(), w_rod);
        (root, tip, big, small)
    } else {
        let crank = node("crank", pin / 2.0, v_pin / 2.0, w_crank);
        let rod = node("rod", (pin + wrist) / 2.0, v_pin / 2.0, w_rod);
        (crank, crank, rod, rod)
    };
    let inner = node("inner_race", pin, v_pin, w_crank);
    let outer = node("outer_race", pin, v_pin, w_rod);
    let slider = node("slider", wrist, Vector3::zeros(), Vector3::zeros());
    model.nodes_mut()[ground.index()].fixed = true;
    let mut bodies = vec![
        ("slider_body", slider, 2.0, [0.0013, 0.0013, 0.0021]),
        ("inner_race_body", inner, 8e-3, [3.643e-6; 3]),
        ("outer_race_body", outer, 8e-3, [6.523e-6; 3]),
    ];
    if flexible {
        BeamBuilder::new("crank", beam_section(0.00113, 1.068e-7))
            .line(&mut model, crank, crank_pin, 4)
            .unwrap();
        BeamBuilder::new("rod", beam_section(0.00116, 1.117e-7))
            .line(&mut model, rod, rod_pin, 4)
            .unwrap();
    } else {
        bodies.push(("crank_body", crank, 1.0, [0.0028, 0.0006, 0.0033]));
        bodies.push(("rod_body", rod, 4.0, [0.0086, 0.0251, 0.0334]));
    }
    for (name, n, m, j) in bodies {
        model
            .add_element(name, RigidBody::principal(n, m, Vector3::from(j)).unwrap())
            .unwrap();
    }
    let nodes = model.nodes().to_vec();
    let revolute = |a, b, at| RevoluteJoint::new(&nodes, a, b, at, z).unwrap();
    let weld = |a, b| PrescribedRotation::new(&nodes, a, b, z, 0.0, 0.0).unwrap();
    model
        .add_element("main", revolute(ground, crank, Vector3::zeros()))
        .unwrap();
    model
        .add_element(
            "drive",
            PrescribedRotation::new(&nodes, ground, crank, z, 0.0, OMEGA).unwrap(),
        )
        .unwrap();
    model
        .add_element("inner_pin", revolute(crank_pin, inner, pin))
        .unwrap();
    model
        .add_element("inner_weld", weld(crank_pin, inner))
        .unwrap();
    model
        .add_element("outer_pin", revolute(rod, outer, pin))
        .unwrap();
    model.add_element("outer_weld", weld(rod, outer)).unwrap();
    model
        .add_element("wrist", revolute(rod_pin, slider, wrist))
        .unwrap();
    model
        .add_element(
            "slide",
            PrismaticJoint::new(&nodes, ground, slider, wrist, Vector3::x()).unwrap(),
        )
        .unwrap();
    let bearing: BallBearing = serde_json::from_value(serde_json::json!({
        "name": "brg", "inner": "inner_race", "outer": "outer_race", "balls": 8,
        "ball_radius": 0.0055, "ball_mass": 2.7e-3, "ball_inertia": 3.267e-8,
        "inner_radius": 0.033745, "outer_radius": 0.04515, "cage_stiffness": 1e6,
        "cage_damping": 1e3, "friction": 0.001, "restitution": 0.9,
        // Steel balls and races (E = 210 GPa as the members, ν = 0.3): ball–race forces
        // recovered from the impulses with Hertz's stiffness of the conforming contact.
        "force_recovery": { "young": 210e9, "poisson": 0.3 },
    }))
    .unwrap();
    let parts = bearing.expand(&mut model).unwrap();
    for b in parts.balls {
        model.nodes_mut()[b.index()].initial.v = v_pin;
    }
    model
}

/// Slider position of the ideal (clearance-free) crank–slider at crank angle `theta`.
fn ideal_slider(theta: f64) -> f64 {
    L_CRANK * theta.cos() + (L_ROD * L_ROD - (L_CRANK * theta.sin()).powi(2)).sqrt()
}

/// Run V20 to 0.6 s; returns the largest ball–outer race impulse over h \[N\], the largest
/// slider deviation from the ideal mechanism \[m\] and the run summary.
fn run_v20(flexible: bool) -> (f64, f64, RunSummary) {
    let mut model = v20(flexible);
    let h = 1e-4;
    let t_end = 0.6;
    let mut solver = Nsga::new(
        &mut model,
        NsgaOptions {
            h,
            t_end,
            rho_inf: 0.0,
            tol: 1e-5,
            gravity: Vector3::new(0.0, -9.8, 0.0),
            adaptive: true,
            ..Default::default()
        },
    )
    .unwrap();
    let slider = model.node_id("slider").unwrap().index();
    let mut sink = MemorySink::default();
    sink.begin(solver.layout()).unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("v20");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(if flexible { "flexible.h5" } else { "rigid.h5" });
    let mut h5 = saltus::io::Hdf5Sink::create(&path)
        .unwrap()
        .with_xdmf(false);
    h5.begin(solver.layout()).unwrap();
    solver.record(&model, &mut h5).unwrap();
    let mut deviation: f64 = 0.0;
    while solver.time() < t_end - 1e-9 {
        solver.step(&mut model).unwrap();
        solver.record(&model, &mut sink).unwrap();
        solver.record(&model, &mut h5).unwrap();
        let x = solver.nodes()[slider].x.x;
        deviation = deviation.max((x - ideal_slider(OMEGA * solver.time())).abs());
    }
    let mut peak: f64 = 0.0;
    for k in 1..=8 {
        for rec in sink.channel(&format!("brg_outer{k}"), "impulse").unwrap() {
            peak = peak.max(rec[0] / h);
        }
    }
    h5.finish().unwrap();
    let file = hdf5_metno::File::open(&path).unwrap();
    let read = |name: &str| -> Vec<f64> { file.dataset(name).unwrap().read_raw().unwrap() };
    let (total, smooth) = (
        read("contact_forces/total_force"),
        read("contact_forces/smooth_force"),
    );
    // Recovered forces: never pulling, and the total (closed-contact part plus the impact
    // pulse's peak) at least the closed-contact part.
    assert!(!total.is_empty());
    for (t, s) in total.iter().zip(&smooth) {
        assert!(
            *t >= 0.0 && *s >= 0.0 && t >= s,
            "total {t} N, smooth {s} N"
        );
    }
    let force = total.iter().cloned().fold(0.0, f64::max);
    // The same after the first crank turn (2π/ω = 0.126 s): without the start-up transient of
    // the balls settling from their cage positions into the clearance.
    let time = read("contacts/time");
    let turn = 2.0 * std::f64::consts::PI / OMEGA;
    let (mut settled, mut at) = (0.0, 0.0);
    for (f, t) in total.iter().zip(&time) {
        if *t >= turn && *f > settled {
            (settled, at) = (*f, *t);
        }
    }
    let s = solver.summary();
    eprintln!(
        "V20 {}: peak recovered ball–race force {force:.0} N, after the first crank turn \
         {settled:.0} N at t = {at:.4} s (largest closed-contact part {:.0} N, largest \
         impulse/h on a ball–outer race contact {peak:.0} N); slider off the ideal mechanism \
         by at most {:.3} mm; {} steps, {} halvings, {} impact problems",
        if flexible { "flexible" } else { "rigid" },
        smooth.iter().cloned().fold(0.0, f64::max),
        1e3 * deviation,
        s.steps,
        s.halvings,
        s.stage("velocity").solves
    );
    (peak, deviation, s)
}

/// Radial clearance of the bearing: `c = r_outer − r_inner − 2 r_ball` \[m\].
const CLEARANCE: f64 = 0.04515 - 0.033745 - 2.0 * 0.0055;

#[test]
fn v20_crank_slider_with_a_ball_bearing_runs_to_the_end() {
    let (_, deviation, _) = run_v20(false);
    // The bearing holds the mechanism together: the rod's big end stays within the radial
    // clearance c = 0.405 mm of the crank pin, which moves the slider by at most
    // c (1 + L_c/√(L_r² − L_c²)) = 1.56 c; 2c bounds it.
    assert!(deviation < 2.0 * CLEARANCE, "{deviation}");
}

/// V20 configuration (2): flexible crank and rod with the bearing's clearance. The members'
/// elastic deflections under these loads are of micrometres (axial strain of the rod
/// ~F/(EA) ≈ 1e-6 for F ~ 100 N), so the slider stays within the same clearance bound as the
/// rigid mechanism.
#[test]
fn v20_flexible_crank_slider_with_a_ball_bearing_runs_to_the_end() {
    let (_, deviation, _) = run_v20(true);
    assert!(deviation < 2.0 * CLEARANCE, "{deviation}");
}
