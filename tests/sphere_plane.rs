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

/// The recorded gap \[m\] between the ball and the floor, per record.
fn floor_gaps(sink: &MemorySink) -> Vec<f64> {
    sink.channel("floor", "gap")
        .unwrap()
        .iter()
        .map(|g| g[0])
        .collect()
}

#[test]
fn bouncing_ball_apexes_penetration_and_rest() {
    let (r, e, drop, h) = (0.1, 0.8, 1.0, 1e-3);
    let mut model = ball(drop + r, Vector3::zeros(), r, 0.0, e);
    let (sink, s) = run(&mut model, h, 5.0);
    let gap = floor_gaps(&sink);
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
    // Impact instants: t₁ = √(2 drop/g), then every flight lasts 2 eᵏ v₁/g. Each impact is
    // resolved in the step whose end first penetrates (within one step of the exact instant),
    // and each resolution shifts the following flight by less than one step, so impact k
    // (0-based) lies within (k + 1) steps of the closed form.
    let impulse: Vec<f64> = sink
        .channel("floor", "impulse")
        .unwrap()
        .iter()
        .map(|v| v[0])
        .collect();
    let mut impacts = Vec::new();
    for k in 1..impulse.len() {
        if impulse[k] > 1e-6 && impulse[k - 1] <= 1e-6 {
            impacts.push(sink.time[k]);
        }
    }
    let v1 = (2.0 * G * drop).sqrt();
    let mut t_exact = t1;
    for (k, t) in impacts.iter().take(4).enumerate() {
        eprintln!("impact {k}: t = {t:.4} s (closed form {t_exact:.4} s)");
        assert!(
            (t - t_exact).abs() <= (k as f64 + 1.0) * h + 1e-12,
            "impact {k}: {t} vs {t_exact}"
        );
        t_exact += 2.0 * e.powi(k as i32 + 1) * v1 / G;
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
    // Without spin and with backspin ω_b (rotation opposing rolling): friction μ m g decelerates
    // v = v₀ − μ g t and spins ω = −ω_b + (5 μ g / 2r) t up until v = r ω, i.e. at
    // t* = 2 (v₀ + r ω_b)/(7 μ g), with final speed (5 v₀ − 2 r ω_b)/7.
    let (r, mu, v0, h) = (0.1, 0.2, 2.0, 1e-3);
    for backspin in [0.0, 8.0] {
        let mut model = Model::new();
        let b = model
            .add_node(
                NodeDef::frame("ball", Vector3::new(0.0, 0.0, r))
                    .velocity(Vector3::new(v0, 0.0, 0.0))
                    .angular_velocity(Vector3::new(0.0, -backspin, 0.0)),
            )
            .unwrap();
        model
            .add_element("ball", RigidBody::sphere(b, 1.0, r).unwrap())
            .unwrap();
        let c = PlaneContact::sphere(b, r, Vector3::zeros(), Vector3::z())
            .unwrap()
            .friction(mu);
        model.add_element("floor", c).unwrap();
        let (sink, s) = run(&mut model, h, 0.8);
        let slip: Vec<f64> = sink
            .channel("floor", "slip_velocity")
            .unwrap()
            .iter()
            .map(|v| v[0])
            .collect();
        let t_star = 2.0 * (v0 + r * backspin) / (7.0 * mu * G);
        let v_final = (5.0 * v0 - 2.0 * r * backspin) / 7.0;
        let t_roll = sink.time[slip.iter().position(|v| v.abs() < 1e-8).unwrap()];
        let last = sink.nodes.last().unwrap()[0];
        eprintln!(
            "backspin {backspin}: rolling from t = {t_roll:.4} s (analytic {t_star:.4}); final v = {:.6} (analytic {v_final:.6}); {s:?}",
            last.v.x
        );
        // Transition within one step of the analytic instant.
        assert!((t_roll - t_star).abs() <= h + 1e-12);
        // Final speed: friction impulse per step is μ m g h, so the discrete transition can miss
        // the exact speed by at most one step's worth of friction deceleration (μ g h).
        assert!((last.v.x - v_final).abs() <= mu * G * h);
        // Rolling without slip afterwards: ω_y r = v_x.
        assert!((last.omega_spatial().y * r - last.v.x).abs() < 1e-8);
    }
}

/// Ball rolling without slip with rolling resistance ρ: uniform deceleration a = 5ρg/(7r)
/// (solid sphere), to rest after the distance v₀²/(2a) (spec contact-elements.md §4.5, V02).
#[test]
fn rolling_resistance_stops_the_ball_at_the_analytic_distance() {
    let (r, mu, rho, v0, h) = (0.1, 0.5, 0.002, 1.0, 1e-3);
    let mut model = Model::new();
    let b = model
        .add_node(
            NodeDef::frame("ball", Vector3::new(0.0, 0.0, r))
                .velocity(Vector3::new(v0, 0.0, 0.0))
                .angular_velocity(Vector3::new(0.0, v0 / r, 0.0)),
        )
        .unwrap();
    model
        .add_element("ball", RigidBody::sphere(b, 1.0, r).unwrap())
        .unwrap();
    let c = PlaneContact::sphere(b, r, Vector3::zeros(), Vector3::z())
        .unwrap()
        .friction(mu)
        .resistance(rho, 0.0);
    model.add_element("floor", c).unwrap();
    let a = 5.0 * rho * G / (7.0 * r);
    let t_stop = v0 / a;
    let (sink, s) = run(&mut model, h, t_stop + 0.5);
    let last = sink.nodes.last().unwrap()[0];
    let distance = v0 * v0 / (2.0 * a);
    // Mid-way the speed follows v₀ − a t.
    let k = sink.time.iter().position(|&t| t >= 0.5 * t_stop).unwrap();
    let v_mid = sink.nodes[k][0].v.x;
    eprintln!("stop distance {:.6} m (analytic {distance:.6}); v(t_stop/2) = {v_mid:.6} (analytic {:.6}); {s:?}", last.x.x, v0 - a * sink.time[k]);
    // The couple impulse is exact per step; the distance error is one step of travel at most.
    assert!((last.x.x - distance).abs() <= v0 * h);
    assert!((v_mid - (v0 - a * sink.time[k])).abs() <= a * h);
    assert!(
        last.v.norm() < 1e-9 && last.omega.norm() < 1e-8,
        "at rest: {:?} {:?}",
        last.v,
        last.omega
    );
}

/// Spinning top-like ball (spin about the normal only) with spinning resistance γ_s: the
/// resisting couple γ_s m g decelerates the spin uniformly, ω(t) = ω₀ − γ_s m g t / I, to zero
/// at t = I ω₀/(γ_s m g) with I = ⅖ m r² (V03).
#[test]
fn spinning_resistance_stops_the_spin_linearly() {
    let (r, gamma, w0, h) = (0.1, 0.004, 10.0, 1e-3);
    let mut model = Model::new();
    let b = model
        .add_node(
            NodeDef::frame("ball", Vector3::new(0.0, 0.0, r))
                .angular_velocity(Vector3::new(0.0, 0.0, w0)),
        )
        .unwrap();
    model
        .add_element("ball", RigidBody::sphere(b, 1.0, r).unwrap())
        .unwrap();
    let c = PlaneContact::sphere(b, r, Vector3::zeros(), Vector3::z())
        .unwrap()
        .friction(0.3)
        .resistance(0.0, gamma);
    model.add_element("floor", c).unwrap();
    let inertia = 0.4 * r * r;
    let t_stop = inertia * w0 / (gamma * G);
    let (sink, s) = run(&mut model, h, t_stop + 0.3);
    let spin: Vec<f64> = sink.nodes.iter().map(|n| n[0].omega_spatial().z).collect();
    let k = sink.time.iter().position(|&t| t >= 0.5 * t_stop).unwrap();
    let t_zero = sink.time[spin.iter().position(|w| w.abs() < 1e-9).unwrap()];
    eprintln!(
        "spin stops at {t_zero:.4} s (analytic {t_stop:.4}); ω(t/2) {:.6} (analytic {:.6}); {s:?}",
        spin[k],
        w0 - gamma * G * sink.time[k] / inertia
    );
    let decel = gamma * G / inertia;
    assert!((spin[k] - (w0 - decel * sink.time[k])).abs() <= decel * h);
    assert!((t_zero - t_stop).abs() <= h + 1e-12);
}

/// Ball released on an incline of angle θ: it rolls without slip with a = (5/7) g sin θ when
/// tan θ ≤ 7μ/2, and slips with a = g (sin θ − μ cos θ) otherwise.
#[test]
fn incline_sticks_or_slips_with_the_analytic_acceleration() {
    let (r, mu, h, t_end): (f64, f64, f64, f64) = (0.1, 0.2, 1e-3, 0.5);
    let limit = (3.5 * mu).atan();
    for theta in [0.5 * limit, 1.5 * limit] {
        let normal = Vector3::new(-theta.sin(), 0.0, theta.cos());
        let mut model = Model::new();
        let b = model.add_node(NodeDef::frame("ball", normal * r)).unwrap();
        model
            .add_element("ball", RigidBody::sphere(b, 1.0, r).unwrap())
            .unwrap();
        let c = PlaneContact::sphere(b, r, Vector3::zeros(), normal)
            .unwrap()
            .friction(mu);
        model.add_element("slope", c).unwrap();
        let (sink, _) = run(&mut model, h, t_end);
        // Downhill: gravity's component in the plane, −(cos θ, 0, sin θ).
        let down = -Vector3::new(theta.cos(), 0.0, theta.sin());
        let last = sink.nodes.last().unwrap()[0];
        let a_num = last.v.dot(&down) / t_end;
        let a_exact = if theta.tan() <= 3.5 * mu {
            5.0 / 7.0 * G * theta.sin()
        } else {
            G * (theta.sin() - mu * theta.cos())
        };
        let slip = sink.channel("slope", "slip_velocity").unwrap();
        let rolling = slip.last().unwrap().iter().all(|v| v.abs() < 1e-8);
        eprintln!(
            "θ = {:.2}°: a = {a_num:.6} (analytic {a_exact:.6}), rolling {rolling}",
            theta.to_degrees()
        );
        assert_eq!(rolling, theta.tan() <= 3.5 * mu);
        // Uniform acceleration from rest is integrated exactly up to the Newton tolerance.
        assert!((a_num - a_exact).abs() < 1e-6 * a_exact);
        assert!(sink
            .channel("slope", "gap")
            .unwrap()
            .iter()
            .all(|g| g[0].abs() < 1e-10));
    }
}

/// V15 (thesis Annex C): bouncing ball m = 1 kg, R = 0.1 m, e_N = 0.8, ρ∞ = 0, h = 1e-3 s; drop
/// height not stated (1 m used). The thesis reports Newton iterations max (1, 1, 1) and linear
/// convergence to the analytic nonsmooth solution, measured by the L1 error of spec §10.
#[test]
fn v15_bouncing_ball_converges_linearly_to_the_nonsmooth_solution() {
    let (r, e, drop) = (0.1, 0.8, 1.0);
    let v1 = (2.0 * G * drop).sqrt();
    let t1 = (2.0 * drop / G).sqrt();
    // Analytic height of the centre above r: free flights between impacts t_k.
    let exact = |t: f64| -> f64 {
        if t <= t1 {
            return drop - 0.5 * G * t * t;
        }
        let (mut tk, mut vk) = (t1, e * v1);
        for _ in 0..200 {
            let flight = 2.0 * vk / G;
            if t <= tk + flight {
                let s = t - tk;
                return vk * s - 0.5 * G * s * s;
            }
            tk += flight;
            vk *= e;
        }
        0.0
    };
    let hs = [8e-3, 4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4];
    let mut errors = Vec::new();
    for h in hs {
        let mut model = ball(drop + r, Vector3::zeros(), r, 0.0, e);
        let opts = NsgaOptions {
            h,
            t_end: 2.0,
            rho_inf: 0.0,
            gravity: Vector3::new(0.0, 0.0, -G),
            ..Default::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let mut sink = MemorySink::default();
        let s = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
        let (mut num, mut den) = (0.0, 0.0);
        for (t, n) in sink.time.iter().zip(&sink.nodes) {
            num += (n[0].x.z - r - exact(*t)).abs();
            den += exact(*t).abs();
        }
        errors.push(num / den);
        eprintln!(
            "h = {h:e}: L1 error {:.3e}; iterations max {:?} mean {:?}",
            num / den,
            s.max_iterations(),
            s.mean_iterations()
        );
        if h == 1e-3 {
            // Thesis: max (1, 1, 1). Free flight and impacts are linear here; 2 allows one
            // status change at an impact.
            assert!(s.max_iterations().iter().all(|&i| i <= 2), "{s:?}");
        }
    }
    // Least-squares slope of log(error) against log(h): the error of a single halving is
    // irregular (each impact falls anywhere inside its step), the trend over 5 halvings is not.
    let n = hs.len() as f64;
    let (lx, ly): (Vec<f64>, Vec<f64>) = hs
        .iter()
        .zip(&errors)
        .map(|(h, e)| (h.ln(), e.ln()))
        .unzip();
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    let slope = lx
        .iter()
        .zip(&ly)
        .map(|(x, y)| (x - mx) * (y - my))
        .sum::<f64>()
        / lx.iter().map(|x| (x - mx) * (x - mx)).sum::<f64>();
    eprintln!("fitted order {slope:.3}");
    // Expected global order 1 with impacts (spec §10, thesis: linear). The orders of single
    // halvings here spread from 0.5 to 1.8 (standard deviation ≈ 0.5): each impact falls
    // anywhere inside its step. Over five halvings that leaves the fitted slope a standard error
    // of ≈ 0.2, so the window is about two of them around 1 (observed 1.06), and excludes the
    // order ½ of an impact time error that would not shrink with h.
    assert!((0.6..=1.4).contains(&slope), "order {slope}");
}

/// A ball resting on the plane (μ = 0.3): every step its position and velocity corrections
/// push it back out of the floor and cancel the approach that gravity gave it. Their matrices
/// do not change while it rests (same contact status, same configuration), so the corrections
/// reuse last step's factorization (`Tolerance::exact_reuse`) instead of refactorizing per step,
/// and end where full Newton ends: the resting height is the same to round-off.
#[test]
fn resting_contact_corrections_reuse_their_factorization() {
    let (r, h, t_end) = (0.1, 1e-3, 1.0);
    let rest = |reuse: Option<f64>| {
        let mut model = ball(r, Vector3::zeros(), r, 0.3, 0.5);
        let opts = NsgaOptions {
            h,
            t_end,
            rho_inf: 0.8,
            gravity: Vector3::new(0.0, 0.0, -G),
            jacobian_reuse: reuse,
            ..Default::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        let mut sink = MemorySink::default();
        solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
        (
            solver.summary().numeric_factorizations(),
            floor_gaps(&sink),
            solver.nodes()[0],
        )
    };
    let (f_reuse, gap_reuse, end_reuse) = rest(NsgaOptions::default().jacobian_reuse);
    let (f_full, gap_full, end_full) = rest(None);
    println!(
        "factorizations (smooth, position, velocity): reuse {f_reuse:?}, full Newton {f_full:?}"
    );
    let steps = (t_end / h).round() as usize;
    // Full Newton factorizes each correction at every step; the reused factorization serves
    // all but a few (the first steps, before the ball is at rest to 1e-6 of its size).
    assert!(f_full[1] >= steps && f_full[2] >= steps, "{f_full:?}");
    assert!(f_reuse[1] <= 5 && f_reuse[2] <= 5, "{f_reuse:?}");
    // Same resting contact: the gap is solved to round-off either way (|g| ≲ 1e3 ε · r).
    let worst = |g: &[f64]| g.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    println!(
        "largest |gap|: reuse {:e}, full Newton {:e}",
        worst(&gap_reuse),
        worst(&gap_full)
    );
    assert!(worst(&gap_reuse) <= 1e-13 && worst(&gap_full) <= 1e-13);
    // The resting height to the same round-off (coordinates of 0.1 m: 1e3 ε · 0.1 ≈ 2e-14).
    assert!((end_reuse.x - end_full.x).norm() <= 1e-13);
    // At rest: the velocity correction cancels g h = 1e-2 m/s each step exactly (the contact
    // row is linear in v), leaving round-off of that size, ≲ 1e3 ε · 1e-2.
    assert!(end_reuse.v.norm() <= 1e-12 && end_full.v.norm() <= 1e-12);
}
