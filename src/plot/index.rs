//! `saltus plot index.h5 --x PARAM --y REDUCTION`: a study's results against one of its
//! parameters, one curve per combination of the other parameters (e.g. the rebound height
//! against h, one curve per restitution).

use super::{err, format_of, frame, legend, Axis, Format, Labels};
use plotters::coord::Shift;
use plotters::prelude::*;
use saltus_io::study::index::{Column, IndexFile};
use std::ops::Range;
use std::path::PathBuf;

/// What to plot from an index and where.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexPlotRequest {
    /// `index.h5` of `saltus sweep`.
    pub file: PathBuf,
    /// Abscissa: a parameter path or a reduction name.
    pub x: String,
    /// Ordinates: reduction names (or parameters), one or more.
    pub y: Vec<String>,
    /// Image file, `.png` or `.svg` (`None`: the index's name with `.png`).
    pub output: Option<PathBuf>,
    /// Figure title (`None`: the index's folder name).
    pub title: Option<String>,
    /// Image size in pixels (width, height).
    pub size: (u32, u32),
    /// Logarithmic abscissa.
    pub log_x: bool,
    /// Logarithmic ordinate.
    pub log_y: bool,
}

/// One curve: its label and its points, sorted by abscissa.
struct Curve {
    label: String,
    points: Vec<(f64, f64)>,
}

/// Plot the request's columns; returns the image path and the curves' labels.
pub fn plot_index(req: &IndexPlotRequest) -> Result<super::PlotReport, String> {
    if req.y.is_empty() {
        return Err("nothing to plot: give --y REDUCTION (one or more)".into());
    }
    let index = IndexFile::read(&req.file)?;
    let in_file = |e: String| format!("{}: {e}", req.file.display());
    let numbers = |c: &Column| -> Result<(), String> {
        if c.values.iter().any(|v| v.is_finite()) {
            return Ok(());
        }
        Err(in_file(
            if index.parameters.iter().any(|p| p.name == c.name) {
                format!(
                    "`{}` has no numbers to plot (its values are arrays or text)",
                    c.name
                )
            } else {
                format!(
                    "`{}` has no value in any run (no run ended `ok`, or the reduction failed: \
                     the index's `error` column says why)",
                    c.name
                )
            },
        ))
    };
    let x = index.column(&req.x).map_err(in_file)?;
    numbers(x)?;
    let ys: Vec<&Column> = req
        .y
        .iter()
        .map(|y| index.column(y).map_err(in_file))
        .collect::<Result<_, _>>()?;
    for y in &ys {
        numbers(y)?;
    }
    // The other parameters that vary make the curves.
    let others: Vec<&Column> = index
        .parameters
        .iter()
        .filter(|c| c.name != x.name && c.text.iter().any(|t| *t != c.text[0]))
        .collect();
    let runs = index.status.len();
    // Plot coordinates: log10 of the values on a log axis.
    let to_plot = |v: f64, log: bool| if log { v.log10() } else { v };
    let mut curves: Vec<Curve> = Vec::new();
    for y in &ys {
        let mut groups: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for k in 0..runs {
            let key = others
                .iter()
                .map(|c| format!("{} = {}", c.name, c.text[k]))
                .collect::<Vec<_>>()
                .join(", ");
            let at = match groups.iter().position(|(g, _)| *g == key) {
                Some(i) => i,
                None => {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                }
            };
            let p = (
                to_plot(x.values[k], req.log_x),
                to_plot(y.values[k], req.log_y),
            );
            if p.0.is_finite() && p.1.is_finite() {
                groups[at].1.push(p);
            }
        }
        for (key, mut points) in groups {
            // A combination without values is left out (not an empty legend entry).
            if points.is_empty() {
                continue;
            }
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let label = match (ys.len() > 1, key.is_empty()) {
                (_, true) => y.name.clone(),
                (false, false) => key,
                (true, false) => format!("{} ({key})", y.name),
            };
            curves.push(Curve { label, points });
        }
    }
    if curves.is_empty() {
        return Err(in_file(
            "nothing to plot on a log axis: every value is zero or negative".into(),
        ));
    }
    let output = req
        .output
        .clone()
        .unwrap_or_else(|| req.file.with_extension("png"));
    let format = format_of(&output)?;
    let title = req.title.clone().unwrap_or_else(|| {
        req.file
            .parent()
            .and_then(|p| p.file_name())
            .map_or("index".into(), |n| n.to_string_lossy().into_owned())
    });
    let desc = |c: &Column| {
        if c.unit.is_empty() {
            c.name.clone()
        } else {
            format!("{} [{}]", c.name, c.unit)
        }
    };
    let x_desc = desc(x);
    let y_desc = ys.iter().map(|c| desc(c)).collect::<Vec<_>>().join(", ");
    let xs = || curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let ys_ = || curves.iter().flat_map(|c| c.points.iter().map(|p| p.1));
    // Whole-number abscissae (element counts) get ticks at whole numbers.
    let x_axis = Axis {
        log: req.log_x,
        whole: !req.log_x && xs().all(|v| v.fract() == 0.0),
    };
    let y_axis = Axis {
        log: req.log_y,
        whole: false,
    };
    let (xr, yr) = (range(xs()), range(ys_()));
    let size = if req.size.0 == 0 || req.size.1 == 0 {
        (1000, 600)
    } else {
        req.size
    };
    let labels = Labels {
        title: &title,
        x: &x_desc,
        y: &y_desc,
    };
    let axes = ((xr, x_axis), (yr, y_axis));
    match format {
        Format::Png => {
            let root = BitMapBackend::new(&output, size).into_drawing_area();
            draw(&root, &labels, axes, &curves).and_then(|()| root.present().map_err(err))
        }
        Format::Svg => {
            let root = SVGBackend::new(&output, size).into_drawing_area();
            draw(&root, &labels, axes, &curves).and_then(|()| root.present().map_err(err))
        }
    }
    .map_err(|e| format!("{}: cannot draw: {e}", output.display()))?;
    Ok(super::PlotReport {
        output,
        labels: curves.iter().map(|c| c.label.clone()).collect(),
        records: runs,
        series: "curves",
        per: "runs",
    })
}

/// Range of the plot coordinates, padded by 5 %, widened when flat.
fn range(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return -1.0..1.0;
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.5 * lo.abs().max(1e-12)
    };
    lo - pad..hi + pad
}

type Axes = ((Range<f64>, Axis), (Range<f64>, Axis));

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    labels: &Labels,
    (x, y): Axes,
    curves: &[Curve],
) -> Result<(), String> {
    let mut chart = frame(root, labels, x, y)?;
    for (i, c) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(c.points.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(c.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(c.points.iter().map(|p| Circle::new(*p, 4, color.filled())))
            .map_err(err)?;
    }
    legend(&mut chart)
}
