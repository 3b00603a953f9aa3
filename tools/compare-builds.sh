#!/bin/bash
# Compares two builds of the three tiers on this machine: for each of ROUNDS
# rounds, each build in turn gets a fresh kube-local-cluster (own etcd, own
# state) and kube-loadgen runs the same scenarios against it: GETs
# (consistent and resourceVersion=0), creates, and one watch fan-out.
# kube-loadgen prints the CPU time per operation of each process.
#
#   tools/compare-builds.sh BEFORE_BIN_DIR AFTER_BIN_DIR [ROUNDS]
#
# e.g. a worktree of an older commit built with
#   CARGO_TARGET_DIR=/tmp/before cargo build --release --bins
# against target/release. Nothing else should run meanwhile.
# BEFORE_UP_ARGS / AFTER_UP_ARGS are added to each build's `up`: one build
# against itself with `BEFORE_UP_ARGS="--tier-link tls"` compares the
# tiers' HTTPS link with their Unix socket link.
set -u
BEFORE=${1:?before bin dir}
AFTER=${2:?after bin dir}
ROUNDS=${3:-3}
LOADGEN=${LOADGEN:-$AFTER/kube-loadgen}
for round in $(seq 1 "$ROUNDS"); do
  for build in before after; do
    if [ $build = before ]; then BIN=$BEFORE UP_ARGS=${BEFORE_UP_ARGS:-}; else BIN=$AFTER UP_ARGS=${AFTER_UP_ARGS:-}; fi
    STATE=$(mktemp -d /tmp/compare-builds-$build.XXXXXX)
    # shellcheck disable=SC2086
    "$BIN/kube-local-cluster" up --background --state-dir "$STATE" --bin-dir "$BIN" $UP_ARGS >/dev/null 2>&1 \
      || { echo "cluster of $BIN did not start (see $STATE/logs)"; exit 1; }
    echo "=== round $round: $build ($BIN $UP_ARGS)"
    "$LOADGEN" --kubeconfig "$STATE/kubeconfig" gets --count 10000 2>&1 | grep -A1 "^GETs"
    "$LOADGEN" --kubeconfig "$STATE/kubeconfig" creates --count 3000 2>&1 | grep -A1 "^creates"
    "$LOADGEN" --kubeconfig "$STATE/kubeconfig" watch --watchers 1000 --writes 20 2>&1 | grep -A2 "^watch fan-out"
    "$BIN/kube-local-cluster" down --state-dir "$STATE" >/dev/null 2>&1
    rm -rf "$STATE"
  done
done
