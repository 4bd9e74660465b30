//! Prints the body a `repair_invariants` fuzz input stands for (the file itself when it is a
//! readable transcript, else the conversation its bytes generate, damage included), and the
//! first repair invariant it violates: the way to turn a saved crash into a readable case.
//!
//! ```sh
//! cargo run -p turnkeeper-testkit --example fuzz_show -- corpus/regressions/repair_invariants-36033365a70330ea
//! ```
//!
//! Arguments: `[--full] FILE`. Without `--full` the input is generated as the libFuzzer entry
//! point generates it (its knobs); with it, as `cargo test` does.

use turnkeeper_testkit::fuzz::{Depth, input_of, knobs_at};
use turnkeeper_testkit::generate::Knobs;
use turnkeeper_testkit::inv::all_repair_invariants;

fn main() {
    let mut depth = Depth::Sampled;
    let mut file = None;
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--full" => depth = Depth::Full,
            _ => file = Some(a),
        }
    }
    let Some(file) = file else {
        eprintln!("usage: fuzz_show [--full] FILE");
        std::process::exit(2);
    };
    let data = match std::fs::read(&file) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("fuzz_show: {file}: {e}");
            std::process::exit(2);
        }
    };
    let Some((text, opts, c)) = input_of(&data, &knobs_at(depth, Knobs::default())) else {
        eprintln!("fuzz_show: {file}: the bytes describe no input");
        std::process::exit(1);
    };
    if let Some(c) = &c {
        eprintln!(
            "generated: format {}, model {:?}, damage {:?}",
            c.format, c.model, c.damage
        );
    }
    println!("{text}");
    match all_repair_invariants(&text, &opts) {
        Ok(()) => eprintln!("every repair invariant holds"),
        Err(e) => eprintln!("violated: {e}"),
    }
}
