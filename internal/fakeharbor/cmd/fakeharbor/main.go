// Command fakeharbor is the substitute `harbor` program of package
// fakeharbor as a standalone binary, for trying `tpctl eval run` without
// Harbor, a model server or a sandbox (docs/eval.md). Install it on PATH
// under the name harbor.
package main

import "github.com/tuneplane/tpctl/internal/fakeharbor"

func main() { fakeharbor.Main() }
