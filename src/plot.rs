//! PNG charts for the `report` and `learn` subcommands, drawn with `plotters`.
//!
//! Two pictures:
//!
//! - [`agreement_by_phase`]: a grouped bar chart of top-1 move agreement, one group per
//!   game phase (e.g. "1-30", "31-80", "81+", "all") and one coloured bar per evaluator
//!   (e.g. "material", "learned"), with a legend.
//! - [`learning_curve`]: per training iteration, top-1 agreement on held-out and training
//!   positions and the material baseline (dashed) in the upper panel, RMSE in the lower.
//!
//! Text is rendered with `ab_glyph` from the DejaVu Sans font file (Debian package
//! `fonts-dejavu-core`, installed by `scripts/setup.sh`), not with the system font
//! stack, so no fontconfig is needed. Files are written atomically: the picture is
//! drawn to `PATH.tmp.png` and then renamed to `PATH`.
//!
//! ```no_run
//! use niwatori::plot::{PhaseSeries, agreement_by_phase};
//! let series = vec![PhaseSeries {
//!     name: "material".into(),
//!     values: vec![("1-30".into(), 0.21), ("all".into(), 0.18)],
//! }];
//! agreement_by_phase("agreement.png".as_ref(), "Top-1 agreement, wcsc28", &series)?;
//! # Ok::<(), niwatori::plot::PlotError>(())
//! ```

use plotters::coord::combinators::BindKeyPoints;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The font the charts' text is drawn with.
pub const FONT_PATH: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
/// Size of the [`agreement_by_phase`] picture, in pixels.
pub const AGREEMENT_SIZE: (u32, u32) = (900, 540);
/// Size of the [`learning_curve`] picture, in pixels.
pub const CURVE_SIZE: (u32, u32) = (900, 720);

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot read font {path}: {source} (install the Debian package fonts-dejavu-core)")]
    FontMissing {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a usable TrueType font")]
    BadFont { path: PathBuf },
    #[error("nothing to plot for {path}: {what}")]
    NoData { path: PathBuf, what: String },
    #[error("cannot draw {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// One evaluator's top-1 agreement per phase label, as a fraction in 0..=1.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSeries {
    pub name: String,
    pub values: Vec<(String, f64)>,
}

/// Agreement figures after one training iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub iteration: u32,
    pub top1_heldout: f64,
    pub top1_train: f64,
    pub top1_material: f64,
    pub rmse: f64,
}

/// Series colours, distinguishable in colour and in greyscale.
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Draws a grouped bar chart of top-1 agreement: one group per phase label (in order of
/// first appearance), one bar per series. A series without a value for a phase has no
/// bar there.
pub fn agreement_by_phase(
    path: &Path,
    title: &str,
    series: &[PhaseSeries],
) -> Result<(), PlotError> {
    let mut phases: Vec<&str> = Vec::new();
    for (label, _) in series.iter().flat_map(|s| &s.values) {
        if !phases.contains(&label.as_str()) {
            phases.push(label);
        }
    }
    if phases.is_empty() {
        return Err(no_data(path, "no series has any value"));
    }
    let all = series.iter().flat_map(|s| s.values.iter().map(|v| v.1));
    check_finite(path, all.clone())?;
    let y_max = all.fold(0.6f64, |m, v| m.max(v * 1.2));
    // x is in thousandths of a group: group i spans i*1000 +- 500, bars use the middle 800.
    let n = phases.len() as i32;
    let width = 800 / series.len().max(1) as i32;
    let bar_x = |label: &str, k: usize| {
        let i = phases.iter().position(|p| *p == label).unwrap_or(0) as i32;
        i * 1000 - 400 + k as i32 * width
    };

    write_atomically(path, AGREEMENT_SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 26))
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(76)
            .build_cartesian_2d(
                (-500..n * 1000 - 500).with_key_points((0..n).map(|i| i * 1000).collect()),
                0.0..y_max,
            )?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|x| phases[(x / 1000).clamp(0, n - 1) as usize].to_string())
            .y_label_formatter(&|y| format!("{:.0}%", y * 100.0))
            .y_desc("top-1 agreement")
            .x_desc("game phase (move numbers)")
            .label_style(("sans-serif", 17))
            .axis_desc_style(("sans-serif", 18))
            .draw()?;
        let value_style = ("sans-serif", 14)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        for (k, s) in series.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let bars = s.values.iter().map(|(label, v)| {
                let x0 = bar_x(label, k);
                Rectangle::new([(x0 + 10, 0.0), (x0 + width - 10, *v)], color.filled())
            });
            chart
                .draw_series(bars)?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled())
                });
            let numbers = s.values.iter().map(|(label, v)| {
                let at = (bar_x(label, k) + width / 2, *v);
                Text::new(format!("{:.1}%", v * 100.0), at, value_style.clone())
            });
            chart.draw_series(numbers)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

