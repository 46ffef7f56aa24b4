//go:build !unix

package preflight

import "os/exec"

// setProcessGroup keeps exec's default of killing only git itself where
// process groups are not available.
func setProcessGroup(cmd *exec.Cmd) {}
