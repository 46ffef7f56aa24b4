// Package schemas embeds the published JSON Schemas of tpctl's input
// formats, so the binary validates with exactly the files documented in
// the repository.
package schemas

import "embed"

// FS holds every *.json schema in this folder, by file name.
//
//go:embed *.json
var FS embed.FS
