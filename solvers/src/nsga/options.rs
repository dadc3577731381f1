//! The options of an NSGA run: generalized-α coefficients, tolerances and iteration limits,
//! the smooth Newton's start and the multiple-impact sequence (spec `nsga.md` §§2, 9, 10).

use crate::error::SolveError;
use nalgebra::Vector3;

/// Largest number of steps [`NsgaOptions::validate`] accepts (`t_end / h`): 10⁹ steps already
/// take hours at the fastest few µs per step, so more is taken for an input error (e.g.
/// `h = 1e-300`).
pub const MAX_STEPS: f64 = 1e9;

/// Generalized-α coefficients from the spectral radius at infinity `ρ∞` (spec §2,
/// Chung–Hulbert in the Arnold–Brüls form).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coefficients {
    /// `α_m = (2ρ∞ − 1)/(ρ∞ + 1)`.
    pub alpha_m: f64,
    /// `α_f = ρ∞/(ρ∞ + 1)`.
    pub alpha_f: f64,
    /// `γ = ½ + α_f − α_m`.
    pub gamma: f64,
    /// `β = ¼ (γ + ½)²`.
    pub beta: f64,
}

impl Coefficients {
    /// Coefficients for `ρ∞ ∈ [0, 1]`.
    pub fn from_rho_inf(rho_inf: f64) -> Self {
        let alpha_m = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0);
        let alpha_f = rho_inf / (rho_inf + 1.0);
        let gamma = 0.5 + alpha_f - alpha_m;
        let beta = 0.25 * (gamma + 0.5) * (gamma + 0.5);
        Self {
            alpha_m,
            alpha_f,
            gamma,
            beta,
        }
    }
}

/// Options of the NSGA integrator. Units SI.
#[derive(Clone, Debug, PartialEq)]
pub struct NsgaOptions {
    /// Step size `h` \[s\].
    pub h: f64,
    /// Final time \[s\].
    pub t_end: f64,
    /// Spectral radius at infinity `ρ∞ ∈ [0, 1]` (1: no numerical dissipation).
    pub rho_inf: f64,
    /// Relative Newton tolerance `tol_r` of the test `‖r‖ ≤ tol_r (Σ‖r_k‖ + tol_f)` (spec §10).
    pub tol: f64,
    /// Reference residual `tol_f` \[N\] of the same test (floor for states with vanishing forces).
    pub tol_f: f64,
    /// Newton iteration cap per subproblem.
    pub max_iterations: usize,
    /// Gravity \[m/s²\].
    pub gravity: Vector3<f64>,
    /// Retry a failed step as two steps of `h/2` (recursively, up to `max_halvings`).
    pub adaptive: bool,
    /// Maximum halving depth with `adaptive`.
    pub max_halvings: usize,
    /// Backtracking line search on the Newton corrections (spec §10; needed at impacts).
    pub line_search: bool,
    /// Record every N-th step (the last step is always recorded).
    pub output_every: usize,
    /// Characteristic mass `m` \[kg\] of the multiplier scaling `k_s = p_s = m/h`,
    /// `k_p = p_p = k_v = p_v = m` (spec §10); `None`: the model's mean body mass.
    pub characteristic_mass: Option<f64>,
    /// Threads evaluating elements: 1 sequential, 0 automatic (`RAYON_NUM_THREADS`, else the
    /// available cores). Results are bit-identical for any value.
    pub threads: usize,
    /// Modified Newton contraction factor `θ` of the smooth stage (see
    /// [`Tolerance::jacobian_reuse`]): its iteration matrix is reused, within a step and across
    /// steps, while every correction made with it reduces the residual by at least `θ` (and at a
    /// rate that reaches the tolerance within two more corrections);
    /// `None`: full Newton everywhere. The position and velocity corrections reuse a
    /// factorization only as an exact Newton matrix ([`Tolerance::exact_reuse`]: a model at
    /// rest, e.g. a resting contact), so that their constraints still end at round-off; with
    /// `None` they refactorize at every solve too.
    ///
    /// [`Tolerance::jacobian_reuse`]: crate::stage::Tolerance::jacobian_reuse
    /// [`Tolerance::exact_reuse`]: crate::stage::Tolerance::exact_reuse
    pub jacobian_reuse: Option<f64>,
    /// Multiple impacts within a step: the velocity stage as the sequence of impact problems of
    /// `nsga.md` §9 ([`ImpactSequence`]); `None`: one velocity problem with every
    /// position-active contact (simultaneous impacts).
    pub impacts: Option<ImpactSequence>,
    /// Start the position and velocity solves from each contact's last converged multipliers
    /// (`Element::warm_start`; the first impact problem of a step only): a persistent contact
    /// starts in its status. And start the position correction of a model without contacts
    /// from the last step's (its node corrections and multipliers, at the same topology and
    /// step size): the 10-link chain then needs one correction per step instead of two.
    /// Changes the Newton path, not the converged solution; `false`: every solve starts from
    /// zero.
    pub warm_start: bool,
    /// A position or velocity solve whose semi-smooth Newton reaches `max_iterations` hands its
    /// contacts to a contact-space nonsmooth Gauss–Seidel ([`Stage::settle_contacts`]; e.g. a
    /// settling granular pile, whose hyperstatic clusters make the Newton cycle) before
    /// reporting non-convergence. Its result passes the same residual test; `false`: Newton
    /// only.
    ///
    /// [`Stage::settle_contacts`]: crate::stage::Stage::settle_contacts
    pub contact_fallback: bool,
    /// How the position and velocity stages solve their contacts (see [`ContactSolver`]).
    pub contact_solver: ContactSolver,
    /// Where the smooth stage's Newton starts (see [`SmoothStart`]). Changes the Newton path,
    /// not the converged solution.
    pub smooth_start: SmoothStart,
    /// Measure where the steps' time goes: each stage's solves, assemblies, factorizations,
    /// contact linearizations and contact-space sweeps ([`crate::stage::StageTimes`], in
    /// [`crate::RunSummary::stages`]) and the contact detection
    /// ([`crate::RunSummary::detection`]); the start-up solve of [`crate::Nsga::new`] is not
    /// counted. The rest of [`crate::RunSummary::wall`] lies outside the stages (predictor,
    /// element-set rebuilds, the impact sequence's bookkeeping, the elements' level hooks and
    /// commits, output collection and recording). `wall` covers one [`crate::Nsga::run`]
    /// call, the times every solve since `new`: the two compare for a run that is the
    /// integrator's only one. Default `false`: each part reads the clock twice,
    /// tens of nanoseconds, as much as some parts of a small model's step cost.
    pub timings: bool,
}

