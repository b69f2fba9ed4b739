#!/usr/bin/env bash
# Builds the agentui container image (deploy/Containerfile): a static
# Linux binary and the CA certificates on an empty base, so nothing is
# pulled from a registry.
#   scripts/container.sh [tag]      (default tag: agentui)
#
# The builder is podman, else buildah, else docker; CONTAINER_BUILDER=docker
# (or podman, buildah) picks one when several are installed. podman and
# buildah come first because they need no daemon: installed means working.
# A docker command may be only the client, with no engine to talk to, so
# docker is tried last and asked first whether its daemon answers. Everything is checked before the binary is compiled
# (minutes on a cold cache): a machine that cannot build the image says so
# in a second.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-agentui}
fail() { echo "container.sh: $*" >&2; exit 1; }

builder=${CONTAINER_BUILDER:-}
if [ -z "$builder" ]; then
  for b in podman buildah docker; do
    if command -v "$b" >/dev/null; then builder=$b; break; fi
  done
  [ -n "$builder" ] || fail "no podman, buildah or docker on PATH: install one to build the image"
else
  case $builder in podman | buildah | docker) ;; *) fail "CONTAINER_BUILDER=$builder: want podman, buildah or docker" ;; esac
  command -v "$builder" >/dev/null || fail "CONTAINER_BUILDER=$builder, but there is no $builder on PATH"
fi
if [ "$builder" = docker ] && ! docker info >/dev/null 2>&1; then
  fail "docker is installed but its daemon does not answer (docker info fails): start it, or install podman"
fi

# The system's CA bundle: Debian, Ubuntu, Alpine, Arch; Fedora, RHEL; macOS.
certs=
for c in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
  if [ -f "$c" ]; then certs=$c; break; fi
done
[ -n "$certs" ] || fail "no CA certificate bundle found (looked for /etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt, /etc/ssl/cert.pem)"

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
# GOOS=linux: on a Mac, Docker Desktop runs Linux images.
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags=-s -o "$ctx/agentui" ./cmd/agentui
cp "$certs" "$ctx/ca-certificates.crt"
cp deploy/Containerfile "$ctx/"
case $builder in
  podman) podman build -t "$tag" -f "$ctx/Containerfile" "$ctx" ;;
  buildah) buildah bud -t "$tag" -f "$ctx/Containerfile" "$ctx" ;;
  docker) docker build -t "$tag" -f "$ctx/Containerfile" "$ctx" ;;
esac
