//! Incremental HDF5 result files ([`Hdf5Sink`]) and their XDMF sidecar for ParaView.
//!
//! The layout is documented in `docs/hdf5-layout.md`. In short (`n` = number of records,
//! `N` = number of nodes):
//!
//! | path | shape | type | unit |
//! |---|---|---|---|
//! | `/time` | `[n]` | f64 | s |
//! | `/step` | `[n]` | u64 | – |
//! | `/nodes/names` | `\[N\]` | variable-length UTF-8 | – |
//! | `/nodes/index` | `\[N\]` | i64 | – |
//! | `/nodes/position` | `[n, N, 3]` | f64 | m |
//! | `/nodes/rotation` | `[n, N, 4]` | f64 (w, x, y, z) | – |
//! | `/nodes/axes` | `[n, N, 9]` | f64 (columns of R) | – |
//! | `/nodes/velocity` | `[n, N, 3]` | f64 | m/s |
//! | `/nodes/angular_velocity` | `[n, N, 3]` | f64, spatial `ω = R Ω` | rad/s |
//! | `/elements/<name>/<output>` | `[n, len]` | f64 | attribute `unit` |
//! | `/solver/stages` | `[S]` | variable-length UTF-8 (NSGA: smooth, position, velocity) | – |
//! | `/solver/iterations` | `[n, S]` | u64, one column per stage | – |
//! | `/solver/line_search` | `[n, S]` | u64, one column per stage | – |
//! | `/solver/solves` | `[n, S]` | u64, one column per stage (velocity: impact problems) | – |
//! | `/solver/active_contacts` | `[n]` | u64 | – |
//! | `/solver/residual` | `[n, S]` | f64, one column per stage | – |
//! | `/solver/h` | `[n]` | f64 | s |
//! | `/solver` attributes | scalar | bool, i64, f64, UTF-8 | run-level results ([`ResultSink::solver_attributes`]) |
//! | `/energy/{kinetic,potential,total}` | `[n]` | f64 | J |
//! | `/contacts/...` | `[m, ...]` | the per-step contact table (`crate::contact_table`) | |
//!
//! Every per-step dataset is chunked and extendible along its first axis. [`ResultSink::record`]
//! copies a record into memory buffers (reused, no allocation once they have grown); the
//! buffered records are written as one block per dataset (one `H5Dset_extent` and one
//! hyperslab write of all buffered rows) and the file is flushed (`H5Fflush`):
//!
//! * at the first record (the initial state), at once;
//! * at the first record after [`Hdf5Sink::with_flush_interval`] of wall time since the last
//!   write (default [`DEFAULT_FLUSH_INTERVAL`], 1 s);
//! * when the buffers reach the block limit: 256 KiB after the initial state, doubled at every
//!   write up to [`Hdf5Sink::with_buffer_bytes`] (default [`DEFAULT_BUFFER_BYTES`], 8 MiB) but
//!   at most 4 MiB, the block the disk-space reserve covers (below);
//! * after every n-th record with [`Hdf5Sink::with_flush_every`] (off by default);
//! * at [`Hdf5Sink::flush`], [`ResultSink::finish`] and when the sink is dropped unfinished.
//!
//! # Faults
//!
//! * **Kill (`kill -9`, power kept).** The run writes `<path>.part`; `path` only ever holds
//!   *snapshots*: after a block is written and flushed, `<path>.part` is copied to
//!   `<path>.snapshot` (the kernel's `copy_file_range`; shared blocks where the file system
//!   offers them) and that is renamed over `path` — at the initial state, then at most once
//!   per flush interval, and at most 1/20 of the wall time (a large file on a file system
//!   that copies its bytes is snapshotted less often). At the end the closed `<path>.part`
//!   is renamed over `path`. The run never writes into the file at `path`, and a rename is
//!   atomic, so a kill at any moment — inside a block write or a copy included — leaves at
//!   `path` either nothing (before the initial state) or a complete file that opens with
//!   plain `h5py.File(path)` (HDF5's earliest format: no superblock status flags, no
//!   `h5clear`) and holds every record up to its snapshot: a run loses at most the records
//!   of about one flush interval. Readers can open `path` while the run goes (the writer's
//!   file lock is on `<path>.part`). A killed run leaves `<path>.part` (and perhaps
//!   `<path>.snapshot`) behind; the next run to the same path replaces them. The price: up
//!   to twice the file's size on disk during the run, and one copy per snapshot.
//! * **Full disk.** Next to the file the sink holds a reserve of disk space (an unlinked file
//!   of zeros, freed by the system however the process ends) as large as a block at the block
//!   limit, one chunk per extendible dataset and 256 KiB of metadata. A block write that finds
//!   the disk full releases the reserve and is written again into it; the sink then stops:
//!   the file is closed holding every record written, and the error names the file and the
//!   number of records it keeps ([`Hdf5Sink::records_kept`], [`Hdf5Sink::failure`]). If the
//!   block still cannot be written (the reserve was too small, or taken by another program),
//!   the sink shrinks every extendible dataset back to its length at the last flush before
//!   closing; if HDF5 refuses that after a failed write, `<path>.part` is dropped and `path`
//!   keeps the last snapshot, as the error says. A snapshot that finds the disk full is
//!   skipped (the previous one stays). If the reserve cannot be had before the initial
//!   state is written, no file is left and the error says so. A run thus needs about the
//!   reserve in free space besides its results, and stops when less is left.

