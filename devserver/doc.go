// Package devserver runs a Temporal server and the Temporal Web UI inside the
// calling process, for `hindsight dev`: one binary, no Docker, no Temporal
// CLI, nothing to download.
//
// The server is go.temporal.io/server with all four services (frontend,
// history, matching, worker) in one process, one history shard, and its state
// in a SQLite file under Config.DataDir, so workflow histories, namespaces and
// search attributes survive a restart. The Web UI is
// github.com/temporalio/ui-server pointed at the same frontend.
//
// Start also prepares what Hindsight's workflows rely on: it registers the
// namespace (with a retention) and the custom search attributes if they are
// missing, and it sets the dynamic config that Update, Update-with-Start,
// Schedules and immediately usable search attributes need (see
// dynamicConfig). Dynamic config lives in code, not in a file.
//
//	srv, err := devserver.Start(ctx, devserver.Config{
//		DataDir:          filepath.Join(home, ".hindsight", "dev"),
//		SearchAttributes: map[string]enums.IndexedValueType{"HindsightTenant": enums.INDEXED_VALUE_TYPE_KEYWORD},
//		Logger:           logger,
//	})
//	if err != nil {
//		return err
//	}
//	defer srv.Stop()
//	c, err := client.Dial(client.Options{HostPort: srv.FrontendAddr()})
//
// A data directory is held by one server at a time (an flock on a file in it),
// and ports that are taken fail Start with an error naming the port, before
// anything is started. This is a development server: no TLS, no auth, and its
// settings favour fast feedback over throughput. Production uses a real
// Temporal cluster.
package devserver
