//! The `saltus` program end to end: default model, model files, bad input and failures.
//! Every rejection must name the offending item; a failed run keeps the steps written so far.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::PENDULUM;

fn saltus(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saltus"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run saltus")
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Number of records in `/time` of an HDF5 results file.
fn records(path: &Path) -> Vec<f64> {
    let f = hdf5_metno::File::open(path).unwrap();
    f.dataset("time").unwrap().read_raw::<f64>().unwrap()
}

#[test]
fn cli_default_model_runs_and_writes_hdf5() {
    let d = scratch("default");
    let o = saltus(&["run", "--t-end", "0.05"], &d);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("50 steps") && out.contains("saltus-default.h5"),
        "{out}"
    );
    let t = records(&d.join("saltus-default.h5"));
    assert_eq!(t.len(), 51);
    assert!((t[50] - 0.05).abs() < 1e-12);
}

/// `--timings` adds a line with where the time went [ms]: the detection, every stage's total
/// with its assemblies and factorizations (the contact linearizations and sweeps of a model
/// with contacts), and the rest outside the stages; every figure is a time, so none is
/// negative, and the parts of a stage do not exceed its total. Without the option there is
/// no such line.
#[test]
fn cli_timings_report_where_the_time_went() {
    let d = scratch("timings");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/sphere_pile.toml");
    let model = model.to_str().unwrap();
    let o = saltus(
        &["run", model, "-o", "pile.h5", "--t-end", "0.2", "--timings"],
        &d,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("saltus: time [ms]: detection "))
        .unwrap_or_else(|| panic!("no timing line in {out}"));
    // "…; position total 12.3 (assembly 1.0, factorization 0.2, contact linearization 0.4,
    // sweeps 3.1); …": the figure after each label.
    let figure = |part: &str, label: &str| -> f64 {
        let at = part
            .find(label)
            .unwrap_or_else(|| panic!("{label:?} missing: {line}"));
        part[at + label.len()..]
            .split([',', '(', ')', ';'])
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{label:?} in {line}: {e}"))
    };
    let parts: Vec<&str> = line.split("; ").collect();
    assert_eq!(parts.len(), 5, "{line}");
    assert!(figure(parts[0], "detection ") >= 0.0, "{line}");
    for (part, stage) in parts[1..4].iter().zip(["smooth", "position", "velocity"]) {
        let total = figure(part, &format!("{stage} total "));
        let mut sum = figure(part, "assembly ") + figure(part, "factorization ");
        if stage != "smooth" {
            sum += figure(part, "contact linearization ") + figure(part, "sweeps ");
        }
        // Each figure is rounded to 0.1 ms (±0.05): four parts and the total may together
        // overshoot by 0.25 ms, plus the decimal sums' round-off.
        assert!(
            sum <= total + 0.25 + 1e-9,
            "{stage}: parts {sum} > total {total}: {line}"
        );
    }
    // Nothing solved before the first step is counted, so the stages' totals and the detection
    // fit in the run's wall time; the figure is computed before rounding (-0.0 ≥ 0).
    assert!(figure(parts[4], "outside the stages ") >= 0.0, "{line}");
    let o = saltus(&["run", model, "-o", "pile2.h5", "--t-end", "0.2"], &d);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!out.contains("time [ms]"), "{out}");
}

#[test]
fn cli_model_file_with_overrides() {
    let d = scratch("file");
    std::fs::write(d.join("p.toml"), PENDULUM).unwrap();
    let o = saltus(
        &[
            "run",
            "p.toml",
            "-o",
            "res.h5",
            "--h",
            "2e-3",
            "--t-end",
            "0.1",
            "--rho-inf",
            "0.5",
        ],
        &d,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("50 steps"), "{out}");
    assert_eq!(records(&d.join("res.h5")).len(), 51);
}

#[test]
fn cli_elements_lists_every_registered_type() {
    let o = saltus(&["elements"], Path::new("."));
    let (out, _) = text(&o);
    for name in saltus::core::registry::element_type_names() {
        assert!(out.contains(name), "{name} missing from\n{out}");
    }
}

