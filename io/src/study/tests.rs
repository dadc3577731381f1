use super::*;

/// The shipped bouncing ball (a ball `ball` with `ball_body`, a floor contact `floor`).
const BASE: &str = include_str!("../../../models/bouncing_ball.toml");

/// A study file and its base model in a fresh directory; returns the study's path.
fn write_study(name: &str, study: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("saltus-study-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ball.toml"), BASE).unwrap();
    let path = dir.join("study.toml");
    std::fs::write(&path, format!("model = \"ball.toml\"\n{study}")).unwrap();
    path
}

fn load_err(name: &str, study: &str) -> String {
    Study::load(&write_study(name, study))
        .unwrap_err()
        .to_string()
}

#[test]
fn grid_points_vary_the_last_parameter_fastest() {
    let s = Study::load(&write_study(
        "grid",
        r#"
[[parameter]]
path = "elements.floor.restitution"
values = [0.5, 0.8]
[[parameter]]
path = "simulation.h"
values = [1e-3, 2e-3, 4e-3]
"#,
    ))
    .unwrap();
    assert_eq!(s.len(), 6);
    let p = |k| s.point(k).into_iter().map(number).collect::<Vec<_>>();
    assert_eq!(p(0), [Some(0.5), Some(1e-3)]);
    assert_eq!(p(2), [Some(0.5), Some(4e-3)]);
    assert_eq!(p(3), [Some(0.8), Some(1e-3)]);
    assert_eq!(p(5), [Some(0.8), Some(4e-3)]);
    assert_eq!(s.run_name(5), "run-005");
    assert_eq!(
        s.describe(4),
        "elements.floor.restitution = 0.8, simulation.h = 0.002"
    );
    assert_eq!(s.folder.file_name().unwrap(), "study");
    assert_eq!(s.unit("simulation.h"), "s");
    assert_eq!(s.unit("nodes.ball.velocity"), "m/s");
}

#[test]
fn zip_pairs_values_and_needs_equal_lengths() {
    let s = Study::load(&write_study(
        "zip",
        r#"
combine = "zip"
[[parameter]]
path = "elements.floor.restitution"
values = [0.5, 0.8]
[[parameter]]
path = "nodes.ball.velocity"
values = [[0.0, 0.0, 1.0], [0.0, 0.0, 2.0]]
"#,
    ))
    .unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(
        s.describe(1),
        "elements.floor.restitution = 0.8, nodes.ball.velocity = [0.0, 0.0, 2.0]"
    );
    let e = load_err(
        "zip-bad",
        r#"
combine = "zip"
[[parameter]]
path = "elements.floor.restitution"
values = [0.5, 0.8]
[[parameter]]
path = "simulation.h"
values = [1e-3]
"#,
    );
    assert!(e.contains("`simulation.h` has 1"), "{e}");
}

#[test]
fn ranges_hit_their_ends_exactly() {
    let lin = RangeSpec {
        from: toml::Value::Float(1e-3),
        to: toml::Value::Float(4e-3),
        count: Some(3),
        step: None,
        scale: Scale::Linear,
    };
    let v: Vec<f64> = range_values(&lin)
        .unwrap()
        .iter()
        .filter_map(number)
        .collect();
    assert_eq!(v, [1e-3, 2.5e-3, 4e-3]);
    let log = RangeSpec {
        scale: Scale::Log,
        to: toml::Value::Float(1e-1),
        ..lin
    };
    let v: Vec<f64> = range_values(&log)
        .unwrap()
        .iter()
        .filter_map(number)
        .collect();
    assert_eq!(v[0], 1e-3);
    assert_eq!(v[2], 1e-1);
    // Geometric midpoint of 1e-3 and 1e-1, to round-off of one pow.
    assert!((v[1] - 1e-2).abs() < 1e-17, "{v:?}");
    let ints = RangeSpec {
        from: toml::Value::Integer(2),
        to: toml::Value::Integer(8),
        count: None,
        step: Some(toml::Value::Integer(2)),
        scale: Scale::Linear,
    };
    let v = range_values(&ints).unwrap();
    assert_eq!(
        v,
        [2, 4, 6, 8].map(toml::Value::Integer).to_vec(),
        "integer steps stay integers (element counts)"
    );
    let e = load_err(
        "range-bad",
        "[[parameter]]\npath = \"simulation.h\"\nrange = { from = 1e-3, to = 2e-3, count = 0 }\n",
    );
    assert!(
        e.contains("parameter 1 `simulation.h`") && e.contains("count"),
        "{e}"
    );
}

