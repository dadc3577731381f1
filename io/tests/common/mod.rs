//! Helpers shared by the HDF5 sink tests: a two-node layout with deterministic records
//! (including 0, 1 or 2 contact rows) and an exact check of the written file.
#![allow(dead_code)]

use hdf5::types::VarLenUnicode;
use hdf5_metno as hdf5;
use nalgebra::{UnitQuaternion, Vector3};
use saltus_core::{
    ContactRow, Energy, NodeState, OutputLayout, OutputSpec, ResultSink, StepRecord, StepStats,
};
use saltus_io::Hdf5Sink;
use std::path::PathBuf;

pub fn tmp(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("saltus_io_hdf5");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::remove_file(p.with_extension("xdmf"));
    p
}

/// Two nodes, one element `spring/1` (type `test_spring`) with channels `force` (3) and
/// `elongation` (1).
pub fn layout() -> OutputLayout {
    let mut layout = OutputLayout::new(
        vec!["ground".into(), "crank".into()],
        vec!["spring/1".into()],
        vec!["test_spring".into()],
        vec![vec![
            OutputSpec {
                name: "force",
                len: 3,
                unit: "N",
                description: "spring force on node 2",
            },
            OutputSpec {
                name: "elongation",
                len: 1,
                unit: "m",
                description: "length minus rest length",
            },
        ]],
    );
    layout.stage_names = vec!["smooth".into(), "position".into(), "velocity".into()];
    layout
}

/// Deterministic node states of record `k`.
pub fn nodes(k: usize) -> Vec<NodeState> {
    let f = k as f64;
    (0..2)
        .map(|i| {
            let g = i as f64;
            let r = UnitQuaternion::from_scaled_axis(Vector3::new(0.1 * f, 0.2 * g, 0.3));
            NodeState {
                x: Vector3::new(f, g, f * g + 0.5),
                r,
                v: Vector3::new(0.25 * f, -g, 1.0),
                omega: Vector3::new(0.5 * g, f, -0.125),
                ..NodeState::default()
            }
        })
        .collect()
}

pub fn values(k: usize) -> Vec<f64> {
    let f = k as f64;
    vec![f, 2.0 * f, -f, 0.001 * f]
}

pub fn stats(k: usize) -> StepStats {
    let mut s = StepStats::new(3);
    let iterations = [k, 2 * k, 3 * k];
    let residual = [1e-9 * k as f64, 2e-9, 3e-9];
    let backtracks = [0, k % 3, 1];
    for (i, st) in s.stages_mut().iter_mut().enumerate() {
        st.iterations = iterations[i];
        st.residual = residual[i];
        st.backtracks = backtracks[i];
        st.solves = [1, 1, 1 + k % 4][i];
    }
    s.h = 1e-3 / (1 + k % 2) as f64;
    s.active_contacts = k % 5;
    s
}

pub fn energy(k: usize) -> Energy {
    Energy {
        kinetic: 0.5 * k as f64,
        potential: -(k as f64),
    }
}

/// Contact rows of record `k`: `k % 3` rows.
pub fn contacts(k: usize) -> Vec<ContactRow> {
    (0..k % 3)
        .map(|j| {
            let f = k as f64 + 0.5 * j as f64;
            ContactRow {
                contact: (100 * j + k) as u64,
                body_a: j as i64,
                body_b: -(j as i64),
                point: [f, -f, 2.0 * f],
                normal: [0.0, j as f64, 1.0],
                gap: -1e-3 * f,
                position_impulse: [f, 0.5, -0.25 * f],
                impulse: [3.0 * f, -f, 0.125],
                normal_velocity: [-f, 0.5 * f],
                restitution: 0.25 * j as f64,
                radius: 0.01 * f,
                race: [f64::NAN; 3],
                force_model: None,
                status: [j as u8, 1, 2, (k % 251) as u8],
            }
        })
        .collect()
}

/// Record `k` of the test sequence.
pub fn record_k(sink: &mut Hdf5Sink, k: usize) {
    let n = nodes(k);
    let v = values(k);
    let c = contacts(k);
    sink.record(&StepRecord {
        step: 10 * k,
        t: 0.01 * k as f64,
        nodes: &n,
        element_values: &v,
        stats: stats(k),
        energy: energy(k),
        contacts: &c,
    })
    .unwrap();
}

pub fn record_steps(sink: &mut Hdf5Sink, range: std::ops::Range<usize>) {
    for k in range {
        record_k(sink, k);
    }
}

pub fn str_attr(loc: &hdf5::Location, name: &str) -> String {
    loc.attr(name)
        .unwrap()
        .read_scalar::<VarLenUnicode>()
        .unwrap()
        .as_str()
        .to_string()
}

