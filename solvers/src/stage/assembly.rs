//! Assembly of a stage: every element taking part evaluated at the current state
//! (`saltus_core::stage::evaluate_element`), checked and scattered into the stage's pattern,
//! sequentially or on the state's thread pool (bit-identical).

use super::{ResidualNorms, Stage, PARALLEL_MIN_ELEMENTS};
use crate::error::SolveError;
use crate::state::State;
use saltus_core::stage::{
    all_finite, evaluate_element, evaluate_element_first_order, evaluate_element_residual,
    inert_residual, inert_residual_by_status, MatrixTerms,
};
use saltus_core::{LocalSystem, Model, StepCx};

impl Stage {
    /// Assemble the stage's residual and iteration matrix at the current state. `smooth` gives
    /// the stage whose multipliers elements read as `mult_smooth` (NSGA's smooth stage for the
    /// corrections; `None`: this stage's own).
    pub fn assemble(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        step: usize,
        smooth: Option<&Stage>,
    ) -> Result<ResidualNorms, SolveError> {
        self.assemble_with(model, state, cx, step, smooth, MatrixTerms::Exact)
    }

    /// [`Stage::assemble`] of the residual only (the matrix values are left as they are): what
    /// a line-search backtrack or a convergence check needs. Same residual and reference.
    pub fn assemble_residual(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        step: usize,
        smooth: Option<&Stage>,
    ) -> Result<ResidualNorms, SolveError> {
        self.assemble_with(model, state, cx, step, smooth, MatrixTerms::None)
    }

    /// [`Stage::assemble`] with the iteration matrix `terms` (the residual is the same).
    pub(super) fn assemble_with(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        step: usize,
        smooth: Option<&Stage>,
        terms: MatrixTerms,
    ) -> Result<ResidualNorms, SolveError> {
        if terms != MatrixTerms::None && !self.settling {
            self.full_pattern(model, state);
        }
        if state.parallel.is_some() && model.elements().len() >= PARALLEL_MIN_ELEMENTS {
            return self.assemble_parallel(model, state, cx, step, smooth, terms);
        }
        let hessian = terms != MatrixTerms::None;
        let Self {
            system,
            mult,
            r_loc,
            h_loc,
            admissible,
            constant,
            memos,
            inert_candidates,
            ..
        } = self;
        if hessian {
            system.zero();
        } else {
            system.zero_rhs();
        }
        let evaluate = evaluator(terms);
        let mut reference = 0.0;
        let smooth_is_cur = smooth.is_none();
        for (ie, element) in model.elements().iter().enumerate() {
            if !system.active[ie] {
                continue;
            }
            let (m0, m) = system.mult_range[ie];
            let own = &mult[m0..m0 + m];
            let mult_smooth = match smooth {
                Some(s) => s.element_multipliers(ie),
                None => own,
            };
            if cx.force_difference {
                state
                    .ensure_base_terms(model, ie, cx, mult_smooth)
                    .and_then(|()| state.ensure_frozen_force(model, ie, cx))
                    .map_err(|source| element_error(model, ie, cx, step, source))?;
            }
            // An inert contact known from its multipliers and statuses: not even gathered.
            if !hessian && inert_candidates[ie] {
                if let Some(memo) =
                    inert_residual_by_status(element.as_ref(), cx, own, admissible[ie])
                {
                    memos[ie] = memo;
                    continue;
                }
            }
            let nn = state.gather(model, ie);
            let n = system.local_size(ie);
            let result = {
                let (arrays, gathered, scratch, base) = state.parts_with_base();
                let base = base.base_terms(ie);
                let local = gathered.local(
                    arrays,
                    nn,
                    smooth_is_cur,
                    own,
                    mult_smooth,
                    admissible[ie],
                    base,
                );
                // An element whose residual is exactly zero here adds nothing: no evaluation,
                // no scatter (e.g. an open contact in a correction's convergence check).
                if !hessian && inert_candidates[ie] {
                    if let Some(memo) = inert_residual(element.as_ref(), cx, &local) {
                        memos[ie] = memo;
                        continue;
                    }
                }
                // Zero the top-left n×n block column by column on the raw column-major
                // storage (a residual-only evaluation adds nothing to it, and it is not read).
                if hessian {
                    let ld = h_loc.nrows();
                    let hs = h_loc.as_mut_slice();
                    for j in 0..n {
                        hs[j * ld..j * ld + n].fill(0.0);
                    }
                }
                r_loc.as_mut_slice()[..n].fill(0.0);
                let mut out = LocalSystem {
                    residual: r_loc.rows_mut(0, n),
                    hessian: h_loc.view_mut((0, 0), (n, n)),
                    reference: 0.0,
                };
                let result = evaluate(element.as_ref(), cx, &local, &mut out, scratch);
                memos[ie] = scratch.memo();
                result.map(|()| out.reference)
            };
            let extra = result.map_err(|source| element_error(model, ie, cx, step, source))?;
            let rn = element_norm(&r_loc.as_slice()[..n]);
            let ld = h_loc.nrows();
            let hs = h_loc.as_slice();
            let finite = !hessian || (0..n).all(|j| all_finite(&hs[j * ld..j * ld + n]));
            if !rn.is_finite() || !finite {
                return Err(SolveError::NonFinite {
                    step,
                    t: cx.t,
                    level: cx.level,
                    what: format!("element `{}`", model.element_names()[ie]),
                });
            }
            reference += rn + extra;
            system.scatter(ie, r_loc, hessian.then_some(&*h_loc));
        }
        reference += add_constant(&mut system.rhs, constant);
        let norm = norm2(&system.rhs);
        Ok(ResidualNorms { norm, reference })
    }

