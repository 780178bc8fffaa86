//! SVG figures (plotters): a bar chart of time per unit for a single thread
//! count, speed-up over `seq` against threads for a thread sweep, and time (or
//! overhead) against the parameter for a cutoff / work sweep.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::experiment::{ExperimentResult, SweepMetric};
use crate::report::{fmt_ns, Row};

const WIDTH: u32 = 900;
const FONT: &str = "sans-serif";

/// Which figure an experiment gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureKind {
    /// One thread count: horizontal bars, ns per unit per implementation.
    Bars,
    /// Several thread counts: speed-up over `seq` against threads.
    SpeedUp,
    /// Several parameter values: time (or ratio to seq) against the parameter.
    ParamSweep,
}

/// The figure that fits the experiment's shape.
pub fn figure_kind(res: &ExperimentResult) -> FigureKind {
    if res.plan.params.len() > 1 {
        FigureKind::ParamSweep
    } else if res.plan.threads.len() > 1 {
        FigureKind::SpeedUp
    } else {
        FigureKind::Bars
    }
}

/// Renders the experiment's figure as an SVG document.
pub fn render(res: &ExperimentResult) -> Result<String, String> {
    let mut svg = String::new();
    {
        let height = match figure_kind(res) {
            FigureKind::Bars => 120 + 34 * res.rows.len() as u32,
            _ => 560,
        };
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let kind = figure_kind(res);
        let drawn = match kind {
            FigureKind::Bars => bars(&root, res),
            FigureKind::SpeedUp | FigureKind::ParamSweep => line_chart(&root, res, kind),
        };
        drawn.map_err(|e| format!("cannot draw the figure: {e}"))?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

type DrawResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// Width of the legend column beside line charts, in pixels.
const LEGEND_WIDTH: u32 = 230;

/// One legend entry: a label and the line's colour and width.
struct LegendEntry {
    label: String,
    colour: RGBAColor,
    width: u32,
}

/// A line chart: the title across the whole width, the plot on the left and
/// the legend in its own column on the right, so it never hides data.
fn line_chart(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    res: &ExperimentResult,
    kind: FigureKind,
) -> DrawResult {
    let plan = &res.plan;
    let title = match kind {
        FigureKind::SpeedUp => format!("{}: speed-up over seq", plan.title),
        _ => format!(
            "{}: {} sweep",
            plan.title,
            plan.param_name.unwrap_or("parameter")
        ),
    };
    let body = root.titled(&title, (FONT, 20).into_font().style(FontStyle::Bold))?;
    let (plot_area, side) = body.split_horizontally(WIDTH - LEGEND_WIDTH);
    let legend = match kind {
        FigureKind::SpeedUp => speed_up(&plot_area, res)?,
        _ => param_sweep(&plot_area, res)?,
    };
    for (i, e) in legend.iter().enumerate() {
        let y = 40 + 24 * i as i32;
        side.draw(&PathElement::new(
            vec![(8, y), (36, y)],
            e.colour.stroke_width(e.width.max(2)),
        ))?;
        side.draw(&Circle::new((22, y), 3, e.colour.filled()))?;
        side.draw(&Text::new(
            e.label.clone(),
            (44, y),
            TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// Tick labels with about three significant digits (log-scale axes).
fn three_digits(v: &f64) -> String {
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.1e}")
    };
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A stable colour per implementation name.
fn colour(imp: &str) -> RGBColor {
    match imp {
        "seq" => RGBColor(110, 110, 110),
        "sumac" => RGBColor(214, 69, 32),
        "rayon" => RGBColor(31, 119, 180),
        "rayon-tuned" => RGBColor(120, 180, 230),
        "chili" => RGBColor(44, 160, 44),
        "static" => RGBColor(148, 103, 189),
        variant if variant.starts_with("sumac[") => policy_colour(variant),
        _ => RGBColor(0, 0, 0),
    }
}

/// A colour for a sumac policy variant (`sumac[-rescue]`): one of a palette of warm
/// and dark hues, chosen by the label's hash so a variant keeps its colour across figures.
fn policy_colour(label: &str) -> RGBColor {
    const PALETTE: [RGBColor; 8] = [
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(128, 0, 0),
        RGBColor(255, 187, 120),
        RGBColor(60, 60, 160),
    ];
    let hash = label
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    PALETTE[hash as usize % PALETTE.len()]
}

fn row_label(r: &Row, res: &ExperimentResult) -> String {
    let mut s = r.imp.clone();
    if r.imp != "seq" || res.plan.threads.iter().any(|&t| t != 1) {
        s.push_str(&format!(" ({} thr)", r.threads));
    }
    if !r.param.is_empty() {
        match res.plan.param_name {
            Some(n) => s.push_str(&format!(" {n} {}", r.param)),
            None => s.push_str(&format!(" min_len {}", r.param)),
        }
    }
    s
}

fn bars(root: &DrawingArea<SVGBackend<'_>, Shift>, res: &ExperimentResult) -> DrawResult {
    let plan = &res.plan;
    let n = res.rows.len() as i32;
    let max = res
        .rows
        .iter()
        .map(|r| r.per_unit_ns)
        .fold(0.0, f64::max)
        .max(1e-9);
    let labels: Vec<String> = res.rows.iter().map(|r| row_label(r, res)).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("{} (threads: {})", plan.title, plan.threads[0]),
            (FONT, 20).into_font().style(FontStyle::Bold),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(200)
        .build_cartesian_2d(0.0..max * 1.25, (0..(n - 1).max(0)).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(220, 220, 220))
        .x_desc(format!(
            "median wall time divided by {} count [ns per {}]",
            plan.unit, plan.unit
        ))
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels
                .get((n - 1 - *i) as usize)
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        })
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()?;
    chart.draw_series(res.rows.iter().enumerate().map(|(k, r)| {
        let i = n - 1 - k as i32;
        let mut bar = Rectangle::new(
            [
                (0.0, SegmentValue::Exact(i)),
                (r.per_unit_ns, SegmentValue::Exact(i + 1)),
            ],
            colour(&r.imp).filled(),
        );
        bar.set_margin(6, 6, 0, 0);
        bar
    }))?;
    chart.draw_series(res.rows.iter().enumerate().map(|(k, r)| {
        let i = n - 1 - k as i32;
        Text::new(
            format!(" {}", fmt_ns(r.per_unit_ns)),
            (r.per_unit_ns, SegmentValue::CenterOf(i)),
            TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
        )
    }))?;
    Ok(())
}

/// One line of a line chart.
struct Line {
    label: String,
    imp: String,
    /// Opacity: lighter lines for fewer threads of the same implementation.
    shade: f64,
    pts: Vec<(f64, f64)>,
}

/// Tick labels for axes whose values are integers (threads, cutoffs).
fn integer_label(v: &f64) -> String {
    if v.fract() == 0.0 && *v >= 0.0 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// Lines keyed by a label, in first-seen order.
fn group<'r>(
    rows: impl Iterator<Item = &'r Row>,
    key: impl Fn(&Row) -> String,
) -> Vec<(String, String, Vec<&'r Row>)> {
    let mut out: Vec<(String, String, Vec<&Row>)> = Vec::new();
    for r in rows {
        let k = key(r);
        match out.iter_mut().find(|g| g.0 == k) {
            Some(g) => g.2.push(r),
            None => out.push((k, r.imp.clone(), vec![r])),
        }
    }
    out
}

fn draw_lines<'a, DB: DrawingBackend + 'a, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    mut legend: Vec<LegendEntry>,
    lines: Vec<Line>,
) -> DrawResult<Vec<LegendEntry>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
    DB::ErrorType: 'static,
{
    for Line {
        label,
        imp,
        shade,
        pts,
    } in lines
    {
        let c = colour(&imp).mix(shade);
        let width = if imp == "seq" { 1 } else { 2 };
        chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(width)))?;
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled())))?;
        legend.push(LegendEntry {
            label,
            colour: c,
            width,
        });
    }
    Ok(legend)
}

