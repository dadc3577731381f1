//! `saltus sweep`: run every point of a parameter study ([`saltus_io::study`]) in parallel
//! processes on this machine, or as a Slurm job array, and tabulate the runs in an index.
//!
//! Every run — local or on a cluster node — is the same command, `saltus sweep-run STUDY
//! --index K`: it writes the point's model file `run-K.toml`, runs it to `run-K.h5` and records
//! its status in `run-K.json`. So both modes give the same files, and the same results for the
//! same point, dataset for dataset, bit for bit (the files' bytes may differ: block writes follow
//! the wall clock). A run whose status is `ok`, whose model file still holds the point's
//! model and whose results file is intact is skipped when the study is run again
//! ([`Study::finished`]).

use crate::driver::{check_text, progress_bar, run_file, RunRequest};
use saltus_io::study::index::{self, Index};
use saltus_io::study::{RunState, RunStatus, Study};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Environment variable through which a local sweep tells its runs its process id: a run
/// started so ends when the sweep ends (killed or interrupted), instead of running on
/// unsupervised.
pub const PARENT_ENV: &str = "SALTUS_SWEEP_PARENT";

/// Error points listed in full before "… and N more".
const SHOWN_ERRORS: usize = 10;

/// Load a study and check it before anything runs: its size against `max_runs` (unless
/// `yes`), and every point's model (parsed, built and validated as `saltus run` would).
pub fn prepare(path: &Path, yes: bool, quiet: bool) -> Result<Study, String> {
    let study = Study::load(path).map_err(|e| e.to_string())?;
    if study.len() > study.max_runs && !yes {
        return Err(format!(
            "{}: {} runs, more than the limit of {} (`max_runs` in the study file); give --yes \
             to run them all",
            path.display(),
            study.len(),
            study.max_runs
        ));
    }
    let mut errors = Vec::new();
    // Building a million models takes a while: show it (large studies only).
    let bar = (!quiet && study.len() >= 200).then(|| {
        progress_bar(
            study.len() as u64,
            "checking points [{bar:40}] {pos}/{len}  eta {eta}",
        )
    });
    for k in 0..study.len() {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        let checked = study
            .model_text(k)
            .map_err(|e| e.to_string())
            .and_then(|text| check_text(&text, &study.run_name(k)));
        if let Err(e) = checked {
            errors.push(format!("  point {k} ({}): {e}", study.describe(k)));
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if errors.is_empty() {
        return Ok(study);
    }
    let n = errors.len();
    let mut msg = format!(
        "{}: {n} of {} points are invalid models; nothing was run:\n",
        path.display(),
        study.len()
    );
    for e in errors.iter().take(SHOWN_ERRORS) {
        let _ = writeln!(msg, "{e}");
    }
    if n > SHOWN_ERRORS {
        let _ = writeln!(msg, "  … and {} more", n - SHOWN_ERRORS);
    }
    Err(msg.trim_end().to_string())
}

fn create_folder(study: &Study) -> Result<(), String> {
    study.claim_folder().map_err(|e| e.to_string())
}

/// What a sweep did.
#[derive(Clone, Debug)]
pub struct SweepReport {
    /// Runs of the study.
    pub runs: usize,
    /// Runs skipped because they had finished before.
    pub skipped: usize,
    /// Runs started now.
    pub started: usize,
    /// The index after the sweep.
    pub index: Index,
    /// `index.csv` and `index.h5`.
    pub files: (PathBuf, PathBuf),
    /// Wall time of the sweep \[s\].
    pub wall: f64,
}

impl std::fmt::Display for SweepReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (ok, failed, other) = self.index.counts();
        write!(
            f,
            "saltus sweep: {} runs: {} ran now, {} had finished before; {ok} ok, {failed} \
             failed{}; {:.2} s; index in {} and {}",
            self.runs,
            self.started,
            self.skipped,
            if other > 0 {
                format!(", {other} without results")
            } else {
                String::new()
            },
            self.wall,
            self.files.0.display(),
            self.files.1.display()
        )?;
        for r in self
            .index
            .rows
            .iter()
            .filter(|r| r.status == index::RowStatus::Failed)
            .take(SHOWN_ERRORS)
        {
            write!(f, "\n  run {} failed: {}", r.run, r.error)?;
        }
        let reductions = self.index.reduction_errors();
        if let Some((run, e)) = reductions.first() {
            write!(
                f,
                "\n  reductions missing in {} run{} (run {run}: {e})",
                reductions.len(),
                if reductions.len() == 1 { "" } else { "s" }
            )?;
        }
        Ok(())
    }
}

