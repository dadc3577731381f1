//! `newton_no_alloc`: whole NSGA steps — predictor, assembly of every stage, LU
//! refactorization, solves, line search, state updates, `level_converged` and `commit` —
//! make no heap allocation once the integrator is built and has taken its first step.
//!
//! A counting global allocator counts every allocation of the process while counting is on;
//! this binary is a plain program (no test harness, whose thread would allocate meanwhile). Each model is counted from
//! the first step of a fresh integrator; before, an uncounted warm-up instance of the same model
//! takes a few steps, so that one-time lazy initialization of the process (e.g. CPU feature and
//! cache detection of the linear-algebra kernels on first use) is not mistaken for a per-step
//! allocation. The first counted allocation's backtrace is kept and printed on failure. Models cover every element
//! family: rigid bodies with joints (model files), flexible beams with a prescribed rotation
//! (damped, and undamped ones whose forces the velocity jump freezes),
//! spheres with frictional impacts on a plane (with line search active), springs and loads.

// The global allocator is an `unsafe impl` forwarding to `System`.
#![allow(unsafe_code)]

mod bench_models;

use saltus::elements::body::{PointMass, RigidBody};
use saltus::elements::contact::plane::PlaneContact;
use saltus::elements::force::{Attachment, NodalLoad, SpringDamper, TorsionalSpring};
use saltus::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// Backtrace of the first counted allocation (captured with counting paused).
static FIRST: Mutex<Option<String>> = Mutex::new(None);

fn note() {
    if COUNTING.load(Ordering::Relaxed) && ALLOCS.fetch_add(1, Ordering::Relaxed) == 0 {
        COUNTING.store(false, Ordering::SeqCst);
        let trace = std::backtrace::Backtrace::force_capture().to_string();
        if let Ok(mut first) = FIRST.lock() {
            *first = Some(trace);
        }
        COUNTING.store(true, Ordering::SeqCst);
    }
}

