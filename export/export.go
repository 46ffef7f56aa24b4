// Package export writes verified snapshots as tables for dataframe and SQL
// tools: one Hive-style partition per round,
// DIR/round_id=<hex>/{rounds,trials,attempts,tasks}.<ext>, in Parquet, CSV
// or JSON Lines with the same typed columns in each (docs/export.md).
//
// Trials are one row per planned trial, missing ones included, so a
// success rate computed from the export has the plan's denominator. Each
// snapshot is read once, through snapshot.OpenTrials, which verifies it
// and hands over its planned trials with their observations in the same
// read; the rows go to a temporary folder that is published only once
// the whole snapshot verified. Memory does not grow with the number of
// trials. The same snapshots give the same bytes.
package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/stats"
)

// FormatVersion is the version of the export layout and columns.
const FormatVersion = "tpctl-export/1"

// Keys of the Parquet footer's key/value metadata.
const (
	MetaExportFormat   = "tpctl.export_format"
	MetaTpctlVersion   = "tpctl.version"
	MetaRoundID        = "tpctl.round_id"
	MetaSnapshotSHA256 = "tpctl.snapshot_sha256"
	MetaTable          = "tpctl.table"
	MetaDigestRules    = "tpctl.digest_rules"
	MetaOutcomeRules   = "tpctl.outcome_rules"
	MetaDataset        = "tpctl.dataset_digest"
	MetaCohort         = "tpctl.cohort_digest"
	MetaVerifier       = "tpctl.verifier_digest"
	MetaSettings       = "tpctl.settings_digest"
	MetaProtocolKey    = "tpctl.protocol_key"
)

// Options configure Run.
type Options struct {
	Format Format
	// Out is the dataset folder; it is created when absent, and each
	// round becomes its partition folder inside it.
	Out string
	// Version is the tpctl version recorded in rounds and the footer.
	Version string
	// Scanner is the outgoing-text gate every exported string passes; a
	// nil Scanner checks nothing.
	Scanner *redact.Scanner
}

// Partition is what Run did for one snapshot.
type Partition struct {
	Snapshot string `json:"snapshot"`
	RoundID  string `json:"round_id"`
	Dir      string `json:"dir"`
	// Unchanged means the partition was already there with the same
	// bytes, so nothing was written.
	Unchanged bool  `json:"unchanged"`
	Trials    int64 `json:"trials"`
	Attempts  int64 `json:"attempts"`
	Tasks     int64 `json:"tasks"`
}

// SnapshotError is round's: a snapshot that cannot be exported (not a
// snapshot, fails verification, changed while read).
type SnapshotError = round.SnapshotError

// ErrUnverified is wrapped by a SnapshotError for a snapshot with
// verification problems.
var ErrUnverified = round.ErrUnverified

// ConflictError means the round's partition already exists in the output
// folder with different contents; nothing is replaced.
type ConflictError struct {
	Dir string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%q already exists and differs from this export (another tpctl version or format?); nothing was replaced — remove it or choose another --out", e.Dir)
}

// Run exports each snapshot, verified first, into opts.Out. Partitions
// are written whole or not at all (temporary folder, fsync, rename).
func Run(ctx context.Context, snapshots []string, opts Options) ([]Partition, error) {
	if _, err := ParseFormat(string(opts.Format)); err != nil {
		return nil, err
	}
	// The dataset is written beside the snapshots, never inside one
	// (an unlisted file makes a snapshot fail verification).
	if err := safefs.CheckOutside(opts.Out, snapshots...); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create output folder %q: %w", opts.Out, err)
	}
	var out []Partition
	for _, dir := range snapshots {
		p, err := exportOne(ctx, dir, opts)
		if err != nil {
			return out, err
		}
		out = append(out, *p)
	}
	return out, nil
}

// hexOf is the round ID without its scheme: the partition's value.
func hexOf(roundID string) string {
	_, h, ok := strings.Cut(roundID, ":")
	if !ok {
		return roundID
	}
	return h
}

