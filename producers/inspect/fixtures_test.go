package inspect

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/fixtures"
)

// oracle is what a test derives from a log's own fields with
// encoding/json and archive/zip, independently of the package's readers:
// the planned count, the samples held, and the verdicts a plain reading
// of the fixtures' values gives (every shared log scores with "C"/"I" or
// numbers 0/1, or not at all).
type oracle struct {
	version          float64
	planned          int
	present          int
	success, failure int
	unscored         int // held, planned, no primary score
	total, completed int
	accuracy         *float64
	hasIDs           bool
}

func readOracle(t *testing.T, path string) oracle {
	t.Helper()
	var hdr map[string]any
	var samples []map[string]any
	if strings.HasSuffix(path, ".eval") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			err = json.NewDecoder(rc).Decode(&v)
			rc.Close()
			switch {
			case f.Name == "header.json":
				if err != nil {
					t.Fatal(err)
				}
				hdr = v
			case strings.HasPrefix(f.Name, "samples/"):
				if err != nil {
					t.Fatal(err)
				}
				samples = append(samples, v)
			}
		}
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &hdr); err != nil {
			t.Fatal(err)
		}
		if s, ok := hdr["samples"].([]any); ok {
			for _, e := range s {
				samples = append(samples, e.(map[string]any))
			}
		}
	}
	var o oracle
	o.version = hdr["version"].(float64)
	ev := hdr["eval"].(map[string]any)
	ds := ev["dataset"].(map[string]any)
	cfg := ev["config"].(map[string]any)
	epochs := 1
	if e, ok := cfg["epochs"].(float64); ok {
		epochs = int(e)
	}
	planned := map[string]bool{}
	if ids, ok := ds["sample_ids"].([]any); ok {
		o.hasIDs = true
		for _, id := range ids {
			for e := 1; e <= epochs; e++ {
				planned[keyOf(id, float64(e))] = true
			}
		}
	} else {
		for _, s := range samples {
			planned[keyOf(s["id"], s["epoch"].(float64))] = true
		}
	}
	o.planned = len(planned)
	o.present = len(samples)
	scorer := ""
	if sc, ok := ev["scorers"].([]any); ok && len(sc) == 1 {
		scorer = sc[0].(map[string]any)["name"].(string)
	}
	if res, ok := hdr["results"].(map[string]any); ok {
		o.total = int(res["total_samples"].(float64))
		o.completed = int(res["completed_samples"].(float64))
		if scores, ok := res["scores"].([]any); ok && len(scores) == 1 {
			s0 := scores[0].(map[string]any)
			if scorer == "" {
				scorer = s0["scorer"].(string)
			}
			if acc, ok := s0["metrics"].(map[string]any)["accuracy"].(map[string]any); ok {
				a := acc["value"].(float64)
				o.accuracy = &a
			}
		}
	}
	for _, s := range samples {
		if !planned[keyOf(s["id"], s["epoch"].(float64))] {
			continue
		}
		scores, _ := s["scores"].(map[string]any)
		sc, ok := scores[scorer].(map[string]any)
		if !ok {
			o.unscored++
			continue
		}
		switch sc["value"] {
		case "C", 1.0, true:
			o.success++
		case "I", 0.0, false:
			o.failure++
		default:
			t.Fatalf("%s: the oracle does not know the score value %v", path, sc["value"])
		}
	}
	return o
}

func keyOf(id any, epoch float64) string {
	b, _ := json.Marshal(id)
	return string(b) + "#" + strings.TrimSuffix(strings.TrimSuffix(json.Number(jsonFloat(epoch)).String(), ".0"), ".")
}

func jsonFloat(f float64) string { b, _ := json.Marshal(f); return string(b) }

func fixtureLogs(t *testing.T) (string, []string) {
	dir := fixtures.Inspect(t)
	var logs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".eval") || strings.HasSuffix(p, ".json")) {
			logs = append(logs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 21 {
		t.Fatalf("found %d logs in %s, SOURCES.md lists 21", len(logs), dir)
	}
	return dir, logs
}

func openFile(t *testing.T, path string) *Log {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(f, fi.Size(), filepath.Base(path), Limits{})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return l
}

// TestEveryFixtureLog: every shared log is read and judged, or refused
// naming what is unsupported, and its counts agree with the oracle's.
func TestEveryFixtureLog(t *testing.T) {
	dir, logs := fixtureLogs(t)
	for _, path := range logs {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			o := readOracle(t, path)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			l, err := Open(f, fi.Size(), rel, Limits{})
			if o.version != 2 {
				var ve *VersionError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), "version 3 is not supported") {
					t.Fatalf("a version %v log: err = %v, want a VersionError naming it", o.version, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Header.InspectVersion == "" {
				t.Error("no Inspect version read from eval.packages.inspect_ai")
			}
			sum, err := Summarize(l, "")
			if err != nil {
				t.Fatal(err)
			}
			c := sum.Counts()
			if len(sum.Trials) != o.planned {
				t.Errorf("planned %d, the log's own fields plan %d", len(sum.Trials), o.planned)
			}
			if sum.Body.Present != o.present {
				t.Errorf("present %d, oracle %d", sum.Body.Present, o.present)
			}
			if c[Success] != o.success || c[Failure] != o.failure {
				t.Errorf("success/failure %d/%d, oracle %d/%d", c[Success], c[Failure], o.success, o.failure)
			}
			missing := o.planned - (o.success + o.failure + o.unscored)
			if sum.Missing() != missing {
				t.Errorf("missing %d, oracle %d", sum.Missing(), missing)
			}
			if c[Unscored] != o.unscored+missing {
				t.Errorf("unscored %d, oracle %d (%d without a score, %d missing)", c[Unscored], o.unscored+missing, o.unscored, missing)
			}
			if (sum.Plan.Source == PlanFromSampleIDs) != o.hasIDs {
				t.Errorf("plan source %s, log lists ids: %v", sum.Plan.Source, o.hasIDs)
			}
			if !o.hasIDs && len(sum.Plan.Warnings) == 0 {
				t.Error("a plan drawn from the samples held carries no warning")
			}
			differs := o.total != o.planned || o.completed != o.present
			if got := len(sum.Differences) > 0; got != differs {
				t.Errorf("producer_counts_differ %v (%v), oracle %v (total %d planned %d completed %d present %d)",
					got, sum.Differences, differs, o.total, o.planned, o.completed, o.present)
			}
			scored := c[Success] + c[Failure]
			if o.accuracy != nil && scored > 0 {
				rate := float64(c[Success]) / float64(scored)
				if math.Abs(rate-*o.accuracy) > 1e-12 && scored == o.present {
					t.Errorf("rate %v, Inspect's accuracy %v over the same samples", rate, *o.accuracy)
				}
			}
		})
	}
}

