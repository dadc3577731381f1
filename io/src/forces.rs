//! Contact forces recovered from the impulses of a result file (`contact-force.md`,
//! [`saltus_core::contact_force`]): the `/contacts` table in, the group `/contact_forces` out
//! (layout in `docs/hdf5-layout.md`).
//!
//! [`recover_table`] does the work on a [`ContactHistoryTable`] in memory; [`recover_file`]
//! reads one from a finished HDF5 file, recovers and writes the result into the same file
//! (replacing an earlier recovery). A file whose records skip steps (`output_every > 1`) or
//! that predates the approach speeds in the table is refused: the impulses of the missing
//! steps cannot be recovered.

use hdf5_metno as hdf5;

use saltus_core::contact_force::{
    hertz_stiffness, recover, ContactSample, Damping, ForceError, ForceLaw, ForceModel,
    ForceRecoverySpec, ImpactKind, Material, Method, RaceGeometry,
};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a contact's stiffness `K` comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stiffness {
    /// The same `K` \[N/mⁿ\] for every contact.
    Given(f64),
    /// Hertz's `K` from each contact's effective radius (`/contacts/radius`) and the two
    /// bodies' materials ([`saltus_core::contact_force::hertz_stiffness`]).
    Hertz {
        /// Material of body a.
        a: Material,
        /// Material of body b.
        b: Material,
    },
}

/// What to recover and how.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveryOptions {
    /// Hysteresis damping model (default: Flores, as the thesis).
    pub damping: Damping,
    /// Pulse reconstruction (default: the thesis' cubic profile).
    pub method: Method,
    /// Stiffness source.
    pub stiffness: Stiffness,
    /// Law exponent `n` (default 3/2).
    pub exponent: f64,
    /// Relative noise threshold of the impulse decomposition (default 1e-6).
    pub threshold: f64,
    /// Samples per reconstructed pulse (default 101).
    pub samples: usize,
    /// Only these contact ids (`None`: every contact).
    pub contacts: Option<Vec<u64>>,
}

impl RecoveryOptions {
    /// Defaults with the stiffness `stiffness`.
    pub fn new(stiffness: Stiffness) -> Self {
        Self {
            damping: Damping::Flores,
            method: Method::Cubic,
            stiffness,
            exponent: 1.5,
            threshold: 1e-6,
            samples: 101,
            contacts: None,
        }
    }
}

/// The rows of a contact table the recovery reads (one entry per row, rows in record order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactHistoryTable {
    /// Contact id of each row.
    pub contact: Vec<u64>,
    /// Time of each row's record \[s\].
    pub time: Vec<f64>,
    /// Step size of each row's record \[s\] (0 for the initial record).
    pub h: Vec<f64>,
    /// Normal impulse `k_v Λ_N` \[N s\].
    pub impulse: Vec<f64>,
    /// Normal rate before the contact's impact `ġ_N(V⁻)` \[m/s\].
    pub pre_impact_rate: Vec<f64>,
    /// Restitution `e_N`.
    pub restitution: Vec<f64>,
    /// Effective radius `R*` \[m\] (NaN: none).
    pub radius: Vec<f64>,
    /// Ball, race and groove radii of a ball–race contact \[m\] (NaN: none).
    pub race: Vec<[f64; 3]>,
}

impl ContactHistoryTable {
    /// Append the contact rows `rows` of one record at time `t` \[s\] after a step of size
    /// `h` \[s\] (0 for the initial record).
    pub fn push_record(&mut self, t: f64, h: f64, rows: &[saltus_core::ContactRow]) {
        for r in rows {
            self.contact.push(r.contact);
            self.time.push(t);
            self.h.push(h);
            self.impulse.push(r.impulse[0]);
            self.pre_impact_rate.push(r.normal_velocity[0]);
            self.restitution.push(r.restitution);
            self.radius.push(r.radius);
            self.race.push(r.race);
        }
    }

    /// The table of the records of a [`saltus_core::MemorySink`] (every step recorded).
    pub fn from_memory(sink: &saltus_core::MemorySink) -> Self {
        let mut t = Self::default();
        for (i, rows) in sink.contacts.iter().enumerate() {
            t.push_record(sink.time[i], sink.stats[i].h, rows);
        }
        t
    }
}

