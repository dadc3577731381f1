//! A structured mutation fuzzer of the model-file readers (`docs/fuzzing.md`).
//!
//! Seeds are model files (TOML and JSON, the TOML ones also converted to JSON). Each execution
//! takes an input from the pool, applies one to four mutations that know the shape of a model
//! file (numbers replaced by extremes, values swapped between keys, lines deleted, duplicated
//! or spliced from another file, keys renamed to other known keys, huge arrays, deep nesting,
//! unicode, byte flips), and runs [`target`]: what `saltus run` does with a model file before
//! the first step — parse, build every node and element through the registry, check the
//! simulation options and prepare the integrator. A panic is caught and the input saved; an
//! execution over [`Config::slow`] is saved as slow; one over [`Config::hang`] is saved by a
//! watchdog, which then ends the process.
//!
//! Without coverage instrumentation, the pool grows by *outcome novelty*: a mutant joins it
//! when it is accepted, or when its error has a shape (message with the numbers and quoted
//! names removed) not seen before — so mutants that get further into validation are mutated
//! further.

use saltus::driver::{nsga_options, RunRequest};
use saltus::io::{parse_str, Format};
use saltus::solvers::Nsga;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What [`target`] made of an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Parsed, built and ready to step.
    Accepted,
    /// Refused with this error message.
    Refused(String),
}

/// Largest model (nodes) whose integrator [`target`] prepares.
pub const MAX_PREPARED_NODES: usize = 2_000;

/// Parse and build a model file as `saltus run` does before stepping: the model file is
/// parsed and every node and element built through the registry
/// ([`saltus::io::parse_str`]), then the integrator is prepared ([`Nsga::new`]: options and
/// model validated, initial accelerations solved), on one thread, for models of up to
/// [`MAX_PREPARED_NODES`] nodes.
pub fn target(text: &str, format: Format) -> Outcome {
    let mut file = match parse_str(text, format, "fuzz.model") {
        Ok(f) => f,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    // Preparing the integrator is linear algebra in proportion to the model: a mutant that
    // is a legitimately large model (a 100 000-element beam line) would be reported as slow
    // for its size, not for a defect. Large models are parsed and built, not prepared.
    if file.model.nodes().len() > MAX_PREPARED_NODES {
        return Outcome::Accepted;
    }
    let request = RunRequest {
        threads: Some(1),
        quiet: true,
        ..RunRequest::default()
    };
    let options = nsga_options(&file.simulation, &request);
    match Nsga::new(&mut file.model, options) {
        Ok(_) => Outcome::Accepted,
        Err(e) => Outcome::Refused(e.to_string()),
    }
}

/// A small fast generator (SplitMix64): reproducible runs from a seed, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// A random element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One input: the file's bytes and its syntax.
#[derive(Clone, Debug)]
pub struct Input {
    /// The bytes (not necessarily UTF-8 after mutation).
    pub bytes: Vec<u8>,
    /// TOML or JSON.
    pub format: Format,
}

/// Numbers a mutation puts in place of a number: zero, signs, the ends of the float and
/// integer ranges, subnormals, non-finite spellings of both syntaxes.
const EXTREMES: &[&str] = &[
    "0",
    "0.0",
    "-0.0",
    "-1",
    "1",
    "2",
    "3",
    "0.5",
    "1.5",
    "-1e-3",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "1e309",
    "1e-320",
    "5e-324",
    "1e-300",
    "1e300",
    "1e154",
    "1e-154",
    "nan",
    "inf",
    "-inf",
    "+inf",
    "NaN",
    "Infinity",
    "4294967296",
    "2147483648",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1000000000",
    "100000",
    "99999",
    "1e6",
    "1.0000001",
    "0.9999999",
];

/// Whole values a mutation puts in place of a value.
const VALUES: &[&str] = &[
    "[]",
    "{}",
    "\"\"",
    "true",
    "false",
    "[0.0, 0.0, 0.0]",
    "[1.0, 0.0, 0.0, 0.0]",
    "[1.0, 1.0, 1.0, 1.0]",
    "[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]",
    "[1.0, 1.0, 3.0]",
    "[\"ground\"]",
    "[\"ground\", \"ground\"]",
    "\"ground\"",
    "null",
    "1979-05-27T07:32:00Z",
];

/// Short strings inserted anywhere: syntax characters, unicode, control characters.
const SNIPPETS: &[&str] = &[
    "[", "]", "{", "}", "\"", "'", "=", ",", ":", "\n", "#", ".", "-", "e", "\\", "\0", "é",
    "\u{202e}", "\u{feff}", "𝔘", "\u{7f}", "\r\n", "[[", "]]", "\"\"\"", "'''", " = ", "\t",
];

/// The identifier-like words of the seeds (keys, element types, node names): renaming a key
/// or a name to another one exercises unknown keys, wrong types and duplicates.
fn words(seeds: &[Input]) -> Vec<String> {
    let mut set = HashSet::new();
    for s in seeds {
        let text = String::from_utf8_lossy(&s.bytes);
        for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if w.len() >= 2 && w.len() <= 40 && w.starts_with(|c: char| c.is_ascii_alphabetic()) {
                set.insert(w.to_string());
            }
        }
    }
    let mut v: Vec<String> = set.into_iter().collect();
    v.sort();
    v
}

