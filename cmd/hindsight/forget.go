package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/service"
)

func runForget(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("forget", "--memory ID | --session ID | --user ID | --all --yes [flags]", `
Forget for good, in every store, a memory, a session, a user's sessions or
a whole tenant, and everything derived from it: events, episodes, memories
learned only from it (memories with other sources are rebuilt without it),
and typical episodes that summarised it. It runs the Forget workflow on the
Temporal cluster (the embedded one of hindsight dev by default) for
--tenant, and prints a receipt with counts per store.`, "TEMPORAL_ADDR", "TEMPORAL_NAMESPACE", "HINDSIGHT_TENANT")
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	var memories, sessions multiFlag
	fs.Var(&memories, "memory", "a memory ID (repeatable)")
	fs.Var(&sessions, "session", "a session ID (repeatable)")
	user := fs.String("user", "", "a user ID")
	all := fs.Bool("all", false, "everything of the tenant")
	yes := fs.Bool("yes", false, "confirm --all")
	asJSON := fs.Bool("json", false, "print the receipt as JSON")
	timeout := fs.Duration("timeout", 10*time.Minute, "wait this long for the receipt")
	if err := parse(fs, args); err != nil {
		return err
	}
	in := ledger.ForgetInput{Tenant: s.tenant, MemoryIDs: memories, SessionIDs: sessions, UserID: *user, All: *all}
	if *all && !*yes {
		return fmt.Errorf("--all deletes every memory, episode and event of tenant %q: add --yes to confirm", s.tenant)
	}
	if err := in.Validate(); err != nil {
		fs.Usage()
		return errUsage
	}
	tc, err := t.dial(&s)
	if err != nil {
		return err
	}
	defer tc.Close()
	r, err := service.RunForget(ctx, tc, s.taskQueue, in, *timeout)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, r)
	}
	fmt.Fprintf(out, "forgot for tenant %s:\n", s.tenant)
	fmt.Fprintf(out, "  sessions   %d\n  episodes   %d\n  memories   %d deleted (%d of the user's own, %d shared learned only from them), %d shared rebuilt\n  summaries  %d\n",
		len(r.Sessions), len(r.Episodes), len(r.Memories), len(r.Private), len(r.Memories)-len(r.Private), len(r.Rebuilt), len(r.Summaries))
	fmt.Fprintf(out, "  ClickHouse %d events, %d episodes, %d memories (%d versions), %d decisions\n", r.Store.Events, r.Store.Episodes, r.Store.Memories, r.Store.Versions, r.Store.Decisions)
	fmt.Fprintf(out, "  vectors    %d memories, %d episodes\n", r.Vectors, r.EpisodeVectors)
	return nil
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}
