package schemas

import (
	"errors"
	"testing"
)

// TestEverySchemaCompiles: a shipped schema that does not compile is a bug.
func TestEverySchemaCompiles(t *testing.T) {
	list, err := List()
	if err != nil {
		t.Fatal(err)
	}
	var outputs int
	for _, s := range list {
		if s.ID == "" || s.Title == "" {
			t.Errorf("%s has no $id or title", s.File)
		}
		if _, err := Compile(s.Name); err != nil {
			t.Errorf("%s: %v", s.File, err)
		}
		if s.Output {
			outputs++
		}
	}
	if want := 9; outputs != want {
		t.Errorf("%d output schemas embedded, want %d", outputs, want)
	}
}

func TestLookup(t *testing.T) {
	s, b, err := Lookup("snapshot")
	if err != nil || s.File != "snapshot.v1.json" || len(b) == 0 {
		t.Fatalf("Lookup(snapshot) = %+v, %d bytes, %v", s, len(b), err)
	}
	if _, _, err := Lookup("import-plan.v1.json"); err != nil {
		t.Errorf("lookup by file name: %v", err)
	}
	var nf *NotFoundError
	if _, _, err := Lookup("snapshots"); !errors.As(err, &nf) {
		t.Errorf("unknown name: %v, want *NotFoundError", err)
	}
}
