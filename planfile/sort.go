package planfile

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// sortFindings orders findings by pointer, comparing array indexes as
// numbers (/trials/2 before /trials/10), then by code, severity and
// message, so that output is deterministic.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, compareFindings)
}

func compareFindings(a, b Finding) int {
	if c := comparePointers(a.Pointer, b.Pointer); c != 0 {
		return c
	}
	return cmp.Or(
		cmp.Compare(a.Code, b.Code),
		cmp.Compare(a.Severity, b.Severity),
		cmp.Compare(a.Message, b.Message),
	)
}

func comparePointers(a, b string) int {
	for a != "" && b != "" {
		var ta, tb string
		ta, a = nextToken(a)
		tb, b = nextToken(b)
		if ta == tb {
			continue
		}
		na, errA := strconv.Atoi(ta)
		nb, errB := strconv.Atoi(tb)
		if errA == nil && errB == nil {
			return cmp.Compare(na, nb)
		}
		return cmp.Compare(ta, tb)
	}
	return cmp.Compare(len(a), len(b))
}

// nextToken splits "/a/b" into "a" and "/b".
func nextToken(p string) (tok, rest string) {
	p = strings.TrimPrefix(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}