/// Byte ranges of the numbers of a text (`-1.5e-3`, `42`).
fn number_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            || ((b[i] == b'-' || b[i] == b'+') && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if starts && boundary {
            let start = i;
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_digit() || matches!(b[i], b'.' | b'e' | b'E' | b'_'))
                || (i < b.len() && matches!(b[i], b'-' | b'+') && matches!(b[i - 1], b'e' | b'E'))
            {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// Byte ranges of the values of `key = value` (TOML) or `"key": value` (JSON) lines, up to
/// the end of the line (a trailing comma excluded).
fn value_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut line_start = 0;
    for (i, &c) in b
        .iter()
        .enumerate()
        .chain(std::iter::once((b.len(), &b'\n')))
    {
        if c != b'\n' {
            continue;
        }
        let line = &b[line_start..i];
        if let Some(p) = line.iter().position(|&c| c == b'=' || c == b':') {
            let mut s = line_start + p + 1;
            while s < i && b[s] == b' ' {
                s += 1;
            }
            let mut e = i;
            while e > s && matches!(b[e - 1], b',' | b' ' | b'\r') {
                e -= 1;
            }
            if e > s {
                spans.push((s, e));
            }
        }
        line_start = i + 1;
    }
    spans
}

/// Line ranges (each with its newline).
fn line_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < b.len() {
        spans.push((start, b.len()));
    }
    spans
}

/// Byte ranges of the contents of the double-quoted strings of a line-oriented text.
fn string_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut open = None;
    for (i, &c) in b.iter().enumerate() {
        match (c, open) {
            (b'"', None) => open = Some(i + 1),
            (b'"', Some(s)) => {
                spans.push((s, i));
                open = None;
            }
            (b'\n', _) => open = None,
            _ => {}
        }
    }
    spans
}

fn splice(b: &mut Vec<u8>, (s, e): (usize, usize), with: &[u8]) {
    b.splice(s..e, with.iter().copied());
}

/// Swap two randomly picked, non-overlapping spans of `b` (nothing if they overlap).
fn swap_two(b: &mut Vec<u8>, spans: &[(usize, usize)], rng: &mut Rng) {
    if spans.len() < 2 {
        return;
    }
    let (x, y) = (*rng.pick(spans), *rng.pick(spans));
    let (x, y) = if x.0 <= y.0 { (x, y) } else { (y, x) };
    if x.1 <= y.0 {
        let vx = b[x.0..x.1].to_vec();
        let vy = b[y.0..y.1].to_vec();
        splice(b, y, &vx);
        splice(b, x, &vy);
    }
}

/// The mutation engine: seeds, pool and dictionary.
pub struct Mutator {
    seeds: Vec<Input>,
    words: Vec<String>,
}

/// Largest input the mutator produces \[bytes\] (larger mutants are cut back).
pub const MAX_INPUT: usize = 1 << 20;

impl Mutator {
    /// A mutator over `seeds` (non-empty).
    pub fn new(seeds: Vec<Input>) -> Self {
        assert!(!seeds.is_empty(), "no seed");
        let words = words(&seeds);
        Self { seeds, words }
    }

    /// The seeds.
    pub fn seeds(&self) -> &[Input] {
        &self.seeds
    }