#[test]
fn unknown_paths_are_refused_with_the_names_that_exist() {
    let e = load_err(
        "path-name",
        "[[parameter]]\npath = \"elements.flor.restitution\"\nvalues = [0.5]\n",
    );
    assert!(
        e.contains("study.toml")
            && e.contains("no entry named `flor`")
            && e.contains("ball_body, floor"),
        "{e}"
    );
    let e = load_err(
        "path-top",
        "[[parameter]]\npath = \"element.floor.restitution\"\nvalues = [0.5]\n",
    );
    assert!(e.contains("no `element`"), "{e}");
    let e = load_err(
        "path-short",
        "[[parameter]]\npath = \"elements.floor\"\nvalues = [0.5]\n",
    );
    assert!(e.contains("name one"), "{e}");
    let e = load_err(
        "path-name-key",
        "[[parameter]]\npath = \"nodes.ball.name\"\nvalues = [\"x\"]\n",
    );
    assert!(e.contains("`name`"), "{e}");
    let e = load_err(
        "path-output",
        "[[parameter]]\npath = \"simulation.output\"\nvalues = [\"x.h5\"]\n",
    );
    assert!(e.contains("run-K.h5"), "{e}");
    let e = load_err(
        "empty",
        "[[parameter]]\npath = \"simulation.h\"\nvalues = []\n",
    );
    assert!(e.contains("no values"), "{e}");
    let e = load_err("none", "");
    assert!(e.contains("no [[parameter]]"), "{e}");
    let e = load_err(
        "reduction",
        "[[parameter]]\npath = \"simulation.h\"\nvalues = [1e-3]\n[[reduction]]\nname = \"steps\"\ndataset = \"time\"\nop = \"max\"\n",
    );
    assert!(
        e.contains("reduction `steps`") && e.contains("taken"),
        "{e}"
    );
}

#[test]
fn a_point_is_a_complete_model_file() {
    let s = Study::load(&write_study(
        "text",
        "[[parameter]]\npath = \"elements.floor.friction\"\nvalues = [0.3]\n\
         [[parameter]]\npath = \"simulation.h\"\nvalues = [2e-3]\n",
    ))
    .unwrap();
    let text = s.model_text(0).unwrap();
    // The element registry is not linked here: read the tree back (tests/sweep_local.rs runs
    // generated models).
    let m: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(m["simulation"]["h"].as_float(), Some(2e-3));
    assert_eq!(m["simulation"]["output"].as_str(), Some("run-000.h5"));
    let floor = &m["elements"].as_array().unwrap()[1];
    assert_eq!(floor["friction"].as_float(), Some(0.3));
    assert_eq!(floor["restitution"].as_float(), Some(0.8));
    assert_eq!(m["nodes"][0]["position"].as_array().unwrap().len(), 3);
}

#[test]
fn reductions_skip_missing_records() {
    let v = [f64::NAN, 1.0, -3.0, 2.0, f64::NAN];
    assert_eq!(Op::Max.apply(&v), 2.0);
    assert_eq!(Op::Min.apply(&v), -3.0);
    assert_eq!(Op::MaxAbs.apply(&v), 3.0);
    assert_eq!(Op::Mean.apply(&v), 0.0);
    assert_eq!(Op::Initial.apply(&v), 1.0);
    assert_eq!(Op::Final.apply(&v), 2.0);
    assert!(Op::Max.apply(&[]).is_nan());
}

#[test]
fn csv_fields_are_quoted_where_needed() {
    let index = index::Index {
        parameters: vec!["nodes.ball.velocity".into()],
        parameter_units: vec!["m/s".into()],
        columns: vec!["steps".into()],
        units: vec![String::new()],
        rows: vec![index::Row {
            run: 0,
            status: index::RowStatus::Failed,
            error: "bad \"h\", try again".into(),
            file: "run-000.h5".into(),
            parameters: vec![toml::Value::Array(vec![
                toml::Value::Float(0.0),
                toml::Value::Integer(1),
            ])],
            values: vec![12.0],
        }],
    };
    assert_eq!(
        index::csv(&index),
        "run,status,nodes.ball.velocity,steps,file,error\n\
         0,failed,\"[0.0, 1]\",12,run-000.h5,\"bad \"\"h\"\", try again\"\n"
    );
}
