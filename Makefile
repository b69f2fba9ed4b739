# agentui — every check CI runs is a target here. `make test` runs them all.
GO      ?= go
# The cmf package keeps at least this much statement coverage: every
# protocol, store and policy reads messages through it.
CMF_MIN_COVERAGE ?= 96

JS_PACKAGES = conformance/js conformance/js7

.PHONY: test test-go test-browser vet lint unit cover-cmf fuzz js-deps

# Everything: Go (vet, gofmt, race-enabled tests including the JavaScript
# conformance suites and the examples), the cmf coverage gate, and the
# browser tests of the chat page and of the chat kits (assistant-ui,
# CopilotKit) against agentui. Two lanes run side by side, each in its
# order: the Go checks (test-go: compiling, and the race detector's CPU)
# and the browser tests (test-browser: mostly waiting on Chromium and on
# the server's timers). A lane's output is printed when it ends.
test: js-deps
	@echo "make test started at $$(date +%T)"
	@$(MAKE) --no-print-directory -j2 --output-sync=recurse test-go test-browser

# BROWSER_LANE_EXTRA: more targets for the browser lane once its tests
# pass; CI (.ci/run) puts its other checks there: that lane waits on
# Chromium and timers more than it computes, and ends minutes before the
# Go lane.
BROWSER_LANE_EXTRA ?=

test-go:
	@for t in vet unit cover-cmf; do s=$$(date +%s); $(MAKE) --no-print-directory $$t || exit 1; echo "make $$t: $$(( $$(date +%s) - s )) s"; done
	@echo "Go lane done at $$(date +%T)"

# The kits' packages (about 1,200, minutes to install on a clean machine)
# are installed while the page's browser tests run.
test-browser:
	@s=$$(date +%s); $(MAKE) --no-print-directory -j2 e2e kit-deps && echo "make e2e kit-deps: $$(( $$(date +%s) - s )) s"
	@for t in e2e-kits $(BROWSER_LANE_EXTRA); do s=$$(date +%s); $(MAKE) --no-print-directory $$t || exit 1; echo "make $$t: $$(( $$(date +%s) - s )) s"; done
	@echo "browser lane done at $$(date +%T)"

# Install the JavaScript packages the tests drive (pinned by their lockfiles)
# when they are missing or older than the lockfile.
js-deps: $(addsuffix /node_modules/.package-lock.json,$(JS_PACKAGES))

%/node_modules/.package-lock.json: %/package-lock.json
	cd $* && npm ci --no-audit --no-fund --loglevel=error

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# Code with dependencies the core does not take (OPA in an example, the
# AG-UI Go SDK as a benchmark peer) lives in modules of its own: vetted
# and tested here too.
OWN_MODULES = examples/policy bench/peers files/s3store adapters/eino adapters/genkit

# versitygw, an S3 gateway over a directory: the real S3-compatible server
# files/s3store's tests start. Built here once (pinned).
VERSITYGW = $(CURDIR)/.tools/versitygw
$(VERSITYGW):
	GOBIN=$(CURDIR)/.tools $(GO) install github.com/versity/versitygw/cmd/versitygw@v1.8.0

unit: $(VERSITYGW)
	$(GO) test -race -count=1 ./...
	@echo "the root module's tests done at $$(date +%T)"
	@set -e; for m in $(OWN_MODULES); do \
		echo "go test $$m"; (cd $$m && $(GO) vet ./... && VERSITYGW=$(VERSITYGW) $(GO) test -race -count=1 ./...); \
	done

cover-cmf:
	@$(GO) test -count=1 -coverprofile=.cover-cmf.out ./cmf >/dev/null
	@pct=$$($(GO) tool cover -func=.cover-cmf.out | awk '/^total:/ {sub("%","",$$3); print $$3}'); rm -f .cover-cmf.out; \
	  echo "cmf coverage: $$pct% (minimum $(CMF_MIN_COVERAGE)%)"; \
	  awk -v p="$$pct" -v m="$(CMF_MIN_COVERAGE)" 'BEGIN { exit (p+0 >= m+0) ? 0 : 1 }' || { echo "cmf coverage below $(CMF_MIN_COVERAGE)%"; exit 1; }

# staticcheck, pinned (go run fetches it through the module proxy once).
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) ./...
	@set -e; for m in $(OWN_MODULES); do (cd $$m && $(GO) run $(STATICCHECK) ./...); done