fn speed_up(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    res: &ExperimentResult,
) -> DrawResult<Vec<LegendEntry>> {
    let plan = &res.plan;
    let seq = res
        .rows
        .iter()
        .find(|r| r.imp == "seq")
        .map_or(1.0, |r| r.median_ns);
    let max_t = *plan.threads.iter().max().unwrap_or(&1) as f64;
    let others = res.rows.iter().filter(|r| r.imp != "seq");
    let lines: Vec<_> = group(others, |r| r.imp.clone())
        .into_iter()
        .map(|(label, imp, rows)| {
            let mut pts: Vec<(f64, f64)> = rows
                .iter()
                .map(|r| (r.threads as f64, seq / r.median_ns))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                label,
                imp,
                shade: 1.0,
                pts,
            }
        })
        .collect();
    let max_y = lines
        .iter()
        .flat_map(|l| l.pts.iter().map(|p| p.1))
        .fold(1.0, f64::max)
        * 1.1;
    let x_max = max_t * 1.05 + 0.5;
    let mut chart = ChartBuilder::on(area)
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..max_y)?;
    chart
        .configure_mesh()
        .light_line_style(RGBColor(240, 240, 240))
        .x_desc("threads")
        .x_label_formatter(&integer_label)
        .y_desc("speed-up over seq [seq median time / median time]")
        .y_label_formatter(&three_digits)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()?;
    let ideal = RGBColor(190, 190, 190).mix(1.0);
    let ideal_max = max_t.min(max_y);
    chart.draw_series(LineSeries::new(
        vec![(0.0, 0.0), (ideal_max, ideal_max)],
        ideal.stroke_width(1),
    ))?;
    let seq_colour = colour("seq").mix(1.0);
    chart.draw_series(LineSeries::new(
        vec![(0.0, 1.0), (x_max, 1.0)],
        seq_colour.stroke_width(1),
    ))?;
    let legend = vec![
        LegendEntry {
            label: "linear speed-up".into(),
            colour: ideal,
            width: 1,
        },
        LegendEntry {
            label: "seq (= 1)".into(),
            colour: seq_colour,
            width: 1,
        },
    ];
    draw_lines(&mut chart, legend, lines)
}

