//! The command as users run it: whole processes, timed from spawn to exit, beside the baselines
//! a reader is measured against (issue 24). Each row is the median wall time of `RUNS` runs and
//! the peak resident memory of one more run under GNU `time` (when `/usr/bin/time` is there).
//!
//! First a start-up table: this bench binary re-run to do nothing, beside `turnkeeper
//! --version`, the fixed cost each process below pays before it reads its file. Then rows, on
//! each workload file:
//! - `serde IgnoredAny`: this bench binary, re-run as a child, reads the file (one exact-size
//!   read) and deserialises it into `serde::de::IgnoredAny`: the practical limit for a reader;
//! - `serde Value round trip`: the same, into a `serde_json::Value`, written back to a file;
//! - `turnkeeper check FILE`, and `turnkeeper repair FILE -o OUT` (OUT in a scratch folder);
//! - `node pass`: `benches/node_pass.mjs`, what the TypeScript peers do per request
//!   (`JSON.parse`, drop empty text blocks, move thinking first, `JSON.stringify`, write), when
//!   `node` is on the path.
//!
//! ```sh
//! TURNKEEPER_BENCH_LARGE=1 TURNKEEPER_BENCH_DUMP=/tmp/tk cargo bench -p turnkeeper-prevent --bench peak_memory
//! TURNKEEPER_BENCH_FILES=/tmp/tk/m10000_100MB.json:/tmp/tk/m10000_100MB_damaged.json \
//!     cargo bench -p turnkeeper-cli --bench process
//! ```
//!
//! Without `TURNKEEPER_BENCH_FILES` it runs on the README's sample
//! (`corpus/damaged/an08_aborted_turn.json`); under `cargo test --benches` (no `--bench`
//! argument) every row runs once, as a smoke test, and nothing is compared. The machine's load
//! (`/proc/loadavg`, `/proc/pressure/cpu`) is printed before and after: read the table with it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `turnkeeper` binary of this build.
const TURNKEEPER: &str = env!("CARGO_BIN_EXE_turnkeeper");

/// One row: a name and the command it runs on a file (with a scratch output path).
struct Row {
    name: &'static str,
    cmd: fn(&Path, &Path) -> Option<Command>,
}

fn me() -> Command {
    // Re-run this binary as a baseline child (see `baseline`).
    Command::new(std::env::current_exe().unwrap_or_else(|_| PathBuf::from("process")))
}

const ROWS: &[Row] = &[
    Row {
        name: "serde IgnoredAny",
        cmd: |f, _| {
            let mut c = me();
            c.arg("--baseline").arg("ignored").arg(f);
            Some(c)
        },
    },
    Row {
        name: "serde Value round trip",
        cmd: |f, out| {
            let mut c = me();
            c.arg("--baseline").arg("value").arg(f).arg(out);
            Some(c)
        },
    },
    Row {
        name: "turnkeeper check",
        cmd: |f, _| {
            let mut c = Command::new(TURNKEEPER);
            c.arg("check").arg(f);
            Some(c)
        },
    },
    Row {
        name: "turnkeeper repair -o FILE",
        cmd: |f, out| {
            let mut c = Command::new(TURNKEEPER);
            c.arg("repair").arg(f).arg("-o").arg(out);
            Some(c)
        },
    },
    Row {
        name: "node pass",
        cmd: |f, out| {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/node_pass.mjs");
            let ok = Command::new("node")
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            ok.then(|| {
                let mut c = Command::new("node");
                c.arg(script).arg(f).arg(out);
                c
            })
        },
    },
];

/// The start-up rows (their commands take no file).
const STARTUP: &[Row] = &[
    Row {
        name: "baseline child, doing nothing",
        cmd: |_, _| {
            let mut c = me();
            c.arg("--baseline").arg("none");
            Some(c)
        },
    },
    Row {
        name: "`turnkeeper --version`",
        cmd: |_, _| {
            let mut c = Command::new(TURNKEEPER);
            c.arg("--version");
            Some(c)
        },
    },
];

/// The baselines, run as this binary's children: `--baseline none` (start and exit),
/// `--baseline ignored FILE` and `--baseline value FILE OUT`.
fn baseline(args: &[String]) -> std::process::ExitCode {
    let read = |p: &str| -> Vec<u8> {
        use std::io::Read;
        let mut f = match std::fs::File::open(p) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{p}: {e}");
                std::process::exit(2);
            }
        };
        let len = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
        let mut buf = Vec::with_capacity(len + 1);
        if let Err(e) = f.read_to_end(&mut buf) {
            eprintln!("{p}: {e}");
            std::process::exit(2);
        }
        buf
    };
    match args {
        // Start the process and do nothing: the fixed cost a baseline run pays.
        [kind] if kind == "none" => std::process::ExitCode::SUCCESS,
        [kind, file] if kind == "ignored" => {
            let bytes = read(file);
            match serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
                Ok(_) => std::process::ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{file}: {e}");
                    std::process::ExitCode::from(1)
                }
            }
        }
        [kind, file, out] if kind == "value" => {
            let bytes = read(file);
            let v: serde_json::Value = match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("{file}: {e}");
                    return std::process::ExitCode::from(1);
                }
            };
            match serde_json::to_vec(&v).map(|b| std::fs::write(out, b)) {
                Ok(Ok(())) => std::process::ExitCode::SUCCESS,
                _ => std::process::ExitCode::from(1),
            }
        }
        _ => {
            eprintln!(
                "usage: --baseline none | --baseline ignored FILE | --baseline value FILE OUT"
            );
            std::process::ExitCode::from(2)
        }
    }
}