/// How the position and velocity stages solve a problem with contacts. Both pass the same
/// residual test (`NsgaOptions::tol`); they differ in cost and in what they reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContactSolver {
    /// Semi-smooth Newton on all the stage's unknowns (quadratic near the solution; one sparse
    /// LU per iteration), with the Gauss–Seidel fallback of `NsgaOptions::contact_fallback`.
    #[default]
    Newton,
    /// Contact-space nonsmooth Gauss–Seidel first (`Stage::settle_contacts`: each contact's
    /// Signorini–Coulomb problem solved exactly with the others frozen); if the sweeps do not
    /// pass the test (or fail), the Newton above, from the sweeps' last iterate if it has the
    /// smaller residual, else from the start point, with its fallback at the cap. The sweeps
    /// converge linearly, without factorizing the contacts' coupling: for many free bodies in
    /// contact (a granular pile, whose stage matrix without the contacts is block diagonal) at
    /// a moderate tolerance (1e-4 … 1e-5) they cost a fraction of the Newton's LU; at tight
    /// tolerances they grow long, and on a hyperstatic pile at `tol = 1e-8` neither solver
    /// passes (with step halving, `adaptive`, this one gets a pile of 27 spheres through, not
    /// one of 100). A chain of free bodies (a Newton's cradle) gains at any tolerance: the
    /// sweeps pass a correction along the chain where the Newton activates one contact per
    /// iteration (50 spheres: −7 %, exact to 1e-12). A single contact, or bodies joined by
    /// joints or beams (the sparse LU either way), run slower with it (`docs/performance.md`).
    GaussSeidel,
}

/// Start of the smooth stage's Newton iteration (spec §3 starts from zero accelerations and
/// multipliers; every start converges to the same solution, to the Newton tolerance). The
/// extrapolations use the converged smooth accelerations `v̇̃` and multipliers `λ̃` of the last
/// accepted steps of the current step size, and fall back to fewer points after the start of a
/// run, a step-size change, a rolled-back attempt or a topology change (multipliers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SmoothStart {
    /// The last step's values `v̇̃_n`, `λ̃_n`.
    Last,
    /// The linear extrapolation `2 x_n − x_{n−1}`: error O(h²) on smooth motion.
    Linear,
    /// The quadratic extrapolation `3 x_n − 3 x_{n−1} + x_{n−2}` (error O(h³)) when it predicted
    /// the step before better than the linear one — both errors measured in force units,
    /// `M δv̇̃` and `k_s δλ̃` with `k_s = m/h` — else the linear one.
    #[default]
    Adaptive,
}

