//go:build !linux

package safefs

import "os"

func renameNoReplace(from, to string) error { return os.Rename(from, to) }
