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
//! | `/contacts/status` | `[m, 4]` | u8 (0 open, 1 stick, 2 slip) | – |

use hdf5_metno as hdf5;

use hdf5::{Dataset, Group, H5Type, Hyperslab, Selection, SimpleExtents, SliceOrIndex};
use ndarray::{ArrayViewD, IxDyn};
use saltus_core::output::ContactRow;

/// Target size of one chunk \[bytes\] (one chunk holds several rows).
const CHUNK_BYTES: usize = 64 * 1024;
/// Maximum number of rows per chunk.
const MAX_CHUNK_ROWS: usize = 1024;

/// Create an extendible dataset of element type `T` and shape `[0, row...]`, chunked along
/// the first axis, with string attributes `unit` and `description`.
pub(crate) fn create_extendible<T: H5Type>(
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
        .shape(SimpleExtents::from_vec(extents))
        .create(name)?;
    crate::hdf5_sink::write_str_attr(&ds, "unit", unit)?;
    crate::hdf5_sink::write_str_attr(&ds, "description", description)?;
    Ok(ds)
}

/// Grow `ds` (shape `[start, row...]`) to `start + count` rows and write `data` (C order,
/// `count` rows) into the new rows.
pub(crate) fn append_rows<T: H5Type>(
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
    if count == 0 {
        return Ok(());
    }
    shape[0] = count;
    let view = ArrayViewD::from_shape(IxDyn(&shape), data)?;
    let mut sel: Vec<SliceOrIndex> = Vec::with_capacity(shape.len());
    sel.push((start..start + count).into());
    sel.extend(row.iter().map(|_| SliceOrIndex::from(..)));
    ds.write_slice(view, Selection::from(Hyperslab::from(sel)))
}

/// The open datasets of `/contacts` and the number of rows written so far.
pub(crate) struct ContactTable {
    count: Dataset,
    step: Dataset,
    time: Dataset,
    contact: Dataset,
    body_a: Dataset,
    body_b: Dataset,
    point: Dataset,
    normal: Dataset,
    gap: Dataset,
    position_impulse: Dataset,
    impulse: Dataset,
    status: Dataset,
    /// Rows written so far.
    rows: std::cell::Cell<usize>,
}

impl ContactTable {
    /// Create the group `/contacts` under `root` with empty columns. Errors name the dataset.
    pub(crate) fn create(root: &Group) -> Result<Self, (String, hdf5::Error)> {
        let g = root
            .create_group("contacts")
            .map_err(|e| ("group `/contacts`".to_string(), e))?;
        let col = |name: &str, row: &[usize], unit: &str, desc: &str, kind: Kind| {
            match kind {
                Kind::F64 => create_extendible::<f64>(&g, name, row, unit, desc),
                Kind::U64 => create_extendible::<u64>(&g, name, row, unit, desc),
                Kind::I64 => create_extendible::<i64>(&g, name, row, unit, desc),
                Kind::U8 => create_extendible::<u8>(&g, name, row, unit, desc),
            }
            .map_err(|e| (format!("dataset `/contacts/{name}`"), e))
        };
        Ok(Self {
            count: col(
                "count",
                &[],
                "1",
                "number of contact rows of each record (rows of record i start at the sum of the counts before it)",
                Kind::U64,
            )?,
            step: col("step", &[], "1", "step index of the row's record", Kind::U64)?,
            time: col("time", &[], "s", "time of the row's record", Kind::F64)?,
            contact: col(
                "contact",
                &[],
                "1",
                "contact id: the element handle (generation << 32 | slot), unique over the run",
                Kind::U64,
            )?,
            body_a: col("body_a", &[], "1", "node index of body a", Kind::I64)?,
            body_b: col(
                "body_b",
                &[],
                "1",
                "node index of body b, -1 for a fixed obstacle",
                Kind::I64,
            )?,
            point: col(
                "point",
                &[3],
                "m",
                "contact point, midway between the contact points on a and b",
                Kind::F64,
            )?,
            normal: col(
                "normal",
                &[3],
                "1",
                "unit contact normal, from body b to body a",
                Kind::F64,
            )?,
            gap: col(
                "gap",
                &[],
                "m",
                "normal gap g_N (positive when separated)",
                Kind::F64,
            )?,
            position_impulse: col(
                "position_impulse",
                &[3],
                "kg*m",
                "position-level multipliers k_p [nu_N, nu_T1, nu_T2] (normal, along t1, t2)",
                Kind::F64,
            )?,
            impulse: col(
                "impulse",
                &[3],
                "N*s",
                "velocity-level impulses of the step k_v [Lambda_N, Lambda_T1, Lambda_T2] (normal, along t1, t2)",
                Kind::F64,
            )?,
            status: col(
                "status",
                &[4],
                "1",
                "0 open, 1 stick, 2 slip: position sliding, velocity sliding, rolling, spinning",
                Kind::U8,
            )?,
            rows: std::cell::Cell::new(0),
        })
    }

    /// Append the rows of record `record` (step `step`, time `t` \[s\]). Errors name the
    /// dataset.
    pub(crate) fn append(
        &self,
        record: usize,
        step: usize,
        t: f64,
        rows: &[ContactRow],
    ) -> Result<(), (String, hdf5::Error)> {
        let (start, m) = (self.rows.get(), rows.len());
        let name = |d: &str| format!("dataset `/contacts/{d}`");
        append_rows(&self.count, &[], record, 1, &[m as u64]).map_err(|e| (name("count"), e))?;
        let col = |f: fn(&ContactRow) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
        let vec3 = |f: fn(&ContactRow) -> [f64; 3]| rows.iter().flat_map(f).collect::<Vec<f64>>();
        let steps = vec![step as u64; m];
        let times = vec![t; m];
        let ids: Vec<u64> = rows.iter().map(|r| r.contact).collect();
        let a: Vec<i64> = rows.iter().map(|r| r.body_a).collect();
        let b: Vec<i64> = rows.iter().map(|r| r.body_b).collect();
        let status: Vec<u8> = rows.iter().flat_map(|r| r.status).collect();
        append_rows(&self.step, &[], start, m, &steps).map_err(|e| (name("step"), e))?;
        append_rows(&self.time, &[], start, m, &times).map_err(|e| (name("time"), e))?;
        append_rows(&self.contact, &[], start, m, &ids).map_err(|e| (name("contact"), e))?;
        append_rows(&self.body_a, &[], start, m, &a).map_err(|e| (name("body_a"), e))?;
        append_rows(&self.body_b, &[], start, m, &b).map_err(|e| (name("body_b"), e))?;
        append_rows(&self.point, &[3], start, m, &vec3(|r| r.point))
            .map_err(|e| (name("point"), e))?;
        append_rows(&self.normal, &[3], start, m, &vec3(|r| r.normal))
            .map_err(|e| (name("normal"), e))?;
        append_rows(&self.gap, &[], start, m, &col(|r| r.gap)).map_err(|e| (name("gap"), e))?;
        append_rows(
            &self.position_impulse,
            &[3],
            start,
            m,
            &vec3(|r| r.position_impulse),
        )
        .map_err(|e| (name("position_impulse"), e))?;
        append_rows(&self.impulse, &[3], start, m, &vec3(|r| r.impulse))
            .map_err(|e| (name("impulse"), e))?;
        append_rows(&self.status, &[4], start, m, &status).map_err(|e| (name("status"), e))?;
        self.rows.set(start + m);
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Kind {
    F64,
    U64,
    I64,
    U8,
}
