#!/usr/bin/env bash
# Builds README.md's mounting snippet ("Mounting agentui in your app") in
# a scratch module outside the repository, set up by the commands of
# docs/deploy.md's "Before the module is published" as written there
# (go mod tidy included), but for their `git clone`: the clone is this
# checkout, linked where the commands expect it. Dependencies come
# through the module proxy.
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

# The commands: the first ```sh block after the section's heading.
commands=$(awk '/^## Before the module is published/ {s=1} s && /^```sh$/ {g=1; next} g && /^```$/ {exit} g {print}' "$repo/docs/deploy.md")
clone=$(grep '^git clone ' <<<"$commands" || true)
[ "${clone##* }" = ../agentui ] || { echo "install-check: docs/deploy.md's commands do not clone into ../agentui" >&2; exit 1; }
commands=$(grep -v '^git clone ' <<<"$commands")
grep -q '^go mod tidy$' <<<"$commands" || { echo "install-check: docs/deploy.md's commands do not run go mod tidy" >&2; exit 1; }

write_app "$work/app"
ln -s "$repo" "$work/agentui"
cd "$work/app"
go mod init example.com/app >/dev/null 2>&1
# A workspace named by the caller's environment would stand in for what
# the commands set up.
unset GOWORK
while IFS= read -r line; do
  echo "install-check: $line"
  out=$(bash -euo pipefail -c "$line" 2>&1) || { echo "$out" >&2; exit 1; }
done <<<"$commands"
go vet .
go build -o app .
echo "install-check: the README's snippet builds after docs/deploy.md's commands"
