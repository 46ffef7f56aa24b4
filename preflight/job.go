package preflight

import (
	"fmt"
	"os"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// Published schema files (in the schemas package) of the two inputs.
const (
	jobSchemaFile     = "derived-job.v1.json"
	catalogSchemaFile = "preflight-catalog.v1.json"
)

// Size caps for untrusted input files: a job is a page of YAML, a catalog
// a few thousand entries.
const (
	MaxJobBytes     = 1 << 20
	MaxCatalogBytes = 16 << 20
)

// Job is a derived job: a pending training job made by a re-run or
// proposed by a diagnosis. Params and Config hold JSON-compatible values
// with numbers as json.Number.
type Job struct {
	Schema      string         `json:"$schema,omitempty"`
	Version     int            `json:"version"`
	Name        string         `json:"name,omitempty"`
	Recipe      RecipeRef      `json:"recipe"`
	Params      map[string]any `json:"params"`
	Source      Source         `json:"source"`
	Config      map[string]any `json:"config"`
	Resources   Resources      `json:"resources"`
	Runtime     Runtime        `json:"runtime"`
	DerivedFrom *DerivedFrom   `json:"derived_from,omitempty"`
}

// RecipeRef names the recipe the job runs.
type RecipeRef struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Framework string `json:"framework,omitempty"`
}

// Source is where the job's code comes from; exactly one field is set.
type Source struct {
	Git     *GitSource     `json:"git,omitempty"`
	Archive *ArchiveSource `json:"archive,omitempty"`
	Path    string         `json:"path,omitempty"`
}

// GitSource is a repository and the exact commit to check out.
type GitSource struct {
	URL    string `json:"url"`
	Commit string `json:"commit"`
}

// ArchiveSource is a source archive and its expected SHA-256.
type ArchiveSource struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Resources is what the job asks of the cluster.
type Resources struct {
	Cluster     string `json:"cluster"`
	Nodes       int    `json:"nodes"`
	GPUsPerNode int    `json:"gpus_per_node"`
	GPUType     string `json:"gpu_type"`
}

// Runtime lists the references the worker resolves at start.
type Runtime struct {
	Image      string   `json:"image"`
	Checkpoint string   `json:"checkpoint"`
	Datasets   []string `json:"datasets"`
}

// DerivedFrom records the job this one was made from.
type DerivedFrom struct {
	JobID  string `json:"job_id"`
	Reason string `json:"reason,omitempty"`
}

// DecodeJob parses a derived job from YAML or JSON and validates it against
// schemas/derived-job.v1.json. file names the input in errors. Every schema
// violation is returned in one *DecodeError.
func DecodeJob(file string, data []byte) (*Job, error) {
	if len(data) > MaxJobBytes {
		return nil, &DecodeError{File: file, Problems: []Problem{{In: "job", Message: fmt.Sprintf("larger than the %d-byte limit for a job file", MaxJobBytes)}}}
	}
	d, err := parseDocument("job", file, data)
	if err != nil {
		return nil, err
	}
	if err := validateDocument("job", file, jobSchemaFile, d); err != nil {
		return nil, err
	}
	var j Job
	if err := d.into("job", file, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// LoadJob reads (size-capped, no symlink) and decodes a job file.
func LoadJob(path string) (*Job, error) {
	b, err := readInput(path, MaxJobBytes)
	if err != nil {
		return nil, fmt.Errorf("failed to read job %q: %w", path, err)
	}
	return DecodeJob(path, b)
}

func readInput(path string, limit int64) ([]byte, error) {
	b, err := safefs.ReadFileCapped(path, limit)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("file does not exist: %w", err)
		}
		return nil, err
	}
	return b, nil
}
