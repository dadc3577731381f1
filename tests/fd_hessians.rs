//! Finite-difference check of every registered element type at every level it implements.
//!
//! Generic over the registry: each type is built from its registered example parameters on
//! nodes of its example kinds placed at random positions and rotations, then the Hessian of
//! each level in `Level::DYNAMIC` + `Level::Static` that the element contributes to is compared
//! with central differences of its residual (`saltus_core::fd`) for several random states.

use saltus_core::fd::{check_hessian, test_cx, LocalFixture, Rng};
use saltus_core::registry::{element_kinds, ElementKind};
use saltus_core::stage::participates;
use saltus_core::{BuildCx, Element, ElementDef, Level, NodeDef, NodeState};

/// Central differences with ε = 1e-6: truncation O(ε²)·|r'''| ≈ 1e-12 and round-off
/// ≈ 1e-16·|r|/ε ≈ 1e-10 (1e-8 for |r| ≈ 1e2), so a relative error bound of 1e-6 leaves a wide
/// margin yet catches any missing Hessian term of relative size ≥ 1e-6.
const TOL: f64 = 1e-6;
const EPS: f64 = 1e-6;
const SEEDS: std::ops::Range<u64> = 1..7;

fn build_example(kind: &ElementKind, rng: &mut Rng) -> Result<Box<dyn Element>, String> {
    build_with(kind, rng, (kind.example)())
}

/// [`build_example`] with the parameters `parameters`.
fn build_with(
    kind: &ElementKind,
    rng: &mut Rng,
    parameters: serde_json::Value,
) -> Result<Box<dyn Element>, String> {
    let nodes: Vec<NodeDef> = kind
        .example_nodes
        .iter()
        .enumerate()
        .map(|(i, k)| NodeDef {
            name: format!("n{i}"),
            kind: *k,
            initial: NodeState::at(rng.vec3(1.0), rng.rotation()),
            fixed: false,
            motion: None,
        })
        .collect();
    let def = ElementDef {
        name: format!("example_{}", kind.type_name),
        type_name: kind.type_name.to_string(),
        nodes: nodes.iter().map(|n| n.name.clone()).collect(),
        parameters,
    };
    (kind.build)(&def, &BuildCx::new(&nodes)).map_err(|e| e.to_string())
}

/// The local state of `fx` at `nodes`: its smooth base is `nodes` itself for a stage that
/// moves the rates only (`rates`), else the fixture's smooth state.
fn local_state<'a>(
    fx: &'a LocalFixture,
    nodes: &'a [NodeState],
    tangents: &'a [nalgebra::Matrix3<f64>],
    rates: bool,
    admissible: bool,
) -> saltus_core::LocalState<'a> {
    saltus_core::LocalState {
        kinds: &fx.kinds,
        nodes,
        prev: &fx.prev,
        smooth: if rates { nodes } else { &fx.smooth },
        rot_tangent: tangents,
        incr: &fx.incr,
        mult: &fx.mult,
        mult_smooth: &fx.mult_smooth,
        admissible,
        memo: None,
        base: None,
    }
}

/// Evaluate `element` at `s` into fresh buffers, with its Hessian (`full`) or residual-only:
/// the residual, the convergence reference and the memo the evaluation recorded.
fn evaluate(
    element: &dyn Element,
    cx: &saltus_core::StepCx,
    s: &saltus_core::LocalState<'_>,
    full: bool,
) -> (nalgebra::DVector<f64>, f64, saltus_core::LevelMemo) {
    let (r, _, reference, memo) = evaluate_with_hessian(element, cx, s, full);
    (r, reference, memo)
}

/// [`evaluate`], also returning the local Hessian (zero for a residual-only evaluation).
fn evaluate_with_hessian(
    element: &dyn Element,
    cx: &saltus_core::StepCx,
    s: &saltus_core::LocalState<'_>,
    full: bool,
) -> Evaluated {
    let f = if full {
        saltus_core::stage::evaluate_element
    } else {
        saltus_core::stage::evaluate_element_residual
    };
    evaluate_by(f, element, cx, s)
}

/// Residual, local matrix, convergence reference and memo of one evaluation.
type Evaluated = (
    nalgebra::DVector<f64>,
    nalgebra::DMatrix<f64>,
    f64,
    saltus_core::LevelMemo,
);

