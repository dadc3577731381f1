//! The ball bearing composite and validation case V19 (spec `validation-cases.md`): an
//! isolated 8-ball bearing, inner race driven at 500 rpm under a radial load of 100 N, outer
//! race fixed.

use saltus::elements::body::RigidBody;
use saltus::elements::contact::bearing::BallBearing;
use saltus::elements::force::NodalLoad;
use saltus::elements::joints::PrescribedRotation;
use saltus::prelude::*;
use saltus_core::output::ResultSink;

/// Table 4.1: radii of the inner race, outer race and balls \[m\].
const R_I: f64 = 0.01277125;
const R_E: f64 = 0.02071875;
const R_B: f64 = 0.00396875;
/// Inner race inertia 8.155e-6 kg m² (spec's reading) → mass for ⅖ m r_i².
const I_INNER: f64 = 8.155e-6;
/// Ball inertia 1.2868e-8 kg m² (spec's reading; a steel ball of this radius: 1.295e-8).
const I_BALL: f64 = 1.2868e-8;
const OMEGA_I: f64 = 500.0 * std::f64::consts::PI / 30.0;
const Q: f64 = 100.0;

fn bearing_spec() -> BallBearing {
    serde_json::from_value(serde_json::json!({
        "name": "brg",
        "inner": "inner",
        "outer": "outer",
        "balls": 8,
        "ball_radius": R_B,
        "ball_inertia": I_BALL,
        "inner_radius": R_I,
        "outer_radius": R_E,
        "groove_radius": -0.00397875,
        "cage_stiffness": 1e8,
        "friction": 0.001,
        "restitution": 0.9,
    }))
    .unwrap()
}

/// V19 model: outer race fixed, inner race loaded by Q along −y and driven at ω_i about z
/// relative to the outer race; no gravity (not in the thesis' data).
fn v19() -> (Model, Vec<NodeId>) {
    v19_with(bearing_spec())
}

/// [`v19`] with the bearing `spec`.
fn v19_with(spec: BallBearing) -> (Model, Vec<NodeId>) {
    let mut model = Model::new();
    let outer = model
        .add_node(NodeDef::frame("outer", Vector3::zeros()).fixed())
        .unwrap();
    let inner = model
        .add_node(
            NodeDef::frame("inner", Vector3::zeros())
                .angular_velocity(Vector3::new(0.0, 0.0, OMEGA_I)),
        )
        .unwrap();
    let m_inner = I_INNER / (0.4 * R_I * R_I);
    model
        .add_element(
            "inner_body",
            RigidBody::principal(inner, m_inner, Vector3::repeat(I_INNER)).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "load",
            NodalLoad::on_frame(inner, Vector3::new(0.0, -Q, 0.0), Vector3::zeros()).unwrap(),
        )
        .unwrap();
    let drive =
        PrescribedRotation::new(model.nodes(), outer, inner, Vector3::z(), 0.0, OMEGA_I).unwrap();
    model.add_element("drive", drive).unwrap();
    let parts = spec.expand(&mut model).unwrap();
    (model, parts.balls)
}