#[test]
fn cli_elements_beam_lists_every_key() {
    let o = saltus(&["elements", "beam"], Path::new("."));
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("beam  Geometrically exact"), "{out}");
    assert!(out.contains("\n  nodes: [frame, frame]\n"), "{out}");
    // `  key  [unit]  status  doc`, aligned: one line per key, split on runs of spaces.
    let line = |key: &str| -> Vec<&str> {
        let l = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key) && l.starts_with("  "))
            .unwrap_or_else(|| panic!("no `{key}` line in\n{out}"));
        l.trim()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect()
    };
    assert_eq!(line("E")[..3], ["E", "[Pa]", "required"]);
    assert!(line("E")[3].starts_with("Young's modulus"));
    assert_eq!(line("rho")[..3], ["rho", "[kg/m³]", "required"]);
    assert_eq!(line("J")[..3], ["J", "[m⁴]", "optional"]);
    assert!(line("J")[3].starts_with("Torsion constant"));
    assert_eq!(line("G")[..3], ["G", "[Pa]", "optional"]);
    assert_eq!(
        line("shear_coefficient")[..3],
        ["shear_coefficient", "[-]", "optional"]
    );
    assert_eq!(
        line("damping_ratio")[..3],
        ["damping_ratio", "[-]", "optional"]
    );
    assert_eq!(
        line("damping_frequency")[..3],
        ["damping_frequency", "[Hz]", "optional"]
    );
    // Every key of the parser, required ones first; the doc column starts at one place.
    let keys = [
        "A",
        "E",
        "I2",
        "I3",
        "rho",
        "alpha",
        "beta",
        "damping_frequency",
        "damping_ratio",
        "G",
        "J",
        "lumped_mass",
        "nu",
        "orientation",
        "shear_area_2",
        "shear_area_3",
        "shear_coefficient",
    ];
    let listed: Vec<&str> = out
        .lines()
        .skip(2)
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && !l.starts_with("  example:"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(listed, keys, "{out}");
    let column = |key: &str| {
        let l = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap();
        l.find(line(key)[3]).unwrap()
    };
    assert_eq!(column("E"), column("shear_coefficient"));
    assert!(out.contains("\n  example: "), "{out}");
}

fn expect_failure(name: &str, model: &str, needles: &[&str]) -> String {
    let d = scratch(name);
    std::fs::write(d.join("m.toml"), model).unwrap();
    let o = saltus(&["run", "m.toml"], &d);
    let (_, err) = text(&o);
    assert!(!o.status.success(), "{name} should fail");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    err
}

#[test]
fn validate_unknown_element_type_lists_registered_types() {
    let m = PENDULUM.replace("type = \"revolute_joint\"", "type = \"revolute_jiont\"");
    expect_failure(
        "unknown",
        &m,
        &[
            "m.toml",
            "hinge",
            "revolute_jiont",
            "revolute_joint",
            "spherical_joint",
        ],
    );
}

#[test]
fn validate_negative_mass_names_element_and_parameter() {
    let m = PENDULUM.replace("mass = 2.0", "mass = -2.0");
    expect_failure("mass", &m, &["m.toml", "bob_body", "mass"]);
}

#[test]
fn validate_unknown_node_and_duplicates_are_rejected() {
    let m = PENDULUM.replace(
        "nodes = [\"ground\", \"bob\"]",
        "nodes = [\"ground\", \"bobb\"]",
    );
    expect_failure("node", &m, &["m.toml", "hinge", "bobb"]);
    let m = PENDULUM.replace("name = \"hinge\"", "name = \"bob_body\"");
    expect_failure("dup", &m, &["m.toml", "bob_body", "duplicate"]);
}

#[test]
fn validate_malformed_file_and_nan_are_rejected() {
    expect_failure("syntax", "[simulation\nh = 1", &["m.toml:1", "syntax"]);
    let m = PENDULUM.replace("position = [1.0, 0.0, 0.0]", "position = [nan, 0.0, 0.0]");
    expect_failure("nan", &m, &["m.toml", "bob", "position"]);
    let m = PENDULUM.replace("h = 1e-3", "h = -1e-3");
    expect_failure("h", &m, &["m.toml", "h"]);
}

#[test]
fn validate_free_node_without_mass_is_rejected_before_the_run() {
    let m = PENDULUM.replace("type = \"rigid_body\"\nname = \"bob_body\"\nnodes = [\"bob\"]\nmass = 2.0\ninertia = [0.002, 0.002, 0.002]\n", "type = \"nodal_load\"\nname = \"bob_body\"\nnodes = [\"bob\"]\nforce = [0.0, 0.0, 1.0]\n");
    expect_failure("massless", &m, &["bob", "mass"]);
}

