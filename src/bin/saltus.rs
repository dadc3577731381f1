//! The `saltus` command-line program: run a model file (or the built-in default model) with
//! the NSGA integrator and write HDF5 results; list the registered element types.

use saltus::driver::{run_file, run_text, RunRequest, DEFAULT_MODEL, DEFAULT_OUTPUT};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
saltus — nonsmooth flexible multibody dynamics (NSGA time stepping)

USAGE:
    saltus run [MODEL.toml|MODEL.json] [-o OUT.h5] [--t-end T] [--h H] [--rho-inf R] [--adaptive] [--threads N] [--quiet]
    saltus forces RESULTS.h5 (--stiffness K | --young E --poisson NU [--young-b E --poisson-b NU])
                  [--law LAW] [--method cubic|dynamic] [--exponent N] [--contact NAME|ID]...
                  [--samples N] [--threshold EPS]
    saltus elements
    saltus help

`saltus run` without a model runs the built-in slider–crank and writes saltus-default.h5.
Options override the model's [simulation] table:
    -o, --output PATH   HDF5 results file (default: [simulation].output, else MODEL.h5)
    --t-end T           final time [s]
    --h H               step size [s]
    --rho-inf R         spectral radius at infinity in [0, 1]
    --adaptive          retry a non-converged step as two half steps
    --threads N         threads evaluating elements (default: RAYON_NUM_THREADS, else all
                        cores); results are bit-identical for any N
    --quiet             no progress bar

`saltus forces` recovers contact forces from the impulses of a finished run (every step
recorded) and writes them to the file's /contact_forces group (docs/hdf5-layout.md):
    --stiffness K       contact stiffness [N/m^n] for every contact, or
    --young E --poisson NU
                        Hertz stiffness from each contact's radius and these materials
                        (body b: --young-b, --poisson-b; default: same as body a)
    --law LAW           damping: hertz, hunt_crossley, lankarani_nikravesh, flores (default),
                        zhang, exact
    --method M          cubic (default: the thesis' profile) or dynamic (compliant impact)
    --exponent N        law exponent (default 1.5)
    --contact NAME|ID   only this contact (element name or id; repeatable)
    --samples N         samples per impact pulse (default 101)
    --threshold EPS     relative noise threshold of impact detection (default 1e-6)
";

fn main() -> ExitCode {
    saltus::link();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => match parse_run(&args[1..]) {
            Ok(req) => run(req),
            Err(msg) => {
                eprintln!("saltus: {msg}\n\n{USAGE}");
                ExitCode::from(2)
            }
        },
        Some("forces") => match forces(&args[1..]) {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(Usage(msg)) => {
                eprintln!("saltus: {msg}\n\n{USAGE}");
                ExitCode::from(2)
            }
            Err(Failed(msg)) => {
                eprintln!("saltus: error: {msg}");
                ExitCode::FAILURE
            }
        },
        Some("elements") => {
            print!("{}", saltus::driver::elements_listing());
            ExitCode::SUCCESS
        }
        Some("help") | Some("--help") | Some("-h") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("saltus: unknown command `{other}`\n\n{USAGE}");
            ExitCode::from(2)
        }
        None => {
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Why `saltus forces` stopped.
enum ForcesFailure {
    /// Bad command line (exit 2, with usage).
    Usage(String),
    /// The recovery failed (exit 1).
    Failed(String),
}
use ForcesFailure::{Failed, Usage};

fn forces(args: &[String]) -> Result<saltus_io::forces::ForcesSummary, ForcesFailure> {
    use saltus_io::forces::{parse_damping, parse_method, recover_file};
    use saltus_io::forces::{RecoveryOptions, Stiffness};
    let mut it = args.iter();
    let mut file: Option<PathBuf> = None;
    let mut opts = RecoveryOptions::new(Stiffness::Given(f64::NAN));
    let (mut k, mut young, mut poisson, mut young_b, mut poisson_b) =
        (None, None, None, None, None);
    let mut names: Vec<String> = Vec::new();
    let number =
        |it: &mut std::slice::Iter<'_, String>, flag: &str| -> Result<f64, ForcesFailure> {
            let v = it
                .next()
                .ok_or_else(|| Usage(format!("{flag} needs a value")))?;
            v.parse::<f64>()
                .map_err(|_| Usage(format!("{flag}: `{v}` is not a number")))
        };
    let text =
        |it: &mut std::slice::Iter<'_, String>, flag: &str| -> Result<String, ForcesFailure> {
            it.next()
                .cloned()
                .ok_or_else(|| Usage(format!("{flag} needs a value")))
        };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stiffness" => k = Some(number(&mut it, a)?),
            "--young" => young = Some(number(&mut it, a)?),
            "--poisson" => poisson = Some(number(&mut it, a)?),
            "--young-b" => young_b = Some(number(&mut it, a)?),
            "--poisson-b" => poisson_b = Some(number(&mut it, a)?),
            "--exponent" => opts.exponent = number(&mut it, a)?,
            "--threshold" => opts.threshold = number(&mut it, a)?,
            "--law" => opts.damping = parse_damping(&text(&mut it, a)?).map_err(Usage)?,
            "--method" => opts.method = parse_method(&text(&mut it, a)?).map_err(Usage)?,
            "--contact" => names.push(text(&mut it, a)?),
            "--samples" => {
                let v = text(&mut it, a)?;
                opts.samples =
                    v.parse::<usize>().ok().filter(|n| *n >= 2).ok_or_else(|| {
                        Usage(format!("--samples: `{v}` is not a whole number >= 2"))
                    })?;
            }
            s if s.starts_with('-') => return Err(Usage(format!("unknown option `{s}`"))),
            s => {
                if file.is_some() {
                    return Err(Usage(format!("more than one results file given (`{s}`)")));
                }
                file = Some(PathBuf::from(s));
            }
        }
    }
    let file = file.ok_or_else(|| Usage("forces needs a results file (RESULTS.h5)".into()))?;
    opts.stiffness = match (k, young, poisson) {
        (Some(k), None, None) => Stiffness::Given(k),
        (None, Some(e), Some(nu)) => {
            let a = saltus_core::contact_force::Material {
                young: e,
                poisson: nu,
            };
            let b = saltus_core::contact_force::Material {
                young: young_b.unwrap_or(e),
                poisson: poisson_b.unwrap_or(nu),
            };
            Stiffness::Hertz { a, b }
        }
        (Some(_), _, _) => {
            return Err(Usage(
                "give either --stiffness or --young/--poisson, not both".into(),
            ))
        }
        _ => {
            return Err(Usage(
                "forces needs the contact stiffness: --stiffness K, or --young E --poisson NU"
                    .into(),
            ))
        }
    };
    if !file.exists() {
        return Err(Failed(format!("{}: no such file", file.display())));
    }
    recover_file(&file, &opts, &names).map_err(|e| Failed(e.to_string()))
}