// ProtocolKey is the SHA-256 (hex) of the digest rules, outcome rules and
// four protocol digests, one per line: rounds with equal keys may be
// compared, as far as their manifests say.
func ProtocolKey(m *snapshot.Manifest) string {
	p := m.Protocol
	h := sha256.Sum256([]byte(strings.Join([]string{p.DigestRules, m.OutcomeRules, p.DatasetDigest, p.CohortDigest, p.VerifierDigest, p.SettingsDigest}, "\n")))
	return hex.EncodeToString(h[:])
}

func exportOne(ctx context.Context, dir string, opts Options) (*Partition, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	safefs.CleanLeftovers(opts.Out)
	// The snapshot is verified in the same read that hands its trials to
	// the writer: they go to a temporary folder, which is published only
	// once the whole snapshot verified, and removed otherwise (even for a
	// problem in its last line).
	// The rows are written on a goroutine of their own (pipe). A writer's
	// error wins over the snapshot's: every trial the read handed over is
	// written first, so the error reported does not depend on timing.
	var w *partitionWriter
	var p *pipe
	defer func() {
		if p != nil {
			p.wait()
		}
		if w != nil {
			w.discard()
		}
	}()
	// written waits until every trial handed over is written and the
	// gate's last batch scanned.
	written := func() error {
		if err := p.wait(); err != nil {
			return err
		}
		return w.gate.flush()
	}
	s, err := round.Walk(dir, func(m *snapshot.Manifest, raw []byte) (snapshot.Visit, error) {
		if w != nil { // reading again from the start: forget the first
			if err := written(); err != nil {
				return nil, err
			}
			w.discard()
		}
		var err error
		w, err = newPartitionWriter(ctx, dir, m, raw, opts)
		if err != nil {
			return nil, err
		}
		p = startPipe(w.trial)
		return p.visit, nil
	})
	if p != nil {
		if perr := written(); perr != nil {
			return nil, perr
		}
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	w.dataset = s.Plan().DatasetScope()
	part, err := w.finish()
	if err != nil {
		return nil, err
	}
	tmp, final := w.dir, part.Dir
	if err := safefs.SyncDir(tmp); err != nil {
		return nil, err
	}
	err = safefs.PublishDir(tmp, final)
	var exists *safefs.ExistsError
	if errors.As(err, &exists) {
		same, cerr := sameFiles(tmp, final)
		if cerr != nil {
			return nil, cerr
		}
		if !same {
			return nil, &ConflictError{Dir: final}
		}
		part.Unchanged = true
		return part, nil
	}
	return part, err
}

// sameFiles reports whether folder b holds exactly the files of a, byte
// for byte.
func sameFiles(a, b string) (bool, error) {
	ea, err := os.ReadDir(a)
	if err != nil {
		return false, err
	}
	eb, err := os.ReadDir(b)
	if err != nil {
		return false, fmt.Errorf("cannot read %q: %w", b, err)
	}
	if len(ea) != len(eb) {
		return false, nil
	}
	for i := range ea {
		if ea[i].Name() != eb[i].Name() || !eb[i].Type().IsRegular() {
			return false, nil
		}
		same, err := sameFile(filepath.Join(a, ea[i].Name()), filepath.Join(b, eb[i].Name()))
		if err != nil || !same {
			return false, err
		}
	}
	return true, nil
}

func sameFile(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := safefs.OpenRegular(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return errors.Is(ea, io.ErrUnexpectedEOF) || errors.Is(ea, io.EOF), nil
		}
	}
}

// partitionWriter writes the four files of one round into dir, a
// temporary folder, as the trials stream past.
type partitionWriter struct {
	ctx      context.Context
	snapshot string // the snapshot's folder
	m        *snapshot.Manifest
	sha      string // of snapshot.json's bytes
	// dataset is which part of the dataset the rates stand on (the
	// plan's settings.dataset), nil when the plan does not record it.
	dataset *snapshot.DatasetScope
	opts    Options
	dir     string
	rid     string

	trials   *opened[TrialRow]
	attempts *opened[AttemptRow]
	tasks    *opened[TaskRow]
	cur      string // the trial being written, for the gate's message
	task     taskAcc
	kmax     int
	perK     bool
	counts   snapshot.Counts
	cost     snapshot.CostSum // the round's
	part     Partition
	n        int
	gate     *gate // the tables', shared
}

