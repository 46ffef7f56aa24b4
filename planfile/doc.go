// Package planfile reads and checks import plans (import-plan.json): the
// complete planned evaluation set of one Harbor job, which is the
// denominator of every count tpctl reports.
//
// Checking happens in three stages, and every problem of every stage is
// reported in one run as a located [Finding] (JSON pointer, line and
// column) with a stable code:
//
//  1. strict syntax: empty input, invalid JSON or UTF-8, trailing data,
//     nesting deeper than [MaxDepth] and duplicate member names (which
//     encoding/json silently accepts) are found by walking the tokens;
//  2. the embedded JSON Schema schemas/import-plan.v1.json (draft 2020-12)
//     checks structure and types; closed objects report each extra member
//     as unknown_field at its own pointer;
//  3. the semantic rules of the product contract (SPEC §1): digest form and
//     REPLACE_ placeholders, a checkpoint pinned by content, a validated
//     Harbor revision, unique trials, retries and folders, clean relative
//     paths, secret-named fields and incomplete settings.
//
// [Parse] runs the stages that need no filesystem; [Check] adds the rules
// that lstat every component of every attempt folder under a root; [Load]
// reads a file with a size cap and runs both. The package never imports
// the CLI: it takes plain values and returns findings.
package planfile
