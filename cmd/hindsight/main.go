// Command hindsight is Hindsight's one binary: the embedded development
// stack (dev), the production processes (worker, mcp), and the operator and
// client commands (session-end, recall, migrate, sql, eval, merge, ...).
//
// Only this package reads flags and environment variables; it turns them
// into the typed configs of the packages it wires together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	// Time zones for HINDSIGHT_TIMEZONE, also in images without tzdata.
	_ "time/tzdata"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, out io.Writer) error
}

func commands() []command {
	return []command{
		{"dev", "run everything in one process: Temporal + UI, worker, MCP server, embedded stores", runDev},
		{"worker", "run the Temporal worker against external services", runWorker},
		{"mcp", "run the MCP server (stdio or streamable HTTP) against external services", runMCP},
		{"session-end", "end a session from a transcript file and distil it", runSessionEnd},
		{"hook", "a coding agent's hook: hand sessions over, inject context (hook claude-code | hook codex)", runHook},
		{"import", "backfill past sessions from an agent's logs (import --from claude-code | codex)", runImport},
		{"recall", "recall memories for a query", runRecall},
		{"history", "show a memory's versions and the decisions behind them", runHistory},
		{"merge", "undo a merge decision (merge undo <decision-id>)", runMerge},
		{"ledger", "repair a tenant's wedged ledger (ledger repair --tenant T)", runLedger},
		{"quarantine", "list memories kept in quarantine, or release one (quarantine release ID)", runQuarantine},
		{"forget", "forget a memory, session, user or tenant, and everything derived", runForget},
		{"export", "write everything held about one user as JSON (export --user ID)", runExport},
		{"policy", "show what happens to secrets and personal data (policy show)", runPolicy},
		{"keys", "print the keys an earlier version kept in the store, to move them out (keys export)", runKeys},
		{"codec-server", "decrypt encrypted Temporal payloads for the UI and CLI (needs HINDSIGHT_PAYLOAD_KEY)", runCodecServer},
		{"schedules", "list, apply or trigger the maintenance schedules", runSchedules},
		{"reindex", "re-embed everything into the current embedder's index and switch to it", runReindex},
		{"migrate", "apply the ClickHouse schema migrations", runMigrate},
		{"sql", "run a read-only SQL query over the episodic log", runSQL},
		{"eval", "measure quality: eval locomo | eval merge | eval scenarios", runEval},
		{"bench", "measure the write path under load (bench write) and recall as served (bench recall)", runBench},
		{"extract", "distil a transcript offline and print what it would learn, storing nothing", runExtract},
		{"train", "train the offline sentence classifiers (train classifiers)", runTrain},
		{"healthcheck", "probe a health endpoint (for container healthchecks)", runHealthcheck},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(out)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], out)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		}
		fmt.Fprintf(errOut, "hindsight %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(errOut, "hindsight: unknown command %q\n\n", args[0])
	usage(errOut)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `hindsight — a memory that learns, for LLM agents.

Usage: hindsight <command> [flags]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Run "hindsight <command> --help" for a command's flags and environment.
Quick start: "make dev" (or "hindsight dev"), then connect an MCP client to
http://127.0.0.1:8765/mcp.
`)
}

// errUsage marks an error already reported with the command's usage.
var errUsage = errors.New("usage")

// newFlags returns a flag set whose --help prints the command's synopsis,
// description, flags and the environment variables it reads.
func newFlags(name, synopsis, description string, envs ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: hindsight %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(description))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
		if len(envs) > 0 {
			fmt.Fprint(w, "\nEnvironment:\n")
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, e := range envs {
				fmt.Fprintf(tw, "  %s\t%s\n", e, envHelp[e])
			}
			tw.Flush()
		}
	}
	return fs
}

// parse parses flags, before or after the positional arguments
// (`hindsight sql "SELECT 1" --format json` works); a bad flag prints usage
// and returns errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(os.Stdout) // asked for: help is output, not an error
		}
	}
	if err := fs.Parse(interspersed(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

func runVersion(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("version", "", "Print the version of this binary.")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(out, "hindsight %s\n", version)
	return nil
}

// interspersed moves flags (and their values) ahead of positional
// arguments, so that the standard flag package sees them all.
func interspersed(fs *flag.FlagSet, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9') { // "-1" is a number
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // Parse reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(append(flags, "--"), rest...)
}
