//! What a step leaves behind: the elements' output channels, the per-step contact table and
//! the energy of a record ([`Nsga::record`]), and the run loop that records them
//! ([`Nsga::run`]).

use super::{Nsga, RunSummary};
use crate::error::SolveError;
use nalgebra::Vector3;
use saltus_core::contact::contact_row;
use saltus_core::output::{ResultSink, StepRecord};
use saltus_core::{Energy, Model, OutputState};
use std::time::Instant;

impl Nsga {
    /// Converged outputs view of element `ie` at the current time.
    pub(super) fn output_state(
        &mut self,
        model: &Model,
        ie: usize,
        k: [f64; 3],
        h: f64,
        gravity: Vector3<f64>,
    ) -> OutputState<'_> {
        let nn = self.state.gather(model, ie);
        OutputState {
            t: self.t,
            nodes: self.state.gathered_nodes(nn),
            kinds: self.state.gathered_kinds(nn),
            mult_smooth: self.smooth.element_multipliers(ie),
            mult_position: self.position.element_multipliers(ie),
            mult_velocity: self.velocity.element_multipliers(ie),
            k,
            h,
            gravity,
        }
    }

    /// Element outputs and total energy at the current state (fills the record buffer).
    fn collect_outputs(&mut self, model: &Model) -> Energy {
        let h = if self.stats.h > 0.0 {
            self.stats.h
        } else {
            self.opts.h
        };
        // The initial record's smooth multipliers come from the initial-acceleration solve
        // (step h₀): consistent reactions need its scaling.
        let h_s = if self.stats.h > 0.0 || self.initial_h == 0.0 {
            h
        } else {
            self.initial_h
        };
        let k = [self.mass / h_s, self.mass, self.mass];
        let gravity = self.opts.gravity;
        // Output slot of each current element (rebuilt when the element set changed).
        if self.output_slots_topology != Some(model.topology()) {
            self.output_slots.clear();
            self.output_slots.resize(model.elements().len(), usize::MAX);
            for (slot, handle) in self.output_handles.iter().enumerate() {
                if let Some(ie) = model.element_index(*handle) {
                    self.output_slots[ie] = slot;
                }
            }
            self.output_slots_topology = Some(model.topology());
        }
        // One pass over the elements: energy, contact-table row, output channels.
        let mut energy = Energy::default();
        let mut rows = std::mem::take(&mut self.contacts);
        rows.clear();
        let mut values = std::mem::take(&mut self.values);
        // Elements of the layout that are gone: NaN.
        for slot in 0..self.output_handles.len() {
            if model.element_index(self.output_handles[slot]).is_none() {
                let (off, len) = self.output_range(slot);
                values[off..off + len].fill(f64::NAN);
            }
        }
        for ie in 0..model.elements().len() {
            let slot = self.output_slots[ie];
            let range = (slot != usize::MAX).then(|| self.output_range(slot));
            let rate = self.impact_rate.get(ie).copied().unwrap_or(f64::NAN);
            let os = self.output_state(model, ie, k, h, gravity);
            let e = &model.elements()[ie];
            let en = e.energy(&os);
            energy.kinetic += en.kinetic;
            energy.potential += en.potential;
            if let Some(c) = e.as_contact() {
                rows.push(contact_row(
                    &c,
                    model.element_handles()[ie],
                    e.nodes(),
                    &os,
                    rate,
                ));
            }
            if let Some((off, len)) = range {
                e.write_outputs(&os, &mut values[off..off + len]);
            }
        }
        self.contacts = rows;
        self.values = values;
        energy
    }

    /// Offset and length of output slot `slot` in the record's element values.
    fn output_range(&self, slot: usize) -> (usize, usize) {
        let len = self.layout.element_outputs[slot]
            .iter()
            .map(|o| o.len)
            .sum();
        (self.layout.element_offsets[slot], len)
    }

    /// Send the current state to `sink`.
    pub fn record(&mut self, model: &Model, sink: &mut dyn ResultSink) -> Result<(), SolveError> {
        let energy = self.collect_outputs(model);
        sink.record(&StepRecord {
            step: self.step,
            t: self.t,
            nodes: &self.state.prev,
            element_values: &self.values,
            stats: self.stats,
            energy,
            contacts: &self.contacts,
        })?;
        Ok(())
    }

    /// Integrate to `t_end`, recording the initial state and every `output_every`-th step.
    /// `progress(t)` is called after every step. On failure the sink is finished (results so
    /// far are kept) and the error returned.
    pub fn run(
        &mut self,
        model: &mut Model,
        sink: &mut dyn ResultSink,
        progress: &mut dyn FnMut(f64),
    ) -> Result<RunSummary, SolveError> {
        let start = Instant::now();
        sink.begin(&self.layout)?;
        let result = self.run_inner(model, sink, progress);
        self.summary.wall = start.elapsed();
        let finished = sink.finish();
        result?;
        finished?;
        Ok(self.summary())
    }

    fn run_inner(
        &mut self,
        model: &mut Model,
        sink: &mut dyn ResultSink,
        progress: &mut dyn FnMut(f64),
    ) -> Result<(), SolveError> {
        if self.step == 0 {
            self.record(model, sink)?;
        }
        let eps = 1e-9 * self.opts.h;
        let mut since = 0;
        while self.t < self.opts.t_end - eps {
            self.step(model)?;
            since += 1;
            let last = self.t >= self.opts.t_end - eps;
            if since >= self.opts.output_every || last {
                self.record(model, sink)?;
                since = 0;
            }
            progress(self.t);
        }
        Ok(())
    }
}
