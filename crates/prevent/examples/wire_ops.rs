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
//! Arguments: `chat` or `responses`, the body's size in bytes (10 MB by default), and
//! optionally a repeat count for `perf record` (each operation runs that many times).

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
        _ => (Format::Chat, wire_workload::chat_body(size)),
    };
    let opts = Options::default();
    let mut sink = 0usize;
    for _ in 0..times {
        sink += usize::from(op_ignored_any(&body));
        sink += op_read(&body, format);
        sink += op_check(&body, format, &opts);
        sink += op_repair(&body, format, &opts);
    }
    println!("{family}: {} bytes ({sink})", body.len());
}
