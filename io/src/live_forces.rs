//! `/contact_forces` written while the model runs: the [`Hdf5Sink`](crate::Hdf5Sink) feeds
//! each record's contact rows to a [`ForceStream`] and appends what it recovers (two records
//! late) to extendible datasets with the layout of `saltus forces` (`docs/hdf5-layout.md`), so
//! the file is the same whichever way the forces were recovered.
//!
//! Nothing is created until a contact that declares a force recovery
//! (`ContactLaw::force_model`) appears; the rows before it are then written as NaN.

use hdf5_metno as hdf5;

use crate::contact_table::Column;
use hdf5::Group;
use saltus_core::contact_force::{ForceStream, ImpactKind, StepForces, StreamImpact};
use saltus_core::output::ContactRow;

/// Per-row and per-impact columns of `/contact_forces`.
struct Columns {
    stiffness: Column<f64>,
    smooth_force: Column<f64>,
    impact_impulse: Column<f64>,
    impact_force: Column<f64>,
    total_force: Column<f64>,
    /// Ball–race stresses ([`crate::forces::STRESS_COLUMNS`]).
    stress: [Column<f64>; 4],
    contact: Column<u64>,
    row: Column<u64>,
    kind: Column<u8>,
    time: Column<f64>,
    impulse: Column<f64>,
    approach_speed: Column<f64>,
    duration: Column<f64>,
    peak_force: Column<f64>,
    peak_time: Column<f64>,
    max_penetration: Column<f64>,
    rebound_speed: Column<f64>,
    damping: Column<f64>,
    t: Column<f64>,
    force: Column<f64>,
    penetration: Column<f64>,
    rate: Column<f64>,
    acceleration: Column<f64>,
    /// Rows and impacts on disk.
    rows_written: usize,
    impacts_written: usize,
    /// Rows and impacts buffered.
    rows_buffered: usize,
    impacts_buffered: usize,
}

/// The live recovery of one sink.
pub(crate) struct LiveForces {
    stream: ForceStream,
    columns: Option<Columns>,
    /// Rows seen before any contact declared a recovery (written as NaN once one does).
    rows_before: usize,
    threshold: f64,
    /// Impacts handed over by the stream, before they are buffered (reused).
    impacts: Vec<StreamImpact>,
}

type Err = (String, hdf5::Error);

impl LiveForces {
    /// A live recovery with the decomposition threshold `threshold` and `samples` samples per
    /// pulse (the defaults of `saltus forces`: 1e-6, 101).
    pub(crate) fn new(threshold: f64, samples: usize) -> Self {
        Self {
            stream: ForceStream::new(threshold, samples),
            columns: None,
            rows_before: 0,
            threshold,
            impacts: Vec::new(),
        }
    }

    /// Take the contact rows of one record (time `t`, step `h`); creates `/contact_forces`
    /// under `root` at the first row that declares a recovery.
    pub(crate) fn push(
        &mut self,
        root: &Group,
        t: f64,
        h: f64,
        rows: &[ContactRow],
    ) -> Result<(), Err> {
        if self.columns.is_none() {
            if !rows.iter().any(|r| r.force_model.is_some()) {
                self.rows_before += rows.len();
                return Ok(());
            }
            let mut c = Columns::create(root, self.stream.samples(), self.threshold)?;
            for _ in 0..self.rows_before {
                c.push_row(&StepForces::NONE);
            }
            self.columns = Some(c);
        }
        let c = self.columns.as_mut().expect("created");
        let impacts = &mut self.impacts;
        self.stream
            .push_record(t, h, rows, &mut |f| c.push_row(f), &mut |i| impacts.push(i));
        for i in self.impacts.drain(..) {
            c.push_impact(&i);
        }
        Ok(())
    }

    /// The run ended: recover the rows still waiting.
    pub(crate) fn finish(&mut self) {
        let Some(c) = self.columns.as_mut() else {
            return;
        };
        let impacts = &mut self.impacts;
        self.stream
            .finish(&mut |f| c.push_row(f), &mut |i| impacts.push(i));
        for i in self.impacts.drain(..) {
            c.push_impact(&i);
        }
    }

