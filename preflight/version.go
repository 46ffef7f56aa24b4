package preflight

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// version is a numeric MAJOR.MINOR.PATCH; missing parts are zero.
type version [3]uint64

func parseVersion(s string) (version, error) {
	var v version
	parts := strings.Split(s, ".")
	if len(parts) > 3 || s == "" {
		return v, fmt.Errorf("version %q is not MAJOR[.MINOR[.PATCH]]", s)
	}
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return v, fmt.Errorf("version %q is not MAJOR[.MINOR[.PATCH]] with numeric parts", s)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, fmt.Errorf("version %q has a part out of range", s)
		}
		v[i] = n
	}
	return v, nil
}

func (v version) cmp(o version) int { return slices.Compare(v[:], o[:]) }

// versionInRange reports whether v satisfies every comma-separated
// constraint in rng ("=", "!=", ">", ">=", "<", "<=", or a bare version
// meaning "="). Pre-release and build suffixes are not supported: they are
// refused instead of being ordered by a guess.
func versionInRange(v, rng string) (bool, error) {
	have, err := parseVersion(v)
	if err != nil {
		return false, err
	}
	ok := true
	for _, c := range strings.Split(rng, ",") {
		c = strings.TrimSpace(c)
		op := "="
		for _, o := range []string{">=", "<=", "!=", ">", "<", "="} {
			if strings.HasPrefix(c, o) {
				op, c = o, strings.TrimSpace(c[len(o):])
				break
			}
		}
		want, err := parseVersion(c)
		if err != nil {
			return false, fmt.Errorf("constraint %q: %w", rng, err)
		}
		r := have.cmp(want)
		var sat bool
		switch op {
		case "=":
			sat = r == 0
		case "!=":
			sat = r != 0
		case ">":
			sat = r > 0
		case ">=":
			sat = r >= 0
		case "<":
			sat = r < 0
		case "<=":
			sat = r <= 0
		}
		ok = ok && sat
	}
	return ok, nil
}
