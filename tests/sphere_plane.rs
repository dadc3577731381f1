//! Sphere–plane contact in the NSGA step (spec validation-cases V01–V03 families, issue 3):
//! bouncing ball with restitution (apex heights, no penetration, rest in finite time) and a
//! ball thrown sliding on a plane (transition to rolling at t* = 2v₀/(7μg), final 5v₀/7).

use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::prelude::*;

const G: f64 = 9.81;

fn ball(z: f64, v: Vector3<f64>, r: f64, mu: f64, e: f64) -> Model {
    let mut model = Model::new();
    let b = model
        .add_node(NodeDef::frame("ball", Vector3::new(0.0, 0.0, z)).velocity(v))
        .unwrap();
    model
        .add_element("ball", RigidBody::sphere(b, 1.0, r).unwrap())
        .unwrap();
    let c = PlaneContact::sphere(b, r, Vector3::zeros(), Vector3::z())
        .unwrap()
        .friction(mu)
        .restitution(e, 0.0);
    model.add_element("floor", c).unwrap();
    model
}

fn run(model: &mut Model, h: f64, t_end: f64) -> (MemorySink, RunSummary) {
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf: 0.8,
        gravity: Vector3::new(0.0, 0.0, -G),
        ..Default::default()
    };
    let mut solver = Nsga::new(model, opts).unwrap();
    let mut sink = MemorySink::default();
    let s = solver.run(model, &mut sink, &mut |_| {}).unwrap();
    (sink, s)
}

#[test]
fn bouncing_ball_apexes_penetration_and_rest() {
    let (r, e, drop, h) = (0.1, 0.8, 1.0, 1e-3);
    let mut model = ball(drop + r, Vector3::zeros(), r, 0.0, e);
    let (sink, s) = run(&mut model, h, 5.0);
    let gap: Vec<f64> = sink
        .channel("floor", "gap")
        .unwrap()
        .iter()
        .map(|g| g[0])
        .collect();
    let min_gap = gap.iter().cloned().fold(f64::INFINITY, f64::min);
    let mut apex = Vec::new();
    for i in 1..gap.len() - 1 {
        if gap[i] > gap[i - 1] && gap[i] >= gap[i + 1] && gap[i] > 1e-3 {
            apex.push(gap[i]);
        }
    }
    let t1 = (2.0 * drop / G).sqrt();
    let t_rest = t1 * (1.0 + e) / (1.0 - e);
    let last = sink.nodes.last().unwrap()[0];
    eprintln!(
        "min gap {min_gap:e}; apexes {:?}; rest time (Zeno) {t_rest:.3} s; final v {:?}; {s:?}",
        &apex[..apex.len().min(5)],
        last.v
    );
    // No penetration: the position correction enforces g_N ≥ 0 to the Newton tolerance.
    assert!(min_gap >= -1e-10);
    // Apex k: drop·e^{2k}; the impact is detected at the first penetrating step, which lifts the
    // ball by at most one step of travel v_impact·h.
    let v_impact = (2.0 * G * drop).sqrt();
    for (k, a) in apex.iter().take(3).enumerate() {
        let exact = drop * e.powi(2 * (k as i32 + 1));
        assert!(
            (a - exact).abs() <= v_impact * h,
            "apex {k}: {a} vs {exact}"
        );
    }
    // Zeno: after t_rest the ball rests on the plane (gap at round-off, velocity of at most
    // one step of gravity g·h while the closed contact absorbs it).
    let k_rest = sink.time.iter().position(|&t| t > t_rest + 0.2).unwrap();
    for k in k_rest..gap.len() {
        assert!(
            gap[k].abs() < 1e-10 && sink.nodes[k][0].v.norm() <= G * h,
            "t = {}: gap {} v {:?}",
            sink.time[k],
            gap[k],
            sink.nodes[k][0].v
        );
    }
}

#[test]
fn sliding_ball_starts_rolling() {
    let (r, mu, v0, h) = (0.1, 0.2, 2.0, 1e-3);
    let mut model = ball(r, Vector3::new(v0, 0.0, 0.0), r, mu, 0.0);
    let (sink, s) = run(&mut model, h, 0.6);
    let slip: Vec<f64> = sink
        .channel("floor", "slip_velocity")
        .unwrap()
        .iter()
        .map(|v| v[0])
        .collect();
    let t_star = 2.0 * v0 / (7.0 * mu * G);
    let t_roll = sink.time[slip.iter().position(|v| v.abs() < 1e-8).unwrap()];
    let last = sink.nodes.last().unwrap()[0];
    eprintln!("rolling from t = {t_roll:.4} s (analytic {t_star:.4}); final v = {:.6} (5v0/7 = {:.6}); {s:?}", last.v.x, 5.0 * v0 / 7.0);
    // Transition within one step of the analytic instant.
    assert!((t_roll - t_star).abs() <= h + 1e-12);
    // Final speed 5v₀/7: friction impulse per step is μ m g h, so the discrete transition can
    // miss the exact speed by at most one step's worth of friction deceleration (μ g h).
    assert!((last.v.x - 5.0 * v0 / 7.0).abs() <= mu * G * h);
    // Rolling without slip afterwards: ω_y r = v_x.
    assert!((last.omega_spatial().y * r - last.v.x).abs() < 1e-8);
}
