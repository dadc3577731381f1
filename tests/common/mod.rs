//! Helpers shared by the integration tests: run the `saltus` binary in a scratch directory,
//! read HDF5 datasets, and a test element that fails on purpose.
#![allow(dead_code)] // each test binary uses its own subset

use hdf5_metno as hdf5;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run `saltus ARGS` in `dir`.
pub fn saltus(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saltus"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run saltus")
}

/// Run `saltus ARGS` in `dir` and require success.
pub fn saltus_ok(args: &[&str], dir: &Path) -> Output {
    let o = saltus(args, dir);
    assert!(o.status.success(), "{args:?}: {o:?}");
    o
}

/// A fresh, empty directory `target/tmp/GROUP/NAME`.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run the shipped model `models/MODEL.toml` to `t_end` into `dir/OUT`.
pub fn run_model(dir: &Path, model: &str, out: &str, t_end: &str) -> PathBuf {
    let path = format!("{}/models/{model}.toml", env!("CARGO_MANIFEST_DIR"));
    saltus_ok(&["run", &path, "-o", out, "--t-end", t_end, "--quiet"], dir);
    dir.join(out)
}

/// A rigid pendulum released from the horizontal: a 2 kg bob at `[1, 0, 0]` m on a hinge
/// about y at the origin, 0.5 s at h = 1e-3 under gravity.
pub const PENDULUM: &str = r#"
[simulation]
t_end = 0.5
h = 1e-3
gravity = [0.0, 0.0, -9.81]
[[nodes]]
name = "ground"
position = [0.0, 0.0, 0.0]
fixed = true
[[nodes]]
name = "bob"
position = [1.0, 0.0, 0.0]
[[elements]]
type = "rigid_body"
name = "bob_body"
nodes = ["bob"]
mass = 2.0
inertia = [0.002, 0.002, 0.002]
[[elements]]
type = "revolute_joint"
name = "hinge"
nodes = ["ground", "bob"]
anchor = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
"#;

/// Every dataset of the file with its raw bytes, by path.
pub fn datasets(path: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(g: &hdf5::Group, out: &mut Vec<(String, Vec<u8>)>) {
        for ds in g.datasets().unwrap() {
            let bytes: Vec<u8> = if ds.dtype().unwrap().is::<f64>() {
                let v: Vec<f64> = ds.read_raw().unwrap();
                v.iter().flat_map(|x| x.to_le_bytes()).collect()
            } else if ds.dtype().unwrap().is::<u64>() {
                let v: Vec<u64> = ds.read_raw().unwrap();
                v.iter().flat_map(|x| x.to_le_bytes()).collect()
            } else {
                // Names (variable-length strings) and indices: compared through their text.
                format!("{:?}", ds.read_raw::<hdf5::types::VarLenUnicode>().ok()).into_bytes()
            };
            out.push((ds.name(), bytes));
        }
        for sub in g.groups().unwrap() {
            walk(&sub, out);
        }
    }
    let file = hdf5::File::open(path).unwrap();
    let mut out = Vec::new();
    walk(&file, &mut out);
    out.sort();
    out
}

/// The pixel coordinates of every `<polyline>` of an SVG drawn by `saltus plot`, in order.
pub fn svg_polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("points=\"")
        .skip(1)
        .map(|rest| {
            rest[..rest.find('"').unwrap()]
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// Test element on one point node: from `t_fail` \[s\] on, its smooth residual is NaN (`nan`)
/// or its evaluation fails ("blown at t = …"); before, it adds nothing.
#[derive(Debug)]
pub struct Fault {
    pub node: [saltus::prelude::NodeId; 1],
    pub t_fail: f64,
    pub nan: bool,
}

impl saltus::prelude::Element for Fault {
    fn type_name(&self) -> &'static str {
        "fault"
    }
    fn nodes(&self) -> &[saltus::prelude::NodeId] {
        &self.node
    }
    fn levels(&self) -> saltus::prelude::Levels {
        saltus::prelude::Levels::SMOOTH
    }
    fn smooth(
        &self,
        cx: &saltus_core::StepCx,
        _s: &saltus_core::LocalState<'_>,
        out: &mut saltus_core::LocalSystem<'_>,
    ) -> Result<(), saltus_core::ElementError> {
        if cx.t > self.t_fail {
            if self.nan {
                out.residual[0] = f64::NAN;
            } else {
                return Err(saltus_core::ElementError::InvalidState(format!(
                    "blown at t = {}",
                    cx.t
                )));
            }
        }
        Ok(())
    }
}
