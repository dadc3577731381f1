//! The README's five-minute tour, run as written: every `cargo run --release -- …` line of the
//! section's shell blocks runs the `saltus` binary with the same arguments, the Python line
//! runs the script, and the model file is the section's TOML block. (Its Rust block is a
//! doctest of the facade crate.)

use std::path::{Path, PathBuf};
use std::process::Command;

const README: &str = include_str!("../README.md");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The tour section: from its heading to the next `## `.
fn tour() -> &'static str {
    let start = README
        .find("## Five-minute tour")
        .expect("README has the tour");
    let rest = &README[start + 3..];
    &README[start..start + 3 + rest.find("\n## ").unwrap_or(rest.len())]
}

/// The bodies of the fenced blocks tagged `lang` in `text`.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    text.split(&fence)
        .skip(1)
        .map(|b| b[..b.find("```").unwrap()].to_string())
        .collect()
}

/// Split a shell line into words (single quotes group, as the README writes selectors).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Paths of the repository (`models/…`, `examples/…`) made absolute: the tour runs in a
/// scratch directory.
fn absolute(word: &str) -> String {
    if word.starts_with("models/") || word.starts_with("examples/") {
        format!("{ROOT}/{word}")
    } else {
        word.to_string()
    }
}

fn python_with_h5py() -> Option<&'static str> {
    ["/usr/bin/python3", "python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import h5py, matplotlib"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn run_line(line: &str, dir: &Path) {
    let w = words(line);
    let (program, args): (String, Vec<String>) = match w.first().map(String::as_str) {
        Some("cargo") => {
            let dashes = w.iter().position(|x| x == "--").expect("cargo run -- ARGS");
            (
                env!("CARGO_BIN_EXE_saltus").to_string(),
                w[dashes + 1..].iter().map(|x| absolute(x)).collect(),
            )
        }
        Some("python3") => match python_with_h5py() {
            Some(p) => (p.to_string(), w[1..].iter().map(|x| absolute(x)).collect()),
            None => {
                println!("skipped (no python3 with h5py and matplotlib): {line}");
                return;
            }
        },
        other => panic!("unexpected command in the tour: {other:?}"),
    };
    let o = Command::new(&program)
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "`{line}` failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn cli_readme_tour_runs_as_written() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme_tour");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let tour = tour();
    let toml = blocks(tour, "toml");
    assert_eq!(toml.len(), 1, "one model file in the tour");
    assert!(tour.contains("as `pendulum.toml`"));
    std::fs::write(dir.join("pendulum.toml"), &toml[0]).unwrap();
    let lines: Vec<String> = blocks(tour, "sh")
        .iter()
        .flat_map(|b| b.lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert!(lines.len() >= 5, "{lines:?}");
    for line in &lines {
        run_line(line, &dir);
    }
    for f in [
        "crank.h5",
        "crank.png",
        "crank.xdmf",
        "crank.xdmf3",
        "pendulum.h5",
        "hinge.png",
    ] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    // The tour's ParaView picture is in the repository.
    assert!(tour.contains("docs/paraview.png"));
    assert!(Path::new(ROOT).join("docs/paraview.png").exists());

    // Step 4's pendulum does what the tour says: released from the horizontal, the bob
    // (m = 2 kg, L = 1 m, I = 0.002 kg m²) passes the bottom at ω = sqrt(2 m g L / (m L² + I)).
    let f = hdf5_metno::File::open(dir.join("pendulum.h5")).unwrap();
    let w = f
        .dataset("nodes/angular_velocity")
        .unwrap()
        .read_dyn::<f64>()
        .unwrap();
    let w_max = (0..w.shape()[0])
        .map(|k| w[[k, 1, 1]].abs())
        .fold(0.0, f64::max);
    let (m, g, l, i): (f64, f64, f64, f64) = (2.0, 9.81, 1.0, 0.002);
    let exact = (2.0 * m * g * l / (m * l * l + i)).sqrt();
    // The records sample the swing every h = 1 ms near the bottom, where ω changes by
    // O(h²·g/L) per step: the sampled maximum is within 1e-4 of the peak; the scheme's
    // dissipation (ρ∞ = 0.8) over a quarter swing is below 1e-3 relative.
    assert!((w_max - exact).abs() < 1e-3 * exact, "{w_max} vs {exact}");
}