use hdf5_metno as hdf5;

use crate::contact_table::{Column, ContactTable};
use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, File, Group, H5Type};
use saltus_core::{AttributeValue, OutputLayout, ResultSink, SinkError, StepRecord};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

mod layout;
use layout::Datasets;

/// Default wall time after which buffered records are written and the file flushed: an
/// interrupted run loses at most this much of its results.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Default memory budget of the record buffers \[bytes\]: buffered records are written when
/// they reach it, or the block limit below it (at most 4 MiB, e.g. about 10 000 records of a
/// two-node model, 40 records of a 1 000-node model; a fast model reaches it before
/// [`DEFAULT_FLUSH_INTERVAL`]; module docs).
pub const DEFAULT_BUFFER_BYTES: usize = 8 << 20;

/// Records preallocated in the buffers at [`ResultSink::begin`] (at most the budget); the
/// buffers grow beyond on demand, up to the budget, and are reused between blocks.
const INITIAL_RECORDS: usize = 1024;

/// Largest block \[bytes\]: buffered records are written when they reach it even under a
/// larger [`Hdf5Sink::with_buffer_bytes`], so that the disk-space reserve covers every block.
const MAX_BLOCK_BYTES: usize = 4 << 20;

/// Block size limit after the initial state \[bytes\]; doubled at every write up to the
/// buffer budget (at most [`MAX_BLOCK_BYTES`]), with the disk-space reserve, so that a short
/// run reserves little.
const FIRST_BLOCK_BYTES: usize = 256 << 10;

/// Disk space reserved for metadata written with a block \[bytes\].
const RESERVE_METADATA: usize = 256 << 10;

/// Units of all quantities in the file (root attribute `units`).
pub const UNITS: &str = "SI (m, kg, s, rad, N)";

/// A [`ResultSink`] writing an HDF5 file incrementally (layout: module docs and
/// `docs/hdf5-layout.md`), plus an XDMF sidecar (`<file>.xdmf`) at [`ResultSink::finish`].
///
/// Records are buffered in memory and written in blocks (when: module docs). Dropping an
/// unfinished sink writes the buffered records and closes the file (no XDMF sidecar).
///
/// ```no_run
/// # fn main() -> Result<(), saltus_core::SinkError> {
/// use saltus_io::Hdf5Sink;
/// use std::time::Duration;
/// let sink = Hdf5Sink::create("run.h5")?
///     .with_model_text("# model file text ...")
///     .with_flush_interval(Duration::from_millis(500));
/// # Ok(()) }
/// ```
pub struct Hdf5Sink {
    path: PathBuf,
    file: Option<File>,
    model_text: Option<String>,
    created_by: String,
    /// Write after every `flush_every`-th record (`usize::MAX`: off).
    flush_every: usize,
    flush_interval: Duration,
    buffer_bytes: usize,
    xdmf: bool,
    datasets: Option<Datasets>,
    /// Records received.
    recorded: usize,
    /// Records written to the file (the rest is buffered).
    written: usize,
    /// End of the last block write (or of `begin`).
    last_write: Instant,
    /// A snapshot was taken at the last commit and its sidecars are not yet written.
    snapshot_fresh: bool,
    /// The next commit takes a snapshot whatever its interval ([`Hdf5Sink::flush`],
    /// [`Hdf5Sink::with_flush_every`]).
    snapshot_now: bool,
    /// Live contact-force recovery: decomposition threshold and samples per pulse.
    force_threshold: f64,
    force_samples: usize,
    /// The file being written (`<path>.part`) until it is closed and renamed to `path`;
    /// meanwhile `path` holds snapshots of it ([`Hdf5Sink::snapshot`]).
    part: Option<PathBuf>,
    /// Records and time of the last snapshot at `path` (0: none yet).
    snapshot_records: usize,
    snapshot_t: f64,
    /// When the last snapshot was taken and how long its copy took.
    snapshot_at: Option<Instant>,
    snapshot_cost: Duration,
    /// Records in the file as of the last complete write and flush.
    committed: usize,
    /// Time of the last record received.
    recorded_t: f64,
    /// Time of the last record written.
    written_t: f64,
    /// Time of the last committed record.
    committed_t: f64,
    /// Every extendible dataset and its first-axis length at the last complete flush.
    extendible: Vec<(Dataset, usize)>,
    /// Members of the root group when `extendible` was listed (a new member, such as
    /// `/contact_forces`, makes the list be taken again).
    root_members: u64,
    /// A write failed: why, and what the file was left holding.
    failed: Option<String>,
    /// Disk space held for the next block: an unlinked file of zeros next to the result file,
    /// released when the disk is full so that the block can still be written and the file
    /// closed complete.
    reserve: Option<std::fs::File>,
    /// Bytes held by `reserve`.
    reserved: u64,
    /// Buffered bytes at which a block is written (grows to the buffer budget, see
    /// [`FIRST_BLOCK_BYTES`]); the reserve covers a block of this size.
    block_limit: usize,
    /// One chunk of every extendible dataset \[bytes\].
    chunk_bytes: usize,
}

