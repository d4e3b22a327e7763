package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/eval/locomo"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/merge"
	"github.com/hindsight-memory/hindsight/runes"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/milvus"
)

// openClickHouse opens the episodic log for an operator command: the
// server at CLICKHOUSE_ADDR, else the embedded engine on the data
// directory.
func openClickHouse(ctx context.Context, s *stackFlags, migrate bool) (*clickhouse.Store, func() error, error) {
	log, err := s.logger()
	if err != nil {
		return nil, nil, err
	}
	wc, err := s.workerConfig(log)
	if err != nil {
		return nil, nil, err
	}
	return app.OpenEpisodicLog(ctx, wc, migrate)
}

func runMigrate(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("migrate", "[flags]", `
Apply the ClickHouse schema migrations (schema/clickhouse) to the server at
CLICKHOUSE_ADDR, or to the embedded engine in --data-dir. Migrations are
recorded and applying them again is a no-op; the service also applies them
at start. With CLICKHOUSE_CLUSTER they run ON CLUSTER, with Replicated
engines.`, "CLICKHOUSE_ADDR", "CLICKHOUSE_DATABASE", "CLICKHOUSE_USER", "CLICKHOUSE_PASSWORD", "CLICKHOUSE_CLUSTER", "HINDSIGHT_DATA_DIR", "HINDSIGHT_CHDB_LIB")
	var s stackFlags
	s.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	st, closeFn, err := openClickHouse(ctx, &s, true)
	if err != nil {
		return err
	}
	defer closeFn()
	applied, err := st.AppliedMigrations(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "database %s is at migration %d (%d applied)\n", st.Config().Database, len(applied), len(applied))
	return nil
}

func runSQL(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("sql", `[flags] "SELECT …"`, `
Run one read-only query (SELECT, SHOW, DESCRIBE, EXPLAIN) over the episodic
log, for operators. It reaches, in order: the ClickHouse server at
CLICKHOUSE_ADDR; a running "hindsight dev" through its loopback ClickHouse
HTTP interface (--dev-addr); the embedded engine in --data-dir when no dev
server owns it. The server enforces read-only; it is not scoped to a tenant.

Tables: events, episodes, episodes_archive, memory_versions, memory_usage,
merge_decisions (see README).`, "CLICKHOUSE_ADDR", "CLICKHOUSE_DATABASE", "CLICKHOUSE_USER", "CLICKHOUSE_PASSWORD", "HINDSIGHT_DATA_DIR")
	var s stackFlags
	s.register(fs)
	devAddr := fs.String("dev-addr", "127.0.0.1:8123", "the ClickHouse HTTP interface of a running hindsight dev")
	format := fs.String("format", clickhouse.FormatTable, "table, tsv or json")
	maxRows := fs.Int("max-rows", 1000, "print at most this many rows")
	timeout := fs.Duration("timeout", 30*time.Second, "server-side time limit")
	if err := parse(fs, args); err != nil {
		return err
	}
	query := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(query) == "" {
		fs.Usage()
		return errUsage
	}
	opt := clickhouse.QueryOptions{Format: *format, MaxRows: *maxRows, Timeout: *timeout}
	st, closeFn, err := openEpisodicLog(ctx, &s, *devAddr)
	if err != nil {
		return err
	}
	defer closeFn()
	return st.QueryReadOnly(ctx, query, out, opt)
}

// openEpisodicLog opens the episodic log for reading, for operators: the
// ClickHouse server at CLICKHOUSE_ADDR; else a running hindsight dev,
// which owns the data directory, through its loopback endpoint at devAddr
// (with the token it wrote there); else the embedded engine in the data
// directory.
func openEpisodicLog(ctx context.Context, s *stackFlags, devAddr string) (*clickhouse.Store, func() error, error) {
	if os.Getenv("CLICKHOUSE_ADDR") == "" {
		st, err := app.OpenDevEpisodicLog(ctx, devAddr, envOr("CLICKHOUSE_DATABASE", ""), readSQLToken(s.dataDir))
		if err == nil {
			return st, st.Close, nil
		}
	}
	return openClickHouse(ctx, s, false)
}