    /// [`Stage::assemble`] with the elements evaluated on the state's thread pool into their own
    /// local buffers, then checked and scattered in element order (bit-identical to the
    /// sequential assembly for any thread count).
    fn assemble_parallel(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        step: usize,
        smooth: Option<&Stage>,
        terms: MatrixTerms,
    ) -> Result<ResidualNorms, SolveError> {
        use rayon::prelude::*;
        let hessian = terms != MatrixTerms::None;
        // The step's base terms (and the stage's frozen forces) this assembly needs,
        // sequentially before the parallel loop.
        if cx.force_difference {
            for ie in 0..model.elements().len() {
                if !self.system.active[ie] {
                    continue;
                }
                let (m0, m) = self.system.mult_range[ie];
                let mult_smooth = match smooth {
                    Some(s) => s.element_multipliers(ie),
                    None => &self.mult[m0..m0 + m],
                };
                state
                    .ensure_base_terms(model, ie, cx, mult_smooth)
                    .and_then(|()| state.ensure_frozen_force(model, ie, cx))
                    .map_err(|source| element_error(model, ie, cx, step, source))?;
            }
        }
        let ml = self.system.max_local;
        let stride = 1 + ml + ml * ml;
        let n_el = model.elements().len();
        if self.local.len() < n_el * stride {
            self.local.resize(n_el * stride, 0.0);
        }
        let Self {
            system,
            mult,
            local,
            admissible,
            constant,
            memos,
            inert_candidates,
            ..
        } = self;
        let smooth_is_cur = smooth.is_none();
        let arrays = state.arrays();
        let base = state.base_cache();
        let Some(par) = state.parallel.as_ref() else {
            unreachable!("checked by the caller");
        };
        let first_error = std::sync::Mutex::new(None::<(usize, saltus_core::ElementError)>);
        {
            let system = &*system;
            let mult = &*mult;
            let admissible = &*admissible;
            let inert_candidates = &*inert_candidates;
            par.pool.install(|| {
                local[..n_el * stride]
                    .par_chunks_mut(stride)
                    .zip(memos[..n_el].par_iter_mut())
                    .enumerate()
                    .with_min_len(8)
                    .for_each(|(ie, (buf, memo))| {
                        if !system.active[ie] {
                            return;
                        }
                        let thread = rayon::current_thread_index().unwrap_or(0);
                        let mut worker = par.workers[thread]
                            .lock()
                            .unwrap_or_else(|e| e.into_inner());
                        let worker = &mut *worker;
                        let element = &model.elements()[ie];
                        let n = system.local_size(ie);
                        let (head, rest) = buf.split_at_mut(1);
                        let (r, h) = rest.split_at_mut(ml);
                        let (r, h) = (&mut r[..n], &mut h[..n * n]);
                        r.fill(0.0);
                        if hessian {
                            h.fill(0.0);
                        }
                        let (m0, m) = system.mult_range[ie];
                        let own = &mult[m0..m0 + m];
                        let mult_smooth = match smooth {
                            Some(s) => s.element_multipliers(ie),
                            None => own,
                        };
                        if !hessian && inert_candidates[ie] {
                            // Inert from its multipliers and statuses: not even gathered.
                            let early =
                                inert_residual_by_status(element.as_ref(), cx, own, admissible[ie]);
                            if let Some(m) = early {
                                *memo = m;
                                head[0] = 0.0;
                                return;
                            }
                        }
                        let nn = worker.gathered.gather(arrays, element.nodes());
                        let local = worker.gathered.local(
                            arrays,
                            nn,
                            smooth_is_cur,
                            own,
                            mult_smooth,
                            admissible[ie],
                            base.base_terms(ie),
                        );
                        let mut out = LocalSystem {
                            residual: nalgebra::DVectorViewMut::from_slice(r, n),
                            hessian: nalgebra::DMatrixViewMut::from_slice(h, n, n),
                            reference: 0.0,
                        };
                        if !hessian && inert_candidates[ie] {
                            // Exactly zero residual: scattered as the zeros `r` holds.
                            if let Some(m) = inert_residual(element.as_ref(), cx, &local) {
                                *memo = m;
                                head[0] = 0.0;
                                return;
                            }
                        }
                        let evaluate = evaluator(terms);
                        let result =
                            evaluate(element.as_ref(), cx, &local, &mut out, &mut worker.scratch);
                        *memo = worker.scratch.memo();
                        match result {
                            Ok(()) => head[0] = out.reference,
                            Err(e) => {
                                let mut first =
                                    first_error.lock().unwrap_or_else(|e| e.into_inner());
                                if first.as_ref().is_none_or(|(i, _)| ie < *i) {
                                    *first = Some((ie, e));
                                }
                            }
                        }
                    });
            });
        }
        if let Some((ie, source)) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(element_error(model, ie, cx, step, source));
        }
        if hessian {
            system.zero();
        } else {
            system.zero_rhs();
        }
        let mut reference = 0.0;
        for ie in 0..n_el {
            if !system.active[ie] {
                continue;
            }
            let n = system.local_size(ie);
            let buf = &local[ie * stride..(ie + 1) * stride];
            let (r, h) = (&buf[1..1 + n], &buf[1 + ml..1 + ml + n * n]);
            let rn = element_norm(r);
            if !rn.is_finite() || (hessian && !all_finite(h)) {
                return Err(SolveError::NonFinite {
                    step,
                    t: cx.t,
                    level: cx.level,
                    what: format!("element `{}`", model.element_names()[ie]),
                });
            }
            reference += rn + buf[0];
            if hessian {
                system.scatter_slices(ie, r, h);
            } else {
                system.scatter_residual(ie, r);
            }
        }
        reference += add_constant(&mut system.rhs, constant);
        let norm = norm2(&system.rhs);
        Ok(ResidualNorms { norm, reference })
    }
}

