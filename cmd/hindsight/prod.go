package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/console"
	"github.com/hindsight-memory/hindsight/keys"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/metrics"
	"github.com/hindsight-memory/hindsight/worker"
)

// temporalFlags select the Temporal cluster of worker and mcp.
type temporalFlags struct {
	addr      string
	namespace string
}

func (t *temporalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.addr, "temporal-addr", envOr("TEMPORAL_ADDR", "127.0.0.1:7233"), "Temporal frontend host:port")
	fs.StringVar(&t.namespace, "namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace")
}

func (t *temporalFlags) dial(stack *stackFlags) (client.Client, error) {
	log, err := stack.logger()
	if err != nil {
		return nil, err
	}
	opts, err := withPayloadCodec(client.Options{HostPort: t.addr, Namespace: t.namespace, Logger: temporalLogger(log)})
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w (set TEMPORAL_ADDR)", t.addr, t.namespace, err)
	}
	return c, nil
}

func runWorker(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("worker", "[flags]", `
Run the Temporal worker: it executes the SessionEnd, MemoryLedger and
maintenance workflows and their activities. Point it at a Temporal cluster
(TEMPORAL_ADDR), a ClickHouse server (CLICKHOUSE_ADDR) and Milvus
(MILVUS_ADDR); without those it uses the embedded engines in --data-dir,
which only one process can own. It serves /healthz, /readyz and /metrics on
--health-addr. At start it creates or updates the maintenance schedules.`, append(append(stackEnvs, "HINDSIGHT_HEALTH_ADDR"), scheduleEnvs...)...)
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	healthAddr := fs.String("health-addr", envOr("HINDSIGHT_HEALTH_ADDR", ":8080"), "listen address for /healthz, /readyz and /metrics")
	if err := parse(fs, args); err != nil {
		return err
	}
	log, err := s.logger()
	if err != nil {
		return err
	}
	c, err := connectServices(ctx, &s, &t, log)
	if err != nil {
		return err
	}
	defer c.Close()
	tc, rt, m := c.temporal, c.runtime, c.metrics
	health, err := listenHTTP(*healthAddr, "the health endpoint", "--health-addr", opsMux(readiness{temporal: tc, store: rt.Store}, m), log)
	if err != nil {
		return err
	}
	defer health.Close()
	w := worker.NewWorker(tc, s.taskQueue, rt.Activities(tc, s.taskQueue), m)
	if err := applySchedules(ctx, tc, s.taskQueue); err != nil {
		return fmt.Errorf("schedules: %w", err)
	}
	dc, err := payloadConverter()
	if err != nil {
		return err
	}
	repairLedgersInBackground(ctx, tc, dc, s.taskQueue, log)
	if gen, err := app.StartReindex(ctx, tc, s.taskQueue, rt); err != nil {
		return err
	} else if gen != "" {
		log.Info("the embedding model changed: reindexing in the background", "generation", gen)
	}
	log.Info("worker started", "temporal", t.addr, "task_queue", s.taskQueue, "health", health.Addr())
	return w.Run(interruptCh(ctx))
}

// interruptCh closes when ctx ends, in the form worker.Run wants.
func interruptCh(ctx context.Context) <-chan any {
	ch := make(chan any)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch
}

