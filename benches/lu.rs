//! Benchmark: the dense and the sparse LU path on the iteration matrices of the benchmark
//! models (rigid chains of N links, beam cantilevers of N elements), to place
//! `saltus_core::linear::DENSE_MAX`. For each stage matrix after one step, prints its order,
//! its nonzeros and the time \[µs\] of one numeric factorization plus one solve on each path.
//!
//! Run: `cargo bench --bench lu`.

#[path = "../tests/bench_models/mod.rs"]
mod bench_models;
use saltus::core::linear::Lu;
use saltus::prelude::*;
use std::time::Instant;

/// Median time \[µs\] of factorize + solve of `a` with `lu`, over batches of `reps`.
fn time(mut lu: Lu, a: &sprs::CsMat<f64>, reps: usize) -> f64 {
    let mut b = vec![0.0; a.rows()];
    let mut samples = Vec::new();
    for _ in 0..7 {
        let t0 = Instant::now();
        for _ in 0..reps {
            lu.factorize(a, 1).unwrap();
            b.fill(1.0);
            lu.solve_in_place(&mut b).unwrap();
        }
        samples.push(1e6 * t0.elapsed().as_secs_f64() / reps as f64);
    }
    samples.sort_by(f64::total_cmp);
    std::hint::black_box(&b);
    samples[3]
}

fn main() {
    println!(
        "{:>16} {:>8} {:>6} {:>7} {:>11} {:>11} {:>7}",
        "model", "stage", "n", "nnz", "dense us", "sparse us", "ratio"
    );
    let models: Vec<(String, Model)> = [1, 2, 3, 4, 6, 8, 12, 16]
        .iter()
        .map(|&n| (format!("chain {n}"), bench_models::chain(n, 0.1)))
        .chain(
            [2, 4, 8, 12]
                .iter()
                .map(|&n| (format!("cantilever {n}"), bench_models::cantilever(n))),
        )
        .collect();
    for (name, mut model) in models {
        let opts = NsgaOptions {
            h: 1e-4,
            t_end: 1.0,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            ..NsgaOptions::default()
        };
        let mut solver = Nsga::new(&mut model, opts).unwrap();
        solver.step(&mut model).unwrap();
        for stage in solver.stages() {
            let a = &stage.system.matrix;
            let n = a.rows();
            let reps = (2_000_000 / (n * n * n).max(1)).clamp(20, 20_000);
            let dense = time(Lu::new().with_dense_max(usize::MAX), a, reps);
            let sparse = time(Lu::new().with_dense_max(0), a, reps);
            println!(
                "{:>16} {:>8} {:>6} {:>7} {:>11.2} {:>11.2} {:>7.2}",
                name,
                stage.name(),
                n,
                a.nnz(),
                dense,
                sparse,
                dense / sparse
            );
        }
    }
}
