//! Finite-difference checks shared by the contact elements' unit tests: multipliers that put a
//! random fixture in a given status, the status it lands in, and the Hessian check over seeds.

use super::element::ContactElement;
use nalgebra::{DMatrix, DVector};
use saltus_core::constraint::Layout;
use saltus_core::contact::law::{Multipliers, Scaling, SlidingGaps, Status};
use saltus_core::contact::{velocity_gaps, UnilateralContact};
use saltus_core::fd::{check_hessian, test_cx, LocalFixture, Rng};
use saltus_core::stage::{evaluate_element, evaluate_element_residual, Scratch};
use saltus_core::{Element, Level, LevelMemo, LocalState, LocalSystem, StepCx};

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
    check_memo_statuses(base, seed);
    check_linearization(base, seed);
}

/// Evaluate `e` at the stage `cx` and the local state `s` (`n` local unknowns): the residual,
/// the Hessian (zero unless `hessian`) and the memo the evaluation recorded.
fn evaluate_local<G: UnilateralContact + Clone + 'static>(
    e: &ContactElement<G>,
    cx: &StepCx,
    s: &LocalState<'_>,
    n: usize,
    hessian: bool,
) -> (DVector<f64>, DMatrix<f64>, LevelMemo) {
    let (mut r, mut h) = (DVector::zeros(n), DMatrix::zeros(n, n));
    let mut out = LocalSystem {
        residual: r.rows_mut(0, n),
        hessian: h.view_mut((0, 0), (n, n)),
        reference: 0.0,
    };
    let mut scratch = Scratch::new(s.kinds.len(), n);
    if hessian {
        evaluate_element(e, cx, s, &mut out, &mut scratch).unwrap();
    } else {
        evaluate_element_residual(e, cx, s, &mut out, &mut scratch).unwrap();
    }
    (r, h, scratch.memo())
}

/// `linearized_contact` (what the contact-space Gauss–Seidel reads) against the element's own
/// stage rows: where the sliding law sticks, the multiplier rows are `−κ ḡ` and their node
/// columns `−κ ∂ḡ/∂u`, so the linearization's gaps and Jacobian must be those rows over `−κ`
/// (position level, and velocity level closed at position level); open at position level the
/// contact takes no part at velocity level.
fn check_linearization<G: UnilateralContact + Clone + 'static>(
    base: &ContactElement<G>,
    seed: u64,
) {
    use saltus_core::stage::linearized_contact;
    let kinds = base.geometry().node_kinds().to_vec();
    let mut closed = base.clone();
    closed.history_mut().closed = true;
    for (e, level) in [(base, Level::Position), (&closed, Level::Velocity)] {
        let mut compared = 0;
        for k in 0..8 {
            let mut rng = Rng::new(seed + 31 * k);
            let n_mult = e.n_mult(level);
            let mut fx = LocalFixture::random(&kinds, n_mult, 0, 0.2, &mut rng);
            fx.mult = mults(Status::Stick, n_mult);
            let cx = test_cx(level);
            let (nodes, tangents) = fx.states(&cx, &fx.incr);
            let s = fx.local_state(&cx, &nodes, &tangents, &fx.incr, &fx.mult);
            let (r, h, memo) = evaluate_local(e, &cx, &s, fx.n_unknowns(), true);
            if memo.values[1] != Status::Stick.code() {
                continue;
            }
            let c = e.as_contact().unwrap();
            let lin = linearized_contact(&c, &cx, &s).unwrap().unwrap();
            let nx = lin.n;
            let mut err: f64 = 0.0;
            for i in 0..3 {
                err = err.max((lin.gaps[i] + r[nx + i] / cx.k).abs());
                for j in 0..nx {
                    err = err.max((lin.jacobian[(i, j)] + h[(nx + i, j)] / cx.k).abs());
                }
            }
            // The same gaps, gradients and column factors in both: equal to round-off.
            assert!(err < 1e-12, "{level:?} seed {}: {err:e}", seed + 31 * k);
            compared += 1;
        }
        assert!(compared > 0, "{level:?}: no fixture stuck");
        let open = base.clone();
        let c = open.as_contact().unwrap();
        let mut rng = Rng::new(seed);
        let fx = LocalFixture::random(&kinds, open.n_mult(Level::Velocity), 0, 0.2, &mut rng);
        let cx = test_cx(Level::Velocity);
        let (nodes, tangents) = fx.states(&cx, &fx.incr);
        let s = fx.local_state(&cx, &nodes, &tangents, &fx.incr, &fx.mult);
        assert!(linearized_contact(&c, &cx, &s).unwrap().is_none());
    }
}

