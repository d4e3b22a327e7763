package devserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

const (
	taskQueue       = "devserver-test"
	tenantAttribute = "HindsightTenant"
	// waitFor bounds every wait for an eventually true condition.
	waitFor = 20 * time.Second
)

var tenantKey = temporal.NewSearchAttributeKeyKeyword(tenantAttribute)

// Greet is the trivial workflow the tests run.
func Greet(_ workflow.Context, name string) (string, error) {
	return "hello " + name, nil
}

// Counter counts the updates it accepts and ends on the "done" signal; it is
// the shape of a workflow driven by Update-with-Start.
func Counter(ctx workflow.Context) (int, error) {
	n := 0
	if err := workflow.SetUpdateHandler(ctx, "add", func(_ workflow.Context, by int) (int, error) {
		n += by
		return n, nil
	}); err != nil {
		return 0, err
	}
	workflow.GetSignalChannel(ctx, "done").Receive(ctx, nil)
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return 0, err
	}
	return n, nil
}

// logBuffer collects what the server logs, to be shown if the test fails.
// It never calls t.Log itself: the server may log after the test returns.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePorts(t *testing.T) (frontend, ui int) {
	t.Helper()
	frontend, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// Two calls may return the same port if nothing holds the first one.
	for ui = frontend; ui == frontend; {
		if ui, err = FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	return frontend, ui
}

// testConfig is a Config for dir on free ports, logging into a buffer that
// is printed if t fails.
func testConfig(t *testing.T, dir string) Config {
	t.Helper()
	frontend, ui := freePorts(t)
	logs := &logBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server logs:\n%s", logs)
		}
	})
	return Config{
		DataDir:          dir,
		FrontendPort:     frontend,
		UIPort:           ui,
		SearchAttributes: map[string]enums.IndexedValueType{tenantAttribute: enums.INDEXED_VALUE_TYPE_KEYWORD},
		Logger:           slog.New(slog.NewTextHandler(logs, nil)),
	}
}

func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	srv, err := Start(ctx, cfg)
	// A free port can be taken again before Start binds it, by another
	// test's listener or an outgoing connection; Start says so before it
	// starts anything, so other ports are tried.
	for attempt := 1; errors.Is(err, ErrPortInUse) && attempt < 5; attempt++ {
		frontend, ui := freePorts(t)
		cfg.FrontendPort = frontend
		if cfg.UIPort != UIDisabled {
			cfg.UIPort = ui
		}
		srv, err = Start(ctx, cfg)
	}
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return srv
}

func dial(t *testing.T, srv *Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort: srv.FrontendAddr(),
		Logger:   sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", srv.FrontendAddr(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// startWorker runs Greet and Counter on taskQueue until the test ends.
func startWorker(t *testing.T, c client.Client) {
	t.Helper()
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(Greet)
	w.RegisterWorkflow(Counter)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	t.Cleanup(w.Stop)
}

// runGreet runs Greet to completion as workflow id, tagged with tenant.
func runGreet(t *testing.T, c client.Client, id, tenant string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    id,
		TaskQueue:             taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(tenantKey.ValueSet(tenant)),
	}, Greet, "hindsight")
	if err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	if got != "hello hindsight" {
		t.Fatalf("%s returned %q, want %q", id, got, "hello hindsight")
	}
}

// eventually calls check until it returns nil, failing t with check's last
// error if waitFor passes first.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, waitFor, err)
		}
		<-tick.C
	}
}

func httpGet(url string) (status int, contentType string, body []byte, err error) {
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), body, err
}

