//! The model's node states during a solve and the per-node buffers every stage works on.
//!
//! A [`State`] is shared by all stages of a scheme: the converged state at `t_n` (`prev`), the
//! stage base (`smooth`: the converged smooth state in NSGA, the configuration a correction
//! starts from), the current iterate (`cur`) and, per node, the stage unknown, increment and
//! rotation tangent. A stage ([`crate::stage::Stage`]) owns everything that is specific to its
//! unknowns (pattern, LU, multipliers); the mapping from its node unknowns to node states is the
//! `update` function handed to [`crate::stage::Stage::newton`] (e.g. [`update_position_states`],
//! [`update_velocity_states`]).

use nalgebra::{Matrix3, Vector3, Vector6};
use saltus_core::assembly::{NodeNumbering, FIXED};
use saltus_core::lie;
use saltus_core::stage::Scratch;
use saltus_core::{BaseTerms, LocalState, Model, NodeKind, NodeState, StepCx};

/// Node states and per-node buffers of a solve.
pub struct State {
    /// Node unknown numbering (shared by all stages).
    pub numbering: NodeNumbering,
    /// Node kinds, in node order.
    pub kinds: Vec<NodeKind>,
    /// Converged state at `t_n`.
    pub prev: Vec<NodeState>,
    /// `q_n` with the updated pre-impact velocities `V⁻` of a multiple-impact sequence
    /// (`nsga.md` §9); elements see it as their `prev` while [`State::pre_impact_active`].
    pub pre_impact: Vec<NodeState>,
    /// Elements read [`State::pre_impact`] instead of [`State::prev`].
    pub pre_impact_active: bool,
    /// Base state of the correction stages (the converged smooth state of the current step).
    pub smooth: Vec<NodeState>,
    /// Current iterate.
    pub cur: Vec<NodeState>,
    /// Per node: the current stage's unknown (smooth `ṽ − ṽ*`, position/static `U`, velocity `W`).
    pub unknown: Vec<Vector6<f64>>,
    /// Per-node increment of the current stage (see `LocalState::incr`).
    pub incr: Vec<Vector6<f64>>,
    /// Per-node rotation tangent of the current stage.
    pub tangent: Vec<Matrix3<f64>>,
    pub(crate) saved_unknown: Vec<Vector6<f64>>,
    pub(crate) scratch: Scratch,
    pub(crate) gathered: Gathered,
    /// Thread pool and per-thread workers when elements are evaluated in parallel.
    pub(crate) parallel: Option<Parallel>,
    /// How the stages use [`State::parallel`]'s pool.
    parallel_assembly: ParallelAssembly,
    /// The elements' [`BaseTerms`] of the current step (`3n` values per element), evaluated
    /// when a difference stage first needs them ([`State::ensure_base_terms`]).
    base: ElementCache,
    /// The elements' [`BaseTerms::frozen_force`] of the current velocity stage (`n` values per
    /// element whose applied force depends on the configuration alone), evaluated when the
    /// stage first assembles the element ([`State::ensure_frozen_force`]).
    frozen: ElementCache,
}

/// Values kept per element while they stay valid (a [`State`]'s step and stage caches): each
/// element's slice of `values` from `at[ie]` (empty for elements without any), evaluated
/// while `open` and marked in `done`.
#[derive(Default)]
struct ElementCache {
    values: Vec<f64>,
    at: Vec<usize>,
    done: Vec<bool>,
    open: bool,
}

impl ElementCache {
    /// Lay out `sizes` values per element (allocates only when it grows); closed.
    fn layout(&mut self, sizes: impl Iterator<Item = usize>) {
        self.open = false;
        self.at.clear();
        let mut end = 0;
        for n in sizes {
            self.at.push(end);
            end += n;
        }
        self.at.push(end);
        self.values.resize(end, 0.0);
        self.done.clear();
        self.done.resize(self.at.len() - 1, false);
    }

    /// Forget every element's values; `open`: evaluate them from now on.
    fn reset(&mut self, open: bool) {
        self.done.fill(false);
        self.open = open;
    }

