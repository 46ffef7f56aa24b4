package preflight

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/jcs"
)

// Options configures Run. The zero value works: real clock, git from PATH,
// relative paths against the current folder.
type Options struct {
	// Now is the clock for the report's time; nil means time.Now. Tests pin it.
	Now func() time.Time
	// ToolVersion is recorded in the report (the caller knows its build).
	ToolVersion string
	// JobName is how the report names the job (usually the path as given).
	JobName string
	// BaseDir is the folder that relative paths in the job (source path,
	// archive, local checkpoints and datasets) resolve against: normally
	// the job file's folder.
	BaseDir string
	// Git is the git program; "" looks up "git" on PATH.
	Git string
	// TempDir is the parent of the temporary source copy; "" means
	// os.TempDir().
	TempDir string
	// SourceTimeout bounds materializing the source; 0 means no bound
	// other than ctx.
	SourceTimeout time.Duration
	// SkipSource leaves the source check unchecked (offline use).
	SkipSource bool
	// CatalogError explains a nil catalog (e.g. the platform request
	// failed); the catalog-dependent checks then fail with it.
	CatalogError error
}

// Check IDs that are stable parts of the report format.
const (
	CheckRecipe            = "recipe"
	CheckFramework         = "recipe.framework"
	CheckParams            = "params"
	CheckSource            = "source"
	CheckConfig            = "config"
	CheckConfigRulePrefix  = "config.rule:"
	CheckHardware          = "hardware"
	CheckRuntimeImage      = "runtime.image"
	CheckRuntimeCheckpoint = "runtime.checkpoint"
	CheckRuntimeDatasets   = "runtime.datasets"
	CheckModelDownload     = "worker.model_download"
	CheckMounts            = "worker.mounts"
	CheckConnectivity      = "worker.connectivity"
	CheckSmokeRun          = "smoke_run"
)

// alwaysUnchecked are the items no static check can prove before the job
// runs on a worker; every report lists them as unchecked.
var alwaysUnchecked = []Check{
	{ID: CheckModelDownload, Field: "/runtime/checkpoint", Reason: "model download inside the worker is not checked before submission; the reference resolving does not prove the worker can fetch it"},
	{ID: CheckMounts, Field: "", Reason: "mounts on the worker are not checked before submission"},
	{ID: CheckConnectivity, Field: "", Reason: "environment connectivity from the worker (registries, hubs, storage, network policy) is not checked before submission"},
	{ID: CheckSmokeRun, Field: "", Reason: "no real generate/score/train smoke run was made; preflight uses no GPU"},
}

// Notes printed with every report.
var reportNotes = []string{
	"admission is checked again at submission; this report is evidence from checked_at, not a standing permit or proof of worker health",
	"the input fingerprint covers recipe, params, source reference, config, resources and runtime; it is not a checksum of the source bundle",
}

