# Thin wrappers around the go command; no logic lives here.
GO ?= go

.PHONY: build test lint fuzz bench run

build:
	$(GO) build -o bin/tpctl ./cmd/tpctl

test:
	$(GO) test ./...

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

# Short fuzzing runs of every fuzz target (FUZZTIME per target).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg || exit 1; \
	  done; \
	done

# Benchmarks, including imports of large generated Harbor jobs.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The quick start's main job: import the bundled example.
run:
	$(GO) run ./cmd/tpctl import --plan testdata/example/import-plan.json --root testdata/example --out "$$(mktemp -d)/round-1"
