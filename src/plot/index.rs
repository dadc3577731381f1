//! `saltus plot index.h5 --x PARAM --y REDUCTION`: a study's results against one of its
//! parameters, one curve per combination of the other parameters (e.g. the rebound height
//! against h, one curve per restitution).

use super::{err, format_of, frame, legend, Format, Labels};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use saltus_io::study::index::{Column, IndexFile};
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
    let x = index.column(&req.x).map_err(in_file)?;
    if x.values.iter().all(|v| v.is_nan()) {
        return Err(in_file(format!(
            "`{}` has no numbers to plot against",
            x.name
        )));
    }
    let ys: Vec<&Column> = req
        .y
        .iter()
        .map(|y| index.column(y).map_err(in_file))
        .collect::<Result<_, _>>()?;
    // The other parameters that vary make the curves.
    let others: Vec<&Column> = index
        .parameters
        .iter()
        .filter(|c| c.name != x.name && c.text.iter().any(|t| *t != c.text[0]))
        .collect();
    let runs = index.status.len();
    let mut curves: Vec<Curve> = Vec::new();
    for y in &ys {
        let mut groups: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for k in 0..runs {
            let key = others
                .iter()
                .map(|c| format!("{} = {}", c.name, c.text[k]))
                .collect::<Vec<_>>()
                .join(", ");
            let (xv, yv) = (x.values[k], y.values[k]);
            let usable = xv.is_finite()
                && yv.is_finite()
                && (!req.log_x || xv > 0.0)
                && (!req.log_y || yv > 0.0);
            let at = match groups.iter().position(|(g, _)| *g == key) {
                Some(i) => i,
                None => {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                }
            };
            if usable {
                groups[at].1.push((xv, yv));
            }
        }
        for (key, mut points) in groups {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let label = match (ys.len() > 1, key.is_empty()) {
                (_, true) => y.name.clone(),
                (false, false) => key,
                (true, false) => format!("{} ({key})", y.name),
            };
            curves.push(Curve { label, points });
        }
    }
    if curves.iter().all(|c| c.points.is_empty()) {
        return Err(in_file(
            "no run has values to plot (runs not `ok`, or non-positive values on a log axis)"
                .into(),
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
    let (xr, yr) = (
        range(
            curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)),
            req.log_x,
        ),
        range(
            curves.iter().flat_map(|c| c.points.iter().map(|p| p.1)),
            req.log_y,
        ),
    );
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
    // One drawing routine for every backend and pair of axis kinds.
    macro_rules! with_axes {
        ($root:expr) => {{
            let root = $root;
            let drawn = match (req.log_x, req.log_y) {
                (false, false) => draw(&root, &labels, xr.clone(), yr.clone(), &curves),
                (true, false) => draw(&root, &labels, xr.clone().log_scale(), yr.clone(), &curves),
                (false, true) => draw(&root, &labels, xr.clone(), yr.clone().log_scale(), &curves),
                (true, true) => draw(
                    &root,
                    &labels,
                    xr.clone().log_scale(),
                    yr.clone().log_scale(),
                    &curves,
                ),
            };
            drawn.and_then(|()| root.present().map_err(err))
        }};
    }
    match format {
        Format::Png => with_axes!(BitMapBackend::new(&output, size).into_drawing_area()),
        Format::Svg => with_axes!(SVGBackend::new(&output, size).into_drawing_area()),
    }
    .map_err(|e| format!("{}: cannot draw: {e}", output.display()))?;
    Ok(super::PlotReport {
        output,
        labels: curves.iter().map(|c| c.label.clone()).collect(),
        records: runs,
    })
}

/// Range of the values, padded (by a factor on a log axis), widened when flat.
fn range(values: impl Iterator<Item = f64>, log: bool) -> std::ops::Range<f64> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { 0.1..10.0 } else { -1.0..1.0 };
    }
    if log {
        let f = if hi > lo { (hi / lo).powf(0.05) } else { 2.0 };
        return lo / f..hi * f;
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.5 * lo.abs().max(1e-12)
    };
    lo - pad..hi + pad
}

fn draw<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    labels: &Labels,
    x: X,
    y: Y,
    curves: &[Curve],
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
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
