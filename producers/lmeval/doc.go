// Package lmeval is the lm-evaluation-harness wing (issue 32): it reads
// what lm-eval writes with --output_path DIR --log_samples — one
// results_<timestamp>.json per run and one samples_<task>_<timestamp>.jsonl
// per task — and turns it into tpctl's evidence: the planned documents of a
// task, their outcomes by the versioned table lm-eval-outcomes/1, lm-eval's
// own figure beside tpctl's count, the settings and dataset evidence the
// run records, and each document's prompt and response as a two-message
// transcript.
//
// lm-eval prints one aggregate per task and has no error class: a run cut
// short by --limit, or a samples file that holds 10 of 5,000 documents,
// looks complete. This package counts every planned document instead.
//
// What lm-eval writes is read from its own code (EleutherAI/
// lm-evaluation-harness, commit 4e7e0d47f33b): lm_eval/evaluator.py
// evaluate() builds each document's record, lm_eval/loggers/
// evaluation_tracker.py writes both files, lm_eval/utils.py hash_string is
// SHA-256 hex. testdata/README.md says how the fixtures were made.
//
// The package imports only the standard library and tpctl's floor-1
// packages (docs/layout.md); it never reads the environment (the caller
// passes TUNEPLANE_JOB_VAL_UPLOAD_SAMPLES to TraceDefault).
package lmeval
