//! Runs a model file that uses the plugin element `viscous_drag`: a ball falling under gravity
//! with linear drag reaches the terminal velocity `m g / c`.
//!
//! `cargo run -p saltus-plugin-drag -- examples/plugin-element/drag.toml`

use saltus::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    saltus_plugin_drag::link();
    saltus::link();
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/drag.toml").into());
    let mut file = saltus::io::load_model(&path)?;
    let opts = saltus::driver::nsga_options(&file.simulation, &Default::default());
    let mut solver = Nsga::new(&mut file.model, opts)?;
    let mut results = MemorySink::default();
    let summary = solver.run(&mut file.model, &mut results, &mut |_| {})?;
    let v = results.nodes.last().map(|n| n[0].v.z).unwrap_or(0.0);
    println!(
        "{} steps; final vertical velocity {v:.6} m/s (terminal velocity -m g / c = {:.6} m/s)",
        summary.steps,
        -2.0 * 9.81 / 0.8
    );
    Ok(())
}