fn parse_run(args: &[String]) -> Result<RunRequest, String> {
    let mut req = RunRequest::default();
    let mut it = args.iter();
    let value = |it: &mut std::slice::Iter<'_, String>, flag: &str| -> Result<f64, String> {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse::<f64>()
            .map_err(|_| format!("{flag}: `{v}` is not a number"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--output" => {
                req.output = Some(PathBuf::from(it.next().ok_or("-o needs a path")?));
            }
            "--t-end" => req.t_end = Some(value(&mut it, "--t-end")?),
            "--h" => req.h = Some(value(&mut it, "--h")?),
            "--rho-inf" => req.rho_inf = Some(value(&mut it, "--rho-inf")?),
            "--adaptive" => req.adaptive = true,
            "--threads" => {
                let v = it.next().ok_or("--threads needs a value")?;
                let n = v
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| format!("--threads: `{v}` is not a whole number >= 1"))?;
                req.threads = Some(n);
            }
            "--quiet" | "-q" => req.quiet = true,
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            s => {
                if req.model.is_some() {
                    return Err(format!("more than one model file given (`{s}`)"));
                }
                req.model = Some(PathBuf::from(s));
            }
        }
    }
    Ok(req)
}

fn run(mut req: RunRequest) -> ExitCode {
    if !std::io::stderr().is_terminal() {
        req.quiet = true;
    }
    let result = match req.model.clone() {
        Some(path) => run_file(&path, &req),
        None => {
            if req.output.is_none() {
                req.output = Some(PathBuf::from(DEFAULT_OUTPUT));
            }
            run_text(DEFAULT_MODEL, "built-in default model (slider-crank)", &req)
        }
    };
    match result {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("saltus: error: {e}");
            ExitCode::FAILURE
        }
    }
}
