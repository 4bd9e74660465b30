#!/bin/bash -eu
# Builds every cargo-fuzz target of fuzz/ for ClusterFuzzLite and puts beside each binary in
# $OUT what the runner picks up by name:
#   $OUT/<target>                   the libFuzzer binary (release, debug assertions on, as
#                                   `cargo xtask fuzz` builds it; the sanitizer comes from the
#                                   image's cargo-fuzz and $SANITIZER)
#   $OUT/<target>_seed_corpus.zip   its seeds: corpus/fuzz/<target>/, corpus/<target>/, the
#                                   directories fuzz/Cargo.toml lists for it, and
#                                   corpus/regressions/<target>-* (`cargo xtask seeds`)
#   $OUT/<target>.dict              its libFuzzer dictionary, when fuzz/dicts/ has one
#   $OUT/<target>.options           its -max_len, when fuzz/Cargo.toml sets one
# A target added to fuzz/fuzz_targets/ (and fuzz/Cargo.toml) is picked up with no change here.

cd "$SRC/turnkeeper"

# Every target with comparison tracing and the system allocator, unlike `cargo xtask fuzz`, which
# builds two generator-driven targets without tracing and uses mimalloc (fuzz/Cargo.toml says
# why): both save time per input on a 2-core machine; a service has the cores, AddressSanitizer
# must see every allocation, and tracing never makes a target miss a bug, only run slower.
cargo fuzz build -O --debug-assertions

# xtask is std-only: it builds in seconds and reads fuzz/Cargo.toml the way `cargo xtask fuzz`
# does, so the service seeds each target as the local campaigns do.
cargo xtask seeds "$WORK/seeds"

release=fuzz/target/x86_64-unknown-linux-gnu/release
for source in fuzz/fuzz_targets/*.rs; do
    target=$(basename "${source%.rs}")
    cp "$release/$target" "$OUT/"
    if compgen -G "$WORK/seeds/$target/*" > /dev/null; then
        (cd "$WORK/seeds/$target" && zip -q -j "$OUT/${target}_seed_corpus.zip" ./*)
    fi
    for extra in dict options; do
        if [ -f "$WORK/seeds/$target.$extra" ]; then
            cp "$WORK/seeds/$target.$extra" "$OUT/"
        fi
    done
done
