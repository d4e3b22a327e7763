package worker_test

import (
	"context"
	"log/slog"
	"testing"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/hindsight-memory/hindsight/devserver"
)

// startTemporal starts a real embedded Temporal server for one test and
// returns a client of it; both stop when the test ends.
func startTemporal(t *testing.T) client.Client {
	t.Helper()
	port, err := devserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devserver.Start(context.Background(), devserver.Config{DataDir: t.TempDir(), FrontendPort: port, UIPort: devserver.UIDisabled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	tc, err := client.Dial(client.Options{HostPort: srv.FrontendAddr(), Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	return tc
}
