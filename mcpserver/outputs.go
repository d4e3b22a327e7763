package mcpserver

import (
	"fmt"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

// RecallOutput is memory_recall's structured result.
type RecallOutput struct {
	// Context is a block ready to inject into a prompt, within max_tokens;
	// when nothing relevant is stored it says so.
	Context string `json:"context"`
	// Omitted is how many of the results the context left out to fit.
	Omitted int          `json:"omitted"`
	Results []RecallItem `json:"results"`
	TookMS  float64      `json:"took_ms"`
}

// RecallItem is one recalled memory with its provenance.
type RecallItem struct {
	MemoryID string      `json:"memory_id"`
	Kind     memory.Kind `json:"kind"`
	// Scope is whose the memory is: "shared" (team knowledge), "user:ID"
	// (about the user recall acted for) or "agent:ID".
	Scope          memory.Scope          `json:"scope"`
	Content        string                `json:"content"`
	CounterExample string                `json:"counter_example,omitempty"`
	Confidence     float64               `json:"confidence"`
	Score          float64               `json:"score"`
	Breakdown      memory.ScoreBreakdown `json:"breakdown"`
	Status         memory.Status         `json:"status"`
	SupersededBy   string                `json:"superseded_by,omitempty"`
	Contradicts    []string              `json:"contradicts,omitempty"`
	Flags          []string              `json:"flags,omitempty"`
	CreatedAt      time.Time             `json:"created_at"`
	UpdatedAt      time.Time             `json:"updated_at"`
	SourceEpisodes []string              `json:"source_episodes"`
	Episodes       []memory.EpisodeRef   `json:"episodes,omitempty"`
	EventIDs       []string              `json:"event_ids,omitempty"`
}

func recallOutput(r recall.Response) RecallOutput {
	out := RecallOutput{Context: r.Text, Omitted: r.Omitted, Results: make([]RecallItem, 0, len(r.Results)), TookMS: float64(r.Took.Microseconds()) / 1000}
	for _, x := range r.Results {
		m := x.Memory
		out.Results = append(out.Results, RecallItem{
			MemoryID: m.ID, Kind: m.Kind, Scope: m.Scope.Norm(), Content: m.Content, CounterExample: m.CounterExample,
			Confidence: m.Confidence, Score: x.Score, Breakdown: x.Breakdown, Status: m.Status,
			SupersededBy: m.SupersededBy, Contradicts: x.Contradicts, Flags: m.Flags,
			CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, SourceEpisodes: nonNil(m.Sources),
			Episodes: x.Episodes, EventIDs: x.EventIDs,
		})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// DecisionOutput is the result of a change to memory.
type DecisionOutput struct {
	DecisionID string         `json:"decision_id"`
	Action     string         `json:"action"`
	Verdict    memory.Verdict `json:"verdict,omitempty"`
	MemoryID   string         `json:"memory_id"`
	Content    string         `json:"content"`
	Confidence float64        `json:"confidence"`
	Version    int            `json:"version"`
	// Status is the memory's status after the decision: "quarantined"
	// when its text reads as an instruction to the agent.
	Status   memory.Status `json:"status,omitempty"`
	TargetID string        `json:"target_id,omitempty"`
	Reason   string        `json:"reason"`
	// Repeat: the call repeated one already answered (the same
	// request_id, or the same call within two minutes); this is that
	// answer, and nothing changed.
	Repeat bool `json:"repeat,omitempty"`
}

// DecisionsOutput is the result of changes to several memories.
type DecisionsOutput struct {
	Decisions []DecisionOutput `json:"decisions"`
	// Repeat: see DecisionOutput.
	Repeat bool `json:"repeat,omitempty"`
}

func decisionOutput(d memory.Decision) DecisionOutput {
	out := DecisionOutput{DecisionID: d.ID, Action: string(d.Action), Verdict: d.Verdict, TargetID: d.TargetID, Reason: d.Reason}
	// Report the live memory the decision left (a conflict also retires
	// the old one), else whatever it wrote, else its target.
	for _, m := range d.After {
		if out.MemoryID == "" || m.Status == memory.StatusLive {
			out.MemoryID, out.Content, out.Confidence, out.Version, out.Status = m.ID, m.Content, m.Confidence, m.Version, m.Status
		}
	}
	if out.MemoryID == "" {
		out.MemoryID = d.TargetID
	}
	return out
}

// LogOutput is memory_log's result.
type LogOutput struct {
	EventID   string `json:"event_id"`
	SessionID string `json:"session_id"`
	// TS is the event's time (RFC 3339, UTC); a session's events are
	// ordered by it.
	TS string `json:"ts"`
}

// EndOutput is session_end's result.
type EndOutput struct {
	WorkflowID string           `json:"workflow_id"`
	RunID      string           `json:"run_id"`
	Status     string           `json:"status"`
	Events     int              `json:"events"`
	EpisodeID  string           `json:"episode_id,omitempty"`
	Memories   []EndMemory      `json:"memories,omitempty"`
	Failures   []memory.Failure `json:"failures,omitempty"`
	Summary    string           `json:"summary"`
}

// EndMemory is what became of one distilled candidate.
type EndMemory struct {
	MemoryID   string         `json:"memory_id"`
	Kind       memory.Kind    `json:"kind"`
	Content    string         `json:"content"`
	Verdict    memory.Verdict `json:"verdict"`
	DecisionID string         `json:"decision_id"`
	Reason     string         `json:"reason"`
}

func endOutput(r service.EndResponse) EndOutput {
	out := EndOutput{WorkflowID: r.WorkflowID, RunID: r.RunID, Status: r.Status, Events: r.Events}
	if r.Result == nil {
		out.Summary = fmt.Sprintf("session %s: distillation %s (workflow %s); %d events", r.WorkflowID, r.Status, r.WorkflowID, r.Events)
		return out
	}
	res := r.Result
	out.EpisodeID, out.Failures = res.EpisodeID, res.Failures
	for _, m := range res.Memories {
		out.Memories = append(out.Memories, EndMemory{MemoryID: m.MemoryID, Kind: m.Kind, Content: m.Content, Verdict: m.Verdict, DecisionID: m.DecisionID, Reason: m.Reason})
	}
	out.Summary = fmt.Sprintf("distilled episode %s (%s, %s) into %d memories", res.EpisodeID, res.Task, res.Outcome, len(res.Memories))
	return out
}

// ForgetOutput is memory_forget's receipt: what went, per store.
type ForgetOutput struct {
	Memories []string `json:"memories"`
	// UserMemories are the memories among Memories that were in the
	// forgotten user's own scope; the others were shared memories learned
	// only from their sessions.
	UserMemories []string    `json:"user_memories"`
	Rebuilt      []string    `json:"rebuilt"`
	Sessions     []string    `json:"sessions"`
	Episodes     []string    `json:"episodes"`
	Summaries    []string    `json:"summaries"`
	ClickHouse   StoreCounts `json:"clickhouse"`
	Vectors      VectorCount `json:"vectors"`
}

// StoreCounts are the rows a forget removed from the episodic store.
type StoreCounts struct {
	Events    int `json:"events"`
	Episodes  int `json:"episodes"`
	Memories  int `json:"memories"`
	Versions  int `json:"versions"`
	Decisions int `json:"decisions"`
}

// VectorCount are the documents a forget removed from the vector index.
type VectorCount struct {
	Memories int `json:"memories"`
	Episodes int `json:"episodes"`
}

func forgetOutput(r service.ForgetReceipt) ForgetOutput {
	return ForgetOutput{
		Memories: nonNil(r.Memories), UserMemories: nonNil(r.Private), Rebuilt: nonNil(r.Rebuilt), Sessions: nonNil(r.Sessions),
		Episodes: nonNil(r.Episodes), Summaries: nonNil(r.Summaries),
		ClickHouse: StoreCounts(r.Store),
		Vectors:    VectorCount{Memories: r.Vectors, Episodes: r.EpisodeVectors},
	}
}