/// Run the study's unfinished points on this machine, `jobs` processes at a time (each a
/// `saltus sweep-run` of the running program), then write the index. A failed run does not
/// stop the others.
pub fn sweep_local(
    path: &Path,
    jobs: usize,
    yes: bool,
    quiet: bool,
) -> Result<SweepReport, SweepError> {
    let start = Instant::now();
    let study = prepare(path, yes, quiet)?;
    create_folder(&study)?;
    // One sweep of a study at a time: a second would start the same runs on the same files.
    let lock_path = study.folder.join(".sweep.lock");
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("{}: cannot create: {e}", lock_path.display()))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(format!(
                "{}: another `saltus sweep` of this study is running (it holds {}); wait for it \
                 to end",
                path.display(),
                lock_path.display()
            )
            .into())
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(format!("{}: cannot lock: {e}", lock_path.display()).into())
        }
    }
    let todo: Vec<usize> = (0..study.len()).filter(|&k| !study.finished(k)).collect();
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the running program to start runs: {e}"))?;
    let study_path = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let jobs = jobs.max(1).min(todo.len().max(1));
    let bar = (!quiet && !todo.is_empty()).then(|| {
        progress_bar(
            todo.len() as u64,
            "[{bar:40}] {pos}/{len} runs  elapsed {elapsed}  eta {eta}  {msg}",
        )
    });
    // Ctrl-C: no new runs; the running ones are stopped (left `incomplete`), the index
    // written. (A second handler in one process is refused; the first one serves.)
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    INTERRUPTED.store(false, Ordering::SeqCst);
    let runner = Runner {
        study: &study,
        exe: &exe,
        study_path: &study_path,
        bar: bar.as_ref(),
    };
    // Reductions are checked on the first finished run before the others start: a mistyped
    // selector would otherwise show only after the whole study.
    let probe = (!study.reductions.is_empty())
        .then(|| (0..study.len()).find(|&k| study.finished(k)))
        .flatten();
    let rest = match (study.reductions.is_empty(), probe, todo.first()) {
        (false, None, Some(&first)) => {
            runner.run(&[first], 1)?;
            if study.finished(first) {
                check_reductions(&study, first, path)?;
            }
            &todo[1..]
        }
        (false, Some(k), _) => {
            check_reductions(&study, k, path)?;
            &todo[..]
        }
        _ => &todo[..],
    };
    if !INTERRUPTED.load(Ordering::SeqCst) {
        runner.run(rest, jobs)?;
    }
    if let Some(bar) = &bar {
        bar.abandon();
    }
    let index = index::collect(&study);
    let files = index::write(&index, &study)?;
    if INTERRUPTED.load(Ordering::SeqCst) {
        let (ok, _, other) = index.counts();
        return Err(SweepError::Interrupted(format!(
            "{ok} of {} runs finished, {other} without results (index in {}); the same \
             command resumes the study",
            study.len(),
            files.0.display()
        )));
    }
    Ok(SweepReport {
        runs: study.len(),
        skipped: study.len() - todo.len(),
        started: todo.len(),
        index,
        files,
        wall: start.elapsed().as_secs_f64(),
    })
}

/// Why a local sweep did not complete.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// Stopped by Ctrl-C: the index was written; the same command resumes the study.
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// The study could not be run (invalid, unwritable folder, a program that cannot start).
    #[error("{0}")]
    Failed(String),
}

impl From<String> for SweepError {
    fn from(message: String) -> Self {
        SweepError::Failed(message)
    }
}

