//! A run that fails in the middle (here: an element that rejects its state after a given
//! time) reports the step, time, subproblem and element, and the HDF5 file keeps every step
//! completed before the failure.

mod common;

use common::Fault;
use saltus::elements::body::PointMass;
use saltus::io::Hdf5Sink;
use saltus::prelude::*;

#[test]
fn mid_run_failure_keeps_completed_steps() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuse.h5");
    let mut model = Model::new();
    let n = model
        .add_node(NodeDef::point("p", Vector3::zeros()))
        .unwrap();
    model
        .add_element("mass", PointMass::new(n, 1.0).unwrap())
        .unwrap();
    model
        .add_element(
            "fuse",
            // Fails at the smooth level once t > 0.0505 s.
            Fault {
                node: [n],
                t_fail: 0.0505,
                nan: false,
            },
        )
        .unwrap();
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 1.0,
        ..Default::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = Hdf5Sink::create(&path).unwrap();
    let err = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("step 51") && msg.contains("smooth") && msg.contains("`fuse`"),
        "{msg}"
    );
    drop(sink);
    let f = hdf5_metno::File::open(&path).unwrap();
    let t = f.dataset("time").unwrap().read_raw::<f64>().unwrap();
    // Initial state + steps 1..=50.
    assert_eq!(t.len(), 51);
    assert!((t[50] - 0.05).abs() < 1e-12);
    let z = f
        .dataset("nodes/position")
        .unwrap()
        .read_raw::<f64>()
        .unwrap();
    // Free fall: z(0.05) = −g t²/2 exactly for the constant-acceleration motion (the
    // generalized-α scheme integrates constant accelerations exactly); round-off only.
    assert!((z[50 * 3 + 2] + 0.5 * 9.81 * 0.05 * 0.05).abs() < 1e-12);
}
