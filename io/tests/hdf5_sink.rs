//! `Hdf5Sink`: layout, values, attributes, XDMF sidecar, misuse.

mod common;

use common::*;
use hdf5_metno as hdf5;
use saltus_core::{ContactRow, Energy, OutputLayout, ResultSink, StepRecord, StepStats};
use saltus_io::Hdf5Sink;

#[test]
fn writes_layout_and_values() {
    let path = tmp("five_steps.h5");
    let mut sink = Hdf5Sink::create(&path)
        .unwrap()
        .with_model_text("[[nodes]]\nname = \"ground\"\n");
    sink.begin(&layout()).unwrap();
    record_steps(&mut sink, 0..5);
    assert_eq!(sink.records(), 5);
    sink.finish().unwrap();
    sink.finish().unwrap(); // idempotent
    check_file(&path, 5);

    let file = hdf5::File::open(&path).unwrap();
    assert_eq!(str_attr(&file, "model"), "[[nodes]]\nname = \"ground\"\n");
    // chunked, extendible along the first axis only
    let pos = file.dataset("nodes/position").unwrap();
    let ext = pos.space().unwrap().extents().unwrap();
    let maxdims: Vec<Option<usize>> = ext.iter().map(|e| e.max).collect();
    assert_eq!(maxdims, vec![None, Some(2), Some(3)]);

    // XDMF sidecar: one grid per record, pointing into the .h5 by file name
    let xdmf = std::fs::read_to_string(path.with_extension("xdmf")).unwrap();
    assert_eq!(xdmf.matches("<Time Value=").count(), 5);
    assert!(xdmf.contains("five_steps.h5:/nodes/position"));
    assert!(xdmf.contains("TopologyType=\"Polyvertex\""));
    assert!(xdmf.contains("Dimensions=\"5 2 3\""));
    assert!(xdmf.starts_with("<?xml"));
    assert!(xdmf.trim_end().ends_with("</Xdmf>"));

    // recording after finish is an error
    let n = nodes(0);
    let v = values(0);
    let e = sink
        .record(&StepRecord {
            step: 0,
            t: 0.0,
            nodes: &n,
            element_values: &v,
            stats: StepStats::default(),
            energy: Energy::default(),
            contacts: &[],
        })
        .unwrap_err();
    assert!(e.to_string().contains("five_steps.h5"), "{e}");
}

#[test]
fn readable_without_finish() {
    let path = tmp("no_finish.h5");
    {
        let mut sink = Hdf5Sink::create(&path).unwrap().with_flush_every(2);
        sink.begin(&layout()).unwrap();
        record_steps(&mut sink, 0..3);
        // dropped without finish
    }
    check_file(&path, 3);
    // The sidecars are written from the initial state on (then once per flush interval)...
    assert!(path.with_extension("xdmf").exists());
    // ...and can be brought up to date afterwards
    let xdmf = saltus_io::write_xdmf(&path).unwrap().unwrap();
    let text = std::fs::read_to_string(xdmf).unwrap();
    assert_eq!(text.matches("<Time Value=").count(), 3);
}

