#!/bin/bash
# The real control plane at scale: upstream's kube-controller-manager and
# kube-scheduler and NODES kubemark hollow nodes (real kubelets with a fake
# container runtime) against a fresh kube-local-cluster, then PODS pods in
# Deployments of 100 replicas, all scheduled and Running, then deleted.
# Prints the time to Ready nodes, to Running pods and to their removal, the
# API servers' CPU and RSS, and the API call latency over the pod phases
# from the server's own `apiserver_request_duration_seconds` (p99 per verb
# and resource, tools/request-latency.py), the measure upstream's
# scalability SLOs are stated in.
#
#   tools/kubemark-scale.sh STATE_DIR K8S_BIN [NODES] [PODS] [ours|upstream] [BIN_DIR]
#
# K8S_BIN holds upstream's kube-controller-manager, kube-scheduler and
# kubemark (README: "The real control plane"); with `upstream`, also its
# kube-apiserver, which then serves instead of the three tiers: it runs on
# the same cluster's etcd under its own key prefix, with the same PKI, and
# the tiers stay up idle. STATE_DIR is created anew; everything is stopped
# at the end. BIN_DIR holds release builds (default target/release).
set -u
STATE=${1:?state dir}
K8S=${2:?dir of upstream binaries}
NODES=${3:-100}
PODS=${4:-3000}
SERVER=${5:-ours}
BIN=${6:-target/release}
TOOLS=$(cd "$(dirname "$0")" && pwd)
rm -rf "$STATE"
"$BIN/kube-local-cluster" up --background --state-dir "$STATE" --bin-dir "$BIN" >/dev/null ||
  { echo "the cluster did not start (see $STATE/logs)"; exit 1; }