impl std::fmt::Debug for Hdf5Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hdf5Sink")
            .field("path", &self.path)
            .field("open", &self.file.is_some())
            .field("records", &self.recorded)
            .field("written", &self.written)
            .field("flush_every", &self.flush_every)
            .field("flush_interval", &self.flush_interval)
            .field("buffer_bytes", &self.buffer_bytes)
            .field("xdmf", &self.xdmf)
            .field("committed", &self.committed)
            .field("failed", &self.failed)
            .finish()
    }
}

fn sink_err(path: &Path, what: &str, e: impl std::fmt::Display) -> SinkError {
    let mut e = e.to_string();
    if is_disk_full(&e) {
        // HDF5's message is its whole error stack (file descriptor, buffer address, ...).
        e = "disk full (no space left on device)".into();
    }
    SinkError(format!("HDF5 file `{}`: {what}: {e}", path.display()))
}

/// Whether an HDF5 or I/O error text says that the disk is full (`ENOSPC`).
fn is_disk_full(e: &str) -> bool {
    e.contains("errno = 28") || e.contains("No space left on device") || e.contains("disk full")
}

/// The file a run writes, until it is closed and renamed to `path`: `<path>.part`.
fn part_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// Where a snapshot is copied before it is renamed to `path`: `<path>.snapshot`.
fn snapshot_temp(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".snapshot");
    PathBuf::from(s)
}

/// Snapshots take at most this share of the wall time: the interval between two grows
/// with the cost of a copy (large files on file systems that cannot share blocks).
const SNAPSHOT_TIME_SHARE: u32 = 20;

