//! Contact-force recovery while a model runs: the contact-table rows of each record go in,
//! the forces of the rows two records back come out (the decomposition of a step needs the
//! impulses of the next two, [`DecomposeStream`]), in row order and with the same bits as the
//! recovery of the finished history ([`super::recover`]).
//!
//! Contacts recover their forces when their law carries a [`ForceModel`]
//! ([`crate::contact::ContactLaw::force_model`], copied into each [`ContactRow`]); the rows of
//! other contacts come out at once as [`StepForces::NONE`].

use super::filter::{DecomposeStream, Parts};
use super::history::{step_forces, ContactSample, ImpactKind, StepForces};
use super::pulse::Pulse;
use super::{ForceError, ForceModel};
use crate::output::ContactRow;
use std::collections::{BTreeMap, VecDeque};

/// One impact identified in a running recovery.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamImpact {
    /// Contact id.
    pub contact: u64,
    /// Global row (of the contact table) of the impact step.
    pub row: usize,
    /// Start of the pulse: the impact step's time \[s\].
    pub time: f64,
    /// Identification.
    pub kind: ImpactKind,
    /// Impact impulse `Λ_I` \[N s\].
    pub impulse: f64,
    /// Approach speed `δ̇_i` \[m/s\].
    pub approach_speed: f64,
    /// The pulse, or why there is none.
    pub pulse: Result<Pulse, ForceError>,
}

/// A row waiting for the impulses after it.
#[derive(Clone, Copy, Debug)]
struct PendingRow {
    row: usize,
    sample: ContactSample,
}

/// A contact with a force model seen in the last record.
#[derive(Clone, Debug)]
struct ContactState {
    stream: DecomposeStream,
    pending: VecDeque<PendingRow>,
    model: ForceModel,
    restitution: f64,
    /// Last record the contact was in.
    last_record: usize,
}

/// A row's forces and its impact, once recovered.
type Slot = Option<(StepForces, Option<StreamImpact>)>;

/// A record whose rows are not all recovered yet.
#[derive(Clone, Debug, Default)]
struct PendingRecord {
    first_row: usize,
    rows: Vec<Slot>,
    missing: usize,
}

/// The running recovery (module docs).
#[derive(Clone, Debug)]
pub struct ForceStream {
    threshold: f64,
    samples: usize,
    contacts: BTreeMap<u64, ContactState>,
    records: VecDeque<PendingRecord>,
    /// Emptied row buffers of flushed records, reused.
    spare: Vec<Vec<Slot>>,
    rows: usize,
    record: usize,
    /// Scratch: contacts that left in the last record.
    gone: Vec<u64>,
}

impl ForceStream {
    /// A stream with the decomposition's relative noise threshold `threshold` and `samples`
    /// samples per pulse.
    pub fn new(threshold: f64, samples: usize) -> Self {
        Self {
            threshold,
            samples: samples.max(2),
            contacts: BTreeMap::new(),
            records: VecDeque::new(),
            spare: Vec::new(),
            rows: 0,
            record: 0,
            gone: Vec::new(),
        }
    }