/// The backtrace of the first counted allocation, if any.
fn first_allocation() -> String {
    FIRST
        .lock()
        .ok()
        .and_then(|mut f| f.take())
        .unwrap_or_default()
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: as `dealloc`; `new_size` is forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Allocations made by `steps` NSGA steps of `model` after `skip` uncounted ones (everything
/// is sized when the integrator is built: patterns, symbolic LU and its numeric storage,
/// scratch).
fn allocations(
    name: &str,
    make: &dyn Fn() -> Model,
    opts: NsgaOptions,
    skip: usize,
    steps: usize,
) -> usize {
    allocations_with(name, make, opts, ParallelAssembly::Adaptive, skip, steps)
}

/// [`allocations`] with the stages' use of a thread pool `policy`.
fn allocations_with(
    name: &str,
    make: &dyn Fn() -> Model,
    opts: NsgaOptions,
    policy: ParallelAssembly,
    skip: usize,
    steps: usize,
) -> usize {
    // Warm-up: an uncounted instance of the same model (one-time process initialization).
    let mut warm = make();
    let mut warm_solver =
        Nsga::new(&mut warm, opts.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    warm_solver.set_parallel_assembly(policy);
    for _ in 0..3 {
        warm_solver.step(&mut warm).unwrap();
    }
    drop(warm_solver);
    let model = &mut make();
    let mut solver = Nsga::new(model, opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    solver.set_parallel_assembly(policy);
    for _ in 0..skip {
        solver.step(model).unwrap();
    }
    ALLOCS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let mut ok = true;
    for _ in 0..steps {
        ok &= solver.step(model).is_ok();
    }
    COUNTING.store(false, Ordering::SeqCst);
    assert!(ok, "{name}: a step failed");
    let n = ALLOCS.load(Ordering::SeqCst);
    eprintln!("{name}: {n} allocations in {steps} steps");
    if n > 0 {
        eprintln!("{name}: first allocation at\n{}", first_allocation());
    }
    n
}

fn file_model(path: &str) -> (Model, NsgaOptions) {
    let file = saltus::io::load_model(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    (file.model, opts)
}

/// Spheres dropped on a frictional plane with restitution: impacts, stick/slip changes,
/// rolling and spinning resistance, backtracking line search.
fn balls() -> Model {
    balls_with(Some((0.001, 0.0005)))
}

/// The spheres of [`balls`] without rolling and spinning resistance (which the contact-space
/// Gauss–Seidel does not handle): for `ContactSolver::GaussSeidel`.
fn sliding_balls() -> Model {
    balls_with(None)
}

/// Six spheres on a frictional plane, with rolling and spinning resistance `(ρ, γ_s)` \[m\].
fn balls_with(resistance: Option<(f64, f64)>) -> Model {
    let r = 0.05;
    let mut model = Model::new();
    for i in 0..6 {
        let x = Vector3::new(3.0 * r * i as f64, 0.0, r + 0.002 + 0.004 * i as f64);
        let node = model
            .add_node(
                NodeDef::frame(format!("ball{i}"), x)
                    .velocity(Vector3::new(0.5, 0.1 * i as f64, -0.3))
                    .angular_velocity(Vector3::new(0.0, 0.0, 3.0)),
            )
            .unwrap();
        model
            .add_element(format!("body{i}"), RigidBody::sphere(node, 0.2, r).unwrap())
            .unwrap();
        let mut c = PlaneContact::sphere(node, r, Vector3::zeros(), Vector3::z())
            .unwrap()
            .friction(0.3)
            .restitution(0.6, 0.0);
        if let Some((rolling, spinning)) = resistance {
            c = c.resistance(rolling, spinning);
        }
        model.add_element(format!("floor{i}"), c).unwrap();
    }
    model
}

/// Force elements: a point mass on a spring to an anchor, a body on a damped spring and a
/// torsional spring to a fixed frame, and a load with a follower torque.
fn forces() -> Model {
    let mut model = Model::new();
    let ground = model
        .add_node(NodeDef::frame("ground", Vector3::zeros()).fixed())
        .unwrap();
    let a = model
        .add_node(NodeDef::point("a", Vector3::new(0.3, 0.0, -0.5)))
        .unwrap();
    let b = model
        .add_node(
            NodeDef::frame("b", Vector3::new(-0.2, 0.1, -0.4))
                .angular_velocity(Vector3::new(0.0, 0.0, 2.0)),
        )
        .unwrap();
    model
        .add_element("ma", PointMass::new(a, 0.5).unwrap())
        .unwrap();
    model
        .add_element(
            "mb",
            RigidBody::principal(b, 1.0, Vector3::new(0.01, 0.02, 0.03)).unwrap(),
        )
        .unwrap();
    let anchor = Vector3::new(0.0, 0.0, 0.2);
    model
        .add_element(
            "sa",
            SpringDamper::to_anchor(Attachment::point(a), anchor, 80.0, 0.5, 0.6).unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "sab",
            SpringDamper::between(
                Attachment::point(a),
                Attachment::frame(b, Vector3::new(0.05, 0.0, 0.0)),
                60.0,
                0.3,
                0.4,
            )
            .unwrap(),
        )
        .unwrap();
    let rot = model.nodes()[b.index()].initial.r;
    model
        .add_element(
            "tb",
            TorsionalSpring::new(
                [ground, b],
                [Default::default(), rot],
                Vector3::z(),
                3.0,
                0.1,
            )
            .unwrap(),
        )
        .unwrap();
    model
        .add_element(
            "load",
            NodalLoad::on_frame(b, Vector3::new(0.0, 1.0, 0.0), Vector3::new(0.1, 0.0, 0.0))
                .unwrap(),
        )
        .unwrap();
    model
}

/// The check runs on the process's main thread (`harness = false` in Cargo.toml): under
/// libtest the harness's own main thread allocates now and then while a test runs (seen on a
/// loaded machine), which a process-wide count would charge to the steps.
fn main() {
    saltus::link();
    let root = env!("CARGO_MANIFEST_DIR");
    let mut total = 0;
    {
        // Automatic threads (the default) on a small model: below the parallel threshold no
        // thread pool is started.
        let (mut model, opts) = file_model(&format!("{root}/models/slider_crank.toml"));
        assert!(model.elements().len() < saltus::solvers::stage::PARALLEL_MIN_ELEMENTS);
        assert_eq!(Nsga::new(&mut model, opts).unwrap().threads(), 1);
    }
    for name in ["slider_crank", "pendulum", "flexible_crank"] {
        let path = format!("{root}/models/{name}.toml");
        let (_, mut opts) = file_model(&path);
        opts.t_end = 10.0;
        opts.threads = 1;
        total += allocations(name, &|| file_model(&path).0, opts, 0, 200);
    }
    let opts = NsgaOptions {
        h: 1e-3,
        t_end: 10.0,
        threads: 1,
        ..Default::default()
    };
    // Undamped beams: the velocity jump takes their frozen forces (`BaseTerms::frozen_force`).
    let peer = NsgaOptions {
        h: 1e-4,
        t_end: 10.0,
        rho_inf: 0.9,
        gravity: Vector3::zeros(),
        threads: 1,
        ..Default::default()
    };
    total += allocations(
        "peer slider-crank (undamped beams)",
        &|| bench_models::peer_slider_crank(8).0,
        peer,
        0,
        200,
    );
    total += allocations("balls", &balls, opts.clone(), 0, 1000);
    total += allocations("forces", &forces, opts.clone(), 0, 50);
    // The contact-space Gauss–Seidel first: its work arrays are the stage's, sized at its first
    // settling (within the 100 uncounted steps; it settles nearly every solve of this model, the
    // impacts and the sliding).
    let gs = NsgaOptions {
        contact_solver: ContactSolver::GaussSeidel,
        ..opts.clone()
    };
    {
        // The same run as counted below (100 steps, then 1 000): settlings at both levels
        // within the counted steps.
        let mut model = sliding_balls();
        let mut solver = Nsga::new(&mut model, gs.clone()).unwrap();
        let settled = |s: &Nsga| {
            let s = s.summary();
            [s.stage("position").settled, s.stage("velocity").settled]
        };
        for _ in 0..100 {
            solver.step(&mut model).unwrap();
        }
        let before = settled(&solver);
        for _ in 0..1000 {
            solver.step(&mut model).unwrap();
        }
        let after = settled(&solver);
        eprintln!("sliding balls, Gauss–Seidel first: settled solves {before:?} -> {after:?}");
        assert!(
            before[0] > 0 && before[1] > 0,
            "first settlings uncounted: {before:?}"
        );
        assert!(after[0] > before[0] && after[1] > before[1], "{after:?}");
    }
    total += allocations(
        "sliding balls, Gauss–Seidel first",
        &sliding_balls,
        gs,
        100,
        1000,
    );
    assert_eq!(total, 0, "allocations inside steps");
    // Parallel assembly (2 threads, 40 balls: above the parallel threshold), every assembly in
    // parallel and, by default, measured against the sequential one. Each step enters the
    // thread pool once; rayon's job injector (crossbeam) allocates one block per 63 jobs
    // injected from outside the pool, so at most ⌈steps/63⌉ + 1 allocations, and nothing from
    // the assembly, the LU or the updates. One uncounted step lets the pool threads start.
    let par = NsgaOptions { threads: 2, ..opts };
    let steps = 300;
    for policy in [ParallelAssembly::Always, ParallelAssembly::Adaptive] {
        let n = allocations_with(
            &format!("balls on 2 threads, {policy:?}"),
            &|| bench_models::balls(40),
            par.clone(),
            policy,
            1,
            steps,
        );
        assert!(
            n <= steps.div_ceil(63) + 1,
            "{n} allocations in {steps} steps on 2 threads ({policy:?})"
        );
    }
    eprintln!("newton_no_alloc: ok");
}
