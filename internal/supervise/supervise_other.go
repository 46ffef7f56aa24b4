//go:build !linux

package supervise

import "time"

// Enable does nothing off Linux: there is no parent-death signal to build
// on, and no supervisor (docs/eval.md).
func Enable() {}

// Watch does nothing off Linux.
func Watch(int, time.Duration) (func(), error) { return func() {}, nil }

// Run is the supervisor's main; off Linux there is none.
func Run() int { return 0 }

// Start does nothing off Linux.
func Start() error { return nil }
