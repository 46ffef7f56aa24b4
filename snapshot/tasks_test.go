package snapshot

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestTaskTable(t *testing.T) {
	var tt TaskTable
	for _, tr := range []struct{ task, status string }{
		{"b/flaky", StatusSuccess}, {"b/flaky", StatusFailure}, {"b/flaky", StatusSuccess},
		{"a/broken", StatusFailure}, {"a/broken", StatusFailure}, {"a/broken", StatusFailure},
		{"c/infra", StatusInfraError}, {"c/infra", StatusSuccess}, {"c/infra", StatusMissing},
		{"d/good", StatusSuccess}, {"d/good", StatusSuccess}, {"d/good", StatusSuccess},
		{"e/none", StatusUnscored},
	} {
		if err := tt.Add(tr.task, tr.status); err != nil {
			t.Fatal(err)
		}
	}
	if err := tt.Add("x", "bogus"); err == nil {
		t.Error("a bogus status was counted")
	}
	rows := tt.Rows()
	type want struct {
		task            string
		planned, scored int
		rate, hat       float64 // -1: nil
		flags           []string
	}
	wants := []want{
		{"a/broken", 3, 3, 0, 0, []string{"always_fail"}},
		{"b/flaky", 3, 3, 2.0 / 3, 0, []string{"flaky"}},
		{"c/infra", 3, 1, 1, -1, nil},
		{"d/good", 3, 3, 1, 1, nil},
		{"e/none", 1, 0, -1, -1, []string{"low_coverage"}},
	}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d", len(rows), len(wants))
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	for i, w := range wants {
		r := rows[i]
		if r.Task != w.task || r.Planned != w.planned || r.Scored != w.scored || math.Abs(val(r.SuccessRate)-w.rate) > 1e-9 ||
			math.Abs(val(r.PassHatK)-w.hat) > 1e-9 || !slices.Equal(r.Flags(), w.flags) || r.K != 3 {
			t.Errorf("row %d: %+v (flags %v), want %+v", i, r, r.Flags(), w)
		}
	}
	// c/infra: 1 infra of 3 planned is under half, so not infra_prone.
	var t2 TaskTable
	t2.Add("x", StatusInfraError)
	t2.Add("x", StatusFailure)
	if r := t2.Rows()[0]; !r.InfraProne || !r.AlwaysFail {
		t.Errorf("half infra_error: %+v", r)
	}

	if err := SortTasks(rows, "rate"); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range rows {
		order = append(order, r.Task)
	}
	if want := []string{"e/none", "a/broken", "b/flaky", "c/infra", "d/good"}; !slices.Equal(order, want) {
		t.Errorf("by rate %v, want %v", order, want)
	}
	if err := SortTasks(rows, "failure"); err != nil || rows[0].Task != "a/broken" {
		t.Errorf("by failure: first %s (%v)", rows[0].Task, err)
	}
	if err := SortTasks(rows, "nonsense"); err == nil {
		t.Error("an unknown sort key was accepted")
	}
}

// TestTaskTablePassHatKMatchesStatistics: the per-task pass^K averages,
// over counted tasks, to the manifest's pass_hat_k at the same K.
func TestTaskTablePassHatKMatchesStatistics(t *testing.T) {
	statuses := []string{StatusSuccess, StatusFailure, StatusSuccess, StatusFailure, StatusInfraError, StatusUnscored, StatusMissing}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var tt TaskTable
		var tallies []taskTally
		for task := range 1 + rng.IntN(12) {
			name := "t" + strconv.Itoa(task)
			tl := taskTally{task: name, planned: 2 + rng.IntN(4)}
			for range tl.planned {
				s := statuses[rng.IntN(len(statuses))]
				if rng.IntN(3) > 0 {
					s = statuses[rng.IntN(2)]
				}
				tt.Add(name, s)
				switch s {
				case StatusSuccess:
					tl.success++
				case StatusFailure:
					tl.failure++
				case StatusInfraError:
					tl.infraErr++
				}
				if s != StatusMissing {
					tl.seen++
				}
			}
			tallies = append(tallies, tl)
		}
		st := statisticsOf(tallies, Format)
		rows := tt.Rows()
		sum, n := 0.0, 0
		for _, r := range rows {
			if r.PassHatK != nil {
				sum += *r.PassHatK
				n++
			}
		}
		if n == 0 {
			continue
		}
		k := rows[0].K
		counted, _ := st.PassKTasksByK.K(k)
		if n != counted.Counted {
			t.Fatalf("%d rows with pass^%d, statistics count %d tasks", n, k, counted.Counted)
		}
		want, ok := st.PassHatK.K(k)
		if !ok || math.Abs(sum/float64(n)-want) > 1e-9 {
			t.Fatalf("mean per-task pass^%d %v, statistics %v (max k %d)", k, sum/float64(n), want, st.PassHatK.MaxK())
		}
	}
}

// TestVerifyExplanationByFormat: a tpctl-snapshot/3 observation may carry
// detail, timing, usage and agent; a /2 or /1 one may not, and without
// them a /2 manifest still verifies; the round ID does not depend on them.
func TestVerifyExplanationByFormat(t *testing.T) {
	plain := testObservations()
	explained := testObservations()
	explained[2].AttemptOutcomes[0].Detail = "exception WeirdError: Docker compose command failed for environment b"
	explained[2].AttemptOutcomes[0].Timing = &Timing{EnvironmentSetup: ptr(1.5)}
	explained[0].AttemptOutcomes[1].Agent = &Agent{Name: "terminus-2", Model: ptr("gpt-5.4")}
	explained[0].AttemptOutcomes[1].Usage = &Usage{InputTokens: ptr(int64(10))}

	tests := []struct {
		name    string
		obs     []Observation
		format  string
		problem bool
	}{
		{"v3 plain", plain, Format, false},
		{"v3 explained", explained, Format, false},
		{"v2 plain", plain, FormatV2, false},
		{"v2 explained", explained, FormatV2, true},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			m := writeSnapshot(t, dir, tt.obs)
			ids[tt.name] = m.RoundID
			if tt.format != Format {
				if err := replaceIn(filepath.Join(dir, ManifestFile), `"format": "`+Format+`"`, `"format": "`+tt.format+`"`); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			// A manifest relabelled /2 also has /3 statistics, which verify
			// reports apart (manifest_mismatch); this test is about the
			// observations' explanation members only.
			var obsProblems []Problem
			for _, p := range rep.Problems {
				if p.Code != ProblemFieldMismatch {
					obsProblems = append(obsProblems, p)
				}
			}
			if tt.format == Format && !rep.OK {
				t.Fatalf("problems %+v", rep.Problems)
			}
			if (len(obsProblems) > 0) != tt.problem {
				t.Fatalf("problems %+v", rep.Problems)
			}
			if tt.problem && (obsProblems[0].Code != ProblemObservation || !strings.Contains(obsProblems[0].Message, "a tpctl-snapshot/2 snapshot has none")) {
				t.Errorf("problem %+v", obsProblems[0])
			}
		})
	}
	if ids["v3 plain"] != ids["v3 explained"] {
		t.Errorf("the explanation changed the round ID: %s vs %s", ids["v3 plain"], ids["v3 explained"])
	}
}