#[test]
fn rejects_misuse() {
    let path = tmp("misuse.h5");
    let mut sink = Hdf5Sink::create(&path).unwrap();
    let n = nodes(0);
    let v = values(0);
    let rec = StepRecord {
        step: 0,
        t: 0.0,
        nodes: &n,
        element_values: &v,
        stats: StepStats::default(),
        energy: Energy::default(),
        contacts: &[],
    };
    let e = sink.record(&rec).unwrap_err().to_string();
    assert!(e.contains("misuse.h5") && e.contains("before begin"), "{e}");
    sink.begin(&layout()).unwrap();
    assert!(sink.begin(&layout()).is_err());
    let e = sink
        .record(&StepRecord {
            nodes: &n[..1],
            ..rec
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 node states, layout has 2 nodes"), "{e}");
    let e = sink
        .record(&StepRecord {
            element_values: &v[..2],
            ..rec
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 element values, layout has 4"), "{e}");
    sink.finish().unwrap();

    let e = Hdf5Sink::create(tmp("missing_dir").join("x.h5")).unwrap_err();
    assert!(e.to_string().contains("missing_dir"), "{e}");
}

#[test]
fn empty_layout() {
    let path = tmp("empty.h5");
    let mut sink = Hdf5Sink::create(&path).unwrap();
    sink.begin(&OutputLayout::new(vec![], vec![], vec![], vec![]))
        .unwrap();
    for k in 0..2 {
        sink.record(&StepRecord {
            step: k,
            t: k as f64,
            nodes: &[],
            element_values: &[],
            stats: StepStats::default(),
            energy: Energy::default(),
            contacts: &[],
        })
        .unwrap();
    }
    sink.finish().unwrap();
    let file = hdf5::File::open(&path).unwrap();
    assert_eq!(file.dataset("time").unwrap().shape(), vec![2]);
    assert_eq!(
        file.dataset("nodes/position").unwrap().shape(),
        vec![2, 0, 3]
    );
    assert!(!path.with_extension("xdmf").exists());
}

/// The per-step contact table: rows of records with 2, 0 and 1 contacts land in order, with
/// their record's step and time, and `count` gives the row offsets of each record.
#[test]
fn contact_table_rows_per_record() {
    let path = tmp("contacts.h5");
    let mut sink = Hdf5Sink::create(&path).unwrap();
    sink.begin(&layout()).unwrap();
    let row = |id: u64, gap: f64| ContactRow {
        contact: id,
        body_a: 1,
        body_b: if id == 7 { -1 } else { 0 },
        point: [gap, 2.0 * gap, 3.0 * gap],
        normal: [0.0, 0.0, 1.0],
        gap,
        position_impulse: [gap, -gap, 0.5],
        impulse: [4.0 * gap, 0.0, -1.0],
        normal_velocity: [-2.0 * gap, gap],
        restitution: 0.5,
        radius: 2.0 * gap,
        race: [gap, -gap, f64::NAN],
        force_model: None,
        status: [1, 2, 0, id as u8],
    };
    let tables = [vec![row(7, 0.1), row(9, 0.2)], vec![], vec![row(9, 0.3)]];
    for (k, rows) in tables.iter().enumerate() {
        let (n, v) = (nodes(k), values(k));
        sink.record(&StepRecord {
            step: 10 * k,
            t: 0.5 * k as f64,
            nodes: &n,
            element_values: &v,
            stats: StepStats::default(),
            energy: Energy::default(),
            contacts: rows,
        })
        .unwrap();
    }
    sink.finish().unwrap();
    let file = hdf5::File::open(&path).unwrap();
    let u64s = |d: &str| -> Vec<u64> { file.dataset(d).unwrap().read_raw().unwrap() };
    let f64s = |d: &str| -> Vec<f64> { file.dataset(d).unwrap().read_raw().unwrap() };
    assert_eq!(u64s("contacts/count"), vec![2, 0, 1]);
    assert_eq!(u64s("contacts/step"), vec![0, 0, 20]);
    assert_eq!(f64s("contacts/time"), vec![0.0, 0.0, 1.0]);
    assert_eq!(u64s("contacts/contact"), vec![7, 9, 9]);
    let body_b: Vec<i64> = file.dataset("contacts/body_b").unwrap().read_raw().unwrap();
    assert_eq!(body_b, vec![-1, 0, 0]);
    assert_eq!(f64s("contacts/gap"), vec![0.1, 0.2, 0.3]);
    let point = file.dataset("contacts/point").unwrap();
    assert_eq!(point.shape(), vec![3, 3]);
    let p: Vec<f64> = point.read_raw().unwrap();
    assert_eq!(&p[6..9], &[0.3, 2.0 * 0.3, 3.0 * 0.3]);
    let imp = f64s("contacts/impulse");
    assert_eq!(&imp[..3], &[0.4, 0.0, -1.0]);
    assert_eq!(
        f64s("contacts/normal_velocity"),
        vec![-0.2, 0.1, -0.4, 0.2, -0.6, 0.3]
    );
    assert_eq!(f64s("contacts/restitution"), vec![0.5; 3]);
    assert_eq!(f64s("contacts/radius"), vec![0.2, 0.4, 0.6]);
    let race = f64s("contacts/race");
    assert_eq!(&race[6..8], &[0.3, -0.3]);
    assert!(race[8].is_nan());
    let status = file.dataset("contacts/status").unwrap();
    assert_eq!(status.shape(), vec![3, 4]);
    let st: Vec<u8> = status.read_raw().unwrap();
    assert_eq!(&st[8..], &[1, 2, 0, 9]);
    assert_eq!(
        str_attr(&file.dataset("contacts/impulse").unwrap(), "unit"),
        "N*s"
    );
}

/// Run-level solver results become scalar attributes of `/solver` of their own type; a name
/// given again replaces its value; before `begin` they are refused.
#[test]
fn solver_attributes_are_written_and_replaced() {
    use saltus_core::AttributeValue::{Bool, Float, Int, Text};
    let path = tmp("solver_attributes.h5");
    let mut sink = Hdf5Sink::create(&path).unwrap().with_xdmf(false);
    assert!(sink.solver_attributes(&[("early", Int(1))]).is_err());
    sink.begin(&layout()).unwrap();
    record_steps(&mut sink, 0..2);
    sink.solver_attributes(&[
        ("flag", Bool(true)),
        ("count", Int(3)),
        ("value", Float(0.25)),
        ("missing", Float(f64::NAN)),
        ("message", Text("first".into())),
    ])
    .unwrap();
    sink.solver_attributes(&[("message", Text("second".into())), ("flag", Bool(false))])
        .unwrap();
    sink.finish().unwrap();

    let file = hdf5::File::open(&path).unwrap();
    let solver = file.group("solver").unwrap();
    let flag: bool = solver.attr("flag").unwrap().read_scalar().unwrap();
    assert!(!flag, "replaced");
    let count: i64 = solver.attr("count").unwrap().read_scalar().unwrap();
    assert_eq!(count, 3);
    let value: f64 = solver.attr("value").unwrap().read_scalar().unwrap();
    assert_eq!(value, 0.25);
    let missing: f64 = solver.attr("missing").unwrap().read_scalar().unwrap();
    assert!(missing.is_nan());
    assert_eq!(str_attr(&solver, "message"), "second");
    let mut names = solver.attr_names().unwrap();
    names.sort();
    assert_eq!(names, ["count", "flag", "message", "missing", "value"]);
}

/// 2 500 records (with 0–2 contact rows each) written in blocks: with the default settings
/// and with each write trigger on its own, every dataset ends with exactly the recorded rows.
/// The initial record is written at once; between writes, records stay buffered.
#[test]
fn blocks_keep_every_record() {
    use std::time::Duration;
    const N: usize = 2500;
    const HOUR: Duration = Duration::from_secs(3600);
    type Configure = fn(Hdf5Sink) -> Hdf5Sink;
    let configs: [(&str, Configure); 4] = [
        ("default", |s| s),
        // 4 KiB: about 10 records of this layout (416 bytes each, plus contact rows)
        ("budget", |s| {
            s.with_buffer_bytes(4096).with_flush_interval(HOUR)
        }),
        ("every7", |s| {
            s.with_flush_every(7).with_flush_interval(HOUR)
        }),
        ("interval0", |s| s.with_flush_interval(Duration::ZERO)),
    ];
    for (name, configure) in configs {
        let path = tmp(&format!("blocks_{name}.h5"));
        let mut sink = configure(Hdf5Sink::create(&path).unwrap());
        sink.begin(&layout()).unwrap();
        let (mut writes, mut max_buffered) = (0, 0);
        for k in 0..N {
            record_k(&mut sink, k);
            let (c, b) = (k + 1, sink.buffered_records());
            assert_eq!(sink.records(), c);
            if k == 0 {
                assert_eq!(b, 0, "{name}: the initial record is written at once");
            }
            match name {
                "every7" => assert_eq!(b == 0, c == 1 || c % 7 == 0, "{name}: record {k}"),
                "interval0" => assert_eq!(b, 0, "{name}: record {k}"),
                _ => {}
            }
            writes += usize::from(b == 0);
            max_buffered = max_buffered.max(b);
        }
        match name {
            "budget" => {
                assert!((1..=10).contains(&max_buffered), "{name}: {max_buffered}");
                assert!(writes > N / 10, "{name}: {writes} writes");
            }
            "every7" => assert_eq!(writes, 1 + N / 7),
            _ => {}
        }
        sink.finish().unwrap();
        assert_eq!(sink.buffered_records(), 0);
        check_file(&path, N);
        let xdmf = std::fs::read_to_string(path.with_extension("xdmf")).unwrap();
        // At most MAX_FRAMES frames: every k-th record and the last.
        let k = N.div_ceil(saltus_io::xdmf::MAX_FRAMES);
        let frames = N.div_ceil(k) + usize::from(!(N - 1).is_multiple_of(k));
        assert_eq!(xdmf.matches("<Time Value=").count(), frames, "{name}");
    }
}

/// `flush` writes the buffered records; solver attributes do not disturb the buffer; a sink
/// dropped unfinished (e.g. after a run error) writes its buffered records.
#[test]
fn flush_and_drop_write_the_buffer() {
    use std::time::Duration;
    let path = tmp("flush_drop.h5");
    {
        let mut sink = Hdf5Sink::create(&path)
            .unwrap()
            .with_flush_interval(Duration::from_secs(3600));
        sink.begin(&layout()).unwrap();
        record_steps(&mut sink, 0..5);
        assert_eq!(sink.buffered_records(), 4);
        sink.flush().unwrap();
        assert_eq!(sink.buffered_records(), 0);
        record_steps(&mut sink, 5..9);
        sink.solver_attributes(&[("count", saltus_core::AttributeValue::Int(9))])
            .unwrap();
        assert_eq!(sink.buffered_records(), 4);
        // dropped without finish
    }
    check_file(&path, 9);
    let file = hdf5::File::open(&path).unwrap();
    let count: i64 = file
        .group("solver")
        .unwrap()
        .attr("count")
        .unwrap()
        .read_scalar()
        .unwrap();
    assert_eq!(count, 9);
}