/// The statuses `level_converged` takes from the memo of an evaluation equal those it
/// computes from the gathered state, at the position level and at the velocity level (closed
/// and open at position level), over every sliding status and random couple multipliers
/// (which put rolling and spinning in either status); the velocity level's load record with a
/// zero load tolerance and with one between the fixtures' slip (`λ_N` = 12) and stick (40)
/// multipliers.
pub(crate) fn check_memo_statuses<G: UnilateralContact + Clone + 'static>(
    base: &ContactElement<G>,
    seed: u64,
) {
    let kinds = base.geometry().node_kinds().to_vec();
    let mut closed = base.clone();
    closed.history_mut().closed = true;
    let mut seen = std::collections::HashSet::new();
    let mut loads = std::collections::HashSet::new();
    for (e, level, load_tolerance) in [
        (base, Level::Position, 0.0),
        (&closed, Level::Velocity, 0.0),
        (&closed, Level::Velocity, 20.0),
        (base, Level::Velocity, 0.0),
    ] {
        for status in [Status::Gap, Status::Stick, Status::Slip] {
            for k in 0..8 {
                let mut rng = Rng::new(seed + 17 * k);
                let n_mult = e.n_mult(level);
                let mut fx = LocalFixture::random(&kinds, n_mult, 0, 0.2, &mut rng);
                fx.mult = mults(status, n_mult);
                // Couple multipliers from small to large: rolling and spinning stick or slip.
                for m in fx.mult.iter_mut().skip(3) {
                    *m = 40.0 * rng.uniform() * (k as f64 / 7.0);
                }
                let cx = StepCx {
                    load_tolerance,
                    ..test_cx(level)
                };
                let (nodes, tangents) = fx.states(&cx, &fx.incr);
                let mut s = fx.local_state(&cx, &nodes, &tangents, &fx.incr, &fx.mult);
                let (_, _, memo) = evaluate_local(e, &cx, &s, fx.n_unknowns(), false);
                assert_eq!(memo.level, Some(level));
                let mut recomputed = e.clone();
                recomputed.level_converged(&cx, &s);
                s.memo = Some(&memo);
                let mut remembered = e.clone();
                remembered.level_converged(&cx, &s);
                assert_eq!(
                    remembered.history(),
                    recomputed.history(),
                    "{level:?} {status:?} seed {}",
                    seed + 17 * k
                );
                seen.insert(format!("{level:?} {:?}", recomputed.history().status));
                if level == Level::Velocity {
                    let loaded = recomputed.history().loaded();
                    loads.insert((load_tolerance.to_bits(), status as u8, loaded));
                }
            }
        }
    }
    // The fixtures cover closed and open, stick and slip (not a vacuous comparison).
    assert!(seen.len() >= 5, "{seen:?}");
    // The tolerance between slip and stick multipliers: slip unloaded, stick loaded.
    let t = 20.0f64.to_bits();
    assert!(loads.contains(&(t, Status::Stick as u8, true)), "{loads:?}");
    assert!(loads.contains(&(t, Status::Slip as u8, false)), "{loads:?}");
    assert!(loads.contains(&(0, Status::Slip as u8, true)), "{loads:?}");
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