/// Evaluate `element` at `s` with `f` into fresh buffers.
fn evaluate_by(
    f: saltus_core::stage::ElementEvaluation,
    element: &dyn Element,
    cx: &saltus_core::StepCx,
    s: &saltus_core::LocalState<'_>,
) -> Evaluated {
    let n: usize = s.kinds.iter().map(|k| k.ndof()).sum::<usize>() + s.mult.len();
    let mut r = nalgebra::DVector::zeros(n);
    let mut h = nalgebra::DMatrix::zeros(n, n);
    let mut out = saltus_core::LocalSystem {
        residual: r.rows_mut(0, n),
        hessian: h.view_mut((0, 0), (n, n)),
        reference: 0.0,
    };
    let mut sc = saltus_core::stage::Scratch::new(s.kinds.len(), n);
    f(element, cx, s, &mut out, &mut sc).unwrap();
    let reference = out.reference;
    (r, h, reference, sc.memo())
}

/// Every registered element type built from its example (random nodes, `seed`) at every stage
/// context it takes part in, with a random fixture (`fixture_seed`) and the node states and
/// rotation tangents of its increments: `f(type, element, stage, cx, fixture, nodes,
/// tangents)`.
fn for_each_stage_fixture(
    seed: u64,
    fixture_seed: u64,
    mut f: impl FnMut(
        &ElementKind,
        &dyn Element,
        &str,
        &saltus_core::StepCx,
        &LocalFixture,
        &[NodeState],
        &[nalgebra::Matrix3<f64>],
    ),
) {
    saltus_elements::link();
    for kind in element_kinds() {
        let mut rng = Rng::new(seed ^ kind.type_name.len() as u64);
        let element = build_example(kind, &mut rng).unwrap();
        for (stage, cx) in saltus_core::fd::stage_contexts() {
            if !participates(element.as_ref(), cx.level) {
                continue;
            }
            let fx = LocalFixture::random(
                kind.example_nodes,
                element.n_mult(cx.level),
                element.n_mult(Level::Smooth),
                0.3,
                &mut Rng::new(fixture_seed),
            );
            let (nodes, tangents) = fx.states(&cx, &fx.incr);
            f(kind, element.as_ref(), stage, &cx, &fx, &nodes, &tangents);
        }
    }
}

#[test]
fn every_registered_element_has_exact_hessians() {
    saltus_elements::link();
    let levels = [
        Level::Smooth,
        Level::Position,
        Level::Velocity,
        Level::Static,
    ];
    debug_assert_eq!(&levels[..3], &Level::DYNAMIC[..]);
    let mut table = vec![format!(
        "{:<22} {:<9} {:>12} {:>6}",
        "type", "level", "max rel err", "status"
    )];
    let mut failed = false;
    for kind in element_kinds() {
        let mut rng = Rng::new(0x5EED ^ kind.type_name.len() as u64);
        let element = match build_example(kind, &mut rng) {
            Ok(e) => e,
            Err(msg) => {
                failed = true;
                table.push(format!(
                    "{:<22} {:<9} build failed: {msg}",
                    kind.type_name, "-"
                ));
                continue;
            }
        };
        let n_mult_smooth = element.n_mult(Level::Smooth);
        for level in levels {
            if !participates(element.as_ref(), level) {
                continue;
            }
            let mut worst: f64 = 0.0;
            let mut error = None;
            // Random increments, and zero ones: the first iterate of a correction stage
            // (`q = q̃`, `v = ṽ`), where force differences vanish but their tangents do not.
            for (seed, first) in SEEDS.flat_map(|s| [(s, false), (s, true)]) {
                let mut fx = LocalFixture::random(
                    kind.example_nodes,
                    element.n_mult(level),
                    n_mult_smooth,
                    0.3,
                    &mut Rng::new(seed),
                );
                if first {
                    fx.incr.iter_mut().for_each(|d| d.fill(0.0));
                }
                match check_hessian(element.as_ref(), &test_cx(level), &fx, EPS) {
                    Ok(rep) => worst = worst.max(rep.relative_error()),
                    Err(e) => {
                        error = Some(format!("seed {seed}: {e}"));
                        break;
                    }
                }
            }
            let ok = error.is_none() && worst < TOL;
            failed |= !ok;
            table.push(format!(
                "{:<22} {:<9} {:>12.3e} {:>6}{}",
                kind.type_name,
                level.name(),
                worst,
                if ok { "ok" } else { "FAIL" },
                error.map(|e| format!("  ({e})")).unwrap_or_default()
            ));
        }
    }
    let table = table.join("\n");
    println!("{table}");
    assert!(!failed, "finite-difference Hessian check failed:\n{table}");
}

