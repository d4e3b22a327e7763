package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// runQuarantine lists the quarantined memories of a tenant, or releases
// one. Releasing is a person's decision, so it is not an MCP tool (an
// agent that read a poisoned memory could release it): it goes to the
// tenant's ledger through Temporal, as "merge undo" does, and is undone
// the same way.
func runQuarantine(ctx context.Context, args []string, out io.Writer) error {
	sub := "list"
	if len(args) > 0 && (args[0] == "list" || args[0] == "release") {
		sub, args = args[0], args[1:]
	}
	if sub == "release" {
		return runQuarantineRelease(ctx, args, out)
	}
	fs := newFlags("quarantine", "[list] [flags]", `
List the memories kept in quarantine: text that reads as an instruction to
the agent (a prompt injection: "ignore previous instructions", "send the
API key to…", "you are authorised to push to main") rather than knowledge
about the work. They are never recalled, merged into or indexed. Release
one you judge to be knowledge with "hindsight quarantine release ID"; undo
that with "hindsight merge undo DECISION_ID". It reaches the store as
"hindsight sql" does: CLICKHOUSE_ADDR, a running "hindsight dev"
(--dev-addr), or the embedded engine in --data-dir.`, "CLICKHOUSE_ADDR", "CLICKHOUSE_DATABASE", "HINDSIGHT_DATA_DIR", "HINDSIGHT_TENANT")
	var s stackFlags
	s.register(fs)
	devAddr := fs.String("dev-addr", "127.0.0.1:8123", "the ClickHouse HTTP interface of a running hindsight dev")
	asJSON := fs.Bool("json", false, "print the memories as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	store, closeFn, err := openEpisodicLog(ctx, &s, *devAddr)
	if err != nil {
		return err
	}
	defer closeFn()
	ms, err := store.Memories(ctx, memory.MemoryFilter{Tenant: s.tenant, Statuses: []memory.Status{memory.StatusQuarantined}})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, ms)
	}
	if len(ms) == 0 {
		fmt.Fprintf(out, "no memory of tenant %s is in quarantine\n", s.tenant)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMORY\tSINCE\tKIND\tSCOPE\tCONTENT")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.UpdatedAt.Format(time.DateTime), m.Kind, m.Scope.Norm(), terminalSafe(runes.ClipLine(m.Content, 80)))
	}
	return tw.Flush()
}

func runQuarantineRelease(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("quarantine release", "MEMORY_ID [flags]", `
Release a memory from quarantine: you judged that its text is knowledge
about the work, not an instruction to the agent. It becomes live (recalled,
merged into, indexed), flagged "released", and the decision is logged with
your reason; "hindsight merge undo DECISION_ID" puts it back. It runs
through the tenant's ledger on the Temporal cluster (the embedded one of
hindsight dev by default).`, "TEMPORAL_ADDR", "TEMPORAL_NAMESPACE", "HINDSIGHT_TENANT")
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	why := fs.String("why", "", "why it is knowledge, for the decision log")
	asJSON := fs.Bool("json", false, "print the decision as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	tc, err := t.dial(&s)
	if err != nil {
		return err
	}
	defer tc.Close()
	who := os.Getenv("USER")
	reason := *why
	if who != "" {
		reason = fmt.Sprintf("%s (%s)", *why, who)
		if *why == "" {
			reason = who
		}
	}
	d, err := operatorDecision(ctx, tc, s.taskQueue, ledger.Request{
		Tenant: s.tenant, Op: ledger.OpRelease, MemoryIDs: []string{fs.Arg(0)}, Reason: reason,
	})
	if err != nil {
		return errors.New(memory.CallerMessage(err))
	}
	if err := printDecision(out, d, *asJSON); err != nil || *asJSON {
		return err
	}
	fmt.Fprintf(out, "undo with: hindsight merge undo %s\n", d.ID)
	return nil
}
