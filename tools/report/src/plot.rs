//! The plots, as SVG text (plotters' SVG backend): line charts and stacked bars. Labels are SVG
//! `<text>` that any viewer draws with its own sans-serif font; nothing here reads a font file.

use crate::ReportError;
use plotters::prelude::*;

/// Width and height of every plot, in pixels.
pub const SIZE: (u32, u32) = (860, 420);

fn plot_err(e: impl std::fmt::Display) -> ReportError {
    ReportError::Plot(e.to_string())
}

/// A series' colour: plotters' 99-colour palette, which keeps neighbours apart.
fn colour(i: usize) -> RGBAColor {
    Palette99::pick(i).to_rgba()
}

/// `[lo, hi]` widened so that it is never empty and has a little room at the top.
fn span(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        let lo = if lo.is_finite() { lo } else { 0.0 };
        return (lo, lo + 1.0);
    }
    (lo, hi + (hi - lo) * 0.05)
}

/// Width of the legend pane at the right of a plot, in pixels.
const LEGEND_WIDTH: u32 = 170;

/// Legend entries drawn at most; further ones are summed up in one line.
const LEGEND_ENTRIES: usize = 22;

/// The legend: a swatch and a name per entry, in a pane of its own so that it hides no data.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBAColor)],
) -> Result<(), ReportError> {
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    for (i, (name, c)) in entries.iter().take(LEGEND_ENTRIES).enumerate() {
        let y = 40 + 17 * i as i32;
        area.draw(&Rectangle::new([(6, y - 5), (22, y + 5)], c.filled()))
            .map_err(plot_err)?;
        area.draw(&Text::new(name.clone(), (28, y - 6), style.clone()))
            .map_err(plot_err)?;
    }
    if entries.len() > LEGEND_ENTRIES {
        let y = 40 + 17 * LEGEND_ENTRIES as i32;
        let more = format!("and {} more", entries.len() - LEGEND_ENTRIES);
        area.draw(&Text::new(more, (28, y - 6), style)).map_err(plot_err)?;
    }
    Ok(())
}

/// One named series of `(x, y)` points.
pub struct Series {
    /// Its legend entry.
    pub name: String,
    /// Its points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart of `series` with `title` and axis labels; `y_from_zero` starts the y axis at 0.
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    y_from_zero: bool,
) -> Result<String, ReportError> {
    let all = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = span(
        all().map(|p| p.0).fold(f64::INFINITY, f64::min),
        all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
    );
    let y_lo = if y_from_zero {
        0.0
    } else {
        all().map(|p| p.1).fold(f64::INFINITY, f64::min)
    };
    let (y0, y1) = span(y_lo, all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let (plot, key) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(plot_err)?;
        for (i, s) in series.iter().enumerate() {
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), colour(i).stroke_width(2)))
                .map_err(plot_err)?;
        }
        let entries: Vec<_> = series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), colour(i)))
            .collect();
        legend(&key, &entries)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Stacked bars: one bar per category, `parts[k]` of bar i stacked in order with height
/// `values[i][k]`.
pub fn stacked_bars(
    title: &str,
    y_desc: &str,
    categories: &[String],
    parts: &[&str],
    values: &[Vec<f64>],
) -> Result<String, ReportError> {
    let n = categories.len().max(1);
    let top = values.iter().map(|v| v.iter().sum::<f64>()).fold(0.0, f64::max);
    let (_, y1) = span(0.0, top);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let (plot, key) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0.0..y1)
            .map_err(plot_err)?;
        let names = categories.to_vec();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_labels(n.min(24))
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc(y_desc)
            .draw()
            .map_err(plot_err)?;
        for k in 0..parts.len() {
            let c = colour(k);
            let bars = values.iter().enumerate().map(|(i, v)| {
                let base: f64 = v[..k].iter().sum();
                let x = i as f64;
                Rectangle::new([(x - 0.35, base), (x + 0.35, base + v[k])], c.filled())
            });
            chart.draw_series(bars).map_err(plot_err)?;
        }
        let entries: Vec<_> = parts
            .iter()
            .enumerate()
            .map(|(k, p)| (p.to_string(), colour(k)))
            .collect();
        legend(&key, &entries)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}
