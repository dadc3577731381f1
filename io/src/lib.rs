//! # saltus-io
//!
//! Input and output of Saltus:
//!
//! * [`model_file`]: model files in TOML or JSON (same structure), parsed into a
//!   [`saltus_core::Model`] through the element registry plus [`SimulationSettings`];
//!   errors ([`IoError`]) name the file, line, node or element and the offending parameter.
//! * [`hdf5_sink`]: [`Hdf5Sink`], a [`saltus_core::ResultSink`] that appends every recorded
//!   step to an HDF5 file (layout in `docs/hdf5-layout.md`; records buffered in memory and
//!   written in blocks, at least every second) and writes an XDMF sidecar for ParaView.
//! * [`series`]: time histories read by selectors such as `nodes/position[slider].x`
//!   (`saltus plot`).
//! * [`study`]: parameter studies (`saltus sweep`): a base model, parameters addressed by
//!   path, one model file per point and an index of the runs (`index.csv`, `index.h5`).
//! * [`forces`]: contact forces recovered from a result file's impulses
//!   (`/contact_forces`, `saltus forces`).
//!
//! A model file:
//!
//! ```toml
//! [simulation]            # every key optional
//! t_end = 2.0             # [s], default 1.0
//! h = 1e-3                # [s], default 1e-3
//! rho_inf = 0.8           # in [0, 1], default 0.8
//! tol = 1e-8              # relative Newton tolerance, default 1e-8
//! gravity = [0, 0, -9.81] # [m/s^2], default [0, 0, -9.81]
//! output = "out.h5"       # optional default output path
//! max_iterations = 50     # per subproblem, default 50
//! adaptive = false        # step halving on non-convergence, default false
//! output_every = 1        # write every N-th step, default 1
//!
//! [[nodes]]
//! name = "ground"
//! position = [0, 0, 0]            # [m], required
//! fixed = true                    # default false
//!
//! [[nodes]]
//! name = "crank"
//! position = [0.1, 0, 0]
//! rotation = [1, 0, 0, 0]         # unit quaternion (w, x, y, z), default identity
//! # rotation_vector = [0, 0, 1.57]  # alternative: axis * angle [rad]
//! velocity = [0, 0, 0]            # [m/s], default 0
//! angular_velocity = [0, 0, 0]    # [rad/s] in the inertial frame, default 0
//! kind = "frame"                  # "frame" (default) or "point"
//!
//! [[nodes]]
//! name = "tip"
//! position = [0.3, 0, 0]
//!
//! [[beam_lines]]                  # optional: mesh a straight beam into `beam` elements
//! name = "rod"                    # generates nodes rod_n1 … and elements rod_e1 …
//! from = "crank"                  # existing frame nodes
//! to = "tip"
//! elements = 4                    # number of elements
//! E = 210e9                       # every other key: `beam` parameter
//! nu = 0.3
//! A = 2.2e-4
//! I2 = 4.1e-9
//! I3 = 4.1e-9
//! rho = 7850.0
//!
//! [[elements]]
//! type = "revolute_joint"         # registered element type
//! name = "hinge"                  # unique
//! nodes = ["ground", "crank"]
//! axis = [0, 0, 1]                # every other key: type-specific parameter
//! ```

mod contact_table;
pub mod forces;
pub mod hdf5_sink;
mod live_forces;
pub mod model_file;
pub mod series;
pub mod study;
pub mod xdmf;

pub use hdf5_sink::Hdf5Sink;
pub use model_file::{
    load_model, parse_str, Format, InvalidSetting, IoError, Location, ModelFile, SimulationSettings,
};
pub use xdmf::{write_xdmf, xdmf3_path, xdmf_path};