func newPartitionWriter(ctx context.Context, dir string, m *snapshot.Manifest, manifestJSON []byte, opts Options) (w *partitionWriter, err error) {
	rid := hexOf(m.RoundID)
	tmp, err := safefs.MkdirOwnedTemp(opts.Out, "round_id="+rid)
	if err != nil {
		return nil, fmt.Errorf("cannot create a temporary folder in %q: %w", opts.Out, err)
	}
	sum := sha256.Sum256(manifestJSON)
	w = &partitionWriter{ctx: ctx, snapshot: dir, m: m, sha: hex.EncodeToString(sum[:]), opts: opts, dir: tmp, rid: rid,
		part: Partition{Snapshot: dir, RoundID: m.RoundID, Dir: filepath.Join(opts.Out, "round_id="+rid)}}
	// The writer itself, not the named result: "return nil, err" sets
	// that to nil before this runs (issue 35: a nil dereference under
	// EMFILE, when a table file could not be opened).
	pw := w
	defer func() {
		if err != nil {
			pw.discard()
		}
	}()
	w.gate = w.newGate()
	trialID := func() string { return w.cur }
	if w.trials, err = openTable[TrialRow](w, TableTrials, "trial", trialID); err != nil {
		return nil, err
	}
	if w.attempts, err = openTable[AttemptRow](w, TableAttempts, "trial", trialID); err != nil {
		return nil, err
	}
	if w.tasks, err = openTable[TaskRow](w, TableTasks, "task", func() string { return w.task.name }); err != nil {
		return nil, err
	}
	if st := m.Statistics; st != nil {
		w.kmax, w.perK = st.PassHatK.MaxK(), st.PassKTasksByK != nil
	}
	return w, nil
}

// discard closes the files and removes the temporary folder (after a
// publish there is nothing left to remove).
func (w *partitionWriter) discard() {
	for _, o := range []interface{ abandon() }{w.trials, w.attempts, w.tasks} {
		o.abandon()
	}
	// Its own files first, by path (unlink needs no descriptor): out of
	// descriptors, RemoveAll cannot open the folder to list it.
	for _, table := range []string{TableTrials, TableAttempts, TableTasks} {
		os.Remove(filepath.Join(w.dir, table+"."+string(w.opts.Format)))
	}
	os.RemoveAll(w.dir)
}

