package planfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzParse checks that no input panics, that the schema fast path agrees
// with the full validator, that every finding is complete and sorted, and
// that a plan without errors survives normalize → parse →
// normalize unchanged.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"import-plan.json", "import-plan-v0.22.0.json"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "example", name)); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "{}", "[]", "null", "{} x", `{"a":1,"a":2}`, strings.Repeat("[", 100),
		`{"version":1,"trials":[{"task":"t","repeat":-1,"attempts":[{"retry":0,"dir":"a//b"},{"retry":0,"dir":"a/b"}]}]}`,
		`{"settings":{"api_key":"x","n":1e999},"checkpoint":{"ref":"x@main"}}`,
		"{\"name\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if root, _, ok := decodeTree(data, false); ok {
			// The fast path must report exactly what the full validator does.
			if full, fast := briefsOf(validateFull(root)), briefsOf(validateSchema(root)); !cmp.Equal(full, fast) {
				t.Fatalf("schema fast path differs:\n%s", cmp.Diff(full, fast))
			}
		}
		for _, opts := range []Options{{}, {AllowExecution: true, Strict: true}} {
			p, fs := Parse(data, "fuzz.json", opts)
			for i, fd := range fs {
				if fd.Code == "" || fd.Message == "" || (fd.Severity != SeverityError && fd.Severity != SeverityWarning) {
					t.Fatalf("incomplete finding %+v", fd)
				}
				if i > 0 && comparePointers(fs[i-1].Pointer, fd.Pointer) > 0 {
					t.Fatalf("findings not sorted: %q before %q", fs[i-1].Pointer, fd.Pointer)
				}
			}
			if p == nil || HasErrors(fs) {
				continue
			}
			n1, err := p.NormalizedJSON()
			if err != nil {
				t.Fatalf("valid plan does not normalize: %v", err)
			}
			p2, fs2 := Parse(n1, "normalized.json", opts)
			if HasErrors(fs2) {
				t.Fatalf("normalized plan has errors: %+v\n%s", fs2, n1)
			}
			n2, err := p2.NormalizedJSON()
			if err != nil || string(n1) != string(n2) {
				t.Fatalf("normalization not stable (%v):\n%s\n%s", err, n1, n2)
			}
		}
	})
}

// validateFull runs the schema on the whole tree, without the fast path.
func validateFull(root any) []pending {
	sch, err := compiledSchema()
	if err != nil {
		panic(err)
	}
	err = sch.Validate(root)
	if err == nil {
		return nil
	}
	var out []pending
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, mapSchemaError(e)...)
	}
	walk(err.(*jsonschema.ValidationError))
	return out
}

func briefsOf(ps []pending) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Code+" "+p.Pointer+" "+p.Message)
	}
	sort.Strings(out)
	return out
}

// FuzzDecodeTree checks the hand-written scanner against encoding/json:
// it accepts exactly the valid JSON texts (within MaxDepth, valid UTF-8)
// and builds the same tree.
func FuzzDecodeTree(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,"x\u00e9\ud83d\ude00\n",true,false,null,{}]}`, `"\u12"`, `01`, `1.`, `-`, `1e`, `[1,]`,
		`{"a" 1}`, `{"a":1,}`, `{,}`, "\"a\tb\"", `"\x"`, ` [ ] `, `[]]`, `tru`, `nul`, `{"a":{"a":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return
		}
		root, d, ok := decodeTree(data, false)
		if !ok {
			if len(d.found) == 0 {
				t.Fatal("rejected without a finding")
			}
			msg := d.found[len(d.found)-1].Message
			if json.Valid(data) && !strings.Contains(msg, "nests deeper") && !strings.Contains(msg, "plan is empty") {
				t.Fatalf("rejected valid JSON: %s", msg)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if len(d.found) > 0 { // duplicate keys: encoding/json keeps the last
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, root); diff != "" {
			t.Fatalf("tree differs (-encoding/json +decodeTree):\n%s", diff)
		}
	})
}