/// Allocate `len` bytes of disk at `offset` of the reserve file `f`: `fallocate` on Linux
/// (blocks reserved, nothing written: a run's fixed cost stays small); elsewhere, or where
/// the file system does not support it, by writing zeros.
fn reserve_space(f: &mut std::fs::File, offset: u64, len: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{fallocate, FallocateFlags};
        match fallocate(&*f, FallocateFlags::empty(), offset, len) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::NOSPC => {
                return Err(std::io::Error::from_raw_os_error(e.raw_os_error()))
            }
            Err(_) => {} // not supported here: write zeros
        }
    }
    use std::io::{Seek, SeekFrom, Write};
    let zeros = vec![0u8; 1 << 20];
    f.seek(SeekFrom::Start(offset))?;
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        f.write_all(&zeros[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Bytes of one chunk of `d` (0 if not chunked).
fn chunk_bytes(d: &Dataset) -> usize {
    let size = d.dtype().map_or(8, |t| t.size());
    d.chunk().map_or(0, |c| c.iter().product::<usize>() * size)
}

/// Every extendible dataset under `group`, recursively.
fn extendible_datasets(group: &Group, out: &mut Vec<Dataset>) -> hdf5::Result<()> {
    out.extend(group.datasets()?.into_iter().filter(Dataset::is_resizable));
    for g in group.groups()? {
        extendible_datasets(&g, out)?;
    }
    Ok(())
}

/// HDF5 variable-length UTF-8 strings of `values` (for string datasets and list attributes).
pub(crate) fn var_len_strings<S: AsRef<str>>(
    values: impl IntoIterator<Item = S>,
) -> hdf5::Result<Vec<VarLenUnicode>> {
    values
        .into_iter()
        .map(|s| VarLenUnicode::from_str(s.as_ref()).map_err(|e| hdf5::Error::from(e.to_string())))
        .collect()
}

/// Create the dataset `name` in `group` holding `values` as variable-length UTF-8 strings.
///
/// Written through a transfer property list whose type-conversion buffer is sized to the
/// data. hdf5-metno writes with the default list, for which HDF5 1.10 allocates a zeroed
/// 1 MiB conversion buffer and a zeroed 1 MiB background buffer per write of
/// variable-length strings: page faults that were a third of the cost of creating a
/// results file (`docs/performance.md`). hdf5-metno does not expose the transfer list's
/// buffer size, hence the raw `H5Dwrite`.
pub(crate) fn write_strings_dataset(
    group: &Group,
    name: &str,
    values: &[String],
) -> hdf5::Result<Dataset> {
    use hdf5_metno_sys::{h5d, h5p, h5s};
    let v = var_len_strings(values)?;
    let ds = group
        .new_dataset::<VarLenUnicode>()
        .shape(v.len())
        .create(name)?;
    if v.is_empty() {
        return Ok(ds);
    }
    let mem_type = hdf5::Datatype::from_type::<VarLenUnicode>()?;
    // Room for every element, at least 1 KiB (HDF5 needs one element's worth).
    let bytes = (v.len() * std::mem::size_of::<VarLenUnicode>()).max(1024);
    let status = hdf5::sync::sync(|| {
        // SAFETY: the property list is created, used and closed here; `v` is a live slice
        // of `v.len()` elements of the memory type `mem_type` (hdf5-metno's own layout of
        // `VarLenUnicode`), and the dataset has exactly `v.len()` elements (H5S_ALL).
        #[allow(unsafe_code)]
        unsafe {
            let dxpl = h5p::H5Pcreate(*hdf5::globals::H5P_DATASET_XFER);
            if dxpl < 0 {
                return -1;
            }
            let mut status =
                h5p::H5Pset_buffer(dxpl, bytes, std::ptr::null_mut(), std::ptr::null_mut());
            if status >= 0 {
                status = h5d::H5Dwrite(
                    ds.id(),
                    mem_type.id(),
                    h5s::H5S_ALL,
                    h5s::H5S_ALL,
                    dxpl,
                    v.as_ptr().cast(),
                );
            }
            h5p::H5Pclose(dxpl);
            status
        }
    });
    if status < 0 {
        return Err(hdf5::Error::from(format!(
            "writing {} strings into dataset `{name}` failed",
            v.len()
        )));
    }
    Ok(ds)
}

/// Write the scalar string attribute `name = value` on `loc`.
pub(crate) fn write_str_attr(loc: &hdf5::Location, name: &str, value: &str) -> hdf5::Result<()> {
    let v = VarLenUnicode::from_str(value).map_err(|e| hdf5::Error::from(e.to_string()))?;
    loc.new_attr::<VarLenUnicode>()
        .create(name)?
        .write_scalar(&v)
}

/// HDF5 group name for an element: its name with `/` replaced by `_` (the original name is
/// kept in the group attribute `name`).
pub fn element_group_name(name: &str) -> String {
    let s = name.replace('/', "_");
    if s.is_empty() || s == "." || s == ".." {
        format!("_{s}")
    } else {
        s
    }
}

impl Hdf5Sink {
    /// Create the HDF5 file for `path`. It is written as `<path>.part` and renamed to `path`
    /// once it holds its first record (the initial state), so that a file at `path` always
    /// holds at least that record; an existing file at `path` is removed now. The datasets are
    /// created at [`ResultSink::begin`].
    pub fn create(path: impl AsRef<Path>) -> Result<Self, SinkError> {
        let path = path.as_ref().to_path_buf();
        let part = part_path(&path);
        // The operating system's reason first (missing directory, no permission, read-only
        // file system), in words, rather than HDF5's error stack with its open flags.
        if let Err(e) = std::fs::File::create(&part) {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let why = if !dir.is_dir() {
                format!("directory `{}` does not exist", dir.display())
            } else {
                e.to_string()
            };
            return Err(sink_err(&path, "cannot create file", why));
        }
        let file = File::create(&part).map_err(|e| sink_err(&path, "cannot create file", e))?;
        // A copy left by a run killed while taking a snapshot.
        let _ = std::fs::remove_file(snapshot_temp(&path));
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                drop(file);
                let _ = std::fs::remove_file(&part);
                return Err(sink_err(&path, "cannot replace the existing file", e));
            }
            _ => {}
        }
        let (a, b, c) = hdf5::library_version();
        Ok(Self {
            path,
            file: Some(file),
            model_text: None,
            created_by: format!("saltus-io {} (HDF5 {a}.{b}.{c})", env!("CARGO_PKG_VERSION")),
            flush_every: usize::MAX,
            flush_interval: DEFAULT_FLUSH_INTERVAL,
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            xdmf: true,
            datasets: None,
            recorded: 0,
            written: 0,
            last_write: Instant::now(),
            snapshot_fresh: false,
            snapshot_now: false,
            force_threshold: 1e-6,
            force_samples: 101,
            part: Some(part),
            snapshot_records: 0,
            snapshot_t: f64::NAN,
            snapshot_at: None,
            snapshot_cost: Duration::ZERO,
            committed: 0,
            recorded_t: f64::NAN,
            written_t: f64::NAN,
            committed_t: f64::NAN,
            extendible: Vec::new(),
            root_members: 0,
            failed: None,
            reserve: None,
            reserved: 0,
            block_limit: 0,
            chunk_bytes: 0,
        })
    }

    /// Settings of the contact forces recovered while the model runs, for contacts that
    /// declare a force recovery (`/contact_forces`): the relative noise threshold of impact
    /// detection and the samples per pulse (defaults 1e-6 and 101, those of `saltus forces`).
    pub fn with_force_recovery(mut self, threshold: f64, samples: usize) -> Self {
        self.force_threshold = threshold;
        self.force_samples = samples.max(2);
        self
    }

    /// Store the model file text as the root attribute `model`.
    pub fn with_model_text(mut self, text: impl Into<String>) -> Self {
        self.model_text = Some(text.into());
        self
    }

    /// Set the root attribute `created_by` (default `saltus-io <version> (HDF5 <version>)`).
    pub fn with_created_by(mut self, created_by: impl Into<String>) -> Self {
        self.created_by = created_by.into();
        self
    }

    /// Also write the buffered records and flush the file after every `n`-th record (records
    /// `n`, `2n`, …), so that at least every `n` records are on disk; `0` is taken as 1 (every
    /// record). Default: off (wall time and buffer size decide).
    pub fn with_flush_every(mut self, n: usize) -> Self {
        self.flush_every = n.max(1);
        self
    }

    /// Write the buffered records and flush the file at the first record after `interval` of
    /// wall time since the last write (default [`DEFAULT_FLUSH_INTERVAL`]; `Duration::ZERO`:
    /// every record).
    pub fn with_flush_interval(mut self, interval: Duration) -> Self {
        self.flush_interval = interval;
        self
    }

    /// Memory budget of the record buffers \[bytes\] (default [`DEFAULT_BUFFER_BYTES`]): the
    /// buffered records are written when they reach it or the block limit, whichever is
    /// smaller (at most 4 MiB, see the module docs; `0`: every record).
    pub fn with_buffer_bytes(mut self, bytes: usize) -> Self {
        self.buffer_bytes = bytes;
        self
    }

    /// Whether to write the XDMF sidecar at [`ResultSink::finish`] (default true).
    pub fn with_xdmf(mut self, xdmf: bool) -> Self {
        self.xdmf = xdmf;
        self
    }

    /// Path of the HDF5 file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Path of the XDMF sidecar written at [`ResultSink::finish`].
    pub fn xdmf_path(&self) -> PathBuf {
        crate::xdmf::xdmf_path(&self.path)
    }

    /// Number of records received so far (written or buffered).
    pub fn records(&self) -> usize {
        self.recorded
    }

    /// Number of records buffered in memory, not yet written to the file.
    pub fn buffered_records(&self) -> usize {
        self.recorded - self.written
    }

    /// Number of records the file holds for sure: those of the last complete write and flush
    /// (after a write error, those the file was restored to; 0 if it could not be restored).
    pub fn records_kept(&self) -> usize {
        self.committed
    }

    /// Why writing failed, with what the file was left holding; `None` if no write failed.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Write the buffered records, flush the file (`H5Fflush`) and take a snapshot at `path`
    /// now. Does nothing after [`ResultSink::finish`].
    ///
    /// If writing fails (e.g. the disk is full), the sink stops: every extendible dataset is
    /// shrunk back to its length at the last complete flush, the file is closed, and the
    /// error says what the file holds ([`Hdf5Sink::records_kept`]). Later calls fail.
    pub fn flush(&mut self) -> Result<(), SinkError> {
        self.snapshot_now = true;
        self.flush_block(true)
    }

    /// [`Hdf5Sink::flush`]; `grow`: grow the block limit and the reserve after the write (not
    /// when the file is about to close).
    fn flush_block(&mut self, grow: bool) -> Result<(), SinkError> {
        if let Some(why) = &self.failed {
            return Err(SinkError(why.clone()));
        }
        if self.file.is_none() {
            return Ok(());
        }
        let written = self.write_block();
        if let Err(e) = written.and_then(|()| if grow { self.grow_reserve() } else { Ok(()) }) {
            if !is_disk_full(&e.0) || self.reserve.take().is_none() {
                return Err(self.fail(e));
            }
            // Disk full: the reserve is released (closing the unlinked file frees its
            // space); write the block again into that space, then stop.
            self.reserved = 0;
            return Err(match self.write_block() {
                Ok(()) => self.fail(e),
                Err(again) => self.fail(SinkError(format!("{}; writing again: {}", e.0, again.0))),
            });
        }
        self.last_write = Instant::now();
        // The sidecars are derived from the file: failing to rewrite them (e.g. a full disk,
        // which the next block write reports with what the file keeps) does not stop the run.
        let _ = self.refresh_sidecars();
        Ok(())
    }

    /// Rewrite the XDMF sidecars for the records of the snapshot just taken (the written
    /// file holds exactly those records then), so a running or interrupted run can be opened
    /// in ParaView.
    fn refresh_sidecars(&mut self) -> Result<(), SinkError> {
        if !self.xdmf || !std::mem::take(&mut self.snapshot_fresh) {
            return Ok(());
        }
        let scene = match (&self.datasets, &self.file) {
            (Some(d), Some(file)) if d.n_nodes > 0 => crate::xdmf::Scene::read(file, &self.path)?,
            _ => return Ok(()),
        };
        crate::xdmf::write_scene(&self.path, &scene).map(|_| ())
    }

    /// Write the buffered records, flush the file and commit (see [`Hdf5Sink::commit`]).
    fn write_block(&mut self) -> Result<(), SinkError> {
        self.write_buffered()?;
        self.file()?
            .flush()
            .map_err(|e| sink_err(&self.path, "flush", e))?;
        self.commit()
    }

    /// Make the reserve hold `bytes` (grown only): zeros written to an unlinked file next to
    /// the result file.
    fn ensure_reserve(&mut self, bytes: u64) -> Result<(), SinkError> {
        if bytes <= self.reserved {
            return Ok(());
        }
        let err = |e: std::io::Error| sink_err(&self.path, "reserve disk space", e);
        if self.reserve.is_none() {
            let mut name = self.path.as_os_str().to_owned();
            name.push(".reserve");
            let name = PathBuf::from(name);
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&name)
                .map_err(err)?;
            // Unlinked at once: the space is freed when the handle closes, also on a kill.
            std::fs::remove_file(&name).map_err(err)?;
            self.reserve = Some(f);
            self.reserved = 0;
        }
        let Some(f) = &mut self.reserve else {
            return Ok(());
        };
        let left = bytes - self.reserved;
        if let Err(e) = reserve_space(f, self.reserved, left) {
            self.reserve = None;
            self.reserved = 0;
            return Err(err(e));
        }
        self.reserved = bytes;
        Ok(())
    }

    /// After a complete write and flush: note the extendible datasets' lengths and, once the
    /// file holds a record, give it its final name.
    fn commit(&mut self) -> Result<(), SinkError> {
        let file = self.file()?;
        let members = file.len();
        let mut listed = false;
        if self.datasets.is_some() && (self.extendible.is_empty() || members != self.root_members) {
            let mut list = Vec::new();
            extendible_datasets(file, &mut list)
                .map_err(|e| sink_err(&self.path, "list datasets", e))?;
            self.extendible = list.into_iter().map(|d| (d, 0)).collect();
            self.root_members = members;
            listed = true;
        }
        for (d, n) in &mut self.extendible {
            *n = d.shape().first().copied().unwrap_or(0);
        }
        if listed {
            self.chunk_bytes = self.extendible.iter().map(|(d, _)| chunk_bytes(d)).sum();
        }
        self.committed = self.written;
        self.committed_t = self.written_t;
        if self.committed > 0 {
            self.snapshot();
        }
        Ok(())
    }

    /// Copy the flushed file to `<path>.snapshot` and rename that to `path`: `path` always
    /// holds a complete HDF5 file, the last snapshot, which the run never writes into — a
    /// kill at any moment (even inside a block write) leaves it readable, and readers can
    /// open it while the run goes. Taken at the first record (the initial state), then at
    /// most once per flush interval and at most 1/[`SNAPSHOT_TIME_SHARE`] of the wall time.
    /// A snapshot that cannot be taken (e.g. a full disk) leaves the previous one in place;
    /// the run goes on, and the closed file replaces it at the end.
    fn snapshot(&mut self) {
        let due = std::mem::take(&mut self.snapshot_now)
            || self.snapshot_at.is_none_or(|t| {
                t.elapsed()
                    >= self
                        .flush_interval
                        .max(self.snapshot_cost * SNAPSHOT_TIME_SHARE)
            });
        let Some(part) = self.part.clone().filter(|_| due) else {
            return;
        };
        let start = Instant::now();
        let temp = snapshot_temp(&self.path);
        // std's copy uses the kernel's copy_file_range (block sharing where the file system
        // offers it). No fsync: a kill does not lose the page cache; power loss is not covered.
        let copied = std::fs::copy(&part, &temp).and_then(|_| std::fs::rename(&temp, &self.path));
        self.snapshot_at = Some(Instant::now());
        self.snapshot_cost = start.elapsed();
        match copied {
            Ok(()) => {
                self.snapshot_records = self.committed;
                self.snapshot_t = self.committed_t;
                self.snapshot_fresh = true;
            }
            Err(_) => {
                let _ = std::fs::remove_file(&temp);
            }
        }
    }

    /// Grow the block limit (from [`FIRST_BLOCK_BYTES`] after the initial state, doubled at
    /// every write up to the buffer budget) and the disk-space reserve with it.
    fn grow_reserve(&mut self) -> Result<(), SinkError> {
        if self.datasets.is_none() {
            return Ok(());
        }
        if self.written > 0 {
            let cap = self.buffer_bytes.min(MAX_BLOCK_BYTES);
            self.block_limit = (2 * self.block_limit).clamp(FIRST_BLOCK_BYTES.min(cap), cap);
        }
        // A block writes at most its rows plus one partly filled chunk per dataset (chunks
        // are allocated whole), and some metadata.
        let need = self.block_limit + self.chunk_bytes + RESERVE_METADATA;
        self.ensure_reserve(need as u64)
    }

    /// Rename the closed `<path>.part` to `path` (once), replacing the last snapshot.
    fn publish(&mut self) -> Result<(), SinkError> {
        if let Some(part) = &self.part {
            std::fs::rename(part, &self.path)
                .map_err(|e| sink_err(&self.path, &format!("rename `{}`", part.display()), e))?;
            self.part = None;
        }
        Ok(())
    }

    /// A write failed with `e`: shrink every extendible dataset back to its length at the last
    /// complete flush (datasets created since: to 0), flush and close the file. Returns the
    /// error, completed with what the file holds now.
    fn fail(&mut self, e: SinkError) -> SinkError {
        let restored = self.restore();
        self.datasets = None;
        self.extendible.clear();
        let closed = match self.file.take() {
            Some(f) => f.close().map_err(|e| sink_err(&self.path, "close", e)),
            None => Ok(()),
        };
        self.reserve = None;
        let file = self.path.display().to_string();
        let outcome = match restored.and(closed) {
            Ok(()) if self.committed > 0 => match self.publish() {
                Ok(()) => format!(
                    "`{file}` keeps the {} record{} written before (up to t = {:.6} s)",
                    self.committed,
                    if self.committed == 1 { "" } else { "s" },
                    self.committed_t
                ),
                Err(r) => {
                    self.committed = 0;
                    format!("no results kept: {}", r.0)
                }
            },
            Ok(()) => {
                if let Some(part) = self.part.take() {
                    let _ = std::fs::remove_file(part);
                }
                format!("no results written (`{file}` not created)")
            }
            Err(r) => {
                // The written file may be damaged: drop it; the last snapshot stays.
                if let Some(part) = self.part.take() {
                    let _ = std::fs::remove_file(part);
                }
                self.committed = self.snapshot_records;
                self.committed_t = self.snapshot_t;
                if self.snapshot_records > 0 {
                    format!(
                        "`{file}` keeps the {} record{} of its last snapshot (up to t = {:.6} s; \
                         the rest could not be closed: {})",
                        self.snapshot_records,
                        if self.snapshot_records == 1 { "" } else { "s" },
                        self.snapshot_t,
                        r.0
                    )
                } else {
                    format!("no results written (`{file}` not created)")
                }
            }
        };
        let why = format!("{}; {outcome}", e.0);
        self.failed = Some(why.clone());
        SinkError(why)
    }

    /// Shrink the extendible datasets back to their lengths at the last complete flush and
    /// flush the file.
    fn restore(&self) -> Result<(), SinkError> {
        let file = self.file()?;
        let err = |what: &str, e: hdf5::Error| sink_err(&self.path, what, e);
        let mut all = Vec::new();
        extendible_datasets(file, &mut all).map_err(|e| err("list datasets", e))?;
        for d in all {
            let name = d.name();
            let n = self
                .extendible
                .iter()
                .find(|(c, _)| c.name() == name)
                .map_or(0, |&(_, n)| n);
            let mut shape = d.shape();
            if shape.first().is_some_and(|&m| m != n) {
                shape[0] = n;
                d.resize(shape.as_slice())
                    .map_err(|e| err(&format!("shrink dataset `{name}`"), e))?;
            }
        }
        file.flush().map_err(|e| err("flush", e))
    }

    /// Write the buffered records as one block per dataset. On failure they stay buffered
    /// (a retry rewrites the same rows).
    fn write_buffered(&mut self) -> Result<(), SinkError> {
        let records = self.recorded - self.written;
        let Some(d) = &mut self.datasets else {
            return Ok(());
        };
        if records == 0 {
            return Ok(());
        }
        d.write(self.written, records)
            .map_err(|(what, e)| sink_err(&self.path, &what, e))?;
        d.clear();
        self.written = self.recorded;
        self.written_t = self.recorded_t;
        Ok(())
    }

    fn file(&self) -> Result<&File, SinkError> {
        self.file
            .as_ref()
            .ok_or_else(|| sink_err(&self.path, "write", "the sink is already finished"))
    }
}

