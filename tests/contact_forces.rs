//! Contact forces recovered from impulses (`contact-force.md`, validation cases V15 and V16 of
//! `validation-cases.md`): runs whose contact tables go through the recovery of
//! `saltus::io::forces`, against the spec's reconstructed durations and Hertz's closed form.

use saltus::core::contact_force::{Damping, Material, Method};
use saltus::elements::body::RigidBody;
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::contact::spheres::SphereContact;
use saltus::io::forces::{recover_table, ContactHistoryTable, RecoveryOptions, Stiffness};
use saltus::prelude::*;

const G: f64 = 9.81;

/// V15: a ball of m = 1 kg, R = 0.1 m dropped from rest at height `h0` (gap) onto a plane,
/// restitution `e`, run with step `h` (ρ∞ = 0, as the thesis) to `t_end`.
fn bouncing_ball(h0: f64, e: f64, h: f64, t_end: f64) -> MemorySink {
    let mut model = Model::new();
    let n = model
        .add_node(NodeDef::frame("ball", Vector3::new(0.0, 0.0, 0.1 + h0)))
        .unwrap();
    model
        .add_element("body", RigidBody::sphere(n, 1.0, 0.1).unwrap())
        .unwrap();
    model
        .add_element(
            "floor",
            PlaneContact::sphere(n, 0.1, Vector3::zeros(), Vector3::z())
                .unwrap()
                .restitution(e, 0.0),
        )
        .unwrap();
    let opts = NsgaOptions {
        h,
        t_end,
        rho_inf: 0.0,
        gravity: Vector3::new(0.0, 0.0, -G),
        ..Default::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    sink
}

/// The thesis' bouncing-ball law: Flores damping, K = 1.4e8 N/m^{3/2} (E = 6.043e8 Pa,
/// ν = 0.3 for ball and ground).
fn v15_options() -> RecoveryOptions {
    RecoveryOptions::new(Stiffness::Given(1.4e8))
}

#[test]
fn v15_bouncing_ball_contact_duration() {
    // h0 = 1 m, e = 0.6: the spec's reconstructed duration of the first impact, 1.446 ms
    // (v1 = √(2 g h0) = 4.43 m/s). The nonsmooth step sees the impact at the start of the step
    // that contains it: the approach speed is v_n ≤ v1 (short by at most g h) and the step's
    // impulse includes the weight's m g h. With T ∝ Λ^0.4 δ̇_i^−0.6 that moves T by at most
    // ~0.5 g h / v1 = 0.11 % at h = 1e-3: 2 µs on 1.446 ms.
    let (h0, e) = (1.0, 0.6);
    let sink = bouncing_ball(h0, e, 1e-3, 0.5);
    let table = ContactHistoryTable::from_memory(&sink);
    let f = recover_table(&table, &v15_options()).unwrap();
    assert_eq!(f.impacts.len(), 1, "one impact before 0.5 s");
    let imp = &f.impacts[0];
    let v1 = (2.0 * G * h0).sqrt();
    assert!(
        (imp.approach_speed - v1).abs() <= G * 1e-3 + 1e-9,
        "{}",
        imp.approach_speed
    );
    assert!(
        (imp.time - (2.0 * h0 / G).sqrt()).abs() <= 1e-3 + 1e-9,
        "impact at {}",
        imp.time
    );
    let p = imp.pulse.as_ref().unwrap();
    assert!((p.duration - 1.446e-3).abs() < 2e-6, "T = {}", p.duration);
    // The impact impulse is what the velocity jump says: m (1 + e) v_n plus the weight's
    // impulse over the step, m g h.
    let m = 1.0;
    assert!(
        (imp.impulse - (m * (1.0 + e) * imp.approach_speed + m * G * 1e-3)).abs() < 1e-6,
        "{}",
        imp.impulse
    );
}

#[test]
fn v15_force_curves_converge_as_the_step_decreases() {
    // e = 0.8, h0 = 0.5 m (spec: T = 1.49 ms). The recovered first pulse tends to the pulse of
    // the exact impact (approach speed v1, impulse m (1 + e) v1) as h decreases, with steps up
    // to ≈ 69 T (h = 0.1 s). Error bound of the first-order analysis above, ~0.5 g h / v1 in T
    // and ~1.5 g h / v1 in the peak force (F_max ∝ Λ^0.6 δ̇_i^0.6 … to first order), with 20 %
    // slack for second-order terms at the largest step.
    let (h0, e) = (0.5, 0.8);
    let v1 = (2.0 * G * h0).sqrt();
    let exact = saltus::core::contact_force::Pulse::new(
        &saltus::core::contact_force::Impact {
            impulse: (1.0 + e) * v1,
            approach_speed: v1,
            restitution: e,
        },
        &saltus::core::contact_force::ForceLaw::hertz(1.4e8, Damping::Flores),
        Method::Cubic,
        101,
    )
    .unwrap();
    assert!(
        (exact.duration - 1.49e-3).abs() < 5e-6,
        "{}",
        exact.duration
    );
    let mut errors = Vec::new();
    for h in [0.1, 0.01, 1e-3, 1e-4] {
        let sink = bouncing_ball(h0, e, h, 0.4);
        let f = recover_table(&ContactHistoryTable::from_memory(&sink), &v15_options()).unwrap();
        let p = f.impacts[0].pulse.as_ref().unwrap();
        let (et, ef) = (
            (p.duration / exact.duration - 1.0).abs(),
            (p.peak_force / exact.peak_force - 1.0).abs(),
        );
        let bound = G * h / v1;
        assert!(et <= 0.6 * bound + 1e-6, "h = {h}: T error {et}");
        assert!(ef <= 1.8 * bound + 1e-6, "h = {h}: peak error {ef}");
        errors.push((et, ef));
    }
    // (The bounds above, proportional to h, are the convergence statement.)
    eprintln!("V15 pulse errors (T, F_max) for h = 0.1 … 1e-4: {errors:?}");
}

/// V16: two equal spheres (R = 0.02 m, m = 0.092 kg) 0.1 m apart approaching at 0.15 m/s
/// each, frictionless, no gravity, restitution `e`; steps of `h`.
fn two_spheres(e: f64, h: f64) -> MemorySink {
    let (r, m, v) = (0.02, 0.092, 0.15);
    let mut model = Model::new();
    let a = model
        .add_node(NodeDef::frame("a", Vector3::zeros()).velocity(Vector3::new(v, 0.0, 0.0)))
        .unwrap();
    let b = model
        .add_node(
            NodeDef::frame("b", Vector3::new(0.1, 0.0, 0.0)).velocity(Vector3::new(-v, 0.0, 0.0)),
        )
        .unwrap();
    for (name, n) in [("body_a", a), ("body_b", b)] {
        model
            .add_element(name, RigidBody::sphere(n, m, r).unwrap())
            .unwrap();
    }
    model
        .add_element(
            "contact",
            SphereContact::spheres(b, a, r, r)
                .unwrap()
                .restitution(e, 0.0),
        )
        .unwrap();
    let opts = NsgaOptions {
        h,
        t_end: 0.5,
        rho_inf: 0.0,
        gravity: Vector3::zeros(),
        ..Default::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    sink
}

#[test]
fn v16_two_sphere_impact_durations() {
    // K = 5.5e9 N/m^{3/2} as the thesis, h = 1e-2 s (44–67 T): durations 0.160 / 0.166 /
    // 0.182 / 0.230 ms (spec's reconstruction), to half a unit of the printed digit. No
    // gravity: the approach speed and the impulse are exact (0.3 m/s, m_eff (1 + e) 0.3).
    // Hertz's K from E = 7.5e10 Pa, ν = 0.3 and the table's R* = 0.01 m is 5.49e9 (the
    // thesis rounds it): durations longer by (5.5/5.49)^0.4, 0.07 %.
    let steel = Material {
        young: 7.5e10,
        poisson: 0.3,
    };
    for (e, t_ref) in [
        (0.8, 0.160e-3),
        (0.6, 0.166e-3),
        (0.4, 0.182e-3),
        (0.2, 0.230e-3),
    ] {
        let sink = two_spheres(e, 1e-2);
        let table = ContactHistoryTable::from_memory(&sink);
        assert!(
            (table.radius[0] - 0.01).abs() < 1e-15,
            "R* = {}",
            table.radius[0]
        );
        let f = recover_table(&table, &RecoveryOptions::new(Stiffness::Given(5.5e9))).unwrap();
        assert_eq!(f.impacts.len(), 1, "e = {e}");
        let imp = &f.impacts[0];
        assert!(
            (imp.approach_speed - 0.3).abs() < 1e-12,
            "{}",
            imp.approach_speed
        );
        assert!((imp.impulse - 0.046 * (1.0 + e) * 0.3).abs() < 1e-10);
        // Impact at t = 0.2 s (the gap 0.06 m closes at 0.3 m/s).
        assert!((imp.time - 0.2).abs() < 1e-2 + 1e-9, "{}", imp.time);
        let p = imp.pulse.as_ref().unwrap();
        assert!(
            (p.duration - t_ref).abs() <= 0.5e-6,
            "e = {e}: T = {}",
            p.duration
        );
        // Outside the impact step there is no force, and impulse = impact + smooth × h.
        for (r, t) in table.impulse.iter().enumerate() {
            let back = f.impact_impulse[r] + f.smooth_force[r] * table.h[r];
            assert!((back - t).abs() <= 1e-15 * t.abs().max(1e-3), "row {r}");
        }
        let hertz = RecoveryOptions::new(Stiffness::Hertz { a: steel, b: steel });
        let fh = recover_table(&table, &hertz).unwrap();
        assert!(
            (fh.stiffness[0] / 5.49e9 - 1.0).abs() < 1e-3,
            "{}",
            fh.stiffness[0]
        );
        let ph = fh.impacts[0].pulse.as_ref().unwrap();
        let expected = (5.5e9 / fh.stiffness[0]).powf(0.4);
        assert!((ph.duration / p.duration - expected).abs() < 1e-12);
    }
}

#[test]
fn elastic_two_sphere_impact_matches_hertz() {
    // e = 1: the compliant (dynamic) reconstruction of the run's impact against Hertz's closed
    // form for m* = 0.046 kg, v = 0.3 m/s, K = 5.49e9: δ_max = (5 m* v²/(4K))^{2/5},
    // F_max = K δ_max^{3/2}, T = 2.94328 δ_max/v — within the issue's 2 % (observed: RK4 error,
    // ~1e-6).
    let steel = Material {
        young: 7.5e10,
        poisson: 0.3,
    };
    let sink = two_spheres(1.0, 1e-2);
    let table = ContactHistoryTable::from_memory(&sink);
    let mut opts = RecoveryOptions::new(Stiffness::Hertz { a: steel, b: steel });
    opts.method = Method::Dynamic;
    opts.damping = Damping::Hertz;
    let f = recover_table(&table, &opts).unwrap();
    let p = f.impacts[0].pulse.as_ref().unwrap();
    let k = f.stiffness[0];
    let (m, v) = (0.046, 0.3);
    let d_max = (5.0 * m * v * v / (4.0 * k)).powf(0.4);
    let (f_max, t_hertz) = (k * d_max.powf(1.5), 2.943_28 * d_max / v);
    assert!(
        (p.duration / t_hertz - 1.0).abs() < 0.02,
        "{} vs {t_hertz}",
        p.duration
    );
    assert!(
        (p.peak_force / f_max - 1.0).abs() < 0.02,
        "{} vs {f_max}",
        p.peak_force
    );
    assert!((p.duration / t_hertz - 1.0).abs() < 1e-5);
    assert!((p.peak_force / f_max - 1.0).abs() < 1e-5);
}

/// The bouncing ball written to HDF5 (every `every`-th step recorded), its path.
fn bouncing_ball_file(name: &str, every: usize) -> std::path::PathBuf {
    let text = std::fs::read_to_string("models/bouncing_ball.toml").unwrap();
    let text = text.replace(
        "output = \"bouncing_ball.h5\"",
        &format!("output = \"bouncing_ball.h5\"\noutput_every = {every}"),
    );
    run_to_file(&text, name)
}

#[test]
fn recovery_written_to_the_results_file() {
    use saltus::io::forces::recover_file;
    let path = bouncing_ball_file("ball.h5", 1);
    let steel = Material {
        young: 6.043e8,
        poisson: 0.3,
    };
    let opts = RecoveryOptions::new(Stiffness::Hertz { a: steel, b: steel });
    let summary = recover_file(&path, &opts, &[]).unwrap();
    // Impacts at 0.4515 s and 1.174 s before t_end = 1.5 s, each reconstructed.
    assert_eq!(
        (summary.contacts, summary.impacts, summary.failed),
        (1, 2, 0)
    );
    // The same recovery from the same run kept in memory, bit for bit.
    let mut file = saltus::io::load_model("models/bouncing_ball.toml").unwrap();
    let o = saltus::driver::nsga_options(&file.simulation, &Default::default());
    let mut solver = Nsga::new(&mut file.model, o).unwrap();
    let mut mem = MemorySink::default();
    solver.run(&mut file.model, &mut mem, &mut |_| {}).unwrap();
    let expected = recover_table(&ContactHistoryTable::from_memory(&mem), &opts).unwrap();
    {
        let h5 = hdf5_metno::File::open(&path).unwrap();
        let read = |d: &str| -> Vec<f64> { h5.dataset(d).unwrap().read_raw().unwrap() };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        assert_eq!(
            bits(&read("contact_forces/total_force")),
            bits(&expected.total_force)
        );
        assert_eq!(
            bits(&read("contact_forces/smooth_force")),
            bits(&expected.smooth_force)
        );
        let durations: Vec<f64> = expected
            .impacts
            .iter()
            .map(|i| i.pulse.as_ref().unwrap().duration)
            .collect();
        assert_eq!(
            bits(&read("contact_forces/impacts/duration")),
            bits(&durations)
        );
        let force = h5.dataset("contact_forces/impacts/force").unwrap();
        assert_eq!(force.shape(), vec![2, 101]);
        let f: Vec<f64> = force.read_raw().unwrap();
        let p0 = expected.impacts[0].pulse.as_ref().unwrap();
        assert_eq!(
            bits(&f[..101]),
            bits(&p0.samples.iter().map(|s| s.force).collect::<Vec<_>>())
        );
        // Identity: impact + smooth × h = the impulse of every row.
        let imp: Vec<f64> = read("contacts/impulse").chunks(3).map(|c| c[0]).collect();
        let (ii, sf) = (
            read("contact_forces/impact_impulse"),
            read("contact_forces/smooth_force"),
        );
        for r in 0..imp.len() {
            let h = if r == 0 { 0.0 } else { 1e-3 };
            assert!(
                (ii[r] + sf[r] * h - imp[r]).abs() <= 1e-15 * imp[r].abs().max(1.0),
                "row {r}"
            );
        }
    }
    // The element name resolves to the contact's id; running again replaces the group.
    let again = recover_file(
        &path,
        &RecoveryOptions::new(Stiffness::Given(1.4e8)),
        &["floor".into()],
    );
    assert_eq!(again.unwrap().impacts, 2);
    let h5 = hdf5_metno::File::open(&path).unwrap();
    let k: Vec<f64> = h5
        .dataset("contact_forces/stiffness")
        .unwrap()
        .read_raw()
        .unwrap();
    assert!(k.iter().all(|k| *k == 1.4e8));
}

#[test]
fn recovery_refuses_files_without_every_step() {
    use saltus::io::forces::recover_file;
    let path = bouncing_ball_file("ball_every2.h5", 2);
    let e = recover_file(&path, &RecoveryOptions::new(Stiffness::Given(1.4e8)), &[]).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("ball_every2.h5") && msg.contains("output_every"),
        "{msg}"
    );
    let path = bouncing_ball_file("ball_names.h5", 1);
    let e = recover_file(
        &path,
        &RecoveryOptions::new(Stiffness::Given(1.4e8)),
        &["wall".into()],
    )
    .unwrap_err();
    assert!(e.to_string().contains("no contact `wall`"), "{e}");
}

/// Every `/contact_forces` dataset of the file at `path` (name, raw bits), sorted by name.
fn force_datasets(path: &std::path::Path) -> Vec<(String, Vec<u64>)> {
    let f = hdf5_metno::File::open(path).unwrap();
    let mut out = Vec::new();
    for group in ["contact_forces", "contact_forces/impacts"] {
        let g = f.group(group).unwrap();
        for name in g.member_names().unwrap() {
            let Ok(ds) = g.dataset(&name) else { continue };
            let bits: Vec<u64> = match ds.dtype().unwrap().size() {
                1 => ds
                    .read_raw::<u8>()
                    .unwrap()
                    .iter()
                    .map(|x| *x as u64)
                    .collect(),
                _ if name == "contact" || name == "row" => ds.read_raw::<u64>().unwrap(),
                _ => ds
                    .read_raw::<f64>()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect(),
            };
            out.push((format!("{group}/{name}"), bits));
        }
    }
    out.sort();
    out
}

/// Run the model file `text` into `name` with an HDF5 sink, return the path.
fn run_to_file(text: &str, name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("contact_forces");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut file = saltus::io::parse_str(text, saltus::io::Format::Toml, name).unwrap();
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    let mut solver = Nsga::new(&mut file.model, opts).unwrap();
    let mut sink = saltus::io::Hdf5Sink::create(&path).unwrap();
    solver.run(&mut file.model, &mut sink, &mut |_| {}).unwrap();
    sink.finish().unwrap();
    path
}

#[test]
fn live_recovery_equals_the_recovery_after_the_run() {
    use saltus::io::forces::recover_file;
    // The bouncing ball declaring its force recovery in the model file: /contact_forces is
    // written while it runs; `saltus forces` with the same law on the finished file rewrites
    // it with the same bits.
    let text = std::fs::read_to_string("models/bouncing_ball.toml")
        .unwrap()
        .replace(
            "restitution = 0.8",
            "restitution = 0.8\nforce_recovery = { young = 6.043e8, poisson = 0.3 }",
        );
    let path = run_to_file(&text, "live_ball.h5");
    let live = force_datasets(&path);
    let impacts = live
        .iter()
        .find(|(n, _)| n.ends_with("impacts/duration"))
        .unwrap();
    assert_eq!(impacts.1.len(), 2, "two impacts before t_end");
    let steel = Material {
        young: 6.043e8,
        poisson: 0.3,
    };
    recover_file(
        &path,
        &RecoveryOptions::new(Stiffness::Hertz { a: steel, b: steel }),
        &[],
    )
    .unwrap();
    assert_eq!(force_datasets(&path), live);

    // Contacts created and removed at run time by a contact group (balls dropped on a floor
    // and onto each other), declared with a given stiffness and the dynamic method.
    let text = r#"
[simulation]
t_end = 0.6
h = 1e-3
gravity = [0.0, 0.0, -9.81]

[[nodes]]
name = "b1"
position = [0.0, 0.0, 0.3]

[[nodes]]
name = "b2"
position = [0.02, 0.0, 0.6]

[[elements]]
name = "m1"
type = "rigid_body"
nodes = ["b1"]
mass = 0.2
inertia = [2e-4, 2e-4, 2e-4]

[[elements]]
name = "m2"
type = "rigid_body"
nodes = ["b2"]
mass = 0.2
inertia = [2e-4, 2e-4, 2e-4]

[[contact_groups]]
name = "pile"
nodes = ["b1", "b2"]
radius = 0.05
restitution = 0.6
planes = [{ point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }]
force_recovery = { stiffness = 5e8, method = "dynamic", damping = "exact" }
"#;
    let path = run_to_file(text, "live_group.h5");
    let live = force_datasets(&path);
    let count = |name: &str| {
        live.iter()
            .find(|(n, _)| n.ends_with(name))
            .unwrap()
            .1
            .len()
    };
    assert!(
        count("impacts/duration") >= 3,
        "{}",
        count("impacts/duration")
    );
    let mut opts = RecoveryOptions::new(Stiffness::Given(5e8));
    opts.method = Method::Dynamic;
    opts.damping = Damping::Exact;
    recover_file(&path, &opts, &[]).unwrap();
    assert_eq!(force_datasets(&path), live);
}

#[test]
fn bad_force_recovery_declarations_name_the_parameter() {
    let base = std::fs::read_to_string("models/bouncing_ball.toml").unwrap();
    for (decl, needle) in [
        (
            "{ young = 6e8 }",
            "give either stiffness, or young and poisson",
        ),
        ("{ stiffness = -3.0 }", "stiffness K = -3"),
        ("{ stiffness = 1e8, damping = \"soft\" }", "soft"),
        ("{ stiffness = 1e8, method = \"spline\" }", "spline"),
        (
            "{ young = -6e8, poisson = 0.3 }",
            "Young's modulus E = -600000000",
        ),
    ] {
        let text = base.replace(
            "restitution = 0.8",
            &format!("restitution = 0.8\nforce_recovery = {decl}"),
        );
        let err = saltus::io::parse_str(&text, saltus::io::Format::Toml, "ball.toml")
            .err()
            .unwrap_or_else(|| panic!("{decl} accepted"))
            .to_string();
        assert!(
            err.contains("floor") && err.contains("force_recovery"),
            "{decl}: {err}"
        );
        assert!(err.contains(needle), "{decl}: {err}");
    }
}