# Run each fuzz target for FUZZTIME (default 30s): every decoder and
# parser that reads what a client, a model or a store sent. `make test`
# runs their seed corpora; to fuzz briefly use a count (FUZZTIME=1000x):
# Go 1.26 can report a spurious "context deadline exceeded" when a
# duration ends (golang/go#75804).
FUZZTIME ?= 30s
FUZZ_TARGETS = \
	./cmf:FuzzMessageJSON \
	./protocols/vercelai:FuzzDecode ./protocols/vercelai:FuzzDecodeTail ./protocols/vercelai:FuzzDump ./protocols/vercelai:FuzzEncodeFraming \
	./protocols/agui:FuzzDecode ./protocols/agui:FuzzDump ./protocols/agui:FuzzEncodeFraming \
	./agent:FuzzBalancer ./agent:FuzzEventCodec ./internal/jsonw:FuzzString ./internal/jsonw:FuzzRaw \
	./internal/wire:FuzzCanonicalJSON ./internal/turn:FuzzSigner ./internal/turn:FuzzSanitizeURLs \
	./cmf:FuzzToolCallStates ./agent/openai:FuzzChunks ./internal/server:FuzzScopeCookie \
	./history/redisstore:FuzzDecodeEntries ./history/redisstore:FuzzDecodeNote ./uiadapter:FuzzLastEventID ./history:FuzzCleanTitle \
	./agent/openai/responses:FuzzStream ./agent/openai/responses:FuzzInput ./internal/testkit/fakes/responses:FuzzValidate \
	./agent/anthropic:FuzzStream ./agent/anthropic:FuzzRequest \
	./agent/gemini:FuzzStream ./agent/gemini:FuzzReplay ./agent/gemini:FuzzSpan ./agent/gemini:FuzzCallID \
	./internal/wire:FuzzCheckID ./telemetry:FuzzClean \
	./edge:FuzzNormalizeHost ./uiadapter:FuzzWebSocketFrame \
	./internal/wire:FuzzOpenSealed ./files:FuzzSignedQuery
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t%%:*} $${t##*:}"; \
		$(GO) test $${t%%:*} -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME); \
	done

# Benchmarks (bench/, docs/benchmarks.md). `make bench` runs every contender
# in every scenario (about 8 minutes on 2 cores, limit 10) and rewrites the
# results in docs/benchmarks.md; `make bench-smoke` runs the same harness
# with tiny sizes (a few seconds per contender) so CI notices when it breaks.
# The Node contenders' packages are installed from their lockfiles first,
# by the %/node_modules/.package-lock.json rule above.
BENCH_JS_PACKAGES = bench/node-ai bench/node-agui
# SC runs agentui as built from this revision too, side by side: the
# commit before the writer batched by bytes, the "before" of SC's
# time-to-first-byte target.
BENCH_BASE ?= 97207a0

.PHONY: bench bench-smoke bench-go

bench: $(addsuffix /node_modules/.package-lock.json,$(BENCH_JS_PACKAGES))
	$(GO) run ./bench/runner -out docs/benchmarks.md -base $(BENCH_BASE) -command "make bench"

bench-smoke: $(addsuffix /node_modules/.package-lock.json,$(BENCH_JS_PACKAGES))
	$(GO) run ./bench/runner -smoke -command "make bench-smoke"

# The Go micro-benchmarks (encoders, sanitizing, a whole turn with history,
# the stores; the Redis ones need Redis as the tests find it).
BENCH_COUNT ?= 5
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./uiadapter ./history/... ./protocols/...

# Durable runs: S1 with the Redis run log against the local one, resume
# time-to-first-byte, idle-stream memory with the log on, the CPU of a
# long reply's resume from another replica against a local one, and how
# soon a steered message is delivered at a step boundary (and its sender
# told), on the run's replica and through Redis from another.
# Five rounds, each running every sub-benchmark once, so ratios compare
# neighbours. Results and method: docs/benchmarks.md.
bench-runs:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(GO) test -c -o "$$tmp/uiadapter.test" ./uiadapter && \
	  for round in 1 2 3 4 5; do \
	    "$$tmp/uiadapter.test" -test.run '^$$' -test.bench 'RunLogStream|ResumeTTFB' -test.benchtime 400x | grep '^Benchmark'; \
	    "$$tmp/uiadapter.test" -test.run '^$$' -test.bench 'IdleStreamsWithRunLog' -test.benchtime 1x | grep '^Benchmark'; \
	    "$$tmp/uiadapter.test" -test.run '^$$' -test.bench 'ResumeCPU' -test.benchtime 40x | grep '^Benchmark'; \
	    "$$tmp/uiadapter.test" -test.run '^$$' -test.bench 'SteerDelivery' -test.benchtime 20x | grep '^Benchmark'; \
	    "$$tmp/uiadapter.test" -test.run '^$$' -test.bench 'ReplyTransport|ResumeTTFBOverWebSocket' -test.benchtime 200x | grep '^Benchmark'; \
	  done