/// Residual-only evaluation (line search) gives exactly the residual and the convergence
/// reference of the full evaluation, for every registered element at every stage.
#[test]
fn residual_only_evaluation_matches_the_full_one() {
    let mut checked = 0;
    for_each_stage_fixture(
        0xBEEF,
        3,
        |kind, element, stage, cx, fx, nodes, tangents| {
            let rates = cx.motion() == saltus_core::StageMotion::Rates;
            let s = local_state(fx, nodes, tangents, rates, true);
            let eval = |full: bool| {
                let (r, reference, _) = evaluate(element, cx, &s, full);
                (r, reference)
            };
            let (full, residual) = (eval(true), eval(false));
            assert_eq!(full, residual, "{} at {stage}", kind.type_name);
            checked += 1;
        },
    );
    assert!(checked > 20, "only {checked} element stages checked");
}

/// An element the residual-only assembly skips as inert (`saltus_core::stage::inert_residual`)
/// has an exactly zero residual and reference there, and the memo it records is the one the
/// evaluation records: for every registered element at every stage, at random states with and
/// without increments and multipliers (the first iterate of a correction has neither), open
/// and closed contacts, admissible or not. The skip must also happen (a body and an open
/// contact at the first iterate of a correction), so the check cannot pass vacuously. Where
/// `inert_residual_by_status` decides without the nodes' states (the assembly then does not
/// gather them), it must agree with `inert_residual`, memo included, and it must decide for
/// the sphere contacts at the velocity stage.
#[test]
fn inert_elements_have_exactly_zero_residuals() {
    saltus_elements::link();
    let mut skipped = std::collections::BTreeSet::new();
    let mut by_status_skipped = std::collections::BTreeSet::new();
    let mut checked = 0;
    for kind in element_kinds() {
        let element = build_example(kind, &mut Rng::new(0x1E ^ kind.type_name.len() as u64))
            .unwrap_or_else(|e| panic!("{}: {e}", kind.type_name));
        for (stage, cx) in saltus_core::fd::stage_contexts() {
            if !participates(element.as_ref(), cx.level) {
                continue;
            }
            for seed in 0..40u64 {
                let mut fx = LocalFixture::random(
                    kind.example_nodes,
                    element.n_mult(cx.level),
                    element.n_mult(Level::Smooth),
                    0.3,
                    &mut Rng::new(seed),
                );
                // Seeds alternate: increments zero or not, multipliers zero or not.
                if seed % 2 == 0 {
                    fx.incr.iter_mut().for_each(|d| d.fill(0.0));
                }
                if seed % 4 < 2 {
                    fx.mult.fill(0.0);
                }
                let (mut nodes, tangents) = fx.states(&cx, &fx.incr);
                // Rates stages move from the smooth configuration, except in every other
                // group of 8 seeds: a velocity stage after a position correction, whose
                // configuration is no longer the smooth one.
                let rates = cx.motion() == saltus_core::StageMotion::Rates && seed % 16 < 8;
                if cx.motion() == saltus_core::StageMotion::Rates && !rates {
                    for n in &mut nodes {
                        n.x += nalgebra::Vector3::new(1e-3, -2e-3, 5e-4);
                        n.r =
                            saltus_core::lie::exp(&nalgebra::Vector3::new(2e-3, 1e-3, -1e-3)) * n.r;
                    }
                }
                let s = local_state(&fx, &nodes, &tangents, rates, seed % 8 < 4);
                let full = saltus_core::stage::inert_residual(element.as_ref(), &cx, &s);
                // Decided before the gather, from multipliers and statuses alone: the same
                // answer and memo as with the state.
                let by_status = saltus_core::stage::inert_residual_by_status(
                    element.as_ref(),
                    &cx,
                    s.mult,
                    s.admissible,
                );
                if let Some(early) = by_status {
                    let what = format!("{} at {stage}, seed {seed}", kind.type_name);
                    let full = full.unwrap_or_else(|| panic!("{what}: inert by status only"));
                    assert_eq!(early.level, full.level, "{what}: early memo level");
                    let bits = |m: [f64; 4]| m.map(f64::to_bits);
                    assert_eq!(bits(early.values), bits(full.values), "{what}: early memo");
                    by_status_skipped.insert((kind.type_name, cx.level.name()));
                }
                let Some(memo) = full else {
                    continue;
                };
                let (r, reference, evaluated) = evaluate(element.as_ref(), &cx, &s, false);
                let what = format!("{} at {stage}, seed {seed}", kind.type_name);
                assert_eq!(reference, 0.0, "{what}: reference");
                assert!(r.iter().all(|&x| x == 0.0), "{what}: residual {r}");
                let (a, b) = (memo, evaluated);
                assert_eq!(a.level, b.level, "{what}: memo level");
                if a.level.is_some() {
                    let bits = |m: [f64; 4]| m.map(f64::to_bits);
                    assert_eq!(bits(a.values), bits(b.values), "{what}: memo values");
                }
                skipped.insert((kind.type_name, cx.level.name()));
                checked += 1;
            }
        }
    }
    println!("inert evaluations checked: {checked}; skipped element stages: {skipped:?}");
    for expected in [
        ("rigid_body", "position"),
        ("rigid_body", "velocity"),
        ("sphere_plane_contact", "position"),
        ("sphere_plane_contact", "velocity"),
    ] {
        assert!(skipped.contains(&expected), "{expected:?} never skipped");
    }
    println!("skipped before the gather: {by_status_skipped:?}");
    for expected in [
        ("sphere_plane_contact", "velocity"),
        ("sphere_sphere_contact", "velocity"),
    ] {
        assert!(
            by_status_skipped.contains(&expected),
            "{expected:?} never skipped by status"
        );
    }
}

