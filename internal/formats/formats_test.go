package formats

import "testing"

func TestValidated(t *testing.T) {
	for _, tc := range []struct {
		format, commit string
		known, want    bool
	}{
		{"harbor", "4407eb5227a2ff4f0d3f16b2eb48849382fdf276", true, true},
		{"harbor", "5f5618b8f5419dde63f2df6d86706782e597e8a3", true, true},
		{"harbor", "4407eb52", true, false}, // a prefix is not the commit
		{"harbor", "", true, false},
		{"other", "4407eb5227a2ff4f0d3f16b2eb48849382fdf276", false, false},
		{"inspect", "0.3.58.dev16+g6a87748b", true, true},
		{"inspect", "0.3.41.dev123+g9ad2119a.d20241015", true, true},
		{"inspect", "0.3.260", true, true},
		{"inspect", "0.3.261", true, false},
		{"inspect", "0.3.40", true, false},
		{"inspect", "0.3.154rc1", true, true},
		{"inspect", "0.3", true, false},
		{"inspect", "0.3.058", true, false},
		{"inspect", "0.3.58.foo", true, false},
		{"inspect", "499e6152e7b8fc8cbd8ac5283536572aa6e4ab17", true, false},
	} {
		if got := Known(tc.format); got != tc.known {
			t.Errorf("Known(%q) = %v, want %v", tc.format, got, tc.known)
		}
		if got := Validated(tc.format, tc.commit); got != tc.want {
			t.Errorf("Validated(%q, %q) = %v, want %v", tc.format, tc.commit, got, tc.want)
		}
	}
}
