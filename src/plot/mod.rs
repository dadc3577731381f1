//! `saltus plot`: time histories of a results file drawn to PNG or SVG with `plotters`.
//!
//! The series are chosen by selectors ([`saltus_io::series`]), e.g.
//! `saltus plot crank.h5 nodes/position[slider].x energy/total -o crank.png`.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use saltus_io::series::{open, read_series, read_time, Series};
use std::path::{Path, PathBuf};

mod index;
pub use index::{plot_index, IndexPlotRequest};

/// What to plot and where.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlotRequest {
    /// Results file (HDF5, `docs/hdf5-layout.md`).
    pub file: PathBuf,
    /// Selectors, one or more series each (`saltus_io::series`).
    pub selectors: Vec<String>,
    /// Image file, `.png` or `.svg` (`None`: the results file's name with `.png`).
    pub output: Option<PathBuf>,
    /// Figure title (`None`: the results file's name).
    pub title: Option<String>,
    /// Image size in pixels (width, height).
    pub size: (u32, u32),
}

/// What was drawn: the image path and the series' labels.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotReport {
    /// The image written.
    pub output: PathBuf,
    /// Labels of the series, in legend order.
    pub labels: Vec<String>,
    /// Records per series (time histories), or runs of the index.
    pub records: usize,
    /// What a drawn line is: `series` (time histories) or `curves` (index plots).
    pub series: &'static str,
    /// What `records` counts: `records` or `runs`.
    pub per: &'static str,
}

impl std::fmt::Display for PlotReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} {} of {} {} ({})",
            self.output.display(),
            self.labels.len(),
            self.series,
            self.records,
            self.per,
            self.labels.join("; ")
        )
    }
}

/// Image formats `plot` writes, from the output's extension.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Format {
    Png,
    Svg,
}

pub(crate) fn format_of(path: &Path) -> Result<Format, String> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        _ => Err(format!(
            "{}: the image must end in .png or .svg",
            path.display()
        )),
    }
}

/// Read the selected series and draw them against time.
pub fn plot(req: &PlotRequest) -> Result<PlotReport, String> {
    if req.selectors.is_empty() {
        return Err("nothing to plot: give one or more datasets, e.g. energy/total".into());
    }
    let output = req
        .output
        .clone()
        .unwrap_or_else(|| req.file.with_extension("png"));
    if let (Ok(a), Ok(b)) = (output.canonicalize(), req.file.canonicalize()) {
        if a == b {
            return Err(format!(
                "{}: the image would overwrite the results file",
                output.display()
            ));
        }
    }
    let format = format_of(&output)?;
    let file = open(&req.file).map_err(|e| e.to_string())?;
    let time = read_time(&file).map_err(|e| e.to_string())?;
    let mut series = Vec::new();
    for s in &req.selectors {
        series.extend(read_series(&file, s).map_err(|e| e.to_string())?);
    }
    if time.is_empty() {
        return Err(format!("{}: no records", req.file.display()));
    }
    let title = req.title.clone().unwrap_or_else(|| {
        req.file
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    });
    let size = if req.size.0 == 0 || req.size.1 == 0 {
        (1000, 600)
    } else {
        req.size
    };
    let drawn = match format {
        Format::Png => {
            let root = BitMapBackend::new(&output, size).into_drawing_area();
            draw(&root, &title, &time, &series).and_then(|()| root.present().map_err(err))
        }
        Format::Svg => {
            let root = SVGBackend::new(&output, size).into_drawing_area();
            draw(&root, &title, &time, &series).and_then(|()| root.present().map_err(err))
        }
    };
    drawn.map_err(|e| format!("{}: cannot draw: {e}", output.display()))?;
    Ok(PlotReport {
        output,
        labels: series.iter().map(|s| s.label.clone()).collect(),
        records: time.len(),
        series: "series",
        per: "records",
    })
}

