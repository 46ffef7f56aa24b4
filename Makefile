# Thin wrappers around the go command; no logic lives here.
GO ?= go

.PHONY: build test lint fuzz bench microbench run docs man install-man coverage release

build:
	$(GO) build -o bin/tpctl ./cmd/tpctl

test:
	$(GO) test ./...

# staticcheck comes through the module proxy at a pinned version; it is a
# tool, not a dependency, so it is not in go.mod.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# Short fuzzing runs of every fuzz target (FUZZTIME per target). Every
# target runs even when one fails; the failed ones are listed at the end.
# Go's fuzzer sometimes fails at the time limit with "context deadline
# exceeded" and no failing input (a known flake of the coordinator, not a
# finding): such a target is run once more before it counts as failed.
FUZZTIME ?= 10s
fuzz:
	@failed=""; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    for try in 1 2; do \
	      echo "== $$pkg $$t"; \
	      if $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg >"$$log" 2>&1; then \
	        cat "$$log"; break; fi; \
	      cat "$$log"; \
	      if [ $$try = 1 ] && grep -q 'context deadline exceeded' "$$log" && ! grep -q 'Failing input written to' "$$log"; then \
	        echo "== $$t: context deadline exceeded without a failing input (a known fuzzer flake); running it once more"; continue; fi; \
	      failed="$$failed $$pkg.$$t"; break; \
	    done; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "make fuzz: failed targets:"; for f in $$failed; do echo "  $$f"; done; exit 1; fi; \
	echo "make fuzz: every target passed"

# The performance table, measured side by side (docs in README.md,
# "Performance"): import of generated 10,000- and 100,000-trial jobs against
# cat of a precomputed list of the same result.json files (alternating
# runs, medians, min/median/max printed), transcripts (32 x 8 MiB ATIF,
# builtin:secrets, against the naive Python redactor in
# importer/testdata/naive-redactor.py; about 5 minutes), snapshot verify of the imported 100,000-trial snapshot
# against cat of its files (and in-process at 100,000 trials), and upload of 10,000
# observations to a receiver 50 ms away, and trend over 100 rounds of 1,000
# trials (text and --out HTML). BENCHROUNDS pairs per case
# (default 5); BENCHFLAGS=-short skips the large cases; TPCTL_BENCH_1M=1
# adds a 1,000,000-trial import (about 10 GB of temporary disk). The large
# jobs need about 3 GB of temporary disk. TPCTL_BENCH_JOBS=DIR keeps the
# generated import jobs in DIR from one run to the next (they are not
# measured, and a million-trial job takes minutes to write and to delete).
BENCHFLAGS ?=
BENCHROUNDS ?= 5
bench:
	TPCTL_BENCH_ROUNDS=$(BENCHROUNDS) $(GO) test -run '^$$' -bench '^Benchmark(ImportCmd|TranscriptsCmd|VerifyCmd|Upload10k)$$' -benchtime 1x -p 1 -timeout 60m $(BENCHFLAGS) ./importer ./upload
	$(GO) test -run '^$$' -bench '^BenchmarkVerify100k$$' -benchtime 5x $(BENCHFLAGS) ./snapshot
	TPCTL_BENCH_ROUNDS=$(BENCHROUNDS) $(GO) test -run '^$$' -bench '^BenchmarkTrendCmd$$' -benchtime 1x $(BENCHFLAGS) ./trend
	cd export/duckdbtest && TPCTL_BENCH_ROUNDS=$(BENCHROUNDS) $(GO) test -run '^$$' -bench '^BenchmarkExportParquet$$' -benchtime 1x -timeout 60m $(BENCHFLAGS) .
	TPCTL_BENCH_ROUNDS=$(BENCHROUNDS) $(GO) test -run '^$$' -bench '^BenchmarkReportCmd$$' -benchtime 1x -timeout 60m $(BENCHFLAGS) ./report
	$(GO) test -run '^$$' -bench '^BenchmarkBrowserInteractive$$' -benchtime 5x -timeout 30m $(BENCHFLAGS) ./report

# Every benchmark, micro-benchmarks included, for profiles.
microbench:
	$(GO) test -run '^$$' -bench . -benchmem $(BENCHFLAGS) ./...

# The quick start's main job: import the bundled example.
# It writes out/make-run, removed first so that the target can run again
# (import never overwrites a snapshot); out/ is git-ignored scratch.
run:
	rm -rf out/make-run
	$(GO) run ./cmd/tpctl import --plan testdata/example/import-plan.json --root testdata/example --out out/make-run

# The CLI reference (docs/cli/reference) and man pages (docs/man), generated
# from the command tree by cobra's doc generator; a test fails when they are
# stale. Install the man pages with: make install-man
docs:
	TPCTL_UPDATE_DOCS=1 $(GO) test ./cmd/tpctl -run '^TestGeneratedDocs$$' -count=1

man: docs

# The man pages where man finds them: PREFIX/share/man/man1.
PREFIX ?= /usr/local
install-man:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

# The coverage table of docs/statistics.md ("Coverage"), from the
# deterministic simulation that go test also runs (stats/coverage_test.go).
coverage:
	TPCTL_UPDATE_COVERAGE=1 $(GO) test ./stats -run '^TestCoverage$$' -count=1
# Release binaries for every platform with SHA256SUMS (.ci/release):
# -trimpath, no cgo, VERSION stamped (default: git describe), into DIST
# (default dist/). The tag workflow .github/workflows/release.yml runs it.
VERSION ?=
release:
	VERSION=$(VERSION) GO=$(GO) .ci/release
