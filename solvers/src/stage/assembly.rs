//! Assembly of a stage: every element taking part evaluated at the current state
//! (`saltus_core::stage::evaluate_element`), checked and scattered into the stage's pattern,
//! sequentially or on the state's thread pool (bit-identical).

use super::{ResidualNorms, Stage, PARALLEL_MIN_ELEMENTS};
use crate::error::SolveError;
use crate::state::{ParallelAssembly, State};
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
        let clock = self.clock();
        // The path the state's pool and policy give.
        let result = 'path: {
            if state.parallel.is_none() || model.elements().len() < PARALLEL_MIN_ELEMENTS {
                break 'path self.assemble_sequential(model, state, cx, step, smooth, terms);
            }
            // The parallel path's buffer, sized at the first assembly on a pool whatever path
            // serves (not later, inside a step: a path chosen later allocates nothing).
            let (block, stride) = self.parallel_block(model.elements().len());
            if self.local.len() < block * stride {
                self.local.resize(block * stride, 0.0);
            }
            if state.parallel_assembly() == ParallelAssembly::Always {
                break 'path self.assemble_parallel(model, state, cx, step, smooth, terms);
            }
            // Both paths give the same result to the bit: the faster one measured serves.
            let kind = usize::from(terms != MatrixTerms::None);
            let parallel = self.path_choice[kind].next_is_parallel();
            let start = std::time::Instant::now();
            let result = if parallel {
                self.assemble_parallel(model, state, cx, step, smooth, terms)
            } else {
                self.assemble_sequential(model, state, cx, step, smooth, terms)
            };
            self.path_choice[kind].record(parallel, start.elapsed().as_secs_f64());
            result
        };
        self.lap(clock, |t| &mut t.assembly);
        if result.is_err() {
            // The paths leave different memos behind a failed element (the parallel one has
            // evaluated the rest of its block): neither describes a solution.
            self.memos_at_solution = false;
        }
        result
    }

    /// Elements per block of a parallel assembly of `n_el` elements, and the length of one
    /// element's local system in its buffer (`[reference, r (max), H (max²)]`). Elements are
    /// evaluated block by block, each block scattered before the next, so that the blocks'
    /// local systems stay in cache between their evaluation and their scatter (one buffer for
    /// every element, ~2.4 kB each, went to memory and back on large models).
    fn parallel_block(&self, n_el: usize) -> (usize, usize) {
        let ml = self.system.max_local;
        let stride = 1 + ml + ml * ml;
        let block = (PARALLEL_BLOCK_BYTES / (8 * stride))
            .clamp(16, PARALLEL_BLOCK_MAX)
            .min(n_el.max(1));
        (block, stride)
    }

    /// [`Stage::assemble_with`] on the calling thread.
    fn assemble_sequential(
        &mut self,
        model: &Model,
        state: &mut State,
        cx: &StepCx,
        step: usize,
        smooth: Option<&Stage>,
        terms: MatrixTerms,
    ) -> Result<ResidualNorms, SolveError> {
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
                    .ensure_element_terms(model, ie, cx, mult_smooth)
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

    /// [`Stage::assemble`] with the elements evaluated on the state's thread pool, a block at a
    /// time ([`Stage::parallel_block`]), into their own local buffers; each block then checked
    /// and scattered in element order before the next (bit-identical to the sequential
    /// assembly for any thread count, failing where it would).
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
        // sequentially before the parallel loop. One that fails is reported where the
        // sequential assembly would: after the elements before it (only those are evaluated).
        let mut base_error = None;
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
                if let Err(source) = state.ensure_element_terms(model, ie, cx, mult_smooth) {
                    base_error = Some((ie, source));
                    break;
                }
            }
        }
        let ml = self.system.max_local;
        let (block, stride) = self.parallel_block(model.elements().len());
        debug_assert!(self.local.len() >= block * stride, "sized by assemble_with");
        let n_el = base_error
            .as_ref()
            .map_or(model.elements().len(), |(ie, _)| *ie);
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
        if hessian {
            system.zero();
        } else {
            system.zero_rhs();
        }
        // One entry into the pool for the whole assembly (a scheme that runs its steps inside
        // the pool enters nothing here).
        let reference = par.pool.install(|| -> Result<f64, SolveError> {
            let mut reference = 0.0;
            for b0 in (0..n_el).step_by(block) {
                let b1 = (b0 + block).min(n_el);
                // The first evaluation error of the block (smallest element index).
                let first_error = std::sync::Mutex::new(None::<(usize, saltus_core::ElementError)>);
                {
                    let system = &*system;
                    let mult = &*mult;
                    let admissible = &*admissible;
                    let inert_candidates = &*inert_candidates;
                    let first_error = &first_error;
                    {
                        local[..(b1 - b0) * stride]
                            .par_chunks_mut(stride)
                            .zip(memos[b0..b1].par_iter_mut())
                            .enumerate()
                            .with_min_len(8)
                            .for_each_init(
                                // One worker per job (a run of elements on one thread), not a lock
                                // per element; a job runs to its end without waiting on another
                                // (elements do not call into rayon), so a thread never asks for a
                                // worker it holds.
                                || {
                                    let thread = rayon::current_thread_index().unwrap_or(0);
                                    par.workers[thread]
                                        .lock()
                                        .unwrap_or_else(|e| e.into_inner())
                                },
                                |worker, (k, (buf, memo))| {
                                    let ie = b0 + k;
                                    if !system.active[ie] {
                                        return;
                                    }
                                    let worker = &mut **worker;
                                    let element = &model.elements()[ie];
                                    let n = system.local_size(ie);
                                    let (head, rest) = buf.split_at_mut(1);
                                    let (m0, m) = system.mult_range[ie];
                                    let own = &mult[m0..m0 + m];
                                    let mult_smooth = match smooth {
                                        Some(s) => s.element_multipliers(ie),
                                        None => own,
                                    };
                                    if !hessian && inert_candidates[ie] {
                                        // Inert from its multipliers and statuses: not even
                                        // gathered.
                                        let early = inert_residual_by_status(
                                            element.as_ref(),
                                            cx,
                                            own,
                                            admissible[ie],
                                        );
                                        if let Some(m) = early {
                                            *memo = m;
                                            head[0] = INERT;
                                            return;
                                        }
                                    }
                                    let (r, h) = rest.split_at_mut(ml);
                                    let (r, h) = (&mut r[..n], &mut h[..n * n]);
                                    r.fill(0.0);
                                    if hessian {
                                        h.fill(0.0);
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
                                        // Exactly zero residual: nothing to scatter.
                                        if let Some(m) =
                                            inert_residual(element.as_ref(), cx, &local)
                                        {
                                            *memo = m;
                                            head[0] = INERT;
                                            return;
                                        }
                                    }
                                    let evaluate = evaluator(terms);
                                    let result = evaluate(
                                        element.as_ref(),
                                        cx,
                                        &local,
                                        &mut out,
                                        &mut worker.scratch,
                                    );
                                    *memo = worker.scratch.memo();
                                    match result {
                                        Ok(()) => {
                                            // A magnitude (≥ 0): never the inert marker.
                                            debug_assert!(out.reference != INERT);
                                            head[0] = out.reference;
                                        }
                                        Err(e) => {
                                            let mut first = first_error
                                                .lock()
                                                .unwrap_or_else(|e| e.into_inner());
                                            if first.as_ref().is_none_or(|(i, _)| ie < *i) {
                                                *first = Some((ie, e));
                                            }
                                        }
                                    }
                                },
                            );
                    }
                }
                let mut first_error = first_error.into_inner().unwrap_or_else(|e| e.into_inner());
                // Checked and scattered in element order, failing where the sequential assembly
                // would: at the first element that failed to evaluate or is not finite.
                for ie in b0..b1 {
                    if !system.active[ie] {
                        continue;
                    }
                    if first_error.as_ref().is_some_and(|(i, _)| *i == ie) {
                        let (ie, source) = first_error.take().expect("just matched");
                        return Err(element_error(model, ie, cx, step, source));
                    }
                    let n = system.local_size(ie);
                    let buf = &local[(ie - b0) * stride..(ie - b0 + 1) * stride];
                    if buf[0] == INERT {
                        continue; // as the sequential assembly: an inert element adds nothing
                    }
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
            }
            Ok(reference)
        })?;
        if let Some((ie, source)) = base_error {
            return Err(element_error(model, ie, cx, step, source));
        }
        let reference = reference + add_constant(&mut system.rhs, constant);
        let norm = norm2(&system.rhs);
        Ok(ResidualNorms { norm, reference })
    }
}

