package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hindsight-memory/hindsight/service"
)

func runExport(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("export", "--user ID [flags]", `
Write everything Hindsight holds about one user of --tenant as JSON: the
memories in the user's scope and the shared memories learned from their
sessions, each with every version; the episodes of their sessions; and the
sessions' raw events. It answers a data-access request and only reads. It
reaches the store as "hindsight sql" does: CLICKHOUSE_ADDR, a running
"hindsight dev" (--dev-addr), or the embedded engine in --data-dir.`, "CLICKHOUSE_ADDR", "CLICKHOUSE_DATABASE", "HINDSIGHT_DATA_DIR", "HINDSIGHT_TENANT")
	var s stackFlags
	s.register(fs)
	user := fs.String("user", "", "the user ID their sessions carry (required)")
	devAddr := fs.String("dev-addr", "127.0.0.1:8123", "the ClickHouse HTTP interface of a running hindsight dev")
	file := fs.String("out", "", "write to this file instead of standard output")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *user == "" || fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	store, closeFn, err := openEpisodicLog(ctx, &s, *devAddr)
	if err != nil {
		return err
	}
	defer closeFn()
	x, err := service.Export(ctx, store, s.tenant, *user, time.Now())
	if err != nil {
		return err
	}
	w := out
	if *file != "" {
		f, err := os.OpenFile(*file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(x); err != nil {
		return err
	}
	if *file != "" {
		events := 0
		for _, evs := range x.Events {
			events += len(evs)
		}
		fmt.Fprintf(out, "exported user %s of tenant %s to %s: %d memories, %d episodes, %d events in %d sessions\n",
			*user, s.tenant, *file, len(x.Memories), len(x.Episodes), events, len(x.Events))
	}
	return nil
}
