package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/eval/locomo"
	"github.com/hindsight-memory/hindsight/eval/scenarios"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/merge"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/store/local"
)

const benchRecallHelp = `
Measure recall as memory_recall serves it, on the embedded stack as
hindsight dev runs it: chDB, the local vector index, the per-process recall
cache, the service and the MCP server over streamable HTTP.

It builds one tenant of --memories memories, written in bulk through the
indexer (not through the ledger), from realistic text: LoCoMo turns and the
scenario corpus's messages, varied and repeated to size, grouped in
episodes. At --mcp-at memories (10,000) it asks --queries queries of varied
length (questions, keywords, whole sentences) in process and over MCP, one
after the other, so that the two are measured side by side; at --memories
it asks them again with the keyword side alone and hybrid (keyword and
vector), and times one exact dot-product scan over the same memories'
vectors: the floor any vector search has to beat. It prints the p50 and p99
of each, the ratios, where a hybrid recall's time goes, stage by stage, and
the process's peak RSS.`

func runBenchRecall(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("bench recall", "[flags]", benchRecallHelp)
	n := fs.Int("memories", 100_000, "memories in the tenant")
	queries := fs.Int("queries", 1000, "queries asked at each size")
	mcpAt := fs.Int("mcp-at", 10_000, "memories at which MCP is measured against in-process recall (0: not measured)")
	locomoPath := fs.String("locomo", "../shared/bench/locomo/locomo-dev.json", "LoCoMo data: its turns and questions")
	scenariosPath := fs.String("scenarios", "../shared/bench/scenarios/dev.json", "scenario corpus: its messages and probes")
	dataDir := fs.String("data-dir", "", "where the stores go (default: a temporary directory, removed after)")
	label := fs.String("label", "", "a name for this run in the output (e.g. the commit)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured recalls to this file (go tool pprof)")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *n < 1:
		return fmt.Errorf("--memories must be at least 1")
	case *queries < 1:
		return fmt.Errorf("--queries must be at least 1")
	case *mcpAt < 0 || *mcpAt > *n:
		return fmt.Errorf("--mcp-at must lie between 0 and --memories (%d), got %d", *n, *mcpAt)
	}
	corpus, err := loadBenchCorpus(*locomoPath, *scenariosPath)
	if err != nil {
		return err
	}
	work := *dataDir
	if work == "" {
		if work, err = os.MkdirTemp("", "hindsight-bench-recall-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	b, err := newRecallBench(ctx, work, corpus, *queries)
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		b.profile = f
	}
	defer b.close()
	res, err := b.run(ctx, *n, *mcpAt)
	if err != nil {
		return err
	}
	res.Label = *label
	if *asJSON {
		return printJSON(out, res)
	}
	return res.print(out)
}

// recallBenchResult is what one run measured; times in milliseconds.
type recallBenchResult struct {
	Label    string `json:"label,omitempty"`
	Memories int    `json:"memories"`
	Queries  int    `json:"queries"`
	// WriteSeconds is the time to write the memories through the indexer.
	WriteSeconds float64 `json:"write_s"`
	// FirstRecallMs is the first recall's time: it loads the tenant into
	// the recall cache.
	FirstRecallMs float64 `json:"first_recall_ms"`
	KeywordP50Ms  float64 `json:"keyword_p50_ms"`
	KeywordP99Ms  float64 `json:"keyword_p99_ms"`
	HybridP50Ms   float64 `json:"hybrid_p50_ms"`
	HybridP99Ms   float64 `json:"hybrid_p99_ms"`
	// ExactScanMs is the median time of one exact dot-product scan of
	// every memory's vector, with the kernel the local index scores with.
	ExactScanMs float64 `json:"exact_scan_ms"`
	// HybridOverScan is HybridP99Ms / ExactScanMs.
	HybridOverScan float64 `json:"hybrid_p99_over_exact_scan"`
	// At MCPAt memories: the same queries in process (the service, as
	// the MCP tool calls it) and over MCP streamable HTTP.
	MCPAt             int     `json:"mcp_at,omitempty"`
	InProcessP50Ms10k float64 `json:"inprocess_p50_ms_10k,omitempty"`
	InProcessP99Ms10k float64 `json:"inprocess_p99_ms_10k,omitempty"`
	MCPP50Ms10k       float64 `json:"mcp_p50_ms_10k,omitempty"`
	MCPP99Ms10k       float64 `json:"mcp_p99_ms_10k,omitempty"`
	MCPOverInProcess  float64 `json:"mcp_p99_over_inprocess,omitempty"`
	// Stages is each stage's share of the hybrid recalls' time at
	// Memories (recall.Stages), summing to about 1.
	Stages map[string]float64 `json:"stages"`
	// RSSMB is the process's peak resident memory.
	RSSMB float64 `json:"rss_mb"`
	// Slowest are the slowest hybrid recalls, slowest first: where the
	// p99 goes.
	Slowest []slowRecall `json:"slowest"`
}

