//! No allocation inside the Newton loop: every registered element, built from its registry
//! example on random nodes, evaluates each of its levels without touching the heap.
//!
//! A counting global allocator records the allocations (and frees) of the current thread
//! while counting is switched on; the local state, the output vector and matrix and the element
//! itself are prepared outside the counted region, exactly as the assembler preallocates them.

// The global allocator is an `unsafe impl` forwarding to `System`.
#![allow(unsafe_code)]

use nalgebra::{DMatrix, DVector};
use saltus_core::element::{Element, Level, LocalState, LocalSystem, OutputState};
use saltus_core::fd::{test_cx, LocalFixture, Rng};
use saltus_core::node::{NodeDef, NodeKind};
use saltus_core::registry::{element_kinds, BuildCx, ElementDef, ElementKind};
use saltus_core::stage::{evaluate_element, participates, Scratch};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// `System`, counting the calls of the current thread while [`COUNTING`] is on.
struct CountingAllocator;

thread_local! {
    /// Whether this thread's allocator calls are counted.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// Allocations (`alloc`, `alloc_zeroed`, `realloc`) counted on this thread.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
    /// Frees counted on this thread.
    static FREES: Cell<usize> = const { Cell::new(0) };
}

fn note(counter: &'static std::thread::LocalKey<Cell<usize>>) {
    // `try_with`: never panic inside the allocator (e.g. during thread teardown).
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = counter.try_with(|c| c.set(c.get() + 1));
    }
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(&ALLOCS);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(&ALLOCS);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(&FREES);
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(&ALLOCS);
        // SAFETY: as `dealloc`; `new_size` is forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Run `f` and return its result with the number of allocations and frees it made on this
/// thread.
fn counted<R>(f: impl FnOnce() -> R) -> (R, usize, usize) {
    ALLOCS.with(|c| c.set(0));
    FREES.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (r, ALLOCS.with(Cell::get), FREES.with(Cell::get))
}

const LEVELS: [Level; 4] = [
    Level::Smooth,
    Level::Position,
    Level::Velocity,
    Level::Static,
];

/// Random node definitions of the given kinds (positions and velocities in `[-1, 1)³`,
/// random rotations).
fn random_nodes(kinds: &[NodeKind], rng: &mut Rng) -> Vec<NodeDef> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let x = rng.vec3(1.0);
            let mut d = match k {
                NodeKind::Frame => NodeDef::frame(format!("n{i}"), x).rotation(rng.rotation()),
                NodeKind::Point => NodeDef::point(format!("n{i}"), x),
            };
            d.initial.v = rng.vec3(1.0);
            if *k == NodeKind::Frame {
                d.initial.omega = rng.vec3(1.0);
            }
            d
        })
        .collect()
}

/// The registry example of `kind` on random nodes.
fn build_example(kind: &ElementKind, rng: &mut Rng) -> Box<dyn Element> {
    let nodes = random_nodes(kind.example_nodes, rng);
    let def = ElementDef {
        name: format!("example_{}", kind.type_name),
        type_name: kind.type_name.into(),
        nodes: nodes.iter().map(|n| n.name.clone()).collect(),
        parameters: (kind.example)(),
    };
    (kind.build)(&def, &BuildCx::new(&nodes))
        .unwrap_or_else(|e| panic!("{}: example does not build: {e}", kind.type_name))
}