/// Draws the learning curve: agreement per iteration (held-out, train, and the material
/// baseline dashed) above, RMSE below. Points are drawn in the given order.
pub fn learning_curve(path: &Path, points: &[CurvePoint]) -> Result<(), PlotError> {
    let (Some(first), Some(last)) = (
        points.iter().map(|p| p.iteration).min(),
        points.iter().map(|p| p.iteration).max(),
    ) else {
        return Err(no_data(path, "no iterations"));
    };
    let values = points
        .iter()
        .flat_map(|p| [p.top1_heldout, p.top1_train, p.top1_material, p.rmse]);
    check_finite(path, values)?;
    let x_range = first.saturating_sub(1)..last + 1;
    // Zoomed to the data, since iterations differ by a point or two, with
    // room above the highest curve for the legend.
    let (lo, hi) = points
        .iter()
        .flat_map(|p| [p.top1_heldout, p.top1_train, p.top1_material])
        .fold((1.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let span = (hi - lo).max(0.02);
    let top_min = ((lo - 0.3 * span) * 100.0).floor().max(0.0) / 100.0;
    let top_max = ((hi + 0.8 * span) * 100.0).ceil().min(100.0) / 100.0;
    let rmse_max = points.iter().fold(0.0f64, |m, p| m.max(p.rmse)) * 1.15;
    let rmse_max = if rmse_max > 0.0 { rmse_max } else { 1.0 };

    write_atomically(path, CURVE_SIZE, |root| {
        let (upper, lower) = root.split_vertically(CURVE_SIZE.1 * 62 / 100);
        let mut chart = ChartBuilder::on(&upper)
            .caption("Learning curve", ("sans-serif", 26))
            .margin(16)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(x_range.clone(), top_min..top_max)?;
        chart
            .configure_mesh()
            .y_label_formatter(&|y| format!("{:.1}%", y * 100.0))
            .y_desc("top-1 agreement")
            .label_style(("sans-serif", 17))
            .axis_desc_style(("sans-serif", 18))
            .draw()?;
        let lines: [(&str, RGBColor, Getter); 2] = [
            ("held-out", PALETTE[0], |p| p.top1_heldout),
            ("train", PALETTE[1], |p| p.top1_train),
        ];
        for (name, color, get) in lines {
            let xy = points.iter().map(|p| (p.iteration, get(p)));
            chart
                .draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(xy.map(|c| Circle::new(c, 4, color.filled())))?;
        }
        let gray = RGBColor(90, 90, 90);
        let material = points.iter().map(|p| (p.iteration, p.top1_material));
        chart
            .draw_series(DashedLineSeries::new(
                material.clone(),
                8,
                6,
                gray.stroke_width(2),
            ))?
            .label("material baseline")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], gray.stroke_width(2)));
        chart.draw_series(material.map(|c| TriangleMarker::new(c, 5, gray.filled())))?;
        // Curves usually rise, so the upper left corner is the emptiest.
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;

        let mut chart = ChartBuilder::on(&lower)
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(x_range, 0.0..rmse_max)?;
        chart
            .configure_mesh()
            .y_labels(6)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .y_desc("held-out RMSE (cp)")
            .x_desc("iteration")
            .label_style(("sans-serif", 17))
            .axis_desc_style(("sans-serif", 18))
            .draw()?;
        let red = PALETTE[3];
        let xy = points.iter().map(|p| (p.iteration, p.rmse));
        chart.draw_series(LineSeries::new(xy.clone(), red.stroke_width(2)))?;
        chart.draw_series(xy.map(|c| Circle::new(c, 4, red.filled())))?;
        Ok(())
    })
}

type Getter = fn(&CurvePoint) -> f64;
type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;
type DrawResult =
    Result<(), DrawingAreaErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>>;

fn legend<'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 17))
        .draw()
}

/// Draws with `draw` into `PATH.tmp.png` (the extension tells the encoder the format),
/// then renames it to `path`. A failed attempt leaves no file behind.
fn write_atomically(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&Area) -> DrawResult,
) -> Result<(), PlotError> {
    ensure_font()?;
    crate::atomic::replace_atomically(path, ".tmp.png", |tmp| {
        let root = BitMapBackend::new(tmp, size).into_drawing_area();
        root.fill(&WHITE)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present())
            .map_err(|e| PlotError::Draw {
                path: path.to_owned(),
                message: e.to_string(),
            })
    })
}

fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: Mutex<bool> = Mutex::new(false);
    let mut registered = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    if !*registered {
        register_font_file(Path::new(FONT_PATH))?;
        *registered = true;
    }
    Ok(())
}

/// Registers the font at `path` as "sans-serif". plotters keeps a `'static` reference,
/// so the bytes are leaked; this happens once per process.
fn register_font_file(path: &Path) -> Result<(), PlotError> {
    let bytes = std::fs::read(path).map_err(|source| PlotError::FontMissing {
        path: path.to_owned(),
        source,
    })?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).map_err(|_| {
        PlotError::BadFont {
            path: path.to_owned(),
        }
    })
}

fn check_finite(path: &Path, values: impl Iterator<Item = f64>) -> Result<(), PlotError> {
    match values.into_iter().find(|v| !v.is_finite()) {
        Some(v) => Err(no_data(path, &format!("value {v} is not a finite number"))),
        None => Ok(()),
    }
}

fn no_data(path: &Path, what: &str) -> PlotError {
    PlotError::NoData {
        path: path.to_owned(),
        what: what.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_font_names_file_and_package() {
        let err = register_font_file(Path::new("/nonexistent/NoSuch.ttf")).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, PlotError::FontMissing { .. }), "{msg}");
        assert!(msg.contains("/nonexistent/NoSuch.ttf"), "{msg}");
        assert!(msg.contains("fonts-dejavu-core"), "{msg}");
    }

    #[test]
    fn non_font_file_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fake.ttf");
        std::fs::write(&fake, b"not a font").unwrap();
        let err = register_font_file(&fake).unwrap_err();
        assert!(matches!(err, PlotError::BadFont { .. }), "{err}");
    }
}