    /// Element `ie`'s values are to be evaluated now: open, not done, and it has some.
    #[inline]
    fn wants(&self, ie: usize) -> bool {
        self.open && !self.done[ie] && self.at[ie] != self.at[ie + 1]
    }

    /// Element `ie`'s values, if evaluated.
    #[inline]
    fn get(&self, ie: usize) -> Option<&[f64]> {
        (*self.done.get(ie)?).then(|| &self.values[self.at[ie]..self.at[ie + 1]])
    }

    /// Evaluate element `ie`'s values by `eval` (given its slice; `Ok(true)`: evaluated) and
    /// mark them done when it did.
    fn fill<E>(
        &mut self,
        ie: usize,
        eval: impl FnOnce(&mut [f64]) -> Result<bool, E>,
    ) -> Result<(), E> {
        let (a, b) = (self.at[ie], self.at[ie + 1]);
        let result = eval(&mut self.values[a..b]);
        self.done[ie] = matches!(result, Ok(true));
        result.map(|_| ())
    }
}

/// Per-thread evaluation buffers.
pub(crate) struct Worker {
    pub(crate) gathered: Gathered,
    pub(crate) scratch: Scratch,
}

/// A thread pool with one [`Worker`] per thread (uncontended locks: a thread only takes its
/// own worker, by `rayon::current_thread_index`).
pub(crate) struct Parallel {
    pub(crate) pool: std::sync::Arc<rayon::ThreadPool>,
    pub(crate) workers: Vec<std::sync::Mutex<Worker>>,
}

/// How stages use a thread pool ([`State::set_threads`] with more than one thread) for their
/// assemblies. The sequential and parallel assemblies give the same result to the bit, so this
/// changes run time only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ParallelAssembly {
    /// Each stage times a window of consecutive assemblies of each kind (residual only, with
    /// the iteration matrix) on each path, uses the faster, and measures again after a while
    /// (the stage's `PathChoice`): parallel evaluation pays for costly elements (beams) and
    /// not for cheap ones against the hand-off between threads (rigid links, contacts).
    #[default]
    Adaptive,
    /// Every assembly of a model with enough elements evaluates them in parallel.
    Always,
}

/// Read-only node arrays of a [`State`], shared by the threads of a parallel assembly.
#[derive(Clone, Copy)]
pub(crate) struct NodeArrays<'a> {
    kinds: &'a [NodeKind],
    cur: &'a [NodeState],
    prev: &'a [NodeState],
    smooth: &'a [NodeState],
    tangent: &'a [Matrix3<f64>],
    incr: &'a [Vector6<f64>],
}

/// The step's [`BaseTerms`] cache of a [`State`] (empty when not valid), shared by the threads
/// of a parallel assembly.
#[derive(Clone, Copy)]
pub(crate) struct BaseCache<'a> {
    base: &'a ElementCache,
    frozen: &'a ElementCache,
}

impl<'a> BaseCache<'a> {
    /// Element `ie`'s [`BaseTerms`] of the step, if they were evaluated.
    #[inline]
    pub(crate) fn base_terms(&self, ie: usize) -> Option<BaseTerms<'a>> {
        let t = self.base.get(ie)?;
        let n = t.len() / 3;
        Some(BaseTerms {
            inertial: &t[..n],
            force: &t[n..2 * n],
            reaction: &t[2 * n..],
            frozen_force: self.frozen.get(ie),
        })
    }
}

/// Gather buffers: one element's node data in local order. An element whose nodes are
/// consecutive in node order (a rigid body, a sphere–plane contact, neighbours in a chain) is
/// not copied: its local view slices the state's arrays directly (`direct`).
pub(crate) struct Gathered {
    /// First node of the last gathered element when its nodes are consecutive.
    direct: Option<usize>,
    kinds: Vec<NodeKind>,
    nodes: Vec<NodeState>,
    prev: Vec<NodeState>,
    smooth: Vec<NodeState>,
    tangent: Vec<Matrix3<f64>>,
    incr: Vec<Vector6<f64>>,
}