/// With one Newton iteration allowed the pendulum's first smooth subproblem cannot reach the
/// tolerance (it needs two): the error names step, time and subproblem, and the initial state
/// written before the failure stays in the file. (A failure in the middle of a run is covered
/// by `tests/failure_keeps_results.rs`.)
#[test]
fn cli_non_convergence_is_reported_and_results_are_kept() {
    // h = 0.05 s: Newton starts from the last step's acceleration, which at h = 1e-3 s is
    // close enough for one iteration over a hundred steps; at 0.05 s the first step needs two.
    let m = PENDULUM.replace("h = 1e-3", "h = 0.05\nmax_iterations = 1\ntol = 1e-10");
    expect_failure(
        "newton",
        &m,
        &[
            "m.toml: step 1 (t = 5.000000e-2 s)",
            "smooth subproblem did not converge in 1 iterations",
            "kept in m.h5",
            "hint: a smaller step (--h or [simulation] h), or --adaptive",
        ],
    );
    let t = records(&scratch_path("newton").join("m.h5"));
    assert_eq!(t, vec![0.0]);
}

/// With one Newton iteration allowed, the bouncing ball's impact at t ≈ 0.45 s cannot finish
/// its position correction by Newton: the contact Gauss–Seidel settles it and the report says
/// so; without the fallback the run fails with the contact hint.
#[test]
fn cli_reports_solves_settled_by_gauss_seidel() {
    let ball = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/bouncing_ball.toml"),
    )
    .unwrap()
    .replace("t_end = 1.5", "t_end = 0.6\nmax_iterations = 1")
    .replace("output = \"bouncing_ball.h5\"", "output = \"m.h5\"");
    let d = scratch("settled");
    std::fs::write(d.join("m.toml"), &ball).unwrap();
    let o = saltus(&["run", "m.toml"], &d);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        (out.clone() + &err).contains("settled by contact Gauss–Seidel"),
        "{out}{err}"
    );
    let off = ball.replace(
        "max_iterations = 1",
        "max_iterations = 1\ncontact_fallback = false",
    );
    expect_failure(
        "settled_off",
        &off,
        &[
            "position subproblem did not converge in 1 iterations",
            "a looser tolerance ([simulation] tol = 1e-5",
        ],
    );
}

fn scratch_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name)
}

/// A Python 3 that has h5py and matplotlib (`python3`, else the system's), if any.
fn python_with_h5py() -> Option<String> {
    ["python3", "/usr/bin/python3"].into_iter().find_map(|p| {
        let ok = Command::new(p)
            .args(["-c", "import h5py, matplotlib"])
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| p.to_string())
    })
}