    /// Write the buffered rows and impacts. Errors name the dataset.
    pub(crate) fn write(&mut self) -> Result<(), Err> {
        match self.columns.as_mut() {
            Some(c) => c.write(),
            None => Ok(()),
        }
    }

    /// Bytes buffered.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.columns.as_ref().map_or(0, |c| {
            c.rows_buffered * 9 * 8 + c.impacts_buffered * (12 * 8 + 5 * 8 * c.t.row_len())
        })
    }
}

impl Columns {
    fn create(root: &Group, samples: usize, threshold: f64) -> Result<Self, Err> {
        let g = root
            .create_group("contact_forces")
            .map_err(|e| ("group `/contact_forces`".to_string(), e))?;
        let attr = |name: &str, value: &str| {
            crate::hdf5_sink::write_str_attr(&g, name, value)
                .map_err(|e| (format!("attribute `/contact_forces.{name}`"), e))
        };
        attr(
            "source",
            "live: each contact's force_recovery of the model (damping, method, stiffness per contact)",
        )?;
        g.new_attr::<f64>()
            .create("threshold")
            .and_then(|a| a.write_scalar(&threshold))
            .map_err(|e| ("attribute `/contact_forces.threshold`".to_string(), e))?;
        let gp = "/contact_forces";
        let f = |name: &str, unit: &str, desc: &str| Column::create(&g, gp, name, &[], unit, desc);
        let ig = g
            .create_group("impacts")
            .map_err(|e| ("group `/contact_forces/impacts`".to_string(), e))?;
        let ip = "/contact_forces/impacts";
        let i = |name: &str, unit: &str, desc: &str| Column::create(&ig, ip, name, &[], unit, desc);
        let s = |name: &str, unit: &str, desc: &str| {
            Column::create(&ig, ip, name, &[samples], unit, desc)
        };
        Ok(Self {
            stiffness: f("stiffness", "N/m^n", "stiffness K of the row's contact (NaN: contact not recovered)")?,
            smooth_force: f("smooth_force", "N", "closed-contact force Lambda_S / h")?,
            impact_impulse: f("impact_impulse", "N*s", "impact part of the impulse, Lambda_PI + Lambda_PISuv (impulse = impact_impulse + smooth_force * h)")?,
            impact_force: f("impact_force", "N", "peak force of the impact pulse at the row (0: no impact; NaN: an impact without a pulse)")?,
            total_force: f("total_force", "N", "smooth_force + impact_force: the contact force reported for mechanisms")?,
            stress: {
                let [a, b, c, d] = crate::forces::STRESS_COLUMNS
                    .map(|(name, unit, desc)| Column::create(&g, gp, name, &[], unit, desc));
                [a?, b?, c?, d?]
            },
            contact: Column::create(&ig, ip, "contact", &[], "1", "contact id")?,
            row: Column::create(&ig, ip, "row", &[], "1", "row of /contacts of the impact step")?,
            kind: Column::create(&ig, ip, "kind", &[], "1", "1 isolated impact, 2 impact over a closed contact's smooth load")?,
            time: i("time", "s", "start of the pulse: time of the impact step")?,
            impulse: i("impulse", "N*s", "impact impulse Lambda_I")?,
            approach_speed: i("approach_speed", "m/s", "normal approach speed before the impact")?,
            duration: i("duration", "s", "contact duration T (NaN: no pulse)")?,
            peak_force: i("peak_force", "N", "largest force of the pulse")?,
            peak_time: i("peak_time", "s", "time of the largest force since the start")?,
            max_penetration: i("max_penetration", "m", "largest penetration")?,
            rebound_speed: i("rebound_speed", "m/s", "separation speed at the end of the pulse")?,
            damping: i("damping", "N*s/m^(n+1)", "damping coefficient D of the law for this impact")?,
            t: s("t", "s", "sample times since the start of the pulse")?,
            force: s("force", "N", "force history")?,
            penetration: s("penetration", "m", "penetration history")?,
            rate: s("rate", "m/s", "penetration-rate history (positive approaching)")?,
            acceleration: s("acceleration", "m/s^2", "relative normal acceleration history")?,
            rows_written: 0,
            impacts_written: 0,
            rows_buffered: 0,
            impacts_buffered: 0,
        })
    }

