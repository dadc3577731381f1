//! `threads_bit_identical`: element evaluation on 1 and 2 threads gives byte-identical HDF5
//! datasets, on the beam-cantilever and ball benchmark models and on a settling pile whose
//! contacts are found at run time and solved by the contact-space Gauss–Seidel first; and a
//! failing assembly names the same element on both.
//!
//! A block of elements is evaluated in parallel into their own local buffers and scattered in
//! element order, block after block, so the assembled systems — and everything downstream —
//! do not depend on the thread count. The models are large enough (≥ 32 elements) for the
//! parallel assembly to engage, and the two-thread runs assemble in parallel every time
//! (`ParallelAssembly::Always`); the default, `Adaptive`, picks between the two paths by their
//! time, which this makes safe, and a third run checks it too. A chain of 600 links and the
//! failing model have more elements than a block holds (512), so block boundaries are crossed
//! (the chain's node states compared to the bit, without output files).

mod bench_models;
mod common;
#[path = "../benches/scenes/granular_column.rs"]
mod scene;

use bench_models::{balls, cantilever, chain};
use common::{datasets, Fault};
use saltus::elements::body::PointMass;
use saltus::io::Hdf5Sink;
use saltus::prelude::*;
use std::path::Path;

/// Run `model` on `threads` threads with the stages' `policy` (one thread: `None`, the
/// sequential assembly).
fn run(
    mut model: Model,
    mut opts: NsgaOptions,
    threads: usize,
    policy: Option<ParallelAssembly>,
    path: &Path,
) -> RunSummary {
    opts.threads = threads;
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    assert_eq!(solver.threads(), threads);
    if let Some(policy) = policy {
        solver.set_parallel_assembly(policy);
    }
    // The parallel assembly engages from this many elements.
    assert!(model.elements().len() >= saltus::solvers::stage::PARALLEL_MIN_ELEMENTS);
    let mut sink = Hdf5Sink::create(path).unwrap();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap()
}

