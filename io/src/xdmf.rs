//! XDMF sidecars that let ParaView (and VisIt) show a results file as the mechanism.
//!
//! Each frame is a spatial collection of up to three grids whose heavy data are hyperslabs of
//! the `.h5` datasets (nothing is copied):
//!
//! * `nodes`: every node as a vertex, with `velocity`, `angular_velocity` (spatial),
//!   `rotation` (unit quaternion w, x, y, z) and the body axes `axis_1`, `axis_2`, `axis_3`
//!   (columns of R, from `/nodes/axes`: glyph-ready frames) as point arrays;
//! * `beams`: the beam elements as line segments between their end nodes (the element
//!   group attribute `nodes`, `docs/hdf5-layout.md`), so a flexible member shows as a
//!   polyline;
//! * `contacts`: the contact table's rows of the record as vertices at the contact point,
//!   with `normal`, `impulse` and `gap` arrays (glyph-ready normals).
//!
//! ParaView's two XDMF readers disagree on how a hyperslab is written, so two files are
//! written side by side: `RUN.xdmf` in the XDMF 2 form (a `HyperSlab` data item; ParaView's
//! "XDMF Reader", the default for `.xdmf`) and `RUN.xdmf3` in the XDMF 3 form (a
//! `file:/path|start:stride:count:dims` heavy-data path; the "Xdmf3 Reader S/T", which ParaView
//! picks for `.xdmf3`). Each reader fails on the other's form (checked with ParaView 5.11).
//!
//! At most [`MAX_FRAMES`] records become frames (every k-th record and the last one), so the
//! sidecars stay small beside the results; every record stays in the `.h5`.

use hdf5_metno as hdf5;

use hdf5::types::VarLenUnicode;
use saltus_core::SinkError;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Largest number of frames of a sidecar: animation frames, not the results themselves.
pub const MAX_FRAMES: usize = 250;

/// Path of the XDMF 2 sidecar of an HDF5 result file: the extension replaced by `.xdmf`
/// (`run.h5` → `run.xdmf`).
pub fn xdmf_path(h5_path: &Path) -> PathBuf {
    sidecar(h5_path, "xdmf")
}

/// Path of the XDMF 3 sidecar: `run.h5` → `run.xdmf3`.
pub fn xdmf3_path(h5_path: &Path) -> PathBuf {
    sidecar(h5_path, "xdmf3")
}

fn sidecar(h5_path: &Path, ext: &str) -> PathBuf {
    if h5_path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
    {
        let mut s = h5_path.as_os_str().to_owned();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    } else {
        h5_path.with_extension(ext)
    }
}

fn sink_err(path: &Path, what: &str, e: impl std::fmt::Display) -> SinkError {
    SinkError(format!("{}: {what}: {e}", path.display()))
}

/// What the sidecars describe, read from a results file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    /// File name of the `.h5` (referenced relative to the sidecar).
    pub h5_name: String,
    /// Record times \[s\].
    pub times: Vec<f64>,
    /// Number of nodes.
    pub n_nodes: usize,
    /// Beam segments as pairs of node indices.
    pub beams: Vec<[usize; 2]>,
    /// Contact-table rows per record (empty: no table).
    pub contact_counts: Vec<u64>,
    /// Total rows of the contact table.
    pub contact_rows: usize,
    /// The file has `/nodes/axes` (body axes for glyphs; files before it have not).
    pub axes: bool,
}

impl Scene {
    /// Read the scene of an open results file (`h5_path` names it in errors and gives the
    /// referenced file name).
    pub fn read(file: &hdf5::File, h5_path: &Path) -> Result<Self, SinkError> {
        let times: Vec<f64> = file
            .dataset("time")
            .and_then(|d| d.read_raw())
            .map_err(|e| sink_err(h5_path, "dataset `/time`", e))?;
        let n_nodes = file
            .dataset("nodes/position")
            .map(|d| d.shape().get(1).copied().unwrap_or(0))
            .map_err(|e| sink_err(h5_path, "dataset `/nodes/position`", e))?;
        let mut beams = Vec::new();
        if let Ok(group) = file.group("elements") {
            let names = group.member_names().unwrap_or_default();
            for name in names {
                let Ok(g) = group.group(&name) else { continue };
                let kind = g
                    .attr("type")
                    .and_then(|a| a.read_scalar::<VarLenUnicode>())
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                if kind != "beam" {
                    continue;
                }
                if let Ok(nodes) = g.attr("nodes").and_then(|a| a.read_raw::<i64>()) {
                    // End nodes: the first two of a beam element (its centre node, if any,
                    // follows them).
                    if nodes.len() >= 2 && nodes[0] >= 0 && nodes[1] >= 0 {
                        beams.push([nodes[0] as usize, nodes[1] as usize]);
                    }
                }
            }
        }
        let (contact_counts, contact_rows) = match file.dataset("contacts/count") {
            Ok(d) => {
                let counts: Vec<u64> = d
                    .read_raw()
                    .map_err(|e| sink_err(h5_path, "dataset `/contacts/count`", e))?;
                let rows = file
                    .dataset("contacts/point")
                    .map(|d| d.shape().first().copied().unwrap_or(0))
                    .unwrap_or(0);
                (counts, rows)
            }
            Err(_) => (Vec::new(), 0),
        };
        let axes = file.dataset("nodes/axes").is_ok();
        Ok(Self {
            axes,
            h5_name: h5_path
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            times,
            n_nodes,
            beams,
            contact_counts,
            contact_rows,
        })
    }