// slowRecall is one slow recall: its query (cut), time and stages.
type slowRecall struct {
	Query  string             `json:"query"`
	Ms     float64            `json:"ms"`
	Stages map[string]float64 `json:"stages_ms"`
}

func (r recallBenchResult) print(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "memories\t%d\t(%d queries each; written in %.1f s; first recall %.0f ms)\n", r.Memories, r.Queries, r.WriteSeconds, r.FirstRecallMs)
	fmt.Fprintf(tw, "keyword\tp50 %.2f ms\tp99 %.2f ms\n", r.KeywordP50Ms, r.KeywordP99Ms)
	fmt.Fprintf(tw, "hybrid\tp50 %.2f ms\tp99 %.2f ms\t%.2f× the exact scan\n", r.HybridP50Ms, r.HybridP99Ms, r.HybridOverScan)
	fmt.Fprintf(tw, "exact scan\t%.2f ms\t\n", r.ExactScanMs)
	if r.MCPAt > 0 {
		fmt.Fprintf(tw, "in process at %d\tp50 %.2f ms\tp99 %.2f ms\n", r.MCPAt, r.InProcessP50Ms10k, r.InProcessP99Ms10k)
		fmt.Fprintf(tw, "MCP at %d\tp50 %.2f ms\tp99 %.2f ms\t%.2f× in process\n", r.MCPAt, r.MCPP50Ms10k, r.MCPP99Ms10k, r.MCPOverInProcess)
	}
	var shares []string
	for _, st := range (recall.Stages{}).Named() {
		shares = append(shares, fmt.Sprintf("%s %.1f%%", st.Name, 100*r.Stages[st.Name]))
	}
	fmt.Fprintf(tw, "hybrid stages\t%s\n", strings.Join(shares, ", "))
	fmt.Fprintf(tw, "peak RSS\t%.0f MB\n", r.RSSMB)
	return tw.Flush()
}

// benchCorpus is the text a bench tenant is made of, and what it is asked.
type benchCorpus struct {
	texts     []string
	questions []string
}

// loadBenchCorpus reads LoCoMo's turns and questions and the scenario
// corpus's messages and probes; either file may be missing, not both.
func loadBenchCorpus(locomoPath, scenariosPath string) (benchCorpus, error) {
	var c benchCorpus
	var missing []string
	if convs, err := locomo.Load(locomoPath); err == nil {
		for _, conv := range convs {
			for _, s := range conv.Sessions {
				for _, t := range s.Turns {
					if len(strings.Fields(t.Text)) >= 5 {
						c.texts = append(c.texts, t.Text)
					}
				}
			}
			for _, q := range conv.QA {
				c.questions = append(c.questions, q.Text)
			}
		}
	} else if errors.Is(err, os.ErrNotExist) {
		missing = append(missing, locomoPath)
	} else {
		return c, fmt.Errorf("--locomo: %w", err)
	}
	if corpus, err := scenarios.Load(scenariosPath); err == nil {
		for _, sc := range corpus.Scenarios {
			for _, s := range sc.Sessions {
				for _, ev := range s.Transcript.Events {
					if (ev.Role == memory.RoleUser || ev.Role == memory.RoleAssistant) && len([]rune(ev.Content)) >= 20 {
						c.texts = append(c.texts, firstSentences(ev.Content, 300))
					}
				}
			}
			for _, p := range sc.Probes {
				c.questions = append(c.questions, p.Query)
			}
		}
	} else if errors.Is(err, os.ErrNotExist) {
		missing = append(missing, scenariosPath)
	} else {
		return c, fmt.Errorf("--scenarios: %w", err)
	}
	if len(c.texts) == 0 || len(c.questions) == 0 {
		return c, fmt.Errorf("no text to build a tenant from: %s not found; give LoCoMo data with --locomo or a scenario corpus with --scenarios", strings.Join(missing, " and "))
	}
	return c, nil
}

