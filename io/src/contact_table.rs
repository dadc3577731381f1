//! The per-step contact table of the HDF5 result file (`/contacts`, `docs/hdf5-layout.md`):
//! one row per contact element present at a recorded step, so contacts that are created and
//! removed while the model runs (a broad phase, a ball bearing) need no fixed datasets.
//!
//! | path | shape | type | unit |
//! |---|---|---|---|
//! | `/contacts/count` | `[n]` | u64, rows of each record (row offsets are its cumulative sum) | – |
//! | `/contacts/step`, `/contacts/time` | `[m]` | u64, f64 | –, s |
//! | `/contacts/contact` | `[m]` | u64 contact id (element handle) | – |
//! | `/contacts/body_a`, `/contacts/body_b` | `[m]` | i64 node index (−1: fixed obstacle) | – |
//! | `/contacts/point`, `/contacts/normal` | `[m, 3]` | f64 | m, – |
//! | `/contacts/gap` | `[m]` | f64 | m |
//! | `/contacts/position_impulse` | `[m, 3]` | f64 `k_p [ν_N, ν_T1, ν_T2]` | kg*m |
//! | `/contacts/impulse` | `[m, 3]` | f64 `k_v [Λ_N, Λ_T1, Λ_T2]` | N*s |
//! | `/contacts/normal_velocity` | `[m, 2]` | f64 `ġ_N` before the contact's impact, at the end of the step | m/s |
//! | `/contacts/restitution` | `[m]` | f64 `e_N` of the contact | – |
//! | `/contacts/radius` | `[m]` | f64 effective radius `R*` of the touching surfaces (NaN: none) | m |
//! | `/contacts/race` | `[m, 3]` | f64 ball, race and groove radii of a ball–race contact (NaN: none) | m |
//! | `/contacts/status` | `[m, 4]` | u8 (0 open, 1 stick, 2 slip) | – |
//!
//! Also the buffered extendible dataset [`Column`] that every per-step dataset of the file
//! uses: rows are collected in memory and written as one block (`crate::hdf5_sink`).

use hdf5_metno as hdf5;

use hdf5::{Dataset, Group, H5Type, Hyperslab, Selection, SimpleExtents, SliceOrIndex};
use ndarray::{ArrayViewD, IxDyn};
use saltus_core::output::ContactRow;

/// Target size of one chunk \[bytes\] (one chunk holds several rows).
const CHUNK_BYTES: usize = 64 * 1024;
/// Maximum number of rows per chunk. Narrow datasets (`[n]`) get 8 KiB chunks rather than
/// 64 KiB: HDF5 allocates whole chunks, so a short run's file stays small; with records
/// written in blocks, larger chunks measured no faster (8192 rows: same time per record).
const MAX_CHUNK_ROWS: usize = 1024;

/// Create an extendible dataset of element type `T` and shape `[0, row...]`, chunked along
/// the first axis, with string attributes `unit` and `description`.
fn create_extendible<T: H5Type>(
    group: &Group,
    name: &str,
    row: &[usize],
    unit: &str,
    description: &str,
) -> hdf5::Result<Dataset> {
    let row_bytes = row.iter().product::<usize>().max(1) * std::mem::size_of::<T>().max(1);
    let rows = (CHUNK_BYTES / row_bytes).clamp(1, MAX_CHUNK_ROWS);
    let mut extents = vec![hdf5::Extent::resizable(0)];
    let mut chunk = vec![rows];
    for &d in row {
        if d == 0 {
            // A zero-size fixed dimension cannot be chunked; make it resizable instead.
            extents.push(hdf5::Extent::resizable(0));
            chunk.push(1);
        } else {
            extents.push(hdf5::Extent::fixed(d));
            chunk.push(d);
        }
    }
    let ds = group
        .new_dataset::<T>()
        .chunk(chunk)
        // No chunk cache: the rows of a block go straight to their place in the file, once.
        // With HDF5's default cache (and fill values) every write went through a zeroed
        // in-memory chunk, and every flush wrote each dataset's partly filled last chunk
        // whole again (64 KiB per dataset per block; docs/performance.md).
        .chunk_cache(0, 0, 1.0)
        .shape(SimpleExtents::from_vec(extents))
        .create(name)?;
    crate::hdf5_sink::write_str_attr(&ds, "unit", unit)?;
    crate::hdf5_sink::write_str_attr(&ds, "description", description)?;
    Ok(ds)
}

