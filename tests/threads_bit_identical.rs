//! `threads_bit_identical`: element evaluation on 1 and 2 threads gives byte-identical HDF5
//! datasets, on the beam-cantilever and ball benchmark models and on a settling pile whose
//! contacts are found at run time and solved by the contact-space Gauss–Seidel first.
//!
//! Elements are evaluated in parallel into their own local buffers and scattered in element
//! order, so the assembled systems — and everything downstream — do not depend on the thread
//! count. The models are large enough (≥ 32 elements) for the parallel assembly to engage, and
//! the two-thread runs assemble in parallel every time (`ParallelAssembly::Always`); the
//! default, `Adaptive`, picks between the two paths by their time, which this makes safe.

mod bench_models;
mod common;
#[path = "../benches/scenes/granular_column.rs"]
mod scene;

use bench_models::{balls, cantilever};
use common::datasets;
use saltus::io::Hdf5Sink;
use saltus::prelude::*;
use std::path::Path;

fn run(
    mut model: Model,
    mut opts: NsgaOptions,
    threads: usize,
    policy: ParallelAssembly,
    path: &Path,
) -> RunSummary {
    opts.threads = threads;
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    assert_eq!(solver.threads(), threads);
    solver.set_parallel_assembly(policy);
    // The parallel assembly engages from this many elements.
    assert!(model.elements().len() >= saltus::solvers::stage::PARALLEL_MIN_ELEMENTS);
    let mut sink = Hdf5Sink::create(path).unwrap();
    solver.run(&mut model, &mut sink, &mut |_| {}).unwrap()
}

fn compare(name: &str, model: impl Fn() -> Model, opts: NsgaOptions) {
    let dir = std::env::temp_dir().join(format!("saltus-threads-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p1, p2, p3) = (dir.join("t1.h5"), dir.join("t2.h5"), dir.join("t2a.h5"));
    let s1 = run(model(), opts.clone(), 1, ParallelAssembly::Always, &p1);
    // Every assembly in parallel; and the default, which measures both paths and mixes them.
    let s2 = run(model(), opts.clone(), 2, ParallelAssembly::Always, &p2);
    run(model(), opts, 2, ParallelAssembly::Adaptive, &p3);
    // Every line-search backtrack judges the shortened step from one residual-only assembly.
    for s in [&s1, &s2] {
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