#[test]
fn forces_recovers_contact_forces_of_a_finished_run() {
    let dir = scratch("forces");
    // A model file's relative output lands next to it (here: in the scratch folder).
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/bouncing_ball.toml");
    std::fs::copy(&model, dir.join("ball.toml")).unwrap();
    let o = saltus(&["run", "ball.toml", "--quiet"], &dir);
    assert!(o.status.success(), "{:?}", text(&o));
    let results = dir.join("bouncing_ball.h5");
    assert!(results.exists());
    let o = saltus(
        &[
            "forces",
            "bouncing_ball.h5",
            "--young",
            "6.043e8",
            "--poisson",
            "0.3",
        ],
        &dir,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    // Impacts at 0.4515 s and 1.174 s before t_end = 1.5 s.
    assert!(out.contains("1 contacts, 2 impacts reconstructed"), "{out}");
    // The largest force is named by its contact element (the model's `floor`).
    assert!(out.contains("N (floor, t = "), "{out}");
    let f = hdf5_metno::File::open(&results).unwrap();
    let d: Vec<f64> = f
        .dataset("contact_forces/impacts/duration")
        .unwrap()
        .read_raw()
        .unwrap();
    // Flores law, K = 1.40e8 from the radius: the first impact (v = 4.42 m/s, e = 0.8) lasts
    // ~1.39 ms (T ∝ v^-1/5 from the spec's 1.49 ms at 0.5 m; the library tests check it
    // to the digit).
    assert!(d.len() == 2 && (d[0] - 1.39e-3).abs() < 0.01e-3, "{d:?}");
    drop(f);
    // The plot example, where h5py and matplotlib are installed (scripts/deps.sh installs
    // them; CI must have them).
    match python_with_h5py() {
        Some(py) => {
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/contact_force_plot.py");
            let o = Command::new(py)
                .arg(&script)
                .args(["bouncing_ball.h5", "--impact", "1", "-o", "pulse.png"])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(o.status.success(), "{:?}", text(&o));
            assert!(std::fs::metadata(dir.join("pulse.png")).unwrap().len() > 10_000);
        }
        None if std::env::var_os("CI").is_some() => {
            panic!("CI lacks h5py/matplotlib: scripts/deps.sh should install them")
        }
        None => eprintln!("skipped the plot example: no python3 with h5py and matplotlib"),
    }
    // Bad command lines and files: usage errors exit 2, recovery errors 1, each named.
    let o = saltus(&["forces", "bouncing_ball.h5"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o)
        .1
        .contains("--stiffness K, or --young E --poisson NU"));
    let o = saltus(
        &[
            "forces",
            "bouncing_ball.h5",
            "--stiffness",
            "1e8",
            "--law",
            "soft",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("unknown damping law `soft`"),
        "{:?}",
        text(&o)
    );
    let o = saltus(
        &[
            "forces",
            "bouncing_ball.h5",
            "--stiffness",
            "1e8",
            "--contact",
            "wall",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("no contact `wall`"), "{:?}", text(&o));
    let o = saltus(&["forces", "missing.h5", "--stiffness", "1e8"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("missing.h5: no such file"),
        "{:?}",
        text(&o)
    );
    let o = saltus(&["forces", "bouncing_ball.h5", "--stiffness", "-1"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o)
            .1
            .contains("--stiffness <K>': must be a finite number > 0"),
        "{:?}",
        text(&o)
    );
}

#[test]
fn cli_command_line_help_version_and_option_errors() {
    let d = scratch("clap");
    let o = saltus(&["--version"], &d);
    assert!(o.status.success());
    assert_eq!(
        text(&o).0.trim(),
        format!("saltus {}", env!("CARGO_PKG_VERSION"))
    );
    for sub in ["run", "forces", "elements"] {
        let o = saltus(&[sub, "--help"], &d);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{sub} --help: {err}");
        assert!(out.contains(&format!("Usage: saltus {sub}")), "{out}");
    }
    // Errors name the option as typed, and exit 2.
    for (args, needle) in [
        (
            vec!["run", "--t-end", "0"],
            "'--t-end <T>': must be a finite number > 0, got 0",
        ),
        (
            vec!["run", "--h", "-0.001"],
            "'--h <H>': must be a finite number > 0",
        ),
        (
            vec!["run", "--rho-inf", "2"],
            "'--rho-inf <R>': must be in [0, 1], got 2",
        ),
        (vec!["run", "--threads", "0"], "--threads <N>"),
        (vec!["run", "--bogus"], "unexpected argument '--bogus'"),
    ] {
        let o = saltus(&args, &d);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o).1.contains(needle), "{args:?}: {}", text(&o).1);
    }
    // One element type, or the known names for an unknown one.
    let o = saltus(&["elements", "rigid_body"], &d);
    let out = text(&o).0;
    assert!(
        out.starts_with("rigid_body") && !out.contains("revolute_joint"),
        "{out}"
    );
    let o = saltus(&["elements", "rigid_bdy"], &d);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(
        err.contains("unknown element type `rigid_bdy` (element types: beam,")
            && err.contains("composite model-file keys: [[ball_bearings]]"),
        "{err}"
    );
}

#[test]
fn cli_closed_pipe_ends_quietly() {
    // The reader is gone before the program writes: EPIPE, not a panic (`saltus elements |
    // head` that stopped reading).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_saltus"))
        .arg("elements")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{:?}: {err}", o.status);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn cli_outputs_never_overwrite_inputs() {
    let d = scratch("overwrite");
    std::fs::write(d.join("p.toml"), PENDULUM).unwrap();
    // The model itself, and an existing file that is not HDF5, are refused; nothing changes.
    let o = saltus(&["run", "p.toml", "-o", "p.toml", "--quiet"], &d);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("p.toml: this is the model file"),
        "{}",
        text(&o).1
    );
    assert_eq!(std::fs::read_to_string(d.join("p.toml")).unwrap(), PENDULUM);
    std::fs::write(d.join("notes.txt"), "keep me").unwrap();
    let o = saltus(&["run", "p.toml", "-o", "notes.txt", "--quiet"], &d);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("not an HDF5 file"), "{}", text(&o).1);
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "keep me"
    );
    // An earlier result is replaced.
    let o = saltus(
        &["run", "p.toml", "-o", "r.h5", "--t-end", "0.01", "--quiet"],
        &d,
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let o = saltus(
        &["run", "p.toml", "-o", "r.h5", "--t-end", "0.02", "--quiet"],
        &d,
    );
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(records(&d.join("r.h5")).len(), 21);
    // A step that cannot be meant: refused by name before anything runs.
    let o = saltus(&["run", "p.toml", "--h", "1e-300", "--quiet"], &d);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("`h`") && text(&o).1.contains("is a typo"),
        "{}",
        text(&o).1
    );
    // A model file's relative output goes next to the model file, not to the working folder.
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(
        d.join("sub/q.toml"),
        PENDULUM.replace("t_end = 0.5", "t_end = 0.01\noutput = \"q.h5\""),
    )
    .unwrap();
    let o = saltus(&["run", "sub/q.toml", "--quiet"], &d);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(d.join("sub/q.h5").exists() && !d.join("q.h5").exists());
}

