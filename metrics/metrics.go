package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "hindsight"

// Workflow states counted by the workflow counter.
const (
	WorkflowStarted   = "started"
	WorkflowCompleted = "completed"
	WorkflowFailed    = "failed"
)

// Metrics is a set of Hindsight metrics registered in its own registry.
type Metrics struct {
	reg *prometheus.Registry

	recallSeconds prometheus.Histogram
	recallResults prometheus.Histogram
	recallErrors  *prometheus.CounterVec
	usageDropped  prometheus.Counter
	workflows     *prometheus.CounterVec
	llmCalls      *prometheus.CounterVec
	llmSeconds    *prometheus.HistogramVec
	llmTokens     *prometheus.CounterVec

	consoleSnapshots         prometheus.Gauge
	consoleSnapshotBytes     prometheus.Gauge
	consoleSnapshotEvictions prometheus.Counter
}

// New returns metrics registered in a fresh registry, together with the Go
// runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		recallSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "recall_duration_seconds",
			Help:    "Time to answer one recall, from validation to the ranked results.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5},
		}),
		recallResults: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "recall_results",
			Help:    "Memories returned per recall.",
			Buckets: []float64{0, 1, 2, 3, 5, 10, 20, 50},
		}),
		recallErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "recall_errors_total",
			Help: "Recalls that failed, by domain error code (invalid, internal, ...).",
		}, []string{"code"}),
		usageDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "recall_usage_dropped_total",
			Help: "Recall-count updates dropped because the background queue was full or the write failed.",
		}),
		workflows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "workflows_total",
			Help: "Workflow runs by workflow type and state (started, completed, failed).",
		}, []string{"workflow", "state"}),
		llmCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "llm_calls_total",
			Help: "LLM calls by pipeline stage, model and result (ok, error).",
		}, []string{"stage", "model", "result"}),
		llmSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "llm_call_duration_seconds",
			Help:    "LLM call latency by pipeline stage.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"stage"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "llm_tokens_total",
			Help: "LLM tokens by pipeline stage and direction (prompt, completion).",
		}, []string{"stage", "direction"}),
		consoleSnapshots: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "console_snapshots",
			Help: "Overview snapshots the memory console keeps (one per tenant and user).",
		}),
		consoleSnapshotBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "console_snapshot_bytes",
			Help: "Estimated size of the memory console's overview snapshots, bounded by the console's limit.",
		}),
		consoleSnapshotEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "console_snapshot_evictions_total",
			Help: "Overview snapshots the memory console evicted, least recently used first, to stay within its limits.",
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.recallSeconds, m.recallResults, m.recallErrors, m.usageDropped,
		m.workflows, m.llmCalls, m.llmSeconds, m.llmTokens,
		m.consoleSnapshots, m.consoleSnapshotBytes, m.consoleSnapshotEvictions,
	)
	return m
}

// Registry is where the metrics live; register further collectors here.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format; mount it
// on /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveRecall records one successful recall: its duration and how many
// memories it returned.
func (m *Metrics) ObserveRecall(took time.Duration, results int) {
	if m == nil {
		return
	}
	m.recallSeconds.Observe(took.Seconds())
	m.recallResults.Observe(float64(results))
}

// RecallFailed counts a failed recall by its domain error code.
func (m *Metrics) RecallFailed(err error) {
	if m == nil || err == nil {
		return
	}
	m.recallErrors.WithLabelValues(memory.ErrorCode(err)).Inc()
}

// UsageDropped counts n recall-count updates that were not recorded.
func (m *Metrics) UsageDropped(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.usageDropped.Add(float64(n))
}

// Workflow counts a workflow of type workflow reaching state (one of
// WorkflowStarted, WorkflowCompleted, WorkflowFailed).
func (m *Metrics) Workflow(workflow, state string) {
	if m == nil {
		return
	}
	m.workflows.WithLabelValues(workflow, state).Inc()
}

// LLMCall records one LLM call of a pipeline stage: its latency, its
// tokens, and whether it failed. model may be empty when the call failed
// before a model answered.
func (m *Metrics) LLMCall(stage memory.Stage, model string, took time.Duration, usage memory.TokenUsage, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	st := string(stage)
	m.llmCalls.WithLabelValues(st, model, result).Inc()
	m.llmSeconds.WithLabelValues(st).Observe(took.Seconds())
	if usage.PromptTokens > 0 {
		m.llmTokens.WithLabelValues(st, "prompt").Add(float64(usage.PromptTokens))
	}
	if usage.CompletionTokens > 0 {
		m.llmTokens.WithLabelValues(st, "completion").Add(float64(usage.CompletionTokens))
	}
}

// ConsoleSnapshots reports the memory console's overview cache: how many
// snapshots it holds, their estimated size, and how many it just evicted.
func (m *Metrics) ConsoleSnapshots(entries int, bytes int64, evicted int) {
	if m == nil {
		return
	}
	m.consoleSnapshots.Set(float64(entries))
	m.consoleSnapshotBytes.Set(float64(bytes))
	if evicted > 0 {
		m.consoleSnapshotEvictions.Add(float64(evicted))
	}
}

// InstrumentLLM wraps an LLM so that every call is recorded with LLMCall
// under the request's stage. With nil metrics it returns next unchanged.
func InstrumentLLM(next memory.LLM, m *Metrics) memory.LLM {
	if m == nil || next == nil {
		return next
	}
	return instrumentedLLM{next: next, m: m}
}

type instrumentedLLM struct {
	next memory.LLM
	m    *Metrics
}

func (l instrumentedLLM) Chat(ctx context.Context, r memory.ChatRequest) (memory.ChatResponse, error) {
	start := time.Now()
	resp, err := l.next.Chat(ctx, r)
	l.m.LLMCall(r.Stage, resp.Model, time.Since(start), resp.Usage, err)
	return resp, err
}