    /// Apply one random mutation to `b`, a text of syntax `format`.
    pub fn mutate_once(&self, rng: &mut Rng, b: &mut Vec<u8>, format: Format) {
        match rng.below(17) {
            0 => {
                // Flip a bit.
                if !b.is_empty() {
                    let i = rng.below(b.len());
                    b[i] ^= 1 << rng.below(8);
                }
            }
            1 => {
                // Overwrite, insert or delete a byte.
                let i = rng.below(b.len() + 1);
                let byte = if rng.one_in(2) {
                    *rng.pick(b"[]{}\"'=,:\n.-0123456789e#\\ ")
                } else {
                    rng.next_u64() as u8
                };
                match rng.below(3) {
                    0 if i < b.len() => b[i] = byte,
                    1 if i < b.len() => {
                        b.remove(i);
                    }
                    _ => b.insert(i, byte),
                }
            }
            2..=4 => {
                // A number replaced by an extreme.
                let spans = number_spans(b);
                if !spans.is_empty() {
                    let s = *rng.pick(&spans);
                    splice(b, s, rng.pick(EXTREMES).as_bytes());
                }
            }
            5 => {
                // A value replaced by another kind of value.
                let spans = value_spans(b);
                if !spans.is_empty() {
                    let s = *rng.pick(&spans);
                    splice(b, s, rng.pick(VALUES).as_bytes());
                }
            }
            6 => {
                // Two values swapped (a mass into an axis, a name into a position...).
                let spans = value_spans(b);
                swap_two(b, &spans, rng);
            }
            7 => {
                // A line deleted.
                let lines = line_spans(b);
                if !lines.is_empty() {
                    let s = *rng.pick(&lines);
                    splice(b, s, b"");
                }
            }
            8 => {
                // A line (or a block of lines) duplicated: duplicate keys, names, entries.
                let lines = line_spans(b);
                if !lines.is_empty() {
                    let i = rng.below(lines.len());
                    let j = (i + rng.below(8)).min(lines.len() - 1);
                    let block = b[lines[i].0..lines[j].1].to_vec();
                    let at = lines[j].1;
                    splice(b, (at, at), &block);
                }
            }
            9 => {
                // Two lines swapped.
                let spans = line_spans(b);
                swap_two(b, &spans, rng);
            }
            10 => {
                // A span deleted.
                if !b.is_empty() {
                    let s = rng.below(b.len());
                    let e = (s + 1 + rng.below(32)).min(b.len());
                    splice(b, (s, e), b"");
                }
            }
            11 => {
                // A word (key, type, node name) replaced by another.
                let spans = string_spans(b);
                let pick_word = !spans.is_empty() && rng.one_in(2);
                let w = rng.pick(&self.words).clone();
                if pick_word {
                    let s = *rng.pick(&spans);
                    splice(b, s, w.as_bytes());
                } else {
                    // A bare TOML key at a line start.
                    let lines = line_spans(b);
                    if !lines.is_empty() {
                        let (s, e) = *rng.pick(&lines);
                        if let Some(p) = b[s..e].iter().position(|&c| c == b'=') {
                            let key_end = s + b[s..s + p]
                                .iter()
                                .rposition(|c| *c != b' ')
                                .map_or(0, |k| k + 1);
                            splice(b, (s, key_end), w.as_bytes());
                        }
                    }
                }
            }
            12 => {
                // A huge array in place of a value.
                let spans = value_spans(b);
                if !spans.is_empty() {
                    let s = *rng.pick(&spans);
                    let n = 1 + rng.below(20_000);
                    let item = *rng.pick(&["1.0", "\"ground\"", "[1.0, 0.0, 0.0]", "{}"]);
                    let mut v = Vec::with_capacity(n * (item.len() + 2) + 2);
                    v.push(b'[');
                    for k in 0..n {
                        if k > 0 {
                            v.extend_from_slice(b", ");
                        }
                        v.extend_from_slice(item.as_bytes());
                    }
                    v.push(b']');
                    splice(b, s, &v);
                }
            }
            13 => {
                // Deep nesting in place of a value.
                let spans = value_spans(b);
                if !spans.is_empty() {
                    let s = *rng.pick(&spans);
                    let depth = 1 + rng.below(600);
                    let (open, close): (&[u8], &[u8]) = match rng.below(3) {
                        0 => (b"[", b"]"),
                        1 if format == Format::Toml => (b"{ a = ", b" }"),
                        _ => (b"{\"a\": ", b"}"),
                    };
                    let mut v = Vec::new();
                    for _ in 0..depth {
                        v.extend_from_slice(open);
                    }
                    v.push(b'1');
                    for _ in 0..depth {
                        v.extend_from_slice(close);
                    }
                    splice(b, s, &v);
                }
            }
            14 => {
                // A snippet (syntax character, unicode) inserted.
                let i = rng.below(b.len() + 1);
                let snippet = rng.pick(SNIPPETS).as_bytes();
                splice(b, (i, i), snippet);
            }
            15 => {
                // Splice: this input's head, another seed's tail (line boundaries).
                let other = &rng.pick(&self.seeds).bytes;
                let (a, o) = (line_spans(b), line_spans(other));
                if !a.is_empty() && !o.is_empty() {
                    let cut = rng.pick(&a).0;
                    let from = rng.pick(&o).0;
                    b.truncate(cut);
                    b.extend_from_slice(&other[from..]);
                }
            }
            _ => {
                // A line of another seed inserted.
                let other = &rng.pick(&self.seeds).bytes;
                let o = line_spans(other);
                let lines = line_spans(b);
                if !o.is_empty() {
                    let l = *rng.pick(&o);
                    let at = if lines.is_empty() {
                        0
                    } else {
                        rng.pick(&lines).0
                    };
                    let line = other[l.0..l.1].to_vec();
                    splice(b, (at, at), &line);
                }
            }
        }
        if b.len() > MAX_INPUT {
            b.truncate(MAX_INPUT);
        }
    }

