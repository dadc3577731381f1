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

/// Decompose the impulses `lambda` (§2.2). An upward peak whose excess is at most
/// `threshold × max Λ` is noise of a closed contact, not an impact (§2.3), and stays in the
/// smooth part; isolated impulses are impacts whatever their size.
pub fn decompose(lambda: &[f64], threshold: f64) -> Decomposition {
    let n = lambda.len();
    let at = |v: &[f64], k: isize| -> f64 {
        if k < 0 || k as usize >= n {
            0.0
        } else {
            v[k as usize]
        }
    };
    let isolated: Vec<f64> = (0..n as isize)
        .map(|k| {
            let l = lambda[k as usize];
            if l > 0.0 && at(lambda, k - 1) == 0.0 && at(lambda, k + 1) == 0.0 {
                l
            } else {
                0.0
            }
        })
        .collect();
    let aux: Vec<f64> = lambda.iter().zip(&isolated).map(|(l, p)| l - p).collect();
    let floor = threshold * lambda.iter().fold(0.0f64, |m, l| m.max(*l));
    let mut smooth = aux.clone();
    let mut over_smooth = vec![0.0; n];
    for k in 0..n as isize {
        let (before, here, after) = (at(&aux, k - 1), aux[k as usize], at(&aux, k + 1));
        if here > before && here > after {
            let mean = 0.5 * (before + after);
            if here - mean > floor {
                smooth[k as usize] = mean;
                over_smooth[k as usize] = here - mean;
            }
        }
    }
    Decomposition {
        isolated,
        over_smooth,
        smooth,
    }
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

    /// A resting contact's round-off wiggle is not an impact at a relative threshold above it.
    #[test]
    fn threshold_keeps_noise_smooth() {
        let l = [1.0, 1.0 + 1e-12, 1.0, 1.0 + 2e-12, 1.0];
        assert!(decompose(&l, 0.0).over_smooth.iter().any(|x| *x > 0.0));
        let d = decompose(&l, 1e-9);
        assert!(d.over_smooth.iter().all(|x| *x == 0.0));
        assert_eq!(d.smooth, l);
    }
}
