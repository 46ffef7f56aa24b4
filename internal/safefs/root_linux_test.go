package safefs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRootFastAndSlowAgree reads every case with openat2 and with the
// portable path and expects identical results, so the fast path can
// never accept what Resolve and OpenRegular refuse.
func TestRootFastAndSlowAgree(t *testing.T) {
	root := rootTree(t)
	r, err := OpenRoot(root)
	must(t, err)
	defer r.Close()
	fast, slow := map[string]string{}, map[string]string{}
	for _, c := range rootCases {
		if CheckRel(c.rel) != nil {
			continue
		}
		data, ok, err := r.sys.readFast(c.rel, nil, 50)
		if ok {
			fast[c.rel] = outcome(data, err)
		} else {
			fast[c.rel] = "refused"
		}
		data, err = r.readSlow(c.rel, nil, 50)
		slow[c.rel] = outcome(data, err)
		if fast[c.rel] == "refused" && slow[c.rel][:3] == "ok " {
			t.Errorf("%s: fast path refused a readable file", c.rel)
		}
		if fast[c.rel] != "refused" && fast[c.rel] != slow[c.rel] {
			t.Errorf("%s: fast %q, slow %q", c.rel, fast[c.rel], slow[c.rel])
		}
		// An answer without the portable path is its very error.
		if _, ok, ferr := r.sys.readFast(c.rel, nil, 50); ok && ferr != nil {
			_, serr := r.readSlow(c.rel, nil, 50)
			if serr == nil || ferr.Error() != serr.Error() {
				t.Errorf("%s: fast error %q, slow %v", c.rel, ferr, serr)
			}
		}
	}
	if r.sys.noOpenat2.Load() {
		t.Skip("openat2 is not available here; only the portable path ran")
	}
	if diff := cmp.Diff(map[string]string{
		"job/real/result.json":           `ok {"a":1}`,
		"job/real/deep/result.json":      "ok deep",
		"job/real/empty.json":            "ok ",
		"job/real/big.json":              "too_large",
		"job/nofile/result.json":         "not_exist",
		"job/real/nofile.json":           "not_exist",
		"nofile.json":                    "not_exist",
		"job/missing/result.json":        "dir_missing job/missing",
		"job/missing/deeper/result.json": "dir_missing job/missing",
	}, onlyAccepted(fast)); diff != "" {
		t.Fatalf("fast path accepted (-want +got):\n%s", diff)
	}
}

func onlyAccepted(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != "refused" {
			out[k] = v
		}
	}
	return out
}