    /// A mutant of `input`: one to four mutations.
    pub fn mutate(&self, rng: &mut Rng, input: &Input) -> Input {
        let mut bytes = input.bytes.clone();
        for _ in 0..1 + rng.below(4) {
            self.mutate_once(rng, &mut bytes, input.format);
        }
        Input {
            bytes,
            format: input.format,
        }
    }
}

/// The seeds in `dirs`: every `.toml` and `.json` file, and each TOML file converted to JSON
/// (where it is valid TOML without non-finite numbers).
pub fn load_seeds(dirs: &[PathBuf]) -> std::io::Result<Vec<Input>> {
    let mut paths = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(d)? {
            paths.push(e?.path());
        }
    }
    paths.sort();
    let mut seeds = Vec::new();
    for p in paths {
        let Some(format) = Format::from_path(&p) else {
            continue;
        };
        let bytes = std::fs::read(&p)?;
        if format == Format::Toml {
            if let Some(json) = toml_to_json(&bytes) {
                seeds.push(Input {
                    bytes: json.into_bytes(),
                    format: Format::Json,
                });
            }
        }
        seeds.push(Input { bytes, format });
    }
    Ok(seeds)
}

/// A TOML model file as pretty JSON, if it converts.
pub fn toml_to_json(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let value: toml::Value = toml::from_str(text).ok()?;
    serde_json::to_string_pretty(&value).ok()
}

/// Fuzzing run settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Executions to run.
    pub execs: u64,
    /// Random seed (same seed, same seeds: same run).
    pub seed: u64,
    /// Where crashing, slow and hanging inputs are saved (`None`: not saved).
    pub out: Option<PathBuf>,
    /// An execution longer than this is reported and saved as slow.
    pub slow: Duration,
    /// An execution longer than this is saved by the watchdog, which ends the process.
    pub hang: Duration,
    /// Print statistics every this often (`None`: quiet).
    pub report_every: Option<Duration>,
    /// Largest pool of inputs kept for mutation.
    pub max_pool: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            execs: 10_000,
            seed: 1,
            out: None,
            slow: Duration::from_secs(1),
            hang: Duration::from_secs(20),
            report_every: None,
            max_pool: 4096,
        }
    }
}

/// A panicking input.
#[derive(Clone, Debug)]
pub struct Crash {
    /// The panic message and location.
    pub message: String,
    /// The input.
    pub input: Input,
}

/// Results of a run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Executions.
    pub execs: u64,
    /// Accepted inputs.
    pub accepted: u64,
    /// Refused inputs.
    pub refused: u64,
    /// Panicking inputs.
    pub crashes: Vec<Crash>,
    /// Slow inputs (execution time, input).
    pub slow: Vec<(Duration, Input)>,
    /// Longest execution.
    pub max_time: Duration,
    /// Wall time of the run.
    pub wall: Duration,
    /// Inputs in the pool at the end.
    pub pool: usize,
    /// Distinct error shapes seen.
    pub shapes: usize,
}

impl Stats {
    /// Executions per second.
    pub fn rate(&self) -> f64 {
        self.execs as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// One-line summary.
    pub fn summary(&self) -> String {
        format!(
            "{} execs in {:.1} s ({:.0}/s): {} accepted, {} refused, {} panics, {} slow (> limit), \
             longest {:.3} s, pool {}, {} error shapes",
            self.execs,
            self.wall.as_secs_f64(),
            self.rate(),
            self.accepted,
            self.refused,
            self.crashes.len(),
            self.slow.len(),
            self.max_time.as_secs_f64(),
            self.pool,
            self.shapes
        )
    }
}

/// The shape of an error message: the file location, numbers and quoted names removed, cut
/// to 100 characters (novel shapes join the pool).
pub fn error_shape(message: &str) -> String {
    let mut out = String::with_capacity(100);
    let mut in_quote = false;
    let mut last_digit = false;
    for c in message.chars() {
        if c == '`' {
            in_quote = !in_quote;
            out.push('`');
            continue;
        }
        if in_quote {
            continue;
        }
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
            continue;
        }
        last_digit = false;
        out.push(c);
        if out.len() >= 100 {
            break;
        }
    }
    out
}

