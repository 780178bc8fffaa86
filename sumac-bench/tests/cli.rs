//! Command-line tests of the `sumac-bench` binary: tiny inputs, one sample, no
//! warm-up, so the whole file runs in seconds even in debug builds.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HEADER: &str =
    "bench,size,impl,threads,param,min_ns,median_ns,max_ns,per_unit_ns,ratio_to_seq";

/// Runs the binary with exactly `args`.
fn bench_raw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sumac-bench"))
        .args(args)
        .output()
        .expect("run sumac-bench")
}

/// Runs the binary with `args` plus flags that keep it fast and quiet.
fn bench(args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend(["--samples", "1", "--warmup-ms", "0", "--quiet"]);
    bench_raw(&all)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sumac-bench-cli-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

/// Exit code 2 with a single error line on stderr that names `flag`.
fn assert_flag_error(o: &Output, flag: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line, got:\n{err}");
    assert!(
        lines[0].contains(flag),
        "'{}' does not name {flag}",
        lines[0]
    );
}

fn read_csv(path: &Path) -> Vec<Vec<String>> {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER));
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn assert_svg(path: &Path) {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&text).expect("SVG parses as XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(
        doc.descendants().any(|n| n.has_tag_name("text")),
        "no text in {}",
        path.display()
    );
}

