package preflight

import (
	"encoding/json"
	"testing"
)

func jsonNumber(s string) json.Number { return json.Number(s) }

func TestVersionInRange(t *testing.T) {
	tests := []struct {
		v, rng  string
		want    bool
		wantErr bool
	}{
		{"1.4.0", ">=1.2, <2", true, false},
		{"1.2", ">=1.2.0", true, false},
		{"2.0.0", ">=1.2, <2", false, false},
		{"1.1.9", ">=1.2, <2", false, false},
		{"1.4.0", "1.4", true, false},
		{"1.4.1", "=1.4", false, false},
		{"1.4.1", "!=1.4.0", true, false},
		{"1.10.0", ">1.9", true, false}, // numeric, not string, order
		{"1.4.0", "<=1.4.0", true, false},
		{"1.4.0", ">1.4.0", false, false},
		{"1.4.0", ">=1.2-rc1", false, true},
		{"1.4.0", "", false, true},
		{"v1", ">=1", false, true},
		{"1.2.3.4", ">=1", false, true},
		{"99999999999999999999", ">=1", false, true},
	}
	for _, tt := range tests {
		got, err := versionInRange(tt.v, tt.rng)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("versionInRange(%q, %q) = %v, %v; want %v, err %v", tt.v, tt.rng, got, err, tt.want, tt.wantErr)
		}
	}
}