/// Evaluate `element` at `level` on a random fixture; returns the allocations and frees made
/// by the evaluation itself (repeated `repeat` times, as in a Newton loop).
fn level_allocations(
    element: &dyn Element,
    kinds: &[NodeKind],
    level: Level,
    rng: &mut Rng,
    repeat: usize,
) -> (usize, usize) {
    let cx = test_cx(level);
    let m = element.n_mult(level);
    let fx = LocalFixture::random(kinds, m, element.n_mult(Level::Smooth), 0.3, rng);
    let (nodes, tangents) = fx.states(&cx, &fx.incr);
    let n = fx.n_unknowns();
    let mut r = DVector::zeros(n);
    let mut h = DMatrix::zeros(n, n);
    let s = LocalState {
        kinds: &fx.kinds,
        nodes: &nodes,
        prev: &fx.prev,
        smooth: if level == Level::Smooth {
            &nodes
        } else {
            &fx.smooth
        },
        rot_tangent: &tangents,
        incr: &fx.incr,
        mult: &fx.mult,
        mult_smooth: &fx.mult_smooth,
        admissible: true,
        memo: None,
        base: None,
    };
    let mut out = LocalSystem {
        residual: r.rows_mut(0, n),
        hessian: h.view_mut((0, 0), (n, n)),
        reference: 0.0,
    };
    let mut scratch = Scratch::new(kinds.len(), n);
    let (results, allocs, frees) = counted(|| {
        let mut ok = true;
        for _ in 0..repeat {
            ok &= evaluate_element(element, &cx, &s, &mut out, &mut scratch).is_ok();
        }
        ok
    });
    assert!(
        results,
        "{} {level}: evaluation failed on a random state",
        element.type_name()
    );
    (allocs, frees)
}

#[test]
fn the_counter_sees_allocations() {
    let (v, allocs, frees) = counted(|| {
        let v = vec![1.0_f64; 16];
        drop(vec![0u8; 3]);
        v
    });
    assert_eq!((v.len(), allocs, frees), (16, 2, 1));
}

#[test]
fn every_registered_element_evaluates_its_levels_without_allocating() {
    saltus_elements::link();
    let kinds = element_kinds();
    // The element library registers bodies, forces and joints (at least these).
    for name in [
        "rigid_body",
        "spring_damper",
        "revolute_joint",
        "spherical_joint",
        "prismatic_joint",
        "clamp",
        "prescribed_rotation",
    ] {
        assert!(
            kinds.iter().any(|k| k.type_name == name),
            "{name} is not registered"
        );
    }
    let mut failures = Vec::new();
    for kind in kinds {
        for seed in 1..=3 {
            let mut rng = Rng::new(seed);
            let element = build_example(kind, &mut rng);
            for level in LEVELS {
                if !participates(element.as_ref(), level) {
                    continue;
                }
                let (allocs, frees) =
                    level_allocations(element.as_ref(), kind.example_nodes, level, &mut rng, 3);
                if allocs + frees > 0 {
                    failures.push(format!(
                        "{} {level} (seed {seed}): {allocs} allocations, {frees} frees",
                        kind.type_name
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "allocating evaluations:\n{}",
        failures.join("\n")
    );
}

/// The joints' outputs are written once per step (not in the Newton loop), but they are
/// allocation-free too.
#[test]
fn joint_outputs_do_not_allocate() {
    saltus_elements::link();
    for kind in element_kinds().iter().filter(|k| {
        matches!(
            k.type_name,
            "revolute_joint"
                | "spherical_joint"
                | "prismatic_joint"
                | "clamp"
                | "prescribed_rotation"
        )
    }) {
        let mut rng = Rng::new(7);
        let element = build_example(kind, &mut rng);
        let m = element.n_mult(Level::Smooth);
        let fx = LocalFixture::random(kind.example_nodes, m, m, 0.3, &mut rng);
        let len: usize = element.outputs().iter().map(|o| o.len).sum();
        let mut out = vec![0.0; len];
        let os = OutputState {
            t: 0.37,
            nodes: &fx.smooth,
            kinds: &fx.kinds,
            mult_smooth: &fx.mult_smooth,
            mult_position: &fx.mult,
            mult_velocity: &fx.mult,
            k: [1.3, 1.7, 2.3],
            h: 1e-2,
            gravity: nalgebra::Vector3::zeros(),
        };
        let ((), allocs, frees) = counted(|| element.write_outputs(&os, &mut out));
        assert_eq!((allocs, frees), (0, 0), "{}", kind.type_name);
        assert!(out.iter().all(|v| v.is_finite()), "{}", kind.type_name);
    }
}