// listedIDs returns the workflow IDs that the query matches in the default
// namespace, as the Web UI's HTTP API reports them.
func uiWorkflowIDs(uiAddr, query string) ([]string, error) {
	url := uiAddr + "/api/v1/namespaces/" + DefaultNamespace + "/workflows"
	if query != "" {
		url += "?query=" + strings.ReplaceAll(query, " ", "%20")
	}
	status, _, body, err := httpGet(url)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", url, status, body)
	}
	var list struct {
		Executions []struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
		} `json:"executions"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode %s: %w", body, err)
	}
	ids := make([]string, len(list.Executions))
	for i, e := range list.Executions {
		ids[i] = e.Execution.WorkflowID
	}
	return ids, nil
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestWorkflowRunsAndShowsInUI(t *testing.T) {
	srv := startServer(t, testConfig(t, t.TempDir()))
	if want := "http://127.0.0.1:"; !strings.HasPrefix(srv.UIAddr(), want) {
		t.Fatalf("UIAddr() = %q, want prefix %q", srv.UIAddr(), want)
	}
	c := dial(t, srv)
	startWorker(t, c)

	runGreet(t, c, "greet-ui", "t1")

	// Visibility is written asynchronously after the workflow closes.
	eventually(t, "UI lists the workflow", func() error {
		ids, err := uiWorkflowIDs(srv.UIAddr(), "")
		if err != nil {
			return err
		}
		if !contains(ids, "greet-ui") {
			return fmt.Errorf("listed %v, want greet-ui among them", ids)
		}
		return nil
	})

	status, ctype, body, err := httpGet(srv.UIAddr() + "/")
	if err != nil {
		t.Fatalf("GET /: %v", err)
	}
	if status != http.StatusOK || !strings.HasPrefix(ctype, "text/html") ||
		!bytes.Contains(bytes.ToLower(body), []byte("<html")) {
		t.Fatalf("GET / = %d %q, %d bytes starting %.80q; want 200 with an HTML page", status, ctype, len(body), body)
	}
}

func TestRestartKeepsHistoryNamespaceAndSearchAttributes(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Retention = 72 * time.Hour

	first, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("first Start: %v", err)
	}
	c, err := client.Dial(client.Options{
		HostPort: first.FrontendAddr(),
		Logger:   sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(Greet)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	runGreet(t, c, "greet-restart", "t-restart")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	before, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	c.Close()
	if err := first.Stop(); err != nil {
		t.Fatalf("first Stop: %v", err)
	}
	if err := first.Stop(); err != nil {
		t.Fatalf("second call to Stop: %v", err)
	}

	// Same ports, which also shows that Stop let go of them. No search
	// attributes this time: the ones found must come from the database.
	// A new retention must be applied to the existing namespace.
	cfg.SearchAttributes = nil
	cfg.Retention = 96 * time.Hour
	srv := startServer(t, cfg)
	c = dial(t, srv)

	desc, err := c.DescribeWorkflowExecution(ctx, "greet-restart", "")
	if err != nil {
		t.Fatalf("describe workflow after restart: %v", err)
	}
	if got := desc.GetWorkflowExecutionInfo().GetStatus(); got != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("workflow status after restart = %v, want COMPLETED", got)
	}
	var last enums.EventType
	events := 0
	for it := c.GetWorkflowHistory(ctx, "greet-restart", "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); it.HasNext(); {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("read history after restart: %v", err)
		}
		last = ev.GetEventType()
		events++
	}
	if last != enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
		t.Fatalf("history after restart has %d events ending in %v, want WorkflowExecutionCompleted", events, last)
	}

	after, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetNamespaceInfo().GetId() != before.GetNamespaceInfo().GetId() {
		t.Fatalf("namespace ID changed across restart: %s -> %s", before.GetNamespaceInfo().GetId(), after.GetNamespaceInfo().GetId())
	}
	if got := after.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(); got != 96*time.Hour {
		t.Fatalf("retention after restart with a new Retention = %v, want 96h", got)
	}

	sas, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	if got := sas.GetCustomAttributes()[tenantAttribute]; got != enums.INDEXED_VALUE_TYPE_KEYWORD {
		t.Fatalf("search attribute %s after restart = %v, want KEYWORD", tenantAttribute, got)
	}
	// The value written before the restart is still queryable.
	eventually(t, "query by tenant after restart", func() error {
		ids, err := uiWorkflowIDs(srv.UIAddr(), tenantAttribute+`="t-restart"`)
		if err != nil {
			return err
		}
		if len(ids) != 1 || ids[0] != "greet-restart" {
			return fmt.Errorf("query matched %v, want [greet-restart]", ids)
		}
		return nil
	})

	// A search attribute cannot change type; asking for that fails and
	// says what exists.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	cfg.SearchAttributes = map[string]enums.IndexedValueType{tenantAttribute: enums.INDEXED_VALUE_TYPE_TEXT}
	_, err = Start(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "exists in namespace \"default\" as Keyword, not Text") {
		t.Fatalf("Start with %s retyped to TEXT: err = %v, want an error naming both types", tenantAttribute, err)
	}
}

func TestSecondServerOnSameDataDirFails(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, testConfig(t, dir))

	_, err := Start(context.Background(), testConfig(t, dir))
	if !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second Start on the same DataDir: err = %v, want ErrDataDirInUse", err)
	}
	for _, want := range []string{dir, "process " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}

	// The failed attempt left the running server alone.
	c := dial(t, srv)
	startWorker(t, c)
	runGreet(t, c, "greet-after-refused-start", "t1")
}

func TestPortInUseFailsClearlyAndReleasesDataDir(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	addr := taken.Addr().String()
	dir := t.TempDir()

	cases := []struct {
		name string
		set  func(*Config)
		flag string
	}{
		{"frontend", func(c *Config) { c.FrontendPort = port }, "--temporal-port"},
		{"ui", func(c *Config) { c.UIPort = port }, "--ui-port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, dir)
			tc.set(&cfg)
			_, err := Start(context.Background(), cfg)
			if !errors.Is(err, ErrPortInUse) {
				t.Fatalf("Start with %s port taken: err = %v, want ErrPortInUse", tc.name, err)
			}
			for _, want := range []string{addr, tc.flag} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}

	// Neither failed Start kept the data directory locked.
	startServer(t, testConfig(t, dir))
}

func TestFeaturesHindsightNeeds(t *testing.T) {
	srv := startServer(t, testConfig(t, t.TempDir()))
	c := dial(t, srv)
	startWorker(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()

	t.Run("update with start", func(t *testing.T) {
		for i, want := range []int{2, 5} { // the first call starts, the second joins
			start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
				ID:                       "counter",
				TaskQueue:                taskQueue,
				WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			}, Counter)
			h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
				StartWorkflowOperation: start,
				UpdateOptions: client.UpdateWorkflowOptions{
					UpdateName:   "add",
					Args:         []any{[]int{2, 3}[i]},
					WaitForStage: client.WorkflowUpdateStageCompleted,
				},
			})
			if err != nil {
				t.Fatalf("update-with-start #%d: %v", i+1, err)
			}
			var got int
			if err := h.Get(ctx, &got); err != nil {
				t.Fatalf("update #%d result: %v", i+1, err)
			}
			if got != want {
				t.Fatalf("update #%d returned %d, want %d", i+1, got, want)
			}
		}
		if err := c.SignalWorkflow(ctx, "counter", "", "done", nil); err != nil {
			t.Fatal(err)
		}
		var total int
		if err := c.GetWorkflow(ctx, "counter", "").Get(ctx, &total); err != nil {
			t.Fatal(err)
		}
		if total != 5 {
			t.Fatalf("counter ended at %d, want 5", total)
		}
	})

	t.Run("search attribute registered at start is usable at once", func(t *testing.T) {
		runGreet(t, c, "greet-tenant-a", "tenant-a")
		runGreet(t, c, "greet-tenant-b", "tenant-b")
		eventually(t, "list by tenant", func() error {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Query: tenantAttribute + ` = "tenant-a"`,
			})
			if err != nil {
				return err
			}
			var ids []string
			for _, e := range resp.GetExecutions() {
				ids = append(ids, e.GetExecution().GetWorkflowId())
			}
			if len(ids) != 1 || ids[0] != "greet-tenant-a" {
				return fmt.Errorf("query matched %v, want [greet-tenant-a]", ids)
			}
			return nil
		})
	})

	t.Run("schedules fire", func(t *testing.T) {
		h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID:   "greet-schedule",
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 7 * 24 * time.Hour}}},
			Action: &client.ScheduleWorkflowAction{
				ID:        "greet-scheduled",
				Workflow:  Greet,
				Args:      []any{"hindsight"},
				TaskQueue: taskQueue,
			},
			TriggerImmediately: true,
		})
		if err != nil {
			t.Fatalf("create schedule: %v", err)
		}
		t.Cleanup(func() { _ = h.Delete(context.Background()) })
		eventually(t, "scheduled run recorded", func() error {
			d, err := h.Describe(ctx)
			if err != nil {
				return err
			}
			if d.Info.NumActions < 1 {
				return errors.New("schedule has taken no action yet")
			}
			return nil
		})
	})
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" means valid
	}{
		{"defaults", Config{DataDir: "d"}, ""},
		{"no data dir", Config{}, "DataDir is required"},
		{"host name", Config{DataDir: "d", Host: "localhost"}, "must be an IP address"},
		{"negative frontend port", Config{DataDir: "d", FrontendPort: -5}, "FrontendPort -5"},
		{"ui port out of range", Config{DataDir: "d", UIPort: 70000}, "UIPort 70000"},
		{"ui disabled", Config{DataDir: "d", UIPort: UIDisabled}, ""},
		{"same ports", Config{DataDir: "d", FrontendPort: 9000, UIPort: 9000}, "different ports"},
		{"short retention", Config{DataDir: "d", Retention: time.Hour}, "minimum of one day"},
		{"untyped search attribute", Config{DataDir: "d", SearchAttributes: map[string]enums.IndexedValueType{"X": 0}}, `"X" has no valid type`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.withDefaults().validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	d := Config{DataDir: "d"}.withDefaults()
	if d.Host != DefaultHost || d.FrontendPort != DefaultFrontendPort || d.UIPort != DefaultUIPort ||
		d.Namespace != DefaultNamespace || d.Retention != DefaultRetention || d.Logger == nil {
		t.Fatalf("withDefaults() = %+v, want every default set", d)
	}
}

func TestServerLoggerFiltersAndTurnsFatalIntoError(t *testing.T) {
	var buf logBuffer
	level := new(slog.LevelVar)
	level.Set(slog.LevelWarn)
	l := serverLogger{slog: slog.New(minLevelHandler{next: slog.NewTextHandler(&buf, nil), min: level})}

	l.Info("chatty")
	l.Warn("worth seeing")
	level.Set(quiet) // as Stop does
	l.Error("shutdown noise")
	out := buf.String()
	if strings.Contains(out, "chatty") || strings.Contains(out, "shutdown noise") || !strings.Contains(out, "worth seeing") {
		t.Fatalf("logged %q; want only the warning logged before quieting", out)
	}

	defer func() {
		fe, ok := recover().(fatalError)
		if !ok || !strings.Contains(fe.Error(), "cannot listen") {
			t.Fatalf("Fatal panicked with %#v, want a fatalError carrying the message", fe)
		}
	}()
	l.Fatal("cannot listen")
}

func TestReservePortsPicksDistinctFreePorts(t *testing.T) {
	cfg := testConfig(t, t.TempDir()).withDefaults()
	p, err := reservePorts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := []int{cfg.FrontendPort, cfg.UIPort, p.frontendHTTP, p.history, p.matching, p.worker}
	seen := map[int]bool{}
	for _, port := range all {
		if port == 0 || seen[port] {
			t.Fatalf("ports %v are not distinct and non-zero", all)
		}
		seen[port] = true
		// reservePorts released them all again.
		l, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d still bound after reservePorts: %v", port, err)
		}
		l.Close()
	}
}