    /// Records shown as frames: every k-th (k = ⌈n / MAX_FRAMES⌉) and the last.
    pub fn frames(&self) -> Vec<usize> {
        let n = self.times.len();
        if n == 0 {
            return Vec::new();
        }
        let k = n.div_ceil(MAX_FRAMES).max(1);
        let mut f: Vec<usize> = (0..n).step_by(k).collect();
        if f.last() != Some(&(n - 1)) {
            f.push(n - 1);
        }
        f
    }
}

/// The two forms of a hyperslab.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    /// XDMF 2: `<DataItem ItemType="HyperSlab">` with start/stride/count and the source.
    Two,
    /// XDMF 3: the selection in the heavy-data path, `file:/path|start:stride:count:dims`.
    Three,
}

/// A hyperslab (`start`, unit stride, `count`) of a dataset of shape `dims`, read as an array
/// of dimensions `shape`: e.g. the `N × 3` positions of one record of `/nodes/position`.
struct Slab<'a> {
    h5: &'a str,
    dataset: &'a str,
    dims: &'a [usize],
    start: &'a [usize],
    count: &'a [usize],
    /// Dimensions of the result (e.g. `[N, 3]`).
    shape: &'a [usize],
}

fn join(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
}

impl Slab<'_> {
    fn write(&self, x: &mut String, form: Form) {
        let shape = join(self.shape);
        let ones = join(&vec![1; self.dims.len()]);
        match form {
            Form::Two => {
                // The comment is the item's first child: VTK's XDMF 2 reader caches geometry
                // keyed by that text, so it must differ between frames.
                let _ = write!(
                    x,
                    "<DataItem ItemType=\"HyperSlab\" Dimensions=\"{shape}\" Type=\"HyperSlab\">\
                     <!-- {}[{}] -->\
                     <DataItem Dimensions=\"3 {}\" NumberType=\"Int\" Format=\"XML\">{} {ones} {}\
                     </DataItem><DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"8\" \
                     Format=\"HDF\">{}:{}</DataItem></DataItem>",
                    self.dataset,
                    join(self.start),
                    self.dims.len(),
                    join(self.start),
                    join(self.count),
                    join(self.dims),
                    self.h5,
                    self.dataset
                );
            }
            Form::Three => {
                let _ = write!(
                    x,
                    "<DataItem Dimensions=\"{shape}\" NumberType=\"Float\" Precision=\"8\" \
                     Format=\"HDF\">{}:{}|{}:{ones}:{}:{}</DataItem>",
                    self.h5,
                    self.dataset,
                    join(self.start),
                    join(self.count),
                    join(self.dims)
                );
            }
        }
    }
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The sidecar text of `scene` in one of the two forms.
fn xdmf_text(scene: &Scene, form: Form) -> String {
    let h5 = xml_escape(&scene.h5_name);
    let (n, nn) = (scene.times.len(), scene.n_nodes);
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n<Domain>\n");
    x.push_str("<Grid Name=\"mechanism\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    let node_cells = format!(
        "<DataItem Dimensions=\"{nn}\" NumberType=\"Int\" Precision=\"8\" \
         Format=\"HDF\">{h5}:/nodes/index</DataItem>"
    );
    let beam_cells = (!scene.beams.is_empty()).then(|| {
        let flat: Vec<usize> = scene.beams.iter().flatten().copied().collect();
        format!(
            "<DataItem Dimensions=\"{} 2\" NumberType=\"Int\" Format=\"XML\">{}</DataItem>",
            scene.beams.len(),
            join(&flat)
        )
    });
    let mut row_offsets = Vec::with_capacity(scene.contact_counts.len());
    let mut off = 0usize;
    for &c in &scene.contact_counts {
        row_offsets.push(off);
        off += c as usize;
    }
    for k in scene.frames() {
        let t = scene.times[k];
        let _ = writeln!(
            x,
            "<Grid Name=\"record {k}\" GridType=\"Collection\" CollectionType=\"Spatial\">\
             <Time Value=\"{t:e}\"/>"
        );
        let node_slab = |x: &mut String, dataset: &str, cols: usize| {
            Slab {
                h5: &h5,
                dataset,
                dims: &[n, nn, cols],
                start: &[k, 0, 0],
                count: &[1, nn, cols],
                shape: &[nn, cols],
            }
            .write(x, form)
        };
        if nn > 0 {
            let _ = write!(
                x,
                "<Grid Name=\"nodes\" GridType=\"Uniform\"><Topology TopologyType=\"Polyvertex\" \
                 NumberOfElements=\"{nn}\" NodesPerElement=\"1\">{node_cells}</Topology>\
                 <Geometry GeometryType=\"XYZ\">"
            );
            node_slab(&mut x, "/nodes/position", 3);
            x.push_str("</Geometry>");
            for a in 0..3 {
                if !scene.axes {
                    break;
                }
                let _ = write!(
                    x,
                    "<Attribute Name=\"axis_{}\" AttributeType=\"Vector\" Center=\"Node\">",
                    a + 1
                );
                Slab {
                    h5: &h5,
                    dataset: "/nodes/axes",
                    dims: &[n, nn, 9],
                    start: &[k, 0, 3 * a],
                    count: &[1, nn, 3],
                    shape: &[nn, 3],
                }
                .write(&mut x, form);
                x.push_str("</Attribute>");
            }
            for (name, cols, kind) in [
                ("velocity", 3, "Vector"),
                ("angular_velocity", 3, "Vector"),
                ("rotation", 4, "Matrix"),
            ] {
                let _ = write!(
                    x,
                    "<Attribute Name=\"{name}\" AttributeType=\"{kind}\" Center=\"Node\">"
                );
                let dataset: &'static str = match name {
                    "velocity" => "/nodes/velocity",
                    "angular_velocity" => "/nodes/angular_velocity",
                    _ => "/nodes/rotation",
                };
                node_slab(&mut x, dataset, cols);
                x.push_str("</Attribute>");
            }
            x.push_str("</Grid>\n");
        }
        if let Some(cells) = &beam_cells {
            let _ = write!(
                x,
                "<Grid Name=\"beams\" GridType=\"Uniform\"><Topology TopologyType=\"Polyline\" \
                 NumberOfElements=\"{}\" NodesPerElement=\"2\">{cells}</Topology>\
                 <Geometry GeometryType=\"XYZ\">",
                scene.beams.len()
            );
            node_slab(&mut x, "/nodes/position", 3);
            x.push_str("</Geometry></Grid>\n");
        }
        let rows = scene.contact_counts.get(k).copied().unwrap_or(0) as usize;
        if rows > 0 {
            let first = row_offsets[k];
            let m = scene.contact_rows;
            let cells: Vec<usize> = (0..rows).collect();
            let _ = write!(
                x,
                "<Grid Name=\"contacts\" GridType=\"Uniform\"><Topology \
                 TopologyType=\"Polyvertex\" NumberOfElements=\"{rows}\" NodesPerElement=\"1\">\
                 <DataItem Dimensions=\"{rows}\" NumberType=\"Int\" Format=\"XML\">{}</DataItem>\
                 </Topology><Geometry GeometryType=\"XYZ\">",
                join(&cells)
            );
            let slab = |x: &mut String, dataset: &str, cols: usize| {
                Slab {
                    h5: &h5,
                    dataset,
                    dims: &[m, cols],
                    start: &[first, 0],
                    count: &[rows, cols],
                    shape: &[rows, cols],
                }
                .write(x, form)
            };
            slab(&mut x, "/contacts/point", 3);
            x.push_str("</Geometry>");
            for (name, cols, kind) in [("normal", 3, "Vector"), ("impulse", 3, "Vector")] {
                let _ = write!(
                    x,
                    "<Attribute Name=\"{name}\" AttributeType=\"{kind}\" Center=\"Node\">"
                );
                slab(&mut x, &format!("/contacts/{name}"), cols);
                x.push_str("</Attribute>");
            }
            x.push_str("<Attribute Name=\"gap\" AttributeType=\"Scalar\" Center=\"Node\">");
            // `/contacts/gap` is `[m]`: a hyperslab of a 1-D dataset.
            Slab {
                h5: &h5,
                dataset: "/contacts/gap",
                dims: &[m],
                start: &[first],
                count: &[rows],
                shape: &[rows],
            }
            .write(&mut x, form);
            x.push_str("</Attribute></Grid>\n");
        }
        x.push_str("</Grid>\n");
    }
    x.push_str("</Grid>\n</Domain>\n</Xdmf>\n");
    x
}