#[test]
fn default_run_at_tiny_sizes_prints_the_headline_table() {
    let o = bench(&["--smoke", "--threads", "1,2"]);
    assert_ok(&o);
    let out = stdout(&o);
    for needle in [
        "tree-sum, 100 nodes",
        "tree-sum, 1,000 nodes",
        "fib(15)",
        "sumac",
        "rayon",
        "chili",
        "static",
        "ratio",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
    assert!(
        out.contains("promotions/s")
            && out.contains("jobs run by thieves/s")
            && out.contains("sleeps/s")
    );
}

#[test]
fn help_lists_every_workload() {
    let o = bench_raw(&["--help"]);
    assert_ok(&o);
    let out = stdout(&o);
    for w in [
        "tree-sum",
        "fib",
        "iota",
        "for-irregular",
        "lu",
        "matmul",
        "sum-squares",
        "sort",
        "bfs",
        "knucleotide",
        "suite",
        "headline",
        "graph",
    ] {
        assert!(out.contains(w), "--help does not list {w}:\n{out}");
    }
}

#[test]
fn csv_has_the_exact_columns_and_one_row_per_run() {
    let dir = scratch("csv");
    let csv = dir.join("fib.csv");
    let o = bench(&[
        "fib",
        "--n",
        "12",
        "--cutoff",
        "1,3",
        "--threads",
        "1,2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let rows = read_csv(&csv);
    // seq once, then sumac, rayon, chili x 2 thread counts x 2 cutoffs.
    assert_eq!(rows.len(), 1 + 3 * 2 * 2);
    for r in &rows {
        assert_eq!(r.len(), 10, "{r:?}");
        assert_eq!(r[0], "fib");
        assert_eq!(r[1], "12");
        let (min, median, max): (f64, f64, f64) = (
            r[5].parse().unwrap(),
            r[6].parse().unwrap(),
            r[7].parse().unwrap(),
        );
        assert!(min > 0.0 && min <= median && median <= max);
        let per_unit: f64 = r[8].parse().unwrap();
        assert!(
            (per_unit - median / 465.0).abs() < 1e-6 * median,
            "fib(12) makes 465 calls"
        );
    }
    assert_eq!(rows[0][2], "seq");
    assert_eq!(rows[0][4], "");
    assert_eq!(rows[0][9].parse::<f64>().unwrap(), 1.0);
    assert!(rows[1..].iter().all(|r| r[4] == "1" || r[4] == "3"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_loop_workload_runs_and_rayon_tuned_reports_its_min_len() {
    let dir = scratch("loops");
    let csv = dir.join("loops.csv");
    let c = csv.to_str().unwrap();
    for args in [
        &["iota", "--len", "1000"][..],
        &["for-irregular", "--len", "50", "--limit", "20"],
        &["lu", "--size", "24"],
        &["matmul", "--size", "16"],
        &["sum-squares", "--len", "1000"],
        &["sort", "--len", "1000"],
        &["jacobi", "--n", "16", "--steps", "3"],
    ] {
        let mut a = args.to_vec();
        a.extend(["--threads", "1,2", "--csv", c]);
        let o = bench(&a);
        assert_ok(&o);
        let rows = read_csv(&csv);
        let tuned: Vec<_> = rows.iter().filter(|r| r[2] == "rayon-tuned").collect();
        if args[0] == "sort" {
            let benches: Vec<_> = rows.iter().map(|r| r[0].as_str()).collect();
            assert!(benches.contains(&"sort-unstable") && benches.contains(&"sort-stable"));
            assert!(tuned.is_empty());
        } else {
            assert_eq!(tuned.len(), 2, "{args:?}");
            assert!(tuned
                .iter()
                .all(|r| ["1", "16", "256", "4096"].contains(&r[4].as_str())));
        }
    }
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn tree_shapes_work_sweep_and_static_baseline() {
    let dir = scratch("shapes");
    let csv = dir.join("t.csv");
    for shape in ["balanced", "left-deep", "random"] {
        let o = bench(&[
            "tree-sum",
            "--nodes",
            "3000",
            "--shape",
            shape,
            "--work",
            "0,4",
            "--threads",
            "1,3",
            "--csv",
            csv.to_str().unwrap(),
        ]);
        assert_ok(&o);
        let rows = read_csv(&csv);
        assert!(rows.iter().any(|r| r[2] == "static" && r[3] == "3"));
        // seq once per work value.
        assert_eq!(rows.iter().filter(|r| r[2] == "seq").count(), 2);
    }
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn svg_figures_parse_as_xml() {
    let dir = scratch("svg");
    let cases: [(&str, &[&str]); 3] = [
        (
            "bars.svg",
            &["tree-sum", "--nodes", "1000", "--threads", "2"],
        ),
        (
            "speedup.svg",
            &["tree-sum", "--nodes", "1000", "--threads", "1,2,4"],
        ),
        (
            "cutoffs.svg",
            &["fib", "--n", "12", "--cutoff", "1,4,8", "--threads", "2"],
        ),
    ];
    for (name, args) in cases {
        let path = dir.join(name);
        let mut a = args.to_vec();
        a.extend(["--svg", path.to_str().unwrap()]);
        assert_ok(&bench(&a));
        assert_svg(&path);
    }
    // Several experiments: one figure each, named after the experiment.
    let many = dir.join("sort.svg");
    assert_ok(&bench(&[
        "sort",
        "--len",
        "100",
        "--threads",
        "1",
        "--svg",
        many.to_str().unwrap(),
    ]));
    assert_svg(&dir.join("sort-sort-unstable-100.svg"));
    assert_svg(&dir.join("sort-sort-stable-100.svg"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn suite_writes_csv_svg_and_a_generated_report() {
    let dir = scratch("suite");
    let out = dir.join("results");
    let o = bench(&[
        "suite",
        "--smoke",
        "--threads",
        "1,2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let report = fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(report.contains("| impl | threads |"));
    let figures = report.matches("![").count();
    assert!(figures >= 10, "{figures} figures in REPORT.md");
    for entry in fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        match path.extension().and_then(|e| e.to_str()) {
            Some("svg") => assert_svg(&path),
            Some("csv") => assert!(!read_csv(&path).is_empty()),
            Some("md") => {}
            _ => panic!("unexpected file {}", path.display()),
        }
    }
    assert!(out.join("tree-sum-100.csv").exists());
    // A partial re-run keeps the other experiments' results in the report.
    let o = bench(&[
        "suite",
        "--smoke",
        "--threads",
        "1",
        "--only",
        "fib",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let report = fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(report.contains("from an earlier run"));
    assert!(!stdout(&o).contains("tree-sum, 100 nodes"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_result_mismatch_exits_1_and_writes_nothing() {
    let dir = scratch("mismatch");
    let csv = dir.join("x.csv");
    let o = bench(&[
        "tree-sum",
        "--nodes",
        "100",
        "--threads",
        "1",
        "--inject-mismatch",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("mismatch"));
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing may be written"
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_workload_and_bad_flags_exit_2_with_usage() {
    let o = bench(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("frobnicate"));
    let o = bench(&["tree-sum", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Usage"));
    let o = bench(&["tree-sum", "--nodes", "many"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--nodes"));
}

#[test]
fn bad_implementations_exit_2() {
    assert_flag_error(
        &bench(&["tree-sum", "--nodes", "10", "--impls", "seq,tbb"]),
        "--impls",
    );
    assert_flag_error(
        &bench(&["tree-sum", "--nodes", "10", "--impls", ""]),
        "--impls",
    );
    assert_flag_error(
        &bench(&["iota", "--len", "10", "--impls", "chili"]),
        "--impls",
    );
    assert_flag_error(
        &bench(&["fib", "--n", "10", "--impls", "rayon-tuned"]),
        "--impls",
    );
}

#[test]
fn empty_or_zero_thread_lists_exit_2() {
    for t in ["", ",", "0", "1,0", "two"] {
        assert_flag_error(
            &bench(&["tree-sum", "--nodes", "10", "--threads", t]),
            "--threads",
        );
    }
}

#[test]
fn zero_sizes_exit_2() {
    for (args, flag) in [
        (&["tree-sum", "--nodes", "0"][..], "--nodes"),
        (&["fib", "--n", "0"], "--n"),
        (&["iota", "--len", "0"], "--len"),
        (&["for-irregular", "--len", "0"], "--len"),
        (&["for-irregular", "--limit", "10"], "--limit"),
        (&["lu", "--size", "0"], "--size"),
        (&["matmul", "--size", "0"], "--size"),
        (&["sum-squares", "--len", "0"], "--len"),
        (&["sort", "--len", "0"], "--len"),
        (&["jacobi", "--n", "2"], "--n"),
        (&["jacobi", "--steps", "0"], "--steps"),
    ] {
        assert_flag_error(&bench(args), flag);
    }
    assert_flag_error(
        &bench_raw(&["fib", "--n", "5", "--samples", "0"]),
        "--samples",
    );
}

#[test]
fn unwritable_outputs_exit_2_before_running() {
    let dir = scratch("unwritable");
    let file = dir.join("plain-file");
    fs::write(&file, "x").unwrap();
    let inside_file = file.join("out.csv");
    let p = inside_file.to_str().unwrap();
    let started = std::time::Instant::now();
    assert_flag_error(
        &bench(&["tree-sum", "--nodes", "100000000", "--csv", p]),
        "--csv",
    );
    assert!(
        started.elapsed().as_secs() < 5,
        "must fail before building the input"
    );
    assert_flag_error(&bench(&["tree-sum", "--nodes", "10", "--svg", p]), "--svg");
    assert_flag_error(
        &bench(&["tree-sum", "--nodes", "10", "--csv", dir.to_str().unwrap()]),
        "--csv",
    );
    assert_flag_error(&bench(&["suite", "--smoke", "--out", p]), "--out");
    // Nothing was left behind.
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
    fs::remove_dir_all(dir).unwrap();
}

#[cfg(not(feature = "trace"))]
#[test]
fn trace_without_the_feature_exits_2() {
    let o = bench(&[
        "tree-sum",
        "--nodes",
        "10",
        "--trace",
        "/tmp/never-written.json",
    ]);
    assert_flag_error(&o, "--trace");
    assert!(stderr(&o).contains("--features trace"));
}

#[cfg(feature = "trace")]
#[test]
fn trace_is_chrome_json_with_events_from_several_workers() {
    let dir = scratch("trace");
    let path = dir.join("trace.json");
    let o = bench(&[
        "tree-sum",
        "--nodes",
        "300000",
        "--threads",
        "4",
        "--impls",
        "sumac",
        "--trace",
        path.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(&path).unwrap()).expect("valid JSON");
    let events = json["traceEvents"].as_array().expect("traceEvents array");
    let workers: std::collections::BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] != "M")
        .filter_map(|e| e["tid"].as_u64())
        .collect();
    assert!(workers.len() > 1, "events from workers {workers:?} only");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bfs_and_knucleotide_write_the_shared_columns_and_their_notes() {
    let dir = scratch("apps");
    let csv = dir.join("bfs.csv");
    let o = bench(&[
        "bfs",
        "--scale",
        "10",
        "--keys",
        "4",
        "--threads",
        "1,2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    for needle in [
        "bfs, Kronecker scale 10",
        "bfs-do, Kronecker scale 10",
        "generation:",
        "construction (kernel 1):",
        "4 searches validated (5 checks each); harmonic-mean TEPS",
        "median time per search",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
    let rows = read_csv(&csv);
    // Two benches: seq, then sumac and rayon at 1 and 2 threads.
    assert_eq!(rows.len(), 2 * (1 + 2 * 2));
    assert!(rows.iter().all(|r| r[0] == "bfs" || r[0] == "bfs-do"));
    assert!(rows.iter().all(|r| r[1] == "10"));
    let csv = dir.join("kn.csv");
    let o = bench(&[
        "knucleotide",
        "--n",
        "1000",
        "--print",
        "--threads",
        "2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains("\tGGTATTTTAATTTATAGT\n") && out.contains(">THREE section of fasta 1,000")
    );
    let rows = read_csv(&csv);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r[0], "knucleotide");
        let (median, per_unit): (f64, f64) = (r[6].parse().unwrap(), r[8].parse().unwrap());
        assert!(
            (per_unit - median / 5000.0).abs() < 1e-6 * median,
            "ns per base"
        );
    }
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_bfs_and_knucleotide_flags_exit_2() {
    for (args, flag) in [
        (&["bfs", "--scale", "0"][..], "--scale"),
        (&["bfs", "--scale", "27"], "--scale"),
        (&["bfs", "--scale", "x"], "--scale"),
        (&["bfs", "--keys", "0"], "--keys"),
        (&["bfs", "--direction", "sideways"], "--direction"),
        (&["bfs", "--scale", "8", "--impls", "chili"], "--impls"),
        (&["knucleotide", "--n", "0"], "--n"),
        (&["knucleotide", "--n", "1000000000"], "--n"),
        (
            &["knucleotide", "--n", "1000", "--impls", "static"],
            "--impls",
        ),
    ] {
        let o = bench(args);
        if args.contains(&"x") || args.contains(&"sideways") {
            // clap's own usage error.
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        } else {
            assert_flag_error(&o, flag);
        }
    }
}

#[test]
fn message_passing_workloads_run_every_peer_at_tiny_sizes() {
    let o = bench(&[
        "channel",
        "--messages",
        "300",
        "--shapes",
        "spsc,mpmc,select_rx",
        "--capacities",
        "0,1,N,unbounded",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    for name in ["sumac", "crossbeam-channel", "flume", "kanal", "crossfire"] {
        assert!(out.contains(name), "{name} missing:\n{out}");
    }
    for args in [
        &["ring", "--tasks", "5", "--laps", "10", "--threads", "1,2"][..],
        &["threadring", "--n", "1000", "--threads", "2"][..],
        &["oneshot", "--rounds", "100", "--threads", "2"][..],
    ] {
        let o = bench(args);
        assert_ok(&o);
        let out = stdout(&o);
        for name in ["sumac", "tokio", "async-executor"] {
            assert!(out.contains(name), "{name} missing from {args:?}:\n{out}");
        }
    }
    assert!(
        stdout(&bench(&["threadring", "--n", "1000", "--threads", "1"]))
            .contains("the token ends with task 498")
    );
}

#[test]
fn bad_message_passing_flags_exit_2() {
    assert_flag_error(&bench(&["channel", "--shapes", "spmc"]), "--shapes");
    assert_flag_error(&bench(&["channel", "--capacities", "x"]), "--capacities");
    assert_flag_error(&bench(&["channel", "--messages", "0"]), "--messages");
    assert_flag_error(&bench(&["ring", "--tasks", "0"]), "--tasks");
    assert_flag_error(&bench(&["ring", "--laps", "0"]), "--laps");
    assert_flag_error(&bench(&["threadring", "--n", "0"]), "--n");
    assert_flag_error(&bench(&["oneshot", "--rounds", "0"]), "--rounds");
    assert_flag_error(&bench(&["ring", "--impls", "flume"]), "--impls");
}

#[test]
fn every_graph_workload_runs_every_implementation_with_checked_results() {
    let dir = scratch("graph");
    for (args, bench_name) in [
        (
            vec!["graph", "linear-chain", "--size", "200"],
            "graph-linear-chain",
        ),
        (
            vec!["graph", "binary-tree", "--size", "6"],
            "graph-binary-tree",
        ),
        (
            vec!["graph", "wavefront", "--size", "12"],
            "graph-wavefront",
        ),
        (
            vec!["graph", "graph-traversal", "--size", "12"],
            "graph-traversal",
        ),
    ] {
        let csv = dir.join(format!("{bench_name}.csv"));
        let mut all = args.clone();
        all.extend(["--threads", "1,2", "--csv", csv.to_str().unwrap()]);
        let o = bench(&all);
        assert_ok(&o);
        let rows = read_csv(&csv);
        for imp in ["seq", "sumac", "rayon", "channel-pool"] {
            assert!(
                rows.iter().any(|r| r[0] == bench_name && r[2] == imp),
                "{bench_name}: no {imp} row"
            );
        }
    }
    let o = bench(&[
        "graph",
        "bikeshed",
        "--tasks",
        "5000",
        "--producers",
        "2",
        "--consumers",
        "1,2",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains("Bikeshed E") && out.contains("Bikeshed A"),
        "{out}"
    );
    let o = bench(&["graph", "task-cost", "--count", "500", "--threads", "1"]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains("graph-add-dependency-x8") && out.contains("graph-run-task"),
        "{out}"
    );
}

#[test]
fn bad_graph_flags_exit_2() {
    assert_flag_error(
        &bench(&["graph", "bikeshed", "--producers", "0"]),
        "--producers",
    );
    assert_flag_error(&bench(&["graph", "bikeshed", "--tasks", "0"]), "--tasks");
    assert_flag_error(
        &bench(&["graph", "bikeshed", "--consumers", "0"]),
        "--consumers",
    );
    assert_flag_error(&bench(&["graph", "linear-chain", "--size", "0"]), "--size");
    assert_flag_error(
        &bench(&["graph", "wavefront", "--size", "100000"]),
        "--size",
    );
    assert_flag_error(&bench(&["graph", "task-cost", "--count", "0"]), "--count");
    assert_flag_error(
        &bench(&["graph", "linear-chain", "--impls", "chili"]),
        "--impls",
    );
    let o = bench_raw(&["graph", "bikeshed", "--variant", "z"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_suite_lists_the_graph_experiments() {
    let o = bench_raw(&["suite", "--list", "--smoke"]);
    assert_ok(&o);
    let out = stdout(&o);
    for id in [
        "graph-bikeshed-E",
        "graph-bikeshed-A",
        "graph-linear-chain",
        "graph-binary-tree",
        "graph-wavefront",
        "graph-traversal",
        "graph-create-task",
        "graph-add-dependency",
        "graph-run-task",
    ] {
        assert!(out.contains(id), "suite --list lacks {id}:\n{out}");
    }
}

#[test]
fn policy_variants_run_side_by_side_as_rows_of_their_own() {
    let dir = scratch("policy");
    let csv = dir.join("p.csv");
    let o = bench(&[
        "increment",
        "--len",
        "1000",
        "--policy",
        "default,-guests",
        "--from-main",
        "--threads",
        "1,2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let rows = read_csv(&csv);
    for label in ["sumac", "sumac[-guests]"] {
        let threads: Vec<&str> = rows
            .iter()
            .filter(|r| r[2] == label)
            .map(|r| r[3].as_str())
            .collect();
        assert_eq!(threads, ["1", "2"], "{label} in {rows:?}");
    }
    assert!(
        stdout(&o).contains("sumac[-guests]   1 thr"),
        "{}",
        stdout(&o)
    );
    // Several mechanisms off in one variant; no default variant at all.
    let o = bench(&[
        "tree-sum",
        "--nodes",
        "1000",
        "--policy",
        "-rescue+-age-rule",
        "--threads",
        "2",
        "--impls",
        "seq,sumac",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let impls: Vec<String> = read_csv(&csv).into_iter().map(|r| r[2].clone()).collect();
    assert_eq!(impls, ["seq", "sumac[-rescue+-age-rule]"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_policies_exit_2_naming_the_valid_mechanisms() {
    for bad in ["", "rescue", "-nope", "-rescue+nope", "default,-"] {
        let o = bench(&["tree-sum", "--nodes", "10", "--policy", bad]);
        assert_flag_error(&o, "--policy");
    }
    let o = bench(&["tree-sum", "--nodes", "10", "--policy", "-nope"]);
    assert!(stderr(&o).contains("age-rule") && stderr(&o).contains("idle-spin"));
    // A variant with no sumac run to apply to.
    assert_flag_error(
        &bench(&[
            "iota",
            "--len",
            "10",
            "--impls",
            "seq,rayon",
            "--policy",
            "-rescue",
        ]),
        "--policy",
    );
}

#[test]
fn long_leaves_runs_every_shape_for_seq_sumac_and_rayon() {
    let dir = scratch("leaves");
    let csv = dir.join("l.csv");
    let o = bench(&[
        "long-leaves",
        "--leaf-us",
        "50",
        "--threads",
        "2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let rows = read_csv(&csv);
    for shape in [
        "join2",
        "join4",
        "tree3",
        "tree4",
        "scope4",
        "scope-body",
        "loop",
    ] {
        let bench = format!("long-leaves-{shape}");
        let impls: Vec<&str> = rows
            .iter()
            .filter(|r| r[0] == bench)
            .map(|r| r[2].as_str())
            .collect();
        assert_eq!(impls, ["seq", "sumac", "rayon"], "{bench} in {rows:?}");
    }
    assert!(stdout(&o).contains("ceil(16 / t)"), "{}", stdout(&o));
    let o = bench(&[
        "long-leaves",
        "--leaf-us",
        "20",
        "--shape",
        "loop",
        "--items",
        "5",
        "--sleep",
        "--threads",
        "3",
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("par_iter over 5 leaves, 20 µs sleeping leaves"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn fork_overhead_compares_the_fork_path_with_the_branch_floor() {
    let dir = scratch("fork-overhead");
    let csv = dir.join("f.csv");
    let o = bench(&[
        "fork-overhead",
        "--nodes",
        "100,1000",
        "--fib",
        "12",
        "--threads",
        "1,2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let rows = read_csv(&csv);
    for bench in ["tree-sum", "fib"] {
        let impls: Vec<&str> = rows
            .iter()
            .filter(|r| r[0] == bench && r[1] != "100")
            .map(|r| r[2].as_str())
            .collect();
        assert_eq!(
            impls,
            ["seq", "sumac", "sumac", "rayon", "rayon", "branch-floor"],
            "{bench}"
        );
    }
    assert!(stdout(&o).contains("fork overhead: tree-sum, 100 nodes"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_long_leaves_and_fork_overhead_flags_exit_2() {
    for (args, flag) in [
        (&["long-leaves", "--leaf-us", "0"][..], "--leaf-us"),
        (&["long-leaves", "--leaf-us", "20000000"], "--leaf-us"),
        (&["long-leaves", "--items", "0"], "--items"),
        (&["fork-overhead", "--nodes", "0"], "--nodes"),
        (&["fork-overhead", "--nodes", ""], "--nodes"),
        (&["fork-overhead", "--fib", "91"], "--fib"),
    ] {
        assert_flag_error(&bench(args), flag);
    }
    let o = bench(&["long-leaves", "--shape", "spiral"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Usage") || stderr(&o).contains("possible values"));
}

#[test]
fn the_suite_lists_the_stencils_leaves_fork_overhead_and_calls_from_main() {
    let o = bench_raw(&["suite", "--list", "--smoke", "--threads", "1,2"]);
    assert_ok(&o);
    let out = stdout(&o);
    for id in [
        "jacobi-8x4 ",
        "jacobi-16x4 ",
        "increment-100 ",
        "increment-100-from-main ",
        "increment-1000-from-main ",
        "increment-1000-unsplit-from-main ",
        "sum-squares-100-from-main ",
        "tree-sum-100-from-main ",
        "fork-overhead-tree-sum-100 ",
        "fork-overhead-fib-15-cutoff1 ",
        "long-leaves-join2-100us ",
        "long-leaves-loop-100us ",
    ] {
        assert!(out.contains(id), "suite --list lacks {id}:\n{out}");
    }
}