fn param_sweep(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    res: &ExperimentResult,
) -> DrawResult<Vec<LegendEntry>> {
    let plan = &res.plan;
    let pname = plan.param_name.unwrap_or("parameter");
    let many_threads = plan.threads.len() > 1;
    // Parameter values sit at evenly spaced positions 0, 1, 2... (sweeps such as
    // work 0, 1, 2, 4 ... 64 are geometric), labelled with their values.
    let mut values: Vec<u64> = plan.params.iter().map(|p| p.unwrap_or(0)).collect();
    values.sort_unstable();
    values.dedup();
    let position = |v: u64| values.iter().position(|&x| x == v).unwrap_or(0) as f64;
    let (x_lo, x_hi) = (0.0, (values.len().max(1) - 1) as f64);
    let tick = |x: &f64| {
        if x.fract() == 0.0 && *x >= 0.0 {
            values
                .get(*x as usize)
                .map(|v| v.to_string())
                .unwrap_or_default()
        } else {
            String::new()
        }
    };
    let metric = plan.sweep_metric;
    let value = |r: &Row| match metric {
        SweepMetric::TimePerUnit => r.per_unit_ns,
        SweepMetric::RatioToSeq => r.ratio_to_seq,
    };
    let lines: Vec<_> = group(res.rows.iter(), |r| {
        if many_threads && r.imp != "seq" {
            format!("{} ({} thr)", r.imp, r.threads)
        } else {
            r.imp.clone()
        }
    })
    .into_iter()
    .map(|(label, imp, rows)| {
        let mut pts: Vec<(f64, f64)> = if rows.len() == 1 && rows[0].param.is_empty() {
            // A parameter-independent baseline: a flat line across the sweep.
            vec![(x_lo, value(rows[0])), (x_hi, value(rows[0]))]
        } else {
            rows.iter()
                .map(|r| (position(r.param.parse().unwrap_or(0)), value(r)))
                .collect()
        };
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let t = rows[0].threads;
        let rank = plan.threads.iter().filter(|&&x| x <= t).count().max(1) as f64;
        let shade = if imp == "seq" {
            1.0
        } else {
            0.35 + 0.65 * rank / plan.threads.len() as f64
        };
        Line {
            label,
            imp,
            shade,
            pts,
        }
    })
    .collect();
    let ys = lines.iter().flat_map(|l| l.pts.iter().map(|p| p.1));
    let (y_lo, y_hi) = ys.fold((f64::MAX, f64::MIN), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let x_range = (x_lo - 0.4)..(x_hi + 0.4);
    let ticks = values.len().max(2);
    let x_desc = match pname {
        "work" => "work per node [hash rounds]".to_string(),
        "cutoff" => "cutoff [fork only above this n]".to_string(),
        other => other.to_string(),
    };
    let legend = Vec::new();
    match metric {
        SweepMetric::TimePerUnit => {
            let y_range = (y_lo.max(1e-6) / 1.3..y_hi.max(1e-6) * 1.3).log_scale();
            let mut chart = ChartBuilder::on(area)
                .margin(15)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d(x_range, y_range)?;
            chart
                .configure_mesh()
                .light_line_style(RGBColor(240, 240, 240))
                .x_desc(x_desc)
                .x_labels(ticks)
                .x_label_formatter(&tick)
                .y_desc(format!("median time per {} [ns, log scale]", plan.unit))
                .y_label_formatter(&three_digits)
                .label_style((FONT, 14))
                .axis_desc_style((FONT, 15))
                .draw()?;
            draw_lines(&mut chart, legend, lines)
        }
        SweepMetric::RatioToSeq => {
            let mut chart = ChartBuilder::on(area)
                .margin(15)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d(x_range, 0.0..y_hi.max(1.0) * 1.1)?;
            chart
                .configure_mesh()
                .light_line_style(RGBColor(240, 240, 240))
                .x_desc(x_desc)
                .x_labels(ticks)
                .x_label_formatter(&tick)
                .y_desc("time relative to seq at the same work [median / seq median]")
                .y_label_formatter(&three_digits)
                .label_style((FONT, 14))
                .axis_desc_style((FONT, 15))
                .draw()?;
            draw_lines(&mut chart, legend, lines)
        }
    }
}