pub(crate) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Range of the finite values, widened when flat so that a constant still shows.
fn value_range(series: &[Series]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in series
        .iter()
        .flat_map(|s| &s.values)
        .filter(|v| v.is_finite())
    {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    if !lo.is_finite() {
        return (-1.0, 1.0);
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.5 * lo.abs().max(1e-12)
    };
    (lo - pad, hi + pad)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    time: &[f64],
    series: &[Series],
) -> Result<(), String> {
    let (t0, t1) = (time[0], *time.last().unwrap_or(&time[0]));
    let t1 = if t1 > t0 { t1 } else { t0 + 1.0 };
    let (lo, hi) = value_range(series);
    let mut units: Vec<&str> = series
        .iter()
        .map(|s| s.unit.as_str())
        .filter(|u| !u.is_empty())
        .collect();
    units.dedup();
    let y_label = if units.is_empty() {
        "value".to_string()
    } else {
        format!("[{}]", units.join("], ["))
    };
    let labels = Labels {
        title,
        x: "time [s]",
        y: &y_label,
    };
    let mut chart = frame(
        root,
        &labels,
        (t0..t1, Axis::default()),
        (lo..hi, Axis::default()),
    )?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        // NaN marks records where a removed element has no value: break the line there.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (t, v) in time.iter().zip(&s.values) {
            if v.is_finite() {
                runs.last_mut().expect("one run").push((*t, *v));
            } else if !runs.last().expect("one run").is_empty() {
                runs.push(Vec::new());
            }
        }
        for (k, run) in runs.into_iter().enumerate() {
            let line = chart
                .draw_series(LineSeries::new(run, color.stroke_width(2)))
                .map_err(err)?;
            if k == 0 {
                let label = if s.unit.is_empty() {
                    s.label.clone()
                } else {
                    format!("{} [{}]", s.label, s.unit)
                };
                line.label(label).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            }
        }
    }
    legend(&mut chart)
}

/// Title and axis descriptions of a figure.
pub(crate) struct Labels<'a> {
    pub(crate) title: &'a str,
    pub(crate) x: &'a str,
    pub(crate) y: &'a str,
}

