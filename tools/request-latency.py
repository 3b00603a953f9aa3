#!/usr/bin/env python3
"""Request latency between two scrapes of an API server's /metrics.

    tools/request-latency.py BEFORE.txt AFTER.txt [TOP]

Subtracts the `apiserver_request_duration_seconds` histograms of BEFORE from
AFTER and prints, per (verb, resource, subresource, scope), the number of
requests and the 99th percentile, estimated as Prometheus'
`histogram_quantile` does (linear within the bucket that holds it). Then the
worst p99 of the calls upstream's API call latency SLO covers: mutating calls
(POST, PUT, PATCH, DELETE) and single-object GETs must stay within 1 s;
LISTs within 5 s (namespaced) or 30 s (cluster-wide). WATCH and CONNECT are
not latency-bound and are left out, as upstream's SLI leaves them out.
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^apiserver_request_duration_seconds_bucket\{(.*)\} ([0-9.e+-]+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def buckets(path):
    """{(verb, group, resource, subresource, scope): {le: count}}"""
    out = defaultdict(dict)
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            labels = dict(LABEL.findall(m.group(1)))
            if labels.get("dry_run"):
                continue
            key = (labels.get("verb", ""), labels.get("group", ""), labels.get("resource", ""),
                   labels.get("subresource", ""), labels.get("scope", ""))
            le = float("inf") if labels["le"] == "+Inf" else float(labels["le"])
            out[key][le] = out[key].get(le, 0) + float(m.group(2))
    return out


def quantile(q, cumulative):
    """histogram_quantile over sorted (le, cumulative count) pairs."""
    total = cumulative[-1][1]
    if total == 0:
        return None
    rank = q * total
    lower_le, lower_count = 0.0, 0.0
    for le, count in cumulative:
        if count >= rank:
            if le == float("inf"):
                return lower_le  # beyond the last finite bucket: its bound, as Prometheus
            if count == lower_count:
                return le
            return lower_le + (le - lower_le) * (rank - lower_count) / (count - lower_count)
        lower_le, lower_count = le, count
    return lower_le


def main():
    before, after = buckets(sys.argv[1]), buckets(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    rows = []
    for key, hist in after.items():
        if key[0] in ("WATCH", "CONNECT", "WATCHLIST"):
            continue
        old = before.get(key, {})
        cumulative = sorted((le, c - old.get(le, 0)) for le, c in hist.items())
        n = cumulative[-1][1] if cumulative else 0
        if n <= 0:
            continue
        rows.append((quantile(0.99, cumulative), int(n), key))
    rows.sort(key=lambda r: -r[0])
    total = sum(r[1] for r in rows)
    print(f"{total} requests (WATCH and CONNECT left out); slowest p99 per verb and resource:")
    print(f"{'p99':>9} {'count':>7}  verb resource")
    for p99, n, (verb, group, resource, sub, scope) in rows[:top]:
        name = resource + (f"/{sub}" if sub else "") + (f".{group}" if group else "")
        print(f"{p99 * 1000:7.1f}ms {n:7d}  {verb} {name} ({scope})")
    single = [r for r in rows if r[2][0] in ("POST", "PUT", "PATCH", "DELETE", "GET")]
    lists = [r for r in rows if r[2][0] == "LIST"]
    if single:
        p99, n, key = single[0]
        print(f"worst p99, mutating and single-object calls: {p99 * 1000:.1f} ms "
              f"({key[0]} {key[2]}{'/' + key[3] if key[3] else ''}; SLO 1 s)")
    if lists:
        p99, n, key = lists[0]
        print(f"worst p99, LIST: {p99 * 1000:.1f} ms ({key[2]}, {key[4]}; SLO 5 s namespaced, 30 s cluster)")


if __name__ == "__main__":
    main()
