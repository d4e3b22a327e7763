package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/hindsight-memory/hindsight/service"
)

// repairLedgersInBackground repairs, once, every tenant ledger wedged by a
// payload past Temporal's limit (service.RepairWedgedLedgers), without
// holding up the start. The channel it returns closes when it is done.
func repairLedgersInBackground(ctx context.Context, tc client.Client, dc converter.DataConverter, taskQueue string, log *slog.Logger) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := service.RepairWedgedLedgers(ctx, tc, dc, taskQueue, log); err != nil && ctx.Err() == nil {
			log.Warn("could not look for wedged ledgers", "error", err)
		}
	}()
	return done
}

func runLedger(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "repair" {
		fmt.Fprint(os.Stderr, "Usage: hindsight ledger repair [flags]\n\nEnd a tenant's wedged ledger and start it again from the store's state.\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return nil
		}
		return errUsage
	}
	fs := newFlags("ledger repair", "[--tenant T] [--force] [--json]", `
A tenant's ledger is its one writer: while its workflow task fails, no
write of the tenant can land. A ledger begun by an older version could
reach that state for good by trying to send a payload past Temporal's 2 MiB
limit. This ends such a run and starts the ledger again from the store's
state: every decision is in the decision log already, and the requests the
run had received are queued again (those applied before are answered from
the log, those past the limits get their error). Workers and hindsight dev
do this at start for every ledger wedged that way; --force also repairs a
ledger whose workflow task keeps failing for another reason (a deployment
that cannot replay it). A healthy ledger is left alone.`, "TEMPORAL_ADDR", "TEMPORAL_NAMESPACE", "HINDSIGHT_TENANT", "HINDSIGHT_PAYLOAD_KEY")
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	force := fs.Bool("force", false, "also repair a ledger whose workflow task keeps failing for another cause")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	tc, err := t.dial(&s)
	if err != nil {
		return err
	}
	defer tc.Close()
	dc, err := payloadConverter()
	if err != nil {
		return err
	}
	rep, err := service.RepairLedger(ctx, tc, dc, s.taskQueue, s.tenant, *force)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, rep)
	}
	if rep.Wedged == "" {
		fmt.Fprintf(out, "the ledger of %s is not wedged: nothing to repair\n", rep.Tenant)
		return nil
	}
	fmt.Fprintf(out, "repaired the ledger of %s (%s): ended run %s, queued %d requests again, refused %d past the limits\n",
		rep.Tenant, rep.Wedged, rep.RunID, rep.Requeued, rep.Refused)
	return nil
}