/// Set by Ctrl-C during a local sweep.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Every reduction of the study computed on run `k`'s results, or the first error, with what
/// to do.
fn check_reductions(study: &Study, k: usize, path: &Path) -> Result<(), String> {
    index::check_reductions(study, k).map_err(|e| {
        format!(
            "{}: {e}\n(checked on the results of run {k} before running the others; fix the \
             reduction and run again: finished runs are kept)",
            path.display()
        )
    })
}

/// Starts the runs of a local sweep: `saltus sweep-run` processes of the running program.
struct Runner<'a> {
    study: &'a Study,
    exe: &'a Path,
    study_path: &'a Path,
    bar: Option<&'a indicatif::ProgressBar>,
}

impl Runner<'_> {
    /// Run the points `ks`, `jobs` at a time, until done or interrupted.
    fn run(&self, ks: &[usize], jobs: usize) -> Result<(), String> {
        // Parallel processes share the cores: one element thread each (results do not depend
        // on it).
        let threads = (jobs > 1).then_some(1);
        let next = AtomicUsize::new(0);
        let failed = AtomicUsize::new(0);
        let spawn_error = Mutex::new(None::<String>);
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(|| loop {
                    if INTERRUPTED.load(Ordering::SeqCst) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&k) = ks.get(i) else { break };
                    match self.one(k, threads) {
                        Ok(true) => {}
                        Ok(false) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            *spawn_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                            next.store(ks.len(), Ordering::Relaxed);
                        }
                    }
                    if let Some(bar) = self.bar {
                        bar.inc(1);
                        let f = failed.load(Ordering::Relaxed);
                        if f > 0 {
                            bar.set_message(format!("{f} failed"));
                        }
                    }
                });
            }
        });
        match spawn_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Run point `k` in a child process; `Ok(true)` when it ended `ok`. A run that died
    /// before recording its end (crashed, killed from outside) is recorded as failed with what
    /// it printed; one stopped by Ctrl-C stays `running` (incomplete, resumed next time).
    fn one(&self, k: usize, threads: Option<usize>) -> Result<bool, String> {
        let mut cmd = Command::new(self.exe);
        cmd.arg("sweep-run")
            .arg(self.study_path)
            .args(["--index", &k.to_string()])
            .env(PARENT_ENV, std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(t) = threads {
            cmd.args(["--threads", &t.to_string()]);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.exe.display()))?;
        // Its error message is one paragraph: read after the end (no pipe can fill up).
        let status = loop {
            if INTERRUPTED.load(Ordering::SeqCst) {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(false);
            }
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
                Err(e) => return Err(format!("waiting for run {k}: {e}")),
            }
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            use std::io::Read;
            let _ = pipe.read_to_string(&mut stderr);
        }
        let state = self.study.status(k).map(|s| s.state);
        if state == Some(RunState::Ok) {
            return Ok(true);
        }
        if state.is_none_or(|s| s == RunState::Running) {
            let why = stderr.trim();
            let _ = RunStatus::failed(if why.is_empty() {
                format!("the run ended without a result ({status})")
            } else {
                why.trim_start_matches("saltus: error: ").to_string()
            })
            .write(&self.study.run_status(k));
        }
        Ok(false)
    }
}

/// End this process when the sweep that started it ends (Linux: the parent-death signal).
/// Started otherwise (by hand, by Slurm), a run is on its own.
fn follow_parent() {
    #[cfg(target_os = "linux")]
    if let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok())
    {
        use rustix::process::{getppid, set_parent_process_death_signal, Signal};
        if set_parent_process_death_signal(Some(Signal::KILL)).is_ok()
            && getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent)
        {
            // The sweep ended before the signal was armed.
            std::process::exit(1);
        }
    }
}