/// The composite adds 8 balls on the cage circle, each with its body, an inner and an outer
/// contact opening c/2, and a cage of unstressed springs.
#[test]
fn bearing_expands_into_balls_contacts_and_cage() {
    let (model, balls) = v19();
    assert_eq!(balls.len(), 8);
    let states: Vec<NodeState> = model.nodes().iter().map(|d| d.initial).collect();
    let r_j = 0.5 * (R_I + R_E);
    let c = R_E - R_I - 2.0 * R_B;
    assert!((c - 1e-5).abs() < 1e-12, "Table 4.1 clearance: {c}");
    for (k, b) in balls.iter().enumerate() {
        let x = states[b.index()].x;
        let phi = 2.0 * std::f64::consts::PI * k as f64 / 8.0;
        assert!((x - r_j * Vector3::new(phi.cos(), phi.sin(), 0.0)).norm() < 1e-15);
    }
    let mut counts = std::collections::BTreeMap::new();
    let steel = 7850.0 * 4.0 / 3.0 * std::f64::consts::PI * R_B.powi(3);
    for (name, e) in model.element_names().iter().zip(model.elements()) {
        if !name.starts_with("brg_") {
            continue;
        }
        *counts.entry(e.type_name()).or_insert(0) += 1;
        let local: Vec<NodeState> = e.nodes().iter().map(|n| states[n.index()]).collect();
        if let Some(contact) = e.as_contact() {
            // Balls centred between the races: both contacts open by c/2.
            let gap = contact.geometry.frame(&local).gap;
            assert!((gap - 0.5 * c).abs() < 1e-15, "{name}: {gap}");
        }
        if e.type_name() == "spring_damper" {
            // Unstressed cage: rest length = initial chord, zero elastic energy (round-off of
            // k (Δℓ)² / 2 with Δℓ ~ 1e-18 m).
            let kinds = vec![NodeKind::Frame; local.len()];
            let os = OutputState {
                t: 0.0,
                nodes: &local,
                kinds: &kinds,
                mult_smooth: &[],
                mult_position: &[],
                mult_velocity: &[],
                k: [1.0; 3],
                h: 1e-5,
                gravity: Vector3::zeros(),
            };
            assert!(e.energy(&os).potential.abs() < 1e-20, "{name}");
        }
        if e.type_name() == "rigid_body" {
            // Steel balls by default (ρ = 7850 kg/m³).
            assert!((e.mass() - steel).abs() < 1e-15, "{name}");
        }
    }
    let expected: std::collections::BTreeMap<&str, i32> = [
        ("rigid_body", 8),
        ("sphere_in_sphere_contact", 8),
        ("sphere_sphere_contact", 8),
        ("spring_damper", 8),
    ]
    .into_iter()
    .collect();
    assert_eq!(counts, expected);
}

/// Angle of a ball about the bearing centre \[rad\].
fn angle(x: &Vector3<f64>) -> f64 {
    x.y.atan2(x.x)
}

/// V19: after the balls have spun up (≈ 0.04 s; friction μ = 0.001 accelerates them), the
/// cage turns at `r_i/(r_i + r_e) = 0.3813` of the inner race's speed, and a ball passing the
/// bottom carries the whole load Q = 100 N.
///
/// Step 1e-5 s instead of the thesis' (reconstructed) 1e-6 s: the contacts are rigid, the
/// step only has to resolve the balls' passage through the loaded zone (a ball advances
/// 2e-4 rad per step). Newton tolerance 1e-5 and ρ∞ = 0 as in the thesis.
#[test]
fn v19_cage_turns_at_the_rolling_ratio_and_a_ball_carries_the_load() {
    let (mut model, balls) = v19();
    let h = 1e-5;
    let (t_settle, t_end) = (0.04, 0.06);
    let mut solver = Nsga::new(
        &mut model,
        NsgaOptions {
            h,
            t_end,
            rho_inf: 0.0,
            tol: 1e-5,
            gravity: Vector3::zeros(),
            ..Default::default()
        },
    )
    .unwrap();
    let mut unwrapped = vec![0.0; balls.len()];
    let mut last: Vec<f64> = balls
        .iter()
        .map(|b| angle(&solver.nodes()[b.index()].x))
        .collect();
    let mut at_settle = None;
    let mut sink = MemorySink::default();
    sink.begin(solver.layout()).unwrap();
    while solver.time() < t_end - 1e-12 {
        solver.step(&mut model).unwrap();
        for (k, b) in balls.iter().enumerate() {
            let a = angle(&solver.nodes()[b.index()].x);
            let mut d = a - last[k];
            if d > std::f64::consts::PI {
                d -= 2.0 * std::f64::consts::PI;
            } else if d < -std::f64::consts::PI {
                d += 2.0 * std::f64::consts::PI;
            }
            unwrapped[k] += d;
            last[k] = a;
        }
        if solver.time() >= t_settle - 1e-12 {
            at_settle.get_or_insert((solver.time(), unwrapped.clone()));
            solver.record(&model, &mut sink).unwrap();
        }
    }
    let (t0, a0) = at_settle.unwrap();
    let cage: f64 = unwrapped.iter().zip(&a0).map(|(a, b)| a - b).sum::<f64>()
        / balls.len() as f64
        / (solver.time() - t0);
    let ratio = cage / OMEGA_I;
    let analytic = R_I / (R_I + R_E);
    assert!((analytic - 0.3813).abs() < 5e-5);
    // The issue's bound: 1 % (measured 0.1–0.2 % over 10 ms windows after 0.04 s).
    assert!(
        (ratio - analytic).abs() < 0.01 * analytic,
        "{ratio} vs {analytic}"
    );

    // Load on the outer race: each ball's normal impulse per step over h, averaged over 20
    // steps (2e-4 s, during which the ball moves 1.6e-3 rad: the load share does not change).
    let window = 20;
    let mut peak: f64 = 0.0;
    let mut peak_at = (0, 0);
    for k in 1..=balls.len() {
        let impulses = sink.channel(&format!("brg_outer{k}"), "impulse").unwrap();
        for (i, w) in impulses.windows(window).enumerate() {
            let f = w.iter().map(|r| r[0]).sum::<f64>() / (window as f64 * h);
            if f > peak {
                peak = f;
                peak_at = (k, i + window / 2);
            }
        }
    }
    // The ball carrying the peak is at the bottom, where the load Q (along −Y) points: the
    // load zone is symmetric about it, so within a few degrees — the inner race rattling in
    // the clearance and the 0.09° of the averaging window (observed 1.8°, ball 6 as in the
    // thesis); 5° is a ninth of the 45° ball spacing. (The thesis reads the position as
    // Y = −18 mm; a ball centre on the cage circle r_j = 16.745 mm reaches −16.7 mm.)
    let pos = sink.nodes[peak_at.1][balls[peak_at.0 - 1].index()].x;
    let from_bottom = (pos.y.atan2(pos.x).to_degrees() + 90.0).abs();
    assert!(from_bottom < 5.0, "peak on ball {} at {pos:?}", peak_at.0);
    eprintln!(
        "V19: cage ratio {ratio:.5} (analytic {analytic:.5}), peak ball–outer race force \
         {peak:.2} N on ball {} at {from_bottom:.1}° from the bottom",
        peak_at.0
    );
    // A ball alone at the bottom carries Q; the inner race's inertia (0.125 kg) and the
    // balls' own inertia add a few per cent while the race rattles: 10 %.
    assert!(
        (peak - Q).abs() < 0.1 * Q,
        "peak ball–outer race force {peak} N"
    );
}

