// Package schemas embeds the published JSON Schemas of tpctl's input
// formats and machine-readable outputs, so the binary validates with (and
// `tpctl schema NAME` prints) exactly the files documented in the
// repository.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds every *.json schema in this folder, by file name.
//
//go:embed *.json
var FS embed.FS

// Schema is one published schema.
type Schema struct {
	// Name is the file name without ".json" and without a ".vN" version
	// suffix: "snapshot", "import-plan", "harbor-trial-config.v0.22.0".
	Name string `json:"name"`
	// File is the file name in FS.
	File  string `json:"file"`
	ID    string `json:"id"`
	Title string `json:"title"`
	// Output is true for schemas of what tpctl prints or writes, false
	// for the inputs it reads.
	Output bool `json:"output"`
}

// outputs are the schemas of tpctl's machine-readable outputs.
var outputs = []string{"snapshot", "observation", "plan-check", "compare", "preflight-report", "exit-error", "gate-verdict", "trend", "power-plan"}

var version = regexp.MustCompile(`\.v[0-9]+$`)

// List returns every embedded schema, outputs first, each group by name.
func List() ([]Schema, error) {
	entries, err := fs.ReadDir(FS, ".")
	if err != nil {
		return nil, err
	}
	var list []Schema
	for _, e := range entries {
		b, err := FS.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		var head struct {
			ID    string `json:"$id"`
			Title string `json:"title"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", e.Name(), err)
		}
		name := strings.TrimSuffix(e.Name(), ".json")
		if !strings.HasPrefix(name, "harbor-") {
			name = version.ReplaceAllString(name, "")
		}
		list = append(list, Schema{Name: name, File: e.Name(), ID: head.ID, Title: head.Title, Output: slices.Contains(outputs, name)})
	}
	slices.SortStableFunc(list, func(a, b Schema) int {
		if a.Output != b.Output {
			if a.Output {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return list, nil
}

// NotFoundError is a schema name that is not embedded.
type NotFoundError struct {
	Name  string
	Names []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no schema named %q (known: %s)", e.Name, strings.Join(e.Names, ", "))
}

// Lookup returns the schema called name (or its file name).
func Lookup(name string) (Schema, []byte, error) {
	list, err := List()
	if err != nil {
		return Schema{}, nil, err
	}
	var names []string
	for _, s := range list {
		if s.Name == name || s.File == name {
			b, err := FS.ReadFile(s.File)
			return s, b, err
		}
		names = append(names, s.Name)
	}
	return Schema{}, nil, &NotFoundError{Name: name, Names: names}
}

// Compile compiles the schema called name, asserting formats
// (date-time, …) too. Every embedded schema is available to $ref.
func Compile(name string) (*jsonschema.Schema, error) {
	target, _, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	list, err := List()
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, s := range list {
		b, err := FS.ReadFile(s.File)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", s.File, err)
		}
		if err := c.AddResource(s.ID, doc); err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", s.File, err)
		}
	}
	return c.Compile(target.ID)
}
