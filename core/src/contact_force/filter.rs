//! Impulse decomposition of one contact (`contact-force.md` §§1–2): the step impulses
//! `Λ_k ≥ 0` (the physical normal impulse `k_v Λ_N` of each step, summed over a
//! multiple-impact sequence) split into
//!
//! * isolated impacts `Λ_PI` — an impulse with none in the steps before and after;
//! * impacts over the smooth curve `Λ_PISuv` — the excess of an upward peak of the remaining
//!   impulse over the mean of its neighbours (an impact on a closed, loaded contact);
//! * the smooth part `Λ_S` — a closed contact's continuous force times the step, `F = Λ_S / h`;
//!
//! with `Λ_PI + Λ_PISuv + Λ_S = Λ` at every step (the additive split of §1). Steps before the
//! first and after the last given impulse count as zero (a contact created or removed during
//! the run carried no impulse then).

/// The three parts of an impulse history, step by step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decomposition {
    /// Isolated impacts `Λ_PI` \[N s\].
    pub isolated: Vec<f64>,
    /// Impacts over the smooth curve `Λ_PISuv` \[N s\].
    pub over_smooth: Vec<f64>,
    /// Smooth (closed-contact) part `Λ_S` \[N s\].
    pub smooth: Vec<f64>,
}

impl Decomposition {
    /// The impact part `Λ_I = Λ_PI + Λ_PISuv` of step `k`.
    pub fn impact(&self, k: usize) -> f64 {
        self.isolated[k] + self.over_smooth[k]
    }
}

/// The parts of one step's impulse.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Parts {
    /// Isolated impact `Λ_PI` \[N s\].
    pub isolated: f64,
    /// Impact over the smooth curve `Λ_PISuv` \[N s\].
    pub over_smooth: f64,
    /// Smooth part `Λ_S` \[N s\].
    pub smooth: f64,
}

/// The decomposition of [`decompose`] one step at a time, for a run in progress: the parts of
/// step `j` need the impulses up to `j + 2` (an upward peak of `Λ − Λ_PI` at `j` compares with
/// `j + 1`, whose isolation depends on `j + 2`), so each [`DecomposeStream::push`] returns the
/// parts of the step two before, and [`DecomposeStream::finish`] those of the last two (the
/// steps after the end count as zero). Same arithmetic as [`decompose`], which is built on it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DecomposeStream {
    /// `Λ_{j−2} … Λ_{j+2}` with `j` the next step to decompose (zeros before the start).
    window: [f64; 5],
    /// Impulses pushed.
    pushed: usize,
    /// Steps decomposed.
    done: usize,
    /// Relative noise threshold.
    threshold: f64,
}

impl DecomposeStream {
    /// An empty stream with relative noise threshold `threshold` ([`decompose`]).
    pub fn new(threshold: f64) -> Self {
        Self {
            threshold,
            ..Self::default()
        }
    }

    /// Add the next step's impulse; the parts of the step two before, once there is one.
    pub fn push(&mut self, lambda: f64) -> Option<Parts> {
        // Step i sits in slot 2 + i − done; the newest is at most two ahead of `done`.
        let slot = 2 + self.pushed - self.done;
        self.window[slot] = lambda;
        self.pushed += 1;
        (slot == 4).then(|| self.emit_and_shift())
    }

    /// The parts of the steps pushed but not yet decomposed (at most two), with zeros after
    /// the last.
    pub fn finish(&mut self) -> impl Iterator<Item = Parts> {
        let mut out = [Parts::default(); 2];
        let mut n = 0;
        while self.done < self.pushed {
            out[n] = self.emit_and_shift();
            n += 1;
        }
        out.into_iter().take(n)
    }

    fn emit_and_shift(&mut self) -> Parts {
        let p = self.emit();
        self.done += 1;
        self.window.rotate_left(1);
        self.window[4] = 0.0;
        p
    }

    /// Decompose the middle slot `j` of the window.
    fn emit(&self) -> Parts {
        let w = &self.window;
        let isolated = |k: usize| {
            // Slot k's isolated impact (k ≥ 1, k ≤ 3).
            if w[k] > 0.0 && w[k - 1] == 0.0 && w[k + 1] == 0.0 {
                w[k]
            } else {
                0.0
            }
        };
        let iso = isolated(2);
        let aux = |k: usize, iso_k: f64| w[k] - iso_k;
        let (before, here, after) = (aux(1, isolated(1)), aux(2, iso), aux(3, isolated(3)));
        if here > before && here > after {
            let mean = 0.5 * (before + after);
            if here - mean > self.threshold * here {
                return Parts {
                    isolated: iso,
                    over_smooth: here - mean,
                    smooth: mean,
                };
            }
        }
        Parts {
            isolated: iso,
            over_smooth: 0.0,
            smooth: here,
        }
    }
}

