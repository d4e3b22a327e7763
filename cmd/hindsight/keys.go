package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hindsight-memory/hindsight/keys"
)

func runKeys(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("keys", "export", `
Print the deployment keys an earlier version kept in the store's settings
(the console's cookie key, the redaction key, the MCP session key), as
NAME=value lines to put in the Kubernetes Secret or .env. A process with
a ClickHouse server refuses to start while the store holds a key the
environment does not set; once it is set, the process deletes the row at
start, so the key is kept only where the store's readers cannot take it.
With the key the store held, existing console sign-ins and secret
placeholders keep verifying. The embedded stack (hindsight dev) moves its
keys into the data directory's keys/ by itself.`, "CLICKHOUSE_ADDR", "CLICKHOUSE_DATABASE", "CLICKHOUSE_USER", "CLICKHOUSE_PASSWORD", "HINDSIGHT_DATA_DIR", "HINDSIGHT_CHDB_LIB")
	var s stackFlags
	s.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "export" {
		fs.Usage()
		return errUsage
	}
	st, closeFn, err := openClickHouse(ctx, &s, false)
	if err != nil {
		return err
	}
	defer closeFn()
	lines, err := keys.Export(ctx, st, keys.All...)
	if err != nil {
		return err
	}
	if len(lines) == 0 {
		fmt.Fprintln(out, "# the store holds no key: nothing to move")
		return nil
	}
	fmt.Fprintln(out, "# keys the store still holds: set these in every Hindsight process's environment, then restart (the rows are deleted at start)")
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	return nil
}