/// The recovered forces, aligned with the table's rows, and the identified impacts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForceTable {
    /// Stiffness `K` used for each row's contact (NaN: not recovered).
    pub stiffness: Vec<f64>,
    /// Smooth force `Λ_S / h` \[N\].
    pub smooth_force: Vec<f64>,
    /// Impact impulse `Λ_PI + Λ_PISuv` \[N s\].
    pub impact_impulse: Vec<f64>,
    /// Peak of the impact pulse at the row (0: no impact; NaN: an impact without a pulse).
    pub impact_force: Vec<f64>,
    /// Total force `Λ_S / h` + peak \[N\] (§6).
    pub total_force: Vec<f64>,
    /// Ball–race contacts: maximum pressure, maximum shear, octahedral shear \[Pa\] and the
    /// depth of the maximum shear \[m\] at the total force (NaN otherwise).
    pub stress: Vec<[f64; 4]>,
    /// The impacts, in row order.
    pub impacts: Vec<ImpactRecord>,
    /// Samples per pulse.
    pub samples: usize,
}

/// One identified impact (a row of `/contact_forces/impacts`).
#[derive(Clone, Debug, PartialEq)]
pub struct ImpactRecord {
    /// Contact id.
    pub contact: u64,
    /// Row of `/contacts` (the impact step).
    pub row: usize,
    /// Start of the pulse: the impact step's time \[s\].
    pub time: f64,
    /// 1 isolated, 2 over a closed contact's smooth load.
    pub kind: u8,
    /// Impact impulse `Λ_I` \[N s\].
    pub impulse: f64,
    /// Approach speed `δ̇_i` \[m/s\].
    pub approach_speed: f64,
    /// The pulse (duration, peaks, samples), or why there is none.
    pub pulse: Result<saltus_core::contact_force::Pulse, ForceError>,
}

/// A recovery that could not be done.
#[derive(Debug, thiserror::Error)]
pub enum ForcesError {
    /// The file cannot be read or written.
    #[error("{}: {what}: {source}", path.display())]
    Hdf5 {
        /// The file.
        path: PathBuf,
        /// What was being read or written.
        what: String,
        /// The HDF5 error.
        source: hdf5::Error,
    },
    /// The file lacks what the recovery needs.
    #[error("{}: {message}", path.display())]
    Unusable {
        /// What is wrong.
        message: String,
        /// The file.
        path: PathBuf,
    },
    /// A contact's parameters make the recovery impossible.
    #[error("contact {contact}: {source}")]
    Contact {
        /// Contact id.
        contact: u64,
        /// The parameter error.
        source: ForceError,
    },
    /// A requested contact is not in the file.
    #[error("{}: no contact `{name}` (contact ids are in /contacts/contact; named contacts in the `id` attribute of /elements/<name>)", path.display())]
    NoSuchContact {
        /// The file.
        path: PathBuf,
        /// The name or id asked for.
        name: String,
    },
}

/// What [`recover_file`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct ForcesSummary {
    /// Contacts recovered.
    pub contacts: usize,
    /// Impacts identified.
    pub impacts: usize,
    /// Impacts without a pulse, with the first reasons.
    pub failed: usize,
    /// Up to three `(contact, time, reason)` of the impacts without a pulse.
    pub failures: Vec<(u64, f64, String)>,
    /// Largest total force \[N\] and its contact and time.
    pub peak: Option<(f64, u64, f64)>,
    /// Element names of the contacts the file names (`/elements/<name>` with its `id`), for
    /// the messages; contacts without one are shown by id.
    pub names: BTreeMap<u64, String>,
}

impl ForcesSummary {
    /// `contact`'s element name, or `contact <id>`.
    fn label(&self, contact: u64) -> String {
        self.names
            .get(&contact)
            .cloned()
            .unwrap_or_else(|| format!("contact {contact}"))
    }
}