// firstSentences cuts text to at most max bytes, at a sentence or word end.
func firstSentences(text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= max {
		return text
	}
	cut := text[:max]
	if i := strings.LastIndexAny(cut, ".!?。！？"); i > max/3 {
		return cut[:i+1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		return cut[:i]
	}
	return strings.ToValidUTF8(cut, "")
}

// memoryText is the i-th memory's text: the corpus's texts once as they
// are, then each joined with a clause of another, so that every memory of
// a large tenant differs while reading like the corpus.
func (c benchCorpus) memoryText(i int) string {
	n := len(c.texts)
	base := c.texts[(i*7919)%n]
	if i < n {
		return base
	}
	other := strings.Fields(c.texts[(i*104729+i/n)%n])
	start := (i / n) % max(1, len(other)-6)
	return base + " Also: " + strings.Join(other[start:min(len(other), start+6+i%7)], " ")
}

// queryTexts are count queries of varied length: the corpus's questions,
// and every fifth a few words of a memory, every seventh a whole one.
func (c benchCorpus) queryTexts(count int, memories int) []string {
	r := rand.New(rand.NewPCG(38, 1))
	out := make([]string, count)
	for i := range out {
		switch {
		case i%5 == 4:
			words := strings.Fields(c.memoryText(r.IntN(memories)))
			start := r.IntN(len(words))
			out[i] = strings.Join(words[start:min(len(words), start+1+r.IntN(3))], " ")
		case i%7 == 6:
			out[i] = c.memoryText(r.IntN(memories))
		default:
			out[i] = c.questions[r.IntN(len(c.questions))]
		}
		if len(out[i]) > recall.MaxQueryText {
			out[i] = firstSentences(out[i], recall.MaxQueryText)
		}
	}
	return out
}

// recallBench is the embedded stack a run measures.
type recallBench struct {
	corpus  benchCorpus
	queries int
	tenant  string
	rt      *app.Runtime
	svc     *service.Service
	keyword *recall.Engine // the same tenant without the vector index
	kwSvc   *service.Service
	written int
	profile io.Writer // where the measured recalls' CPU profile goes, if anywhere
	http    *httpServer
	mcp     *benchClient
}

func newRecallBench(ctx context.Context, work string, corpus benchCorpus, queries int) (*recallBench, error) {
	for _, env := range []string{"CLICKHOUSE_ADDR", "MILVUS_ADDR", "OPENAI_BASE_URL"} {
		os.Unsetenv(env)
	}
	log := slog.New(slog.DiscardHandler)
	stack := stackFlags{dataDir: work, tenant: memory.DefaultTenant, taskQueue: "hindsight-bench", logLevel: "error"}
	cfg, err := stack.workerConfig(log)
	if err != nil {
		return nil, err
	}
	b := &recallBench{corpus: corpus, queries: queries, tenant: "bench"}
	if b.rt, err = app.Build(ctx, cfg); err != nil {
		return nil, err
	}
	scfg, err := serviceConfig(&stack)
	if err != nil {
		b.close()
		return nil, err
	}
	// Recall needs no Temporal: the service's writes are not measured.
	b.svc = b.rt.Service(scfg, nil)
	if b.keyword, err = recall.New(b.rt.Engine.Config(), recall.Deps{
		Memories: b.rt.Store, Episodes: b.rt.Store, Events: b.rt.Store, Lexicon: cfg.Lexicon,
		Conflicts: merge.Conflicts, Screener: b.rt.Screener, Logger: log,
	}); err != nil {
		b.close()
		return nil, err
	}
	kwCfg := scfg
	kwCfg.Redactor = b.rt.Redactor()
	b.kwSvc = service.New(kwCfg, b.rt.Store, nil, b.keyword, log)
	if cfg.Lexicon == nil {
		fmt.Fprintln(os.Stderr, "bench recall: dictionaries not installed (make dicts): recall runs without translations and synonyms")
	}
	return b, nil
}

func (b *recallBench) close() {
	if b.mcp != nil {
		b.mcp.session.Close()
	}
	if b.http != nil {
		b.http.Close()
	}
	if b.keyword != nil {
		b.keyword.Close()
	}
	if b.rt != nil {
		b.rt.Close()
	}
}

// episodeSize is how many memories one bench episode taught.
const episodeSize = 20

// grow writes memories until the tenant holds n, with an episode for
// every episodeSize of them.
func (b *recallBench) grow(ctx context.Context, n int) error {
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	kinds := []memory.Kind{memory.KindFact, memory.KindLesson, memory.KindPreference, memory.KindRule}
	const batch = 1000
	for b.written < n {
		ms := make([]memory.Memory, 0, batch)
		for i := b.written; i < min(n, b.written+batch); i++ {
			t := at.Add(-time.Duration(i) * 7 * time.Minute)
			ep := i / episodeSize
			kind := kinds[i%len(kinds)]
			content := b.corpus.memoryText(i)
			ms = append(ms, memory.Memory{
				ID: fmt.Sprintf("bench-%07d", i), Tenant: b.tenant, Version: 1, Kind: kind, Content: content,
				ContentHash: memory.ContentHash(kind, content), Confidence: 0.5 + float64(i%5)/10,
				Sources: []string{benchEpisodeID(b.tenant, ep)}, Status: memory.StatusLive,
				Decay: 1, DecayAnchor: t, ValidFrom: t, CreatedAt: t, UpdatedAt: t,
			})
			if i%episodeSize == 0 {
				if err := b.rt.Store.PutEpisode(ctx, memory.Episode{
					ID: benchEpisodeID(b.tenant, ep), Tenant: b.tenant, SessionID: fmt.Sprintf("bench-session-%06d", ep),
					Task: firstSentences(content, 120), Outcome: memory.OutcomeSuccess, Status: memory.EpisodeLive,
					StartedAt: t.Add(-20 * time.Minute), EndedAt: t, EventCount: 12, CreatedAt: t,
				}); err != nil {
					return fmt.Errorf("write episode %d: %w", ep, err)
				}
			}
		}
		if err := b.rt.Indexer.Write(ctx, ms); err != nil {
			return fmt.Errorf("write memories %d–%d: %w", b.written, b.written+len(ms), err)
		}
		b.written += len(ms)
	}
	return nil
}

func benchEpisodeID(tenant string, i int) string {
	return memory.EpisodeID(tenant, fmt.Sprintf("bench-session-%06d", i))
}

func (b *recallBench) query(text string) memory.Query {
	return memory.Query{Tenant: b.tenant, Text: text, TopK: 5}
}

// timed asks every query of texts with ask and returns the times; stages
// add up the hybrid recalls' stages when not nil.
func timed(ctx context.Context, texts []string, ask func(context.Context, string) (recall.Response, error), stages *recall.Stages, slow *[]slowRecall) ([]time.Duration, time.Duration, error) {
	took := make([]time.Duration, 0, len(texts))
	var total time.Duration
	for _, t := range texts {
		t0 := time.Now()
		resp, err := ask(ctx, t)
		d := time.Since(t0)
		if err != nil {
			return nil, 0, fmt.Errorf("recall %q: %w", t, err)
		}
		took = append(took, d)
		if stages != nil {
			stages.Add(resp.Stages)
			total += resp.Took
		}
		if slow != nil {
			noteSlow(slow, t, d, resp.Stages)
		}
	}
	return took, total, nil
}

func (b *recallBench) run(ctx context.Context, n, mcpAt int) (recallBenchResult, error) {
	res := recallBenchResult{Memories: n, Queries: b.queries, MCPAt: mcpAt}
	start := time.Now()
	var writing time.Duration
	if mcpAt > 0 {
		if err := b.grow(ctx, mcpAt); err != nil {
			return res, err
		}
		writing += time.Since(start)
		if err := b.measureMCP(ctx, &res); err != nil {
			return res, err
		}
	}
	t0 := time.Now()
	if err := b.grow(ctx, n); err != nil {
		return res, err
	}
	writing += time.Since(t0)
	res.WriteSeconds = writing.Seconds()
	texts := b.corpus.queryTexts(b.queries, n)

	// The first recall of each engine loads the tenant.
	t0 = time.Now()
	if _, err := b.svc.Recall(ctx, b.query(texts[0])); err != nil {
		return res, err
	}
	res.FirstRecallMs = ms64(time.Since(t0))
	// The keyword side alone first, on an engine of its own, which is
	// closed before the hybrid recalls: a served process holds one cache
	// of the tenant, not two for the collector to walk.
	if _, err := b.kwSvc.Recall(ctx, b.query(texts[0])); err != nil {
		return res, err
	}
	kw, _, err := timed(ctx, texts, func(ctx context.Context, t string) (recall.Response, error) { return b.kwSvc.Recall(ctx, b.query(t)) }, nil, nil)
	if err != nil {
		return res, err
	}
	b.keyword.Close()
	b.keyword, b.kwSvc = nil, nil
	runtime.GC()
	if b.profile != nil {
		if err := pprof.StartCPUProfile(b.profile); err != nil {
			return res, err
		}
	}
	var stages recall.Stages
	hy, stageTotal, err := timed(ctx, texts, func(ctx context.Context, t string) (recall.Response, error) { return b.svc.Recall(ctx, b.query(t)) }, &stages, &res.Slowest)
	if err != nil {
		return res, err
	}
	if b.profile != nil {
		pprof.StopCPUProfile()
	}
	res.KeywordP50Ms, res.KeywordP99Ms = ms64(quantile(kw, 0.5)), ms64(quantile(kw, 0.99))
	res.HybridP50Ms, res.HybridP99Ms = ms64(quantile(hy, 0.5)), ms64(quantile(hy, 0.99))
	res.Stages = map[string]float64{}
	for _, st := range stages.Named() {
		if stageTotal > 0 {
			res.Stages[st.Name] = float64(st.Took) / float64(stageTotal)
		}
	}
	res.RSSMB = peakRSSMB()

	scan, err := b.exactScan(ctx, n, texts)
	if err != nil {
		return res, err
	}
	res.ExactScanMs = ms64(scan)
	res.HybridOverScan = res.HybridP99Ms / res.ExactScanMs
	return res, nil
}

// measureMCP asks the queries in process and over MCP, each query both
// ways one after the other (alternating which goes first).
func (b *recallBench) measureMCP(ctx context.Context, res *recallBenchResult) error {
	if err := b.serveMCP(ctx); err != nil {
		return err
	}
	texts := b.corpus.queryTexts(b.queries, b.written)
	if _, err := b.svc.Recall(ctx, b.query(texts[0])); err != nil { // load the tenant
		return err
	}
	var in, over []time.Duration
	inProcess := func(t string) error {
		t0 := time.Now()
		_, err := b.svc.Recall(ctx, b.query(t))
		in = append(in, time.Since(t0))
		return err
	}
	viaMCP := func(t string) error {
		t0 := time.Now()
		var out mcpserver.RecallOutput
		err := b.mcp.call(ctx, mcpserver.ToolRecall, map[string]any{"query": t, "top_k": 5}, &out)
		over = append(over, time.Since(t0))
		return err
	}
	for i, t := range texts {
		first, second := inProcess, viaMCP
		if i%2 == 1 {
			first, second = viaMCP, inProcess
		}
		if err := first(t); err != nil {
			return fmt.Errorf("recall %q: %w", t, err)
		}
		if err := second(t); err != nil {
			return fmt.Errorf("recall %q: %w", t, err)
		}
	}
	res.InProcessP50Ms10k, res.InProcessP99Ms10k = ms64(quantile(in, 0.5)), ms64(quantile(in, 0.99))
	res.MCPP50Ms10k, res.MCPP99Ms10k = ms64(quantile(over, 0.5)), ms64(quantile(over, 0.99))
	res.MCPOverInProcess = res.MCPP99Ms10k / res.InProcessP99Ms10k
	return nil
}

// serveMCP serves the service's MCP server on a loopback port, as
// hindsight dev does (behind the same guard, with sessions), and connects
// a client.
func (b *recallBench) serveMCP(ctx context.Context) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	guard, err := guardFor(ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	s := mcpserver.New(b.svc, mcpserver.Options{Version: version, Screener: b.rt.Screener})
	h := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Path: "/mcp", DefaultTenant: b.tenant})
	b.http = serveHTTP(ln, "the MCP server", guard, h, slog.New(slog.DiscardHandler))
	b.mcp, err = dialBench(ctx, "http://"+ln.Addr().String()+"/mcp", "")
	return err
}