PKI=$STATE/pki
LOGS=$STATE/scale-logs
mkdir -p "$LOGS"
PIDS=()
cleanup() {
  [ ${#PIDS[@]} -gt 0 ] && kill "${PIDS[@]}" 2>/dev/null
  wait 2>/dev/null
  "$BIN/kube-local-cluster" down --state-dir "$STATE" >/dev/null 2>&1
}
trap cleanup EXIT

KC=$STATE/kubeconfig
PROCS="kube-aggregator kube-core-apise kube-extensions"
if [ "$SERVER" = upstream ]; then
  # upstream reads public keys only from PEM public or PKCS#1/SEC 1 keys
  openssl pkey -in "$PKI/sa.key" -pubout -out "$STATE/sa.pub" 2>/dev/null
  ETCD=$(tr '\0' '\n' < "/proc/$(pgrep -x kube-core-apise | head -1)/cmdline" | grep -A1 -x -- --etcd-servers | tail -1)
  "$K8S/kube-apiserver" --secure-port=7443 --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
    --etcd-servers="$ETCD" --etcd-prefix=/upstream-registry --etcd-cafile="$PKI/etcd/ca.crt" \
    --etcd-certfile="$PKI/apiserver-etcd-client.crt" --etcd-keyfile="$PKI/apiserver-etcd-client.key" \
    --tls-cert-file="$PKI/aggregator.crt" --tls-private-key-file="$PKI/aggregator.key" \
    --client-ca-file="$PKI/ca.crt" --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$STATE/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range=10.96.0.0/12 --cert-dir="$STATE/upstream-certs" \
    > "$LOGS/kube-apiserver.log" 2>&1 &
  PIDS+=($!)
  sed 's#server: https://127.0.0.1:[0-9]*#server: https://127.0.0.1:7443#' "$STATE/kubeconfig" > "$STATE/upstream.kubeconfig"
  KC=$STATE/upstream.kubeconfig
  PROCS="kube-apiserver"
  for _ in $(seq 120); do kubectl --kubeconfig "$KC" get --raw /readyz >/dev/null 2>&1 && break; sleep 1; done
  kubectl --kubeconfig "$KC" get --raw /readyz >/dev/null 2>&1 ||
    { echo "upstream's kube-apiserver is not ready (see $LOGS/kube-apiserver.log)"; exit 1; }
fi
K=(kubectl --kubeconfig "$KC")
URL=$(awk '/server:/{print $2; exit}' "$KC")
CURL=(curl -sS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key")
# Each of our tiers counts the requests it answers (a proxied one once, where
# it is served), so the latencies are the three tiers' /metrics together.
scrape() {
  if [ "$SERVER" = upstream ]; then "${CURL[@]}" "$URL/metrics"; return; fi
  for name in $PROCS; do
    port=$(tr '\0' '\n' < "/proc/$(pgrep -x "$name" | head -1)/cmdline" | grep -A1 -x -- --secure-port | tail -1)
    "${CURL[@]}" "https://127.0.0.1:$port/metrics"
  done
}
cpu_of() { # CPU seconds of the server processes
  local total=0 p
  for name in $PROCS; do
    for p in $(pgrep -x "$name"); do
      total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
    done
  done
  echo "scale=1; $total / $(getconf CLK_TCK)" | bc
}
rss_of() {
  for name in $PROCS; do
    for p in $(pgrep -x "$name"); do awk -v n="$name" '/VmRSS/{printf "%s %.0f MiB  ", n, $2/1024}' "/proc/$p/status"; done
  done
}

"$K8S/kube-controller-manager" --kubeconfig="$KC" --authentication-kubeconfig="$KC" \
  --authorization-kubeconfig="$KC" --controllers='*' --kube-api-qps=100 --kube-api-burst=100 \
  --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
  --secure-port=0 > "$LOGS/kube-controller-manager.log" 2>&1 &
PIDS+=($!)
"$K8S/kube-scheduler" --kubeconfig="$KC" --authentication-kubeconfig="$KC" \
  --authorization-kubeconfig="$KC" --kube-api-qps=100 --kube-api-burst=100 \
  --secure-port=0 > "$LOGS/kube-scheduler.log" 2>&1 &
PIDS+=($!)
for i in $(seq 1 "$NODES"); do
  "$K8S/kubemark" --morph=kubelet --name="hollow-node-$i" --kubeconfig="$KC" \
    --kubelet-port=$((20000 + i)) --kubelet-read-only-port=0 --use-host-image-service=false \
    > "$LOGS/hollow-node-$i.log" 2>&1 &
  PIDS+=($!)
done

ready_nodes() {
  "${K[@]}" get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
    grep -c True
}
t0=$(date +%s.%N)
until [ "$(ready_nodes)" -ge "$NODES" ]; do
  sleep 2
  if [ "$(echo "$(date +%s.%N) - $t0 > 600" | bc)" = 1 ]; then echo "only $(ready_nodes) of $NODES nodes Ready"; exit 1; fi
done
t1=$(date +%s.%N)
printf '%d hollow nodes Ready after %.1f s\n' "$NODES" "$(echo "$t1 - $t0" | bc)"
sleep 10

"${K[@]}" create namespace scale >/dev/null
scrape > "$STATE/metrics-0.txt"
cpu0=$(cpu_of)
t2=$(date +%s.%N)
DEPLOYMENTS=$(((PODS + 99) / 100))
for d in $(seq 1 "$DEPLOYMENTS"); do
  cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: scale-$d, namespace: scale}
spec:
  replicas: 100
  selector: {matchLabels: {app: scale-$d}}
  template:
    metadata: {labels: {app: scale-$d}}
    spec:
      containers: [{name: pause, image: registry.k8s.io/pause:3.10}]
---
EOF
done | "${K[@]}" create -f - >/dev/null
running() {
  "${K[@]}" get pods -n scale --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l
}
until [ "$(running)" -ge "$PODS" ]; do
  sleep 3
  if [ "$(echo "$(date +%s.%N) - $t2 > 1200" | bc)" = 1 ]; then echo "only $(running) of $PODS pods Running"; exit 1; fi
done
t3=$(date +%s.%N)
cpu1=$(cpu_of)
printf '%d pods in %d Deployments Running after %.1f s; server CPU %.1f s; RSS %s\n' "$PODS" "$DEPLOYMENTS" \
  "$(echo "$t3 - $t2" | bc)" "$(echo "$cpu1 - $cpu0" | bc)" "$(rss_of)"
scrape > "$STATE/metrics-1.txt"
"${K[@]}" delete deployments -n scale --all --wait=false >/dev/null
until [ "$("${K[@]}" get pods -n scale --no-headers 2>/dev/null | wc -l)" -eq 0 ]; do sleep 3; done
t4=$(date +%s.%N)
printf 'all pods deleted %.1f s after the Deployments; server CPU %.1f s\n' "$(echo "$t4 - $t3" | bc)" \
  "$(echo "$(cpu_of) - $cpu1" | bc)"
scrape > "$STATE/metrics-2.txt"
echo "--- API call latency while the pods started:"
python3 "$TOOLS/request-latency.py" "$STATE/metrics-0.txt" "$STATE/metrics-1.txt" 12
echo "--- while they were deleted:"
python3 "$TOOLS/request-latency.py" "$STATE/metrics-1.txt" "$STATE/metrics-2.txt" 8