#[test]
fn cli_run_time_failures_name_the_file_and_hint() {
    // A mass of 1e308 overflows in the first solve: the file, the element and what to check.
    let m = PENDULUM.replace("mass = 2.0", "mass = 1e308");
    expect_failure(
        "huge_mass",
        &m,
        &[
            "m.toml: step 0",
            "element `bob_body`",
            "hint: a parameter of the element named above is probably out of range",
        ],
    );
}

#[test]
fn validate_body_on_a_fixed_node_is_rejected() {
    let m = PENDULUM.replace(
        "name = \"bob\"\nposition = [1.0, 0.0, 0.0]",
        "name = \"bob\"\nposition = [1.0, 0.0, 0.0]\nfixed = true",
    );
    assert!(m.contains("fixed = true\n[[elements]]"));
    expect_failure(
        "fixed_body",
        &m,
        &["element `bob_body` (rigid_body): its mass is on fixed node(s) `bob` only"],
    );
}

#[test]
fn cli_one_step_summary_is_singular() {
    let d = scratch("one_step");
    std::fs::write(d.join("p.toml"), PENDULUM).unwrap();
    let o = saltus(&["run", "p.toml", "--t-end", "1e-3", "--quiet"], &d);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("saltus: 1 step to t = 0.001000 s"), "{out}");
}

/// Accepted before although wrong (defect 7): an impossible inertia and an absurd step count
/// from a model file are refused, naming the file, line, element or key.
#[test]
fn validate_impossible_inertia_and_step_count_are_refused() {
    let body = |inertia: &str, h: &str| {
        format!(
            "[simulation]\nt_end = 1.0\nh = {h}\n[[nodes]]\nname = \"bob\"\nposition = [1.0, 0.0, 0.0]\n\
             [[elements]]\ntype = \"rigid_body\"\nname = \"bob_body\"\nnodes = [\"bob\"]\nmass = 2.0\n\
             inertia = {inertia}\n"
        )
    };
    expect_failure(
        "triangle",
        &body("[0.001, 0.001, 0.01]", "1e-3"),
        &["m.toml:12", "bob_body", "inertia", "triangle inequality"],
    );
    expect_failure(
        "step_count",
        &body("[0.002, 0.002, 0.002]", "1e-300"),
        &["m.toml", "h"],
    );
}

/// Output-path errors say what is wrong in words (defect 8: they printed HDF5's error stack
/// with its open flags).
#[test]
fn cli_output_path_errors_are_in_words() {
    let d = scratch("output_path");
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/models/slider_crank.toml");
    let o = saltus(&["run", model, "-o", "no/such/dir/x.h5", "--quiet"], &d);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("no/such/dir/x.h5"), "{err}");
    assert!(
        err.contains("directory `no/such/dir` does not exist"),
        "{err}"
    );
    assert!(!err.contains("flags") && !err.contains("H5F"), "{err}");
}

/// The progress bar on a terminal (defect 4): it ends at 100 % with t = t_end in plain
/// decimals and human durations, and the summary follows. Runs the program under a
/// pseudo-terminal with util-linux `script`; skipped with a printed reason without it.
#[test]
fn cli_progress_bar_reaches_100_percent() {
    let has_script = Command::new("sh")
        .args(["-c", "command -v script"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        println!("skipped: util-linux `script` not found (no pseudo-terminal to test the bar)");
        return;
    }
    let d = scratch("progress");
    let cmd = format!(
        "{} run {}/models/slider_crank.toml -o p.h5 --t-end 0.5",
        env!("CARGO_BIN_EXE_saltus"),
        env!("CARGO_MANIFEST_DIR")
    );
    let o = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout).replace('\r', "\n");
    let bars: Vec<&str> = out.lines().filter(|l| l.contains("%  t = ")).collect();
    let last = bars
        .last()
        .unwrap_or_else(|| panic!("no progress bar in {out}"));
    assert!(last.contains("100%"), "{last}");
    assert!(last.contains("t = 0.500000 s"), "{last}");
    assert!(last.contains("elapsed") && last.contains("eta"), "{last}");
    assert!(
        !out.contains("e0 s") && !out.contains("e-1 s"),
        "plain decimals: {out}"
    );
    assert!(out.contains("500 steps to t = 0.500000 s"), "{out}");
}