// exactScan returns the median time of one exact scan of n vectors (the
// memories' own, embedded again) for the first queries: a dot product
// each, keeping the best 50, with the local index's kernel.
func (b *recallBench) exactScan(ctx context.Context, n int, texts []string) (time.Duration, error) {
	emb := b.rt.Embedder
	dim := emb.Dim()
	flat := make([]float32, 0, n*dim)
	for start := 0; start < n; start += 1000 {
		var batch []string
		for i := start; i < min(n, start+1000); i++ {
			batch = append(batch, b.corpus.memoryText(i))
		}
		vs, err := emb.Embed(ctx, batch)
		if err != nil {
			return 0, err
		}
		for _, v := range vs {
			flat = append(flat, v...)
		}
	}
	qs, err := emb.Embed(ctx, texts[:min(len(texts), 51)])
	if err != nil {
		return 0, err
	}
	var took []time.Duration
	for i, q := range qs {
		t0 := time.Now()
		top := scanTop(flat, dim, q, 50)
		if i > 0 { // the first warms the caches
			took = append(took, time.Since(t0))
		}
		runtime.KeepAlive(top)
	}
	return quantile(took, 0.5), nil
}

// scanTop returns the indexes of the k rows of flat with the highest dot
// product with q.
func scanTop(flat []float32, dim int, q []float32, k int) []int {
	type hit struct {
		i int
		s float32
	}
	top := make([]hit, 0, k+1)
	floor := float32(-1 << 30)
	for i := 0; i+dim <= len(flat); i += dim {
		s := local.Dot(flat[i:i+dim], q)
		if len(top) == k && s <= floor {
			continue
		}
		j, _ := slices.BinarySearchFunc(top, s, func(h hit, s float32) int { return cmp.Compare(s, h.s) })
		top = slices.Insert(top, j, hit{i / dim, s})
		if len(top) > k {
			top = top[:k]
		}
		floor = top[len(top)-1].s
	}
	out := make([]int, len(top))
	for i, h := range top {
		out[i] = h.i
	}
	return out
}

// noteSlow keeps the 10 slowest recalls in slow, slowest first.
func noteSlow(slow *[]slowRecall, query string, d time.Duration, st recall.Stages) {
	const keep = 10
	if len(*slow) == keep && ms64(d) <= (*slow)[keep-1].Ms {
		return
	}
	r := slowRecall{Query: firstSentences(query, 80), Ms: ms64(d), Stages: map[string]float64{}}
	for _, s := range st.Named() {
		if s.Took >= 100*time.Microsecond {
			r.Stages[s.Name] = ms64(s.Took)
		}
	}
	i, _ := slices.BinarySearchFunc(*slow, r.Ms, func(s slowRecall, ms float64) int { return cmp.Compare(ms, s.Ms) })
	*slow = slices.Insert(*slow, i, r)
	*slow = (*slow)[:min(len(*slow), keep)]
}

func ms64(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// peakRSSMB is the process's peak resident set (VmHWM), 0 where /proc
// does not say.
func peakRSSMB() float64 {
	f, err := os.Open(filepath.Join("/proc", "self", "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