/// Decompose the impulses `lambda` (§2.2). An upward peak whose excess over the mean of its
/// neighbours is at most `threshold` times its own value is a closed contact's noise, not an
/// impact (§2.3; relative to the local load, so that a run in progress can decide it,
/// [`DecomposeStream`]), and stays in the smooth part; isolated impulses are impacts whatever
/// their size.
pub fn decompose(lambda: &[f64], threshold: f64) -> Decomposition {
    let mut d = Decomposition::default();
    let mut stream = DecomposeStream::new(threshold);
    let mut take = |p: Parts| {
        d.isolated.push(p.isolated);
        d.over_smooth.push(p.over_smooth);
        d.smooth.push(p.smooth);
    };
    for l in lambda {
        if let Some(p) = stream.push(*l) {
            take(p);
        }
    }
    for p in stream.finish() {
        take(p);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An isolated impact is all impact; a peak on a closed contact splits into the local mean
    /// (smooth) and the excess; downward peaks and monotone runs are smooth; the parts add up
    /// to the impulse exactly.
    #[test]
    fn the_three_parts() {
        let l = [
            0.0, 0.0, 5.0, 0.0, 1.0, 1.0, 4.0, 1.2, 1.0, 0.5, 0.8, 0.0, 3.0,
        ];
        let d = decompose(&l, 0.0);
        assert_eq!(
            d.isolated,
            [0., 0., 5., 0., 0., 0., 0., 0., 0., 0., 0., 0., 3.]
        );
        assert_eq!(d.over_smooth[6], 4.0 - 1.1);
        assert_eq!(d.smooth[6], 1.1);
        // 0.8 between 0.5 and 0.0 is an upward peak too: excess 0.8 − 0.25.
        assert_eq!(d.over_smooth[10], 0.8 - 0.25);
        assert_eq!(d.smooth[9], 0.5);
        for (k, lk) in l.iter().enumerate() {
            assert_eq!(
                d.isolated[k] + d.over_smooth[k] + d.smooth[k],
                *lk,
                "step {k}"
            );
        }
        assert_eq!(d.impact(2), 5.0);
        // The first and last values see zeros beyond the history.
        let d = decompose(&[2.0, 1.0, 1.0], 0.0);
        assert_eq!(d.over_smooth, [1.5, 0.0, 0.0]);
    }

    /// Pushed one at a time, the stream gives the parts two steps late and the same values
    /// at every length (0 to 6 impulses: the start and end zeros).
    #[test]
    fn stream_matches_the_whole_history() {
        let l = [0.3, 0.0, 2.0, 1.0, 1.5, 0.0];
        for n in 0..=l.len() {
            let whole = decompose(&l[..n], 0.0);
            let mut s = DecomposeStream::new(0.0);
            let mut got = Vec::new();
            for (i, x) in l[..n].iter().enumerate() {
                let p = s.push(*x);
                assert_eq!(p.is_some(), i >= 2);
                got.extend(p);
            }
            got.extend(s.finish());
            assert_eq!(got.len(), n);
            for (k, p) in got.iter().enumerate() {
                assert_eq!(p.isolated, whole.isolated[k]);
                assert_eq!(p.over_smooth, whole.over_smooth[k]);
                assert_eq!(p.smooth, whole.smooth[k]);
            }
        }
        let d = decompose(&l, 0.0);
        assert_eq!(d.isolated, [0.3, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(d.over_smooth, [0.0, 0.0, 1.5, 0.0, 1.0, 0.0]);
    }

    /// A resting contact's round-off wiggle is not an impact at a relative threshold above it.
    #[test]
    fn threshold_keeps_noise_smooth() {
        let l = [1.0, 1.0 + 1e-12, 1.0, 1.0 + 2e-12, 1.0];
        assert!(decompose(&l, 0.0).over_smooth.iter().any(|x| *x > 0.0));
        let d = decompose(&l, 1e-9);
        assert!(d.over_smooth.iter().all(|x| *x == 0.0));
        assert_eq!(d.smooth, l);
        // A real impact on the same load is kept.
        let l = [1.0, 1.0, 1.5, 1.0, 1.0];
        assert_eq!(decompose(&l, 1e-9).over_smooth[2], 0.5);
    }
}
