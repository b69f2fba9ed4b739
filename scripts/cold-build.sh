#!/usr/bin/env bash
# Measures the first `go run ./cmd/agentui` on empty caches: the module
# download (fresh GOMODCACHE), then the compile and link (fresh GOCACHE),
# with the compile time summed per module (docs/dependencies.md).
#   scripts/cold-build.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
w=$(mktemp -d)
trap 'chmod -R u+w "$w"; rm -rf "$w"' EXIT
cd "$repo"
modules="$w/modules.txt"
go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{else}}std{{end}}' ./cmd/agentui > "$modules"
export GOPATH="$w/gopath" GOMODCACHE="$w/gopath/pkg/mod" GOCACHE="$w/gocache"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
s=$(date +%s.%N)
go list -deps ./cmd/agentui > /dev/null
e=$(date +%s.%N)
echo "download: $(echo "$e - $s" | bc) s, $(du -sh "$GOMODCACHE/cache/download" | cut -f1) of module zips"
s=$(date +%s.%N)
go build -debug-actiongraph="$w/ag.json" -o "$w/agentui" ./cmd/agentui
e=$(date +%s.%N)
echo "compile and link: $(echo "$e - $s" | bc) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
env -u GOPATH -u GOMODCACHE -u GOCACHE go run ./scripts/actiongraph "$w/ag.json" "$modules" | head -15