impl Gathered {
    fn with_capacity(max_nodes: usize) -> Self {
        Gathered {
            direct: None,
            kinds: vec![NodeKind::Point; max_nodes],
            nodes: vec![NodeState::default(); max_nodes],
            prev: vec![NodeState::default(); max_nodes],
            smooth: vec![NodeState::default(); max_nodes],
            tangent: vec![Matrix3::identity(); max_nodes],
            incr: vec![Vector6::zeros(); max_nodes],
        }
    }

    fn grow(&mut self, max_nodes: usize) {
        if self.nodes.len() < max_nodes {
            *self = Self::with_capacity(max_nodes);
        }
    }

    /// Copy the data of the nodes `ids` into the buffers; returns their count.
    pub(crate) fn gather(&mut self, a: NodeArrays<'_>, ids: &[saltus_core::NodeId]) -> usize {
        let first = ids.first().map_or(0, |id| id.index());
        let consecutive = ids
            .iter()
            .enumerate()
            .all(|(k, id)| id.index() == first + k);
        if consecutive {
            self.direct = Some(first);
            return ids.len();
        }
        self.direct = None;
        for (k, id) in ids.iter().enumerate() {
            let i = id.index();
            self.kinds[k] = a.kinds[i];
            self.nodes[k] = a.cur[i];
            self.prev[k] = a.prev[i];
            self.smooth[k] = a.smooth[i];
            self.tangent[k] = a.tangent[i];
            self.incr[k] = a.incr[i];
        }
        ids.len()
    }

    /// Local view of the gathered element (`nn` nodes) with its multipliers; `smooth_is_cur`
    /// makes the base state the current iterate (the smooth stage is its own base).
    pub(crate) fn local<'a>(
        &'a self,
        a: NodeArrays<'a>,
        nn: usize,
        smooth_is_cur: bool,
        mult: &'a [f64],
        mult_smooth: &'a [f64],
        admissible: bool,
        base: Option<BaseTerms<'a>>,
    ) -> LocalState<'a> {
        let v = self.view(a, nn);
        LocalState {
            kinds: v.kinds,
            nodes: v.cur,
            prev: v.prev,
            smooth: if smooth_is_cur { v.cur } else { v.smooth },
            rot_tangent: v.tangent,
            incr: v.incr,
            mult,
            mult_smooth,
            admissible,
            memo: None,
            base,
        }
    }

    /// The last gathered element's node data (`nn` nodes, same arrays as [`NodeArrays`]):
    /// slices of `a` for consecutive nodes, else the gather buffers.
    pub(crate) fn view<'a>(&'a self, a: NodeArrays<'a>, nn: usize) -> NodeArrays<'a> {
        match self.direct {
            Some(i) => NodeArrays {
                kinds: &a.kinds[i..i + nn],
                cur: &a.cur[i..i + nn],
                prev: &a.prev[i..i + nn],
                smooth: &a.smooth[i..i + nn],
                tangent: &a.tangent[i..i + nn],
                incr: &a.incr[i..i + nn],
            },
            None => NodeArrays {
                kinds: &self.kinds[..nn],
                cur: &self.nodes[..nn],
                prev: &self.prev[..nn],
                smooth: &self.smooth[..nn],
                tangent: &self.tangent[..nn],
                incr: &self.incr[..nn],
            },
        }
    }
}

impl State {
    /// Buffers for `model` at its initial state.
    pub fn new(model: &Model) -> Self {
        let nodes = model.nodes();
        let kinds: Vec<NodeKind> = nodes.iter().map(|n| n.kind).collect();
        let max_nodes = max_element_nodes(model);
        let init: Vec<NodeState> = nodes.iter().map(|n| n.initial).collect();
        let n = nodes.len();
        let mut state = Self {
            numbering: NodeNumbering::new(nodes),
            scratch: Scratch::for_elements(model.elements(), &kinds),
            prev: init.clone(),
            pre_impact: init.clone(),
            pre_impact_active: false,
            smooth: init.clone(),
            cur: init,
            unknown: vec![Vector6::zeros(); n],
            incr: vec![Vector6::zeros(); n],
            tangent: vec![Matrix3::identity(); n],
            saved_unknown: vec![Vector6::zeros(); n],
            gathered: Gathered::with_capacity(max_nodes),
            parallel: None,
            parallel_assembly: ParallelAssembly::default(),
            kinds,
            base: ElementCache::default(),
            frozen: ElementCache::default(),
        };
        state.layout_base_terms(model);
        state
    }