fn save(out: &Option<PathBuf>, kind: &str, input: &Input) {
    let Some(dir) = out else { return };
    let _ = std::fs::create_dir_all(dir);
    // FNV-1a of the bytes names the file.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &input.bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let path = dir.join(format!("{kind}-{h:016x}.{}", input.format.name()));
    let _ = std::fs::write(path, &input.bytes);
}

thread_local! {
    static PANIC_MESSAGE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Run the fuzzer over `seeds`. Panics are caught (and not printed by the default hook
/// meanwhile); the watchdog ends the process on a hang, after saving the input.
pub fn run(seeds: Vec<Input>, config: &Config) -> Stats {
    saltus::link();
    let mutator = Mutator::new(seeds);
    let mut rng = Rng::new(config.seed);
    let mut pool: Vec<Input> = mutator.seeds().to_vec();
    let mut shapes = HashSet::new();
    let mut stats = Stats::default();

    // Watchdog: the start of the current execution (ms since `t0`, 0: idle) and its input.
    let t0 = Instant::now();
    let started = Arc::new(AtomicU64::new(0));
    let current = Arc::new(Mutex::new(None::<Input>));
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (started, current, done) = (started.clone(), current.clone(), done.clone());
        let (hang, out) = (config.hang, config.out.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let s = started.load(Ordering::Relaxed);
                if s != 0 && t0.elapsed().as_millis() as u64 > s + hang.as_millis() as u64 {
                    if let Some(input) = current.lock().ok().and_then(|c| c.clone()) {
                        save(&out, "hang", &input);
                    }
                    eprintln!(
                        "saltus-fuzz: an execution took more than {} s: hang; input saved",
                        hang.as_secs()
                    );
                    std::process::exit(3);
                }
            }
        })
    };

    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(info.to_string()));
    }));

    let mut last_report = Instant::now();
    // Accepted inputs: half of the parents come from them, so that most mutants test one
    // defect in an otherwise valid model (the corpus seeds are nearly all invalid).
    let mut good: Vec<Input> = Vec::new();
    for i in 0..config.execs {
        let input = if (i as usize) < mutator.seeds().len() {
            // The seeds themselves first.
            mutator.seeds()[i as usize].clone()
        } else {
            let parent = if !good.is_empty() && rng.one_in(2) {
                rng.pick(&good).clone()
            } else {
                rng.pick(&pool).clone()
            };
            mutator.mutate(&mut rng, &parent)
        };
        let text = String::from_utf8_lossy(&input.bytes).into_owned();
        if let Ok(mut c) = current.lock() {
            *c = Some(input.clone());
        }
        started.store(t0.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        let t = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| target(&text, input.format)));
        let elapsed = t.elapsed();
        started.store(0, Ordering::Relaxed);
        stats.execs += 1;
        stats.max_time = stats.max_time.max(elapsed);
        if elapsed > config.slow {
            save(&config.out, "slow", &input);
            stats.slow.push((elapsed, input.clone()));
        }
        match result {
            Ok(Outcome::Accepted) => {
                stats.accepted += 1;
                if good.len() < config.max_pool && (good.len() < 64 || rng.one_in(16)) {
                    good.push(input);
                }
            }
            Ok(Outcome::Refused(message)) => {
                stats.refused += 1;
                if shapes.insert(error_shape(&message)) && pool.len() < config.max_pool {
                    pool.push(input);
                }
            }
            Err(_) => {
                let message = PANIC_MESSAGE
                    .with(|m| m.borrow_mut().take())
                    .unwrap_or_else(|| "panic".into());
                save(&config.out, "crash", &input);
                stats.crashes.push(Crash { message, input });
            }
        }
        if let Some(every) = config.report_every {
            if last_report.elapsed() >= every {
                last_report = Instant::now();
                stats.wall = t0.elapsed();
                stats.pool = pool.len() + good.len();
                stats.shapes = shapes.len();
                eprintln!("saltus-fuzz: {}", stats.summary());
            }
        }
    }
    std::panic::set_hook(previous_hook);
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    stats.wall = t0.elapsed();
    stats.pool = pool.len() + good.len();
    stats.shapes = shapes.len();
    stats
}

/// The default seed directories of the repository at `root`: `models/`, `fuzz/seeds/`,
/// `tests/bad_models/`.
pub fn default_seed_dirs(root: &Path) -> Vec<PathBuf> {
    ["models", "fuzz/seeds", "tests/bad_models"]
        .iter()
        .map(|d| root.join(d))
        .collect()
}