/// Write `text` to `path` through a temporary file and a rename, so that a reader (or a
/// crash) never sees a half-written sidecar.
fn write_atomic(path: &Path, text: &str) -> Result<(), SinkError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            SinkError(format!("cannot write XDMF file `{}`: {e}", path.display()))
        })
}

/// Write both sidecars of `scene` next to `h5_path`; returns their paths (none if the file
/// has no nodes or no records).
pub fn write_scene(h5_path: &Path, scene: &Scene) -> Result<Vec<PathBuf>, SinkError> {
    if scene.n_nodes == 0 || scene.times.is_empty() {
        return Ok(Vec::new());
    }
    let two = xdmf_path(h5_path);
    let three = xdmf3_path(h5_path);
    write_atomic(&two, &xdmf_text(scene, Form::Two))?;
    write_atomic(&three, &xdmf_text(scene, Form::Three))?;
    Ok(vec![two, three])
}

/// (Re)write the XDMF sidecars of an existing result file (`saltus xdmf`), e.g. after an
/// interrupted run. Returns the `.xdmf` path, or `None` if the file has no nodes or records;
/// the `.xdmf3` file is written beside it.
pub fn write_xdmf(h5_path: impl AsRef<Path>) -> Result<Option<PathBuf>, SinkError> {
    let h5_path = h5_path.as_ref();
    let file = hdf5::File::open(h5_path).map_err(|e| sink_err(h5_path, "open", e))?;
    let scene = Scene::read(&file, h5_path)?;
    drop(file);
    Ok(write_scene(h5_path, &scene)?.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Scene {
        Scene {
            h5_name: "a&b.h5".into(),
            times: vec![0.0, 0.1, 0.2],
            n_nodes: 3,
            beams: vec![[0, 1], [1, 2]],
            contact_counts: vec![0, 2, 1],
            contact_rows: 3,
            axes: true,
        }
    }

    #[test]
    fn paths() {
        assert_eq!(xdmf_path(Path::new("r/run.h5")), Path::new("r/run.xdmf"));
        assert_eq!(xdmf3_path(Path::new("run.h5")), Path::new("run.xdmf3"));
        assert_eq!(xdmf_path(Path::new("odd.xdmf")), Path::new("odd.xdmf.xdmf"));
    }

    #[test]
    fn frames_are_capped_and_end_at_the_last_record() {
        let mut s = scene();
        assert_eq!(s.frames(), vec![0, 1, 2]);
        s.times = vec![0.0; 2 * MAX_FRAMES + 1];
        let f = s.frames();
        assert!(f.len() <= MAX_FRAMES + 1, "{}", f.len());
        assert_eq!(*f.last().unwrap(), 2 * MAX_FRAMES);
        assert_eq!(f[1], 3);
    }

    #[test]
    fn both_forms_select_the_record_rows() {
        let s = scene();
        let two = xdmf_text(&s, Form::Two);
        let three = xdmf_text(&s, Form::Three);
        for t in [&two, &three] {
            assert_eq!(t.matches("<Time ").count(), 3);
            assert_eq!(t.matches("Name=\"beams\"").count(), 3);
            // Contacts only in the records that have rows: 2 rows at row 0, 1 row at row 2.
            assert_eq!(t.matches("Name=\"contacts\"").count(), 2);
            assert!(t.contains("a&amp;b.h5:/nodes/index"));
            assert!(t.contains(">0 1 1 2</DataItem>"), "beam connectivity");
        }
        // Record 2's node slab and contact rows.
        assert!(two.contains("<!-- /nodes/position[2 0 0] -->"));
        assert!(two.contains(">2 0 0 1 1 1 1 3 3</DataItem>"));
        assert!(two.contains(">2 0 1 1 1 3</DataItem>"), "contact row 2");
        assert!(three.contains("a&amp;b.h5:/nodes/position|2 0 0:1 1 1:1 3 3:3 3 3"));
        assert!(three.contains("/contacts/point|2 0:1 1:1 3:3 3"));
        assert!(three.contains("/contacts/gap|0:1:2:3"));
        assert!(!three.contains("HyperSlab"));
        // Body axis e2 of record 2: columns 3..6 of `/nodes/axes`.
        assert!(two.contains(">2 0 3 1 1 1 1 3 3</DataItem>"));
        assert!(three.contains("/nodes/axes|2 0 3:1 1 1:1 3 3:3 3 9"));
    }
}
