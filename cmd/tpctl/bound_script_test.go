package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/harborgen"
)

// mkbigexc ROOT N BYTES writes a Harbor job of N trials under ROOT (with
// ROOT/import-plan.json), every attempt ending in its own exception type
// of about BYTES bytes: untrusted result.json files that together would
// make a snapshot.json over the cap every reader reads it under.
func init() {
	scriptCmds["mkbigexc"] = func() {
		if err := mkbigexc(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "mkbigexc:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func mkbigexc(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: mkbigexc ROOT N BYTES")
	}
	n, err1 := strconv.Atoi(args[1])
	size, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("N and BYTES are numbers")
	}
	if _, err := harborgen.Write(args[0], n); err != nil {
		return err
	}
	for i := range n {
		task := fmt.Sprintf("bench/task-%05d", i/10)
		name := fmt.Sprintf("task-%05d__%07d", i/10, i)
		typ := fmt.Sprintf("Error%03d", i) + strings.Repeat("X", size)
		res := strings.ReplaceAll(harborgen.Result(task, name, harborgen.AgentTimeout), "AgentTimeoutError", typ)
		path := filepath.Join(args[0], "jobs", "2026-04-08__12-00-00", name, "result.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(res), 0o644); err != nil {
			return err
		}
	}
	return nil
}