    /// Samples per pulse.
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// Add the rows of the next record (time `t` \[s\] after a step of `h` \[s\], 0 for the
    /// initial record) and hand every row now recovered to `row`, and each impact among them
    /// to `impact`, in row order.
    pub fn push_record(
        &mut self,
        t: f64,
        h: f64,
        rows: &[ContactRow],
        row: &mut dyn FnMut(&StepForces),
        impact: &mut dyn FnMut(StreamImpact),
    ) {
        let record = self.record;
        self.record += 1;
        let mut slots = self.spare.pop().unwrap_or_default();
        slots.clear();
        slots.resize(rows.len(), None);
        self.records.push_back(PendingRecord {
            first_row: self.rows,
            rows: slots,
            missing: 0,
        });
        for r in rows {
            let global = self.rows;
            self.rows += 1;
            let Some(model) = r.force_model else {
                self.store(global, StepForces::NONE, None);
                continue;
            };
            let state = self
                .contacts
                .entry(r.contact)
                .or_insert_with(|| ContactState {
                    stream: DecomposeStream::new(self.threshold),
                    pending: VecDeque::with_capacity(3),
                    model,
                    restitution: r.restitution,
                    last_record: record,
                });
            state.last_record = record;
            state.pending.push_back(PendingRow {
                row: global,
                sample: ContactSample {
                    t,
                    h,
                    impulse: r.impulse[0],
                    approach_speed: -r.normal_velocity[0],
                },
            });
            if let Some(parts) = state.stream.push(r.impulse[0].max(0.0)) {
                self.complete(r.contact, parts);
            }
            self.records.back_mut().expect("pushed").missing += 1;
        }
        // Contacts gone from this record: their histories end (zeros after).
        let mut gone = std::mem::take(&mut self.gone);
        gone.clear();
        gone.extend(
            self.contacts
                .iter()
                .filter(|(_, c)| c.last_record != record)
                .map(|(id, _)| *id),
        );
        for id in &gone {
            self.end_contact(*id);
        }
        self.gone = gone;
        self.flush(row, impact);
    }

    /// End the run: recover every row still waiting and hand them over in row order.
    pub fn finish(
        &mut self,
        row: &mut dyn FnMut(&StepForces),
        impact: &mut dyn FnMut(StreamImpact),
    ) {
        let ids: Vec<u64> = self.contacts.keys().copied().collect();
        for id in ids {
            self.end_contact(id);
        }
        self.flush(row, impact);
    }

    fn end_contact(&mut self, id: u64) {
        let Some(mut state) = self.contacts.remove(&id) else {
            return;
        };
        for parts in state.stream.finish() {
            let p = state.pending.pop_front().expect("one pending row per step");
            self.finish_row(id, state.model, state.restitution, p, parts);
        }
    }

    /// The contact's oldest pending row is decomposed into `parts`.
    fn complete(&mut self, id: u64, parts: Parts) {
        let state = self.contacts.get_mut(&id).expect("contact");
        let p = state.pending.pop_front().expect("one pending row per step");
        let (model, e) = (state.model, state.restitution);
        self.finish_row(id, model, e, p, parts);
    }

    fn finish_row(
        &mut self,
        id: u64,
        model: ForceModel,
        restitution: f64,
        p: PendingRow,
        parts: Parts,
    ) {
        let (f, imp) = step_forces(&p.sample, &parts, restitution, &model, self.samples);
        let imp = imp.map(|(kind, impulse, pulse)| StreamImpact {
            contact: id,
            row: p.row,
            time: p.sample.t,
            kind,
            impulse,
            approach_speed: p.sample.approach_speed,
            pulse,
        });
        self.store(p.row, f, imp);
        let rec = self.record_of(p.row);
        self.records[rec].missing -= 1;
    }

    /// Index in `records` of the record holding global row `row`.
    fn record_of(&self, row: usize) -> usize {
        // Records are few (the stream lags two records): search from the back.
        self.records
            .iter()
            .rposition(|r| r.first_row <= row)
            .expect("row of a pending record")
    }

    fn store(&mut self, row: usize, f: StepForces, imp: Option<StreamImpact>) {
        let rec = self.record_of(row);
        let r = &mut self.records[rec];
        r.rows[row - r.first_row] = Some((f, imp));
    }

