package preflight

import (
	"fmt"
	"strconv"
)

// Catalog is what the platform supports: recipes, clusters and the
// runtime references known to resolve.
type Catalog struct {
	Schema    string     `json:"$schema,omitempty"`
	Version   int        `json:"version"`
	Recipes   []Recipe   `json:"recipes"`
	Clusters  []Cluster  `json:"clusters"`
	Artifacts []Artifact `json:"artifacts"`
}

// Recipe is one supported recipe line: a name, the versions it covers and
// the framework it runs on. Several entries may share a name with
// disjoint version ranges.
type Recipe struct {
	Name         string    `json:"name"`
	Versions     string    `json:"versions"`
	Framework    string    `json:"framework"`
	ParamsSchema any       `json:"params_schema,omitempty"`
	Rules        []Rule    `json:"rules,omitempty"`
	Hardware     *Hardware `json:"hardware,omitempty"`
}

// Rule is an effective-config rule: an expr-lang boolean expression over
// params, config and resources (https://expr-lang.org).
type Rule struct {
	Name    string `json:"name"`
	Expr    string `json:"expr"`
	Message string `json:"message,omitempty"`
}

// Hardware is what a recipe needs of the cluster; zero values mean no
// requirement.
type Hardware struct {
	GPUTypes       []string `json:"gpu_types,omitempty"`
	MinGPUMemoryGB float64  `json:"min_gpu_memory_gb,omitempty"`
	MinGPUs        int      `json:"min_gpus,omitempty"`
	MaxGPUs        int      `json:"max_gpus,omitempty"`
}

// Cluster is one cluster jobs can be submitted to.
type Cluster struct {
	Name        string  `json:"name"`
	GPUType     string  `json:"gpu_type"`
	GPUMemoryGB float64 `json:"gpu_memory_gb"`
	GPUsPerNode int     `json:"gpus_per_node"`
	MaxNodes    int     `json:"max_nodes"`
}

// Artifact is a runtime reference known to resolve.
type Artifact struct {
	Ref  string `json:"ref"`
	Kind string `json:"kind"` // image, checkpoint or dataset
}

// DecodeCatalog parses a catalog from YAML or JSON and validates it against
// schemas/preflight-catalog.v1.json. Duplicate cluster names are refused.
// Recipe schemas, rules and version ranges are checked later, by the checks
// that use them, so one bad recipe does not hide the others.
func DecodeCatalog(file string, data []byte) (*Catalog, error) {
	if len(data) > MaxCatalogBytes {
		return nil, &DecodeError{File: file, Problems: []Problem{{In: "catalog", Message: fmt.Sprintf("larger than the %d-byte limit for a catalog file", MaxCatalogBytes)}}}
	}
	d, err := parseDocument("catalog", file, data)
	if err != nil {
		return nil, err
	}
	if err := validateDocument("catalog", file, catalogSchemaFile, d); err != nil {
		return nil, err
	}
	var c Catalog
	if err := d.into("catalog", file, &c); err != nil {
		return nil, err
	}
	seen := map[string]int{}
	var probs []Problem
	for i, cl := range c.Clusters {
		if j, dup := seen[cl.Name]; dup {
			ptr := "/clusters/" + strconv.Itoa(i) + "/name"
			line, col := d.locate(ptr)
			probs = append(probs, Problem{In: "catalog", Pointer: ptr, Line: line, Column: col,
				Message: fmt.Sprintf("cluster %q is already defined at /clusters/%d; cluster names must be unique", cl.Name, j)})
			continue
		}
		seen[cl.Name] = i
	}
	if len(probs) > 0 {
		return nil, &DecodeError{File: file, Problems: probs}
	}
	return &c, nil
}

// LoadCatalog reads (size-capped, no symlink) and decodes a catalog file.
func LoadCatalog(path string) (*Catalog, error) {
	b, err := readInput(path, MaxCatalogBytes)
	if err != nil {
		return nil, fmt.Errorf("failed to read catalog %q: %w", path, err)
	}
	return DecodeCatalog(path, b)
}
