#!/usr/bin/env bash
# Builds the agentui container image (deploy/Containerfile) with podman,
# or buildah when podman is missing: a static binary and the CA
# certificates on an empty base, so nothing is pulled from a registry.
#   scripts/container.sh [tag]      (default tag: agentui)
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-agentui}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$ctx/agentui" ./cmd/agentui
cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
cp deploy/Containerfile "$ctx/"
if command -v podman >/dev/null; then
  podman build -t "$tag" -f "$ctx/Containerfile" "$ctx"
else
  buildah bud -t "$tag" -f "$ctx/Containerfile" "$ctx"
fi