const BEARING_FILE: &str = r#"
[[nodes]]
name = "outer"
kind = "frame"
position = [0.0, 0.0, 0.0]
fixed = true

[[nodes]]
name = "inner"
kind = "frame"
position = [0.0, 0.0, 0.0]

[[elements]]
name = "inner_body"
type = "rigid_body"
nodes = ["inner"]
mass = 0.125
inertia = [8.155e-6, 8.155e-6, 8.155e-6]

[[ball_bearings]]
name = "brg"
inner = "inner"
outer = "outer"
balls = 8
ball_radius = 0.00396875
ball_inertia = 1.2868e-8
inner_radius = 0.01277125
clearance = 1e-5
groove_radius = -0.00397875
cage_stiffness = 1e8
friction = 0.001
restitution = 0.9
"#;

/// `[[ball_bearings]]` in a model file expands into the same nodes and elements as the code
/// (clearance given instead of the outer radius); bad entries are refused by key.
#[test]
fn model_files_declare_ball_bearings() {
    let file = saltus::io::parse_str(BEARING_FILE, saltus::io::Format::Toml, "brg.toml").unwrap();
    let (code, _) = v19();
    let names = |m: &Model| -> Vec<String> {
        m.element_names()
            .iter()
            .filter(|n| n.starts_with("brg_"))
            .cloned()
            .collect()
    };
    assert_eq!(names(&file.model), names(&code));
    for (a, b) in file
        .model
        .nodes()
        .iter()
        .zip(code.nodes())
        .filter(|(a, _)| a.name.starts_with("brg_"))
    {
        assert_eq!(a.name, b.name);
        // r_e from r_i + 2 r_b + c: the same cage radius up to round-off.
        assert!((a.initial.x - b.initial.x).norm() < 1e-15);
    }
    for (bad, key) in [
        (
            BEARING_FILE.replace("clearance = 1e-5", "clearance = -1e-5"),
            "clearance",
        ),
        (
            BEARING_FILE.replace("inner = \"inner\"", "inner = \"shaft\""),
            "unknown node `shaft`",
        ),
        (BEARING_FILE.replace("balls = 8", "balls = 1"), "balls"),
        (
            BEARING_FILE.replace("cage_stiffness = 1e8", "cage_stifness = 1e8"),
            "cage_stifness",
        ),
    ] {
        let err = saltus::io::parse_str(&bad, saltus::io::Format::Toml, "brg.toml").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("brg.toml") && text.contains("ball bearing `brg`") && text.contains(key),
            "{text}"
        );
    }
}

