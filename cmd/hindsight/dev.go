package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"text/tabwriter"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/console"
	"github.com/hindsight-memory/hindsight/devserver"
	"github.com/hindsight-memory/hindsight/keys"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/metrics"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/worker"
)

// adjustActivities, when set (only by this package's tests, in a child
// process they start), adjusts the worker's activities before it starts.
var adjustActivities func(*activities.Activities)

func runDev(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("dev", "[flags]", `
Run the whole of Hindsight in one process, with no external services and no
API keys: an embedded Temporal server (SQLite in the data directory) and its
Web UI, the worker, the MCP server over streamable HTTP, the episodic log in
embedded ClickHouse (chDB) and the local vector index. Everything is kept in
the data directory and survives a restart. Ctrl-C stops it cleanly.

Set CLICKHOUSE_ADDR, MILVUS_ADDR or OPENAI_BASE_URL to use real servers and
models for any part. It also runs the maintenance schedules (consolidation,
decay), visible in the Temporal UI.`, append(stackEnvs, scheduleEnvs...)...)
	var o devOptions
	o.stack.register(fs)
	fs.IntVar(&o.temporalPort, "temporal-port", devserver.DefaultFrontendPort, "port of the embedded Temporal frontend")
	fs.IntVar(&o.uiPort, "ui-port", devserver.DefaultUIPort, "port of the Temporal Web UI (-1 disables it)")
	fs.StringVar(&o.clickhouseHTTP, "clickhouse-http", "127.0.0.1:8123", "loopback address serving the embedded ClickHouse's HTTP interface to `hindsight sql` (empty disables)")
	fs.StringVar(&o.pprof, "pprof", "", "loopback address serving Go's profiles (net/http/pprof), e.g. 127.0.0.1:6060, for `go tool pprof` (empty disables)")
	if err := parse(fs, args); err != nil {
		return err
	}
	log, err := o.stack.logger()
	if err != nil {
		return err
	}
	o.log = log
	st, err := startDev(ctx, o)
	if err != nil {
		return err
	}
	st.printEndpoints(out)
	<-ctx.Done()
	fmt.Fprintln(out, "\nshutting down…")
	return st.Close()
}

type devOptions struct {
	stack          stackFlags
	temporalPort   int
	uiPort         int
	clickhouseHTTP string
	pprof          string
	log            *slog.Logger
}

// devStack is everything `hindsight dev` runs, in start order.
type devStack struct {
	dataDir  string
	temporal *devserver.Server
	client   client.Client
	runtime  *app.Runtime
	worker   sdkworker.Worker
	service  *service.Service
	http     *httpServer
	chHTTP   *httpServer
	pprof    *httpServer
	log      *slog.Logger
	closers  []func() error
	// ledgersRepaired closes once the ledgers wedged before the start are
	// repaired (repairLedgersInBackground).
	ledgersRepaired <-chan struct{}
}