    /// Layout of the [`BaseTerms`] cache for the model's current elements (allocates only when
    /// it grows, at a topology change). Only elements with a state-dependent applied force or
    /// a constraint take part: evaluating those at the smooth state is what an assembly
    /// repeats at a cost (a beam's internal forces, a joint's kinematics). A constant force
    /// (gravity) needs no base term (its difference vanishes), and inertia-only elements
    /// (rigid bodies, point masses) evaluate their cheap inertial force where a correction
    /// needs it, mostly nowhere (inert: nothing moved); filling theirs every step cost the
    /// bouncing ball 10 % and Newton's cradle (N = 50) 8 %.
    ///
    /// The [`BaseTerms::frozen_force`] cache takes the forces of the configuration alone (an
    /// undamped beam or spring): constant while a velocity stage holds the configuration.
    fn layout_base_terms(&mut self, model: &Model) {
        let kinds = &self.kinds;
        let unknowns = |e: &dyn saltus_core::Element| -> usize {
            e.nodes().iter().map(|id| kinds[id.index()].ndof()).sum()
        };
        let dependence = |e: &dyn saltus_core::Element| e.as_force().map(|f| f.dependence());
        self.base.layout(model.elements().iter().map(|e| {
            let varying = dependence(e.as_ref()).is_some_and(|d| d.configuration || d.velocity);
            if varying || e.as_constraint().is_some() {
                3 * unknowns(e.as_ref())
            } else {
                0
            }
        }));
        self.frozen.layout(
            model
                .elements()
                .iter()
                .map(|e| match dependence(e.as_ref()) {
                    Some(d) if d.configuration && !d.velocity => unknowns(e.as_ref()),
                    _ => 0,
                }),
        );
    }

    /// Resize the per-element buffers (gather, scratch; also the per-thread ones) for the
    /// model's current elements (after elements were added; allocates only when they grew).
    pub fn refit(&mut self, model: &Model) {
        self.layout_base_terms(model);
        let max_nodes = max_element_nodes(model);
        self.gathered.grow(max_nodes);
        let needed = Scratch::for_elements(model.elements(), &self.kinds);
        if !self.scratch.covers(&needed) {
            self.scratch = needed.clone();
        }
        if let Some(par) = self.parallel.as_mut() {
            for w in par.workers.iter_mut() {
                let w = w.get_mut().unwrap_or_else(|e| e.into_inner());
                w.gathered.grow(max_nodes);
                if !w.scratch.covers(&needed) {
                    w.scratch = needed.clone();
                }
            }
        }
    }

    /// Evaluate elements on `threads` threads (1: sequentially on the calling thread; 0: the
    /// number rayon chooses — `RAYON_NUM_THREADS`, else the available cores). Results are
    /// bit-identical for any thread count: a block of elements is evaluated in parallel into
    /// their own buffers, then scattered in element order, block after block; whether a stage
    /// assembles in parallel at all is [`State::set_parallel_assembly`]'s. Models with fewer
    /// than [`crate::stage::PARALLEL_MIN_ELEMENTS`] elements stay sequential.
    pub fn set_threads(&mut self, model: &Model, threads: usize) -> Result<(), String> {
        // Below the parallel threshold the stages assemble sequentially: no pool at all.
        if threads == 1 || model.elements().len() < crate::stage::PARALLEL_MIN_ELEMENTS {
            self.parallel = None;
            return Ok(());
        }
        let n = if threads == 0 {
            automatic_threads()
        } else {
            threads
        };
        if n <= 1 {
            self.parallel = None;
            return Ok(());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("saltus-{i}"))
            .build()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
        let max_nodes = max_element_nodes(model);
        let scratch = Scratch::for_elements(model.elements(), &self.kinds);
        let workers = (0..n)
            .map(|_| {
                std::sync::Mutex::new(Worker {
                    gathered: Gathered::with_capacity(max_nodes),
                    scratch: scratch.clone(),
                })
            })
            .collect();
        self.parallel = Some(Parallel {
            pool: std::sync::Arc::new(pool),
            workers,
        });
        Ok(())
    }

