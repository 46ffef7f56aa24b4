// Package preflight checks whether a derived training job — a re-run of an
// earlier job, or a plan a diagnosis proposed — is ready to submit, without
// submitting anything or using a GPU.
//
// Run compares a Job with the platform's Catalog and returns a Report in
// which every check is pass, fail or unchecked with a reason that names the
// exact field. Nothing the package could not check is reported as pass: a
// check that errors (git missing, catalog unavailable, a rule that does not
// compile) is fail or unchecked with the error, and four items that cannot
// be checked before submission (model download inside the worker, mounts,
// environment connectivity, a real smoke run) are always listed as
// unchecked.
//
// The report carries an input fingerprint: SHA-256 over the RFC 8785
// canonical JSON of the job's recipe, params, source reference, config,
// resources and runtime (FingerprintRules). It covers the job spec, not the
// content of the source bundle. Verify tells whether a saved report still
// applies to a job; any change of those inputs invalidates it.
//
// Source availability is proven by materializing the source in a temporary
// folder (git clone and checkout of the exact commit, or a copy of the
// archive with its SHA-256 checked) that is removed on every path,
// including errors and context cancellation.
package preflight
