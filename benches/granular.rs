//! Benchmark case (c) of `../shared/bench-peers`: a granular column. `N` spheres
//! (R = 0.05 m, density 1000 kg/m³) on a cubic lattice (spacing 0.11 m, seeded horizontal
//! jitter ±0.004 m) fall under gravity into a square box (floor and four walls, fixed planes),
//! Coulomb μ = 0.3, e = 0, exact cone and no penetration (NSGA position and velocity levels),
//! contacts detected at run time by one contact group. Same set-up as the peers'
//! `granular.py`. Prints one JSON line: ms/step, contacts per step (mean, max), Newton
//! iterations per stage, the time spent in the detection (the contact group's update, timed
//! separately: a twin group replays the node states of the run's last steps in order, so that
//! its candidate list is rebuilt as often as the run's; `detection_steps` of them, up to 199)
//! and the final kinetic energy and highest centre, and the split of a step's time
//! (`time_split_ms_per_step`: the run's own detection, each stage's assemblies,
//! factorizations, contact linearizations, sweeps and the rest of its solves, and the time
//! outside the stages; `NsgaOptions::timings`). Keeping those states costs a copy of the
//! nodes per step over the last steps, into storage allocated before the timed loop (≈ 0.02
//! ms at N = 1 000).
//!
//! Run: `cargo bench --bench granular -- [N] [T] [H] [--adaptive] [--simultaneous] [--cold]
//! [--gauss-seidel] [--tol=X] [--impact-tolerance=V] [--persistent-steps=K]` (defaults 100 1
//! 1e-3; `--simultaneous`: one velocity problem per step, no impact sequence; the impact
//! sequence's `tol_v` \[m/s\] and persistent steps default to `ImpactSequence::default()`'s;
//! `--cold`: no warm start of the contact multipliers;
//! `--gauss-seidel`: `ContactSolver::GaussSeidel`; `--tol`: Newton tolerance, default 1e-8 —
//! the peers' NSGS runs at 1e-4).