    /// How the stages use a thread pool ([`ParallelAssembly`]; default adaptive). Kept across
    /// [`State::set_threads`], and may be set before it.
    pub fn set_parallel_assembly(&mut self, policy: ParallelAssembly) {
        self.parallel_assembly = policy;
    }

    /// How the stages use a thread pool ([`State::set_parallel_assembly`]).
    pub fn parallel_assembly(&self) -> ParallelAssembly {
        self.parallel_assembly
    }

    /// The thread pool, if elements are evaluated in parallel. A scheme runs its whole step
    /// inside `pool.install` so the stages' parallel loops start on a pool thread (one hand-off
    /// per step instead of one per assembly).
    pub fn pool(&self) -> Option<std::sync::Arc<rayon::ThreadPool>> {
        self.parallel
            .as_ref()
            .map(|p| std::sync::Arc::clone(&p.pool))
    }

    /// Number of threads elements are evaluated on.
    pub fn threads(&self) -> usize {
        self.parallel.as_ref().map_or(1, |p| p.workers.len())
    }

    /// The node arrays, for gathering on any thread.
    pub(crate) fn arrays(&self) -> NodeArrays<'_> {
        NodeArrays {
            kinds: &self.kinds,
            cur: &self.cur,
            prev: self.element_prev(),
            smooth: &self.smooth,
            tangent: &self.tangent,
            incr: &self.incr,
        }
    }

    /// The `prev` states elements see: [`State::pre_impact`] inside an impact sequence, else
    /// [`State::prev`].
    fn element_prev(&self) -> &[NodeState] {
        if self.pre_impact_active {
            &self.pre_impact
        } else {
            &self.prev
        }
    }

    /// Global offset of node `i`'s unknowns, `None` for a fixed node.
    #[inline]
    pub fn offset(&self, i: usize) -> Option<usize> {
        let off = self.numbering.offset[i];
        (off != FIXED).then_some(off)
    }

    /// Reset the unknowns, increments and tangents of every node (start of a stage).
    pub fn reset_unknowns(&mut self) {
        self.unknown.fill(Vector6::zeros());
        self.incr.fill(Vector6::zeros());
        self.tangent.fill(Matrix3::identity());
    }

    /// Gather element `ie`'s node data into the gather buffers; returns the node count.
    pub fn gather(&mut self, model: &Model, ie: usize) -> usize {
        let (arrays, gathered, _) = self.parts();
        gathered.gather(arrays, model.elements()[ie].nodes())
    }

    /// The node arrays elements read (with the pre-impact states as `prev` while
    /// [`State::pre_impact_active`]), the gather buffers and the evaluation scratch, borrowed
    /// apart.
    pub(crate) fn parts(&mut self) -> (NodeArrays<'_>, &mut Gathered, &mut Scratch) {
        let (arrays, gathered, scratch, _) = self.parts_with_base();
        (arrays, gathered, scratch)
    }

    /// [`State::parts`] with the step's [`BaseTerms`] cache.
    pub(crate) fn parts_with_base(
        &mut self,
    ) -> (NodeArrays<'_>, &mut Gathered, &mut Scratch, BaseCache<'_>) {
        let base = BaseCache {
            base: &self.base,
            frozen: &self.frozen,
        };
        let arrays = NodeArrays {
            kinds: &self.kinds,
            cur: &self.cur,
            prev: if self.pre_impact_active {
                &self.pre_impact
            } else {
                &self.prev
            },
            smooth: &self.smooth,
            tangent: &self.tangent,
            incr: &self.incr,
        };
        (arrays, &mut self.gathered, &mut self.scratch, base)
    }

    /// The step's [`BaseTerms`] cache (the elements' evaluated so far).
    pub(crate) fn base_cache(&self) -> BaseCache<'_> {
        BaseCache {
            base: &self.base,
            frozen: &self.frozen,
        }
    }

    /// Forget the step's [`BaseTerms`] and stop evaluating them (the smooth state is about to
    /// change).
    pub(crate) fn clear_base_terms(&mut self) {
        self.base.reset(false);
        self.close_frozen_forces();
    }

    /// From now on (until [`State::close_frozen_forces`], which [`State::clear_base_terms`],
    /// [`State::open_base_terms`] and a new layout also call) the configuration is held (a
    /// velocity stage): its stages may evaluate the [`BaseTerms::frozen_force`]s once and keep
    /// them.
    pub(crate) fn open_frozen_forces(&mut self) {
        self.frozen.reset(true);
    }

    /// Forget the [`BaseTerms::frozen_force`]s (the configuration is about to change).
    pub(crate) fn close_frozen_forces(&mut self) {
        self.frozen.reset(false);
    }

    /// Evaluate element `ie`'s [`BaseTerms::frozen_force`] for the stage `cx`, which holds the
    /// configuration, if they are open, the element has one, it is not evaluated yet and the
    /// element's configuration is not the smooth one (else the force difference vanishes).
    #[inline]
    fn ensure_frozen_force(
        &mut self,
        model: &Model,
        ie: usize,
        cx: &StepCx,
    ) -> Result<(), saltus_core::ElementError> {
        if !self.frozen.wants(ie) || cx.dq_dv != 0.0 {
            return Ok(());
        }
        self.evaluate_frozen_force(model, ie, cx)
    }

    /// [`State::ensure_frozen_force`] past its quick checks. With its configuration the
    /// smooth one the difference `f(q) − f(q̃)` vanishes and nothing reads the value (fixed for
    /// the stage: it holds `q`).
    #[inline(never)]
    fn evaluate_frozen_force(
        &mut self,
        model: &Model,
        ie: usize,
        cx: &StepCx,
    ) -> Result<(), saltus_core::ElementError> {
        self.fill_element_cache(
            |st| &mut st.frozen,
            model,
            ie,
            &[],
            false,
            |e, s, out, sc| saltus_core::stage::frozen_force(e, cx, s, out, sc),
        )
    }

    /// Evaluate element `ie` into the cache `which` picks, by `eval` on its gathered local
    /// state (smooth multipliers `mult_smooth`), unless none of its nodes differs from the
    /// smooth state in configuration (and, with `velocities`, in velocity): there the
    /// difference the value serves vanishes and nothing reads it.
    fn fill_element_cache(
        &mut self,
        which: fn(&mut State) -> &mut ElementCache,
        model: &Model,
        ie: usize,
        mult_smooth: &[f64],
        velocities: bool,
        eval: impl FnOnce(
            &dyn saltus_core::Element,
            &LocalState<'_>,
            &mut [f64],
            &mut Scratch,
        ) -> Result<bool, saltus_core::ElementError>,
    ) -> Result<(), saltus_core::ElementError> {
        let e = &model.elements()[ie];
        let moved = |id: &saltus_core::NodeId| {
            let (c, s) = (&self.cur[id.index()], &self.smooth[id.index()]);
            c.x != s.x || c.r != s.r || (velocities && (c.v != s.v || c.omega != s.omega))
        };
        if !e.nodes().iter().any(moved) {
            return Ok(());
        }
        // Taken out while the node arrays are borrowed (no allocation: sized by the layout).
        let mut cache = std::mem::take(which(self));
        let (arrays, gathered, scratch) = self.parts();
        let nn = gathered.gather(arrays, e.nodes());
        let s = gathered.local(arrays, nn, false, &[], mult_smooth, true, None);
        let result = cache.fill(ie, |out| eval(e.as_ref(), &s, out, scratch));
        *which(self) = cache;
        result
    }

    /// From now on (until [`State::clear_base_terms`]) the smooth state is the step's
    /// converged one: difference stages may evaluate the [`BaseTerms`] once and keep them.
    pub(crate) fn open_base_terms(&mut self) {
        self.base.reset(true);
        self.close_frozen_forces();
    }

    /// Evaluate element `ie`'s [`BaseTerms`] for the difference stage `cx` (smooth
    /// multipliers `mult_smooth`) if the step's are open, the element has them, they are not
    /// evaluated yet, and the current state differs from the smooth one at its nodes (else
    /// the differences vanish and nothing needs them, e.g. a correction's start check). Same
    /// values as the evaluation at each assembly they replace, bit for bit.
    #[inline]
    fn ensure_base_terms(
        &mut self,
        model: &Model,
        ie: usize,
        cx: &StepCx,
        mult_smooth: &[f64],
    ) -> Result<(), saltus_core::ElementError> {
        // The common cases first, inline: closed, already done, or no terms for the element.
        if !self.base.wants(ie) {
            return Ok(());
        }
        self.evaluate_base_terms(model, ie, cx, mult_smooth)
    }

    /// [`State::ensure_base_terms`] past its quick checks.
    #[inline(never)]
    fn evaluate_base_terms(
        &mut self,
        model: &Model,
        ie: usize,
        cx: &StepCx,
        mult_smooth: &[f64],
    ) -> Result<(), saltus_core::ElementError> {
        self.fill_element_cache(
            |st| &mut st.base,
            model,
            ie,
            mult_smooth,
            true,
            |e, s, out, sc| saltus_core::stage::base_terms(e, cx, s, out, sc).map(|()| true),
        )
    }

    /// The step's [`BaseTerms`] and the stage's [`BaseTerms::frozen_force`] of element `ie`
    /// that a difference stage `cx` needs before it evaluates the element
    /// ([`State::ensure_base_terms`], [`State::ensure_frozen_force`]).
    #[inline]
    pub(crate) fn ensure_element_terms(
        &mut self,
        model: &Model,
        ie: usize,
        cx: &StepCx,
        mult_smooth: &[f64],
    ) -> Result<(), saltus_core::ElementError> {
        self.ensure_base_terms(model, ie, cx, mult_smooth)?;
        self.ensure_frozen_force(model, ie, cx)
    }

    /// Local view of the last gathered element (`nn` nodes) with its multipliers; `smooth_is_cur`
    /// makes the base state the current iterate (the smooth stage is its own base).
    pub fn gathered<'a>(
        &'a self,
        nn: usize,
        smooth_is_cur: bool,
        mult: &'a [f64],
        mult_smooth: &'a [f64],
    ) -> LocalState<'a> {
        self.gathered.local(
            self.arrays(),
            nn,
            smooth_is_cur,
            mult,
            mult_smooth,
            true,
            None,
        )
    }

    /// The gathered node states of the last gathered element.
    pub fn gathered_nodes(&self, nn: usize) -> &[NodeState] {
        self.gathered.view(self.arrays(), nn).cur
    }

    /// The gathered `prev` states of the last gathered element (the pre-impact states inside
    /// an impact sequence).
    pub fn gathered_prev(&self, nn: usize) -> &[NodeState] {
        self.gathered.view(self.arrays(), nn).prev
    }

    /// The node kinds of the last gathered element.
    pub fn gathered_kinds(&self, nn: usize) -> &[NodeKind] {
        self.gathered.view(self.arrays(), nn).kinds
    }

    /// Whether the free nodes were at rest at the step start to `rel`: over a step of `h`,
    /// each moves by at most `rel` of the coordinates' size and turns by at most `rel` radians,
    /// `|v_n| h ≤ rel (1 + max |x|)` and `|ω_n| h ≤ rel`. (A turn is judged on its own: the
    /// size of a long chain, 1 000 m at N = 10 000, made links turning at 1 rad/s count as at
    /// rest.)
    pub(crate) fn at_rest(&self, h: f64, rel: f64) -> bool {
        let bound = rel * (1.0 + self.scale(true));
        self.prev.iter().enumerate().all(|(i, n)| {
            self.offset(i).is_none() || (n.v.amax() * h <= bound && n.omega.amax() * h <= rel)
        })
    }

    /// Largest magnitude of the free nodes' positions (`positions`) or velocities.
    pub(crate) fn scale(&self, positions: bool) -> f64 {
        let mut s: f64 = 0.0;
        for (i, n) in self.cur.iter().enumerate() {
            if self.offset(i).is_none() {
                continue;
            }
            s = if positions {
                s.max(n.x.amax())
            } else {
                s.max(n.v.amax()).max(n.omega.amax())
            };
        }
        s
    }
}