// startDev starts the stack; on error it stops what it started.
func startDev(ctx context.Context, o devOptions) (_ *devStack, err error) {
	log := o.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := checkListen(o.stack.mcpAddr, o.stack.tokensFile); err != nil {
		return nil, err
	}
	tokens, err := loadTokens(o.stack.tokensFile, log)
	if err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(o.stack.dataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	st := &devStack{dataDir: dataDir, log: log}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	// The MCP port is taken before anything else starts: the embedded
	// Temporal server picks its internal ports, and its clients their
	// local ones, from the ports free at the time, which a free port asked
	// for (as in tests) is until it is bound.
	mcpLn, err := listen(o.stack.mcpAddr, "the MCP server", "--mcp-addr")
	if err != nil {
		return nil, err
	}
	st.closers = append(st.closers, func() error {
		if st.http == nil {
			return mcpLn.Close()
		}
		return nil
	})

	st.temporal, err = devserver.Start(ctx, devserver.Config{
		DataDir:      filepath.Join(dataDir, "temporal"),
		FrontendPort: o.temporalPort,
		UIPort:       o.uiPort,
		SearchAttributes: map[string]enums.IndexedValueType{
			"HindsightTenant": enums.INDEXED_VALUE_TYPE_KEYWORD,
		},
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	st.closers = append(st.closers, st.temporal.Stop)

	copts, err := withPayloadCodec(client.Options{HostPort: st.temporal.FrontendAddr(), Logger: temporalLogger(log)})
	if err != nil {
		return nil, err
	}
	st.client, err = client.Dial(copts)
	if err != nil {
		return nil, fmt.Errorf("connect to the embedded Temporal server: %w", err)
	}
	st.closers = append(st.closers, func() error { st.client.Close(); return nil })

	m := metrics.New()
	wc, err := o.stack.workerConfig(log)
	if err != nil {
		return nil, err
	}
	wc.Metrics = m
	wc.NeedKeys = []keys.Key{keys.Console, keys.Session}
	st.runtime, err = app.Build(ctx, wc)
	if err != nil {
		return nil, err
	}
	st.closers = append(st.closers, st.runtime.Close)

	acts := st.runtime.Activities(st.client, o.stack.taskQueue)
	if adjustActivities != nil {
		adjustActivities(acts)
	}
	st.worker = worker.NewWorker(st.client, o.stack.taskQueue, acts, m)
	if err := st.worker.Start(); err != nil {
		return nil, fmt.Errorf("start the worker: %w", err)
	}
	st.closers = append(st.closers, func() error { st.worker.Stop(); return nil })
	if err := applySchedules(ctx, st.client, o.stack.taskQueue); err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	st.ledgersRepaired = repairLedgersInBackground(ctx, st.client, copts.DataConverter, o.stack.taskQueue, log)
	if gen, err := app.StartReindex(ctx, st.client, o.stack.taskQueue, st.runtime); err != nil {
		return nil, err
	} else if gen != "" {
		log.Info("the embedding model changed: reindexing in the background", "generation", gen)
	}

	scfg, err := serviceConfig(&o.stack)
	if err != nil {
		return nil, err
	}
	st.service = st.runtime.Service(scfg, st.client)
	loc, err := timeZone()
	if err != nil {
		return nil, err
	}
	mcp := mcpserver.New(st.service, mcpserver.Options{Version: version, Logger: log, Location: loc, Screener: st.runtime.Screener})
	ops := opsMux(readiness{temporal: st.client, store: st.runtime.Store}, m)
	sessions := mcpSessions(st.runtime.Keys.Get(keys.Session), st.runtime.Store)
	guard, err := guardFor(mcpLn.Addr().String())
	if err != nil {
		return nil, err
	}
	ui, err := consoleHandler(st.service, st.runtime, tokens, guard, o.stack.tenant, st.temporal.UIAddr(), m, log)
	if err != nil {
		return nil, err
	}
	st.http = serveHTTP(mcpLn, "the MCP server", guard, mcpMux(mcp, tokens, o.stack.tenant, sessions, ops, ui), log)
	st.closers = append(st.closers, st.http.Close)

	if o.clickhouseHTTP != "" && st.runtime.ChDB != nil {
		if err := checkListen(o.clickhouseHTTP, ""); err != nil {
			return nil, fmt.Errorf("--clickhouse-http: %w", err)
		}
		token, err := newSQLToken(o.stack.dataDir)
		if err != nil {
			return nil, fmt.Errorf("--clickhouse-http: write its token: %w", err)
		}
		const what = "the embedded ClickHouse's HTTP interface"
		if ln, err := listen(o.clickhouseHTTP, what, "--clickhouse-http"); err != nil {
			// Not essential: say so and go on.
			log.Warn("hindsight sql will not reach this dev server", "error", err)
		} else {
			// The guard answers for the address listened on, which is
			// the flag's unless it asked for any free port (":0").
			guard, err := sqlGuard(ln.Addr().String())
			if err != nil {
				ln.Close()
				return nil, err
			}
			st.chHTTP = serveHTTP(ln, what, guard, guardSQL(st.runtime.ChDB.ReadOnlyHandler(), token), log)
			st.closers = append(st.closers, st.chHTTP.Close)
		}
	}
	if o.pprof != "" {
		// Profiles show what the process holds and runs: loopback only,
		// whatever the token file.
		if err := checkListen(o.pprof, ""); err != nil {
			return nil, fmt.Errorf("--pprof: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		if st.pprof, err = listenHTTP(o.pprof, "the profiler", "--pprof", mux, log); err != nil {
			return nil, err
		}
		st.closers = append(st.closers, st.pprof.Close)
	}
	return st, nil
}

func (st *devStack) mcpURL() string { return "http://" + st.http.Addr() + "/mcp" }

func (st *devStack) printEndpoints(w io.Writer) {
	fmt.Fprintf(w, "hindsight %s is running (data in %s)\n", version, st.dataDir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  MCP server (streamable HTTP)\t%s\n", st.mcpURL())
	fmt.Fprintf(tw, "  memory console\thttp://%s%s/\n", st.http.Addr(), console.Path)
	fmt.Fprintf(tw, "  Temporal frontend\t%s\n", st.temporal.FrontendAddr())
	if ui := st.temporal.UIAddr(); ui != "" {
		fmt.Fprintf(tw, "  Temporal Web UI\t%s\n", ui)
	}
	fmt.Fprintf(tw, "  metrics\thttp://%s/metrics\n", st.http.Addr())
	if st.pprof != nil {
		fmt.Fprintf(tw, "  profiles (go tool pprof)\thttp://%s/debug/pprof/\n", st.pprof.Addr())
	}
	if st.chHTTP != nil {
		fmt.Fprintf(tw, "  ClickHouse HTTP (hindsight sql)\thttp://%s\n", st.chHTTP.Addr())
	}
	for _, p := range st.runtime.Parts() {
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, p.What)
	}
	tw.Flush()
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}

// Close stops everything, the last started first.
func (st *devStack) Close() error {
	var errs []error
	for i := len(st.closers) - 1; i >= 0; i-- {
		errs = append(errs, st.closers[i]())
	}
	st.closers = nil
	return errors.Join(errs...)
}