/// The potential energy of every registered force element is the potential of its forces at
/// rest: `f = −∂V/∂q` under material variations (`x + ε e_k`, `R exp(ε e_k)`), by central
/// differences at random states with zero velocities (dampers then exert nothing). Exempt:
/// `nodal_load`, whose moment is a follower (non-conservative) load by design; elements without
/// a potential (`V ≡ 0`, e.g. a pure damper) are checked to exert no force at rest.
#[test]
fn potential_energy_is_the_potential_of_the_forces_at_rest() {
    use saltus_core::physics::{ForceTerms, PhysicsState};
    use saltus_core::{lie, NodeKind};
    saltus_elements::link();
    let mut checked = Vec::new();
    for kind in element_kinds() {
        if kind.type_name == "nodal_load" {
            continue;
        }
        let element = build_example(kind, &mut Rng::new(0xE0 ^ kind.type_name.len() as u64))
            .unwrap_or_else(|e| panic!("{}: {e}", kind.type_name));
        let Some(force) = element.as_force() else {
            continue;
        };
        let kinds = kind.example_nodes;
        let n: usize = kinds.iter().map(|k| k.ndof()).sum();
        for seed in SEEDS {
            let fx = LocalFixture::random(kinds, 0, 0, 0.3, &mut Rng::new(seed));
            let rest: Vec<NodeState> = fx.smooth.iter().map(|s| NodeState::at(s.x, s.r)).collect();
            fn ps<'a>(nodes: &'a [NodeState], kinds: &'a [NodeKind]) -> PhysicsState<'a> {
                PhysicsState {
                    nodes,
                    kinds,
                    t: 0.0,
                    load_factor: 1.0,
                    statics: false,
                    gravity: nalgebra::Vector3::new(0.3, -0.2, -9.81),
                    tangents: false,
                    stiffness: false,
                    damping: false,
                }
            }
            let mut f = vec![0.0; n];
            let (mut k, mut c) = (vec![0.0; n * n], vec![0.0; n * n]);
            let mut terms = ForceTerms {
                f: nalgebra::DVectorViewMut::from_slice(&mut f, n),
                stiffness: nalgebra::DMatrixViewMut::from_slice(&mut k, n, n),
                damping: nalgebra::DMatrixViewMut::from_slice(&mut c, n, n),
            };
            force.force(&ps(&rest, kinds), &mut terms).unwrap();
            let mut worst: f64 = 0.0;
            let mut scale: f64 = 0.0;
            let mut o = 0;
            for (i, k) in kinds.iter().enumerate() {
                for d in 0..k.ndof() {
                    let v = |sign: f64| {
                        let mut q = rest.clone();
                        if d < 3 {
                            q[i].x[d] += sign * EPS;
                        } else {
                            let e = nalgebra::Vector3::ith(d - 3, sign * EPS);
                            q[i].r *= lie::exp(&e);
                        }
                        force.potential_energy(&ps(&q, kinds))
                    };
                    let grad = (v(1.0) - v(-1.0)) / (2.0 * EPS);
                    worst = worst.max((f[o + d] + grad).abs());
                    scale = scale.max(f[o + d].abs());
                }
                o += k.ndof();
            }
            // Central differences (ε = 1e-6): truncation ~1e-12·|V'''|, round-off ~1e-16·|V|/ε.
            assert!(
                worst <= 1e-6 * (1.0 + scale),
                "{} seed {seed}: |f + ∂V/∂q| = {worst:e} (|f| {scale:e})",
                kind.type_name
            );
        }
        checked.push(kind.type_name);
    }
    eprintln!("potential energy consistent with the forces: {checked:?}");
    for t in [
        "beam",
        "rigid_body",
        "point_mass",
        "spring_damper",
        "torsional_spring",
    ] {
        assert!(checked.contains(&t), "{t} not checked");
    }
}