fn compare(name: &str, model: impl Fn() -> Model, opts: NsgaOptions) {
    let dir = std::env::temp_dir().join(format!("saltus-threads-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p1, p2, p3) = (dir.join("t1.h5"), dir.join("t2.h5"), dir.join("t2a.h5"));
    let s1 = run(model(), opts.clone(), 1, None, &p1);
    // Every assembly in parallel; and the default, which measures both paths and mixes them.
    let s2 = run(
        model(),
        opts.clone(),
        2,
        Some(ParallelAssembly::Always),
        &p2,
    );
    let s3 = run(model(), opts, 2, Some(ParallelAssembly::Adaptive), &p3);
    // Every line-search backtrack judges the shortened step from one residual-only assembly.
    for s in [&s1, &s2, &s3] {
        for stage in &s.stages {
            assert_eq!(
                stage.residual_assemblies, stage.backtracks,
                "{name} {}",
                stage.name
            );
        }
    }
    let (d1, d2) = (datasets(&p1), datasets(&p2));
    eprintln!(
        "{name}: {} datasets, {} bytes; iterations {:?} / {:?}, backtracks {:?}",
        d1.len(),
        d1.iter().map(|(_, b)| b.len()).sum::<usize>(),
        s1.iterations(),
        s2.iterations(),
        s1.backtracks()
    );
    assert!(d1.len() > 10, "{name}: too few datasets");
    assert_eq!(
        d1.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        d2.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((n, a), (_, b)) in d1.iter().zip(&d2) {
        assert!(
            a == b,
            "{name}: dataset {n} differs between 1 and 2 threads"
        );
    }
    assert!(
        d1 == datasets(&p3),
        "{name}: the adaptive assembly's datasets differ from one thread's"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn threads_bit_identical() {
    saltus::link();
    let beam = NsgaOptions {
        h: 1e-4,
        t_end: 20e-4,
        gravity: Vector3::zeros(),
        ..Default::default()
    };
    compare("beam", || cantilever(64), beam);
    let balls_opts = NsgaOptions {
        h: 1e-3,
        // Drops from 5–25 cm: impacts from t ≈ 0.1 s.
        t_end: 0.3,
        ..Default::default()
    };
    compare("balls", || balls(40), balls_opts);
    // 64 spheres landing in a box (contacts created and removed every step, most of them open
    // with zero multipliers: the inert elements both assemblies skip), tolerance of the peers.
    let pile = NsgaOptions {
        h: 1e-3,
        t_end: 0.3,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        contact_solver: ContactSolver::GaussSeidel,
        tol: 1e-4,
        ..Default::default()
    };
    compare("pile", || scene::column(64).0, pile);
}

/// A rigid chain of 600 links (1 200 elements: three blocks) on one thread and on two (every
/// assembly parallel, and adaptive): the same node states to the bit after 30 steps.
#[test]
fn blocks_of_a_large_model_are_bit_identical() {
    saltus::link();
    let states = |threads: usize, policy: Option<ParallelAssembly>| {
        let mut model = chain(600, 0.1);
        let opts = NsgaOptions {
            h: 1e-3,
            t_end: 0.03,
            threads,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            ..Default::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        if let Some(policy) = policy {
            solver.set_parallel_assembly(policy);
        }
        let summary = solver
            .run(&mut model, &mut MemorySink::default(), &mut |_| {})
            .unwrap();
        (solver.nodes().to_vec(), summary.iterations())
    };
    let one = states(1, None);
    assert!(one.1.iter().sum::<usize>() > 0, "the chain moved");
    for policy in [ParallelAssembly::Always, ParallelAssembly::Adaptive] {
        let two = states(2, Some(policy));
        assert_eq!(one.1, two.1, "{policy:?}: iterations");
        assert!(
            one.0
                .iter()
                .zip(&two.0)
                .all(|(a, b)| format!("{a:?}") == format!("{b:?}")),
            "{policy:?}: node states differ"
        );
    }
}

/// 300 point masses, each with a `Fault` (elements `mass{i}`, `fault{i}` alternately: 600
/// elements, two blocks of the parallel assembly); `nan` and `error` name the faults that turn
/// NaN and fail at t = 2.5 ms. The error message of a run on `threads` threads.
fn failing_run(threads: usize, nan: usize, error: usize) -> String {
    let mut model = Model::new();
    for i in 0..300 {
        let node = model
            .add_node(NodeDef::point(
                format!("p{i}"),
                Vector3::new(i as f64, 0.0, 0.0),
            ))
            .unwrap();
        model
            .add_element(format!("mass{i}"), PointMass::new(node, 1.0).unwrap())
            .unwrap();
        let t_fail = if i == nan || i == error {
            2.5e-3
        } else {
            f64::INFINITY
        };
        let fault = Fault {
            node: [node],
            t_fail,
            nan: i == nan,
        };
        model.add_element(format!("fault{i}"), fault).unwrap();
    }
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 0.01,
        threads,
        ..Default::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    solver.set_parallel_assembly(ParallelAssembly::Always);
    let mut sink = MemorySink::default();
    solver
        .run(&mut model, &mut sink, &mut |_| {})
        .unwrap_err()
        .to_string()
}

/// The parallel assembly fails where the sequential one does: at the first failing element in
/// element order, whether it failed to evaluate or turned non-finite, in one block or across
/// two (faults 0–255 are in the first block of 512 elements, 256–299 in the second).
#[test]
fn a_failing_assembly_names_the_same_element() {
    saltus::link();
    for (nan, error, first, non_finite) in [
        (100, 280, "fault100", true),
        (290, 270, "fault270", false),
        (270, 290, "fault270", true),
    ] {
        let one = failing_run(1, nan, error);
        let two = failing_run(2, nan, error);
        assert_eq!(one, two, "NaN at fault{nan}, error at fault{error}");
        assert!(one.contains(&format!("`{first}`")), "{one}");
        assert_eq!(one.contains("blown"), !non_finite, "{one}");
    }
}