/// Which path serves a stage's assemblies of one kind (residual only, or with the iteration
/// matrix) when the state has a thread pool ([`ParallelAssembly::Adaptive`]). The two give the
/// same result to the bit, so the choice is by time alone, and results do not depend on it:
/// [`PATH_WINDOW`] consecutive assemblies on the sequential path, as many on the parallel
/// one, then the faster on average serves the next [`PATH_SERVES`] before both are measured
/// again (the work per element changes as contacts come and go). Consecutive, not alternating:
/// between two parallel assemblies the pool's threads stay awake, and alternating trials
/// measured each parallel one with a cold start (a beam of 1 000 elements: equal times in
/// trials, 1.3 × faster in parallel over a run). Element evaluation in parallel pays where
/// elements are costly (geometrically exact beams) and costs more than it saves where they
/// are cheap against the hand-off between threads (rigid links, contacts).
///
/// [`ParallelAssembly::Adaptive`]: crate::state::ParallelAssembly::Adaptive
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PathChoice {
    /// Total time \[s\] of the sequential (0) and parallel (1) assemblies of the window.
    total: [f64; 2],
    /// Assemblies measured so far in the window, on each path.
    count: [u32; 2],
    /// The path serving (`true`: parallel) after a window.
    parallel: Option<bool>,
    /// Assemblies served since the choice.
    served: u32,
}

