package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() {
	addCommand(newVersionCmd)
	addCommand(newCompletionCmd)
}

// toolVersion is the module version and VCS revision from build info.
func toolVersion() (version, revision string) {
	version, revision = "(devel)", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if bi.Main.Version != "" {
		version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			revision = s.Value
		}
	}
	return
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print tpctl's version and build revision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, r := toolVersion()
			if a.jsonOutput() {
				return writeJSONLine(a.io.Out, map[string]string{"version": v, "revision": r})
			}
			_, err := fmt.Fprintf(a.io.Out, "tpctl %s (revision %s)\n", v, r)
			return err
		},
	}
}

func newCompletionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(a.io.Out, true)
			case "zsh":
				return root.GenZshCompletion(a.io.Out)
			case "fish":
				return root.GenFishCompletion(a.io.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(a.io.Out)
			}
			return usageErr(fmt.Errorf("unknown shell %q", args[0]), "choose bash, zsh, fish or powershell")
		},
	}
}