// Run checks job against cat and returns the report. cat may be nil when
// the catalog could not be obtained (opts.CatalogError says why); every
// check that needs it then fails. Run returns an error only when ctx is
// cancelled (no partial report is returned) or the fingerprint cannot be
// computed.
func Run(ctx context.Context, job *Job, cat *Catalog, opts Options) (*Report, error) {
	if job == nil {
		return nil, fmt.Errorf("no job to check")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	fp, err := ComputeFingerprint(job)
	if err != nil {
		return nil, err
	}
	r := &Report{
		Format:      ReportFormat,
		Job:         opts.JobName,
		CheckedAt:   now().UTC().Format(time.RFC3339),
		ToolVersion: opts.ToolVersion,
		Fingerprint: fp,
		Notes:       append([]string(nil), reportNotes...),
	}
	if cat != nil {
		b, err := jcs.Marshal(cat)
		if err != nil {
			return nil, fmt.Errorf("failed to canonicalize catalog: %w", err)
		}
		r.CatalogSHA256 = digest.Bytes(b).String()
	}

	c := &checker{job: job, cat: cat, opts: opts}
	c.findRecipe()
	add := func(ch ...Check) { r.Checks = append(r.Checks, ch...) }
	add(c.recipeCheck(), c.frameworkCheck(), c.paramsCheck())
	src := c.sourceCheck(ctx)
	if err := ctx.Err(); err != nil {
		// An interrupted run proves nothing; the caller reports the
		// interruption instead of a half-filled report.
		return nil, fmt.Errorf("preflight interrupted: %w", err)
	}
	add(src)
	add(c.configChecks()...)
	add(c.hardwareCheck(), c.imageCheck(), c.checkpointCheck(), c.datasetsCheck())
	for _, u := range alwaysUnchecked {
		u.Status = StatusUnchecked
		add(u)
	}
	for i := range r.Checks {
		if r.Checks[i].Problems == nil {
			r.Checks[i].Problems = []Problem{}
		}
		switch r.Checks[i].Status {
		case StatusPass:
			r.Summary.Pass++
		case StatusFail:
			r.Summary.Fail++
		default:
			r.Summary.Unchecked++
		}
	}
	r.Ready = r.Summary.Fail == 0
	return r, nil
}

// checker holds what the checks share: the job, the catalog and the recipe
// entry matched once.
type checker struct {
	job  *Job
	cat  *Catalog
	opts Options

	recipe    *Recipe
	recipeIdx int
	// recipeMiss is the failed recipe check when no entry matched.
	recipeMiss *Check
}

func (c *checker) noCatalog() string {
	if c.opts.CatalogError != nil {
		return "no catalog: " + c.opts.CatalogError.Error()
	}
	return "no catalog was given"
}

func recipePtr(i int) string { return "/recipes/" + strconv.Itoa(i) }

// findRecipe picks the first catalog entry with the job's recipe name
// whose version range contains the job's version.
func (c *checker) findRecipe() {
	ref := c.job.Recipe
	fail := func(field, reason string, probs ...Problem) {
		c.recipeMiss = &Check{ID: CheckRecipe, Status: StatusFail, Field: field, Reason: reason, Problems: probs}
	}
	if c.cat == nil {
		fail("/recipe", c.noCatalog()+"; the recipe could not be looked up")
		return
	}
	var ranges []string
	var probs []Problem
	named := false
	for i := range c.cat.Recipes {
		rec := &c.cat.Recipes[i]
		if rec.Name != ref.Name {
			continue
		}
		named = true
		ok, err := versionInRange(ref.Version, rec.Versions)
		if err != nil {
			in, ptr := "catalog", recipePtr(i)+"/versions"
			if _, verr := parseVersion(ref.Version); verr != nil {
				in, ptr = "job", "/recipe/version"
			}
			probs = append(probs, Problem{In: in, Pointer: ptr, Message: err.Error()})
			continue
		}
		if ok {
			c.recipe, c.recipeIdx = rec, i
			return
		}
		ranges = append(ranges, fmt.Sprintf("%q (%s)", rec.Versions, recipePtr(i)))
	}
	if !named {
		fail("/recipe/name", fmt.Sprintf("/recipe/name: recipe %q is not in the catalog (known: %s); use a supported recipe", ref.Name, knownNames(c.cat.Recipes)))
		return
	}
	reason := fmt.Sprintf("/recipe/version: %s %s is outside every supported range", ref.Name, ref.Version)
	if len(ranges) > 0 {
		reason += ": " + strings.Join(ranges, ", ")
	}
	if len(probs) > 0 {
		reason += fmt.Sprintf(" (%d range(s) could not be read)", len(probs))
	}
	fail("/recipe/version", reason, probs...)
}

func knownNames(recs []Recipe) string {
	seen := map[string]bool{}
	var names []string
	for _, r := range recs {
		if !seen[r.Name] {
			seen[r.Name] = true
			names = append(names, strconv.Quote(r.Name))
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	return strings.Join(names, ", ")
}

func (c *checker) recipeCheck() Check {
	if c.recipe == nil {
		return *c.recipeMiss
	}
	return Check{ID: CheckRecipe, Status: StatusPass, Field: "/recipe",
		Reason: fmt.Sprintf("recipe %s %s is supported by catalog entry %s (versions %q, framework %q)",
			c.job.Recipe.Name, c.job.Recipe.Version, recipePtr(c.recipeIdx), c.recipe.Versions, c.recipe.Framework)}
}

func (c *checker) frameworkCheck() Check {
	ch := Check{ID: CheckFramework, Field: "/recipe/framework"}
	switch {
	case c.recipe == nil:
		ch.Status, ch.Reason = StatusUnchecked, "the recipe is not in the catalog, so its framework is unknown"
	case c.job.Recipe.Framework == "":
		ch.Status, ch.Reason = StatusUnchecked, fmt.Sprintf("/recipe/framework is not set, so it was not compared with the catalog's %q", c.recipe.Framework)
	case c.job.Recipe.Framework == c.recipe.Framework:
		ch.Status, ch.Reason = StatusPass, fmt.Sprintf("/recipe/framework %q matches the catalog", c.recipe.Framework)
	default:
		ch.Status, ch.Reason = StatusFail, fmt.Sprintf("/recipe/framework is %q but catalog entry %s runs on %q; rebuild the job for %q or pick a recipe version on %q",
			c.job.Recipe.Framework, recipePtr(c.recipeIdx), c.recipe.Framework, c.recipe.Framework, c.job.Recipe.Framework)
	}
	return ch
}

func (c *checker) hardwareCheck() Check {
	ch := Check{ID: CheckHardware, Field: "/resources"}
	if c.cat == nil {
		ch.Status, ch.Reason = StatusFail, c.noCatalog()+"; the cluster could not be looked up"
		return ch
	}
	res := c.job.Resources
	var cl *Cluster
	for i := range c.cat.Clusters {
		if c.cat.Clusters[i].Name == res.Cluster {
			cl = &c.cat.Clusters[i]
			break
		}
	}
	if cl == nil {
		names := make([]string, 0, len(c.cat.Clusters))
		for _, k := range c.cat.Clusters {
			names = append(names, strconv.Quote(k.Name))
		}
		sort.Strings(names)
		ch.Status, ch.Field = StatusFail, "/resources/cluster"
		ch.Reason = fmt.Sprintf("/resources/cluster: cluster %q is not in the catalog (known: %s)", res.Cluster, strings.Join(names, ", "))
		return ch
	}
	var probs []Problem
	add := func(ptr, msg string, args ...any) {
		probs = append(probs, Problem{In: "job", Pointer: ptr, Message: fmt.Sprintf(msg, args...)})
	}
	if res.GPUType != cl.GPUType {
		add("/resources/gpu_type", "%q but cluster %q has %q", res.GPUType, cl.Name, cl.GPUType)
	}
	if res.GPUsPerNode > cl.GPUsPerNode {
		add("/resources/gpus_per_node", "%d but cluster %q has %d GPUs per node", res.GPUsPerNode, cl.Name, cl.GPUsPerNode)
	}
	if res.Nodes > cl.MaxNodes {
		add("/resources/nodes", "%d but cluster %q allows at most %d nodes", res.Nodes, cl.Name, cl.MaxNodes)
	}
	total := res.Nodes * res.GPUsPerNode
	needs := "the recipe's hardware needs are unknown"
	if c.recipe != nil {
		needs = "the recipe declares no hardware needs"
		if hw := c.recipe.Hardware; hw != nil {
			needs = "the recipe's hardware needs are met"
			hp := recipePtr(c.recipeIdx) + "/hardware"
			if len(hw.GPUTypes) > 0 && !contains(hw.GPUTypes, res.GPUType) {
				add("/resources/gpu_type", "%q is not one the recipe runs on (%s: %s)", res.GPUType, hp+"/gpu_types", strings.Join(hw.GPUTypes, ", "))
			}
			if hw.MinGPUMemoryGB > 0 && cl.GPUMemoryGB < hw.MinGPUMemoryGB {
				add("/resources/cluster", "cluster %q has %s GB per GPU but the recipe needs at least %s GB (%s)", cl.Name, fmtNum(cl.GPUMemoryGB), fmtNum(hw.MinGPUMemoryGB), hp+"/min_gpu_memory_gb")
			}
			if hw.MinGPUs > 0 && total < hw.MinGPUs {
				add("/resources/nodes", "%d nodes × %d GPUs = %d GPUs but the recipe needs at least %d (%s)", res.Nodes, res.GPUsPerNode, total, hw.MinGPUs, hp+"/min_gpus")
			}
			if hw.MaxGPUs > 0 && total > hw.MaxGPUs {
				add("/resources/nodes", "%d nodes × %d GPUs = %d GPUs but the recipe allows at most %d (%s)", res.Nodes, res.GPUsPerNode, total, hw.MaxGPUs, hp+"/max_gpus")
			}
		}
	}
	switch {
	case len(probs) > 0:
		ch.Status, ch.Field, ch.Problems = StatusFail, probs[0].Pointer, probs
		ch.Reason = fmt.Sprintf("%d hardware mismatch(es): %s", len(probs), probs[0].String())
	case c.recipe == nil:
		ch.Status = StatusUnchecked
		ch.Reason = fmt.Sprintf("cluster %q can host %d × %d %s, but %s because the recipe is not in the catalog", cl.Name, res.Nodes, res.GPUsPerNode, res.GPUType, needs)
	default:
		ch.Status = StatusPass
		ch.Reason = fmt.Sprintf("cluster %q can host %d × %d %s (%s GB per GPU); %s", cl.Name, res.Nodes, res.GPUsPerNode, res.GPUType, fmtNum(cl.GPUMemoryGB), needs)
	}
	return ch
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var pinnedImage = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)

func (c *checker) imageCheck() Check {
	ch := Check{ID: CheckRuntimeImage, Field: "/runtime/image"}
	img := c.job.Runtime.Image
	if !pinnedImage.MatchString(img) {
		ch.Status = StatusFail
		ch.Reason = fmt.Sprintf("/runtime/image %q is not pinned by digest; use NAME@sha256:<64 hex> so the worker runs exactly the image that was checked", img)
		return ch
	}
	ch.Status = StatusPass
	ch.Reason = fmt.Sprintf("/runtime/image is pinned by digest %s", img[strings.LastIndexByte(img, '@')+1:])
	if c.cat != nil && c.indexKind(img) == "image" {
		ch.Reason += " and listed in the catalog's artifact index"
	}
	return ch
}

// indexKind returns the kind under which ref is listed in the artifact
// index, or "".
func (c *checker) indexKind(ref string) string {
	if c.cat == nil {
		return ""
	}
	kind := ""
	for _, a := range c.cat.Artifacts {
		if a.Ref == ref {
			if kind == "" {
				kind = a.Kind
			}
		}
	}
	return kind
}

func (c *checker) indexHas(ref, kind string) bool {
	if c.cat == nil {
		return false
	}
	for _, a := range c.cat.Artifacts {
		if a.Ref == ref && a.Kind == kind {
			return true
		}
	}
	return false
}

// resolveRef says how a checkpoint or dataset reference resolves: through
// the catalog's artifact index, or as a local path (plain or file://).
// Remote references outside the index cannot be resolved offline and
// fail; they are not assumed to exist.
func (c *checker) resolveRef(ref, kind string) (how string, problem string) {
	if c.indexHas(ref, kind) {
		return "listed in the catalog's artifact index", ""
	}
	local, isLocal := localPath(ref)
	if !isLocal {
		switch {
		case c.cat == nil:
			return "", fmt.Sprintf("%q cannot be resolved: %s", ref, c.noCatalog())
		case c.indexKind(ref) != "":
			return "", fmt.Sprintf("%q is in the artifact index as a %s, not a %s", ref, c.indexKind(ref), kind)
		}
		return "", fmt.Sprintf("%q is not in the catalog's artifact index as a %s; register it or fix the reference", ref, kind)
	}
	p := local
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.opts.BaseDir, p)
	}
	if _, err := os.Stat(p); err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Sprintf("%q is not in the artifact index and does not exist on disk (relative paths are read from the job file's folder)", ref)
		}
		return "", fmt.Sprintf("%q cannot be read on disk: %v", ref, err)
	}
	return "found on disk", ""
}

