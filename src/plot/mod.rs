//! `saltus plot`: time histories of a results file drawn to PNG or SVG with `plotters`.
//!
//! The series are chosen by selectors ([`saltus_io::series`]), e.g.
//! `saltus plot crank.h5 nodes/position[slider].x energy/total -o crank.png`.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
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
    /// Records per series.
    pub records: usize,
}

impl std::fmt::Display for PlotReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} series of {} records ({})",
            self.output.display(),
            self.labels.len(),
            self.records,
            self.labels.join(", ")
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
    let mut chart = frame(root, &labels, t0..t1, lo..hi)?;
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

/// A chart on linear or log axes.
pub(crate) type Chart<'a, DB, X, Y> = ChartContext<
    'a,
    DB,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// A white figure with its caption, axes and mesh, for `x` and `y` (linear or log ranges).
pub(crate) fn frame<'a, DB, X, Y>(
    root: &'a DrawingArea<DB, Shift>,
    labels: &Labels,
    x: X,
    y: Y,
) -> Result<Chart<'a, DB, X, Y>, String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(root)
        .caption(labels.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(90)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(labels.x)
        .y_desc(labels.y)
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
