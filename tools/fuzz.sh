#!/usr/bin/env bash
# Runs every fuzz target (or those named) under libFuzzer for SECONDS each
# and prints the executions each ran; exits non-zero if any target crashed
# (the input is kept in fuzz/artifacts/<target>/).
#
#   tools/fuzz.sh [SECONDS] [TARGET...]        default: 120 s, all targets
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) and
# cargo-fuzz (`cargo install cargo-fuzz`). The same targets run briefly on
# stable in every `cargo test` (apiserver::fuzzing's unit test).
#
# FUZZ_SANITIZER (default none): the targets run safe Rust, where
# AddressSanitizer finds nothing the language does not already prevent and
# costs 3-5x in executions (the CEL parser allocates heavily); set
# FUZZ_SANITIZER=address to hunt in unsafe dependencies. Debug assertions
# and overflow checks stay on.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-120}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v kube-apiserver-fuzz)
fi
san="${FUZZ_SANITIZER:-none}"
command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is missing: cargo install cargo-fuzz" >&2; exit 2; }
cargo run -q -p kube-apiserver-lib --example fuzz_seeds -- fuzz/corpus
for t in "${targets[@]}"; do
  cargo +nightly fuzz build --release --sanitizer "$san" "$t" >/dev/null
done
status=0
printf '%-24s %14s %8s %s\n' target executions seconds result
for t in "${targets[@]}"; do
  log="fuzz/artifacts/$t.log"
  mkdir -p fuzz/artifacts
  if cargo +nightly fuzz run --release --sanitizer "$san" "$t" "fuzz/corpus/$t" -- \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 >"$log" 2>&1; then
    result=ok
  else
    result="CRASH (see $log)"
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  printf '%-24s %14s %8s %s\n' "$t" "${runs:-?}" "${took:-$secs}" "$result"
done
exit $status