func runEval(ctx context.Context, args []string, out io.Writer) error {
	evals := map[string]func(context.Context, []string, io.Writer) error{
		"locomo": evalLoCoMo, "merge": evalMerge, "scenarios": evalScenarios,
	}
	if len(args) == 0 || evals[args[0]] == nil {
		fmt.Fprint(os.Stderr, "Usage: hindsight eval locomo|merge|scenarios [flags]\n\n"+
			"  locomo     retrieval recall@k on LoCoMo\n"+
			"  merge      merge judge precision/recall on the labelled pairs\n"+
			"  scenarios  the write path and recall on a scenario corpus, end to end\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return nil
		}
		return errUsage
	}
	return evals[args[0]](ctx, args[1:], out)
}

// models returns the embedder and chat model the environment configures:
// an OpenAI-compatible endpoint when OPENAI_BASE_URL is set, else none
// (offline).
func models() (memory.Embedder, memory.LLM, error) {
	var s stackFlags
	s.logLevel = "warn"
	log, _ := s.logger()
	wc, err := s.workerConfig(log)
	if err != nil {
		return nil, nil, err
	}
	return app.Models(wc)
}

func evalLoCoMo(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("eval locomo", "--data FILE [flags]", `
Measure recall on LoCoMo: each conversation is ingested as one memory per
turn (with its dia_id and session date) through the service's indexer, and
every question is asked through the recall engine the MCP tool uses.
Prints recall@k per category (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial) and overall, and recall latency p50/p99.
With OPENAI_BASE_URL and HINDSIGHT_EMBED_MODEL set it uses that embedding
model; otherwise the offline embedder.`, "OPENAI_BASE_URL", "OPENAI_API_KEY", "HINDSIGHT_EMBED_MODEL", "HINDSIGHT_EMBED_DIM")
	data := fs.String("data", "", "the LoCoMo JSON file (e.g. ../shared/bench/locomo/locomo-dev.json)")
	ks := fs.String("k", "5,10", "cut-offs, comma-separated")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	baseline := fs.Bool("baseline", false, "also score the reference baseline (BM25 + character n-grams, RRF)")
	maxQ := fs.Int("max-questions", 0, "score only the first N questions of each conversation (0: all)")
	serviceDefaults := fs.Bool("service-defaults", false, "recall exactly as memory_recall serves (recency in the rerank, no context window) instead of the eval's settings")
	threshold := fs.Float64("threshold", 0, "relevance threshold scored besides the unfiltered ranking (0: the service's default)")
	stateless := fs.Bool("stateless", false, "recall as production serves: one hybrid search in Milvus (MILVUS_ADDR, else an in-process fake of Milvus) and reads of the store, no per-tenant cache")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		fs.Usage()
		return errUsage
	}
	var cut []int
	for _, f := range strings.Split(*ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return fmt.Errorf("--k %q: want positive integers, comma-separated", *ks)
		}
		cut = append(cut, k)
	}
	emb, _, err := models()
	if err != nil {
		return err
	}
	opts := locomo.Options{DataPath: *data, Ks: cut, Embedder: emb, Baseline: *baseline, MaxQuestions: *maxQ, Lexicon: lexicon.Default(), Threshold: *threshold, Stateless: *stateless}
	if *serviceDefaults {
		cfg := locomo.ServiceConfig(emb)
		opts.Config = &cfg
	}
	if *stateless {
		newIndex, closeAll, err := evalMilvus()
		if err != nil {
			return err
		}
		defer closeAll()
		opts.NewIndex = newIndex
	}
	r, err := locomo.Run(ctx, opts)
	if err == nil && *serviceDefaults {
		r.Config = "service"
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return r.WriteJSON(out)
	}
	return r.WriteText(out)
}

// evalMilvus opens a fresh set of Milvus collections per conversation, on
// the server at MILVUS_ADDR or on an in-process fake of Milvus (labelled a
// fake: store/milvus/milvusfake), and drops them when closed.
func evalMilvus() (func(context.Context, int) (memory.VectorIndex, error), func(), error) {
	newIndex, closeAll, fake, err := app.EvalIndexes(milvus.Config{Address: os.Getenv("MILVUS_ADDR"), Token: os.Getenv("MILVUS_TOKEN"), Database: os.Getenv("MILVUS_DATABASE")})
	if fake {
		fmt.Fprintln(os.Stderr, "eval: Milvus is an in-process fake of Milvus (set MILVUS_ADDR to use a server)")
	}
	return newIndex, closeAll, err
}

