//! `LevelSystem::without` against `LevelSystem::new` on a real model — a granular column whose
//! contacts were found at run time — and the deferred contact pattern of a stage run
//! Gauss–Seidel first (`Stage::defer_contact_pattern`).

use saltus::core::assembly::{LevelSystem, NodeNumbering};
use saltus::core::Level;
use saltus::prelude::*;
use std::collections::BTreeMap;

#[path = "../benches/scenes/granular_column.rs"]
mod scene;

/// The column of 27 spheres after 0.3 s, with its contacts, and the solver that ran it.
fn settled_column() -> (Model, Nsga) {
    let (mut model, _, _) = scene::column(27);
    let opts = NsgaOptions {
        h: 1e-3,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        tol: 1e-4,
        contact_solver: ContactSolver::GaussSeidel,
        ..NsgaOptions::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    for _ in 0..300 {
        solver.step(&mut model).unwrap();
    }
    (model, solver)
}

/// Scatter into `system` every element's residual and a Hessian with distinct entries
/// (`H_ij = 1 + e + 0.01 i + 0.0001 j`) for the elements `with_hessian` accepts, and return the
/// matrix as `(row, column) → value` over its stored entries, with the right-hand side.
fn scattered(
    system: &mut LevelSystem,
    n_elements: usize,
    with_hessian: &dyn Fn(usize) -> bool,
) -> (BTreeMap<(usize, usize), f64>, Vec<f64>) {
    // Some active elements get no Hessian here, outside `zero`'s contract (a stage's assembly
    // scatters every active element's, whose first writes store): the values start from zero
    // explicitly.
    system.zero();
    system.matrix.data_mut().fill(0.0);
    for e in 0..n_elements {
        let n = system.local_size(e);
        if !system.active[e] || n == 0 {
            continue;
        }
        let r: Vec<f64> = (0..n).map(|i| (e * 7 + i) as f64).collect();
        if with_hessian(e) {
            let h: Vec<f64> = (0..n * n)
                .map(|k| 1.0 + e as f64 + 0.01 * (k % n) as f64 + 1e-4 * (k / n) as f64)
                .collect();
            system.scatter_slices(e, &r, &h);
        } else {
            system.scatter_residual(e, &r);
        }
    }
    let m = &system.matrix;
    let mut entries = BTreeMap::new();
    for (c, col) in m.outer_iterator().enumerate() {
        for (r, &v) in col.iter() {
            entries.insert((r, c), v);
        }
    }
    (entries, system.rhs.clone())
}

/// Leaving nothing out is `new` itself: the same unknowns, multipliers, element unknown lists,
/// pattern and slots (every element's Hessian lands on the same entries).
#[test]
fn without_nothing_is_the_full_system() {
    let (model, _) = settled_column();
    let contacts = model
        .elements()
        .iter()
        .filter(|e| e.as_contact().is_some())
        .count();
    assert!(contacts > 20, "{contacts} contacts");
    let numbering = NodeNumbering::new(model.nodes());
    for level in [Level::Position, Level::Velocity] {
        let els = model.elements();
        let mut full = LevelSystem::new(level, model.nodes(), &numbering, els, 0);
        let mut same = LevelSystem::without(level, model.nodes(), &numbering, els, 0, &|_| false);
        assert!(full.same_pattern(&same));
        assert_eq!(full.mult_range, same.mult_range);
        for e in 0..els.len() {
            assert_eq!(full.element_dofs(e), same.element_dofs(e));
        }
        let all = |_| true;
        assert_eq!(
            scattered(&mut full, els.len(), &all),
            scattered(&mut same, els.len(), &all)
        );
    }
}

/// Leaving the contacts out keeps the unknowns, multipliers and unknown lists; the pattern is
/// the other elements' (a strict part of the full one), whose Hessians land on the same
/// entries, and the contacts still scatter their residuals.
#[test]
fn without_the_contacts_keeps_the_unknowns_and_the_other_blocks() {
    let (model, _) = settled_column();
    let numbering = NodeNumbering::new(model.nodes());
    let els = model.elements();
    let is_contact = |e: usize| els[e].as_contact().is_some();
    let level = Level::Position;
    let mut full = LevelSystem::new(level, model.nodes(), &numbering, els, 0);
    let mut slim = LevelSystem::without(level, model.nodes(), &numbering, els, 0, &|e| {
        e.as_contact().is_some()
    });
    assert_eq!((full.n, full.n_node_dofs), (slim.n, slim.n_node_dofs));
    assert_eq!(full.mult_range, slim.mult_range);
    for e in 0..els.len() {
        assert_eq!(full.element_dofs(e), slim.element_dofs(e));
    }
    assert!(slim.matrix.nnz() < full.matrix.nnz() / 2);
    let others = |e: usize| !is_contact(e);
    let (in_full, rhs_full) = scattered(&mut full, els.len(), &others);
    let (in_slim, rhs_slim) = scattered(&mut slim, els.len(), &others);
    assert_eq!(rhs_full, rhs_slim);
    for (at, v) in &in_slim {
        assert_eq!(in_full.get(at), Some(v), "entry {at:?}");
    }
    // Every nonzero of the full matrix is in the slim pattern.
    for (at, v) in &in_full {
        if *v != 0.0 {
            assert_eq!(in_slim.get(at), Some(v), "entry {at:?}");
        }
    }
}

/// A stage run Gauss–Seidel first, after its contact set changed, has the unknowns and
/// multipliers of the full system, and — whether its pattern is still the one without the
/// contacts or already completed by a Newton assembly — a pattern within the full one.
#[test]
fn a_deferred_stage_pattern_is_part_of_the_full_one() {
    let (model, solver) = settled_column();
    let numbering = NodeNumbering::new(model.nodes());
    for (stage, level) in solver.stages()[1..]
        .iter()
        .zip([Level::Position, Level::Velocity])
    {
        let own = &stage.system;
        let full = LevelSystem::new(level, model.nodes(), &numbering, model.elements(), 0);
        assert_eq!((own.n, own.n_node_dofs), (full.n, full.n_node_dofs));
        assert_eq!(own.mult_range, full.mult_range);
        let (fi, oi) = (full.matrix.indptr(), own.matrix.indptr());
        for c in 0..full.n {
            let rows = &full.matrix.indices()[fi.index(c)..fi.index(c + 1)];
            for r in &own.matrix.indices()[oi.index(c)..oi.index(c + 1)] {
                assert!(rows.binary_search(r).is_ok(), "({r}, {c})");
            }
        }
    }
}

/// Scatter every active element's residual and a Hessian whose entries depend on `seed`
/// (`H_ij = seed + e + 0.01 i + 0.0001 j`), after `zero` only, as a stage's assembly does;
/// return the matrix as `(row, column) → value`.
fn assembled(
    system: &mut LevelSystem,
    n_elements: usize,
    seed: f64,
) -> BTreeMap<(usize, usize), f64> {
    system.zero();
    for e in 0..n_elements {
        let n = system.local_size(e);
        if !system.active[e] || n == 0 {
            continue;
        }
        let r = vec![seed; n];
        let h: Vec<f64> = (0..n * n)
            .map(|k| seed + e as f64 + 0.01 * (k % n) as f64 + 1e-4 * (k / n) as f64)
            .collect();
        system.scatter_slices(e, &r, &h);
    }
    let mut entries = BTreeMap::new();
    for (c, col) in system.matrix.outer_iterator().enumerate() {
        for (r, &v) in col.iter() {
            entries.insert((r, c), v);
        }
    }
    entries
}

/// Repeated assemblies on one system, each after `zero` alone (the first write to each value
/// stores, the others add): every one equals the same assembly on a new system, whose values
/// start at zero — after another assembly's values, with the contacts switched off for one
/// assembly (then every value is zeroed and every scatter adds, as in the Gauss–Seidel's
/// assemblies) and switched back on.
#[test]
fn repeated_assemblies_equal_fresh_ones() {
    let (model, _) = settled_column();
    let numbering = NodeNumbering::new(model.nodes());
    let els = model.elements();
    let level = Level::Position;
    let fresh = |seed: f64, off: &dyn Fn(usize) -> bool| {
        let mut s = LevelSystem::new(level, model.nodes(), &numbering, els, 0);
        for e in (0..els.len()).filter(|&e| off(e)) {
            s.active[e] = false;
        }
        assembled(&mut s, els.len(), seed)
    };
    let none = |_: usize| false;
    let contacts = |e: usize| els[e].as_contact().is_some();
    let mut system = LevelSystem::new(level, model.nodes(), &numbering, els, 0);
    assert_eq!(assembled(&mut system, els.len(), 1.0), fresh(1.0, &none));
    assert_eq!(assembled(&mut system, els.len(), 7.0), fresh(7.0, &none));
    for e in (0..els.len()).filter(|&e| contacts(e)) {
        system.active[e] = false;
    }
    let without = assembled(&mut system, els.len(), 3.0);
    assert_eq!(without, fresh(3.0, &contacts));
    // The contacts' own entries (their multiplier rows) hold zeros, not the last values.
    assert!(without.values().filter(|&&v| v == 0.0).count() > 0);
    for e in (0..els.len()).filter(|&e| contacts(e)) {
        system.active[e] = true;
    }
    assert_eq!(assembled(&mut system, els.len(), 5.0), fresh(5.0, &none));
}