# The turn path against a base revision (before the turn became one
# pipeline): S1's reply CPU, a turn on a 200-message chat (S4's shape) and
# TC's turn at 10 and 2,000 stored messages (memory and Redis), in-process,
# TURN_ROUNDS rounds alternating the two builds' test binaries (fewer
# cannot tell 5 % apart on this machine); then the
# median cpu-ns/op of each, and head ÷ base. Results: docs/benchmarks.md.
TURN_BASE ?= ff6f274
TURN_ROUNDS ?= 15
bench-turn:
	@tmp=$$(mktemp -d); trap 'git worktree remove --force "$$tmp/base" >/dev/null 2>&1; rm -rf "$$tmp"' EXIT; \
	  git worktree add --detach "$$tmp/base" $(TURN_BASE) >/dev/null 2>&1 && \
	  (cd "$$tmp/base" && $(GO) test -c -o "$$tmp/base.test" ./uiadapter) && \
	  $(GO) test -c -o "$$tmp/head.test" ./uiadapter && \
	  for round in $$(seq $(TURN_ROUNDS)); do for build in base head; do \
	    dir=uiadapter; [ $$build = base ] && dir="$$tmp/base/uiadapter"; \
	    (cd "$$dir" && \
	      "$$tmp/$$build.test" -test.run '^$$' -test.cpu 1 -test.bench 'ReplyCPU' -test.benchtime 2000x && \
	      "$$tmp/$$build.test" -test.run '^$$' -test.cpu 1 -test.bench 'TurnWithHistory200' -test.benchtime 20000x && \
	      "$$tmp/$$build.test" -test.run '^$$' -test.cpu 1 -test.bench 'TurnCost/(memory|redis)/(10|2000)$$' -test.benchtime 1500x) \
	      | sed -n "s/^Benchmark/$$build Benchmark/p" | tee -a "$$tmp/all"; \
	  done; done; \
	  echo; echo "median cpu-ns/op (ns/op where none), head ÷ base:"; \
	  awk '{ v = ""; for (i = 3; i < NF; i++) if ($$(i+1) == "cpu-ns/op") v = $$i; \
	         if (v == "") for (i = 3; i < NF; i++) if ($$(i+1) == "ns/op") v = $$i; \
	         k = $$2; sub(/-[0-9]+$$/, "", k); n[$$1 SUBSEP k]++; x[$$1 SUBSEP k SUBSEP n[$$1 SUBSEP k]] = v; keys[k] = 1 } \
	       function med(b, k,   m, i, j, t, a) { m = n[b SUBSEP k]; for (i = 1; i <= m; i++) a[i] = x[b SUBSEP k SUBSEP i]; \
	         for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } \
	         return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 } \
	       END { for (k in keys) printf "%-45s base %12.0f  head %12.0f  %.2fx\n", k, med("base", k), med("head", k), med("head", k) / med("base", k) }' "$$tmp/all" | sort

# S4 of TURN_BASE and of this tree, side by side: the runner built from
# this tree runs S4 on each in turn, three times over (each run is three
# S4 runs of fresh servers); one line per run: CPU per turn and TTFB p99
# of the turns with and without Redis history. Results: docs/benchmarks.md.
bench-turn-s4: $(addsuffix /node_modules/.package-lock.json,$(BENCH_JS_PACKAGES))
	@tmp=$$(mktemp -d); trap 'git worktree remove --force "$$tmp/base" >/dev/null 2>&1; rm -rf "$$tmp"' EXIT; \
	  git worktree add --detach "$$tmp/base" $(TURN_BASE) >/dev/null 2>&1 && \
	  for d in $(BENCH_JS_PACKAGES); do ln -s "$(CURDIR)/$$d/node_modules" "$$tmp/base/$$d/node_modules"; done && \
	  $(GO) build -o "$$tmp/runner" ./bench/runner && \
	  for round in 1 2 3; do for build in base head; do \
	    repo="$(CURDIR)"; [ $$build = base ] && repo="$$tmp/base"; \
	    "$$tmp/runner" -repo "$$repo" -scenarios S4 -contenders agentui-vercel > "$$tmp/out.md" 2> "$$tmp/out.log" || { tail -5 "$$tmp/out.log"; exit 1; }; \
	    printf '%s %s: CPU per turn none %s, redis %s; TTFB p99 redis %s; redis - none, p99 by S4 run: %s\n' $$build $$round \
	      "$$(awk -F'|' '$$2 ~ /^ none $$/ { v = $$7; gsub(/^ +| +$$/, "", v); print v }' "$$tmp/out.md")" \
	      "$$(awk -F'|' '$$2 ~ /^ redis $$/ { v = $$7; gsub(/^ +| +$$/, "", v); print v }' "$$tmp/out.md")" \
	      "$$(awk -F'|' '$$2 ~ /^ redis $$/ { v = $$5; gsub(/^ +| +$$/, "", v); print v }' "$$tmp/out.md")" \
	      "$$(sed -n 's/.*by run: \(.*\)\.$$/\1/p' "$$tmp/out.md")"; \
	  done; done

