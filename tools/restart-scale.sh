#!/bin/bash
# What a restart costs with many objects: loads N 1 KiB ConfigMaps into a
# fresh kube-local-cluster (kube-loadgen rss), then restarts the whole
# cluster ROUNDS times and prints, each time, how long `up` took to return
# with every tier ready, when kube-core's ConfigMap watch cache held them
# all again (reads go to etcd until then), kube-core's RSS 15 s later and
# the median time of a resourceVersion=0 LIST of all of them through the
# aggregator.
#
#   tools/restart-scale.sh STATE_DIR [N] [ROUNDS] [BIN_DIR]
#
# STATE_DIR is created anew (deleted first); BIN_DIR holds release builds
# (default target/release). The cluster is stopped at the end.
set -eu
STATE=${1:?state dir for a new kube-local-cluster}
N=${2:-100000}
ROUNDS=${3:-3}
BIN=${4:-target/release}
CLUSTER="$BIN/kube-local-cluster"
rm -rf "$STATE"
"$CLUSTER" up --background --state-dir "$STATE" --bin-dir "$BIN" >/dev/null
"$BIN/kube-loadgen" --kubeconfig "$STATE/kubeconfig" rss --objects "$N" | tail -2
CURL=(curl -sS --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key")
cached() {
  "${CURL[@]}" https://127.0.0.1:6444/metrics 2>/dev/null |
    awk '/^apiserver_resource_objects\{group="",resource="configmaps"\}/{print int($2)}'
}
for round in $(seq 1 "$ROUNDS"); do
  "$CLUSTER" down --state-dir "$STATE" >/dev/null
  t0=$(date +%s.%N)
  "$CLUSTER" up --background --state-dir "$STATE" --bin-dir "$BIN" >/dev/null
  t1=$(date +%s.%N)
  while n=$(cached); [ -z "$n" ] || [ "$n" -lt "$N" ]; do sleep 0.1; done
  t2=$(date +%s.%N)
  sleep 15
  rss=$(awk '/VmRSS/{printf "%.1f MiB", $2/1024}' "/proc/$(pgrep -x kube-core-apise | head -1)/status")
  list=$(for _ in 1 2 3 4 5; do
    "${CURL[@]}" -o /dev/null -w '%{time_total}\n' \
      "https://127.0.0.1:6443/api/v1/namespaces/loadgen/configmaps?resourceVersion=0"
  done | sort -n | sed -n 3p)
  printf 'round %d: ready after %.2f s; %d cached after %.2f s; kube-core RSS %s; LIST rv=0 of all %.3f s\n' \
    "$round" "$(echo "$t1 - $t0" | bc)" "$N" "$(echo "$t2 - $t0" | bc)" "$rss" "$list"
done
"$CLUSTER" down --state-dir "$STATE" >/dev/null
