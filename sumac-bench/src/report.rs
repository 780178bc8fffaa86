//! Results: the CSV row type, the stdout table and CSV serialisation.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::experiment::{ExperimentResult, PAIR_BELOW_NS};
use crate::impls::Impl;

/// One result row; the field order is the CSV column order:
/// `bench,size,impl,threads,param,min_ns,median_ns,max_ns,per_unit_ns,ratio_to_seq`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Workload name (`tree-sum`, `fib`, `sort-stable`...).
    pub bench: String,
    /// Input size (nodes, n, length or matrix side).
    pub size: u64,
    /// Implementation name.
    #[serde(rename = "impl")]
    pub imp: String,
    /// Thread count (1 for `seq`).
    pub threads: usize,
    /// The cutoff / work per node, or the best `with_min_len` for `rayon-tuned`; else empty.
    pub param: String,
    /// Fastest sample, ns per run.
    pub min_ns: f64,
    /// Median sample, ns per run.
    pub median_ns: f64,
    /// Slowest sample, ns per run.
    pub max_ns: f64,
    /// Median divided by the number of units (nodes, calls, elements...).
    pub per_unit_ns: f64,
    /// Median divided by `seq`'s median (1 for `seq`).
    pub ratio_to_seq: f64,
}

impl Row {
    /// The row's median and fastest time per unit and its median per run, formatted,
    /// for a row of `units` units.
    fn times(&self, units: f64) -> [String; 3] {
        [
            fmt_ns(self.median_ns / units),
            fmt_ns(self.min_ns / units),
            fmt_ns(self.median_ns),
        ]
    }
}

/// The CSV header, exactly.
pub const CSV_HEADER: &str =
    "bench,size,impl,threads,param,min_ns,median_ns,max_ns,per_unit_ns,ratio_to_seq";

/// Serialises rows as CSV (with the header).
pub fn to_csv(rows: &[Row]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        w.write_record(CSV_HEADER.split(','))
            .expect("in-memory write");
    }
    for r in rows {
        w.serialize(r).expect("in-memory write");
    }
    w.into_inner().expect("in-memory flush")
}

/// Formats a time in ns with about four significant digits.
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e4 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns >= 100.0 {
        format!("{ns:.0} ns")
    } else if ns >= 10.0 {
        format!("{ns:.1} ns")
    } else {
        format!("{ns:.3} ns")
    }
}

