//! Hostile-input corpus: every model file in `tests/bad_models/` must be refused by
//! `saltus run` with an error that names the file and the offending item, without a panic, a
//! crash or a hang.
//!
//! Each TOML file states on its first line the text the error must contain,
//! `# expect: bob_body, mass` (comma-separated needles); a JSON file (which has no comments)
//! states it in the sidecar `NAME.json.expect`, `expect: bob_body, mass`. The needles are
//! looked for in the standard error with the file's path removed (a file named
//! `json_duplicate_key.json` must not satisfy the needle `duplicate` by its name alone).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a refusal may take (a hang is killed and reported).
const TIMEOUT: Duration = Duration::from_secs(20);

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_models")
}

/// The model files of the corpus (`.toml`, `.json`), sorted.
fn corpus() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/bad_models exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml" || e == "json"))
        .collect();
    files.sort();
    files
}

/// The expected needles of a corpus file (its `# expect:` line or its `.expect` sidecar).
fn needles(path: &Path) -> Result<Vec<String>, String> {
    let line = if path.extension().is_some_and(|e| e == "json") {
        let sidecar = PathBuf::from(format!("{}.expect", path.display()));
        std::fs::read_to_string(&sidecar)
            .map_err(|e| format!("{}: {e}", sidecar.display()))?
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    } else {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
        String::from_utf8_lossy(first).into_owned()
    };
    let Some((_, list)) = line.split_once("expect:") else {
        return Err(format!(
            "{}: no `expect:` line (first line, or the .expect sidecar of a JSON file)",
            path.display()
        ));
    };
    let needles: Vec<String> = list
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if needles.is_empty() {
        return Err(format!("{}: `expect:` lists no needle", path.display()));
    }
    Ok(needles)
}

/// Exit status (`None`: killed by a signal) and standard error of `saltus run FILE -o OUT
/// --quiet`, or an error on a hang.
fn run(file: &Path, out: &Path) -> Result<(Option<i32>, String), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_saltus"))
        .arg("run")
        .arg(file)
        .arg("-o")
        .arg(out)
        .arg("--quiet")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start saltus: {e}"))?;
    // Read standard error on a thread, so that a long message cannot block the child.
    let mut pipe = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = pipe.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("hang: killed after {} s", TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("wait failed: {e}")),
        }
    };
    let stderr = reader.join().unwrap_or_default();
    Ok((status.code(), stderr))
}

/// What is wrong with the refusal of `file` (empty: refused as it must be).
fn check(file: &Path, out: &Path) -> Vec<String> {
    let needles = match needles(file) {
        Ok(n) => n,
        Err(e) => return vec![e],
    };
    let _ = std::fs::remove_file(out);
    let (code, stderr) = match run(file, out) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let mut problems = Vec::new();
    match code {
        Some(0) => problems.push("accepted (exit status 0)".to_string()),
        Some(101) => problems.push("exit status 101 (a panic)".to_string()),
        None => problems.push("killed by a signal (abort, stack overflow, out of memory?)".into()),
        Some(_) => {}
    }
    if stderr.contains("panicked") {
        problems.push("`panicked` in the standard error".into());
    }
    let shown = file.display().to_string();
    if !stderr.contains(&shown) {
        problems.push(format!("the error does not name the file `{shown}`"));
    }
    let without_path = stderr.replace(&shown, "");
    for n in &needles {
        if !without_path.contains(n.as_str()) {
            problems.push(format!("the error does not contain `{n}`"));
        }
    }
    if !problems.is_empty() {
        problems.push(format!("standard error: {}", stderr.trim()));
    }
    problems
}

#[test]
fn validate_bad_models_refused() {
    let files = corpus();
    let dir = std::env::temp_dir().join(format!("saltus-bad-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Two workers: the corpus takes a few seconds, and the machine may be shared.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for w in 0..2 {
            let (files, next, failures, dir) = (&files, &next, &failures, &dir);
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let out = dir.join(format!("out{w}.h5"));
                let problems = check(file, &out);
                if !problems.is_empty() {
                    let name = file.file_name().unwrap().to_string_lossy().into_owned();
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{name}:\n    {}", problems.join("\n    ")));
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} hostile model files not refused properly:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn validate_bad_models_corpus_covers_the_input_space() {
    let files = corpus();
    assert!(files.len() >= 100, "only {} corpus files", files.len());
    let json = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .count();
    assert!(json >= 10, "only {json} JSON corpus files");
    for f in &files {
        needles(f).unwrap();
    }
    // Every registered element type and composite key is exercised by some file.
    let listing = Command::new(env!("CARGO_BIN_EXE_saltus"))
        .arg("elements")
        .output()
        .unwrap();
    assert!(listing.status.success());
    let types: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(types.len() >= 15, "element types: {types:?}");
    let texts: Vec<String> = files
        .iter()
        .map(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned())
        .collect();
    for t in types
        .iter()
        .map(|t| format!("type = \"{t}\""))
        .chain(["[[beam_lines]]", "[[contact_groups]]", "[[ball_bearings]]"].map(String::from))
    {
        assert!(
            texts.iter().any(|text| text.contains(&t)),
            "no corpus file has `{t}`"
        );
    }
}