impl fmt::Display for ForcesSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} contacts, {} impacts reconstructed",
            self.contacts,
            self.impacts - self.failed
        )?;
        if let Some((p, c, t)) = self.peak {
            write!(
                f,
                "; largest force {p:.6e} N ({}, t = {t:.6} s)",
                self.label(c)
            )?;
        }
        if self.failed > 0 {
            write!(f, "\n{} impacts without a pulse, e.g.:", self.failed)?;
            for (c, t, why) in &self.failures {
                write!(f, "\n  {}, t = {t:.6} s: {why}", self.label(*c))?;
            }
        }
        Ok(())
    }
}

/// Recover the forces of the contacts of `table` (all, or `opts.contacts`).
pub fn recover_table(
    table: &ContactHistoryTable,
    opts: &RecoveryOptions,
) -> Result<ForceTable, ForcesError> {
    let m = table.contact.len();
    let mut by_contact: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (row, id) in table.contact.iter().enumerate() {
        if opts.contacts.as_ref().is_none_or(|c| c.contains(id)) {
            by_contact.entry(*id).or_default().push(row);
        }
    }
    let mut out = ForceTable {
        stiffness: vec![f64::NAN; m],
        smooth_force: vec![f64::NAN; m],
        impact_impulse: vec![f64::NAN; m],
        impact_force: vec![f64::NAN; m],
        total_force: vec![f64::NAN; m],
        stress: vec![[f64::NAN; 4]; m],
        impacts: Vec::new(),
        samples: opts.samples.max(2),
    };
    for (id, rows) in by_contact {
        let first = rows[0];
        let model = contact_model(table, first, opts).map_err(|source| ForcesError::Contact {
            contact: id,
            source,
        })?;
        let k = model.law.stiffness;
        let samples: Vec<ContactSample> = rows
            .iter()
            .map(|&r| ContactSample {
                t: table.time[r],
                h: table.h[r],
                impulse: table.impulse[r],
                approach_speed: -table.pre_impact_rate[r],
            })
            .collect();
        let rec = recover(
            &samples,
            table.restitution[first],
            &model,
            opts.threshold,
            out.samples,
        );
        for (i, &r) in rows.iter().enumerate() {
            out.stiffness[r] = k;
            out.stress[r] = rec.stress[i];
            out.smooth_force[r] = rec.smooth_force[i];
            out.impact_impulse[r] = rec.impact_impulse[i];
            out.impact_force[r] = 0.0;
            out.total_force[r] = rec.total_force[i];
        }
        for imp in rec.impacts {
            let r = rows[imp.index];
            out.impact_force[r] = imp.pulse.as_ref().map_or(f64::NAN, |p| p.peak_force);
            out.impacts.push(ImpactRecord {
                contact: id,
                row: r,
                time: imp.t,
                kind: match imp.kind {
                    ImpactKind::Isolated => 1,
                    ImpactKind::OverSmooth => 2,
                },
                impulse: imp.impulse,
                approach_speed: imp.approach_speed,
                pulse: imp.pulse,
            });
        }
    }
    out.impacts.sort_by_key(|i| i.row);
    Ok(out)
}

/// The force model of the contact of table row `row` under `opts`: a ball–race contact (the
/// table's `race`) with materials gets Hertz's elliptical contact and its stresses, as while
/// running; otherwise the law with `K` given or from the effective radius.
fn contact_model(
    table: &ContactHistoryTable,
    row: usize,
    opts: &RecoveryOptions,
) -> Result<ForceModel, ForceError> {
    let race = table.race[row];
    let k = match opts.stiffness {
        Stiffness::Hertz { a, b } if race.iter().all(|x| x.is_finite()) => {
            let spec = ForceRecoverySpec {
                damping: opts.damping,
                method: opts.method,
                exponent: opts.exponent,
                ..ForceRecoverySpec::hertz(a, b)
            };
            let geometry = RaceGeometry {
                race_radius: race[1],
                groove_radius: race[2],
            };
            return spec.resolve_ball_on_race(geometry, race[0], a.young, a.poisson);
        }
        Stiffness::Given(k) => k,
        Stiffness::Hertz { a, b } => {
            let r = table.radius[row];
            if !r.is_finite() {
                return Err(ForceError::Parameter {
                    what: "effective radius R*",
                    value: r,
                    why: "the contact has no curved surfaces (a point contact): give the stiffness K instead of materials",
                });
            }
            hertz_stiffness(r, &a, &b)?
        }
    };
    let law = ForceLaw {
        stiffness: k,
        exponent: opts.exponent,
        damping: opts.damping,
    };
    law.validate()?;
    Ok(ForceModel {
        law,
        method: opts.method,
        race: None,
    })
}