func runMCP(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("mcp", "[flags]", `
Run the MCP server alone, over stdio (for an MCP client that starts it) or
streamable HTTP at /mcp (which also serves /healthz, /readyz and /metrics).
Over HTTP it is stateless: it issues no session IDs and keeps nothing of a
client between requests, so any number of replicas can serve one client
without affinity. It needs Temporal (TEMPORAL_ADDR) and a worker running
somewhere; over HTTP on a non-loopback address it requires a token file,
and each caller's tenant comes from their token. Over stdio every call is --tenant.

With --url (or HINDSIGHT_URL), stdio forwards every tool to a running
Hindsight over streamable HTTP instead, e.g. to "hindsight dev" on this
machine: that is how an MCP client that can only start a process uses the
dev server's memory.`, append(stackEnvs, "HINDSIGHT_URL", "HINDSIGHT_TOKEN")...)
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	transport := fs.String("transport", "stdio", "stdio or http")
	url := fs.String("url", envOr("HINDSIGHT_URL", ""), "stdio: forward to the MCP endpoint of a running Hindsight, e.g. http://127.0.0.1:8765/mcp")
	token := fs.String("token", envOr("HINDSIGHT_TOKEN", ""), "with --url: bearer token")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *transport != "stdio" && *transport != "http" {
		return fmt.Errorf("--transport %q: want stdio or http", *transport)
	}
	log, err := s.logger()
	if err != nil {
		return err
	}
	if *url != "" {
		if *transport != "stdio" {
			return fmt.Errorf("--url forwards stdio to a running server; it does not apply to --transport http")
		}
		srv, closeUp, err := mcpserver.Proxy(ctx, *url, *token, version)
		if err != nil {
			return err
		}
		defer closeUp()
		return mcpserver.ServeStdio(ctx, srv, s.tenant, os.Stdin, os.Stdout)
	}
	var tokens *auth.Tokens
	if *transport == "http" {
		if err := checkListen(s.mcpAddr, s.tokensFile); err != nil {
			return err
		}
		if tokens, err = loadTokens(s.tokensFile, log); err != nil {
			return err
		}
	}
	var need []keys.Key
	if *transport == "http" {
		need = append(need, keys.Console)
	}
	c, err := connectServices(ctx, &s, &t, log, need...)
	if err != nil {
		return err
	}
	defer c.Close()
	tc, rt, m := c.temporal, c.runtime, c.metrics
	scfg, err := serviceConfig(&s)
	if err != nil {
		return err
	}
	svc := rt.Service(scfg, tc)
	loc, err := timeZone()
	if err != nil {
		return err
	}
	srv := mcpserver.New(svc, mcpserver.Options{Version: version, Logger: log, Location: loc, Screener: rt.Screener})
	if *transport == "stdio" {
		return mcpserver.ServeStdio(ctx, srv, s.tenant, os.Stdin, os.Stdout)
	}
	ln, err := listen(s.mcpAddr, "the MCP server", "--mcp-addr")
	if err != nil {
		return err
	}
	guard, err := guardFor(ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	ui, err := consoleHandler(svc, rt, tokens, guard, s.tenant, os.Getenv("TEMPORAL_UI_URL"), m, log)
	if err != nil {
		ln.Close()
		return err
	}
	h := serveHTTP(ln, "the MCP server", guard, mcpMux(srv, tokens, s.tenant, nil, opsMux(readiness{temporal: tc, store: rt.Store}, m), ui), log)
	log.Info("MCP server listening", "url", "http://"+h.Addr()+"/mcp", "console", "http://"+h.Addr()+console.Path+"/")
	<-ctx.Done()
	return h.Close()
}

// services are what worker and mcp run on: a Temporal client, the runtime
// with every adapter, and the metrics they report to.
type services struct {
	temporal client.Client
	runtime  *app.Runtime
	metrics  *metrics.Metrics
}

// connectServices dials Temporal and builds the runtime from the
// environment, with the redaction key and the keys need names.
func connectServices(ctx context.Context, s *stackFlags, t *temporalFlags, log *slog.Logger, need ...keys.Key) (*services, error) {
	tc, err := t.dial(s)
	if err != nil {
		return nil, err
	}
	m := metrics.New()
	wc, err := s.workerConfig(log)
	if err != nil {
		tc.Close()
		return nil, err
	}
	wc.Metrics = m
	wc.NeedKeys = need
	rt, err := app.Build(ctx, wc)
	if err != nil {
		tc.Close()
		return nil, err
	}
	return &services{temporal: tc, runtime: rt, metrics: m}, nil
}

// Close closes the runtime, then the Temporal client.
func (c *services) Close() error {
	err := c.runtime.Close()
	c.temporal.Close()
	return err
}