impl ResultSink for Hdf5Sink {
    fn begin(&mut self, layout: &OutputLayout) -> Result<(), SinkError> {
        if self.datasets.is_some() {
            return Err(sink_err(&self.path, "begin", "called twice"));
        }
        let mut datasets = self.create_layout(layout)?;
        datasets.reserve(INITIAL_RECORDS.min(self.buffer_bytes / datasets.record_bytes.max(1) + 1));
        self.datasets = Some(datasets);
        self.flush()
    }

    /// Buffers the record; writes the buffered records and flushes the file at the first
    /// record, after the flush interval, at the buffer budget and every `flush_every`-th
    /// record.
    fn record(&mut self, r: &StepRecord<'_>) -> Result<(), SinkError> {
        if let Some(why) = &self.failed {
            return Err(SinkError(why.clone()));
        }
        self.file()?;
        let path = &self.path;
        let Some(d) = &mut self.datasets else {
            return Err(sink_err(path, "record", "called before begin"));
        };
        if r.nodes.len() != d.n_nodes {
            return Err(sink_err(
                path,
                "record",
                format!(
                    "{} node states, layout has {} nodes",
                    r.nodes.len(),
                    d.n_nodes
                ),
            ));
        }
        if r.element_values.len() != d.n_element_values {
            return Err(sink_err(
                path,
                "record",
                format!(
                    "{} element values, layout has {}",
                    r.element_values.len(),
                    d.n_element_values
                ),
            ));
        }
        d.push(r);
        if let Some(file) = &self.file {
            d.push_forces(file, r)
                .map_err(|(what, e)| sink_err(path, &what, e))?;
        }
        self.recorded += 1;
        self.recorded_t = r.t;
        let bytes = d.buffered_bytes(self.recorded - self.written);
        // Written every n-th record on request: that record also goes to `path` at once.
        let requested = self.recorded.is_multiple_of(self.flush_every);
        if self.written == 0
            || requested
            || bytes >= self.block_limit
            || self.last_write.elapsed() >= self.flush_interval
        {
            self.snapshot_now = requested;
            self.flush_block(true)?;
        }
        Ok(())
    }