fn h5err(path: &Path, what: impl Into<String>) -> impl FnOnce(hdf5::Error) -> ForcesError {
    let (path, what) = (path.to_path_buf(), what.into());
    move |source| ForcesError::Hdf5 { path, what, source }
}

/// Read the rows of `/contacts` the recovery needs from the open `file` at `path`.
pub fn read_table(file: &hdf5::File, path: &Path) -> Result<ContactHistoryTable, ForcesError> {
    let unusable = |message: String| ForcesError::Unusable {
        message,
        path: path.to_path_buf(),
    };
    for needed in [
        "contacts/normal_velocity",
        "contacts/restitution",
        "contacts/radius",
    ] {
        if file.link_exists(needed) {
            continue;
        }
        return Err(unusable(format!(
            "no `/{needed}`: the file was written before the contact table carried what the force recovery needs (approach speeds, restitution, radii); run the model again"
        )));
    }
    let f64s = |name: &str| -> Result<Vec<f64>, ForcesError> {
        file.dataset(name)
            .and_then(|d| d.read_raw::<f64>())
            .map_err(h5err(path, format!("dataset `/{name}`")))
    };
    let u64s = |name: &str| -> Result<Vec<u64>, ForcesError> {
        file.dataset(name)
            .and_then(|d| d.read_raw::<u64>())
            .map_err(h5err(path, format!("dataset `/{name}`")))
    };
    let steps = u64s("step")?;
    if let Some(w) = steps.windows(2).find(|w| w[1] != w[0] + 1) {
        return Err(unusable(format!(
            "records skip steps ({} then {}; `output_every` > 1): the impulses of the unrecorded steps are missing, so impacts cannot be told from closed-contact load; run with output_every = 1",
            w[0], w[1]
        )));
    }
    let h_rec = f64s("solver/h")?;
    let count = u64s("contacts/count")?;
    let mut h = Vec::new();
    for (r, c) in count.iter().enumerate() {
        let hr = h_rec.get(r).copied().unwrap_or(f64::NAN);
        h.extend(std::iter::repeat_n(hr, *c as usize));
    }
    let impulse3 = f64s("contacts/impulse")?;
    let rate2 = f64s("contacts/normal_velocity")?;
    let table = ContactHistoryTable {
        contact: u64s("contacts/contact")?,
        time: f64s("contacts/time")?,
        h,
        impulse: impulse3.chunks(3).map(|c| c[0]).collect(),
        pre_impact_rate: rate2.chunks(2).map(|c| c[0]).collect(),
        restitution: f64s("contacts/restitution")?,
        radius: f64s("contacts/radius")?,
        race: f64s("contacts/race")?
            .chunks(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect(),
    };
    let m = table.contact.len();
    let lens = [
        table.time.len(),
        table.h.len(),
        table.impulse.len(),
        table.pre_impact_rate.len(),
        table.restitution.len(),
        table.radius.len(),
        table.race.len(),
    ];
    if lens.iter().any(|l| *l != m) {
        return Err(unusable(format!(
            "the contact table's datasets have different lengths ({m} ids; {lens:?}): the file is damaged"
        )));
    }
    Ok(table)
}

/// The contact id of `name` in `file`: a number is an id; otherwise the `id` attribute of the
/// element group `/elements/<name>`.
pub fn contact_id(file: &hdf5::File, path: &Path, name: &str) -> Result<u64, ForcesError> {
    if let Ok(id) = name.parse::<u64>() {
        return Ok(id);
    }
    let group = format!("elements/{}", crate::hdf5_sink::element_group_name(name));
    file.group(&group)
        .and_then(|g| g.attr("id"))
        .and_then(|a| a.read_scalar::<u64>())
        .map_err(|_| ForcesError::NoSuchContact {
            path: path.to_path_buf(),
            name: name.to_string(),
        })
}

/// Recover the contact forces of the result file `path` and write them to its
/// `/contact_forces` group (replacing an earlier one). `names` (element names or ids; empty:
/// every contact) adds to `opts.contacts`.
pub fn recover_file(
    path: &Path,
    opts: &RecoveryOptions,
    names: &[String],
) -> Result<ForcesSummary, ForcesError> {
    let file = hdf5::File::open_rw(path).map_err(h5err(path, "open for writing"))?;
    let table = read_table(&file, path)?;
    let mut opts = opts.clone();
    if !names.is_empty() {
        let ids = names
            .iter()
            .map(|n| contact_id(&file, path, n))
            .collect::<Result<Vec<u64>, _>>()?;
        opts.contacts.get_or_insert_with(Vec::new).extend(ids);
    }
    let opts = &opts;
    if let Some(ids) = &opts.contacts {
        if let Some(missing) = ids.iter().find(|id| !table.contact.contains(id)) {
            return Err(ForcesError::NoSuchContact {
                path: path.to_path_buf(),
                name: missing.to_string(),
            });
        }
    }
    let forces = recover_table(&table, opts)?;
    write_forces(&file, path, &forces, opts)?;
    file.flush().map_err(h5err(path, "flush"))?;
    let mut summary = summary(&table, &forces);
    summary.names = contact_names(&file);
    Ok(summary)
}

/// The element names of the file's elements by id (`/elements/<name>`: attributes `id` and
/// `name`); elements without them are left out.
fn contact_names(file: &hdf5::File) -> BTreeMap<u64, String> {
    let mut names = BTreeMap::new();
    let Ok(group) = file.group("elements") else {
        return names;
    };
    for member in group.member_names().unwrap_or_default() {
        let Ok(g) = group.group(&member) else {
            continue;
        };
        let id = g.attr("id").and_then(|a| a.read_scalar::<u64>());
        let name = g
            .attr("name")
            .and_then(|a| a.read_scalar::<hdf5::types::VarLenUnicode>());
        if let (Ok(id), Ok(name)) = (id, name) {
            names.insert(id, name.as_str().to_string());
        }
    }
    names
}

fn summary(table: &ContactHistoryTable, f: &ForceTable) -> ForcesSummary {
    let contacts = f
        .stiffness
        .iter()
        .zip(&table.contact)
        .filter(|(k, _)| k.is_finite())
        .map(|(_, c)| *c)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let failed: Vec<&ImpactRecord> = f.impacts.iter().filter(|i| i.pulse.is_err()).collect();
    let peak = f
        .total_force
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(r, v)| (*v, table.contact[r], table.time[r]));
    ForcesSummary {
        contacts,
        impacts: f.impacts.len(),
        failed: failed.len(),
        failures: failed
            .iter()
            .take(3)
            .map(|i| {
                let why = i
                    .pulse
                    .as_ref()
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                (i.contact, i.time, why)
            })
            .collect(),
        peak,
        names: BTreeMap::new(),
    }
}