/// `saltus sweep-run STUDY --index K`: run point `K` of a study (what the local sweep and
/// each Slurm array task do). Returns the run's status line.
pub fn sweep_run(path: &Path, k: usize, threads: Option<usize>) -> Result<String, String> {
    follow_parent();
    let study = Study::load(path).map_err(|e| e.to_string())?;
    if k >= study.len() {
        return Err(format!(
            "{}: no run {k}: the study has runs 0 to {}",
            path.display(),
            study.len() - 1
        ));
    }
    create_folder(&study)?;
    let status_path = study.run_status(k);
    let fail = |error: String| {
        let _ = RunStatus::failed(error.clone()).write(&status_path);
        error
    };
    // `running` first: killed between the two writes, the run is not taken for finished.
    RunStatus::running()
        .write(&status_path)
        .map_err(|e| format!("{}: cannot write: {e}", status_path.display()))?;
    let text = study.model_text(k).map_err(|e| fail(e.to_string()))?;
    let model = study.run_model(k);
    let tmp = model.with_extension("toml.tmp");
    std::fs::write(&tmp, &text)
        .and_then(|()| std::fs::rename(&tmp, &model))
        .map_err(|e| fail(format!("{}: cannot write: {e}", model.display())))?;
    let req = RunRequest {
        threads,
        quiet: true,
        ..RunRequest::default()
    };
    let start = Instant::now();
    match run_file(&model, &req) {
        Ok(report) => {
            let s = &report.summary;
            RunStatus {
                state: RunState::Ok,
                error: None,
                steps: s.steps as u64,
                t_final: s.t,
                wall_time: start.elapsed().as_secs_f64(),
                max_iterations: s.max_iterations().iter().copied().max().unwrap_or(0) as u64,
                results_bytes: std::fs::metadata(&report.output).map(|m| m.len()).ok(),
            }
            .write(&status_path)
            .map_err(|e| format!("{}: cannot write: {e}", status_path.display()))?;
            Ok(report.to_string())
        }
        Err(e) => {
            // What the run kept up to its failure: its last record's step and time.
            let mut status = RunStatus::failed(e.to_string());
            let kept = saltus_io::series::open(&study.run_results(k))
                .ok()
                .and_then(|f| {
                    let t = saltus_io::series::read_time(&f).ok()?;
                    let step = f.dataset("step").ok()?.read_raw::<u64>().ok()?;
                    Some((*step.last()?, *t.last()?))
                });
            if let Some((steps, t)) = kept {
                status.steps = steps;
                status.t_final = t;
            }
            status.wall_time = start.elapsed().as_secs_f64();
            let _ = status.write(&status_path);
            Err(e.to_string())
        }
    }
}

/// `saltus sweep STUDY --collect`: (re)build the index from the runs' files.
pub fn collect(path: &Path) -> Result<String, String> {
    let study = Study::load(path).map_err(|e| e.to_string())?;
    if !study.folder.is_dir() {
        return Err(format!(
            "{}: no runs yet (no folder {})",
            path.display(),
            study.folder.display()
        ));
    }
    let index = index::collect(&study);
    let (csv, h5) = index::write(&index, &study)?;
    let (ok, failed, other) = index.counts();
    let queued = queued_job(&study)
        .map(|job| {
            format!(
                "\njob array {job} is still queued or running: its runs show as incomplete or \
                 missing until they end; collect again then"
            )
        })
        .unwrap_or_default();
    Ok(format!(
        "saltus sweep: {} runs: {ok} ok, {failed} failed, {other} without results; index in {} \
         and {}{queued}",
        study.len(),
        csv.display(),
        h5.display()
    ))
}

/// The study's last Slurm job array (`slurm/job` in its folder) if `squeue` still lists it.
fn queued_job(study: &Study) -> Option<String> {
    let job = std::fs::read_to_string(study.folder.join("slurm").join("job")).ok()?;
    let job = job.trim().to_string();
    Command::new("squeue")
        .args(["-h", "-o", "%i", "-j", &job])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.trim_ascii().is_empty())
        .then_some(job)
}

