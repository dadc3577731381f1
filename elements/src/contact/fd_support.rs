//! Finite-difference checks shared by the contact elements' unit tests: multipliers that put a
//! random fixture in a given status, the status it lands in, and the Hessian check over seeds.

use super::element::ContactElement;
use saltus_core::constraint::Layout;
use saltus_core::contact::law::{Multipliers, Scaling, SlidingGaps, Status};
use saltus_core::contact::{velocity_gaps, UnilateralContact};
use saltus_core::fd::{check_hessian, test_cx, LocalFixture, Rng};
use saltus_core::{Element, Level, StepCx};

/// Multipliers chosen so that the augmented multipliers land in `status` for an O(1) random
/// state (|g| ≲ 2, κ = 1.7, π = 2.3): gap λ_N ≪ 0; stick λ_N ≫ 0 with small tangential
/// parts; slip λ_N moderate with large tangential parts.
pub(crate) fn mults(status: Status, n: usize) -> Vec<f64> {
    let v = match status {
        Status::Gap => [-40.0, 3.0, -2.0, 1.0, 0.5, -0.7],
        Status::Stick => [40.0, 0.3, -0.2, 30.0, 0.2, -0.1],
        Status::Slip => [12.0, 30.0, -25.0, 1.0, 25.0, -30.0],
    };
    v[..n].to_vec()
}

/// Sliding status the fixture's state lands in (checks that each test case covers the status
/// it claims).
pub(crate) fn sliding_status<G: UnilateralContact + Clone + 'static>(
    e: &ContactElement<G>,
    cx: &StepCx,
    fx: &LocalFixture,
) -> Status {
    let (nodes, _) = fx.states(cx, &fx.incr);
    let layout = Layout::new(&fx.kinds);
    let gaps = if cx.level == Level::Position {
        let mut g = SlidingGaps::zeros(layout.n());
        e.geometry().position_gaps(&nodes, &fx.prev, &mut g, None);
        g
    } else {
        velocity_gaps(&e.as_contact().unwrap(), &nodes, &fx.prev, &layout).0
    };
    let sc = Scaling::from_cx(cx);
    let m = Multipliers::from_slice(&fx.mult);
    let (zn, zt) = (gaps.zeta_n(sc, m.lambda_n), gaps.zeta_t(sc, m.lambda_t));
    if zn <= 0.0 {
        Status::Gap
    } else if zt.norm() <= e.law().friction * zn {
        Status::Stick
    } else {
        Status::Slip
    }
}

/// Check the Hessians of `base` against central differences at the position level and at the
/// velocity level (closed and open at position level) for every sliding status (seeds from
/// `seed`).
pub(crate) fn check_every_status<G: UnilateralContact + Clone + 'static>(
    base: &ContactElement<G>,
    seed: u64,
) {
    for status in [Status::Gap, Status::Stick, Status::Slip] {
        let p = check(base, Level::Position, status, seed);
        let mut closed = base.clone();
        closed.history_mut().closed = true;
        let v = check(&closed, Level::Velocity, status, seed);
        let open = check(base, Level::Velocity, status, seed);
        eprintln!(
            "{} {status:?}: position {p:.1e}, velocity {v:.1e}, velocity (open at position) \
             {open:.1e}",
            base.type_name()
        );
        // Central differences with ε = 1e-6: truncation O(ε²) ≈ 1e-12 and round-off
        // ≈ 1e-16·|F|/ε ≈ 1e-9 for |F| ~ 1e2; 1e-6 still catches any missing term.
        assert!(
            p < 1e-6 && v < 1e-6 && open < 1e-6,
            "{status:?}: {p} {v} {open}"
        );
    }
}

/// Largest relative error of the Hessian of `e` at `level` against central differences over
/// four random fixtures (seeds from `seed`) whose multipliers put it in `status`.
pub(crate) fn check<G: UnilateralContact + Clone + 'static>(
    e: &ContactElement<G>,
    level: Level,
    status: Status,
    seed: u64,
) -> f64 {
    let kinds = e.geometry().node_kinds().to_vec();
    let mut worst: f64 = 0.0;
    for k in 0..4 {
        let mut fx = LocalFixture::random(&kinds, e.n_mult(level), 0, 0.2, &mut Rng::new(seed + k));
        fx.mult = mults(status, e.n_mult(level));
        let cx = test_cx(level);
        if level == Level::Position || e.history().closed {
            assert_eq!(sliding_status(e, &cx, &fx), status, "seed {}", seed + k);
        }
        let rep = check_hessian(e, &cx, &fx, 1e-6).unwrap();
        worst = worst.max(rep.relative_error());
    }
    worst
}
