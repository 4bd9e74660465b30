//! Each operation of the `wire` bench once, in a function of its own, for instruction counts
//! under callgrind (wall-clock figures on a shared machine move; instruction counts do not):
//!
//! ```sh
//! cargo build --profile bench -p turnkeeper-prevent --example wire_ops
//! valgrind --tool=callgrind --toggle-collect='wire_ops::op_*' \
//!     "$CARGO_TARGET_DIR/release/examples/wire_ops" chat 10000000
//! callgrind_annotate --inclusive=yes callgrind.out.* | grep 'wire_ops::op_'
//! ```
//!
//! Arguments: `chat`, `responses`, `chat_small` or `responses_small` (1 KB tool outputs: many
//! messages or items), the body's size in bytes (10 MB by default), and
//! optionally a repeat count for `perf record` (each operation runs that many times). With
//! `TURNKEEPER_WIRE_TIMES=1` and a repeat count, the operations run interleaved (one of each,
//! round after round) and the minimum and median time of each is printed: on a machine shared
//! with other work the minimum over interleaved rounds is the figure least moved by the others.

#[path = "../benches/wire_workload.rs"]
mod wire_workload;

use std::hint::black_box;

use turnkeeper_model::Format;
use turnkeeper_prevent::Options;
use turnkeeper_prevent::wire::{check_wire, repair_wire};

#[inline(never)]
fn op_ignored_any(src: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(black_box(src)).is_ok()
}

#[inline(never)]
fn op_read(src: &str, format: Format) -> usize {
    match format {
        Format::Chat => turnkeeper_model::wire::chat::read(black_box(src))
            .map(|b| b.messages.len())
            .unwrap_or(0),
        _ => turnkeeper_model::wire::responses::read(black_box(src))
            .map(|b| b.items.len())
            .unwrap_or(0),
    }
}

#[inline(never)]
fn op_check(src: &str, format: Format, opts: &Options<'_>) -> usize {
    check_wire(black_box(src), format, opts).map_or(0, |f| f.len())
}

#[inline(never)]
fn op_repair(src: &str, format: Format, opts: &Options<'_>) -> usize {
    repair_wire(black_box(src), format, opts).map_or(0, |r| r.body.len())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let family = args.next().unwrap_or_else(|| "chat".to_owned());
    let size: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let times: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let (format, body) = match family.as_str() {
        "responses" => (Format::Responses, wire_workload::responses_body(size)),
        // Many small messages or items: 1 KB tool outputs.
        "chat_small" => (Format::Chat, wire_workload::chat_body_with(size, 1_000)),
        "responses_small" => (
            Format::Responses,
            wire_workload::responses_body_with(size, 1_000),
        ),
        _ => (Format::Chat, wire_workload::chat_body(size)),
    };
    let opts = Options::default();
    let mut sink = 0usize;
    if std::env::var("TURNKEEPER_WIRE_TIMES").is_ok_and(|v| v == "1") {
        let mut t: [Vec<f64>; 4] = Default::default();
        for _ in 0..times {
            let at = std::time::Instant::now();
            sink += usize::from(op_ignored_any(&body));
            t[0].push(at.elapsed().as_secs_f64() * 1e3);
            let at = std::time::Instant::now();
            sink += op_read(&body, format);
            t[1].push(at.elapsed().as_secs_f64() * 1e3);
            let at = std::time::Instant::now();
            sink += op_check(&body, format, &opts);
            t[2].push(at.elapsed().as_secs_f64() * 1e3);
            let at = std::time::Instant::now();
            sink += op_repair(&body, format, &opts);
            t[3].push(at.elapsed().as_secs_f64() * 1e3);
        }
        let mut stats = Vec::new();
        for v in &mut t {
            v.sort_by(f64::total_cmp);
            stats.push((v.first().copied().unwrap_or(0.0), v[v.len() / 2]));
        }
        for (name, (min, med)) in ["ignored_any", "read", "check", "repair"]
            .iter()
            .zip(&stats)
        {
            println!(
                "{family} {name:<12} min {min:7.3} ms  median {med:7.3} ms  min ratio to ignored_any {:.3}",
                min / stats[0].0
            );
        }
        println!("{family}: {} bytes, {times} rounds ({sink})", body.len());
        return;
    }
    for _ in 0..times {
        sink += usize::from(op_ignored_any(&body));
        sink += op_read(&body, format);
        sink += op_check(&body, format, &opts);
        sink += op_repair(&body, format, &opts);
    }
    println!("{family}: {} bytes ({sink})", body.len());
}