/// Options of `saltus sweep --slurm`.
#[derive(Clone, Debug, Default)]
pub struct SlurmOptions {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` (Slurm's format, e.g. `30:00`), per task.
    pub time: Option<String>,
    /// At most this many tasks at once (`--array=…%K`).
    pub max_parallel: Option<usize>,
    /// Cores per task (`--cpus-per-task`; the run's element threads), default 1.
    pub cpus_per_task: Option<usize>,
    /// `--account`.
    pub account: Option<String>,
    /// `--qos`.
    pub qos: Option<String>,
    /// Memory per task (`--mem`, Slurm's format, e.g. `4G`).
    pub mem: Option<String>,
    /// Wait for the job array to end (`sbatch --wait`), then collect the index.
    pub wait: bool,
    /// Run larger studies than `max_runs`.
    pub yes: bool,
}

/// Slurm's `MaxArraySize` (`scontrol show config`; its default 1001 where not readable).
fn max_array_size() -> usize {
    Command::new("scontrol")
        .args(["show", "config"])
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout).lines().find_map(|l| {
                let (key, value) = l.split_once('=')?;
                (key.trim() == "MaxArraySize").then(|| value.trim().parse().ok())?
            })
        })
        .unwrap_or(1001)
}

/// Indices as Slurm's array list, ranges compressed: `0-2,5,7-9`.
fn array_list(ks: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ks.len() {
        let mut j = i;
        while j + 1 < ks.len() && ks[j + 1] == ks[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", ks[i], ks[j])
        } else {
            ks[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A shell word in single quotes.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The batch script of a study's job array: one task per unfinished run, each `saltus
/// sweep-run STUDY --index $SLURM_ARRAY_TASK_ID`.
pub fn batch_script(
    study: &Study,
    exe: &Path,
    study_path: &Path,
    todo: &[usize],
    o: &SlurmOptions,
) -> String {
    let folder = std::path::absolute(&study.folder).unwrap_or_else(|_| study.folder.clone());
    let name = study
        .path
        .file_stem()
        .map_or("study".into(), |s| s.to_string_lossy().into_owned());
    let mut s = String::from("#!/bin/bash\n");
    let _ = writeln!(
        s,
        "# Written by `saltus sweep --slurm` for {}.",
        study_path.display()
    );
    let _ = writeln!(s, "#SBATCH --job-name=saltus-{name}");
    let mut array = array_list(todo);
    if let Some(k) = o.max_parallel {
        let _ = write!(array, "%{k}");
    }
    let _ = writeln!(s, "#SBATCH --array={array}");
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(
        s,
        "#SBATCH --cpus-per-task={}",
        o.cpus_per_task.unwrap_or(1)
    );
    let _ = writeln!(s, "#SBATCH --chdir={}", folder.display());
    let _ = writeln!(s, "#SBATCH --output={}/slurm/%A_%a.out", folder.display());
    if let Some(p) = &o.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    for (key, value) in [
        ("time", &o.time),
        ("account", &o.account),
        ("qos", &o.qos),
        ("mem", &o.mem),
    ] {
        if let Some(v) = value {
            let _ = writeln!(s, "#SBATCH --{key}={v}");
        }
    }
    let _ = writeln!(
        s,
        "exec {} sweep-run {} --index \"$SLURM_ARRAY_TASK_ID\" --threads \"${{SLURM_CPUS_PER_TASK:-1}}\"",
        quote(&exe.display().to_string()),
        quote(&study_path.display().to_string())
    );
    s
}

/// `saltus sweep STUDY --slurm`: write `sweep.sbatch` into the study's folder and submit it
/// with `sbatch`; with `wait`, block until the array ends and write the index.
pub fn sweep_slurm(path: &Path, o: &SlurmOptions) -> Result<String, String> {
    let study = prepare(path, o.yes, !std::io::stderr().is_terminal())?;
    create_folder(&study)?;
    // The array submitted last time, if Slurm still has it: its tasks would run again.
    let job_file = study.folder.join("slurm").join("job");
    if let Some(job) = queued_job(&study) {
        return Err(format!(
            "{}: job array {job} of this study is still queued or running; wait for it \
             (then --collect) or cancel it (scancel {job})",
            path.display()
        ));
    }
    let todo: Vec<usize> = (0..study.len()).filter(|&k| !study.finished(k)).collect();
    if todo.is_empty() {
        return collect(path).map(|s| format!("every run had finished; {s}"));
    }
    // Slurm refuses array indices at or above its MaxArraySize (default 1001).
    let limit = max_array_size();
    if let Some(&last) = todo.last().filter(|&&k| k >= limit) {
        return Err(format!(
            "{}: run {last} is beyond the cluster's MaxArraySize ({limit}: array indices \
             0 to {}); ask for a larger MaxArraySize, or split the study (e.g. by one \
             parameter's values)",
            path.display(),
            limit - 1
        ));
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the running program for the tasks: {e}"))?;
    let study_path = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::create_dir_all(study.folder.join("slurm"))
        .map_err(|e| format!("{}: {e}", study.folder.join("slurm").display()))?;
    let script_path = study.folder.join("sweep.sbatch");
    std::fs::write(
        &script_path,
        batch_script(&study, &exe, &study_path, &todo, o),
    )
    .map_err(|e| format!("{}: cannot write: {e}", script_path.display()))?;
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable");
    if o.wait {
        cmd.arg("--wait");
    }
    let mut child = cmd
        .arg(&script_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                "sbatch not found: --slurm needs Slurm's client commands on PATH (or use --local)"
                    .to_string()
            } else {
                format!("cannot run sbatch: {e}")
            }
        })?;
    // `--parsable` prints `JOB` or `JOB;CLUSTER` at submission (before `--wait` waits):
    // record it at once, so that a second submission sees the array while it runs.
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        use std::io::BufRead;
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
    }
    let job = line
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    if !job.is_empty() {
        let _ = std::fs::write(&job_file, format!("{job}\n"));
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("sbatch: {e}"))?;
    // With --wait, sbatch's exit status is the array's (non-zero when a task failed): the
    // index says which.
    if !o.wait && !out.status.success() || job.is_empty() {
        return Err(format!(
            "sbatch refused {}: {}",
            script_path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let submitted = format!(
        "submitted job array {job} ({} task{} of {} runs; script {})",
        todo.len(),
        if todo.len() == 1 { "" } else { "s" },
        study.len(),
        script_path.display()
    );
    if o.wait {
        Ok(format!("{submitted}; it ended\n{}", collect(path)?))
    } else {
        Ok(format!(
            "{submitted}\nwhen it ends: saltus sweep {} --collect",
            path.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_lists_compress_ranges() {
        assert_eq!(array_list(&[0, 1, 2, 5, 7, 8, 9]), "0-2,5,7-9");
        assert_eq!(array_list(&[3]), "3");
        assert_eq!(array_list(&[]), "");
    }

    #[test]
    fn the_batch_script_carries_every_option() {
        let dir = std::env::temp_dir().join(format!("saltus-sbatch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("m.toml"),
            "[[nodes]]\nname = \"a\"\nposition = [0, 0, 0]\n",
        )
        .unwrap();
        let path = dir.join("s.toml");
        std::fs::write(
            &path,
            "model = \"m.toml\"\n[[parameter]]\npath = \"simulation.h\"\nvalues = [1e-3, 2e-3]\n",
        )
        .unwrap();
        let study = Study::load(&path).unwrap();
        let o = SlurmOptions {
            partition: Some("short".into()),
            time: Some("30:00".into()),
            max_parallel: Some(4),
            cpus_per_task: Some(2),
            account: Some("proj".into()),
            qos: Some("low".into()),
            mem: Some("4G".into()),
            ..SlurmOptions::default()
        };
        let s = batch_script(&study, Path::new("/opt/it's/saltus"), &path, &[0, 1], &o);
        for line in [
            "#SBATCH --array=0-1%4\n",
            "#SBATCH --cpus-per-task=2\n",
            "#SBATCH --partition=short\n",
            "#SBATCH --time=30:00\n",
            "#SBATCH --account=proj\n",
            "#SBATCH --qos=low\n",
            "#SBATCH --mem=4G\n",
            "exec '/opt/it'\\''s/saltus' sweep-run ",
            "--index \"$SLURM_ARRAY_TASK_ID\" --threads \"${SLURM_CPUS_PER_TASK:-1}\"",
        ] {
            assert!(s.contains(line), "{line} in\n{s}");
        }
    }

    #[test]
    fn shell_words_survive_quotes() {
        assert_eq!(quote("/a b/it's"), r"'/a b/it'\''s'");
    }
}