// TestNamedFixtureLogs pins the cases the issue names.
func TestNamedFixtureLogs(t *testing.T) {
	dir := fixtures.Inspect(t)
	sum := func(rel string) *Summary {
		t.Helper()
		s, err := Summarize(openFile(t, filepath.Join(dir, rel)), "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("no-samples: 3 missing, no rate, counts differ", func(t *testing.T) {
		s := sum("analysis/test_logs/2025-05-12T20-28-13-04-00_no-samples.json")
		c := s.Counts()
		if len(s.Trials) != 3 || s.Missing() != 3 || c[Success]+c[Failure] != 0 {
			t.Errorf("trials %d missing %d counts %v", len(s.Trials), s.Missing(), c)
		}
		found := false
		for _, d := range s.Differences {
			if d.Field == "results.completed_samples" && d.Inspect == 3 && d.Body == 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("differences %v: want completed_samples 3 vs 0", s.Differences)
		}
		if s.Plan.Scope() != "3 of 100 samples of the dataset" {
			t.Errorf("scope %q", s.Plan.Scope())
		}
	})
	t.Run("unscored twin: coverage 0", func(t *testing.T) {
		s := sum("scorer/logs/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval")
		c := s.Counts()
		if len(s.Trials) != 10 || c[Unscored] != 10 || s.Scorer != "match" {
			t.Errorf("trials %d counts %v scorer %q", len(s.Trials), c, s.Scorer)
		}
		for _, tr := range s.Trials {
			if r := tr.Judgement.Final().Reason; r != ReasonScoreMissing {
				t.Errorf("%v: reason %s", tr.Planned, r)
			}
		}
	})
	t.Run("scored twin: accuracy 0.8", func(t *testing.T) {
		s := sum("scorer/logs/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval")
		c := s.Counts()
		if c[Success] != 8 || c[Failure] != 2 || float64(c[Success])/float64(c[Success]+c[Failure]) != 0.8 {
			t.Errorf("counts %v", c)
		}
		if s.Header.Results.Scores[0].Metrics[0].Name != "accuracy" || *s.Header.Results.Scores[0].Metrics[0].Value != 0.8 {
			t.Errorf("Inspect's figures %+v", s.Header.Results.Scores[0])
		}
		if len(s.Differences) != 0 {
			t.Errorf("differences %v", s.Differences)
		}
		if s.Header.InspectVersion != "0.3.58.dev16+g6a87748b" {
			t.Errorf("Inspect version %q", s.Header.InspectVersion)
		}
		if !s.Plan.Limited() || s.Plan.Scope() != "10 of 100 samples of the dataset" {
			t.Errorf("scope %q", s.Plan.Scope())
		}
	})
	t.Run("2 epochs: plans 4", func(t *testing.T) {
		s := sum("log/test_eval_log/log_streaming.eval")
		if len(s.Trials) != 4 || s.Plan.Epochs != 2 || s.Missing() != 0 {
			t.Errorf("trials %d epochs %d missing %d", len(s.Trials), s.Plan.Epochs, s.Missing())
		}
	})
	t.Run("a sample outside the plan is not counted", func(t *testing.T) {
		s := sum("log/test_eval_log/log_tool_call_error.json")
		if len(s.Trials) != 1 || s.Missing() != 1 || len(s.Unplanned) != 1 || len(s.Differences) == 0 {
			t.Errorf("trials %d missing %d unplanned %v differences %v", len(s.Trials), s.Missing(), s.Unplanned, s.Differences)
		}
	})
}

// TestFixtureMessages: every sample of every readable log converts into
// the neutral conversation, tool calls with their arguments and results.
func TestFixtureMessages(t *testing.T) {
	dir, logs := fixtureLogs(t)
	toolCalls := 0
	for _, path := range logs {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		l, err := Open(f, fi.Size(), path, Limits{})
		if err != nil {
			f.Close()
			continue // the version 3 log, checked above
		}
		err = l.Samples(SampleOptions{Messages: true}, func(s *Sample) error {
			msgs, err := s.Messages()
			if err != nil {
				return err
			}
			if len(msgs) == 0 {
				t.Errorf("%s %s: no messages", path, s.Member)
			}
			for _, m := range msgs {
				if strings.HasPrefix(m.Content, attachmentPrefix) {
					t.Errorf("%s %s: unresolved attachment %q", path, s.Member, m.Content)
				}
				if m.Role == "assistant" && m.CallID != "" {
					toolCalls++
					if m.ToolName == "" || !json.Valid([]byte(m.Content)) {
						t.Errorf("%s: tool call %+v", path, m)
					}
				}
			}
			return nil
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if toolCalls == 0 {
		t.Errorf("no tool call in %s: the conversion of calls went untested", dir)
	}
}