/// Contact forces and Hertz stresses of the ball–race contacts while the bearing runs
/// (`force_recovery` on the bearing, steel E = 200 GPa, ν = 0.3, with its groove radius):
/// every row's stresses are Hertz's elliptical contact at the row's total force — at 100 N the
/// V19 values (inner race σ_max −6.95e8 Pa against the thesis' −7.06e8 from chart reading,
/// `core::contact_force::stress` tests) scaled by (F/100 N)^{1/3} — and recovering the same file
/// afterwards with the same materials gives the same bits.
#[test]
fn bearing_contact_stresses_while_running() {
    use saltus::core::contact_force::{Material, RaceContact};
    use saltus::io::forces::{recover_file, RecoveryOptions, Stiffness};
    let mut spec = bearing_spec();
    spec.force_recovery = Some(
        serde_json::from_value(serde_json::json!({ "young": 200e9, "poisson": 0.3 })).unwrap(),
    );
    let (mut fresh, _) = v19_with(spec);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bearing");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stresses.h5");
    let mut solver = Nsga::new(
        &mut fresh,
        NsgaOptions {
            h: 1e-5,
            t_end: 0.01,
            rho_inf: 0.0,
            tol: 1e-5,
            gravity: Vector3::zeros(),
            ..Default::default()
        },
    )
    .unwrap();
    let mut sink = saltus::io::Hdf5Sink::create(&path).unwrap();
    solver.run(&mut fresh, &mut sink, &mut |_| {}).unwrap();
    sink.finish().unwrap();
    let read = |name: &str| -> Vec<f64> {
        let f = hdf5_metno::File::open(&path).unwrap();
        f.dataset(name).unwrap().read_raw().unwrap()
    };
    let (force, sigma, tau, depth, race) = (
        read("contact_forces/total_force"),
        read("contact_forces/max_pressure"),
        read("contact_forces/max_shear"),
        read("contact_forces/shear_depth"),
        read("contacts/race"),
    );
    let hundred = |race_radius: f64| {
        let c = RaceContact {
            ball_radius: R_B,
            race_radius,
            groove_radius: -0.00397875,
            ball: Material::STEEL,
            race: Material::STEEL,
        };
        let h = c.hertz().unwrap();
        c.stresses(100.0, &h.coefficients).unwrap()
    };
    let (inner, outer) = (hundred(R_I), hundred(-R_E));
    // V19 at 100 N against the thesis' −7.06e8 Pa: its chart's c_b = 0.22 is 1.6 % above
    // Hertz's 0.2166 (core::contact_force::stress tests), so within 2 %.
    assert!(
        (inner.max_pressure / -7.06e8 - 1.0).abs() < 0.02,
        "{}",
        inner.max_pressure
    );
    let mut loaded = 0;
    for r in 0..force.len() {
        assert!(
            race[3 * r].is_finite(),
            "row {r}: every bearing contact is a race contact"
        );
        if force[r] < 1.0 {
            continue;
        }
        loaded += 1;
        let s = if race[3 * r + 1] > 0.0 {
            &inner
        } else {
            &outer
        };
        let scale = (force[r] / 100.0).cbrt();
        // The same closed form evaluated two ways: round-off.
        assert!(
            (sigma[r] / (s.max_pressure * scale) - 1.0).abs() < 1e-12,
            "row {r}"
        );
        assert!(
            (tau[r] / (s.max_shear * scale) - 1.0).abs() < 1e-12,
            "row {r}"
        );
        // Largest shear below the surface: B/A = 521 is nearly a line contact, whose
        // largest shear lies 0.786 b deep (Johnson, Contact Mechanics §4.2); Hertz's ellipse
        // at this B/A gives 0.785 b, so within 0.5 %.
        assert!(
            (depth[r] / (0.786 * s.semi_minor * scale) - 1.0).abs() < 5e-3,
            "row {r}"
        );
    }
    assert!(loaded > 1000, "{loaded} loaded rows");
    let before = read("contact_forces/max_pressure");
    let steel = Material::STEEL;
    recover_file(
        &path,
        &RecoveryOptions::new(Stiffness::Hertz { a: steel, b: steel }),
        &[],
    )
    .unwrap();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&read("contact_forces/max_pressure")), bits(&before));
    assert_eq!(bits(&read("contact_forces/total_force")), bits(&force));
}