// file creates one table file.
func (w *partitionWriter) file(table string) (*os.File, error) {
	return os.OpenFile(filepath.Join(w.dir, table+"."+string(w.opts.Format)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

func (w *partitionWriter) meta(table string) map[string]string {
	m := w.m
	p := m.Protocol
	return map[string]string{
		MetaExportFormat:   FormatVersion,
		MetaTpctlVersion:   w.opts.Version,
		MetaRoundID:        m.RoundID,
		MetaSnapshotSHA256: w.sha,
		MetaTable:          table,
		MetaDigestRules:    p.DigestRules,
		MetaOutcomeRules:   m.OutcomeRules,
		MetaDataset:        p.DatasetDigest,
		MetaCohort:         p.CohortDigest,
		MetaVerifier:       p.VerifierDigest,
		MetaSettings:       p.SettingsDigest,
		MetaProtocolKey:    ProtocolKey(m),
	}
}

// newGate is the gate of the round's tables. The message's location is
// built only for a finding: the check runs for every string.
func (w *partitionWriter) newGate() *gate {
	batch := func(text []byte) bool { return w.opts.Scanner.CheckPayload("", text) != nil }
	return &gate{batch: batch, passed: map[string]*passed{}, check: func(table, kind, key, column, value string) error {
		if w.opts.Scanner.CheckIdentity("", column, value) == nil {
			return nil
		}
		row := kind
		if key != "" {
			row += " " + key
		}
		// The row's name (a trial ID) may hold the very secret found.
		where := w.opts.Scanner.Mask(fmt.Sprintf("snapshot %q %s %s", w.snapshot, table, row))
		return w.opts.Scanner.CheckIdentity(where, column, value)
	}}
}

type opened[T any] struct {
	f *os.File
	t *table[T]
}

// openTable opens table name, whose rows are each a kind ("trial") named
// by key when written.
func openTable[T any](w *partitionWriter, name, kind string, key func() string) (*opened[T], error) {
	f, err := w.file(name)
	if err != nil {
		return nil, err
	}
	return &opened[T]{f: f, t: newTable[T](f, w.opts.Format, w.gate, name, kind, key, w.meta(name))}, nil
}

func (o *opened[T]) finish() error {
	if err := o.t.close(); err != nil {
		o.t.stop()
		o.f.Close()
		return err
	}
	if err := o.f.Sync(); err != nil {
		o.f.Close()
		return err
	}
	return o.f.Close()
}

// abandon ends the table's writing and closes the file, written or not;
// nil does nothing.
func (o *opened[T]) abandon() {
	if o != nil {
		o.t.stop()
		o.f.Close()
	}
}

// trial writes one planned trial: its trials row, its attempts rows, and
// its task's row once the task ends.
func (w *partitionWriter) trial(t round.TrialState) error {
	if w.n++; w.n%1024 == 0 {
		if err := w.ctx.Err(); err != nil {
			return w.fail(err)
		}
	}
	if o := t.Observation; o != nil && isTrialID(o.TrialID, t.Task, t.Repeat) {
		w.cur = o.TrialID // the same string, not another one per trial
	} else {
		w.cur = snapshot.TrialID(t.Task, t.Repeat)
	}
	if t.Task != w.task.name {
		if err := w.flushTask(); err != nil {
			return err
		}
		w.task = taskAcc{name: t.Task}
	}
	row := TrialRow{RoundID: w.rid, TrialID: w.cur, Task: t.Task, Repeat: int64(t.Repeat), TrajectoryExported: t.Trajectory}
	o := t.Observation
	w.cost.Add(o)
	w.task.cost.Add(o)
	if o == nil {
		row.Status = StatusMissing
		w.counts.Missing++
	} else {
		if o.TrialID != w.cur {
			return w.fail(&SnapshotError{Dir: w.snapshot, Err: fmt.Errorf("observation %q does not have the trial ID %q its task and repeat give", o.TrialID, w.cur)})
		}
		row.Status, row.Reason, row.Reward, row.ExceptionType = o.Status, &o.Reason, o.Reward, o.ExceptionType
		row.Attempts, row.TrialAttempt, row.Trainable = int64(o.Attempts), ptr(int64(o.TrialAttempt)), o.Trainable
		row.ResultSHA256, row.TaskChecksum, row.VerifierEnvironmentMode = o.Evidence.ResultSHA256, o.Evidence.TaskChecksum, o.Evidence.VerifierEnvironmentMode
		if n := len(o.AttemptOutcomes); n > 0 {
			row.Explanation = explanationOf(&o.AttemptOutcomes[n-1])
		}
		switch o.Status {
		case snapshot.StatusSuccess:
			w.counts.Success++
		case snapshot.StatusFailure:
			w.counts.Failure++
		case snapshot.StatusInfraError:
			w.counts.InfraError++
		default:
			w.counts.Unscored++
		}
		for i := range o.AttemptOutcomes {
			a := &o.AttemptOutcomes[i]
			ar := AttemptRow{RoundID: w.rid, TrialID: w.cur, Task: t.Task, Repeat: int64(t.Repeat), Retry: int64(a.Retry),
				Current: a.Retry == o.TrialAttempt, Status: a.Status, Reason: a.Reason, Reward: a.Reward,
				ExceptionType: a.ExceptionType, ResultSHA256: a.ResultSHA256, Explanation: explanationOf(a)}
			if err := w.attempts.t.write(&ar); err != nil {
				return err
			}
			w.part.Attempts++
		}
	}
	w.task.add(row.Status)
	w.part.Trials++
	return w.trials.t.write(&row)
}

// fail returns err, unless a row written before it carries a secret the
// gate's batch has not scanned yet: then that, as when every row was
// scanned as it came.
func (w *partitionWriter) fail(err error) error {
	if gerr := w.gate.flush(); gerr != nil {
		return gerr
	}
	return err
}

func (w *partitionWriter) flushTask() error {
	if w.task.name == "" {
		return nil
	}
	row := w.task.row(w.rid, w.kmax, w.perK)
	w.part.Tasks++
	return w.tasks.t.write(&row)
}

// finish ends the tables once the snapshot verified, and writes rounds.
func (w *partitionWriter) finish() (*Partition, error) {
	if err := w.flushTask(); err != nil {
		return nil, err
	}
	w.counts.Expected = int(w.part.Trials)
	// Verification checked these counts over the very bytes read here;
	// other counts would be a tpctl bug, never exported.
	if w.counts != w.m.Counts {
		return nil, w.fail(&SnapshotError{Dir: w.snapshot, Err: fmt.Errorf("the verified trials give counts %+v, not the manifest's %+v (a tpctl bug; please report it)", w.counts, w.m.Counts)})
	}
	for _, o := range []interface{ finish() error }{w.trials, w.attempts, w.tasks} {
		if err := o.finish(); err != nil {
			return nil, err
		}
	}
	rounds, err := openTable[RoundRow](w, TableRounds, "round", func() string { return "" })
	if err != nil {
		return nil, err
	}
	defer rounds.f.Close()
	rr := roundRow(w.rid, w.opts.Version, w.sha, w.m)
	if d := w.dataset; d != nil {
		rr.DatasetPlanned, rr.DatasetSize = ptr(d.PlannedSamples), ptr(d.Samples)
		rr.DatasetItem, rr.DatasetWhole, rr.DatasetScope = ptr(d.Noun()), ptr(d.Of()), ptr(d.String())
	}
	c := w.cost.Cost()
	rr.CostAttempts, rr.CostWithCost, rr.CostUSDAll = int64(c.Attempts), int64(c.WithCost), c.USDAllAttempts
	rr.CostFinalAttempts, rr.CostFinalWithCost, rr.CostUSDFinal = int64(c.FinalAttempts), int64(c.FinalWithCost), c.USDFinalAttempts
	rr.InputTokens, rr.CacheTokens, rr.OutputTokens, rr.AttemptsWithUsage = c.InputTokens, c.CacheTokens, c.OutputTokens, int64(c.WithTokens)
	if err := rounds.t.write(&rr); err != nil {
		return nil, err
	}
	if err := rounds.finish(); err != nil {
		return nil, err
	}
	return &w.part, nil
}

// isTrialID reports whether id is snapshot.TrialID(task, repeat), without
// building that.
func isTrialID(id, task string, repeat int) bool {
	var buf [20]byte
	n := strconv.AppendInt(buf[:0], int64(repeat), 10)
	return len(id) == len(task)+1+len(n) && id[:len(task)] == task && id[len(task)] == '#' && id[len(task)+1:] == string(n)
}

// StatusMissing is the trials status of a planned trial with no attempt.
const StatusMissing = "missing"

func ptr[T any](v T) *T { return &v }

// taskAcc counts one task's trials as they stream past.
type taskAcc struct {
	name                                                     string
	planned, success, failure, infraError, unscored, missing int64
	cost                                                     snapshot.CostSum
}

func (a *taskAcc) add(status string) {
	a.planned++
	switch status {
	case snapshot.StatusSuccess:
		a.success++
	case snapshot.StatusFailure:
		a.failure++
	case snapshot.StatusInfraError:
		a.infraError++
	case snapshot.StatusUnscored:
		a.unscored++
	default:
		a.missing++
	}
}

func (a *taskAcc) row(rid string, kmax int, perK bool) TaskRow {
	scored := a.success + a.failure
	r := TaskRow{RoundID: rid, Task: a.name, Planned: a.planned, Success: a.success, Failure: a.failure,
		InfraError: a.infraError, Unscored: a.unscored, Missing: a.missing, Scored: scored,
		Flaky: a.success > 0 && a.failure > 0, AlwaysFail: scored > 0 && a.success == 0, InfraProne: a.infraError > 0 && 2*a.infraError >= a.planned,
		LowCoverage: snapshot.LowCoverage(int(a.planned), int(a.infraError+a.unscored))}
	c := a.cost.Cost()
	r.Attempts, r.WithCost, r.CostUSD = int64(c.Attempts), int64(c.WithCost), c.USDAllAttempts
	if rate, ci := snapshot.Rate(int(a.success), int(scored)); rate != nil {
		r.SuccessRate, r.SuccessRateLow, r.SuccessRateHigh = rate, &ci[0], &ci[1]
	}
	// The same rule as the snapshot's statistics, so the mean over the
	// counted tasks is the round's pass_hat_k_max: from tpctl-snapshot/3 a
	// task counts with at least k scored repeats, using all of them; in
	// tpctl-snapshot/2 when every planned repeat is scored.
	if kmax > 0 && int(scored) >= kmax && (perK || scored == a.planned) {
		r.PassHatK = ptr(stats.Round12(stats.PassHatK(int(a.planned), int(a.success), kmax)))
	}
	return r
}

func roundRow(rid, version, sha string, m *snapshot.Manifest) RoundRow {
	c := m.Counts
	r := RoundRow{
		RoundID: rid, ExportFormat: FormatVersion, TpctlVersion: version, SnapshotFormat: m.Format, SnapshotSHA256: sha,
		Name: m.Name, Split: m.Protocol.Split, CheckpointRef: m.Checkpoint.Ref, CheckpointServedAs: m.Checkpoint.ServedAs,
		SourceFormat: m.Source.Format, HarborRevision: m.Source.Revision, SourceFormatVerified: m.Source.FormatVerified,
		DigestRules: m.Protocol.DigestRules, OutcomeRules: m.OutcomeRules,
		DatasetDigest: m.Protocol.DatasetDigest, CohortDigest: m.Protocol.CohortDigest,
		VerifierDigest: m.Protocol.VerifierDigest, SettingsDigest: m.Protocol.SettingsDigest,
		ProtocolKey: ProtocolKey(m), Label: m.Label,
		Expected: int64(c.Expected), Success: int64(c.Success), Failure: int64(c.Failure), InfraError: int64(c.InfraError),
		Unscored: int64(c.Unscored), Missing: int64(c.Missing), Scored: int64(c.Scored()),
		SuccessRate: m.SuccessRate, Coverage: m.Coverage,
		SharedVerifier: int64(m.SharedVerifier), TrajectoriesCount: int64(m.Trajectories.Count), TrajectoriesTrunc: int64(m.Trajectories.Truncated),
	}
	if ci := m.SuccessRateCI95; ci != nil {
		r.SuccessRateCI95Low, r.SuccessRateCI95High = &ci[0], &ci[1]
	}
	if ci := m.CoverageCI95; ci != nil {
		r.CoverageCI95Low, r.CoverageCI95High = &ci[0], &ci[1]
	}
	if st := m.Statistics; st != nil {
		r.Clusters = ptr(int64(st.Clusters))
		r.SESuccessClustered = st.SuccessRateSEClustered
		if ci := st.SuccessRateCI95Clustered; ci != nil {
			r.CI95ClusteredLow, r.CI95ClusteredHigh = &ci[0], &ci[1]
		}
		r.NEff = st.SuccessRateNEff
		if why := st.SuccessRateCI95ClusteredNull; why != nil {
			r.CI95ClusteredNull, r.CI95ClusteredNullMsg = &why.Code, &why.Message
			r.NullTasks, r.NullMinTasks = ptr(int64(why.Tasks)), ptr(int64(why.MinTasks))
		}
		if st.PassKTasks != nil { // tpctl-snapshot/2: one counted set for every k
			r.PassKTasksCounted, r.PassKTasksLeftOut = ptr(int64(st.PassKTasks.Counted)), ptr(int64(st.PassKTasks.LeftOut))
		}
		if k := st.PassHatK.MaxK(); k > 0 {
			at, _ := st.PassAtK.K(k)
			hat, _ := st.PassHatK.K(k)
			r.PassKMax, r.PassAtKMax, r.PassHatKMax = ptr(int64(k)), &at, &hat
			// tpctl-snapshot/3 counts the tasks per k; the row's k is the largest.
			if t, ok := st.PassKTasksByK.K(k); ok {
				r.PassKTasksCounted, r.PassKTasksLeftOut = ptr(int64(t.Counted)), ptr(int64(t.LeftOut))
			}
		}
	}
	return r
}
