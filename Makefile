# agentui — every check CI runs is a target here. `make test` runs them all.
GO      ?= go
# The cmf package keeps at least this much statement coverage (review finding 3).
CMF_MIN_COVERAGE ?= 96

JS_PACKAGES = conformance/js

.PHONY: test vet unit cover-cmf fuzz js-deps

test: js-deps vet unit cover-cmf

# Install the JavaScript packages the tests drive (pinned by their lockfiles)
# when they are missing or older than the lockfile.
js-deps: $(addsuffix /node_modules/.package-lock.json,$(JS_PACKAGES))

%/node_modules/.package-lock.json: %/package-lock.json
	cd $* && npm ci --no-audit --no-fund --loglevel=error

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

cover-cmf:
	@$(GO) test -count=1 -coverprofile=.cover-cmf.out ./cmf >/dev/null
	@pct=$$($(GO) tool cover -func=.cover-cmf.out | awk '/^total:/ {sub("%","",$$3); print $$3}'); rm -f .cover-cmf.out; \
	  echo "cmf coverage: $$pct% (minimum $(CMF_MIN_COVERAGE)%)"; \
	  awk -v p="$$pct" -v m="$(CMF_MIN_COVERAGE)" 'BEGIN { exit (p+0 >= m+0) ? 0 : 1 }' || { echo "cmf coverage below $(CMF_MIN_COVERAGE)%"; exit 1; }

# Run each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./cmf -run '^$$' -fuzz FuzzMessageJSON -fuzztime $(FUZZTIME)
