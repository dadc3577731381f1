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