/// Formats a rate (events per second) compactly.
pub fn fmt_rate(r: f64) -> String {
    if r >= 1e9 {
        format!("{:.2}G", r / 1e9)
    } else if r >= 1e6 {
        format!("{:.2}M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}

/// Formats an integer with thousands separators (`1,000,000`).
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What the ratios of an experiment's `rows` divide by: `seq` samples taken alternately with each row's
/// own when one `seq` run is short enough (see [`PAIR_BELOW_NS`]), else the `seq` row's
/// median.
fn ratio_basis(rows: &[Row], pair_long_runs: bool) -> &'static str {
    if pair_long_runs {
        return "median of seq sampled alternately with it";
    }
    let (paired, alone): (Vec<&Row>, Vec<&Row>) = rows
        .iter()
        .filter(|r| r.imp == Impl::Seq.name())
        .partition(|r| r.median_ns < PAIR_BELOW_NS);
    match (paired.is_empty(), alone.is_empty()) {
        (false, true) => "median of seq sampled alternately with it",
        (true, false) => "seq row's median (one seq run is too long to repeat per sample)",
        _ => "median of seq sampled alternately with it, or the seq row's median where one seq run takes 50 ms or more",
    }
}

/// The human-readable table of one experiment, followed by sumac's scheduler
/// activity (promotions, jobs run by thieves and sleeps per second).
pub fn table(res: &ExperimentResult) -> String {
    let plan = &res.plan;
    let unit = plan.unit;
    let param_head = match plan.param_name {
        Some(name) => name,
        None if res.rows.iter().any(|r| !r.param.is_empty()) => "min_len",
        None => "",
    };
    // The implementation column fits the longest label (policy variants are long).
    let width = res
        .rows
        .iter()
        .map(|r| r.imp.len())
        .max()
        .unwrap_or(0)
        .max(12);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n== {} ==  (time per {unit}; ratio = median / {})",
        plan.title,
        ratio_basis(&res.rows, plan.pair_long_runs)
    );
    let _ = writeln!(
        s,
        "{:<w$} {:>7} {:>8} {:>12} {:>12} {:>12} {:>8}",
        "impl",
        "threads",
        param_head,
        format!("median/{}", short(unit)),
        format!("min/{}", short(unit)),
        "median/run",
        "ratio",
        w = width
    );
    for r in &res.rows {
        let [median, min, per_run] = r.times(plan.units as f64);
        let _ = writeln!(
            s,
            "{:<w$} {:>7} {:>8} {median:>12} {min:>12} {per_run:>12} {:>8.3}",
            r.imp,
            r.threads,
            r.param,
            r.ratio_to_seq,
            w = width
        );
    }
    if res.skipped_runs > 0 {
        let _ = writeln!(
            s,
            "({} runs skipped: time budget exhausted)",
            res.skipped_runs
        );
    }
    for note in &res.notes {
        let _ = writeln!(s, "  {note}");
    }
    if !res.activity.is_empty() {
        let _ = writeln!(
            s,
            "sumac scheduler activity (per second of wall time; idle threads sleep, competing ones steal):"
        );
        for a in &res.activity {
            let p = match (plan.param_name, a.param) {
                (Some(n), Some(v)) => format!(", {n} {v}"),
                _ => String::new(),
            };
            let x = &a.activity;
            let _ = writeln!(
                s,
                "  {} {:>3} thr{p}: {} promotions/s, {} jobs run by thieves/s, {} sleeps/s ({} forks/s, {} wake-ups/s, {} ticks by spinners/s){}",
                a.label,
                a.threads,
                fmt_rate(x.promotions),
                fmt_rate(x.stolen),
                fmt_rate(x.sleeps),
                fmt_rate(x.forks),
                fmt_rate(x.wakeups),
                fmt_rate(x.spinner_ticks),
                x.ramp_up
                    .map(|r| format!("; ramp-up: {}", fmt_ramp_up(&r)))
                    .unwrap_or_default(),
            );
        }
    }
    s
}

/// A ramp-up summary in words: how many of its calls had every place of the pool busy
/// (every worker, or the caller and all workers but one), how soon (median), and how
/// many pieces a call was cut into (median).
fn fmt_ramp_up(r: &crate::impls::RampUpSummary) -> String {
    let after = r
        .all_busy_after
        .map(|t| format!(", after {} (median)", fmt_ns(t.as_nanos() as f64)))
        .unwrap_or_default();
    let workers = match (r.caller_held_a_place, r.workers) {
        (false, 1) => "the one worker".to_string(),
        (false, n) => format!("all {n} workers"),
        (true, 1) => "the caller (the pool's one place)".to_string(),
        (true, 2) => "the caller and 1 worker".to_string(),
        (true, n) => format!("the caller and {} workers", n - 1),
    };
    let pieces = if r.pieces == 1 { "piece" } else { "pieces" };
    format!(
        "{workers} busy in {} of {} calls{after}; {} {pieces} per call (median), calls of {}",
        r.all_busy_calls,
        r.calls,
        r.pieces,
        fmt_ns(r.call.as_nanos() as f64),
    )
}

/// Abbreviation of a unit for column heads.
fn short(unit: &str) -> &str {
    match unit {
        "element" => "elem",
        "iteration" => "iter",
        "multiply-add" => "madd",
        other => other,
    }
}

/// The experiment's rows as a Markdown table, followed by sumac's activity.
pub fn markdown(res: &ExperimentResult) -> String {
    let plan = &res.plan;
    let units = plan.units as f64;
    // The parameter column: the cutoff / work, the tuned min_len, or none at all.
    let param_head = match plan.param_name {
        Some(name) => Some(name),
        None if res.rows.iter().any(|r| !r.param.is_empty()) => Some("min_len (rayon-tuned)"),
        None => None,
    };
    let cell = |text: &str| match param_head {
        Some(_) => format!(" {text} |"),
        None => String::new(),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| impl | threads |{} median per {u} | min per {u} | median per run | ratio to seq |",
        cell(param_head.unwrap_or_default()),
        u = plan.unit
    );
    let _ = writeln!(s, "|---|---:|{}---:|---:|---:|---:|", cell("---:"));
    for r in &res.rows {
        let [median, min, per_run] = r.times(units);
        let _ = writeln!(
            s,
            "| {} | {} |{} {median} | {min} | {per_run} | {:.3} |",
            r.imp,
            r.threads,
            cell(&r.param),
            r.ratio_to_seq
        );
    }
    if res.skipped_runs > 0 {
        let _ = writeln!(
            s,
            "\n{} runs were skipped: the time budget ran out.",
            res.skipped_runs
        );
    }
    if !res.notes.is_empty() {
        s.push('\n');
        for note in &res.notes {
            let _ = writeln!(s, "- {note}");
        }
    }
    if !res.activity.is_empty() {
        // Only a real parameter (cutoff, work) varies between sumac runs.
        let pcell = |text: &str| match plan.param_name {
            Some(_) => format!(" {text} |"),
            None => String::new(),
        };
        let _ = writeln!(s, "\nsumac scheduler activity, per second of wall time:\n");
        let _ = writeln!(
            s,
            "| impl | threads |{} promotions/s | jobs run by thieves/s | sleeps/s | forks/s | ramp-up per call |",
            pcell(plan.param_name.unwrap_or_default())
        );
        let _ = writeln!(s, "|---|---:|{}---:|---:|---:|---:|---|", pcell("---:"));
        for a in &res.activity {
            let x = &a.activity;
            let _ = writeln!(
                s,
                "| {} | {} |{} {} | {} | {} | {} | {} |",
                a.label,
                a.threads,
                pcell(&a.param.map(|v| v.to_string()).unwrap_or_default()),
                fmt_rate(x.promotions),
                fmt_rate(x.stolen),
                fmt_rate(x.sleeps),
                fmt_rate(x.forks),
                x.ramp_up.map(|r| fmt_ramp_up(&r)).unwrap_or_default(),
            );
        }
    }
    s
}

/// Reads rows back from a CSV file written by [`to_csv`].
pub fn read_csv(bytes: &[u8]) -> Result<Vec<Row>, String> {
    csv::Reader::from_reader(bytes)
        .deserialize()
        .collect::<Result<Vec<Row>, _>>()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq_row(median_ns: f64) -> Row {
        Row {
            bench: "fib".into(),
            size: 30,
            imp: "seq".into(),
            threads: 1,
            param: String::new(),
            min_ns: 1.0,
            median_ns,
            max_ns: median_ns + 1.0,
            per_unit_ns: 0.5,
            ratio_to_seq: 1.0,
        }
    }

    #[test]
    fn a_ramp_up_reads_as_english_for_one_worker_and_for_several() {
        let mut r = crate::impls::RampUpSummary {
            calls: 5,
            workers: 1,
            caller_held_a_place: false,
            all_busy_calls: 0,
            all_busy_after: None,
            pieces: 1,
            call: std::time::Duration::from_micros(3),
        };
        assert_eq!(
            fmt_ramp_up(&r),
            "the one worker busy in 0 of 5 calls; 1 piece per call (median), calls of 3000 ns"
        );
        r.workers = 16;
        r.all_busy_calls = 4;
        r.all_busy_after = Some(std::time::Duration::from_micros(640));
        r.pieces = 38;
        let text = fmt_ramp_up(&r);
        assert!(
            text.starts_with("all 16 workers busy in 4 of 5 calls, after ")
                && text.contains("; 38 pieces per call (median)"),
            "{text}"
        );
        r.caller_held_a_place = true;
        assert!(fmt_ramp_up(&r).starts_with("the caller and 15 workers busy in 4 of 5 calls"));
        r.workers = 2;
        assert!(fmt_ramp_up(&r).starts_with("the caller and 1 worker busy in 4 of 5 calls"));
    }

    #[test]
    fn csv_header_is_exact() {
        let text = String::from_utf8(to_csv(&[seq_row(2.0)])).unwrap();
        assert_eq!(text.lines().next().unwrap(), CSV_HEADER);
        let empty = String::from_utf8(to_csv(&[])).unwrap();
        assert_eq!(empty.trim_end(), CSV_HEADER);
    }

    #[test]
    fn the_table_says_which_seq_median_the_ratios_divide_by() {
        let short = seq_row(PAIR_BELOW_NS / 2.0);
        let long = seq_row(PAIR_BELOW_NS * 2.0);
        assert!(ratio_basis(std::slice::from_ref(&short), false).contains("alternately"));
        assert!(!ratio_basis(std::slice::from_ref(&long), false).contains("alternately"));
        let mixed = ratio_basis(&[short, long], false);
        assert!(mixed.contains("alternately") && mixed.contains("50 ms or more"));
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_count(1_000_000), "1,000,000");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_ns(2.4191), "2.419 ns");
        assert_eq!(fmt_ns(3_500_000.0), "3.500 ms");
    }
}
