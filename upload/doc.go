// Package upload sends a saved, verified snapshot to the TunePlane ingest
// API (SPEC §6, docs/ingest-api.md).
//
// The order is fixed: the validation protocol, the round total, the
// observations in batches of at most 32 events, then one request per
// trajectory. Every record carries an immutable identity and the server
// keeps the first copy it receives, so every request is safe to repeat:
// a lost acknowledgement is simply sent again and comes back as a
// duplicate. That is what makes retries, and re-running `tpctl upload DIR`
// after a failure, harmless.
//
// Layers, from the outside in:
//   - Snapshot verifies the folder (a tampered snapshot is refused), checks
//     every record against the API limits locally, then sends;
//   - the retry layer (retrySender) wraps a Doer, retrying network errors,
//     429 and 5xx with capped, jittered exponential backoff that honours
//     Retry-After, and never retrying 400/401/403/413/422;
//   - the Doer is an *http.Client whose redirects may not leave the
//     endpoint's origin, so the bearer token never reaches another host.
//
// The token is never written into an error, a progress report or a summary;
// text that comes back from the server is scrubbed of it as well.
//
// The package never imports cobra or viper: the CLI resolves credentials and
// passes a Config.
package upload