# Telemetry's cost: S1 with telemetry off and on (spans to an
# exporter that drops them), five interleaved rounds; docs/benchmarks.md.
bench-telemetry:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(GO) test -c -o "$$tmp/telemetry.test" ./telemetry && \
	  for round in 1 2 3 4 5; do \
	    "$$tmp/telemetry.test" -test.run '^$$' -test.bench 'Tracing' -test.benchtime 400x | grep '^Benchmark'; \
	  done

# Policies' cost: S1 with no guard, a trivial Go policy at the
# input and tool points, and at every point (output held back), five
# interleaved rounds; docs/benchmarks.md.
bench-policy:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(GO) test -c -o "$$tmp/uiadapter.test" ./uiadapter && \
	  for round in 1 2 3 4 5; do \
	    "$$tmp/uiadapter.test" -test.run '^$$' -test.bench 'PolicyS1' -test.benchtime 400x | grep '^Benchmark'; \
	  done

# The chat page: sources in webui/app (React, useChat and HttpAgent, built
# by Vite), output in webui/dist, which package webui embeds.
# `make web` rebuilds it; `make web-check` fails when the committed build
# differs from what the sources build (modified, deleted or new files).
WEB_DIR = webui/app
WEB_OUT = webui/dist

.PHONY: web web-test web-check e2e bench-runs bench-telemetry bench-policy bench-turn bench-turn-s4

web: $(WEB_DIR)/node_modules/.package-lock.json
	cd $(WEB_DIR) && npx --no-install vite build --logLevel warn

# The page's unit tests (node --test, src/*.test.js): what its markdown
# reads as math. web-check runs them too.
web-test: $(WEB_DIR)/node_modules/.package-lock.json
	node --test $(WEB_DIR)/src/*.test.js

web-check: web web-test
	git diff --exit-code -- $(WEB_OUT)
	@untracked=$$(git ls-files --others --exclude-standard -- $(WEB_OUT)); \
	  if [ -n "$$untracked" ]; then echo "$(WEB_OUT) has files the commit lacks (run make web and commit):"; echo "$$untracked"; exit 1; fi

# The browser tests (e2e/chat.test.mjs, e2e/failures.test.mjs): build the
# binary with the embedded page as committed, start it on a free port and
# drive the page in Debian's Chromium (apt-get install chromium);
# screenshots go to test-output/e2e/. failures.test.mjs kills and restarts
# the binary, with chats in memory and in a Redis of its own
# (redis-server). Without Chromium they skip, except under CI, where they
# fail.
e2e: e2e/node_modules/.package-lock.json
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(GO) build -o "$$tmp/agentui" ./cmd/agentui && \
	  AGENTUI_BIN="$$tmp/agentui" node e2e/chat.test.mjs && \
	  AGENTUI_BIN="$$tmp/agentui" node e2e/failures.test.mjs

# The chat kits against agentui (e2e/kits.test.mjs): assistant-ui and
# CopilotKit, each wired as docs/frontends.md says, their pages built by
# Vite from e2e/kits/*/ (packages pinned by their lockfiles), driven in
# Chromium like the page's test.
KIT_DIRS = e2e/kits/assistant-ui e2e/kits/copilotkit
# Pages the test serves from Vite's dev server (e2e/kits/*/dev.mjs): no build.
KIT_DEV_DIRS = e2e/kits/usechat

.PHONY: e2e-kits kit-deps
kit-deps: $(addsuffix /node_modules/.package-lock.json,$(KIT_DIRS) $(KIT_DEV_DIRS))

e2e-kits: e2e/node_modules/.package-lock.json kit-deps
	@for d in $(KIT_DIRS); do (cd $$d && npx --no-install vite build --logLevel warn) || exit 1; done
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(GO) build -o "$$tmp/agentui" ./cmd/agentui && \
	  AGENTUI_BIN="$$tmp/agentui" node e2e/kits.test.mjs