/// Add the constant node-row term `c` (if any) to the residual `rhs`; returns `‖c‖` for the
/// convergence reference.
fn add_constant(rhs: &mut [f64], c: &[f64]) -> f64 {
    if c.is_empty() {
        return 0.0;
    }
    for (r, v) in rhs.iter_mut().zip(c) {
        *r += v;
    }
    norm2(c)
}

/// Euclidean norm of an assembled residual, summed in index order.
fn norm2(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The error of element `ie` at the stage `cx`, step `step`.
fn element_error(
    model: &Model,
    ie: usize,
    cx: &StepCx,
    step: usize,
    source: saltus_core::ElementError,
) -> SolveError {
    SolveError::Element {
        step,
        t: cx.t,
        level: cx.level,
        element: model.element_names()[ie].clone(),
        source,
    }
}

/// Euclidean norm of an element residual (nalgebra's kernel on a contiguous slice: the same
/// arithmetic in the sequential and parallel assemblies, so they agree to the bit).
fn element_norm(v: &[f64]) -> f64 {
    nalgebra::DVectorView::from_slice(v, v.len()).norm()
}

/// The element evaluation that adds `terms` to the local iteration matrix.
fn evaluator(terms: MatrixTerms) -> saltus_core::stage::ElementEvaluation {
    match terms {
        MatrixTerms::None => evaluate_element_residual,
        MatrixTerms::Exact => evaluate_element,
        MatrixTerms::FirstOrderConstraints => evaluate_element_first_order,
    }
}