/// The multiple-impact sequence of the velocity stage (`nsga.md` §9, thesis Annex B §B.3).
///
/// Problem `i` solves the velocity jump with fresh impulses for the contacts that are closed at
/// position level and still approaching, `ġ_N(V⁻⁻) = G_N(q_{n+1}) V⁻⁻ < −tol_v` with `V⁻⁻` the
/// velocity reached so far, the Newton law using the updated pre-impact velocity
/// `V⁻ = v_n + W` (`ĝ̇* = G v_{n+1} + e G(q_n) V⁻`), and the impulses of the earlier problems
/// acting as the constant `−Σ_j G_jᵀ κΛ_j^acc`; perfectly plastic contacts that have acted
/// stay in the later problems, and closed contacts loaded in the previous step or twice in
/// the last [`ImpactSequence::persistent_steps`] steps take part in every problem (see
/// `Nsga::mark_admissible`). The sequence ends when no contact
/// approaches, or when a problem applies no impulse;
/// the step's impulse of a contact is the sum over the problems. No ordering and no topology
/// analysis: a Newton's cradle of touching balls comes out as the sequence of pairwise impacts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImpactSequence {
    /// Admissibility tolerance `tol_v` \[m/s\] (> 0): a closed contact takes part only if it
    /// approaches faster than this. Well above the velocity error of a converged velocity
    /// problem (so a contact the last problem closed is not admissible again) and well below
    /// `|g| h` (so resting contacts, which the smooth predictor makes approach by `≈ |g| h`,
    /// stay in the first problem). Also the load threshold of
    /// [`ImpactSequence::persistent_steps`]: a contact is loaded when its normal multiplier
    /// `Λ_N` (the impulse over the characteristic mass, m/s) exceeds it.
    pub tolerance: f64,
    /// Safety cap on the impact problems of one step (≥ 1); reaching it is an error.
    pub max_problems: usize,
    /// Memory of a contact's loads, in steps (counting every step, the contact open or closed
    /// in it; at most [`MAX_PERSISTENT_STEPS`]). A closed contact is persistent — it takes part
    /// in every impact problem, approaching or not — when it carried a load in the previous
    /// step, or in at least two of the last `persistent_steps` steps: a resting contact whose
    /// load flickers stays persistent, a single impact's impulse does not make it so beyond
    /// the next step. A load is a normal multiplier `Λ_N` (the impulse over the characteristic
    /// mass, m/s) above `tol_v` ([`Self::tolerance`], `StepCx::load_tolerance`). `0`: no
    /// contact is persistent by its load (the thesis' admissible set, with the plastic
    /// contacts that acted); `1`: loaded in the previous step (`2` is the same); `10` (default,
    /// [`DEFAULT_PERSISTENT_STEPS`]).
    pub persistent_steps: u32,
}

/// Default [`ImpactSequence::tolerance`] \[m/s\]: velocity errors of converged velocity
/// problems are ~1e-10 m/s (tolerance 1e-8 relative), resting contacts approach by
/// `|g| h ≥ 1e-4 m/s` for `h ≥ 1e-5 s`.
pub const DEFAULT_IMPACT_TOLERANCE: f64 = 1e-6;

/// Default [`ImpactSequence::max_problems`]: a chain of `N` touching balls needs `N − 1`.
pub const DEFAULT_MAX_IMPACT_PROBLEMS: usize = 1000;

/// Default [`ImpactSequence::persistent_steps`]: loaded in the previous step, or in two of
/// the last 10. Resting piles need the memory: their contacts' loads flicker from step to step
/// (gaps and impulses at the tolerance: a contact is open at position level or unloaded in one
/// step and loaded in the next), and with the previous step alone the ones that dropped out
/// come back as approaching contacts in later problems of the same step (a column of 1 000
/// spheres: −15 to −20 % time per step; `docs/performance.md`, "Persistent contacts"). A
/// second hit on a resting chain soon after a first stays a cradle
/// (`tests/newtons_cradle.rs`, `a_second_hit_soon_after_the_first_is_still_a_cradle`): the
/// first hit's impulse is one load, and the chain's contacts carry no load above `tol_v`
/// after it (a hit in the very next step would meet them loaded, with any memory).
pub const DEFAULT_PERSISTENT_STEPS: u32 = 10;

/// Largest [`ImpactSequence::persistent_steps`]: the loads of the last 32 steps are kept
/// (`saltus_core::contact::ContactHistory::loads`).
pub const MAX_PERSISTENT_STEPS: u32 = saltus_core::contact::LOAD_MEMORY;

impl Default for ImpactSequence {
    fn default() -> Self {
        Self {
            tolerance: DEFAULT_IMPACT_TOLERANCE,
            max_problems: DEFAULT_MAX_IMPACT_PROBLEMS,
            persistent_steps: DEFAULT_PERSISTENT_STEPS,
        }
    }
}

