//! Steady-state `Hdf5Sink::record` does not allocate: a record that is only buffered (no
//! block write) makes no heap allocation once the buffers have grown.
//!
//! In its own test binary: the global allocator counts the allocations of the thread that
//! switched counting on.

// The global allocator is an `unsafe impl` forwarding to `System`.
#![allow(unsafe_code)]

mod common;

use common::*;
use saltus_core::{ContactRow, ResultSink, StepRecord};
use saltus_io::Hdf5Sink;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// `System`, counting the allocations of the current thread while [`COUNTING`] is on.
struct Counting;

/// Allocations (`alloc`, `alloc_zeroed`, `realloc`) counted.
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations are counted.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    // `try_with`: never panic inside the allocator (e.g. during thread teardown).
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: `ptr` was allocated by `System` with `layout`; `new_size` forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn buffered_records_do_not_allocate() {
    let path = tmp("no_alloc.h5");
    // 64 KiB: blocks of about 100 records (416 bytes each and one contact row of 204 bytes)
    let mut sink = Hdf5Sink::create(&path)
        .unwrap()
        .with_buffer_bytes(64 * 1024)
        .with_flush_interval(Duration::from_secs(3600));
    sink.begin(&layout()).unwrap();
    let contact = [ContactRow {
        contact: 1,
        gap: 0.5,
        ..ContactRow::default()
    }];
    let (warm_up, n) = (1000, 5000);
    let (mut buffered, mut blocks) = (0, 0);
    for k in 0..n {
        let (nd, v) = (nodes(k), values(k));
        let record = StepRecord {
            step: k,
            t: k as f64,
            nodes: &nd,
            element_values: &v,
            stats: stats(k),
            energy: energy(k),
            contacts: &contact,
        };
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.set(true);
        sink.record(&record).unwrap();
        COUNTING.set(false);
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        if k < warm_up {
            continue;
        }
        if sink.buffered_records() == 0 {
            blocks += 1;
        } else {
            buffered += 1;
            assert_eq!(allocations, 0, "record {k} allocated");
        }
    }
    assert!(
        blocks >= 20 && buffered >= 3000,
        "{blocks} blocks, {buffered} buffered"
    );
    sink.finish().unwrap();
    let file = hdf5_metno::File::open(&path).unwrap();
    assert_eq!(file.dataset("time").unwrap().shape(), vec![n]);
    assert_eq!(file.dataset("contacts/gap").unwrap().shape(), vec![n]);
}
