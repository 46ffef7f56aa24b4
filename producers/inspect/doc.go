// Package inspect is the Inspect AI wing of tpctl (issue 31): it reads
// Inspect's evaluation logs, .eval (a zip archive: header.json,
// samples/<id>_epoch_<n>.json, summaries.json, reductions.json,
// _journal/) and .json (the whole log in one document), of log format
// version 2 only; drafts a log's planned set (eval.dataset.sample_ids ×
// eval.config.epochs); judges each (sample, epoch) by the versioned
// outcome table inspect-outcomes/1; sets Inspect's own figures beside the
// log's body; and offers the protocol evidence (settings, dataset and
// cohort inputs) and the conversation of each sample in a neutral form.
//
// Inspect's own code is the reference: its pydantic models in
// src/inspect_ai/log/_log.py and value_to_float in scorer/_metric.py at
// commit 499e6152e7b8fc8cbd8ac5283536572aa6e4ab17 (Inspect 0.3.260, the
// commit the shared fixtures come from). Nothing here is copied from it.
//
// Every read is capped (Limits): a zip member that inflates past its cap
// is refused, naming it; a sample's events, the bulk of a log, stream
// past the scanner without being built. The package imports only the
// standard library and tpctl's floor-1 packages, so it stands below the
// model it feeds (docs/layout.md).
package inspect
