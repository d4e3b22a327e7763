package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/devserver"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/workflows"
)

// recoveryTarget is how soon after a restart every session ended before a
// kill -9 must be distilled.
const recoveryTarget = 15 * time.Second

// devProcess is `hindsight dev` running as a child process, so that the
// test can kill it with SIGKILL, as a crash would.
type devProcess struct {
	cmd   *exec.Cmd
	mcp   string
	ready chan struct{}
	// lines are what it prints after its banner, until it exits.
	lines chan string
}

// startDevProcess starts `hindsight dev` on dataDir, with env added to
// this process's environment, and returns once its banner says it is
// serving.
func startDevProcess(t *testing.T, dataDir string, temporalPort, mcpPort int, env ...string) *devProcess {
	t.Helper()
	args := []string{"dev", "--data-dir", dataDir, "--temporal-port", strconv.Itoa(temporalPort),
		"--ui-port", "-1", "--clickhouse-http", "", "--mcp-addr", "127.0.0.1:" + strconv.Itoa(mcpPort),
		"--task-queue", "hindsight-crash", "--log-level", "warn"}
	cmd := childCommand(args, append([]string{"CLICKHOUSE_ADDR=", "MILVUS_ADDR=", "OPENAI_BASE_URL="}, env...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start hindsight dev: %v", err)
	}
	p := &devProcess{cmd: cmd, mcp: fmt.Sprintf("http://127.0.0.1:%d/mcp", mcpPort), ready: make(chan struct{}), lines: make(chan string, 4096)}
	t.Cleanup(func() { p.kill() })
	banner := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.HasPrefix(sc.Text(), "Press Ctrl-C") {
				close(p.ready)
				break
			}
		}
		banner <- strings.Join(lines, "\n")
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody reads them
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(p.lines)
	}()
	select {
	case <-p.ready:
	case out := <-banner:
		t.Fatalf("hindsight dev stopped before serving:\n%s", out)
	case <-time.After(2 * time.Minute):
		t.Fatal("hindsight dev did not start within 2 minutes")
	}
	return p
}

// twoFreePorts are two distinct free local TCP ports, for Temporal and MCP:
// both are held until both are picked, so the second cannot be the first.
func twoFreePorts(t *testing.T) (int, int) {
	t.Helper()
	var ports [2]int
	for i := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort(devserver.DefaultHost, "0"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports[0], ports[1]
}

// kill stops the process with SIGKILL: no shutdown code runs.
func (p *devProcess) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// TestCrashRecovery ends sessions, kills `hindsight dev` with SIGKILL while
// their distillation is in flight, restarts it, and requires every session
// distilled, once, within recoveryTarget of the restart. Without heartbeats
// an activity that was running when the worker died is retried only when
// its start-to-close timeout expires, minutes later.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts hindsight dev twice")
	}
	dataDir := t.TempDir()
	temporalPort, mcpPort := twoFreePorts(t)
	p := startDevProcess(t, dataDir, temporalPort, mcpPort)
	session := connect(t, p.mcp)

	_, events := transcriptEvents(t, "01_csv_import_gbk.json")
	const sessions = 12
	var ids []string
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		id := fmt.Sprintf("crash-%02d", i)
		ids = append(ids, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolEnd, Arguments: map[string]any{
				"session_id": id, "task": "read a CSV export with Chinese column names", "outcome": "success", "events": events,
			}})
			switch {
			case err != nil:
				errs <- fmt.Errorf("%s: %v", id, err)
			case res.IsError:
				errs <- fmt.Errorf("%s: %s", id, toolText(res))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("session_end before the crash: %v", err)
	}
	// Every session is acknowledged; their distillations are running.
	session.Close()
	p.kill()

	restart := time.Now()
	p = startDevProcess(t, dataDir, temporalPort, mcpPort)
	t.Logf("serving again %.1fs after the restart", time.Since(restart).Seconds())
	tc, err := client.Dial(client.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", temporalPort), Namespace: devserver.DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	episodes := map[string]string{}
	reported := map[string]map[string]bool{} // memory → the episodes whose merges named it
	for _, id := range ids {
		var res workflows.SessionEndResult
		if err := tc.GetWorkflow(ctx, memory.SessionWorkflowID(memory.DefaultTenant, id), "").Get(ctx, &res); err != nil {
			t.Fatalf("session %s after the restart: %v", id, err)
		}
		for _, m := range res.Memories {
			if reported[m.MemoryID] == nil {
				reported[m.MemoryID] = map[string]bool{}
			}
			reported[m.MemoryID][res.EpisodeID] = true
		}
		if prev, dup := episodes[res.EpisodeID]; dup {
			t.Fatalf("sessions %s and %s share episode %s", prev, id, res.EpisodeID)
		}
		episodes[res.EpisodeID] = id
	}
	took := time.Since(restart)
	t.Logf("every session distilled %.1fs after the restart", took.Seconds())
	if took > recoveryTarget {
		t.Fatalf("recovery took %.1fs after the restart, want at most %s", took.Seconds(), recoveryTarget)
	}

	// Nothing was distilled twice: the episodic store holds one episode
	// per session.
	session = connect(t, p.mcp)
	stats := call[service.Stats](t, session, mcpserver.ToolStats, nil)
	if stats.Episodes != sessions {
		t.Fatalf("after the crash the store holds %d episodes, want %d", stats.Episodes, sessions)
	}
	// Nor merged twice, batched as the merges were: each memory has each
	// session that named it as a source once, and a version per merge
	// that changed it, not more.
	for id, eps := range reported {
		h := history(t, session, id)
		cur := h.Versions[len(h.Versions)-1]
		if len(cur.Sources) != len(eps) || len(h.Versions) > len(eps) {
			t.Errorf("memory %s: %d sources over %d versions, named by %d sessions' merges", id, len(cur.Sources), len(h.Versions), len(eps))
		}
		seen := map[string]bool{}
		for _, src := range cur.Sources {
			if seen[src] || !eps[src] {
				t.Errorf("memory %s: source %s twice or never reported", id, src)
			}
			seen[src] = true
		}
	}
}