    fn push_row(&mut self, f: &StepForces) {
        self.stiffness.push(&[f.stiffness]);
        self.smooth_force.push(&[f.smooth_force]);
        self.impact_impulse.push(&[f.impact_impulse]);
        self.impact_force.push(&[f.impact_force]);
        self.total_force.push(&[f.total_force]);
        for (c, v) in self.stress.iter_mut().zip(f.stress) {
            c.push(&[v]);
        }
        self.rows_buffered += 1;
    }

    fn push_impact(&mut self, i: &StreamImpact) {
        self.contact.push(&[i.contact]);
        self.row.push(&[i.row as u64]);
        self.kind.push(&[match i.kind {
            ImpactKind::Isolated => 1,
            ImpactKind::OverSmooth => 2,
        }]);
        self.time.push(&[i.time]);
        self.impulse.push(&[i.impulse]);
        self.approach_speed.push(&[i.approach_speed]);
        let n = self.t.row_len();
        match &i.pulse {
            Ok(p) => {
                self.duration.push(&[p.duration]);
                self.peak_force.push(&[p.peak_force]);
                self.peak_time.push(&[p.peak_time]);
                self.max_penetration.push(&[p.max_penetration]);
                self.rebound_speed.push(&[p.rebound_speed]);
                self.damping.push(&[p.damping]);
                self.t.extend(p.samples.iter().map(|s| s.t));
                self.force.extend(p.samples.iter().map(|s| s.force));
                self.penetration
                    .extend(p.samples.iter().map(|s| s.penetration));
                self.rate.extend(p.samples.iter().map(|s| s.rate));
                self.acceleration
                    .extend(p.samples.iter().map(|s| s.acceleration));
            }
            Err(_) => {
                for c in [
                    &mut self.duration,
                    &mut self.peak_force,
                    &mut self.peak_time,
                    &mut self.max_penetration,
                    &mut self.rebound_speed,
                    &mut self.damping,
                ] {
                    c.push(&[f64::NAN]);
                }
                for c in [
                    &mut self.t,
                    &mut self.force,
                    &mut self.penetration,
                    &mut self.rate,
                    &mut self.acceleration,
                ] {
                    c.extend(std::iter::repeat_n(f64::NAN, n));
                }
            }
        }
        self.impacts_buffered += 1;
    }

    /// Write the buffered rows and impacts; the buffers are cleared only when every dataset
    /// was written (a retry after a failure rewrites the same rows).
    fn write(&mut self) -> Result<(), Err> {
        let (r0, nr) = (self.rows_written, self.rows_buffered);
        let (i0, ni) = (self.impacts_written, self.impacts_buffered);
        for c in self.row_columns() {
            c.write(r0, nr)?;
        }
        self.contact.write(i0, ni)?;
        self.row.write(i0, ni)?;
        self.kind.write(i0, ni)?;
        for c in self.impact_columns() {
            c.write(i0, ni)?;
        }
        for c in self.row_columns() {
            c.clear();
        }
        self.contact.clear();
        self.row.clear();
        self.kind.clear();
        for c in self.impact_columns() {
            c.clear();
        }
        self.rows_written += nr;
        self.impacts_written += ni;
        self.rows_buffered = 0;
        self.impacts_buffered = 0;
        Ok(())
    }

    fn row_columns(&mut self) -> [&mut Column<f64>; 9] {
        let [s0, s1, s2, s3] = &mut self.stress;
        [
            &mut self.stiffness,
            &mut self.smooth_force,
            &mut self.impact_impulse,
            &mut self.impact_force,
            &mut self.total_force,
            s0,
            s1,
            s2,
            s3,
        ]
    }

    fn impact_columns(&mut self) -> [&mut Column<f64>; 14] {
        [
            &mut self.time,
            &mut self.impulse,
            &mut self.approach_speed,
            &mut self.duration,
            &mut self.peak_force,
            &mut self.peak_time,
            &mut self.max_penetration,
            &mut self.rebound_speed,
            &mut self.damping,
            &mut self.t,
            &mut self.force,
            &mut self.penetration,
            &mut self.rate,
            &mut self.acceleration,
        ]
    }
}
