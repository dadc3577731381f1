//! The whole `saltus` command line with this crate's element types registered: `run`, `plot`,
//! `xdmf`, `forces` and `elements` see `viscous_drag` and `cubic_spring` like the library's own.
//!
//! `cargo run -p saltus-plugin-drag -- run examples/plugin-element/drag.toml -o drag.h5`
//! (a 2 kg ball falling with linear drag reaches the terminal velocity `m g / c`).

fn main() -> std::process::ExitCode {
    saltus_plugin_drag::link();
    saltus::cli::main()
}