/// Grow `ds` (shape `[start, row...]`) to `start + count` rows and write `data` (C order,
/// `count` rows) into the new rows: one `H5Dset_extent` and one hyperslab write.
fn append_rows<T: H5Type>(
    ds: &Dataset,
    row: &[usize],
    start: usize,
    count: usize,
    data: &[T],
) -> hdf5::Result<()> {
    let mut shape = Vec::with_capacity(row.len() + 1);
    shape.push(start + count);
    shape.extend_from_slice(row);
    ds.resize(shape.as_slice())?;
    shape[0] = count;
    let view = ArrayViewD::from_shape(IxDyn(&shape), data)?;
    let mut sel: Vec<SliceOrIndex> = Vec::with_capacity(shape.len());
    sel.push((start..start + count).into());
    sel.extend(row.iter().map(|_| SliceOrIndex::from(..)));
    ds.write_slice(view, Selection::from(Hyperslab::from(sel)))
}

/// An extendible dataset of shape `[n, row...]` and the rows buffered for it in memory.
pub(crate) struct Column<T> {
    ds: Dataset,
    /// Full HDF5 path (for error messages).
    name: String,
    /// Shape of one row.
    row: Vec<usize>,
    /// Buffered rows, C order; cleared (capacity kept) after they are written.
    buf: Vec<T>,
}

impl<T: H5Type + Copy> Column<T> {
    /// Create the dataset `name` in `group` (full path `group_path/name`) with
    /// [`create_extendible`].
    pub(crate) fn create(
        group: &Group,
        group_path: &str,
        name: &str,
        row: &[usize],
        unit: &str,
        description: &str,
    ) -> Result<Self, (String, hdf5::Error)> {
        let full = format!("{group_path}/{name}");
        match create_extendible::<T>(group, name, row, unit, description) {
            Ok(ds) => Ok(Self {
                ds,
                name: full,
                row: row.to_vec(),
                buf: Vec::new(),
            }),
            Err(e) => Err((format!("dataset `{full}`"), e)),
        }
    }

    /// Number of values in one row.
    pub(crate) fn row_len(&self) -> usize {
        self.row.iter().product()
    }

    /// Bytes of one row.
    pub(crate) fn row_bytes(&self) -> usize {
        self.row_len() * std::mem::size_of::<T>()
    }

    /// Reserve buffer space for `rows` more rows.
    pub(crate) fn reserve(&mut self, rows: usize) {
        self.buf.reserve(rows * self.row_len());
    }

    /// Buffer one row (`values.len()` = row length) or, for a scalar row, one value.
    pub(crate) fn push(&mut self, values: &[T]) {
        self.buf.extend_from_slice(values);
    }

    /// Buffer values from an iterator (whole rows in C order).
    pub(crate) fn extend(&mut self, values: impl IntoIterator<Item = T>) {
        self.buf.extend(values);
    }

    /// Write the `count` buffered rows as rows `start..start + count` (the dataset has
    /// `start` rows). The buffer is kept: writing again after a failure rewrites the same
    /// rows. Errors name the dataset.
    pub(crate) fn write(&self, start: usize, count: usize) -> Result<(), (String, hdf5::Error)> {
        if count == 0 {
            return Ok(());
        }
        debug_assert_eq!(self.buf.len(), count * self.row_len());
        append_rows(&self.ds, &self.row, start, count, &self.buf)
            .map_err(|e| (format!("dataset `{}`", self.name), e))
    }

    /// Drop the buffered rows (after [`Column::write`]), keeping the capacity.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
    }
}

