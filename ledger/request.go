package ledger

import (
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/memory"
)

// Op is an operation on a tenant's semantic memory.
type Op string

// Ledger operations.
const (
	OpMerge    Op = "merge"    // merge candidates distilled from an episode
	OpStore    Op = "store"    // merge one memory stated directly
	OpCorrect  Op = "correct"  // change a memory's text or mark it outdated
	OpFeedback Op = "feedback" // a task that used a memory succeeded or failed
	OpUndo     Op = "undo"     // restore the state before a decision
	OpForget   Op = "forget"   // delete memories for good
	OpDecay    Op = "decay"    // move memories between live, cold and archived
	OpRelease  Op = "release"  // a person releases a memory from quarantine
)

// Request is one operation for a tenant's ledger. ID makes it
// idempotent: the ledger applies a request ID once.
type Request struct {
	ID      string `json:"id"`
	Tenant  string `json:"tenant"`
	Op      Op     `json:"op"`
	ReplyTo string `json:"reply_to,omitempty"` // a workflow ID to signal the reply to

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
	// OpCorrect: "pin" or "unpin" instead of new content.
	Pin        string `json:"pin,omitempty"`
	Helped     bool   `json:"helped,omitempty"`
	DecisionID string `json:"decision_id,omitempty"`
	Force      bool   `json:"force,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Validate checks a request before it is queued.
func (r Request) Validate() error {
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
		for i := range r.Candidates {
			if err := ValidateCandidate(r.Merged(i)); err != nil {
				return memory.Invalidf(op, "candidate %d: %s", i, memory.ErrorMessage(err))
			}
		}
	case OpCorrect:
		if len(r.MemoryIDs) != 1 {
			return memory.Invalidf(op, "correct needs exactly one memory_id")
		}
		if r.Pin != "" && r.Pin != "pin" && r.Pin != "unpin" {
			return memory.Invalidf(op, "pin is %q; give pin or unpin", r.Pin)
		}
		if r.Content == "" && !r.Outdated && r.Pin == "" {
			return memory.Invalidf(op, "correct needs new content, outdated=true, or pin")
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

// Merged is candidate i as the ledger merges it: clipped when it was
// distilled (OpMerge, ClipCandidate), as stated otherwise.
func (r Request) Merged(i int) memory.Candidate {
	if r.Op == OpMerge {
		return ClipCandidate(r.Candidates[i])
	}
	return r.Candidates[i]
}

// MergeDecisionIDs are the IDs of the decisions a merge or store request
// makes on its candidates, in order: the same on every retry of it.
func (r Request) MergeDecisionIDs() []string {
	ids := make([]string, len(r.Candidates))
	for i := range r.Candidates {
		ids[i] = MergeDecisionID(r.Tenant, r.ID, i, r.Merged(i))
	}
	return ids
}

// MergeDecisionID is the ID of the decision on c, the index-th candidate
// (as merged) of a request.
func MergeDecisionID(tenant, requestID string, index int, c memory.Candidate) string {
	return memory.DecisionID(tenant, requestID, index, memory.ContentHash(c.Kind, c.Content))
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
