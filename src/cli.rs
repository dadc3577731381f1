//! The `saltus` command-line program as a library function, [`main`]: run a model file (or
//! the built-in default model) with the NSGA integrator and write HDF5 results; recover
//! contact forces from a results file; plot time histories; write the ParaView sidecar; list
//! the registered element types.
//!
//! A crate that registers its own element types gets the whole command line, its elements
//! included, with a two-line `main` (see `examples/plugin-element/src/main.rs`):
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     // my_plugin::link(); // make the plugin's registrations part of the binary
//!     saltus::cli::main()
//! }
//! ```
//!
//! Parsing is `clap`'s (subcommand help, `--version`, errors naming the option); output goes
//! through `out`, which ends quietly when the reader of a pipe closes it (`saltus elements |
//! head`).

use crate::driver::{run_file, run_text, RunRequest, DEFAULT_MODEL, DEFAULT_OUTPUT};
use clap::{Args, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Nonsmooth flexible multibody dynamics (NSGA time stepping).
#[derive(Parser, Debug)]
#[command(name = "saltus", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a model file (TOML or JSON) and write HDF5 results. Without a model: the built-in
    /// slider–crank, written to saltus-default.h5.
    Run(RunArgs),
    /// Recover contact forces from the impulses of a finished run (every step recorded) into
    /// the file's /contact_forces group (docs/hdf5-layout.md).
    Forces(ForcesArgs),
    /// Plot time histories of a results file to PNG or SVG, e.g.
    /// `saltus plot crank.h5 nodes/position[slider].x energy/total -o crank.png`; or a
    /// sweep's results against a parameter: `saltus plot index.h5 --x simulation.h --y rebound`.
    Plot(PlotArgs),
    /// (Re)write the ParaView sidecars of a results file: RESULTS.xdmf (ParaView's XDMF
    /// Reader) and RESULTS.xdmf3 (the Xdmf3 readers); nodes, beams as polylines, contacts
    /// with normals.
    Xdmf {
        /// Results file.
        #[arg(value_name = "RESULTS.h5")]
        file: PathBuf,
    },
    /// Run a parameter study (docs/sweeps.md): every point of STUDY.toml as a run of its own,
    /// in parallel processes on this machine (--local) or as a Slurm job array (--slurm);
    /// --collect tabulates finished runs. Finished runs are skipped when run again.
    Sweep(SweepArgs),
    /// Run point K of a study: what each process of a sweep and each Slurm array task runs.
    SweepRun {
        /// Study file.
        #[arg(value_name = "STUDY.toml")]
        study: PathBuf,
        /// The point (run number, from 0).
        #[arg(long, value_name = "K")]
        index: usize,
        /// Threads evaluating elements (results do not depend on it).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        threads: Option<u64>,
    },
    /// List the registered element types with their parameters (all, or TYPE).
    Elements {
        /// Only this element type.
        #[arg(value_name = "TYPE")]
        kind: Option<String>,
    },
}

/// A finite number > 0.
fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(v) => Err(format!("must be a finite number > 0, got {v}")),
        Err(_) => Err(format!("`{s}` is not a number")),
    }
}

/// A whole number ≥ 1.
fn at_least_one(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("must be a whole number ≥ 1, got `{s}`")),
    }
}