/// Check the contact table of the first `n` records exactly.
pub fn check_contacts(file: &hdf5::File, n: usize) {
    let rows: Vec<(usize, ContactRow)> = (0..n)
        .flat_map(|k| contacts(k).into_iter().map(move |r| (k, r)))
        .collect();
    let m = rows.len();
    let read_u64 = |d: &str| -> Vec<u64> { file.dataset(d).unwrap().read_raw().unwrap() };
    let read_i64 = |d: &str| -> Vec<i64> { file.dataset(d).unwrap().read_raw().unwrap() };
    let read_f64 = |d: &str| -> Vec<f64> { file.dataset(d).unwrap().read_raw().unwrap() };
    let count = read_u64("contacts/count");
    assert_eq!(count, (0..n).map(|k| (k % 3) as u64).collect::<Vec<_>>());
    assert_eq!(file.dataset("contacts/point").unwrap().shape(), vec![m, 3]);
    assert_eq!(file.dataset("contacts/status").unwrap().shape(), vec![m, 4]);
    let col = |f: fn(&(usize, ContactRow)) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
    let vec3 =
        |f: fn(&ContactRow) -> [f64; 3]| rows.iter().flat_map(|(_, r)| f(r)).collect::<Vec<f64>>();
    assert_eq!(
        read_u64("contacts/step"),
        rows.iter().map(|(k, _)| 10 * *k as u64).collect::<Vec<_>>()
    );
    assert_eq!(read_f64("contacts/time"), col(|(k, _)| 0.01 * *k as f64));
    assert_eq!(
        read_u64("contacts/contact"),
        rows.iter().map(|(_, r)| r.contact).collect::<Vec<_>>()
    );
    assert_eq!(
        read_i64("contacts/body_a"),
        rows.iter().map(|(_, r)| r.body_a).collect::<Vec<_>>()
    );
    assert_eq!(
        read_i64("contacts/body_b"),
        rows.iter().map(|(_, r)| r.body_b).collect::<Vec<_>>()
    );
    assert_eq!(read_f64("contacts/point"), vec3(|r| r.point));
    assert_eq!(read_f64("contacts/normal"), vec3(|r| r.normal));
    assert_eq!(read_f64("contacts/gap"), col(|(_, r)| r.gap));
    assert_eq!(
        read_f64("contacts/position_impulse"),
        vec3(|r| r.position_impulse)
    );
    assert_eq!(read_f64("contacts/impulse"), vec3(|r| r.impulse));
    assert_eq!(
        read_f64("contacts/normal_velocity"),
        rows.iter()
            .flat_map(|(_, r)| r.normal_velocity)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        read_f64("contacts/restitution"),
        col(|(_, r)| r.restitution)
    );
    assert_eq!(read_f64("contacts/radius"), col(|(_, r)| r.radius));
    let race = read_f64("contacts/race");
    assert_eq!(race.len(), 3 * m);
    assert!(race.iter().all(|x| x.is_nan()));
    let status: Vec<u8> = file.dataset("contacts/status").unwrap().read_raw().unwrap();
    assert_eq!(
        status,
        rows.iter().flat_map(|(_, r)| r.status).collect::<Vec<_>>()
    );
}