/// Thread count rayon would choose (`RAYON_NUM_THREADS` if set to a positive number, else the
/// available cores), without starting rayon's global pool.
fn automatic_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn max_element_nodes(model: &Model) -> usize {
    model
        .elements()
        .iter()
        .map(|e| e.nodes().len())
        .max()
        .unwrap_or(0)
}

pub(crate) fn split(v: &Vector6<f64>) -> (Vector3<f64>, Vector3<f64>) {
    (
        v.fixed_rows::<3>(0).into_owned(),
        v.fixed_rows::<3>(3).into_owned(),
    )
}

/// Configuration correction from the base: `x = x̃ + U_x`, `R = R̃ exp(U_Θ)`, tangent
/// `T(U_Θ)` (spec §5, §12). The position-correction and static stages use it.
pub fn update_position_states(st: &mut State) {
    for i in 0..st.kinds.len() {
        if st.offset(i).is_none() {
            continue;
        }
        let (ux, ut) = split(&st.unknown[i]);
        let base = st.smooth[i];
        let s = &mut st.cur[i];
        s.x = base.x + ux;
        if st.kinds[i] == NodeKind::Frame {
            s.r = base.r * lie::exp(&ut);
            st.tangent[i] = lie::tangent(&ut);
        }
        st.incr[i] = st.unknown[i];
    }
}

