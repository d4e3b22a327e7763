package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hindsight-memory/hindsight/devserver"
	"github.com/hindsight-memory/hindsight/eval/scenarios"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/workflows"
)

func evalScenarios(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("eval scenarios", "--data FILE [flags]", `
Measure the write path and recall together on a scenario corpus (the format
is in the bench's scenarios/FORMAT.md): each scenario runs in a fresh tenant
of an embedded stack started for the run (the Temporal server, the
workflows and activities, chDB, the local vector index and the service
layer, exactly as hindsight dev runs them). Its sessions are ended in order,
each waiting until its memories are recallable; then the final memory state
and the recall probes are checked. Prints, per tag, per language and
overall: expected memories distilled, sessions within max_memories, final
state checks, probe top1/top3/forbid/none, and every check together; then
every failure with what was found instead.
With OPENAI_BASE_URL set, the configured models do the work.`, "OPENAI_BASE_URL", "OPENAI_API_KEY", "HINDSIGHT_LLM_MODEL", "HINDSIGHT_EMBED_MODEL")
	data := fs.String("data", "", "the scenario corpus (e.g. ../shared/bench/scenarios/dev.json)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	only := fs.String("only", "", "run only these scenarios (IDs, comma-separated)")
	parallel := fs.Int("parallel", 3, "scenarios run at once (each in its own tenant)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		fs.Usage()
		return errUsage
	}
	corpus, err := scenarios.Load(*data)
	if err != nil {
		return err
	}
	var ids []string
	for _, id := range strings.Split(*only, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	dir, err := os.MkdirTemp("", "hindsight-eval-scenarios-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := startEvalStack(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := scenarios.Run(ctx, serviceSystem{st.service, st.runtime.Store}, corpus, scenarios.Options{
		Only: ids, Parallel: *parallel, Corpus: *data,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return r.WriteJSON(out)
	}
	return r.WriteText(out)
}

// startEvalStack starts the embedded stack of hindsight dev in dir, on
// free loopback ports, without the Temporal UI or the ClickHouse HTTP
// endpoint, logging only warnings.
func startEvalStack(ctx context.Context, dir string) (*devStack, error) {
	port, err := devserver.FreePort()
	if err != nil {
		return nil, err
	}
	s := stackFlags{dataDir: dir, tenant: memory.DefaultTenant, taskQueue: workflows.TaskQueue + "-eval",
		mcpAddr: "127.0.0.1:0", logLevel: "warn"}
	log, err := s.logger()
	if err != nil {
		return nil, err
	}
	return startDev(ctx, devOptions{stack: s, temporalPort: port, uiPort: devserver.UIDisabled, log: log})
}

// serviceSystem is the embedded stack as a scenario lives through it: the
// service layer the MCP tools call, and the system of record for the
// final state.
type serviceSystem struct {
	svc   *service.Service
	store memory.EpisodicStore
}

func (s serviceSystem) EndSession(ctx context.Context, tenant string, t memory.Transcript) ([]memory.Memory, error) {
	resp, err := s.svc.EndSession(ctx, tenant, service.EndRequest{
		SessionID: t.SessionID, Events: t.Events, Task: t.Task, Outcome: t.Outcome, Agent: t.Agent,
		UserID: t.UserID, StartedAt: t.StartedAt, EndedAt: t.EndedAt, Wait: true,
	})
	if err != nil {
		return nil, err
	}
	if resp.Result == nil {
		return nil, fmt.Errorf("session %s: no result (status %s)", t.SessionID, resp.Status)
	}
	var out []memory.Memory
	seen := map[string]bool{}
	for _, m := range resp.Result.Memories {
		if m.MemoryID == "" || seen[m.MemoryID] {
			continue
		}
		seen[m.MemoryID] = true
		mem, err := s.store.Memory(ctx, tenant, m.MemoryID)
		if err != nil {
			return nil, fmt.Errorf("memory %s of session %s: %w", m.MemoryID, t.SessionID, err)
		}
		out = append(out, mem)
	}
	return out, nil
}

func (s serviceSystem) Memories(ctx context.Context, tenant string) ([]memory.Memory, error) {
	return s.store.Memories(ctx, memory.MemoryFilter{Tenant: tenant})
}

func (s serviceSystem) Recall(ctx context.Context, tenant string, p scenarios.Probe) ([]memory.Memory, error) {
	resp, err := s.svc.Recall(ctx, memory.Query{Tenant: tenant, Text: p.Query, UserID: p.UserID})
	if err != nil {
		return nil, err
	}
	out := make([]memory.Memory, len(resp.Results))
	for i, r := range resp.Results {
		out[i] = r.Memory
	}
	return out, nil
}