/// An image size `W,H` in pixels, each in 16 ..= 10 000.
fn image_size(s: &str) -> Result<(u32, u32), String> {
    let parse = |v: &str| match v.trim().parse::<u32>() {
        Ok(n) if (16..=10_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{s}`: width and height must be whole pixels in 16 ..= 10000"
        )),
    };
    let (w, h) = s
        .split_once(',')
        .ok_or_else(|| format!("`{s}`: expected W,H, e.g. 1000,600"))?;
    Ok((parse(w)?, parse(h)?))
}

/// A number in [0, 1].
fn unit_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!("must be in [0, 1], got {v}")),
        Err(_) => Err(format!("`{s}` is not a number")),
    }
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Model file (TOML or JSON); omitted: the built-in slider–crank.
    #[arg(value_name = "MODEL")]
    model: Option<PathBuf>,
    /// HDF5 results file (default: the model's [simulation] output, next to the model file,
    /// else MODEL.h5). An existing file that is not HDF5, or the model itself, is refused.
    #[arg(short, long, value_name = "OUT.h5")]
    output: Option<PathBuf>,
    /// Final time [s] (overrides [simulation] t_end).
    #[arg(long, value_name = "T", value_parser = positive, allow_negative_numbers = true)]
    t_end: Option<f64>,
    /// Step size [s] (overrides [simulation] h).
    #[arg(long, value_name = "H", value_parser = positive, allow_negative_numbers = true)]
    h: Option<f64>,
    /// Spectral radius at infinity in [0, 1] (overrides [simulation] rho_inf).
    #[arg(long, value_name = "R", value_parser = unit_interval, allow_negative_numbers = true)]
    rho_inf: Option<f64>,
    /// Retry a non-converged step as two half steps.
    #[arg(long)]
    adaptive: bool,
    /// Threads evaluating elements where that is faster than one, measured as the run goes
    /// (default: RAYON_NUM_THREADS, else all cores); results are bit-identical for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    threads: Option<u64>,
    /// Report where the steps' time went [ms]: contact detection; per stage its total,
    /// assemblies, factorizations, contact linearizations and sweeps; the rest outside the
    /// stages (predictor, rebuilds, impact bookkeeping, commits, output, progress bar).
    #[arg(long)]
    timings: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("mode").required(true).args(["local", "slurm", "collect"]))]
struct SweepArgs {
    /// Study file (TOML): base model, parameters, reductions.
    #[arg(value_name = "STUDY.toml")]
    study: PathBuf,
    /// Run on this machine, in parallel processes.
    #[arg(long)]
    local: bool,
    /// Submit a Slurm job array (sbatch) of the unfinished runs.
    #[arg(long)]
    slurm: bool,
    /// Build the index (index.csv, index.h5) from the runs' files, e.g. after a Slurm array.
    #[arg(long)]
    collect: bool,
    /// Processes at once with --local (default: the available cores).
    #[arg(short, long, value_name = "N", value_parser = at_least_one, requires = "local")]
    jobs: Option<u64>,
    /// Run a study larger than its `max_runs` (default limit 1000).
    #[arg(long)]
    yes: bool,
    /// Slurm partition.
    #[arg(long, value_name = "P", requires = "slurm")]
    partition: Option<String>,
    /// Slurm time limit per run (Slurm's format, e.g. 30:00 or 1-00:00:00).
    #[arg(long, value_name = "T", requires = "slurm")]
    time: Option<String>,
    /// At most K array tasks at once.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..), requires = "slurm")]
    max_parallel: Option<u64>,
    /// Cores per Slurm task: the run's element threads (default 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), requires = "slurm")]
    cpus_per_task: Option<u64>,
    /// Slurm account to charge.
    #[arg(long, value_name = "A", requires = "slurm")]
    account: Option<String>,
    /// Slurm quality of service.
    #[arg(long, value_name = "Q", requires = "slurm")]
    qos: Option<String>,
    /// Memory per Slurm task (Slurm's format, e.g. 4G).
    #[arg(long, value_name = "M", requires = "slurm")]
    mem: Option<String>,
    /// Wait for the job array to end, then build the index.
    #[arg(long, requires = "slurm")]
    wait: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct PlotArgs {
    /// Results file.
    #[arg(value_name = "RESULTS.h5")]
    file: PathBuf,
    /// Datasets to plot against time: a path with a first axis of records, optionally one
    /// selection per further axis (index, `:`, node or stage name, component x/y/z or w)
    /// and a component suffix: `energy/total`, `nodes/position[slider].x`,
    /// `nodes/rotation[2, w]`, `elements/hinge/reaction[0]`, `solver/iterations[position]`.
    #[arg(
        value_name = "DATASET",
        required_unless_present = "x",
        conflicts_with = "x"
    )]
    datasets: Vec<String>,
    /// Plot a sweep's index.h5 instead: the abscissa, a parameter path or reduction name
    /// (one curve per combination of the other parameters), e.g. `--x simulation.h`.
    #[arg(long, value_name = "COLUMN", requires = "y")]
    x: Option<String>,
    /// With --x: the ordinate, a reduction name (repeatable), e.g. `--y rebound`.
    #[arg(long, value_name = "COLUMN", requires = "x")]
    y: Vec<String>,
    /// Logarithmic axes: x, y or xy.
    #[arg(long, value_name = "AXES", value_parser = ["x", "y", "xy"])]
    log: Option<String>,
    /// Image file, .png or .svg (default: RESULTS.png).
    #[arg(short, long, value_name = "FIG.png|FIG.svg")]
    output: Option<PathBuf>,
    /// Figure title (default: the results file's name).
    #[arg(long)]
    title: Option<String>,
    /// Image width and height in pixels.
    #[arg(long, value_name = "W,H", default_value = "1000,600", value_parser = image_size)]
    size: (u32, u32),
}

#[derive(Args, Debug)]
struct ForcesArgs {
    /// Results file of a run that recorded every step.
    #[arg(value_name = "RESULTS.h5")]
    file: PathBuf,
    /// Contact stiffness K [N/m^n] for every contact (instead of the materials).
    #[arg(long, value_name = "K", value_parser = positive, allow_negative_numbers = true, conflicts_with_all = ["young", "poisson"])]
    stiffness: Option<f64>,
    /// Young's modulus of body a [Pa]: Hertz stiffness from each contact's radius.
    #[arg(
        long,
        value_name = "E",
        requires = "poisson",
        allow_negative_numbers = true
    )]
    young: Option<f64>,
    /// Poisson's ratio of body a.
    #[arg(
        long,
        value_name = "NU",
        requires = "young",
        allow_negative_numbers = true
    )]
    poisson: Option<f64>,
    /// Young's modulus of body b [Pa] (default: body a's).
    #[arg(
        long,
        value_name = "E",
        requires = "young",
        allow_negative_numbers = true
    )]
    young_b: Option<f64>,
    /// Poisson's ratio of body b (default: body a's).
    #[arg(
        long,
        value_name = "NU",
        requires = "young",
        allow_negative_numbers = true
    )]
    poisson_b: Option<f64>,
    /// Damping law: hertz, hunt_crossley, lankarani_nikravesh, flores, zhang, exact.
    #[arg(long, value_name = "LAW", default_value = "flores", value_parser = crate::io::forces::parse_damping)]
    law: crate::core::contact_force::Damping,
    /// Pulse reconstruction: cubic (the thesis' profile) or dynamic (compliant impact).
    #[arg(long, value_name = "M", default_value = "cubic", value_parser = crate::io::forces::parse_method)]
    method: crate::core::contact_force::Method,
    /// Law exponent n.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1.5,
        allow_negative_numbers = true
    )]
    exponent: f64,
    /// Only this contact (element name or id; repeatable).
    #[arg(long = "contact", value_name = "NAME|ID")]
    contacts: Vec<String>,
    /// Samples per impact pulse (>= 2).
    #[arg(long, value_name = "N", default_value_t = 101, value_parser = clap::value_parser!(u64).range(2..))]
    samples: u64,
    /// Relative noise threshold of impact detection.
    #[arg(
        long,
        value_name = "EPS",
        default_value_t = 1e-6,
        allow_negative_numbers = true
    )]
    threshold: f64,
}

/// A command succeeded: print its report, exit 0.
fn done(report: &dyn std::fmt::Display) -> ExitCode {
    out(&report.to_string());
    ExitCode::SUCCESS
}

/// A command failed: `saltus: error: …` on standard error, exit 1.
fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("saltus: error: {e}");
    ExitCode::FAILURE
}

/// Print to standard output; a reader that closed the pipe ends the program quietly.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("saltus: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// Run the `saltus` command line on the process' arguments and return its exit code: 0 on
/// success, 1 when the command failed, 2 on a usage error. Links Saltus' own element library;
/// a plugin crate calls its own `link()` first so that its element types are registered too.
pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// [`main`] on the given arguments (the first is the program name).
pub fn main_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    crate::link();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to standard output with success; usage errors exit 2.
            let code = e.exit_code();
            let text = e.render().to_string();
            if e.use_stderr() {
                eprint!("{text}");
            } else {
                out(text.trim_end());
            }
            return ExitCode::from(code as u8);
        }
    };
    match cli.command {
        Command::Run(args) => run(args),
        Command::Forces(args) => forces(args),
        Command::Plot(args) => plot(args),
        Command::Xdmf { file } => xdmf(&file),
        Command::Sweep(args) => sweep(args),
        Command::SweepRun {
            study,
            index,
            threads,
        } => match crate::sweep::sweep_run(&study, index, threads.map(|n| n as usize)) {
            Ok(report) => done(&report),
            Err(e) => fail(&e),
        },
        Command::Elements { kind } => match crate::driver::elements_listing(kind.as_deref()) {
            Ok(text) => {
                out(text.trim_end());
                ExitCode::SUCCESS
            }
            Err(msg) => {
                eprintln!("saltus: error: {msg}");
                ExitCode::from(2)
            }
        },
    }
}

fn run(args: RunArgs) -> ExitCode {
    let mut req = RunRequest {
        model: args.model,
        output: args.output,
        t_end: args.t_end,
        h: args.h,
        rho_inf: args.rho_inf,
        adaptive: args.adaptive,
        threads: args.threads.map(|n| n as usize),
        quiet: args.quiet || !std::io::stderr().is_terminal(),
        timings: args.timings,
    };
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
        Ok(report) => done(&report),
        Err(e) => fail(&e),
    }
}

fn sweep(args: SweepArgs) -> ExitCode {
    use crate::sweep::{collect, sweep_local, sweep_slurm, SlurmOptions};
    if args.local {
        let jobs = args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |n| n as usize,
        );
        let quiet = args.quiet || !std::io::stderr().is_terminal();
        match sweep_local(&args.study, jobs, args.yes, quiet) {
            Ok(r) if r.index.counts().1 == 0 && r.index.reduction_errors().is_empty() => done(&r),
            // Some runs failed or lack reductions: the report (and the index) says which.
            Ok(report) => {
                out(&report.to_string());
                ExitCode::FAILURE
            }
            // Ctrl-C: the shell's code for SIGINT.
            Err(e @ crate::sweep::SweepError::Interrupted(_)) => {
                eprintln!("saltus: {e}");
                ExitCode::from(130)
            }
            Err(e) => fail(&e),
        }
    } else if args.slurm {
        let o = SlurmOptions {
            partition: args.partition,
            time: args.time,
            max_parallel: args.max_parallel.map(|k| k as usize),
            cpus_per_task: args.cpus_per_task.map(|n| n as usize),
            account: args.account,
            qos: args.qos,
            mem: args.mem,
            wait: args.wait,
            yes: args.yes,
        };
        match sweep_slurm(&args.study, &o) {
            Ok(report) => done(&report),
            Err(e) => fail(&e),
        }
    } else {
        match collect(&args.study) {
            Ok(report) => done(&report),
            Err(e) => fail(&e),
        }
    }
}

fn forces(args: ForcesArgs) -> ExitCode {
    use crate::core::contact_force::Material;
    use crate::io::forces::{recover_file, RecoveryOptions, Stiffness};
    let stiffness = match (args.stiffness, args.young, args.poisson) {
        (Some(k), _, _) => Stiffness::Given(k),
        (None, Some(young), Some(poisson)) => Stiffness::Hertz {
            a: Material { young, poisson },
            b: Material {
                young: args.young_b.unwrap_or(young),
                poisson: args.poisson_b.unwrap_or(poisson),
            },
        },
        _ => {
            eprintln!(
                "saltus: error: forces needs the contact stiffness: --stiffness K, or --young E \
                 --poisson NU\n\nFor more information, try 'saltus forces --help'."
            );
            return ExitCode::from(2);
        }
    };
    if !args.file.exists() {
        return fail(&format!("{}: no such file", args.file.display()));
    }
    let opts = RecoveryOptions {
        damping: args.law,
        method: args.method,
        stiffness,
        exponent: args.exponent,
        threshold: args.threshold,
        samples: args.samples as usize,
        contacts: None,
    };
    match recover_file(&args.file, &opts, &args.contacts) {
        Ok(summary) => done(&summary),
        Err(e) => fail(&e),
    }
}

fn plot(args: PlotArgs) -> ExitCode {
    let log = args.log.unwrap_or_default();
    if let Some(x) = args.x {
        let req = crate::plot::IndexPlotRequest {
            file: args.file,
            x,
            y: args.y,
            output: args.output,
            title: args.title,
            size: args.size,
            log_x: log.contains('x'),
            log_y: log.contains('y'),
        };
        return match crate::plot::plot_index(&req) {
            Ok(report) => done(&report),
            Err(e) => fail(&e),
        };
    }
    if !log.is_empty() {
        return fail(&"--log applies to sweep plots (--x, --y)");
    }
    let req = crate::plot::PlotRequest {
        file: args.file,
        selectors: args.datasets,
        output: args.output,
        title: args.title,
        size: args.size,
    };
    match crate::plot::plot(&req) {
        Ok(report) => done(&report),
        Err(e) => fail(&e),
    }
}

fn xdmf(file: &std::path::Path) -> ExitCode {
    if !file.exists() {
        return fail(&format!("{}: no such file", file.display()));
    }
    match crate::io::write_xdmf(file) {
        Ok(Some(path)) => done(&format!(
            "{} (XDMF Reader) and {} (Xdmf3 readers)",
            path.display(),
            crate::io::xdmf3_path(file).display()
        )),
        Ok(None) => fail(&format!(
            "{}: no nodes or no records to show",
            file.display()
        )),
        Err(e) => fail(&e),
    }
}