    /// Written as scalar attributes of `/solver` (bool as HDF5's enum bool, `Int` as i64,
    /// `Float` as f64, `Text` as a variable-length UTF-8 string), replacing any of the same name.
    fn solver_attributes(
        &mut self,
        attributes: &[(&str, AttributeValue)],
    ) -> Result<(), SinkError> {
        let path = &self.path;
        if self.datasets.is_none() {
            return Err(sink_err(path, "solver attributes", "called before begin"));
        }
        let solver = self
            .file()?
            .group("solver")
            .map_err(|e| sink_err(path, "group `/solver`", e))?;
        for (name, value) in attributes {
            let err = |e: hdf5::Error| sink_err(path, &format!("attribute `/solver/{name}`"), e);
            if solver.attr_names().map_err(err)?.iter().any(|n| n == name) {
                solver.delete_attr(name).map_err(err)?;
            }
            match value {
                AttributeValue::Bool(v) => solver
                    .new_attr::<bool>()
                    .create(*name)
                    .and_then(|a| a.write_scalar(v)),
                AttributeValue::Int(v) => solver
                    .new_attr::<i64>()
                    .create(*name)
                    .and_then(|a| a.write_scalar(v)),
                AttributeValue::Float(v) => solver
                    .new_attr::<f64>()
                    .create(*name)
                    .and_then(|a| a.write_scalar(v)),
                AttributeValue::Text(v) => write_str_attr(&solver, name, v),
            }
            .map_err(err)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        if let Some(why) = &self.failed {
            return Err(SinkError(why.clone()));
        }
        if self.file.is_none() {
            return Ok(()); // already finished
        }
        if let Some(d) = &mut self.datasets {
            d.forces.finish();
        }
        self.flush_block(false)?;
        // The sidecars describe the records now on disk, read back from the file.
        let scene = match (&self.datasets, &self.file) {
            (Some(d), Some(file)) if self.xdmf && d.n_nodes > 0 => {
                Some(crate::xdmf::Scene::read(file, &self.path)?)
            }
            _ => None,
        };
        // Close every handle, then the file.
        self.datasets = None;
        if let Some(file) = self.file.take() {
            file.close().map_err(|e| sink_err(&self.path, "close", e))?;
        }
        self.reserve = None;
        self.publish()?;
        if let Some(scene) = scene {
            crate::xdmf::write_scene(&self.path, &scene)?;
        }
        Ok(())
    }
}

impl Drop for Hdf5Sink {
    /// An unfinished sink (e.g. after a run error) writes its buffered records before the
    /// file closes; errors cannot be reported here and are ignored.
    fn drop(&mut self) {
        if self.file.is_some() {
            // The run stopped: the forces of the last records are recovered as at its end.
            if let Some(d) = &mut self.datasets {
                d.forces.finish();
            }
            if self.flush_block(false).is_ok() {
                // Closed complete: a file without records gets its final name as well.
                let _ = self.publish();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<Hdf5Sink>();
    }

    #[test]
    fn group_names() {
        assert_eq!(element_group_name("a/b"), "a_b");
        assert_eq!(element_group_name("."), "_.");
        assert_eq!(element_group_name("hinge"), "hinge");
    }
}