    /// Hand over the leading records whose rows are all recovered.
    fn flush(&mut self, row: &mut dyn FnMut(&StepForces), impact: &mut dyn FnMut(StreamImpact)) {
        while self.records.front().is_some_and(|r| r.missing == 0) {
            let mut rec = self.records.pop_front().expect("front");
            for slot in rec.rows.iter_mut() {
                let (f, imp) = slot.take().expect("recovered row");
                row(&f);
                if let Some(i) = imp {
                    impact(i);
                }
            }
            self.spare.push(rec.rows);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact_force::{recover, Damping, ForceLaw, Method};

    /// Three contacts over eight records — one closed and loaded with an impact on top, one
    /// bouncing (isolated impacts) that leaves the table after record 5, one without a force
    /// model — give, row by row and bit for bit, what the recovery of each finished history
    /// gives; rows come out in table order, two records late.
    #[test]
    fn stream_equals_the_recovery_of_the_finished_histories() {
        let law = ForceLaw::hertz(1e9, Damping::Flores);
        let model = ForceModel {
            law,
            method: Method::Cubic,
            race: None,
        };
        let row = |id: u64, lambda: f64, rate: f64, with: bool| ContactRow {
            contact: id,
            impulse: [lambda, 0.0, 0.0],
            normal_velocity: [rate, 0.0],
            restitution: 0.5,
            force_model: with.then_some(model),
            ..ContactRow::default()
        };
        let h = 1e-3;
        let loaded = [0.0, 0.01, 0.01, 0.05, 0.01, 0.012, 0.011, 0.01];
        let bouncing = [0.0, 0.2, 0.0, 0.0, 0.1, 0.0];
        let mut records: Vec<Vec<ContactRow>> = Vec::new();
        for k in 0..8 {
            let mut rows = vec![row(1, loaded[k], -0.5, true)];
            if k < bouncing.len() {
                rows.push(row(2, bouncing[k], -1.0, true));
            }
            rows.push(row(3, 0.3, -1.0, false));
            records.push(rows);
        }
        let mut stream = ForceStream::new(1e-6, 21);
        let (mut got, mut impacts) = (Vec::new(), Vec::new());
        let mut lag = Vec::new();
        for (k, rows) in records.iter().enumerate() {
            let before = got.len();
            stream.push_record(
                k as f64 * h,
                if k == 0 { 0.0 } else { h },
                rows,
                &mut |f| got.push(*f),
                &mut |i| impacts.push(i),
            );
            lag.push(got.len() - before);
        }
        stream.finish(&mut |f| got.push(*f), &mut |i| impacts.push(i));
        // Nothing of the first two records can be decided before the third.
        assert_eq!(&lag[..3], &[0, 0, 3]);
        assert_eq!(got.len(), records.iter().map(Vec::len).sum::<usize>());
        // The finished histories, contact by contact.
        let mut expected_rows = vec![None; got.len()];
        let mut expected_impacts = Vec::new();
        for id in [1u64, 2] {
            let mut samples = Vec::new();
            let mut rows_of = Vec::new();
            let mut global = 0;
            for (k, rows) in records.iter().enumerate() {
                for r in rows {
                    if r.contact == id {
                        samples.push(ContactSample {
                            t: k as f64 * h,
                            h: if k == 0 { 0.0 } else { h },
                            impulse: r.impulse[0],
                            approach_speed: -r.normal_velocity[0],
                        });
                        rows_of.push(global);
                    }
                    global += 1;
                }
            }
            let rec = recover(&samples, 0.5, &model, 1e-6, 21);
            for (i, g) in rows_of.iter().enumerate() {
                expected_rows[*g] = Some((rec.smooth_force[i], rec.total_force[i]));
            }
            for imp in rec.impacts {
                expected_impacts.push((rows_of[imp.index], imp.pulse.unwrap().duration));
            }
        }
        for (g, f) in got.iter().enumerate() {
            match expected_rows[g] {
                Some((smooth, total)) => {
                    assert_eq!(f.smooth_force.to_bits(), smooth.to_bits(), "row {g}");
                    assert_eq!(f.total_force.to_bits(), total.to_bits(), "row {g}");
                    assert_eq!(f.stiffness, 1e9);
                }
                None => assert!(f.total_force.is_nan() && f.stiffness.is_nan(), "row {g}"),
            }
        }
        expected_impacts.sort_by_key(|e| e.0);
        // Isolated 0.2 and 0.1 of contact 2, the 0.05 peak of contact 1 (and its 0.012 one).
        assert_eq!(impacts.len(), expected_impacts.len());
        assert!(impacts.len() >= 3);
        for (i, (row, duration)) in impacts.iter().zip(&expected_impacts) {
            assert_eq!(i.row, *row);
            assert_eq!(
                i.pulse.as_ref().unwrap().duration.to_bits(),
                duration.to_bits()
            );
        }
    }
}
