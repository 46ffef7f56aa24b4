package snapshot

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fullTrajFields is the reference: the whole file through json.Unmarshal.
func fullTrajFields(b []byte) (trajFields, error) {
	var f trajFields
	err := json.Unmarshal(b, &f)
	return f, err
}

func checkTrajFieldsAgree(t *testing.T, b []byte) {
	t.Helper()
	got, gotErr := readTrajFields(b)
	want, wantErr := fullTrajFields(b)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%q: error %v, full decode says %v", b, gotErr, wantErr)
	}
	if gotErr == nil && got != want {
		t.Fatalf("%q: fields %+v, full decode gives %+v", b, got, want)
	}
}

const validTraj = `{"schema":"tpctl-trajectory/1","round_id":"r-1","trial_id":"t__0","trial_attempt":1,` +
	`"complete":false,"capture_policy":"sampled","truncated":true,` +
	`"steps":[{"role":"user","content":"a \"quoted\" } ] { [ , : text"},{"n":[1,2.5e3,null,true]}]}`

// TestTrajFieldsDifferential checks the scan against a full decode on a
// valid trajectory and on every kind of mutation verify must still see.
func TestTrajFieldsDifferential(t *testing.T) {
	cases := []string{
		validTraj,
		strings.ReplaceAll(validTraj, ",", ",\n  "),
		`{}`, ` { } `, `[]`, `null`, `"x"`, `1`, ``, `{`, `{"round_id":`,
		strings.Replace(validTraj, `"round_id":"r-1"`, `"round_id":5`, 1),
		strings.Replace(validTraj, `"round_id":"r-1"`, `"round_id":null`, 1),
		strings.Replace(validTraj, `"round_id":"r-1"`, `"round_id":"r\u002d1"`, 1),
		strings.Replace(validTraj, `"round_id"`, `"Round_ID"`, 1),
		strings.Replace(validTraj, `"round_id"`, `"round\u005fid"`, 1),
		strings.Replace(validTraj, `"truncated":true`, `"truncated":"yes"`, 1),
		strings.Replace(validTraj, `"truncated":true`, `"truncated":null`, 1),
		strings.Replace(validTraj, `"complete":false`, `"complete":true`, 1),
		strings.Replace(validTraj, `"capture_policy":"sampled"`, `"capture_policy":"all"`, 1),
		validTraj[:len(validTraj)-1],
		validTraj + `x`,
		validTraj + `{}`,
		strings.Replace(validTraj, `"trial_id":"t__0"`, `"trial_id":"t__0","trial_id":"t__1"`, 1),
		strings.Replace(validTraj, `"trial_id":"t__0"`, "\"trial_id\":\"t\xff\"", 1),
		strings.Replace(validTraj, `"steps":[`, `"steps":[[[{"round_id":"inner"}]],`, 1),
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkTrajFieldsAgree(t, []byte(c)) })
	}
	// Every truncation of a valid file.
	for n := range len(validTraj) {
		checkTrajFieldsAgree(t, []byte(validTraj[:n]))
	}
}

func FuzzTrajFields(f *testing.F) {
	f.Add([]byte(validTraj))
	f.Add([]byte(`{"round_id":"a","truncated":false}`))
	f.Fuzz(func(t *testing.T, b []byte) { checkTrajFieldsAgree(t, b) })
}
