//! Writes generated wire bodies (Chat, Responses, Converse; valid and damaged) as fuzz seeds:
//! `cargo run -p turnkeeper-testkit --example wire_seeds -- DIR [COUNT]`. Each seed is a body
//! the `wire_families` target reads as its family, at the fuzz targets' sizes.

use arbitrary::Unstructured;
use turnkeeper_testkit::Knobs;
use turnkeeper_testkit::fuzz::fuzz_knobs;
use turnkeeper_testkit::wire_gen::{WireKnobs, wire_body, wire_damage};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: wire_seeds DIR [COUNT]");
        std::process::exit(2);
    };
    let count: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(12);
    std::fs::create_dir_all(&dir)?;
    let knobs = WireKnobs {
        base: fuzz_knobs(Knobs::default()),
        ..WireKnobs::default()
    };
    let mut written = 0;
    let mut seed = 0u32;
    while written < count && seed < count * 50 {
        seed += 1;
        // Deterministic bytes per seed (a linear congruential stream), so reruns write the same.
        let mut x = seed.wrapping_mul(2_654_435_761);
        let bytes: Vec<u8> = (0..4096)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 16) as u8
            })
            .collect();
        let mut u = Unstructured::new(&bytes);
        let Ok(mut b) = wire_body(&mut u, &knobs) else {
            continue;
        };
        let damaged = written % 2 == 1;
        if damaged {
            let _ = wire_damage(&mut u, &mut b);
        }
        let text = b.json();
        if text.len() > 16 * 1024 {
            continue;
        }
        let name = format!(
            "{}-{}-{seed}.json",
            b.format,
            if damaged { "damaged" } else { "valid" }
        );
        std::fs::write(std::path::Path::new(&dir).join(name), text)?;
        written += 1;
    }
    println!("{written} seeds written to {dir}");
    Ok(())
}
