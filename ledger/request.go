package ledger

import (
	"fmt"
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
	if err := r.checkFields(op); err != nil {
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
		if n := len(r.MemoryIDs) + len(r.Rebuild); n > MaxForgetIDs {
			return memory.Invalidf(op, "forget names %d memories to delete or rebuild; the limit is %d a request", n, MaxForgetIDs)
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
		return memory.Invalidf(op, "unknown op %s", memory.Quote(string(r.Op)))
	}
	if n := EncodedSize(r); n > MaxRequestBytes {
		return memory.Invalidf(op, "%s request %s encodes to %d bytes; the limit is %d: send fewer or shorter items", r.Op, memory.Quote(r.ID), n, MaxRequestBytes)
	}
	return nil
}

// checkFields bounds every identifier and text of a request, whatever its
// op, so that neither the request nor an error about it can grow past
// what the ledger's payloads hold.
func (r Request) checkFields(op string) error {
	for field, v := range map[string]string{"id": r.ID, "workflow_id": r.WorkflowID, "reply_to": r.ReplyTo} {
		if err := memory.CheckName(op, field, v, MaxRequestID); err != nil {
			return err
		}
	}
	for field, v := range map[string]string{"episode_id": r.EpisodeID, "decision_id": r.DecisionID} {
		if err := memory.CheckID(op, field, v); err != nil {
			return err
		}
	}
	for field, ids := range map[string][]string{"memory_ids": r.MemoryIDs, "rebuild": r.Rebuild, "drop_sources": r.DropSources} {
		if field != "drop_sources" && len(ids) > MaxForgetIDs {
			return memory.Invalidf(op, "%s names %d IDs; the limit is %d", field, len(ids), MaxForgetIDs)
		}
		for i, id := range ids {
			if err := memory.CheckID(op, fmt.Sprintf("%s[%d]", field, i), id); err != nil {
				return err
			}
		}
	}
	if len(r.Content) > MaxContent {
		return memory.Invalidf(op, "content is %d bytes; the limit is %d: state one memory, concisely", len(r.Content), MaxContent)
	}
	if len(r.Reason) > MaxReason {
		return memory.Invalidf(op, "reason is %d bytes; the limit is %d", len(r.Reason), MaxReason)
	}
	return nil
}

// Limits of a memory's fields, one table for every entry point (the MCP
// tools, the CLI, the service and the ledger): nothing past them reaches a
// workflow, whose payloads Temporal bounds.
const (
	MaxContent        = 4000               // bytes of a memory's text
	MaxCounterExample = 4000               // bytes of a lesson's counter-example
	MaxTaskType       = memory.MaxTaskType // bytes of a task type
	MaxEntities       = memory.MaxEntities // entities of one memory
	MaxEntity         = memory.MaxEntity   // bytes of one entity
	MaxEvidence       = 64                 // evidence event IDs of one memory

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
		return memory.Invalidf(op, "kind %s is not one of preference, lesson, fact, rule", memory.Quote(string(c.Kind)))
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
	if err := memory.CheckName(op, "task_type", c.TaskType, MaxTaskType); err != nil {
		return err
	}
	for i, e := range c.Entities {
		if err := memory.CheckName(op, fmt.Sprintf("entity %d", i), e, MaxEntity); err != nil {
			return err
		}
	}
	if !c.Scope.Valid() {
		return memory.Invalidf(op, "scope %s is not one of shared, user:ID, agent:ID", memory.Quote(string(c.Scope)))
	}
	if n := EncodedSize(c); n > MaxCandidateBytes {
		return memory.Invalidf(op, "the memory encodes to %d bytes as JSON (each of < > & and control characters takes six); the limit is %d: shorten its content or counter_example", n, MaxCandidateBytes)
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
	// Text that escapes heavily (markup, control characters) may still
	// encode past MaxCandidateBytes: halve the longer text, then drop
	// entities and evidence from the end, until it fits.
	for EncodedSize(c) > MaxCandidateBytes {
		switch {
		case len(c.CounterExample) > minClip && len(c.CounterExample) >= len(c.Content):
			c.CounterExample = clipBytes(c.CounterExample, len(c.CounterExample)/2)
		case len(c.Content) > minClip:
			c.Content = clipBytes(c.Content, len(c.Content)/2)
		case len(c.Entities) > 0:
			c.Entities = c.Entities[:len(c.Entities)-1]
		case len(c.Evidence) > 0:
			c.Evidence = c.Evidence[:len(c.Evidence)-1]
		default:
			return c // nothing left to cut: ValidateCandidate refuses it
		}
	}
	return c
}

// minClip is the shortest text ClipCandidate halves.
const minClip = 64

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
