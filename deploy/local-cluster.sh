#!/usr/bin/env bash
# Start (or stop) the local cluster on a fresh Debian machine.
#
#   ./deploy/local-cluster.sh                    # = up: foreground, Ctrl-C stops it
#   ./deploy/local-cluster.sh up --background    # detached; returns once ready
#   ./deploy/local-cluster.sh status
#   ./deploy/local-cluster.sh down
#
# Installs etcd and protoc with apt-get when missing, builds the workspace in
# release mode and runs target/release/kube-local-cluster with the arguments
# given (default: `up`). See deploy/README.md.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

if ! command -v etcd >/dev/null 2>&1 || ! command -v protoc >/dev/null 2>&1; then
    echo "installing etcd and protoc (apt-get)..." >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo="sudo"
    fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y etcd-server protobuf-compiler
fi

if [ "$#" -eq 0 ]; then
    set -- up
fi

target_dir="${CARGO_TARGET_DIR:-target}"
binary="$target_dir/release/kube-local-cluster"

# `down` and `status` must work even while the tree does not build; they only
# build when there is no binary yet.
case "$1" in
    down | status)
        need_build=0
        [ -x "$binary" ] || need_build=1
        ;;
    *) need_build=1 ;;
esac

if [ "$need_build" -eq 1 ]; then
    if ! command -v cargo >/dev/null 2>&1; then
        echo "error: cargo is not installed; install a Rust toolchain (rustup) first" >&2
        exit 1
    fi
    cargo build --release --bins
fi

exec "$binary" "$@"