/// Velocity jump from the base: `v = ṽ + W`, configuration frozen (spec §6).
pub fn update_velocity_states(st: &mut State) {
    for i in 0..st.kinds.len() {
        if st.offset(i).is_none() {
            continue;
        }
        let (wx, wt) = split(&st.unknown[i]);
        let base = st.smooth[i];
        let s = &mut st.cur[i];
        s.v = base.v + wx;
        if st.kinds[i] == NodeKind::Frame {
            s.omega = base.omega + wt;
        }
        st.incr[i] = st.unknown[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use saltus_core::NodeDef;

    /// A far node fixes the coordinates' size at 1 000 m (a chain of 10 000 links of 0.1 m).
    fn far_model() -> Model {
        let mut model = Model::new();
        model
            .add_node(NodeDef::frame("far", Vector3::new(1000.0, 0.0, 0.0)))
            .unwrap();
        model
            .add_node(NodeDef::frame("link", Vector3::zeros()))
            .unwrap();
        model
    }

    #[test]
    fn a_turning_node_is_not_at_rest_in_a_large_model() {
        let model = far_model();
        let (h, rel) = (1e-3, 1e-6);
        let mut state = State::new(&model);
        assert!(state.at_rest(h, rel));
        // 1 rad/s turns the link by 1e-3 rad over the step: not at rest, however large the
        // model (the size bound alone, 1e-6 (1 + 1 000) m, let it pass before).
        state.prev[1].omega = Vector3::new(0.0, 0.0, 1.0);
        assert!(!state.at_rest(h, rel));
        // Turning by 1e-7 rad over the step: at rest.
        state.prev[1].omega = Vector3::new(0.0, 0.0, 1e-4);
        assert!(state.at_rest(h, rel));
        // Translating by 5e-4 m against the bound 1e-6 (1 + 1 000) m ≈ 1e-3 m: at rest; by
        // 2e-3 m: not.
        state.prev[1].omega = Vector3::zeros();
        state.prev[1].v = Vector3::new(0.5, 0.0, 0.0);
        assert!(state.at_rest(h, rel));
        state.prev[1].v = Vector3::new(2.0, 0.0, 0.0);
        assert!(!state.at_rest(h, rel));
    }
}