/// Consecutive assemblies per path in a [`PathChoice`]'s measuring window.
const PATH_WINDOW: u32 = 32;

/// Assemblies a [`PathChoice`] serves before both paths are measured again.
const PATH_SERVES: u32 = 2_000;

impl PathChoice {
    /// Whether the next assembly runs in parallel: the chosen path, else the sequential path
    /// until its part of the window is measured, then the parallel one.
    fn next_is_parallel(&self) -> bool {
        self.parallel.unwrap_or(self.count[0] >= PATH_WINDOW)
    }

    /// Record an assembly on the path `parallel` that took `secs`.
    fn record(&mut self, parallel: bool, secs: f64) {
        if self.parallel.is_some() {
            self.served += 1;
            if self.served >= PATH_SERVES {
                *self = Self::default();
            }
            return;
        }
        let k = usize::from(parallel);
        self.total[k] += secs;
        self.count[k] += 1;
        if self.count.iter().all(|&c| c >= PATH_WINDOW) {
            self.parallel = Some(self.total[1] < self.total[0]);
        }
    }
}

/// Bytes of local systems a parallel assembly evaluates before it scatters them (a block of
/// elements that stays in a core's cache).
const PARALLEL_BLOCK_BYTES: usize = 1024 * 1024;

/// Most elements per block of a parallel assembly (what the bytes allow for 12- to 17-unknown
/// elements: beams, joints, contacts).
const PARALLEL_BLOCK_MAX: usize = 512;

/// Marks an element's buffer in [`Stage::assemble_parallel`] as inert (residual exactly zero,
/// nothing scattered); no evaluation's reference is −∞.
const INERT: f64 = f64::NEG_INFINITY;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `choice` the times `seq` and `par` \[s\] for whichever path it asks, `n` times;
    /// returns how many assemblies ran in parallel.
    fn feed(choice: &mut PathChoice, seq: f64, par: f64, n: u32) -> u32 {
        let mut parallel = 0;
        for _ in 0..n {
            let p = choice.next_is_parallel();
            parallel += u32::from(p);
            choice.record(p, if p { par } else { seq });
        }
        parallel
    }

    #[test]
    fn the_faster_path_serves_after_a_window_of_each() {
        for (seq, par, want) in [(2.0, 1.0, true), (1.0, 2.0, false)] {
            let mut c = PathChoice::default();
            // The window: the sequential path first, then the parallel one, consecutively.
            assert_eq!(feed(&mut c, seq, par, PATH_WINDOW), 0);
            assert_eq!(feed(&mut c, seq, par, PATH_WINDOW), PATH_WINDOW);
            assert_eq!(c.parallel, Some(want));
            // The choice serves PATH_SERVES assemblies, then both are measured again.
            let served = feed(&mut c, seq, par, PATH_SERVES);
            assert_eq!(served, if want { PATH_SERVES } else { 0 });
            assert_eq!(c.parallel, None);
            assert!(!c.next_is_parallel(), "a new window starts sequential");
        }
    }

    #[test]
    fn the_choice_follows_the_work() {
        // Parallel pays, then the elements get cheap (contacts open): the next window turns.
        let mut c = PathChoice::default();
        feed(&mut c, 2.0, 1.0, 2 * PATH_WINDOW + PATH_SERVES);
        feed(&mut c, 1.0, 1.5, 2 * PATH_WINDOW);
        assert_eq!(c.parallel, Some(false));
    }
}
