package worker_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/devserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/worker"
)

// startTemporal starts a real embedded Temporal server for one test and
// returns a client of it; both stop when the test ends.
func startTemporal(t *testing.T) client.Client {
	t.Helper()
	dir := t.TempDir()
	var srv *devserver.Server
	// A free port can be taken before the server binds it; the server says
	// so before it starts anything, so another is tried.
	for attempt := 1; ; attempt++ {
		port, err := devserver.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		srv, err = devserver.Start(context.Background(), devserver.Config{DataDir: dir, FrontendPort: port, UIPort: devserver.UIDisabled})
		if errors.Is(err, devserver.ErrPortInUse) && attempt < 5 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	t.Cleanup(func() { srv.Stop() })
	tc, err := client.Dial(client.Options{HostPort: srv.FrontendAddr(), Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	return tc
}

// runWorker builds a runtime from cfg and runs a worker of it on
// taskQueue against tc; both stop when the test ends.
func runWorker(t *testing.T, tc client.Client, cfg app.Config) *app.Runtime {
	t.Helper()
	rt, err := app.Build(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	w := worker.NewWorker(tc, taskQueue, rt.Activities(tc, taskQueue), nil)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return rt
}

// unusedFact is a live shared fact last used (and created) at.
func unusedFact(tenant, id, content string, at time.Time) memory.Memory {
	return memory.Memory{ID: id, Tenant: tenant, Version: 1, Scope: memory.SharedScope, Kind: memory.KindFact,
		Content: content, ContentHash: memory.ContentHash(memory.KindFact, content), Status: memory.StatusLive,
		Confidence: 0.5, Decay: 1, DecayAnchor: at, ValidFrom: at, CreatedAt: at, UpdatedAt: at}
}
