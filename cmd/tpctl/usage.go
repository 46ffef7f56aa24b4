package main

import (
	"errors"
	"fmt"
	"github.com/tuneplane/tpctl/internal/suggest"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Usage errors are typed where they arise: every argument validator and the
// flag error function return a cliError with exit code 2, so the exit code
// never depends on the wording of a cobra or pflag message.

// Command groups shown by 'tpctl --help'. A command not listed here (a new
// one) still works and is shown under "Additional Commands".
var commandGroups = []struct {
	id, title string
	commands  []string
}{
	{"rounds", "Import and inspect evaluation rounds:", []string{"plan", "import", "snapshot", "compare", "report", "attest", "digest", "export", "trend", "gate"}},
	{"run", "Run and ship:", []string{"eval", "upload", "preflight"}},
	{"reference", "Reference:", []string{"explain", "formats", "schema", "version", "completion"}},
}

// finishTree applies the conventions every command shares, after all
// commands are attached: groups, typed argument errors and "did you mean"
// suggestions at every level.
func finishTree(root *cobra.Command) {
	for _, g := range commandGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
	}
	for _, c := range root.Commands() {
		for _, g := range commandGroups {
			if slices.Contains(g.commands, c.Name()) {
				c.GroupID = g.id
			}
		}
	}
	help := newHelpCmd()
	help.GroupID = "reference"
	root.SetHelpCommand(help)
	walk(root, func(c *cobra.Command) {
		switch {
		case c.HasSubCommands() && !c.Runnable():
			// A group: cobra would print help and exit 0 for any
			// argument, so a mistyped subcommand would pass a CI gate.
			c.Args = subcommandArgs
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[groupAnnotation] = "true"
		case c.Args != nil:
			c.Args = typedArgs(c.Args)
		}
	})
	registerCompletions(root)
	// A group runs only to show its help: its usage shows "tpctl plan
	// [command]", not a runnable "tpctl plan [flags]".
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(),
		"{{if .Runnable}}\n  {{.UseLine}}{{end}}",
		"{{if and .Runnable (not (index .Annotations \""+groupAnnotation+"\"))}}\n  {{.UseLine}}{{end}}", 1))
}

// groupAnnotation marks the commands that only group subcommands.
const groupAnnotation = "tpctl-group"

func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, s := range c.Commands() {
		walk(s, f)
	}
}

// subcommandArgs refuses any argument to a command that only groups
// subcommands: it can only be a mistyped subcommand.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return unknownSubcommand(cmd, args[0])
}

// unknownSubcommand is the usage error for a word that names no
// subcommand of cmd, with the closest names as a suggestion.
func unknownSubcommand(cmd *cobra.Command, word string) error {
	hints := append(didYouMean(cmd, word), fmt.Sprintf("run '%s --help' for its commands", cmd.CommandPath()))
	return usageErr(fmt.Errorf("unknown command %q for '%s'", word, cmd.CommandPath()), hints...)
}

// didYouMean is the hint naming cmd's subcommands close to word, if any.
func didYouMean(cmd *cobra.Command, word string) []string {
	if s := suggestSubcommands(cmd, word); len(s) > 0 {
		return []string{"did you mean " + quoteList(s) + "?"}
	}
	return nil
}

// suggestSubcommands lists the full paths of cmd's subcommands whose names
// are close to word (edit distance, prefix, or cobra's SuggestFor).
func suggestSubcommands(cmd *cobra.Command, word string) []string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	var out []string
	for _, name := range cmd.SuggestionsFor(word) {
		out = append(out, cmd.CommandPath()+" "+name)
	}
	return out
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, " or ")
}