/// The smooth-state terms a scheme evaluates once per step (`saltus_core::stage::base_terms`,
/// `LocalState::base`) leave every registered element's residual, Hessian and convergence
/// reference unchanged, bit for bit, at the difference stages (position and velocity
/// corrections), for random increments and for the zero ones of a correction's start.
#[test]
fn base_terms_of_the_step_leave_every_element_unchanged() {
    saltus_elements::link();
    let mut checked = 0;
    for kind in element_kinds() {
        let mut rng = Rng::new(0xBA5E ^ kind.type_name.len() as u64);
        let element = build_example(kind, &mut rng).unwrap();
        for level in [Level::Position, Level::Velocity] {
            if !participates(element.as_ref(), level) {
                continue;
            }
            let cx = test_cx(level);
            for (seed, first) in [(5, false), (6, true)] {
                let mut fx = LocalFixture::random(
                    kind.example_nodes,
                    element.n_mult(level),
                    element.n_mult(Level::Smooth),
                    0.3,
                    &mut Rng::new(seed),
                );
                if first {
                    fx.incr.iter_mut().for_each(|d| d.fill(0.0));
                }
                let (nodes, tangents) = fx.states(&cx, &fx.incr);
                let s = local_state(&fx, &nodes, &tangents, false, true);
                let n: usize = s.kinds.iter().map(|k| k.ndof()).sum();
                let mut base = vec![f64::NAN; 3 * n];
                let mut sc = saltus_core::stage::Scratch::new(s.kinds.len(), n);
                saltus_core::stage::base_terms(element.as_ref(), &cx, &s, &mut base, &mut sc)
                    .unwrap();
                let cached = saltus_core::LocalState {
                    base: Some(saltus_core::BaseTerms {
                        inertial: &base[..n],
                        force: &base[n..2 * n],
                        reaction: &base[2 * n..],
                        frozen_force: None,
                    }),
                    ..s
                };
                let full = |s: &saltus_core::LocalState<'_>| {
                    let (r, h, reference, _) =
                        evaluate_with_hessian(element.as_ref(), &cx, s, true);
                    (r, h, reference)
                };
                let what = format!("{} at {}, seed {seed}", kind.type_name, level.name());
                assert_eq!(full(&s), full(&cached), "{what}");
                // The step's terms themselves: finite, and the applied forces and constraint
                // reactions nonzero where the element has them (a random state and random
                // smooth multipliers carry both; an inertial force may vanish, e.g. a point
                // mass's).
                assert!(base.iter().all(|v| v.is_finite()), "{what}: {base:?}");
                let nonzero = |v: &[f64]| v.iter().any(|&x| x != 0.0);
                if element.as_force().is_some() {
                    assert!(nonzero(&base[n..2 * n]), "{what}: no force");
                }
                if element.as_constraint().is_some() {
                    assert!(nonzero(&base[2 * n..]), "{what}: no reaction");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} element stages checked");
}

/// A force of the configuration alone (an undamped beam, spring or torsional spring) is
/// constant over NSGA's velocity jump, which holds the configuration: its `f(q)` evaluated
/// once, at one velocity (`saltus_core::stage::frozen_force`, `BaseTerms::frozen_force`),
/// leaves the element's residual, Hessian and convergence reference unchanged, bit for bit, at
/// another velocity. The damped examples, and the position stage (which moves the
/// configuration), take none.
#[test]
fn frozen_forces_of_the_velocity_jump_leave_undamped_elements_unchanged() {
    saltus_elements::link();
    let undamped = [
        ("beam", serde_json::json!({ "alpha": 0.0, "beta": 0.0 })),
        ("spring_damper", serde_json::json!({ "damping": 0.0 })),
        ("torsional_spring", serde_json::json!({ "damping": 0.0 })),
    ];
    let mut checked = 0;
    for (type_name, overrides) in &undamped {
        let kind = *element_kinds()
            .iter()
            .find(|k| k.type_name == *type_name)
            .unwrap_or_else(|| panic!("{type_name} not registered"));
        let mut params = (kind.example)();
        for (key, value) in overrides.as_object().unwrap() {
            params[key] = value.clone();
        }
        let mut rng = Rng::new(0xF0 ^ type_name.len() as u64);
        let damped = build_example(kind, &mut rng).unwrap();
        let mut rng = Rng::new(0xF0 ^ type_name.len() as u64);
        let element = build_with(kind, &mut rng, params).unwrap();
        for level in [Level::Position, Level::Velocity] {
            let cx = test_cx(level);
            let fx = LocalFixture::random(
                kind.example_nodes,
                element.n_mult(level),
                element.n_mult(Level::Smooth),
                0.3,
                &mut Rng::new(11),
            );
            // Two iterates of the stage: the frozen force is taken at the first.
            let other: Vec<_> = fx.incr.iter().map(|u| u * -0.7).collect();
            let (mut nodes, tangents) = fx.states(&cx, &fx.incr);
            let (mut nodes2, tangents2) = fx.states(&cx, &other);
            if level == Level::Velocity {
                // The jump's configuration is the position correction's, not the smooth one.
                let (moved, _) = fx.states(&test_cx(Level::Position), &fx.incr);
                for (a, m) in nodes
                    .iter_mut()
                    .chain(nodes2.iter_mut())
                    .zip(moved.iter().cycle())
                {
                    (a.x, a.r) = (m.x, m.r);
                }
            }
            let s = local_state(&fx, &nodes, &tangents, false, true);
            let s2 = local_state(&fx, &nodes2, &tangents2, false, true);
            let n: usize = s.kinds.iter().map(|k| k.ndof()).sum();
            let mut sc = saltus_core::stage::Scratch::new(s.kinds.len(), n);
            let mut frozen = vec![f64::NAN; n];
            let what = format!("{type_name} at {}", level.name());
            let taken = |e: &dyn Element, frozen: &mut [f64], sc: &mut _| {
                saltus_core::stage::frozen_force(e, &cx, &s, frozen, sc).unwrap()
            };
            assert!(
                !taken(damped.as_ref(), &mut frozen, &mut sc),
                "damped {what}"
            );
            if level == Level::Position {
                assert!(!taken(element.as_ref(), &mut frozen, &mut sc), "{what}");
                continue;
            }
            // The configuration is the same at both iterates, the velocities are not.
            assert!(nodes
                .iter()
                .zip(&nodes2)
                .all(|(a, b)| a.x == b.x && a.r == b.r));
            assert!(nodes.iter().zip(&nodes2).any(|(a, b)| a.v != b.v), "{what}");
            assert!(taken(element.as_ref(), &mut frozen, &mut sc), "{what}");
            assert!(frozen.iter().any(|&f| f != 0.0), "{what}: {frozen:?}");
            let mut base = vec![f64::NAN; 3 * n];
            saltus_core::stage::base_terms(element.as_ref(), &cx, &s2, &mut base, &mut sc).unwrap();
            let terms = saltus_core::BaseTerms {
                inertial: &base[..n],
                force: &base[n..2 * n],
                reaction: &base[2 * n..],
                frozen_force: None,
            };
            let cached = saltus_core::LocalState {
                base: Some(terms),
                ..s2
            };
            let cached_frozen = saltus_core::LocalState {
                base: Some(saltus_core::BaseTerms {
                    frozen_force: Some(&frozen),
                    ..terms
                }),
                ..s2
            };
            let full = |s: &saltus_core::LocalState<'_>| {
                evaluate_with_hessian(element.as_ref(), &cx, s, true)
            };
            let (r, h, reference, _) = full(&cached_frozen);
            let (r0, h0, reference0, _) = full(&cached);
            assert_eq!((r, h, reference), (r0, h0, reference0), "{what}");
            // And the evaluation does take it: a doubled frozen force shows in the residual.
            let doubled: Vec<f64> = frozen.iter().map(|f| 2.0 * f).collect();
            let cached_doubled = saltus_core::LocalState {
                base: Some(saltus_core::BaseTerms {
                    frozen_force: Some(&doubled),
                    ..terms
                }),
                ..s2
            };
            assert_ne!(
                full(&cached_doubled).0,
                full(&cached).0,
                "{what}: frozen force not taken"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 3);
}

/// The iteration matrix of first-order constraint kinematics
/// (`MatrixTerms::FirstOrderConstraints`, NSGA's first position corrections) differs from the
/// exact Hessian by the constraint curvature alone, for every registered element at every
/// stage: the same residual and reference (bit for bit); the same matrix for elements without
/// bilateral constraints and at stages that do not move the configuration; and at the
/// position level, the exact matrix minus the first-order one is `−(Σ_j M_j H_j) T` on the
/// node × node block (`M = k ν − p g + w k_s λ̃`, `H_j` from the joint's own kinematics, `T`
/// the rotation tangents), zero elsewhere. The difference must be nonzero for some joint, so
/// the check cannot pass vacuously.
#[test]
fn first_order_matrix_leaves_out_exactly_the_constraint_curvature() {
    use saltus_core::constraint::{KinCx, Layout};
    let mut curved = 0;
    for_each_stage_fixture(0xF1, 11, |kind, element, stage, cx, fx, nodes, tangents| {
        let rates = cx.motion() == saltus_core::StageMotion::Rates;
        let s = local_state(fx, nodes, tangents, rates, true);
        let what = format!("{} at {stage}", kind.type_name);
        let (r, h, reference, _) = evaluate_with_hessian(element, cx, &s, true);
        let first_order = saltus_core::stage::evaluate_element_first_order;
        let (r1, h1, reference1, _) = evaluate_by(first_order, element, cx, &s);
        assert_eq!((&r, reference), (&r1, reference1), "{what}: residual");
        let constraint = element.as_constraint();
        if constraint.is_none() || cx.dq_dv == 0.0 {
            assert_eq!(h, h1, "{what}: matrix");
            return;
        }
        if cx.level != Level::Position {
            return;
        }
        let c = constraint.unwrap();
        let layout = Layout::new(c.node_kinds());
        let (n, m) = (layout.n(), c.n_constraints());
        let kin = KinCx::new(nodes, cx.t, &layout).kinematics(c);
        let weights: Vec<f64> = (0..m)
            .map(|j| {
                cx.k * fx.mult[j] - cx.p * kin.g()[j] + cx.force_weight * cx.k_s * fx.mult_smooth[j]
            })
            .collect();
        // −∂q/∂u (Σ_j M_j H_j) T: rotational columns of frame nodes times their tangent.
        let mut expected = -kin.d_gqt_mu(&weights) * cx.dq_dv;
        for (i, t) in tangents.iter().enumerate().take(layout.kinds().len()) {
            if layout.is_frame(i) {
                let o = layout.offset(i) + 3;
                let cols = expected.fixed_columns::<3>(o) * t;
                expected.fixed_columns_mut::<3>(o).copy_from(&cols);
            }
        }
        let diff = &h - &h1;
        let scale = 1.0 + h.amax();
        for a in 0..n + m {
            for b in 0..n + m {
                let want = if a < n && b < n {
                    expected[(a, b)]
                } else {
                    0.0
                };
                // Round-off of the assembled sums: entries of size `scale`, a few terms.
                assert!(
                    (diff[(a, b)] - want).abs() <= 1e-13 * scale,
                    "{what}: entry ({a}, {b}) differs by {} instead of {want}",
                    diff[(a, b)]
                );
            }
        }
        if expected.amax() > 1e-3 * scale {
            curved += 1;
        }
    });
    assert!(curved >= 3, "only {curved} joints with a curvature term");
}
