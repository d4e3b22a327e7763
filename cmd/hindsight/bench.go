package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hindsight-memory/hindsight/devserver"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
)

func runBench(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "recall" {
		return runBenchRecall(ctx, args[1:], out)
	}
	if len(args) == 0 || args[0] != "write" {
		return fmt.Errorf("usage: hindsight bench write|recall [flags] (see hindsight bench write -h, hindsight bench recall -h)")
	}
	fs := newFlags("bench write", "[flags]", `
Measure the write path under load, as agents use it: generated sessions,
each distinct (a stated preference and a failure fixed by a retry), ended
over MCP with wait=true by several clients at once, then memory_store calls
one at a time. It prints sessions/s and the p50, p95 and p99 of session end
→ recallable, memory_store calls/s and latency, and checks at the end that
nothing was lost or duplicated: one episode per session, and every memory
a session reported stored once.

Without --url it starts its own embedded stack (a fresh one per row, in a
temporary directory); with --url it drives a running Hindsight, whose
tokens file --tokens names when there are several tenants. Without
--clients and --tenants it runs three rows: 1 client and 1 tenant, 16
clients and 1 tenant, 16 clients and 8 tenants.`)
	sessions := fs.Int("sessions", 200, "sessions ended per row")
	clients := fs.Int("clients", 0, "clients ending sessions at once (0: the three default rows)")
	tenants := fs.Int("tenants", 0, "tenants the sessions are spread over (0: the three default rows)")
	stores := fs.Int("stores", 200, "memory_store calls, one at a time, after the last row (0: none)")
	url := fs.String("url", "", "the MCP endpoint of a running Hindsight (default: start an embedded stack)")
	tokens := fs.String("tokens", "", "with --url and several tenants: the server's tokens file (\"tenant token\" lines)")
	label := fs.String("label", "", "a name for this run in the output (e.g. the commit)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	rows := []benchRow{{Clients: 1, Tenants: 1}, {Clients: 16, Tenants: 1}, {Clients: 16, Tenants: 8}}
	if *clients > 0 || *tenants > 0 {
		rows = []benchRow{{Clients: max(*clients, 1), Tenants: max(*tenants, 1)}}
	}
	if *sessions < 1 {
		return fmt.Errorf("--sessions must be at least 1")
	}
	// The rows' data directories go when the run ends, not each after its
	// row: deleting a store's thousands of files slows creating files for
	// minutes after on some file systems (ext4 without a journal skips
	// every inode freed in the last one to six minutes), and that would
	// fall on the next row.
	work, err := os.MkdirTemp("", "hindsight-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var results []benchResult
	for i, row := range rows {
		row.Sessions, row.Stores = *sessions, 0
		if i == len(rows)-1 {
			row.Stores = *stores
		}
		target, done, err := benchTarget(ctx, *url, *tokens, row.Tenants, work)
		if err != nil {
			return err
		}
		res, err := row.run(ctx, target, fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano()))
		done()
		if err != nil {
			return fmt.Errorf("%d clients, %d tenants: %w", row.Clients, row.Tenants, err)
		}
		res.Label = *label
		results = append(results, res)
	}
	if *asJSON {
		return printJSON(out, results)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCLIENTS\tTENANTS\tSESSIONS\tSESSIONS/S\tP50\tP95\tP99\tSTORES/S\tSTORE P50\tCHECK")
	for _, r := range results {
		st := "-\t-"
		if r.Stores > 0 {
			st = fmt.Sprintf("%.1f\t%s", r.StoresPerSecond, ms(r.StoreP50))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\n", cmp.Or(r.Label, "-"), r.Clients, r.Tenants, r.Sessions,
			r.SessionsPerSecond, secs(r.P50), secs(r.P95), secs(r.P99), st, r.Check)
	}
	return tw.Flush()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.0fms", float64(d.Microseconds())/1000) }

// benchRow is one load: how many sessions, ended by how many clients at
// once, over how many tenants; then memory_store calls one at a time.
type benchRow struct {
	Sessions, Clients, Tenants, Stores int
}

// benchResult is what a row measured.
type benchResult struct {
	Label             string        `json:"label,omitempty"`
	Sessions          int           `json:"sessions"`
	Clients           int           `json:"clients"`
	Tenants           int           `json:"tenants"`
	SessionsPerSecond float64       `json:"sessions_per_second"`
	P50               time.Duration `json:"p50_ns"`
	P95               time.Duration `json:"p95_ns"`
	P99               time.Duration `json:"p99_ns"`
	Stores            int           `json:"stores"`
	StoresPerSecond   float64       `json:"stores_per_second,omitempty"`
	StoreP50          time.Duration `json:"store_p50_ns,omitempty"`
	StoreP99          time.Duration `json:"store_p99_ns,omitempty"`
	Check             string        `json:"check"`
}

// benchEndpoint is where a row's load goes: the MCP URL and a token per
// tenant ("" without authentication).
type benchEndpoint struct {
	url    string
	tokens []string // one per tenant
	names  []string // the tenants
}

// benchTarget returns the endpoint for a row: a fresh embedded stack (in
// a new directory under work, which it leaves), or the running one at url;
// done stops what it started.
func benchTarget(ctx context.Context, url, tokensFile string, tenants int, work string) (benchEndpoint, func(), error) {
	if url != "" {
		ep := benchEndpoint{url: url}
		if tenants == 1 && tokensFile == "" {
			ep.tokens, ep.names = []string{os.Getenv("HINDSIGHT_TOKEN")}, []string{"(server's)"}
			return ep, func() {}, nil
		}
		if tokensFile == "" {
			return ep, nil, fmt.Errorf("%d tenants on a running server: give its tokens file with --tokens", tenants)
		}
		names, toks, err := readTokenLines(tokensFile)
		if err != nil {
			return ep, nil, err
		}
		if len(names) < tenants {
			return ep, nil, fmt.Errorf("%s has %d tenants; the row needs %d", tokensFile, len(names), tenants)
		}
		ep.names, ep.tokens = names[:tenants], toks[:tenants]
		return ep, func() {}, nil
	}
	dir, err := os.MkdirTemp(work, "row-")
	if err != nil {
		return benchEndpoint{}, nil, err
	}
	ep := benchEndpoint{}
	var lines []string
	for i := range tenants {
		name, tok := fmt.Sprintf("bench-%d", i), fmt.Sprintf("bench-token-%d-%d", i, time.Now().UnixNano())
		ep.names, ep.tokens = append(ep.names, name), append(ep.tokens, tok)
		lines = append(lines, name+" "+tok)
	}
	tokensPath := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokensPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return ep, nil, err
	}
	port, err := devserver.FreePort()
	if err != nil {
		return ep, nil, err
	}
	for _, env := range []string{"CLICKHOUSE_ADDR", "MILVUS_ADDR", "OPENAI_BASE_URL"} {
		os.Unsetenv(env)
	}
	st, err := startDev(ctx, devOptions{
		stack: stackFlags{dataDir: filepath.Join(dir, "data"), tenant: memory.DefaultTenant, taskQueue: "hindsight-bench",
			mcpAddr: "127.0.0.1:0", tokensFile: tokensPath, logLevel: "error"},
		temporalPort: port, uiPort: devserver.UIDisabled, log: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		os.RemoveAll(dir)
		return ep, nil, fmt.Errorf("start the embedded stack: %w", err)
	}
	ep.url = st.mcpURL()
	return ep, func() { st.Close() }, nil
}

// readTokenLines reads a tokens file: "tenant token" per line.
func readTokenLines(path string) (names, tokens []string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		f := strings.Fields(line)
		if (len(f) == 2 || len(f) == 3) && !strings.HasPrefix(f[0], "#") {
			names, tokens = append(names, f[0]), append(tokens, f[1])
		}
	}
	return names, tokens, nil
}

// benchClient is one MCP session for one tenant.
type benchClient struct{ session *mcp.ClientSession }

func dialBench(ctx context.Context, url, token string) (*benchClient, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "hindsight-bench", Version: version}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: mcpserver.BearerClient(token), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	return &benchClient{session: s}, nil
}

func (c *benchClient) call(ctx context.Context, tool string, args map[string]any, out any) error {
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	_, err = decodeResult(tool, res, out)
	return err
}

// run ends the row's sessions and makes its memory_store calls, then
// checks the stores hold what the replies said.
func (row benchRow) run(ctx context.Context, ep benchEndpoint, prefix string) (benchResult, error) {
	res := benchResult{Sessions: row.Sessions, Clients: row.Clients, Tenants: row.Tenants, Stores: row.Stores}
	conns := make([][]*benchClient, row.Tenants) // per tenant, per client
	for t := range row.Tenants {
		for range row.Clients {
			c, err := dialBench(ctx, ep.url, ep.tokens[t])
			if err != nil {
				return res, err
			}
			defer c.session.Close()
			conns[t] = append(conns[t], c)
		}
	}
	var (
		mu       sync.Mutex
		took     []time.Duration
		reported = make([]map[string]bool, row.Tenants) // memory IDs the replies named, per tenant
		episodes = make([]int, row.Tenants)
		firstErr error
	)
	for t := range reported {
		reported[t] = map[string]bool{}
	}
	next := make(chan int, row.Sessions)
	for i := range row.Sessions {
		next <- i
	}
	close(next)
	start := time.Now()
	var wg sync.WaitGroup
	for k := range row.Clients {
		wg.Go(func() {
			for i := range next {
				t := i % row.Tenants
				args := benchSession(prefix, i)
				t0 := time.Now()
				var out mcpserver.EndOutput
				err := conns[t][k].call(ctx, mcpserver.ToolEnd, args, &out)
				d := time.Since(t0)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("session %d: %w", i, err)
				}
				took = append(took, d)
				if out.EpisodeID != "" {
					episodes[t]++
				}
				for _, m := range out.Memories {
					if m.MemoryID != "" {
						reported[t][m.MemoryID] = true
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	wall := time.Since(start)
	res.SessionsPerSecond = float64(row.Sessions) / wall.Seconds()
	res.P50, res.P95, res.P99 = quantile(took, 0.50), quantile(took, 0.95), quantile(took, 0.99)

	if row.Stores > 0 {
		c := conns[0][0]
		var stored []time.Duration
		start := time.Now()
		for i := range row.Stores {
			t0 := time.Now()
			var out mcpserver.DecisionOutput
			if err := c.call(ctx, mcpserver.ToolStore, map[string]any{"kind": "fact",
				"content": fmt.Sprintf("Build agent %s-%d runs its nightly job at %02d:%02d UTC.", prefix, i, i%24, (i*7)%60)}, &out); err != nil {
				return res, fmt.Errorf("memory_store %d: %w", i, err)
			}
			stored = append(stored, time.Since(t0))
			if out.MemoryID != "" {
				reported[0][out.MemoryID] = true
			}
		}
		res.StoresPerSecond = float64(row.Stores) / time.Since(start).Seconds()
		res.StoreP50, res.StoreP99 = quantile(stored, 0.50), quantile(stored, 0.99)
	}
	check, err := row.check(ctx, conns, episodes, reported)
	if err != nil {
		return res, err
	}
	res.Check = check
	return res, nil
}

// check verifies, per tenant, one episode per session ended and that every
// memory a reply named is stored, once: no two live memories hold one text.
func (row benchRow) check(ctx context.Context, conns [][]*benchClient, episodes []int, reported []map[string]bool) (string, error) {
	for t := range row.Tenants {
		want := row.Sessions / row.Tenants
		if t < row.Sessions%row.Tenants {
			want++
		}
		var stats service.Stats
		if err := conns[t][0].call(ctx, mcpserver.ToolStats, nil, &stats); err != nil {
			return "", err
		}
		if episodes[t] != want {
			return fmt.Sprintf("FAILED: tenant %d: %d sessions distilled, want %d", t, episodes[t], want), nil
		}
		if stats.Episodes < want {
			return fmt.Sprintf("FAILED: tenant %d holds %d episodes, want at least %d", t, stats.Episodes, want), nil
		}
		live := map[string][]string{}
		for _, id := range slices.Sorted(maps.Keys(reported[t])) {
			var h service.History
			if err := conns[t][0].call(ctx, mcpserver.ToolHistory, map[string]any{"memory_id": id}, &h); err != nil {
				return fmt.Sprintf("FAILED: tenant %d: memory %s that a reply named is not stored: %v", t, id, err), nil
			}
			if n := len(h.Versions); n > 0 && h.Versions[n-1].Status == memory.StatusLive {
				cur := h.Versions[n-1]
				live[string(cur.Kind)+"\x00"+cur.Content] = append(live[string(cur.Kind)+"\x00"+cur.Content], id)
			}
		}
		for text, ids := range live {
			if len(ids) > 1 {
				return fmt.Sprintf("FAILED: tenant %d: %d live memories hold %q", t, len(ids), strings.SplitN(text, "\x00", 2)[1]), nil
			}
		}
	}
	return "ok", nil
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// benchTools are the tools, failures and fixes the generated sessions
// vary over.
var benchTools = []struct{ tool, task, bad, err, good string }{
	{"psql", "load the %s export into the reporting database", "COPY orders FROM '%s.csv' CSV", "ERROR: invalid byte sequence for encoding \"UTF8\": 0xb5", "COPY orders FROM '%s.csv' WITH (FORMAT csv, ENCODING 'GBK')"},
	{"kubectl", "roll out the %s service to staging", "kubectl apply -f %s.yaml", "error: the namespace \"staging\" is forbidden for this service account", "kubectl apply -n staging-apps -f %s.yaml"},
	{"terraform", "add a bucket for the %s backups", "terraform apply -target=aws_s3_bucket.%s", "Error: state lock is held by another run (ID 4f2a)", "terraform apply -lock-timeout=5m -target=aws_s3_bucket.%s"},
	{"npm", "build the %s dashboard bundle", "npm run build --workspace %s", "Error: Cannot find module 'esbuild-linux-64'", "npm ci --include=optional && npm run build --workspace %s"},
	{"pytest", "run the %s test suite", "pytest tests/%s", "ModuleNotFoundError: No module named 'freezegun'", "pip install -r requirements-dev.txt && pytest tests/%s"},
	{"docker", "build the %s image", "docker build -t %s .", "failed to solve: failed to read dockerfile: open Dockerfile: no such file or directory", "docker build -f deploy/Dockerfile -t %s ."},
	{"helm", "upgrade the %s release", "helm upgrade %s ./chart", "Error: UPGRADE FAILED: timed out waiting for the condition", "helm upgrade %s ./chart --wait --timeout 10m"},
	{"go", "run the %s benchmarks", "go test -bench . ./%s", "cannot find module providing package ./%s", "go test -bench . ./internal/%s"},
}

var benchPreferences = []string{
	"always write the summary in bullet points",
	"always give timestamps in UTC",
	"never push directly to the main branch",
	"always tag the %s owner in the ticket",
	"always keep the %s changelog up to date",
	"write commit messages in the imperative mood",
	"always attach the query plan when a %s query is slow",
	"use metric units in every %s report",
}

// benchSession is the i-th generated session: distinct names, a stated
// preference and a failure fixed by a retry.
func benchSession(prefix string, i int) map[string]any {
	t := benchTools[i%len(benchTools)]
	name := fmt.Sprintf("%s-%d", strings.ReplaceAll([]string{"billing", "search", "ledger", "catalog", "payments", "notify", "geo", "auth"}[i/len(benchTools)%8], " ", ""), i)
	pref := benchPreferences[(i/3)%len(benchPreferences)]
	if strings.Contains(pref, "%s") {
		pref = fmt.Sprintf(pref, name)
	}
	task := fmt.Sprintf(t.task, name)
	events := []any{
		map[string]any{"role": "user", "content": fmt.Sprintf("Please %s. From now on, %s.", task, pref)},
		map[string]any{"role": "assistant", "content": "On it: I'll run " + t.tool + " first."},
		map[string]any{"role": "tool", "tool_name": t.tool, "tool_args": map[string]any{"cmd": fmt.Sprintf(t.bad, name)}, "error": strings.ReplaceAll(t.err, "%s", name)},
		map[string]any{"role": "assistant", "content": "That failed; retrying with the right options."},
		map[string]any{"role": "tool", "tool_name": t.tool, "tool_args": map[string]any{"cmd": fmt.Sprintf(t.good, name)}, "tool_result": "done: " + name + " ok"},
		map[string]any{"role": "user", "content": "Great, that worked, thanks."},
	}
	return map[string]any{"session_id": fmt.Sprintf("%s-%04d", prefix, i), "task": task, "outcome": "success",
		"events": events, "wait": true}
}