/// Write `forces` under `/contact_forces` of `file` (replacing an earlier group).
pub fn write_forces(
    file: &hdf5::File,
    path: &Path,
    forces: &ForceTable,
    opts: &RecoveryOptions,
) -> Result<(), ForcesError> {
    if file.link_exists("contact_forces") {
        file.unlink("contact_forces")
            .map_err(h5err(path, "remove the earlier `/contact_forces`"))?;
    }
    let g = file
        .create_group("contact_forces")
        .map_err(h5err(path, "group `/contact_forces`"))?;
    let attr = |name: &str, value: &str| {
        crate::hdf5_sink::write_str_attr(&g, name, value)
            .map_err(h5err(path, format!("attribute `/contact_forces.{name}`")))
    };
    attr("damping", opts.damping.name())?;
    attr("method", opts.method.name())?;
    match opts.stiffness {
        Stiffness::Given(k) => attr("stiffness", &format!("{k:e} N/m^n, given"))?,
        Stiffness::Hertz { a, b } => attr(
            "stiffness",
            &format!(
                "Hertz from /contacts/radius: E_a = {:e} Pa, nu_a = {}, E_b = {:e} Pa, nu_b = {}",
                a.young, a.poisson, b.young, b.poisson
            ),
        )?,
    }
    let num = |name: &str, v: f64| {
        g.new_attr::<f64>()
            .create(name)
            .and_then(|a| a.write_scalar(&v))
            .map_err(h5err(path, format!("attribute `/contact_forces.{name}`")))
    };
    num("exponent", opts.exponent)?;
    num("threshold", opts.threshold)?;
    let put = |g: &hdf5::Group,
               gp: &str,
               name: &str,
               data: &[f64],
               shape: &[usize],
               unit: &str,
               desc: &str| {
        let arr = ndarray::ArrayView::from_shape(ndarray::IxDyn(shape), data).map_err(|e| {
            ForcesError::Unusable {
                message: e.to_string(),
                path: path.to_path_buf(),
            }
        })?;
        let ds = g
            .new_dataset_builder()
            .with_data(arr)
            .create(name)
            .map_err(h5err(path, format!("dataset `{gp}/{name}`")))?;
        crate::hdf5_sink::write_str_attr(&ds, "unit", unit)
            .and_then(|_| crate::hdf5_sink::write_str_attr(&ds, "description", desc))
            .map_err(h5err(path, format!("dataset `{gp}/{name}`")))
    };
    let gp = "/contact_forces";
    let m = forces.stiffness.len();
    put(
        &g,
        gp,
        "stiffness",
        &forces.stiffness,
        &[m],
        "N/m^n",
        "stiffness K of the row's contact (NaN: contact not recovered)",
    )?;
    put(
        &g,
        gp,
        "smooth_force",
        &forces.smooth_force,
        &[m],
        "N",
        "closed-contact force Lambda_S / h",
    )?;
    put(&g, gp, "impact_impulse", &forces.impact_impulse, &[m], "N*s", "impact part of the impulse, Lambda_PI + Lambda_PISuv (impulse = impact_impulse + smooth_force * h)")?;
    put(
        &g,
        gp,
        "impact_force",
        &forces.impact_force,
        &[m],
        "N",
        "peak force of the impact pulse at the row (0: no impact; NaN: an impact without a pulse)",
    )?;
    put(
        &g,
        gp,
        "total_force",
        &forces.total_force,
        &[m],
        "N",
        "smooth_force + impact_force: the contact force reported for mechanisms",
    )?;
    for (j, (name, unit, desc)) in STRESS_COLUMNS.iter().enumerate() {
        let v: Vec<f64> = forces.stress.iter().map(|s| s[j]).collect();
        put(&g, gp, name, &v, &[m], unit, desc)?;
    }
    let ig = g
        .create_group("impacts")
        .map_err(h5err(path, "group `/contact_forces/impacts`"))?;
    let gp = "/contact_forces/impacts";
    let imp = &forces.impacts;
    let k = imp.len();
    let ok = |i: &ImpactRecord, f: fn(&saltus_core::contact_force::Pulse) -> f64| {
        i.pulse.as_ref().map_or(f64::NAN, f)
    };
    let col = |f: &dyn Fn(&ImpactRecord) -> f64| imp.iter().map(f).collect::<Vec<f64>>();
    let ids: Vec<u64> = imp.iter().map(|i| i.contact).collect();
    let rows: Vec<u64> = imp.iter().map(|i| i.row as u64).collect();
    let kinds: Vec<u8> = imp.iter().map(|i| i.kind).collect();
    let raw = |name: &str, desc: &str, res: hdf5::Result<hdf5::Dataset>| {
        res.and_then(|ds| {
            crate::hdf5_sink::write_str_attr(&ds, "unit", "1")?;
            crate::hdf5_sink::write_str_attr(&ds, "description", desc)
        })
        .map_err(h5err(path, format!("dataset `{gp}/{name}`")))
    };
    raw(
        "contact",
        "contact id",
        ig.new_dataset_builder().with_data(&ids).create("contact"),
    )?;
    raw(
        "row",
        "row of /contacts of the impact step",
        ig.new_dataset_builder().with_data(&rows).create("row"),
    )?;
    raw(
        "kind",
        "1 isolated impact, 2 impact over a closed contact's smooth load",
        ig.new_dataset_builder().with_data(&kinds).create("kind"),
    )?;
    put(
        &ig,
        gp,
        "time",
        &col(&|i| i.time),
        &[k],
        "s",
        "start of the pulse: time of the impact step",
    )?;
    put(
        &ig,
        gp,
        "impulse",
        &col(&|i| i.impulse),
        &[k],
        "N*s",
        "impact impulse Lambda_I",
    )?;
    put(
        &ig,
        gp,
        "approach_speed",
        &col(&|i| i.approach_speed),
        &[k],
        "m/s",
        "normal approach speed before the impact",
    )?;
    put(
        &ig,
        gp,
        "duration",
        &col(&|i| ok(i, |p| p.duration)),
        &[k],
        "s",
        "contact duration T (NaN: no pulse)",
    )?;
    put(
        &ig,
        gp,
        "peak_force",
        &col(&|i| ok(i, |p| p.peak_force)),
        &[k],
        "N",
        "largest force of the pulse",
    )?;
    put(
        &ig,
        gp,
        "peak_time",
        &col(&|i| ok(i, |p| p.peak_time)),
        &[k],
        "s",
        "time of the largest force since the start",
    )?;
    put(
        &ig,
        gp,
        "max_penetration",
        &col(&|i| ok(i, |p| p.max_penetration)),
        &[k],
        "m",
        "largest penetration",
    )?;
    put(
        &ig,
        gp,
        "rebound_speed",
        &col(&|i| ok(i, |p| p.rebound_speed)),
        &[k],
        "m/s",
        "separation speed at the end of the pulse",
    )?;
    put(
        &ig,
        gp,
        "damping",
        &col(&|i| ok(i, |p| p.damping)),
        &[k],
        "N*s/m^(n+1)",
        "damping coefficient D of the law for this impact",
    )?;
    let s = forces.samples;
    let samples = |f: fn(&saltus_core::contact_force::PulseSample) -> f64| -> Vec<f64> {
        imp.iter()
            .flat_map(|i| match &i.pulse {
                Ok(p) => p.samples.iter().map(f).collect::<Vec<f64>>(),
                Err(_) => vec![f64::NAN; s],
            })
            .collect()
    };
    put(
        &ig,
        gp,
        "t",
        &samples(|x| x.t),
        &[k, s],
        "s",
        "sample times since the start of the pulse",
    )?;
    put(
        &ig,
        gp,
        "force",
        &samples(|x| x.force),
        &[k, s],
        "N",
        "force history",
    )?;
    put(
        &ig,
        gp,
        "penetration",
        &samples(|x| x.penetration),
        &[k, s],
        "m",
        "penetration history",
    )?;
    put(
        &ig,
        gp,
        "rate",
        &samples(|x| x.rate),
        &[k, s],
        "m/s",
        "penetration-rate history (positive approaching)",
    )?;
    put(
        &ig,
        gp,
        "acceleration",
        &samples(|x| x.acceleration),
        &[k, s],
        "m/s^2",
        "relative normal acceleration history",
    )?;
    Ok(())
}

/// The stress columns of `/contact_forces` (ball–race contacts; NaN otherwise): name, unit,
/// description.
pub(crate) const STRESS_COLUMNS: [(&str, &str, &str); 4] = [
    ("max_pressure", "Pa", "ball-race contacts: largest compressive stress -p0 at total_force (Hertz elliptical contact; NaN for other contacts)"),
    ("max_shear", "Pa", "ball-race contacts: largest shear stress below the contact at total_force"),
    ("octahedral_shear", "Pa", "ball-race contacts: largest octahedral shear stress below the contact at total_force"),
    ("shear_depth", "m", "ball-race contacts: depth of the largest shear stress below the surface"),
];

/// Parse a damping-model name for the command line.
pub fn parse_damping(s: &str) -> Result<Damping, String> {
    Damping::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Damping::ALL.iter().map(|d| d.name()).collect();
        format!("unknown damping law `{s}` (known: {})", names.join(", "))
    })
}

/// Parse a method name for the command line.
pub fn parse_method(s: &str) -> Result<Method, String> {
    Method::from_name(s).ok_or_else(|| format!("unknown method `{s}` (known: cubic, dynamic)"))
}