func evalMerge(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("eval merge", "[flags]", `
Measure the configured merge judge on the labelled pairs: per-verdict
precision and recall, accuracy, the confusion matrix and every mistake. The
judge is the LLM judge when OPENAI_BASE_URL is set, else the offline judge.`, "OPENAI_BASE_URL", "OPENAI_API_KEY", "HINDSIGHT_JUDGE_MODEL")
	data := fs.String("data", filepath.Join("testdata", "merge", "pairs.jsonl"), "the labelled pairs (JSON lines)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	offlineOnly := fs.Bool("offline", false, "use the offline judge even when an LLM is configured")
	if err := parse(fs, args); err != nil {
		return err
	}
	pairs, err := merge.LoadPairs(*data)
	if err != nil {
		return fmt.Errorf("%w (run from the repository root, or pass --data)", err)
	}
	emb, model, err := models()
	if err != nil {
		return err
	}
	if err := merge.ScorePairs(ctx, emb, pairs); err != nil {
		return err
	}
	var judge memory.Judge = merge.NewOfflineJudge(merge.OfflineOptions{})
	if model != nil && !*offlineOnly {
		if judge, err = merge.NewLLMJudge(model, merge.LLMOptions{}); err != nil {
			return err
		}
	}
	r, err := merge.Evaluate(ctx, judge, pairs)
	if err != nil {
		return err
	}
	if *asJSON {
		return r.WriteJSON(out)
	}
	return r.WriteTable(out)
}

func runMerge(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "undo" {
		fmt.Fprint(os.Stderr, "Usage: hindsight merge undo DECISION_ID [flags]\n\nUndo a merge decision (or any logged change): restore the memories it changed\nas new versions, and retire the memories it created.\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return nil
		}
		return errUsage
	}
	fs := newFlags("merge undo", "DECISION_ID [flags]", `
Undo a logged decision (a merge verdict, a correction, feedback, a store):
the memories it changed get a new version with their previous content and
state, the memories it created are retired, and the undo is itself logged.
It refuses when a later decision changed the same memories, naming it; undo
that one first, or pass --force. It runs through the tenant's ledger on the
Temporal cluster (the embedded one of hindsight dev by default). Decision
IDs are shown by "hindsight history MEMORY_ID" and session_end.`, "TEMPORAL_ADDR", "TEMPORAL_NAMESPACE", "HINDSIGHT_TENANT")
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	force := fs.Bool("force", false, "undo even if later decisions changed the same memories")
	asJSON := fs.Bool("json", false, "print the undo decision as JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	tc, err := t.dial(&s)
	if err != nil {
		return err
	}
	defer tc.Close()
	d, err := operatorDecision(ctx, tc, s.taskQueue, ledger.Request{
		Tenant: s.tenant, Op: ledger.OpUndo, DecisionID: fs.Arg(0), Force: *force,
	})
	if err != nil {
		return err
	}
	return printDecision(out, d, *asJSON)
}

// operatorDecision sends an operator's request (an undo, a release) to the
// tenant's ledger through Temporal and returns the decision it took.
func operatorDecision(ctx context.Context, tc client.Client, taskQueue string, req ledger.Request) (memory.Decision, error) {
	reply, err := service.CallLedger(ctx, tc, taskQueue, req, 2*time.Minute)
	if err != nil {
		return memory.Decision{}, err
	}
	if len(reply.Decisions) == 0 {
		return memory.Decision{}, errors.New("the ledger returned no decision")
	}
	return reply.Decisions[0], nil
}

// printDecision prints a decision and the versions it wrote, or, with
// asJSON, the decision as JSON.
func printDecision(out io.Writer, d memory.Decision, asJSON bool) error {
	if asJSON {
		return printJSON(out, d)
	}
	fmt.Fprintf(out, "%s: %s\n", d.ID, d.Reason)
	for _, m := range d.After {
		fmt.Fprintf(out, "  %s v%d [%s] %s\n", m.ID, m.Version, m.Status, terminalSafe(runes.ClipLine(m.Content, 90)))
	}
	return nil
}