/// A chart on two linear axes with the ticks of [`Axis::ticks`].
pub(crate) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// A linear coordinate over `range` whose tick marks are ours ([`Axis::ticks`]): 1-2-5
/// steps, whole numbers for counts, 1-2-5 values on a log axis (plotters' own log axis labels
/// decades only).
#[derive(Clone)]
pub(crate) struct Ticked {
    range: std::ops::Range<f64>,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let (lo, hi) = (self.range.start, self.range.end);
        let s = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        limit.0 + (s * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match hint.weight() {
            KeyPointWeight::Bold => self.major.clone(),
            KeyPointWeight::Any => self.minor.clone(),
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// How an axis shows its values: plotted as given, or as `log10` of the values (tick labels
/// then show the values themselves); `whole`: ticks at whole numbers only (counts).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Axis {
    pub(crate) log: bool,
    pub(crate) whole: bool,
}

impl Axis {
    /// The axis over `r` (plot coordinates) with its ticks.
    pub(crate) fn coord(&self, r: std::ops::Range<f64>) -> Ticked {
        let (major, minor) = self.ticks(&r);
        Ticked {
            range: r,
            major,
            minor,
        }
    }

    /// Major and minor tick positions over `r` (plot coordinates). Log axis: 1, 2, 5 × 10ᵏ
    /// (every digit where that gives fewer than three), minor lines at every digit. Linear:
    /// about eight major ticks 1, 2 or 5 × 10ᵏ apart (whole numbers for counts), five minor
    /// intervals each.
    pub(crate) fn ticks(&self, r: &std::ops::Range<f64>) -> (Vec<f64>, Vec<f64>) {
        let (lo, hi) = (r.start, r.end);
        if !(lo.is_finite() && hi.is_finite() && hi > lo) {
            return (vec![], vec![]);
        }
        if self.log {
            let within = |ms: &[f64]| -> Vec<f64> {
                (lo.floor() as i32..=hi.ceil() as i32)
                    .flat_map(|d| ms.iter().map(move |m| m.log10() + d as f64))
                    .filter(|t| (lo..=hi).contains(t))
                    .collect()
            };
            let digits = within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
            let coarse = within(&[1.0, 2.0, 5.0]);
            let major = if coarse.len() >= 3 {
                coarse
            } else {
                digits.clone()
            };
            return (major, digits);
        }
        let raw = (hi - lo) / 8.0;
        let mag = 10f64.powf(raw.log10().floor());
        let mut step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        if self.whole {
            step = step.max(1.0).round();
        }
        let at = |step: f64| -> Vec<f64> {
            let first = (lo / step).ceil() as i64;
            let last = (hi / step).floor() as i64;
            (first..=last).map(|k| k as f64 * step).collect()
        };
        (at(step), at(step / 5.0))
    }
}

/// A tick label: the value (`10^t` on a log axis) with at most four significant digits,
/// without round-off tails (`0.0003`, not `0.0003000000000000003`).
pub(crate) fn tick(t: f64, log: bool) -> String {
    let v = if log { 10f64.powf(t) } else { t };
    let a = v.abs();
    if a == 0.0 || !a.is_finite() {
        return if a == 0.0 { "0".into() } else { v.to_string() };
    }
    if (1e-3..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{v:.3e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{mantissa}e{exponent}")
    }
}

/// A white figure with its caption, axes and mesh.
pub(crate) fn frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    labels: &Labels,
    (x, xa): (std::ops::Range<f64>, Axis),
    (y, ya): (std::ops::Range<f64>, Axis),
) -> Result<Chart<'a, DB>, String> {
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(root)
        .caption(labels.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(90)
        .build_cartesian_2d(xa.coord(x), ya.coord(y))
        .map_err(err)?;
    let (fx, fy) = (|t: &f64| tick(*t, xa.log), |t: &f64| tick(*t, ya.log));
    chart
        .configure_mesh()
        .x_desc(labels.x)
        .y_desc(labels.y)
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// The legend box, upper right.
pub(crate) fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short_and_exact() {
        assert_eq!(tick(0.30000000000000004, false), "0.3");
        assert_eq!(tick(0.0003000000000000003, false), "3e-4");
        assert_eq!(tick(28.75, false), "28.75");
        assert_eq!(tick(12_000.0, false), "12000");
        assert_eq!(tick(2.5e-6f64.log10(), true), "2.5e-6");
        assert_eq!(tick(1e-5f64.log10(), true), "1e-5");
        assert_eq!(tick(0.0, false), "0");
    }

    #[test]
    fn ticks_fall_on_round_values() {
        let log = Axis {
            log: true,
            whole: false,
        };
        // Less than a decade: every digit.
        let (major, _) = log.ticks(&(2.5e-6f64.log10()..1e-5f64.log10()));
        let values: Vec<String> = major.iter().map(|t| tick(*t, true)).collect();
        assert_eq!(
            values,
            ["3e-6", "4e-6", "5e-6", "6e-6", "7e-6", "8e-6", "9e-6", "1e-5"]
        );
        // Three decades: 1, 2, 5.
        let (major, minor) = log.ticks(&(-3.0..0.0));
        assert_eq!(major.len(), 3 * 3 + 1);
        assert_eq!(minor.len(), 3 * 9 + 1);
        let counts = Axis {
            log: false,
            whole: true,
        };
        let (major, _) = counts.ticks(&(1.8..4.2));
        assert_eq!(major, [2.0, 3.0, 4.0]);
        let (major, _) = Axis::default().ticks(&(28.72..29.12));
        assert_eq!(major.len(), 4, "{major:?}");
        assert!(major
            .iter()
            .all(|t| (t * 10.0 - (t * 10.0).round()).abs() < 1e-9));
    }
}
