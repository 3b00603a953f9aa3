#!/bin/bash
# What N CustomResourceDefinitions cost: creates N namespaced CRDs (one
# version, a small structural schema) through the aggregator with kubectl,
# then prints the time until all are Established, the extensions tier's
# resident memory before and after, and the latency of discovery and
# OpenAPI with them all served.
#
#   tools/crd-scale.sh STATE_DIR [N]
#
# STATE_DIR is a running kube-local-cluster's (kubeconfig, pki/). The CRDs
# are left in place (group scale.example.com); delete them with
#   kubectl delete crd -l scale-test=true
set -eu
STATE=${1:?state dir of a running kube-local-cluster}
N=${2:-1000}
KC="$STATE/kubeconfig"
SERVER=$(kubectl --kubeconfig "$KC" config view --minify -o jsonpath='{.clusters[0].cluster.server}')
CURL=(curl -sS -o /dev/null --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key")
rss() { awk '/VmRSS/{printf "%.1f MiB", $2/1024}' "/proc/$(pgrep -x kube-extensions | head -1)/status"; }
# CPU seconds (user + system) the extensions tier has used so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$(pgrep -x kube-extensions | head -1)/stat"; }

echo "extensions RSS before: $(rss)"
DOCS=$(mktemp /tmp/crd-scale.XXXXXX.yaml)
for i in $(seq 1 "$N"); do
  cat >>"$DOCS" <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widget${i}s.scale.example.com
  labels: {scale-test: "true"}
spec:
  group: scale.example.com
  scope: Namespaced
  names: {plural: widget${i}s, singular: widget${i}, kind: Widget${i}, listKind: Widget${i}List}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 0}
              color: {type: string, enum: [red, green, blue]}
---
EOF
done
cpu_before=$(cpu)
start=$(date +%s.%N)
kubectl --kubeconfig "$KC" create -f "$DOCS" >/dev/null
created=$(date +%s.%N)
# Wait until every CRD is Established, then read how long each took from
# its own timestamps (creation to the Established condition's transition;
# the API's timestamps have one-second resolution). `kubectl wait` is not
# used: it lists and watches each CRD in turn, which times kubectl.
until [ "$(kubectl --kubeconfig "$KC" get crd -l scale-test=true \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Established")].status}{"\n"}{end}' \
    | grep -c True)" -ge "$N" ]; do sleep 1; done
cpu_after=$(cpu)
rm -f "$DOCS"
printf '%s CRDs created in %.1f s; extensions tier CPU until all Established: %.1f s\n' \
  "$N" "$(echo "$created - $start" | bc)" "$(echo "$cpu_after - $cpu_before" | bc)"
kubectl --kubeconfig "$KC" get crd -l scale-test=true -o json | python3 -c '
import datetime, json, sys
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
items = json.load(sys.stdin)["items"]
est = lambda i: t(next(c for c in i["status"]["conditions"] if c["type"] == "Established")["lastTransitionTime"])
lags = sorted((est(i) - t(i["metadata"]["creationTimestamp"])).total_seconds() for i in items)
span = (max(map(est, items)) - min(t(i["metadata"]["creationTimestamp"]) for i in items)).total_seconds()
print(f"creation to Established: median {lags[len(lags) // 2]:.0f} s, max {lags[-1]:.0f} s; first create to last Established {span:.0f} s")
'
sleep 5
echo "extensions RSS after: $(rss)"
for path in /apis "/apis/scale.example.com/v1" /openapi/v2 /openapi/v3 "/openapi/v3/apis/scale.example.com/v1"; do
  for accept in "application/json" "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"; do
    [ "$accept" != application/json ] && [ "$path" != /apis ] && continue
    times=$(for _ in 1 2 3 4 5; do "${CURL[@]}" -H "Accept: $accept" -w '%{time_total} %{size_download}\n' "$SERVER$path"; done)
    echo "$path ($accept): $(echo "$times" | sort -n | awk 'NR==3{printf "median %.1f ms, %d bytes", $1*1000, $2}')"
  done
done