mod common;
#[path = "scenes/granular_column.rs"]
mod scene;
use saltus::core::Detector;
use saltus::prelude::*;
use saltus::solvers::ImpactSequence;
use scene::{column, group, mass};
use std::time::Instant;

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(100.0) as usize;
    let t_end = args.get(1).copied().unwrap_or(1.0);
    let h = args.get(2).copied().unwrap_or(1e-3);
    let m = mass();
    let (mut model, ids, half) = column(n);
    let opts = NsgaOptions {
        h,
        t_end,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        threads: common::threads(),
        jacobian_reuse: common::jacobian_reuse(),
        adaptive: std::env::args().any(|a| a == "--adaptive"),
        impacts: if std::env::args().any(|a| a == "--simultaneous") {
            None
        } else {
            // A flag's value (`--name=value`); one that does not parse is an error.
            let flag = |name: &str| {
                std::env::args().find_map(|a| a.strip_prefix(name).map(str::to_string))
            };
            let d = ImpactSequence::default();
            Some(ImpactSequence {
                tolerance: flag("--impact-tolerance=").map_or(d.tolerance, |v| {
                    v.parse().expect("--impact-tolerance: a number [m/s]")
                }),
                persistent_steps: flag("--persistent-steps=").map_or(d.persistent_steps, |v| {
                    v.parse()
                        .expect("--persistent-steps: a whole number in 0..=32")
                }),
                ..d
            })
        },
        warm_start: !std::env::args().any(|a| a == "--cold"),
        contact_solver: if std::env::args().any(|a| a == "--gauss-seidel") {
            ContactSolver::GaussSeidel
        } else {
            ContactSolver::Newton
        },
        tol: common::tolerance(),
        // The split of the step's time (a few hundred clock readings per step: ≈ 0.03 % here).
        timings: true,
        ..NsgaOptions::default()
    };
    let steps = (t_end / h).round() as usize;
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    // A twin of the group, updated on a scratch model at the run's states, times the detection.
    let mut twin_model = Model::new();
    for d in model.nodes() {
        twin_model.add_node(d.clone()).unwrap();
    }
    let mut twin = group(&ids, half);
    // The node states of the run's last `replay` steps, for the twin: ≈ 50 MB at most (but at
    // least 10 steps), allocated here so that the timed loop only copies into them.
    let replay = (50_000_000 / (n.max(1) * std::mem::size_of::<NodeState>()))
        .clamp(10, 200)
        .min(steps);
    let mut recent: Vec<Vec<NodeState>> = (0..replay)
        .map(|_| Vec::with_capacity(model.nodes().len()))
        .collect();
    let (mut contacts_sum, mut contacts_max) = (0usize, 0usize);
    let mut iterations = [0usize; 3];
    let t0 = Instant::now();
    for step in 0..steps {
        let stats = solver.step(&mut model).unwrap();
        let c = model
            .elements()
            .iter()
            .filter(|e| e.as_contact().is_some())
            .count();
        contacts_sum += c;
        contacts_max = contacts_max.max(c);
        for (k, it) in iterations.iter_mut().enumerate() {
            *it = (*it).max(stats.stages()[k].iterations);
        }
        if step + replay >= steps {
            let slot = &mut recent[step + replay - steps];
            slot.clear();
            slot.extend_from_slice(solver.nodes());
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    // Detection alone: the twin replays the last steps' states in order (its candidate list
    // rebuilt as often as the run's), timed after a first update that builds it; `null` with
    // fewer than two steps.
    let mut detection = None;
    if let [first, rest @ ..] = &recent[..] {
        twin.update(&mut twin_model, 0.0, h, first).unwrap();
        if !rest.is_empty() {
            let td = Instant::now();
            for states in rest {
                twin.update(&mut twin_model, 0.0, h, states).unwrap();
            }
            detection = Some(td.elapsed().as_secs_f64() / rest.len() as f64);
        }
    }
    let ke: f64 = solver
        .nodes()
        .iter()
        .map(|s| 0.5 * m * s.v.norm_squared())
        .sum();
    let top = solver
        .nodes()
        .iter()
        .map(|s| s.x.z)
        .fold(f64::NEG_INFINITY, f64::max);
    let s = solver.summary();
    println!(
        "{{\"case\": \"granular\", \"code\": \"saltus\", \"N\": {n}, \"h\": {h:e}, \"T\": {t_end}, \
         \"steps\": {steps}, \"wall_s\": {wall:.4}, \"ms_per_step\": {:.4}, \
         \"contacts_mean\": {:.1}, \"contacts_max\": {contacts_max}, \
         \"detection_ms_per_step\": {}, \"detection_steps\": {}, \
         \"max_iterations\": {iterations:?}, \
         \"mean_iterations\": {:?}, \"settled\": {:?}, \"settle_sweeps\": {:?}, \
         \"topology_changes\": {}, \"halvings\": {}, \
         \"kinetic_energy\": {ke:.6e}, \"highest_centre\": {top:.5}, \
         \"time_split_ms_per_step\": {}}}",
        1e3 * wall / steps.max(1) as f64,
        contacts_sum as f64 / steps.max(1) as f64,
        detection.map_or("null".to_string(), |d| format!("{:.4}", 1e3 * d)),
        replay.saturating_sub(1),
        s.mean_iterations().iter().map(|x| (x * 100.0).round() / 100.0).collect::<Vec<_>>(),
        s.stages.iter().map(|st| st.settled).collect::<Vec<_>>(),
        s.stages.iter().map(|st| st.settle_sweeps).collect::<Vec<_>>(),
        s.topology_changes,
        s.halvings,
        time_split(&s, wall, steps),
    );
}

/// Where a step's time went, ms/step (`NsgaOptions::timings`): the detection, each stage's
/// parts and the rest of its solves, and the rest of the timed loop, outside the stages
/// (predictor, rebuilds at contact-set changes, the impact sequence's bookkeeping, the state
/// commits, and this loop's own counting and copies).
fn time_split(s: &saltus::solvers::RunSummary, wall: f64, steps: usize) -> String {
    let per = |d: std::time::Duration| 1e3 * d.as_secs_f64() / steps.max(1) as f64;
    let mut outside = 1e3 * wall / steps.max(1) as f64 - per(s.detection);
    let stages: Vec<String> = s
        .stages
        .iter()
        .map(|st| {
            let t = &st.times;
            let parts = [
                t.assembly,
                t.factorization,
                t.contact_linearization,
                t.sweeps,
            ];
            let rest = per(t.total) - parts.iter().map(|&d| per(d)).sum::<f64>();
            outside -= per(t.total);
            format!(
                "\"{}\": {{\"total\": {:.3}, \"assembly\": {:.3}, \"factorization\": {:.3}, \
                 \"contact_linearization\": {:.3}, \"sweeps\": {:.3}, \"rest\": {rest:.3}}}",
                st.name,
                per(t.total),
                per(t.assembly),
                per(t.factorization),
                per(t.contact_linearization),
                per(t.sweeps),
            )
        })
        .collect();
    format!(
        "{{\"detection\": {:.3}, {}, \"outside_stages\": {outside:.3}}}",
        per(s.detection),
        stages.join(", ")
    )
}
