package lmeval

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSettingsDigest(t *testing.T) {
	a := readResults(t, pairedA, pairedATS)
	b := readResults(t, pairedB, pairedBTS)
	c := readResults(t, differs, differsTS)
	l := readResults(t, limitedDir, limitedTS)
	da, db := SettingsDigest(a, a.Task("arc_easy")), SettingsDigest(b, b.Task("arc_easy"))
	if da != db {
		t.Errorf("two models, one config: digests differ %s %s", da, db)
	}
	if dc := SettingsDigest(c, c.Task("arc_easy")); dc == da {
		t.Error("5-shot and 0-shot share a settings digest")
	}
	// The limited run applied a chat template and a system instruction.
	if dl := SettingsDigest(l, l.Task("arc_easy")); dl == da {
		t.Error("a chat template and system instruction left the digest unchanged")
	}
	in := SettingsInputs(l, l.Task("arc_easy"))
	if in["chat_template_sha"] != hashString("{% for m in messages %}{{ m.content }}{% endfor %}") ||
		in["system_instruction_sha"] != hashString("Answer with one colour.") {
		t.Errorf("digests of the template and instruction: %v %v", in["chat_template_sha"], in["system_instruction_sha"])
	}

	// lm-eval merges --model_args into the config's metadata: the model
	// never enters the digest, the task version does; alias and tag are
	// display names.
	two := readResults(t, twoTasks, twoTS)
	gsm := two.Task("gsm8k")
	before := SettingsDigest(two, gsm)
	md := gsm.Config["metadata"].(map[string]any)
	md["pretrained"] = "someone/else"
	gsm.Config["task_alias"] = "GSM"
	if SettingsDigest(two, gsm) != before {
		t.Error("the model in metadata or the alias changed the settings digest")
	}
	md["version"] = Number("4.0")
	if SettingsDigest(two, gsm) == before {
		t.Error("the task version did not change the settings digest")
	}
	canon := string(Canonical(SettingsInputs(two, gsm)))
	for _, want := range []string{`"generation_kwargs":{"do_sample":false,"temperature":0.0,"until":["Question:","</s>","<|im_end|>"]}`, `"n_shot":0`, `"filter_list":[`, `"metric_list":[`, `"repeats":1`} {
		if !strings.Contains(canon, want) {
			t.Errorf("canonical inputs lack %s:\n%s", want, canon)
		}
	}
	if strings.Contains(canon, "pretrained") || strings.Contains(canon, `"tag"`) {
		t.Errorf("canonical inputs hold the model or the tag:\n%s", canon)
	}
}

func TestCanonical(t *testing.T) {
	v := map[string]any{"b": []any{Number("1.0"), true, nil, "<&>"}, "a": map[string]any{"z": "é\n", "y": Number("NaN")}}
	if got := string(Canonical(v)); got != `{"a":{"y":NaN,"z":"é\n"},"b":[1.0,true,null,"<&>"]}` {
		t.Errorf("canonical: %s", got)
	}
}

func TestRevisionAndCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		r         Results
		rev, ckpt string
	}{
		{Results{LMEvalVersion: "0.4.9", GitHash: "abc", ModelName: "m", ModelSHA: "s", ModelRevision: "main"}, "0.4.9+abc", "m@s"},
		{Results{LMEvalVersion: "0.4.9", ModelName: "m", ModelRevision: "v1"}, "0.4.9", "m@v1"},
		{Results{GitHash: "abc", ModelName: "m"}, "abc", "m"},
		{Results{}, "", ""},
	} {
		if tc.r.Revision() != tc.rev || tc.r.Checkpoint() != tc.ckpt {
			t.Errorf("%+v: %q %q", tc.r, tc.r.Revision(), tc.r.Checkpoint())
		}
	}
}

func TestTranscript(t *testing.T) {
	got, _ := readSamplesFile(t, filepath.Join(pairedA, SamplesFile("arc_easy", pairedATS)), true)
	msgs, err := Transcript(got[0])
	if err != nil {
		t.Fatal(err)
	}
	want := []Message{
		{"user", "Question: Which colour is listed at position 0 of the card #0?\nAnswer:\n\n[choices]\n0.  red\n1.  green\n2.  blue\n3.  yellow"},
		{"assistant", "0. red: -1.5 (greedy: False)\n1. green: -0.5 (greedy: True)\n2. blue: -2.0 (greedy: False)\n3. yellow: -2.25 (greedy: False)"},
	}
	if len(msgs) != 2 || msgs[0] != want[0] || msgs[1] != want[1] {
		t.Errorf("multiple choice:\n%q\nwant\n%q", msgs, want)
	}

	gen := `{"doc_id": 0, "arguments": {"gen_args_0": {"arg_0": "Question: 2+2?\nAnswer:", "arg_1": {"until": ["\n"]}}}, "resps": [[" It is 4.\n#### 4"]], "filtered_resps": ["4"], "filter": "strict-match", "exact_match": 1.0}` + "\n"
	var s *Sample
	if _, err := ReadSamples(strings.NewReader(gen), "g", Limits{}, true, func(x *Sample) error { s = x; return nil }); err != nil {
		t.Fatal(err)
	}
	msgs, err = Transcript(s)
	if err != nil || msgs[0].Content != "Question: 2+2?\nAnswer:" || msgs[1].Content != " It is 4.\n#### 4\n\n[filtered (strict-match)] 4" {
		t.Errorf("generation: %q %v", msgs, err)
	}
	if _, err := Transcript(&Sample{}); err != ErrNoBodies {
		t.Errorf("no bodies: %v", err)
	}
	if _, err := Transcript(&Sample{Arguments: "x", Resps: []any{}}); err == nil {
		t.Error("bad arguments accepted")
	}
}

func TestTraceDefault(t *testing.T) {
	for _, tc := range []struct {
		trials int
		value  string
		set    bool
		n      int
		why    string
	}{
		{10, "", false, 10, "every body of a run of at most 128 trials"},
		{128, "", false, 128, "every body"},
		{129, "", false, 32, "32 bodies for a run of more than 128 trials"},
		{5000, "", false, 32, "32 bodies"},
		{5000, "0", true, 0, "=0 turns transcript bodies off"},
		{5000, "64", true, 64, "TUNEPLANE_JOB_VAL_UPLOAD_SAMPLES=64"},
		{10, " 64 ", true, 10, "=64"},
		{5000, "1000", true, 128, "capped at tpctl's ceiling of 128"},
		{5000, " ", true, 32, "32 bodies"},
		{5000, "-1", true, -1, "not a whole number"},
		{5000, "all", true, -1, "not a whole number"},
	} {
		got, err := TraceDefault(tc.trials, tc.value, tc.set)
		if tc.n < 0 {
			if err == nil || !strings.Contains(err.Error(), SamplesVar) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("%d %q: err %v", tc.trials, tc.value, err)
			}
			continue
		}
		if err != nil || got.N != tc.n || !strings.Contains(got.Why, tc.why) {
			t.Errorf("%d %q %v: %+v %v, want %d %q", tc.trials, tc.value, tc.set, got, err, tc.n, tc.why)
		}
	}
}