/// The datasets of `/contacts`, their buffered rows and the number of rows on disk.
pub(crate) struct ContactTable {
    count: Column<u64>,
    step: Column<u64>,
    time: Column<f64>,
    contact: Column<u64>,
    body_a: Column<i64>,
    body_b: Column<i64>,
    point: Column<f64>,
    normal: Column<f64>,
    gap: Column<f64>,
    position_impulse: Column<f64>,
    impulse: Column<f64>,
    normal_velocity: Column<f64>,
    restitution: Column<f64>,
    radius: Column<f64>,
    race: Column<f64>,
    status: Column<u8>,
    /// Rows on disk.
    written: usize,
}

impl ContactTable {
    /// Create the group `/contacts` under `root` with empty columns. Errors name the dataset.
    pub(crate) fn create(root: &Group) -> Result<Self, (String, hdf5::Error)> {
        let g = root
            .create_group("contacts")
            .map_err(|e| ("group `/contacts`".to_string(), e))?;
        let gp = "/contacts";
        Ok(Self {
            count: Column::create(
                &g,
                gp,
                "count",
                &[],
                "1",
                "number of contact rows of each record (rows of record i start at the sum of the counts before it)",
            )?,
            step: Column::create(&g, gp, "step", &[], "1", "step index of the row's record")?,
            time: Column::create(&g, gp, "time", &[], "s", "time of the row's record")?,
            contact: Column::create(
                &g,
                gp,
                "contact",
                &[],
                "1",
                "contact id: the element handle (generation << 32 | slot), unique over the run",
            )?,
            body_a: Column::create(&g, gp, "body_a", &[], "1", "node index of body a")?,
            body_b: Column::create(
                &g,
                gp,
                "body_b",
                &[],
                "1",
                "node index of body b, -1 for a fixed obstacle",
            )?,
            point: Column::create(
                &g,
                gp,
                "point",
                &[3],
                "m",
                "contact point, midway between the contact points on a and b",
            )?,
            normal: Column::create(
                &g,
                gp,
                "normal",
                &[3],
                "1",
                "unit contact normal, from body b to body a",
            )?,
            gap: Column::create(
                &g,
                gp,
                "gap",
                &[],
                "m",
                "normal gap g_N (positive when separated)",
            )?,
            position_impulse: Column::create(
                &g,
                gp,
                "position_impulse",
                &[3],
                "kg*m",
                "position-level multipliers k_p [nu_N, nu_T1, nu_T2] (normal, along t1, t2)",
            )?,
            impulse: Column::create(
                &g,
                gp,
                "impulse",
                &[3],
                "N*s",
                "velocity-level impulses of the step k_v [Lambda_N, Lambda_T1, Lambda_T2] (normal, along t1, t2)",
            )?,
            normal_velocity: Column::create(
                &g,
                gp,
                "normal_velocity",
                &[2],
                "m/s",
                "normal relative velocity dg_N/dt (positive separating): before the contact's impact in the step (pre-impact velocity of the first impact problem in which it took an impulse; NaN if it took none, and in record 0) and at the end of the step",
            )?,
            restitution: Column::create(
                &g,
                gp,
                "restitution",
                &[],
                "1",
                "normal restitution e_N of the contact",
            )?,
            radius: Column::create(
                &g,
                gp,
                "radius",
                &[],
                "m",
                "effective radius R* = 1/(1/R_a + 1/R_b) of the touching surfaces (a cavity counts negative; NaN: no curved surfaces)",
            )?,
            race: Column::create(
                &g,
                gp,
                "race",
                &[3],
                "m",
                "ball radius, race radius, groove radius of a contact declared as a ball on a bearing race (race and groove negative when concave; NaN otherwise)",
            )?,
            status: Column::create(
                &g,
                gp,
                "status",
                &[4],
                "1",
                "0 open, 1 stick, 2 slip: position sliding, velocity sliding, rolling, spinning",
            )?,
            written: 0,
        })
    }