// localPath recognises local references: file:// URLs and anything
// without a URL scheme.
func localPath(ref string) (string, bool) {
	if rest, ok := strings.CutPrefix(ref, "file://"); ok {
		return rest, rest != ""
	}
	if strings.Contains(ref, "://") {
		return "", false
	}
	return ref, true
}

func (c *checker) checkpointCheck() Check {
	ch := Check{ID: CheckRuntimeCheckpoint, Field: "/runtime/checkpoint"}
	how, prob := c.resolveRef(c.job.Runtime.Checkpoint, "checkpoint")
	if prob != "" {
		ch.Status, ch.Reason = StatusFail, "/runtime/checkpoint: "+prob
		ch.Problems = []Problem{{In: "job", Pointer: "/runtime/checkpoint", Message: prob}}
		return ch
	}
	ch.Status, ch.Reason = StatusPass, fmt.Sprintf("/runtime/checkpoint %q is %s", c.job.Runtime.Checkpoint, how)
	return ch
}

func (c *checker) datasetsCheck() Check {
	ch := Check{ID: CheckRuntimeDatasets, Field: "/runtime/datasets"}
	ds := c.job.Runtime.Datasets
	if len(ds) == 0 {
		ch.Status, ch.Reason = StatusPass, "/runtime/datasets is empty: the job references no datasets"
		return ch
	}
	for i, d := range ds {
		if _, prob := c.resolveRef(d, "dataset"); prob != "" {
			ch.Problems = append(ch.Problems, Problem{In: "job", Pointer: "/runtime/datasets/" + strconv.Itoa(i), Message: prob})
		}
	}
	if len(ch.Problems) > 0 {
		ch.Status, ch.Field = StatusFail, ch.Problems[0].Pointer
		ch.Reason = fmt.Sprintf("%d of %d datasets do not resolve: %s", len(ch.Problems), len(ds), ch.Problems[0].String())
		return ch
	}
	ch.Status, ch.Reason = StatusPass, fmt.Sprintf("all %d datasets in /runtime/datasets resolve in the artifact index or on disk", len(ds))
	return ch
}
