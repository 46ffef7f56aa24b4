package export

import (
	"testing"

	"github.com/tuneplane/tpctl/snapshot"
)

// TestPassedRemembersRecentWords: values that alternate from row to row
// (statuses, reasons) are remembered, so the gate does not scan them
// again; a long value only as the last one; the oldest word goes first.
func TestPassedRemembersRecentWords(t *testing.T) {
	var p passed
	for _, s := range []string{"success", "failure", "infra_error"} {
		p.add(s)
	}
	for _, s := range []string{"success", "failure", "infra_error"} {
		if !p.has(s) {
			t.Errorf("%q passed two rows ago and is not remembered", s)
		}
	}
	long := string(make([]byte, maxWord+1))
	p.add(long)
	if !p.has(long) {
		t.Error("the last value is not remembered")
	}
	p.add("x")
	if p.has(long) {
		t.Error("a long value is remembered past the next row")
	}
	for i := range len(p.words) {
		p.add(string(rune('a' + i)))
	}
	if p.has("success") {
		t.Error("the oldest word outlived the bounded set")
	}
}

// TestIsTrialID: isTrialID is snapshot.TrialID compared, without the
// string.
func TestIsTrialID(t *testing.T) {
	for _, c := range []struct {
		id, task string
		repeat   int
	}{
		{"a#0", "a", 0}, {"a#1", "a", 0}, {"a#10", "a", 1}, {"a#1", "a", 10}, {"ab#3", "a", 3}, {"a#3", "ab", 3},
		{"harbor/task-000123#9", "harbor/task-000123", 9}, {"a#-1", "a", -1}, {"a/3", "a", 3}, {"", "", 0}, {"#0", "", 0},
		{"a#03", "a", 3}, {"a#3 ", "a", 3},
	} {
		if got, want := isTrialID(c.id, c.task, c.repeat), c.id == snapshot.TrialID(c.task, c.repeat); got != want {
			t.Errorf("isTrialID(%q, %q, %d) = %v, want %v", c.id, c.task, c.repeat, got, want)
		}
	}
}
