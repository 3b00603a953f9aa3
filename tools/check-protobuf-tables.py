#!/usr/bin/env python3
"""Compares our protobuf message tables with upstream's generated.proto files.

    tools/check-protobuf-tables.py UPSTREAM_KUBERNETES_TREE

UPSTREAM_KUBERNETES_TREE is a Kubernetes source tree (e.g. v1.36.2 from the
fetch tool's snapshot of openshift/microshift, deps/github.com/openshift/kubernetes;
README: "The real control plane"). For every message in
apiserver/src/protobuf/schema/tables/*.txt it prints the fields upstream's message of
that name has and ours lacks, and field numbers whose names differ (other
than in case). A missing field is dropped when an object is stored: every
built-in object is protobuf in etcd, so such a gap loses data silently.
Exits 1 when it finds one.
"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIELD = re.compile(r'^\s+(?:optional\s+[\w.]+|repeated\s+[\w.]+|map<[^>]+>)\s+(\w+) = (\d+);', re.M)


def ours():
    tables = {}
    for path in glob.glob(os.path.join(HERE, '..', 'apiserver/src/protobuf/schema/tables/*.txt')):
        current = None
        for line in open(path):
            words = line.split('#', 1)[0].split()
            if not words:
                continue
            if words[0] in ('kind', 'message'):
                current = tables.setdefault(words[1], {})
            elif current is not None:
                current[int(words[0])] = words[1]
    return tables


def upstream(tree):
    messages = {}
    for path in glob.glob(os.path.join(tree, 'staging/src/k8s.io/**/generated.proto'), recursive=True):
        text = open(path).read()
        package = re.search(r'^package ([\w.]+);', text, re.M).group(1)
        short = '.'.join(package.split('.')[-2:])
        for m in re.finditer(r'^message (\w+) \{(.*?)^\}', text, re.S | re.M):
            fields = {int(n): name for name, n in FIELD.findall(m.group(2))}
            messages.setdefault(f'{short}.{m.group(1)}', []).append((package, fields))
    return messages


def main():
    tree = sys.argv[1]
    theirs = upstream(tree)
    gaps = 0
    for name, fields in sorted(ours().items()):
        for package, upstream_fields in theirs.get(name, []):
            missing = {n: v for n, v in upstream_fields.items() if n not in fields}
            renamed = {n: (fields[n], v) for n, v in upstream_fields.items()
                       if n in fields and fields[n].lower() != v.lower()}
            if missing or renamed:
                gaps += 1
                print(f'{name} ({package}): missing {missing or "-"}; named otherwise {renamed or "-"}')
    print(f'{gaps} messages differ')
    sys.exit(1 if gaps else 0)


if __name__ == '__main__':
    main()
