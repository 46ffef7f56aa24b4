package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/harborgen"
	"github.com/tuneplane/tpctl/producers/harbor"
	"github.com/tuneplane/tpctl/snapshot"
)

// streamJob writes a generated job of n trials (tasks of 10 repeats; the
// 99th and 100th attempts have no folder) and returns its root and its
// plan decoded, for a case to edit.
func streamJob(t *testing.T, n int) (root string, plan map[string]any) {
	t.Helper()
	job, err := harborgen.Write(t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(job.PlanPath)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&plan); err != nil {
		t.Fatal(err)
	}
	return job.Root, plan
}

func trialsOf(p map[string]any) []any { return p["trials"].([]any) }

func attemptsOf(tr any) []any { return tr.(map[string]any)["attempts"].([]any) }

// addResult gives the job one more attempt folder holding a valid result.
func addResult(t *testing.T, root, rel, task string) string {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, harbor.ResultFile), []byte(harborgen.Result(task, filepath.Base(rel), harborgen.Failure)), 0o644); err != nil {
		t.Fatal(err)
	}
	return rel
}

// TestStreamedImportMatchesLoaded: whatever the plan, Import gives the
// very snapshot (plan.json, observations.jsonl, snapshot.json), warnings
// and errors the loaded path gives; plans the scan vouches for are
// streamed, and the rest fall back.
func TestStreamedImportMatchesLoaded(t *testing.T) {
	tests := []struct {
		name    string
		indent  bool
		unverif bool
		edit    func(t *testing.T, root string, p map[string]any)
		raw     func(b []byte) []byte // edits the written plan's bytes
		streams bool
		invalid bool
	}{
		{name: "compact", streams: true},
		{name: "indented", indent: true, streams: true},
		{name: "retries and a trial never run", streams: true, edit: func(t *testing.T, root string, p map[string]any) {
			trs := trialsOf(p)
			tr := trs[3].(map[string]any)
			tr["attempts"] = append(attemptsOf(tr), map[string]any{"retry": 2, "dir": addResult(t, root, "jobs/extra/retry-2", tr["task"].(string))})
			trs[5].(map[string]any)["attempts"] = []any{}
			delete(trs[6].(map[string]any), "attempts")
		}},
		{name: "unverified revision allowed", unverif: true, streams: true, edit: func(t *testing.T, root string, p map[string]any) {
			p["source"].(map[string]any)["revision"] = "0123456789abcdef0123456789abcdef01234567"
		}},
		{name: "trainable", streams: true, edit: func(t *testing.T, root string, p map[string]any) {
			p["split"], p["trainable"] = "train", true
		}},
		{name: "missing parent", streams: true, edit: func(t *testing.T, root string, p map[string]any) {
			attemptsOf(trialsOf(p)[11])[0].(map[string]any)["dir"] = "nope/x/y"
		}},
		{name: "settings incomplete", streams: true, edit: func(t *testing.T, root string, p map[string]any) {
			delete(p, "settings")
		}},
		{name: "trials out of order", streams: true, edit: func(t *testing.T, root string, p map[string]any) {
			trs := trialsOf(p)
			trs[0], trs[len(trs)-1] = trs[len(trs)-1], trs[0]
		}},
		// Missing folders (trials 98, 99, a missing parent) are warned at
		// their index in the file, not in canonical order.
		{name: "trials shuffled", indent: true, streams: true, edit: func(t *testing.T, root string, p map[string]any) {
			trs := trialsOf(p)
			attemptsOf(trs[11])[0].(map[string]any)["dir"] = "nope/x/y"
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(trs), func(i, j int) { trs[i], trs[j] = trs[j], trs[i] })
			tr := trs[3].(map[string]any)
			tr["attempts"] = append(attemptsOf(tr), map[string]any{"retry": 2, "dir": addResult(t, root, "jobs/extra/retry-2", tr["task"].(string))})
		}},
		{name: "a trial twice, apart", invalid: true, edit: func(t *testing.T, root string, p map[string]any) {
			trs := trialsOf(p)
			trs[0], trs[len(trs)-1] = trs[len(trs)-1], trs[0]
			p["trials"] = append(trs, map[string]any{"task": trs[0].(map[string]any)["task"], "repeat": trs[0].(map[string]any)["repeat"]})
		}},
		{name: "attempts out of order", edit: func(t *testing.T, root string, p map[string]any) {
			tr := trialsOf(p)[2].(map[string]any)
			tr["attempts"] = append([]any{map[string]any{"retry": 1, "dir": addResult(t, root, "jobs/extra/r1", tr["task"].(string))}}, attemptsOf(tr)...)
		}},
		{name: "escaped task", raw: func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"bench/task-00001"`), []byte(`"\u0062ench/task-00001"`), -1)
		}},
		{name: "unverified revision refused", invalid: true, edit: func(t *testing.T, root string, p map[string]any) {
			p["source"].(map[string]any)["revision"] = "0123456789abcdef0123456789abcdef01234567"
		}},
		{name: "symlinked dir", invalid: true, edit: func(t *testing.T, root string, p map[string]any) {
			tr := trialsOf(p)[7].(map[string]any)
			if err := os.Symlink(filepath.Join(root, filepath.FromSlash(attemptsOf(tr)[0].(map[string]any)["dir"].(string))), filepath.Join(root, "jobs", "link")); err != nil {
				t.Fatal(err)
			}
			attemptsOf(tr)[0].(map[string]any)["dir"] = "jobs/link"
		}},
		{name: "symlinked parent", invalid: true, edit: func(t *testing.T, root string, p map[string]any) {
			if err := os.Symlink(filepath.Join(root, "jobs"), filepath.Join(root, "alias")); err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{4, 9} {
				a := attemptsOf(trialsOf(p)[i])[0].(map[string]any)
				a["dir"] = "alias/" + strings.TrimPrefix(a["dir"].(string), "jobs/")
			}
		}},
		{name: "dir is a file", invalid: true, edit: func(t *testing.T, root string, p map[string]any) {
			a := attemptsOf(trialsOf(p)[8])[0].(map[string]any)
			a["dir"] = a["dir"].(string) + "/result.json"
		}},
		{name: "duplicate dir", invalid: true, edit: func(t *testing.T, root string, p map[string]any) {
			trs := trialsOf(p)
			attemptsOf(trs[9])[0].(map[string]any)["dir"] = attemptsOf(trs[2])[0].(map[string]any)["dir"]
		}},
		{name: "schema error", invalid: true, edit: func(t *testing.T, root string, p map[string]any) {
			trialsOf(p)[1].(map[string]any)["repeat"] = -1
		}},
		{name: "syntax error", invalid: true, raw: func(b []byte) []byte { return b[:len(b)-2] }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, p := streamJob(t, 120)
			if tc.edit != nil {
				tc.edit(t, root, p)
			}
			var b []byte
			var err error
			if tc.indent {
				b, err = json.MarshalIndent(p, "", "  ")
			} else {
				b, err = json.Marshal(p)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.raw != nil {
				b = tc.raw(b)
			}
			planPath := filepath.Join(root, "import-plan.json")
			if err := os.WriteFile(planPath, b, 0o644); err != nil {
				t.Fatal(err)
			}
			outs := t.TempDir()
			// What Options.Visitor is handed, each pass starting over.
			var seen []string
			opts := func(out string) Options {
				return Options{Producers: testProducers, PlanPath: planPath, Root: root, Out: filepath.Join(outs, out), AllowUnverifiedFormat: tc.unverif,
					Visitor: func() snapshot.Visit {
						seen = nil
						return recordVisits(t, &seen)
					}}
			}
			ctx := context.Background()
			got, _, gotErr, streamed := importStreamed(ctx, opts("streamed"))
			if streamed != tc.streams {
				t.Errorf("streamed = %v (err %v); want %v", streamed, gotErr, tc.streams)
			}
			if !streamed {
				got, gotErr = Import(ctx, opts("streamed"))
			}
			gotSeen := seen
			want, wantErr := importLoaded(ctx, opts("loaded"), nil)
			var gotInv, wantInv *PlanInvalidError
			if errors.As(wantErr, &wantInv) != tc.invalid {
				t.Fatalf("loaded path: err = %v; invalid want %v", wantErr, tc.invalid)
			}
			if tc.invalid {
				if !errors.As(gotErr, &gotInv) {
					t.Fatalf("err = %v; want %v", gotErr, wantErr)
				}
				if !reflect.DeepEqual(gotInv.Report, wantInv.Report) || gotErr.Error() != wantErr.Error() {
					t.Errorf("report\n%+v\nwant\n%+v", gotInv.Report, wantInv.Report)
				}
				if _, err := os.Lstat(filepath.Join(outs, "streamed")); !os.IsNotExist(err) {
					t.Errorf("an invalid plan left a snapshot: %v", err)
				}
				return
			}
			if gotErr != nil || wantErr != nil {
				t.Fatalf("errors: %v / %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(got.Warnings, want.Warnings) || !reflect.DeepEqual(got.Skipped, want.Skipped) {
				t.Errorf("warnings\n%v\nwant\n%v", got.Warnings, want.Warnings)
			}
			// The Visit saw what a verified read of the saved snapshot
			// hands one, trial by trial.
			var saved []string
			if _, err := snapshot.OpenTrials(got.Dir, func(*snapshot.Manifest, []byte) (snapshot.Visit, error) {
				saved = nil
				return recordVisits(t, &saved), nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(saved) != 120 || !slices.Equal(gotSeen, saved) || !slices.Equal(seen, saved) {
				t.Errorf("Visitor saw %d trials (%d loaded), the saved snapshot holds %d:\n%.2000s\nwant\n%.2000s", len(gotSeen), len(seen), len(saved), strings.Join(gotSeen, "\n"), strings.Join(saved, "\n"))
			}
			for _, f := range []string{snapshot.PlanFile, snapshot.ObservationsFile, snapshot.ManifestFile} {
				g, err1 := os.ReadFile(filepath.Join(got.Dir, f))
				w, err2 := os.ReadFile(filepath.Join(want.Dir, f))
				if err1 != nil || err2 != nil || !bytes.Equal(g, w) {
					t.Errorf("%s differs (%v, %v)\n%.600s\nwant\n%.600s", f, err1, err2, g, w)
				}
			}
		})
	}
}

// recordVisits is a Visit that appends each planned trial, as JSON, to
// seen: a Visit's observation may be reused for the next trial.
func recordVisits(t *testing.T, seen *[]string) snapshot.Visit {
	return func(p snapshot.PlannedTrial) error {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		*seen = append(*seen, string(b))
		return nil
	}
}

// TestStreamedImportCancelled: a streamed import cancelled while it
// judges ends as cancelled and leaves nothing at --out.
func TestStreamedImportCancelled(t *testing.T) {
	root, p := streamJob(t, 300)
	b, _ := json.Marshal(p)
	plan := filepath.Join(root, "import-plan.json")
	if err := os.WriteFile(plan, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "snap")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, err, ok := importStreamed(ctx, Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out, Workers: 2,
		Progress: func(p Progress) {
			if p.Done == 10 {
				cancel()
			}
		}})
	if !ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("ok %v, err = %v; want a streamed import cancelled", ok, err)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("--out exists after a cancelled import: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".snap.tmp-*")); len(left) > 0 {
		t.Errorf("temporary folders left behind: %v", left)
	}
}

// TestWarningsPerCode: an import keeping a few warnings of each code keeps
// exactly the first ones of the full list, in order, and counts the rest,
// whether the plan is streamed in order, streamed shuffled, or loaded.
func TestWarningsPerCode(t *testing.T) {
	root, p := streamJob(t, 5000) // 100 folders missing, two in every 100 trials
	trs := trialsOf(p)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(trs), func(i, j int) { trs[i], trs[j] = trs[j], trs[i] })
	shuffled, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	job, err := harborgen.Write(t.TempDir(), 5000)
	if err != nil {
		t.Fatal(err)
	}
	inOrder, err := os.ReadFile(job.PlanPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		plan []byte
		run  func(context.Context, Options) (*Result, error)
	}{
		{"streamed in order", inOrder, Import},
		{"streamed shuffled", shuffled, Import},
		{"loaded shuffled", shuffled, func(ctx context.Context, o Options) (*Result, error) { return importLoaded(ctx, o, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planPath := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(planPath, tc.plan, 0o644); err != nil {
				t.Fatal(err)
			}
			outs := t.TempDir()
			all, err := tc.run(context.Background(), Options{Producers: testProducers, PlanPath: planPath, Root: root, Out: filepath.Join(outs, "all")})
			if err != nil {
				t.Fatal(err)
			}
			const n = 3
			some, err := tc.run(context.Background(), Options{Producers: testProducers, PlanPath: planPath, Root: root, Out: filepath.Join(outs, "some"), WarningsPerCode: n})
			if err != nil {
				t.Fatal(err)
			}
			missing := 0
			for _, w := range all.Warnings {
				if w.Code == "dir_missing" {
					missing++
				}
			}
			if missing != 100 || all.More != nil {
				t.Fatalf("uncapped: %d dir_missing, more %v", missing, all.More)
			}
			want, wantMore := firstOfEach(slices.Clone(all.Warnings), n)
			if !reflect.DeepEqual(some.Warnings, want) || !reflect.DeepEqual(some.More, wantMore) || some.More["dir_missing"] != 97 {
				t.Errorf("kept\n%v\nmore %v\nwant\n%v\nmore %v", some.Warnings, some.More, want, wantMore)
			}
		})
	}
}