    /// Buffer the rows of one record (step `step`, time `t` \[s\]).
    pub(crate) fn push(&mut self, step: usize, t: f64, rows: &[ContactRow]) {
        self.count.push(&[rows.len() as u64]);
        self.step.extend(rows.iter().map(|_| step as u64));
        self.time.extend(rows.iter().map(|_| t));
        self.contact.extend(rows.iter().map(|r| r.contact));
        self.body_a.extend(rows.iter().map(|r| r.body_a));
        self.body_b.extend(rows.iter().map(|r| r.body_b));
        self.point.extend(rows.iter().flat_map(|r| r.point));
        self.normal.extend(rows.iter().flat_map(|r| r.normal));
        self.gap.extend(rows.iter().map(|r| r.gap));
        self.position_impulse
            .extend(rows.iter().flat_map(|r| r.position_impulse));
        self.impulse.extend(rows.iter().flat_map(|r| r.impulse));
        self.normal_velocity
            .extend(rows.iter().flat_map(|r| r.normal_velocity));
        self.restitution.extend(rows.iter().map(|r| r.restitution));
        self.radius.extend(rows.iter().map(|r| r.radius));
        self.race.extend(rows.iter().flat_map(|r| r.race));
        self.status.extend(rows.iter().flat_map(|r| r.status));
    }

    /// Bytes buffered per record (`count`) and per contact row (every other column).
    pub(crate) fn buffer_bytes(&self) -> (usize, usize) {
        let row = self.step.row_bytes()
            + self.time.row_bytes()
            + self.contact.row_bytes()
            + self.body_a.row_bytes()
            + self.body_b.row_bytes()
            + self.point.row_bytes()
            + self.normal.row_bytes()
            + self.gap.row_bytes()
            + self.position_impulse.row_bytes()
            + self.impulse.row_bytes()
            + self.normal_velocity.row_bytes()
            + self.restitution.row_bytes()
            + self.radius.row_bytes()
            + self.race.row_bytes()
            + self.status.row_bytes();
        (self.count.row_bytes(), row)
    }

    /// Contact rows buffered.
    pub(crate) fn buffered_rows(&self) -> usize {
        self.contact.buf.len()
    }

    /// Reserve buffer space for `records` records of `rows` contact rows in total.
    pub(crate) fn reserve(&mut self, records: usize, rows: usize) {
        self.count.reserve(records);
        self.step.reserve(rows);
        self.time.reserve(rows);
        self.contact.reserve(rows);
        self.body_a.reserve(rows);
        self.body_b.reserve(rows);
        self.point.reserve(rows);
        self.normal.reserve(rows);
        self.gap.reserve(rows);
        self.position_impulse.reserve(rows);
        self.impulse.reserve(rows);
        self.normal_velocity.reserve(rows);
        self.restitution.reserve(rows);
        self.radius.reserve(rows);
        self.race.reserve(rows);
        self.status.reserve(rows);
    }

    /// Write the buffered rows of the `records` buffered records (record `first` is the first
    /// of them). The buffers are kept until [`ContactTable::clear`]. Errors name the dataset.
    pub(crate) fn write(&self, first: usize, records: usize) -> Result<(), (String, hdf5::Error)> {
        self.count.write(first, records)?;
        let (start, m) = (self.written, self.buffered_rows());
        self.step.write(start, m)?;
        self.time.write(start, m)?;
        self.contact.write(start, m)?;
        self.body_a.write(start, m)?;
        self.body_b.write(start, m)?;
        self.point.write(start, m)?;
        self.normal.write(start, m)?;
        self.gap.write(start, m)?;
        self.position_impulse.write(start, m)?;
        self.impulse.write(start, m)?;
        self.normal_velocity.write(start, m)?;
        self.restitution.write(start, m)?;
        self.radius.write(start, m)?;
        self.race.write(start, m)?;
        self.status.write(start, m)
    }

    /// Mark the buffered rows as written (after [`ContactTable::write`]) and clear the buffers.
    pub(crate) fn clear(&mut self) {
        self.written += self.buffered_rows();
        self.count.clear();
        self.step.clear();
        self.time.clear();
        self.contact.clear();
        self.body_a.clear();
        self.body_b.clear();
        self.point.clear();
        self.normal.clear();
        self.gap.clear();
        self.position_impulse.clear();
        self.impulse.clear();
        self.normal_velocity.clear();
        self.restitution.clear();
        self.radius.clear();
        self.race.clear();
        self.status.clear();
    }
}
