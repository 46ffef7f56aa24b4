package export

import "testing"

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
