//! Joint reactions of the initial record are the consistent ones of the initial-acceleration
//! solve (they used to be written with the scaling of the first step, 10⁻⁶ of their value):
//! a pendulum hanging at rest carries its weight from record 0 on, and one released from the
//! horizontal starts with the analytic reaction m g I/(I + m L²).

use saltus::prelude::*;

mod common;

fn run(bob: [f64; 3], t_end: f64) -> MemorySink {
    let text = common::PENDULUM
        .replace("t_end = 0.5", &format!("t_end = {t_end}"))
        .replace(
            "position = [1.0, 0.0, 0.0]",
            &format!("position = [{}, {}, {}]", bob[0], bob[1], bob[2]),
        );
    let mut file = saltus::io::parse_str(&text, saltus::io::Format::Toml, "pendulum").unwrap();
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    let mut solver = Nsga::new(&mut file.model, opts).unwrap();
    let mut sink = MemorySink::default();
    solver.run(&mut file.model, &mut sink, &mut |_| {}).unwrap();
    sink
}

#[test]
fn validate_hanging_pendulum_reaction_from_record_0() {
    let sink = run([0.0, 0.0, -1.0], 0.01);
    let force = sink.channel("hinge", "force").unwrap();
    // At rest: the hinge holds the weight m g = 19.62 N upward on the bob, exactly in every
    // record (the initial solve's O(h₀) error is on the acceleration, which is zero here).
    for (k, f) in force.iter().enumerate() {
        assert!((f[2] - 2.0 * 9.81).abs() < 1e-6, "record {k}: {f:?}");
        assert!(f[0].abs() < 1e-6 && f[1].abs() < 1e-6, "record {k}: {f:?}");
    }
}

#[test]
fn validate_released_pendulum_reaction_is_continuous_at_record_0() {
    // Released from the horizontal, at rest: the point-like bob (I ≪ m L²) starts in free
    // fall, so the hinge force at t = 0 is m g I/(I + m L²) upward, nearly 0; it then grows
    // smoothly. Record 0 must agree with the analytic value and with record 1 to O(h).
    let sink = run([1.0, 0.0, 0.0], 0.01);
    let force = sink.channel("hinge", "force").unwrap();
    let (m, g, l, i) = (2.0, 9.81, 1.0, 0.002);
    let f0 = m * g * i / (i + m * l * l);
    // The initial-acceleration solve is exact up to O(h₀) = O(1e-9 s) terms and the Newton
    // tolerance 1e-8 (relative): 1e-6 of the weight leaves a wide margin.
    assert!(
        (force[0][2] - f0).abs() < 1e-6 * m * g,
        "record 0: {:?} vs {f0}",
        force[0]
    );
    assert!(
        force[0][0].abs() < 1e-6 * m * g,
        "no radial force at rest: {:?}",
        force[0]
    );
    // One step later (h = 1e-3) the radial (centripetal) part is m ω² L with ω ≈ (g/L) t:
    // ~2e-4 N; the jump between records 0 and 1 stays below 1e-2 N.
    let jump = (0..3)
        .map(|a| (force[1][a] - force[0][a]).abs())
        .fold(0.0, f64::max);
    assert!(
        jump < 1e-2,
        "record 0 {:?} vs record 1 {:?}",
        force[0],
        force[1]
    );
}