/// Check the first `n` records of the file exactly (every per-step dataset, the contact
/// table included).
pub fn check_file(path: &std::path::Path, n: usize) {
    let file = hdf5::File::open(path).unwrap();
    let time = file.dataset("time").unwrap();
    assert_eq!(time.shape(), vec![n]);
    let t: Vec<f64> = time.read_raw().unwrap();
    assert_eq!(t, (0..n).map(|k| 0.01 * k as f64).collect::<Vec<_>>());
    let step: Vec<u64> = file.dataset("step").unwrap().read_raw().unwrap();
    assert_eq!(step, (0..n).map(|k| 10 * k as u64).collect::<Vec<_>>());

    let names: Vec<VarLenUnicode> = file.dataset("nodes/names").unwrap().read_raw().unwrap();
    let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    assert_eq!(names, ["ground", "crank"]);

    let pos = file.dataset("nodes/position").unwrap();
    let rot = file.dataset("nodes/rotation").unwrap();
    let vel = file.dataset("nodes/velocity").unwrap();
    let ang = file.dataset("nodes/angular_velocity").unwrap();
    assert_eq!(pos.shape(), vec![n, 2, 3]);
    assert_eq!(rot.shape(), vec![n, 2, 4]);
    assert_eq!(vel.shape(), vec![n, 2, 3]);
    assert_eq!(ang.shape(), vec![n, 2, 3]);
    assert!(pos.is_resizable() && pos.is_chunked());
    let pos: Vec<f64> = pos.read_raw().unwrap();
    let rot: Vec<f64> = rot.read_raw().unwrap();
    let vel: Vec<f64> = vel.read_raw().unwrap();
    let ang: Vec<f64> = ang.read_raw().unwrap();
    for k in 0..n {
        for (i, s) in nodes(k).iter().enumerate() {
            let p = &pos[(k * 2 + i) * 3..][..3];
            assert_eq!(p, s.x.as_slice());
            let q = &rot[(k * 2 + i) * 4..][..4];
            assert_eq!(q, [s.r.w, s.r.i, s.r.j, s.r.k]);
            let v = &vel[(k * 2 + i) * 3..][..3];
            assert_eq!(v, s.v.as_slice());
            let w = &ang[(k * 2 + i) * 3..][..3];
            assert_eq!(w, s.omega_spatial().as_slice());
        }
    }
    assert_eq!(
        str_attr(&file.dataset("nodes/angular_velocity").unwrap(), "unit"),
        "rad/s"
    );

    let g = file.group("elements/spring_1").unwrap();
    assert_eq!(str_attr(&g, "type"), "test_spring");
    assert_eq!(str_attr(&g, "name"), "spring/1");
    let force = g.dataset("force").unwrap();
    let elong = g.dataset("elongation").unwrap();
    assert_eq!(force.shape(), vec![n, 3]);
    assert_eq!(elong.shape(), vec![n, 1]);
    assert_eq!(str_attr(&force, "unit"), "N");
    assert_eq!(str_attr(&force, "description"), "spring force on node 2");
    assert_eq!(str_attr(&elong, "unit"), "m");
    let force: Vec<f64> = force.read_raw().unwrap();
    let elong: Vec<f64> = elong.read_raw().unwrap();
    for k in 0..n {
        assert_eq!(&force[3 * k..3 * k + 3], &values(k)[..3]);
        assert_eq!(elong[k], values(k)[3]);
    }

    let it = file.dataset("solver/iterations").unwrap();
    assert_eq!(it.shape(), vec![n, 3]);
    let it: Vec<u64> = it.read_raw().unwrap();
    let bt: Vec<u64> = file
        .dataset("solver/line_search")
        .unwrap()
        .read_raw()
        .unwrap();
    let res: Vec<f64> = file.dataset("solver/residual").unwrap().read_raw().unwrap();
    let h: Vec<f64> = file.dataset("solver/h").unwrap().read_raw().unwrap();
    let kin: Vec<f64> = file.dataset("energy/kinetic").unwrap().read_raw().unwrap();
    let pot: Vec<f64> = file
        .dataset("energy/potential")
        .unwrap()
        .read_raw()
        .unwrap();
    let tot: Vec<f64> = file.dataset("energy/total").unwrap().read_raw().unwrap();
    let solves: Vec<u64> = file.dataset("solver/solves").unwrap().read_raw().unwrap();
    let active: Vec<u64> = file
        .dataset("solver/active_contacts")
        .unwrap()
        .read_raw()
        .unwrap();
    assert_eq!((solves.len(), active.len()), (3 * n, n));
    assert_eq!(h.len(), n);
    assert_eq!((bt.len(), res.len()), (3 * n, 3 * n));
    assert_eq!((kin.len(), pot.len(), tot.len()), (n, n, n));
    for k in 0..n {
        let s = stats(k);
        // NSGA: one column per stage (smooth, position, velocity); zeros for the initial record.
        let col = |i: usize| s.stages().get(i).copied().unwrap_or_default();
        let its: Vec<u64> = (0..3).map(|i| col(i).iterations as u64).collect();
        let ress: Vec<f64> = (0..3).map(|i| col(i).residual).collect();
        let bts: Vec<u64> = (0..3).map(|i| col(i).backtracks as u64).collect();
        assert_eq!(&it[3 * k..3 * k + 3], &its[..]);
        assert_eq!(&res[3 * k..3 * k + 3], &ress[..]);
        assert_eq!(&bt[3 * k..3 * k + 3], &bts[..]);
        let sol: Vec<u64> = (0..3).map(|i| col(i).solves as u64).collect();
        assert_eq!(&solves[3 * k..3 * k + 3], &sol[..]);
        assert_eq!(active[k], s.active_contacts as u64);
        assert_eq!(h[k], s.h);
        let e = energy(k);
        assert_eq!(
            (kin[k], pot[k], tot[k]),
            (e.kinetic, e.potential, e.kinetic + e.potential)
        );
    }

    check_contacts(&file, n);

    assert_eq!(str_attr(&file, "program"), "saltus");
    assert_eq!(str_attr(&file, "version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(str_attr(&file, "units"), "SI (m, kg, s, rad, N)");
    assert!(str_attr(&file, "created_by").starts_with("saltus-io "));
}
