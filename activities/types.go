package activities

import (
	"time"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/memory"
)

// SessionRef names a session. It is how transcripts travel through
// workflows: by reference, never by value.
type SessionRef struct {
	Tenant    string `json:"tenant"`
	SessionID string `json:"session_id"`
}

// SessionMeta is what the caller said about a session when ending it; it
// overrides what extraction infers.
type SessionMeta struct {
	Task    string         `json:"task,omitempty"`
	Outcome memory.Outcome `json:"outcome,omitempty"`
	Agent   string         `json:"agent,omitempty"`
	UserID  string         `json:"user_id,omitempty"`
}

// TranscriptInfo summarises a stored transcript.
type TranscriptInfo struct {
	Events    int       `json:"events"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	UserID    string    `json:"user_id,omitempty"`
}

// ExtractInput asks for a session's episode and candidate memories.
type ExtractInput struct {
	Session SessionRef  `json:"session"`
	Meta    SessionMeta `json:"meta"`
	Now     time.Time   `json:"now"`
}

// LedgerOp is an operation on a tenant's semantic memory.
type LedgerOp string

// Ledger operations.
const (
	OpMerge    LedgerOp = "merge"    // merge candidates distilled from an episode
	OpStore    LedgerOp = "store"    // merge one memory stated directly
	OpCorrect  LedgerOp = "correct"  // change a memory's text or mark it outdated
	OpFeedback LedgerOp = "feedback" // a task that used a memory succeeded or failed
	OpUndo     LedgerOp = "undo"     // restore the state before a decision
	OpForget   LedgerOp = "forget"   // delete memories for good
	OpDecay    LedgerOp = "decay"    // move memories between live, cold and archived
	OpRelease  LedgerOp = "release"  // a person releases a memory from quarantine
)

// LedgerRequest is one operation for a tenant's ledger. ID makes it
// idempotent: the ledger applies a request ID once.
type LedgerRequest struct {
	ID      string   `json:"id"`
	Tenant  string   `json:"tenant"`
	Op      LedgerOp `json:"op"`
	ReplyTo string   `json:"reply_to,omitempty"` // a workflow ID to signal the reply to

	// OpMerge, OpStore.
	EpisodeID  string             `json:"episode_id,omitempty"`
	WorkflowID string             `json:"workflow_id,omitempty"`
	Candidates []memory.Candidate `json:"candidates,omitempty"`

	// OpCorrect, OpFeedback, OpForget, OpUndo.
	MemoryIDs []string `json:"memory_ids,omitempty"`
	// OpForget: the memories in Rebuild lose the source episodes in
	// DropSources (and keep their other sources); with All every memory of
	// the tenant goes.
	Rebuild     []string `json:"rebuild,omitempty"`
	DropSources []string `json:"drop_sources,omitempty"`
	All         bool     `json:"all,omitempty"`
	Content     string   `json:"content,omitempty"`
	Outdated    bool     `json:"outdated,omitempty"`
	Helped      bool     `json:"helped,omitempty"`
	DecisionID  string   `json:"decision_id,omitempty"`
	Force       bool     `json:"force,omitempty"`
	Reason      string   `json:"reason,omitempty"`
}

// Validate checks a request before it is queued.
func (r LedgerRequest) Validate() error {
	const op = "ledger request"
	if r.ID == "" {
		return memory.Invalidf(op, "id is required")
	}
	if err := memory.ValidateTenant(op, r.Tenant); err != nil {
		return err
	}
	switch r.Op {
	case OpMerge, OpStore:
		if len(r.Candidates) == 0 {
			return memory.Invalidf(op, "%s needs at least one candidate", r.Op)
		}
		if len(r.Candidates) > MaxCandidatesPerRequest {
			return memory.Invalidf(op, "%s has %d candidates; the limit is %d", r.Op, len(r.Candidates), MaxCandidatesPerRequest)
		}
		for i, c := range r.Candidates {
			if r.Op == OpMerge {
				c = ClipCandidate(c) // distilled: applyRequest merges it clipped
			}
			if err := ValidateCandidate(c); err != nil {
				return memory.Invalidf(op, "candidate %d: %s", i, memory.ErrorMessage(err))
			}
		}
	case OpCorrect:
		if len(r.MemoryIDs) != 1 {
			return memory.Invalidf(op, "correct needs exactly one memory_id")
		}
		if r.Content == "" && !r.Outdated {
			return memory.Invalidf(op, "correct needs new content or outdated=true")
		}
	case OpFeedback:
		if len(r.MemoryIDs) == 0 {
			return memory.Invalidf(op, "feedback needs at least one memory_id")
		}
		if len(r.MemoryIDs) > MaxFeedbackMemories {
			return memory.Invalidf(op, "feedback names %d memories; the limit is %d: send the memories the task used, in several calls if need be", len(r.MemoryIDs), MaxFeedbackMemories)
		}
	case OpForget:
		if len(r.MemoryIDs) == 0 && len(r.Rebuild) == 0 && !r.All {
			return memory.Invalidf(op, "forget needs memory_ids, memories to rebuild, or all")
		}
		if len(r.Rebuild) > 0 && len(r.DropSources) == 0 {
			return memory.Invalidf(op, "forget: memories to rebuild need the source episodes to drop")
		}
	case OpUndo:
		if r.DecisionID == "" {
			return memory.Invalidf(op, "undo needs a decision_id")
		}
	case OpRelease:
		if len(r.MemoryIDs) != 1 {
			return memory.Invalidf(op, "release needs exactly one memory_id")
		}
	case OpDecay:
	default:
		return memory.Invalidf(op, "unknown op %q", r.Op)
	}
	return nil
}

// Limits of a memory's fields, one table for every entry point (the MCP
// tools, the CLI, the service and the ledger): nothing past them reaches a
// workflow, whose payloads Temporal bounds.
const (
	MaxContent        = 4000 // bytes of a memory's text
	MaxCounterExample = 4000 // bytes of a lesson's counter-example
	MaxTaskType       = 100  // bytes of a task type
	MaxEntities       = 32   // entities of one memory
	MaxEntity         = 200  // bytes of one entity
	MaxEvidence       = 64   // evidence event IDs of one memory

	// Limits of one ledger request, so that its reply (a decision per
	// candidate or memory, each bounded by the limits above) stays far
	// below Temporal's 2 MiB payload limit.
	MaxCandidatesPerRequest = 32 // candidates merged by one request
	MaxFeedbackMemories     = 50 // memories one feedback names
)

// ValidateCandidate checks a candidate memory.
func ValidateCandidate(c memory.Candidate) error {
	const op = "candidate"
	if !c.Kind.Valid() {
		return memory.Invalidf(op, "kind %q is not one of preference, lesson, fact, rule", c.Kind)
	}
	if memory.Normalize(c.Content) == "" {
		return memory.Invalidf(op, "content is empty")
	}
	if len(c.Content) > MaxContent {
		return memory.Invalidf(op, "content is %d bytes; the limit is %d: state one memory, concisely", len(c.Content), MaxContent)
	}
	if len(c.CounterExample) > MaxCounterExample {
		return memory.Invalidf(op, "counter_example is %d bytes; the limit is %d: quote the one error line that matters", len(c.CounterExample), MaxCounterExample)
	}
	if len(c.TaskType) > MaxTaskType {
		return memory.Invalidf(op, "task_type is %d bytes; the limit is %d: name the kind of task, e.g. reporting", len(c.TaskType), MaxTaskType)
	}
	if len(c.Entities) > MaxEntities {
		return memory.Invalidf(op, "entities has %d items; the limit is %d: name the files, tools or systems the memory is about", len(c.Entities), MaxEntities)
	}
	for i, e := range c.Entities {
		if len(e) > MaxEntity {
			return memory.Invalidf(op, "entity %d is %d bytes; the limit is %d", i, len(e), MaxEntity)
		}
	}
	if len(c.Evidence) > MaxEvidence {
		return memory.Invalidf(op, "evidence has %d event IDs; the limit is %d", len(c.Evidence), MaxEvidence)
	}
	if !c.Scope.Valid() {
		return memory.Invalidf(op, "scope %q is not one of shared, user:ID, agent:ID", c.Scope)
	}
	return nil
}

// ClipCandidate fits a distilled candidate into the limits, so that a long
// error line or a lesson seen in many episodes shortens instead of failing
// the merge: texts are cut at a character boundary, entities and evidence
// keep their first entries, an overlong task type is dropped. What a
// caller states directly is not clipped but refused (ValidateCandidate).
func ClipCandidate(c memory.Candidate) memory.Candidate {
	c.Content = clipBytes(c.Content, MaxContent)
	c.CounterExample = clipBytes(c.CounterExample, MaxCounterExample)
	if len(c.TaskType) > MaxTaskType {
		c.TaskType = ""
	}
	var ents []string
	for _, e := range c.Entities {
		if len(e) <= MaxEntity && len(ents) < MaxEntities {
			ents = append(ents, e)
		}
	}
	c.Entities = ents
	if len(c.Evidence) > MaxEvidence {
		c.Evidence = c.Evidence[:MaxEvidence]
	}
	return c
}

// clipBytes cuts s to at most n bytes at a character boundary, with an
// ellipsis.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// LedgerReply is the ledger's answer to one request.
type LedgerReply struct {
	RequestID string `json:"request_id"`
	// Decisions are the decisions applied, without the states before and
	// the neighbours considered, which the decision log keeps; a reply
	// carried across a continue-as-new keeps only their IDs and the
	// versions written (see Compact).
	Decisions []memory.Decision `json:"decisions,omitempty"`
	Forgotten *ForgetReceipt    `json:"forgotten,omitempty"`
	// Decayed counts what a decay request moved (its decisions are in
	// the decision log only: a sweep can move any number of memories).
	Decayed *DecayCounts `json:"decayed,omitempty"`
	// Code and Error are set when the request failed for good.
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	// Repeat is set when the request had been answered before: this is
	// that answer, and nothing was applied again.
	Repeat bool `json:"repeat,omitempty"`
}

// DecayPageSize is how many memories one DecayPage activity looks at.
const DecayPageSize = 200

// DecayPageInput asks to apply one page of a tenant's decay sweep.
type DecayPageInput struct {
	Tenant     string    `json:"tenant"`
	RequestID  string    `json:"request_id"`
	WorkflowID string    `json:"workflow_id,omitempty"`
	After      string    `json:"after,omitempty"` // the last memory ID of the page before
	Now        time.Time `json:"now"`
}

// DecayCounts counts the memories a decay sweep (or one page of it)
// moved, by new status. Next is the cursor of the page after ("" at the
// end).
type DecayCounts struct {
	Changed int            `json:"changed"`
	ByTo    map[string]int `json:"by_status,omitempty"`
	Next    string         `json:"next,omitempty"`
}

// Add adds a page's counts.
func (c *DecayCounts) Add(p DecayCounts) {
	c.Changed += p.Changed
	for k, n := range p.ByTo {
		if c.ByTo == nil {
			c.ByTo = map[string]int{}
		}
		c.ByTo[k] += n
	}
}

// PlanMergeInput asks how to merge one candidate.
type PlanMergeInput struct {
	Tenant     string           `json:"tenant"`
	RequestID  string           `json:"request_id"`
	Index      int              `json:"index"`
	EpisodeID  string           `json:"episode_id,omitempty"`
	WorkflowID string           `json:"workflow_id,omitempty"`
	Candidate  memory.Candidate `json:"candidate"`
	UserStated bool             `json:"user_stated,omitempty"`
	Now        time.Time        `json:"now"`
}

// PlanChangeInput asks how to apply a correct, feedback, undo or decay
// request.
type PlanChangeInput struct {
	Request LedgerRequest `json:"request"`
	Now     time.Time     `json:"now"`
}

// ForgetReceipt reports what a forget removed or rebuilt, per store.
type ForgetReceipt struct {
	// Memories were deleted for good; Rebuilt lost the forgotten source
	// episodes but keep others.
	Memories []string `json:"memories"`
	Rebuilt  []string `json:"rebuilt,omitempty"`
	// Private are the memories among Memories that were in the forgotten
	// user's own scope; the others were shared, learned only from them.
	Private  []string `json:"private,omitempty"`
	Sessions []string `json:"sessions,omitempty"`
	Episodes []string `json:"episodes,omitempty"`
	// Summaries are typical episodes that stood for forgotten episodes:
	// rebuilt from the rest, or removed when too few remain.
	Summaries []string `json:"summaries,omitempty"`
	// Store counts ClickHouse rows removed; Vectors and EpisodeVectors the
	// documents removed from the vector index.
	Store          memory.PurgeCounts `json:"store"`
	Vectors        int                `json:"vectors"`
	EpisodeVectors int                `json:"episode_vectors"`
	Tombstones     int                `json:"tombstones"`
}

// Add adds o's counts to r.
func (r *ForgetReceipt) Add(o ForgetReceipt) {
	r.Memories = append(r.Memories, o.Memories...)
	r.Rebuilt = append(r.Rebuilt, o.Rebuilt...)
	r.Sessions = append(r.Sessions, o.Sessions...)
	r.Episodes = append(r.Episodes, o.Episodes...)
	r.Summaries = append(r.Summaries, o.Summaries...)
	r.Store.Events += o.Store.Events
	r.Store.Episodes += o.Store.Episodes
	r.Store.Memories += o.Store.Memories
	r.Store.Versions += o.Store.Versions
	r.Store.Decisions += o.Store.Decisions
	r.Vectors += o.Vectors
	r.EpisodeVectors += o.EpisodeVectors
	r.Tombstones += o.Tombstones
}

// ForgetInput names what to forget: memories, sessions, a user's sessions,
// or (All) the whole tenant. Everything derived from it goes too.
type ForgetInput struct {
	Tenant     string   `json:"tenant"`
	MemoryIDs  []string `json:"memory_ids,omitempty"`
	SessionIDs []string `json:"session_ids,omitempty"`
	UserID     string   `json:"user_id,omitempty"`
	All        bool     `json:"all,omitempty"`
}

// Validate checks that in names a tenant and something to forget.
func (in ForgetInput) Validate() error {
	const op = "forget"
	if err := memory.ValidateTenant(op, in.Tenant); err != nil {
		return err
	}
	if len(in.MemoryIDs) == 0 && len(in.SessionIDs) == 0 && in.UserID == "" && !in.All {
		return memory.Invalidf(op, "name what to forget: memory IDs, session IDs, a user, or all")
	}
	for _, s := range in.SessionIDs {
		if err := memory.ValidateSessionID(op, s); err != nil {
			return err
		}
	}
	return nil
}

// ForgetPlan is what a forget touches, found by following lineage:
// user → sessions → events and episodes → memories and summaries.
type ForgetPlan struct {
	Tenant   string   `json:"tenant"`
	Sessions []string `json:"sessions,omitempty"`
	Episodes []string `json:"episodes,omitempty"`
	// Memories are deleted (every source forgotten, or named directly);
	// Rebuild keep other sources.
	Memories  []string `json:"memories,omitempty"`
	Rebuild   []string `json:"rebuild,omitempty"`
	Summaries []string `json:"summaries,omitempty"`
	All       bool     `json:"all,omitempty"`
	// Private are the memories among Memories in the forgotten user's own
	// scope; the rest of Memories are shared ones learned only from them.
	Private []string `json:"private,omitempty"`
}
