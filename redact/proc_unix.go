//go:build unix

package redact

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group so that killing
// it also stops anything it started (a shell script's interpreter).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