// typedArgs wraps a cobra argument validator so that its failure is a
// usage error naming the missing or unexpected argument.
func typedArgs(validate cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		// A command that runs with an argument and has subcommands
		// (preflight JOB, preflight verify-report): a first argument that
		// is no file but close to a subcommand's name is a typo of it.
		if cmd.HasSubCommands() && len(args) > 0 {
			if _, err := os.Stat(args[0]); err != nil && len(suggestSubcommands(cmd, args[0])) > 0 {
				return unknownSubcommand(cmd, args[0])
			}
		}
		if validate(cmd, args) == nil {
			return nil
		}
		usage := "usage: " + cmd.UseLine()
		if _, shape, ok := strings.Cut(cmd.Use, " "); ok && strings.Contains(shape, " | ") {
			// Alternative argument lists ("SNAPSHOT | BASE CANDIDATE"):
			// name the shapes, not a position in one of them.
			if len(args) == 0 {
				return usageErr(fmt.Errorf("'%s' is missing %s", cmd.CommandPath(), shape), usage)
			}
			return usageErr(fmt.Errorf("unexpected argument %q for '%s', which takes %s", args[len(args)-1], cmd.CommandPath(), shape), usage)
		}
		names, optional := argNames(cmd)
		all := append(slices.Clone(names), optional...)
		switch {
		case len(args) < len(names):
			missing := strings.Join(names[len(args):], " ")
			return usageErr(fmt.Errorf("'%s' is missing %s", cmd.CommandPath(), missing), usage)
		case len(args) > len(all) && len(all) == 0 && cmd.HasSubCommands():
			return unknownSubcommand(cmd, args[0])
		case len(args) > len(all):
			extra := args[len(all)]
			what := "no arguments"
			if len(all) > 0 {
				parts := slices.Clone(names)
				for _, o := range optional {
					parts = append(parts, "["+o+"]")
				}
				what = "only " + strings.Join(parts, " ")
			}
			return usageErr(fmt.Errorf("unexpected argument %q for '%s', which takes %s", extra, cmd.CommandPath(), what), usage)
		}
		return usageErr(fmt.Errorf("invalid arguments %q for '%s'", args, cmd.CommandPath()), usage)
	}
}

// argNames are the positional argument names in a command's Use line:
// the words (or alternatives like bash|zsh) that are not flags or flag
// values; optional ones are in brackets ("[NAME]").
func argNames(cmd *cobra.Command) (required, optional []string) {
	fields := strings.Fields(cmd.Use)
	for i := 1; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.HasPrefix(f, "[-"):
			// an optional flag: [--upload] or [--report FILE]
			for !strings.HasSuffix(fields[i], "]") && i+1 < len(fields) {
				i++
			}
		case strings.HasPrefix(f, "-"):
			if i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-") && !strings.HasPrefix(fields[i+1], "[") {
				i++ // the flag's value placeholder
			}
		case strings.HasPrefix(f, "["):
			optional = append(optional, strings.Trim(f, "[]."))
		default:
			required = append(required, f)
		}
	}
	return required, optional
}

// flagError turns pflag's typed parse errors into usage errors, with the
// closest flag names for a mistyped one.
func flagError(cmd *cobra.Command, err error) error {
	// "tpctl improt --plan x": cobra found no command "improt" and parsed
	// the flags as the root's; the mistake is the command, not the flag.
	if cmd == cmd.Root() || cmd.Annotations[groupAnnotation] == "true" {
		if args := cmd.Flags().Args(); len(args) > 0 && findSub(cmd, args[0]) == nil {
			return unknownSubcommand(cmd, args[0])
		}
	}
	hint := fmt.Sprintf("run '%s --help' for its flags", cmd.CommandPath())
	var notExist *pflag.NotExistError
	if errors.As(err, &notExist) && notExist.GetSpecifiedName() != "" {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if s := suggest.Closest(notExist.GetSpecifiedName(), names); len(s) > 0 {
			for i := range s {
				s[i] = "--" + s[i]
			}
			return usageErr(err, "did you mean "+quoteList(s)+"?", hint)
		}
	}
	return usageErr(err, hint)
}

// newHelpCmd replaces cobra's help command, which prints "Unknown help
// topic" and exits 0 for a mistyped command.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]...",
		Short: "Help about any command",
		Long:  "Help prints the help of any command: tpctl help snapshot verify.",
		Example: `  tpctl help
  tpctl help snapshot verify`,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() && strings.HasPrefix(s.Name(), toComplete) {
					names = append(names, s.Name()+"\t"+s.Short)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd := c.Root()
			for _, word := range args {
				next := findSub(cmd, word)
				if next == nil {
					return unknownSubcommand(cmd, word)
				}
				cmd = next
			}
			return cmd.Help()
		},
	}
}

func findSub(cmd *cobra.Command, word string) *cobra.Command {
	for _, s := range cmd.Commands() {
		if s.Name() == word || s.HasAlias(word) {
			return s
		}
	}
	return nil
}