/// One timed run: wall time from spawn to exit, or `None` when the command failed to start.
/// Exit codes 0 and 1 (findings) both count as a run; anything else is reported.
fn run_once(mut c: Command) -> Option<Duration> {
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let t = Instant::now();
    let status = c.status().ok()?;
    let d = t.elapsed();
    if !matches!(status.code(), Some(0 | 1)) {
        eprintln!("process: {c:?} exited with {status}");
        return None;
    }
    Some(d)
}

/// Peak resident memory of one run, in KiB, from GNU time (`%M`).
fn peak_kib(c: &Command) -> Option<u64> {
    if !Path::new("/usr/bin/time").exists() {
        return None;
    }
    let mut t = Command::new("/usr/bin/time");
    t.arg("-f")
        .arg("%M")
        .arg(c.get_program())
        .args(c.get_args());
    t.stdout(Stdio::null());
    let out = t.output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines().last()?.trim().parse().ok()
}

fn load() -> String {
    let avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let psi = std::fs::read_to_string("/proc/pressure/cpu").unwrap_or_default();
    let some = psi.lines().next().unwrap_or("").to_owned();
    format!(
        "loadavg {}; cpu pressure {}",
        avg.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        some
    )
}

/// The median wall time of `runs` runs of the command `make` builds, or `None` when one could
/// not be made or failed.
fn median_of(runs: usize, make: impl Fn() -> Option<Command>) -> Option<Duration> {
    let mut times = (0..runs)
        .map(|_| make().and_then(run_once))
        .collect::<Option<Vec<Duration>>>()?;
    times.sort();
    times.get(times.len() / 2).copied()
}

/// The start-up table: what a process costs before it reads anything, the baseline child
/// (`--baseline none`) beside `turnkeeper --version` (the command's own start: the dynamic
/// loader's relocations, the argument parser). The difference is paid by every row below, and
/// is most of the gap on small files. Returns false when a row failed.
fn startup(runs: usize) -> bool {
    // Start-up is short and its spread is wide: more runs than a row on a file.
    let runs = runs * 5;
    println!("\nstart-up (no input)\n| process | wall (median of {runs}) |\n|---|---:|");
    let mut ok = true;
    for row in STARTUP {
        match median_of(runs, || (row.cmd)(Path::new(""), Path::new(""))) {
            Some(d) => println!("| {} | {:.2} ms |", row.name, d.as_secs_f64() * 1e3),
            None => {
                println!("| {} | (failed) |", row.name);
                ok = false;
            }
        }
    }
    ok
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(p) = args.iter().position(|a| a == "--baseline") {
        return baseline(&args[p + 1..]);
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then one run per row.
    let timing = args.iter().any(|a| a == "--bench");
    let runs: usize = if timing {
        std::env::var("TURNKEEPER_BENCH_RUNS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(7)
    } else {
        1
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files: Vec<PathBuf> = match std::env::var("TURNKEEPER_BENCH_FILES") {
        Ok(list) if !list.is_empty() => list.split(':').map(PathBuf::from).collect(),
        _ => vec![root.join("corpus/damaged/an08_aborted_turn.json")],
    };
    let scratch = std::env::temp_dir().join(format!("turnkeeper-process-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        eprintln!("process: {}: {e}", scratch.display());
        return std::process::ExitCode::from(2);
    }
    println!("process bench: {runs} run(s) per row; before: {}", load());
    let mut failed = !startup(runs);
    for f in &files {
        let size = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        println!(
            "\n{} ({:.1} MB)\n| process | wall (median of {runs}) | × IgnoredAny | peak memory | × input |\n|---|---:|---:|---:|---:|",
            f.display(),
            size as f64 / 1e6
        );
        let out = scratch.join("out.json");
        let mut base: Option<Duration> = None;
        for row in ROWS {
            let Some(_) = (row.cmd)(f, &out) else {
                println!("| {} | (not available) | | | |", row.name);
                continue;
            };
            let mut times: Vec<Duration> = Vec::with_capacity(runs);
            for _ in 0..runs {
                let Some(c) = (row.cmd)(f, &out) else { break };
                match run_once(c) {
                    Some(d) => times.push(d),
                    None => {
                        failed = true;
                        break;
                    }
                }
            }
            if times.len() < runs {
                println!("| {} | (failed) | | | |", row.name);
                continue;
            }
            times.sort();
            let median = times[times.len() / 2];
            if base.is_none() {
                base = Some(median);
            }
            let ratio = base.map_or(1.0, |b| median.as_secs_f64() / b.as_secs_f64());
            let peak = if timing {
                (row.cmd)(f, &out).and_then(|c| peak_kib(&c))
            } else {
                None
            };
            let (peak_s, peak_x) = match peak {
                Some(k) => (
                    format!("{:.0} MB", k as f64 * 1024.0 / 1e6),
                    format!("{:.2}", k as f64 * 1024.0 / size.max(1) as f64),
                ),
                None => ("".to_owned(), "".to_owned()),
            };
            println!(
                "| {} | {:.3} s | {ratio:.2} | {peak_s} | {peak_x} |",
                row.name,
                median.as_secs_f64()
            );
        }
    }
    println!("\nafter: {}", load());
    let _ = std::fs::remove_dir_all(&scratch);
    if failed {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    }
}
