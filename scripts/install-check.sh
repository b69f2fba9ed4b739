#!/usr/bin/env bash
# Builds README.md's mounting snippet ("Mounting agentui in your app") in
# a scratch module outside the repository, the two ways docs/deploy.md
# gives for using agentui before it is published: a `replace` directive,
# and a go.work workspace. Dependencies come through the module proxy.
#   scripts/install-check.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The snippet: the first ```go block after the section's heading.
snippet=$(awk '/^## Mounting agentui in your app/ {s=1} s && /^```go$/ {g=1; next} g && /^```$/ {exit} g {print}' "$repo/README.md")
[ -n "$snippet" ] || { echo "install-check: no Go snippet in README.md's mounting section" >&2; exit 1; }

write_app() { # $1: directory
  mkdir -p "$1"
  cat > "$1/main.go" <<GO
package main

import (
	"errors"
	"log"
	"net/http"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
)

// userFromSession stands in for the app's authentication.
func userFromSession(r *http.Request) (string, error) {
	if c, err := r.Cookie("session"); err == nil {
		return c.Value, nil
	}
	return "", errors.New("not signed in")
}

func main() {
$snippet
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}
GO
}

echo "install-check: replace"
write_app "$work/replace"
(cd "$work/replace" && go mod init example.com/app >/dev/null 2>&1 &&
  go mod edit -require github.com/agentui/agentui@v0.0.0 -replace "github.com/agentui/agentui=$repo" &&
  GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 && go vet . && go build -o app .)

echo "install-check: go.work"
write_app "$work/workspace/app"
(cd "$work/workspace/app" && go mod init example.com/app >/dev/null 2>&1 &&
  cd .. && go work init ./app "$repo" && cd app && go vet . && go build -o app .)
echo "install-check: the README's snippet builds both ways"
