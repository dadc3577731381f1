//! The step grid: `n = round(t_end / h)` steps at `t_k = k h` exactly — no drift of summed step
//! sizes, no extra sliver step at the end (which would inflate the scaling `m/h`) — and a last
//! step shortened to land on `t_end` when it is not a multiple of `h`.

use saltus::elements::body::PointMass;
use saltus::prelude::*;

fn falling_mass() -> Model {
    let mut model = Model::new();
    let p = model
        .add_node(NodeDef::point("p", Vector3::zeros()).velocity(Vector3::new(1.0, 0.0, 0.0)))
        .unwrap();
    model
        .add_element("mass", PointMass::new(p, 1.0).unwrap())
        .unwrap();
    model
}

fn run(h: f64, t_end: f64, output_every: usize) -> (RunSummary, MemorySink) {
    let mut model = falling_mass();
    let opts = NsgaOptions {
        h,
        t_end,
        output_every,
        ..Default::default()
    };
    let mut solver = Nsga::new(&mut model, opts).unwrap();
    let mut sink = MemorySink::default();
    let summary = solver.run(&mut model, &mut sink, &mut |_| {}).unwrap();
    (summary, sink)
}

#[test]
fn two_hundred_thousand_steps_of_5e_minus_5_are_exactly_that() {
    let (h, t_end) = (5e-5, 10.0);
    let (summary, sink) = run(h, t_end, 20_000);
    // Summing 5e-5 two hundred thousand times falls short of 10 by more than the end test's
    // 1e-9 h: a step counter that accumulates t would take a 200 001st sliver step.
    assert_eq!(summary.steps, 200_000);
    assert_eq!(summary.t, t_end);
    assert_eq!(sink.time.len(), 11);
    for (k, t) in sink.time.iter().enumerate() {
        let expected = if k == 10 {
            t_end
        } else {
            (k * 20_000) as f64 * h
        };
        assert_eq!(*t, expected, "record {k}");
    }
    // Every step has the nominal size (the statistics record the size used): h = t_{k+1} − t_k
    // up to the spacing of doubles near t_end = 10 (1.8e-15, i.e. 3.6e-11 h).
    let spacing = f64::EPSILON * t_end;
    assert!(sink.stats[1..].iter().all(|s| (s.h - h).abs() <= spacing));
}

#[test]
fn a_last_step_is_shortened_to_land_on_t_end() {
    let (summary, sink) = run(0.3, 1.0, 1);
    assert_eq!(summary.steps, 4);
    // t_k = k h exactly (3 h is 0.8999999999999999 in floating point), then t_end.
    assert_eq!(sink.time, vec![0.0, 0.3, 2.0 * 0.3, 3.0 * 0.3, 1.0]);
    // The last step is 1.0 − 0.9 (to round-off).
    assert!((sink.stats[4].h - 0.1).abs() < 1e-15);
}