/// Default modified Newton contraction factor of [`NsgaOptions::jacobian_reuse`]. Measured
/// (instructions per run, `benches/`): 0.25 took 4–7 % fewer than 0.5 on the rigid chains
/// (N = 10, 100) and the flexible slider-crank, 0.1 about as many as 0.25, 0.8 up to 12 % more.
pub const DEFAULT_JACOBIAN_REUSE: f64 = 0.25;

impl Default for NsgaOptions {
    fn default() -> Self {
        Self {
            h: 1e-3,
            t_end: 1.0,
            rho_inf: 0.8,
            tol: 1e-8,
            tol_f: 1e-6,
            max_iterations: 50,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            adaptive: false,
            max_halvings: 8,
            line_search: true,
            output_every: 1,
            characteristic_mass: None,
            threads: 0,
            jacobian_reuse: Some(DEFAULT_JACOBIAN_REUSE),
            impacts: Some(ImpactSequence::default()),
            warm_start: true,
            contact_fallback: true,
            contact_solver: ContactSolver::default(),
            smooth_start: SmoothStart::default(),
            timings: false,
        }
    }
}

impl NsgaOptions {
    /// Check the options; the error names the option.
    pub fn validate(&self) -> Result<(), SolveError> {
        let bad = |option, message: String| Err(SolveError::Options { option, message });
        if !(self.h.is_finite() && self.h > 0.0) {
            return bad(
                "h",
                format!("step size must be finite and > 0, got {}", self.h),
            );
        }
        if !(self.t_end.is_finite() && self.t_end >= 0.0) {
            return bad(
                "t_end",
                format!("must be finite and >= 0, got {}", self.t_end),
            );
        }
        if self.t_end / self.h > MAX_STEPS {
            return bad(
                "h",
                format!(
                    "t_end / h = {:.3e} steps, more than {MAX_STEPS:.0e}: a step of {:e} s for \
                     t_end = {} s is a typo, not a simulation",
                    self.t_end / self.h,
                    self.h,
                    self.t_end
                ),
            );
        }
        if !(0.0..=1.0).contains(&self.rho_inf) {
            return bad(
                "rho_inf",
                format!("must be in [0, 1], got {}", self.rho_inf),
            );
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return bad("tol", format!("must be finite and > 0, got {}", self.tol));
        }
        if !(self.tol_f.is_finite() && self.tol_f >= 0.0) {
            return bad(
                "tol_f",
                format!("must be finite and >= 0, got {}", self.tol_f),
            );
        }
        if self.max_iterations == 0 {
            return bad("max_iterations", "must be >= 1".into());
        }
        if self.output_every == 0 {
            return bad("output_every", "must be >= 1".into());
        }
        if let Some(theta) = self.jacobian_reuse {
            if !(theta > 0.0 && theta < 1.0) {
                return bad(
                    "jacobian_reuse",
                    format!("contraction factor must be in (0, 1), got {theta}"),
                );
            }
        }
        if let Some(seq) = self.impacts {
            if !(seq.tolerance.is_finite() && seq.tolerance > 0.0) {
                return bad(
                    "impact_tolerance",
                    format!("must be finite and > 0, got {}", seq.tolerance),
                );
            }
            if seq.max_problems == 0 {
                return bad("max_impact_problems", "must be >= 1".into());
            }
            if seq.persistent_steps > MAX_PERSISTENT_STEPS {
                return bad(
                    "persistent_steps",
                    format!(
                        "must be at most {MAX_PERSISTENT_STEPS} (the loads a contact remembers), got {}",
                        seq.persistent_steps
                    ),
                );
            }
        }
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return bad("gravity", format!("must be finite, got {:?}", self.gravity));
        }
        if let Some(m) = self.characteristic_mass {
            if !(m.is_finite() && m > 0.0) {
                return bad(
                    "characteristic_mass",
                    format!("must be finite and > 0, got {m}"),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The impact sequence's settings are checked by name; the load memory has 32 steps.
    #[test]
    fn impact_settings_out_of_range_are_refused_by_name() {
        let with = |seq: ImpactSequence| {
            NsgaOptions {
                impacts: Some(seq),
                ..Default::default()
            }
            .validate()
        };
        let seq = ImpactSequence::default();
        assert!(with(ImpactSequence {
            persistent_steps: MAX_PERSISTENT_STEPS,
            ..seq
        })
        .is_ok());
        for (bad, name) in [
            (
                ImpactSequence {
                    persistent_steps: MAX_PERSISTENT_STEPS + 1,
                    ..seq
                },
                "persistent_steps",
            ),
            (
                ImpactSequence {
                    max_problems: 0,
                    ..seq
                },
                "max_impact_problems",
            ),
            (
                ImpactSequence {
                    tolerance: 0.0,
                    ..seq
                },
                "impact_tolerance",
            ),
        ] {
            match with(bad) {
                Err(SolveError::Options { option, .. }) => assert_eq!(option, name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
