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
        parameters: (kind.example)(),
    };
    (kind.build)(&def, &BuildCx::new(&nodes)).map_err(|e| e.to_string())
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
    saltus_elements::link();
    let mut checked = 0;
    for kind in element_kinds() {
        let mut rng = Rng::new(0xBEEF ^ kind.type_name.len() as u64);
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
                &mut Rng::new(3),
            );
            let (nodes, tangents) = fx.states(&cx, &fx.incr);
            let s = saltus_core::LocalState {
                kinds: &fx.kinds,
                nodes: &nodes,
                prev: &fx.prev,
                smooth: if cx.motion() == saltus_core::StageMotion::Rates {
                    &nodes
                } else {
                    &fx.smooth
                },
                rot_tangent: &tangents,
                incr: &fx.incr,
                mult: &fx.mult,
                mult_smooth: &fx.mult_smooth,
            };
            let n = fx.n_unknowns();
            let eval = |full: bool| {
                let mut r = nalgebra::DVector::zeros(n);
                let mut h = nalgebra::DMatrix::zeros(n, n);
                let mut out = saltus_core::LocalSystem {
                    residual: r.rows_mut(0, n),
                    hessian: h.view_mut((0, 0), (n, n)),
                    reference: 0.0,
                };
                let mut sc = saltus_core::stage::Scratch::new(fx.kinds.len(), n);
                let f = if full {
                    saltus_core::stage::evaluate_element
                } else {
                    saltus_core::stage::evaluate_element_residual
                };
                f(element.as_ref(), &cx, &s, &mut out, &mut sc).unwrap();
                let reference = out.reference;
                (r, reference)
            };
            let (full, residual) = (eval(true), eval(false));
            assert_eq!(full, residual, "{} at {stage}", kind.type_name);
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} element stages checked");
}
