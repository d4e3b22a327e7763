package memory

import (
	"time"
)

// DefaultTenant is the tenant used when none is configured or given.
const DefaultTenant = "default"

// Role is who produced an event in a session.
type Role string

// Roles of session events.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		return true
	}
	return false
}

// Event is one raw, append-only entry of a session: a message, a tool call
// and its result, or an error. Events are the lowest layer of lineage:
// episodes name the session they came from, memories name their episodes and,
// optionally, the events that are their evidence.
type Event struct {
	ID         string    `json:"id"` // EventID(Tenant, SessionID, Seq), or LoggedEventID
	Tenant     string    `json:"tenant"`
	SessionID  string    `json:"session_id"`
	UserID     string    `json:"user_id,omitempty"`
	Seq        int       `json:"seq"` // 0-based position in a transcript sent whole; 0 when logged
	Role       Role      `json:"role"`
	Content    string    `json:"content"`
	TS         time.Time `json:"ts"`
	ToolName   string    `json:"tool_name,omitempty"`
	ToolArgs   string    `json:"tool_args,omitempty"` // JSON text, kept verbatim
	ToolResult string    `json:"tool_result,omitempty"`
	Error      string    `json:"error,omitempty"`

	// CallID ties a tool call to its result when the agent gave the call an
	// ID (Claude Code's tool_use id, Codex's and OpenAI's call_id): an
	// agent runs several calls of one tool at once, and their results come
	// back in any order.
	CallID string `json:"call_id,omitempty"`
}

// Outcome is how a session or task ended.
type Outcome string

// Outcomes.
const (
	OutcomeSuccess Outcome = "success"
	OutcomePartial Outcome = "partial"
	OutcomeFailure Outcome = "failure"
	OutcomeUnknown Outcome = "unknown"
)

// Transcript is a whole session as handed to Hindsight at its end.
type Transcript struct {
	SessionID string    `json:"session_id"`
	Tenant    string    `json:"tenant,omitempty"`
	UserID    string    `json:"user_id,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Task      string    `json:"task,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Outcome   Outcome   `json:"outcome,omitempty"`
	Events    []Event   `json:"events"`
	// Project is where the agent worked, as ProjectOf reads it: the
	// directory, when its log says (Claude Code's cwd, Codex's
	// session_meta), or the repository's identity (Codex's remote, or
	// what gitrepo read from the directory); ProjectName is the
	// repository's name when the identity carries none (a root commit).
	// Recall prefers memories from the same project.
	Project     string `json:"project,omitempty"`
	ProjectName string `json:"project_name,omitempty"`
	// Format is the format the transcript was read from (FormatClaudeCode,
	// ...); Dropped counts the records of an agent's log left out, by
	// reason (DropThinking, ...), and Cut the texts cut to their bound.
	Format  string         `json:"format,omitempty"`
	Dropped map[string]int `json:"dropped,omitempty"`
	Cut     int            `json:"cut,omitempty"`
	// Mapped counts what the agent's harness wrote that was kept in
	// another form (a background task's notice as its call's result, a
	// compaction summary as context), by kind (MapTaskNotification, ...).
	Mapped map[string]int `json:"mapped,omitempty"`
}

// Failure is an attempt that did not work, and why.
type Failure struct {
	Attempt string `json:"attempt"`
	Cause   string `json:"cause,omitempty"`
	EventID string `json:"event_id,omitempty"`
}

// EpisodeStatus says where an episode lives.
type EpisodeStatus string

// Episode statuses.
const (
	EpisodeLive    EpisodeStatus = "live"    // in the hot episodes table
	EpisodeCold    EpisodeStatus = "cold"    // moved to the archive by consolidation
	EpisodeSummary EpisodeStatus = "summary" // a typical episode standing for a cluster
)

// Episode is one distilled session: what the task was, what worked, what
// failed and why, how it ended and what the user said about it.
type Episode struct {
	ID         string        `json:"id"` // EpisodeID(Tenant, SessionID)
	Tenant     string        `json:"tenant"`
	SessionID  string        `json:"session_id"`
	UserID     string        `json:"user_id,omitempty"`
	Agent      string        `json:"agent,omitempty"`
	Task       string        `json:"task"`
	TaskType   string        `json:"task_type,omitempty"`
	Entities   []string      `json:"entities,omitempty"`
	Steps      []string      `json:"steps,omitempty"`
	Failures   []Failure     `json:"failures,omitempty"`
	Outcome    Outcome       `json:"outcome"`
	Feedback   []string      `json:"feedback,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	EndedAt    time.Time     `json:"ended_at"`
	EventCount int           `json:"event_count"`
	Status     EpisodeStatus `json:"status"`
	// SourceEpisodes is set on typical (summary) episodes: the raw episodes
	// the summary stands for. It is the lineage consolidation keeps.
	SourceEpisodes []string  `json:"source_episodes,omitempty"`
	Extractor      string    `json:"extractor,omitempty"` // "offline" or the LLM model
	CreatedAt      time.Time `json:"created_at"`

	// Project is the identity of the repository the session worked in
	// (Project.ID) and ProjectName its name, which is also one of the
	// entities. Empty for sessions from no repository, and for those
	// stored before projects had identities, which carry the project's
	// name as an entity only.
	Project     string `json:"project,omitempty"`
	ProjectName string `json:"project_name,omitempty"`
}

// Kind is what sort of semantic memory an item is.
type Kind string

// Memory kinds.
const (
	KindPreference Kind = "preference" // what the user wants ("reports in UTC")
	KindLesson     Kind = "lesson"     // what worked or failed, as an imperative
	KindFact       Kind = "fact"       // something true about the world or the user
	KindRule       Kind = "rule"       // a constraint that must hold
)

// Kinds lists every memory kind, in a stable order.
var Kinds = []Kind{KindPreference, KindLesson, KindFact, KindRule}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case KindPreference, KindLesson, KindFact, KindRule:
		return true
	}
	return false
}

// Comparable returns the kinds whose memories a memory of kind k is
// compared with when it is merged: a preference, a rule and a fact about
// the same thing can duplicate, refine or contradict each other ("reports
// must use UTC" and "always give report times in UTC"), while a lesson is
// compared with lessons.
func (k Kind) Comparable() []Kind {
	if k == KindLesson {
		return []Kind{KindLesson}
	}
	return []Kind{KindPreference, KindRule, KindFact}
}

// Status is the lifecycle state of a semantic memory.
type Status string

// Memory statuses.
const (
	StatusLive       Status = "live"       // returned by default recall
	StatusSuperseded Status = "superseded" // replaced by a newer memory, or marked outdated
	StatusCold       Status = "cold"       // decayed below the cold threshold
	StatusArchived   Status = "archived"   // decayed below the archive threshold
	StatusForgotten  Status = "forgotten"  // tombstone left by an explicit forget
	// StatusQuarantined: the text reads as an instruction to the agent (a
	// prompt injection) rather than knowledge about the work. Never
	// recalled, merged into or indexed until a person releases it.
	StatusQuarantined Status = "quarantined"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	switch s {
	case StatusLive, StatusSuperseded, StatusCold, StatusArchived, StatusForgotten, StatusQuarantined:
		return true
	}
	return false
}

// Memory is one version of a semantic memory. Versions are immutable and
// append-only; the current state of a memory is its highest version.
type Memory struct {
	ID      string `json:"id"`
	Tenant  string `json:"tenant"`
	Version int    `json:"version"` // 1-based, +1 on every change
	// Scope is whose the memory is: the tenant's shared space, or one
	// user's or agent's. It never changes; merging stays within it.
	Scope          Scope    `json:"scope"`
	Kind           Kind     `json:"kind"`
	Content        string   `json:"content"`
	CounterExample string   `json:"counter_example,omitempty"` // "doing X failed because …"
	TaskType       string   `json:"task_type,omitempty"`
	Entities       []string `json:"entities,omitempty"`
	ContentHash    string   `json:"content_hash"` // ContentHash(Kind, Content)
	Confidence     float64  `json:"confidence"`
	// Sources are the episodes this memory was distilled from. Independent
	// sources raise confidence; forgetting a source rebuilds the memory.
	Sources []string `json:"sources,omitempty"`
	// Evidence are the event IDs that support the memory, when known.
	Evidence     []string  `json:"evidence,omitempty"`
	Status       Status    `json:"status"`
	SupersededBy string    `json:"superseded_by,omitempty"`
	Supersedes   []string  `json:"supersedes,omitempty"`
	ValidFrom    time.Time `json:"valid_from"`
	ValidTo      time.Time `json:"valid_to,omitzero"` // zero while still valid
	// Decay is the vitality score as of DecayAnchor; see EffectiveDecay.
	Decay       float64   `json:"decay"`
	DecayAnchor time.Time `json:"decay_anchor"`
	Pinned      bool      `json:"pinned,omitempty"`
	// Flags carry trust signals, e.g. FlagInstructionLike.
	Flags []string `json:"flags,omitempty"`
	// Feedback counts outcomes of tasks that used this memory.
	Helped int `json:"helped,omitempty"`
	Hurt   int `json:"hurt,omitempty"`
	// RecallCount and LastRecalledAt are usage, kept apart from versions by
	// the stores (see MemoryStore.RecordUsage) and filled in on read.
	RecallCount    int       `json:"recall_count"`
	LastRecalledAt time.Time `json:"last_recalled_at,omitzero"`
	// Reason says why this version exists ("inserted", "duplicate of …").
	Reason     string    `json:"reason,omitempty"`
	DecisionID string    `json:"decision_id,omitempty"` // the merge decision that wrote this version
	CreatedAt  time.Time `json:"created_at"`            // of version 1
	UpdatedAt  time.Time `json:"updated_at"`            // of this version
}

// Trust flags.
const (
	// FlagInstructionLike marks memory text that reads like an instruction to
	// the agent ("ignore previous instructions", "run this command"). Such
	// text is kept as data and shown with a warning, never obeyed.
	FlagInstructionLike = "instruction-like"
	// FlagReleased marks a memory a person released from quarantine: it
	// read as an instruction, and they decided it is knowledge.
	FlagReleased = "released"
	// FlagUserStated marks memories stored directly by an agent or user
	// rather than distilled from an episode.
	FlagUserStated = "user-stated"
)

// Candidate is a memory proposed by extraction, before it is merged with
// what is already known.
type Candidate struct {
	Kind           Kind     `json:"kind"`
	Content        string   `json:"content"`
	CounterExample string   `json:"counter_example,omitempty"`
	TaskType       string   `json:"task_type,omitempty"`
	Entities       []string `json:"entities,omitempty"`
	Evidence       []string `json:"evidence,omitempty"` // event IDs
	Pinned         bool     `json:"pinned,omitempty"`
	// Sources are further episodes the candidate was seen in, besides the
	// one it is merged for: consolidation promotes lessons seen across
	// several episodes, and each counts as evidence.
	Sources []string `json:"sources,omitempty"`
	// Signal is how the user framed the statement, when the words that
	// said so are not part of its content ("Again: …", "Change of plan:
	// …", "One more detail: …"): a hint for the judge.
	Signal Signal `json:"signal,omitempty"`
	// About says whether the candidate is about the session's user or
	// about the work; the ledger stores the former in the user's scope.
	About About `json:"about,omitempty"`
	// Scope, when set, is where the candidate goes whatever About says
	// (memory_store's scope argument).
	Scope Scope `json:"scope,omitempty"`
	// ObservedAt is when the statement was made: the end of the session it
	// was distilled from. A memory is dated by it (CreatedAt, ValidFrom),
	// so a session imported months later is dated when it happened. Zero
	// means now.
	ObservedAt time.Time `json:"observed_at,omitzero"`
}

// Signal is how a statement relates to what was said before, as its
// speaker framed it.
type Signal string

// Signals.
const (
	// SignalChange announces a change of mind or of state: it replaces
	// what was said before about its subject.
	SignalChange Signal = "change"
	// SignalRestate repeats something said before ("again", "as I said").
	SignalRestate Signal = "restate"
	// SignalRefine adds detail to something said before.
	SignalRefine Signal = "refine"
)

// Extraction is what an Extractor distils from one transcript.
type Extraction struct {
	Episode    Episode     `json:"episode"`
	Candidates []Candidate `json:"candidates"`
	Model      string      `json:"model"` // "offline" or the LLM model
	Usage      TokenUsage  `json:"usage"`
}

// TokenUsage counts LLM tokens spent by one call or stage.
type TokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Verdict is the merge judge's answer about a candidate and its neighbour.
type Verdict string

// Merge verdicts.
const (
	VerdictDuplicate Verdict = "duplicate" // same meaning: add the source, raise confidence
	VerdictRefines   Verdict = "refines"   // same subject, more precise: write a new version
	VerdictConflicts Verdict = "conflicts" // same subject, contradicting: supersede the old one
	VerdictDistinct  Verdict = "distinct"  // different: insert a new memory
)

// Valid reports whether v is a known verdict.
func (v Verdict) Valid() bool {
	switch v {
	case VerdictDuplicate, VerdictRefines, VerdictConflicts, VerdictDistinct:
		return true
	}
	return false
}

// Neighbor is an existing memory similar to a candidate, with its vector
// similarity.
type Neighbor struct {
	Memory     Memory  `json:"memory"`
	Similarity float64 `json:"similarity"`
}

// Judgement is a merge judge's verdict on a candidate.
type Judgement struct {
	Verdict       Verdict    `json:"verdict"`
	TargetID      string     `json:"target_id,omitempty"` // the neighbour the verdict is about
	Reason        string     `json:"reason"`
	Judge         string     `json:"judge"` // "offline" or "llm"
	Model         string     `json:"model,omitempty"`
	PromptVersion string     `json:"prompt_version,omitempty"`
	Usage         TokenUsage `json:"usage"`
}

// DecisionAction is what a logged decision did.
type DecisionAction string

// Decision actions beyond the four verdicts.
const (
	ActionMerge    DecisionAction = "merge"    // a verdict applied to a candidate
	ActionStore    DecisionAction = "store"    // a memory stored directly (memory_store)
	ActionCorrect  DecisionAction = "correct"  // memory_correct
	ActionFeedback DecisionAction = "feedback" // memory_feedback
	ActionUndo     DecisionAction = "undo"     // merge undo
	ActionForget   DecisionAction = "forget"   // memory_forget
	ActionDecay    DecisionAction = "decay"    // lifecycle sweep
	ActionPromote  DecisionAction = "promote"  // consolidation promoted a lesson
	ActionRelease  DecisionAction = "release"  // a person released a memory from quarantine
)

// ScoredCandidate is one neighbour a decision considered.
type ScoredCandidate struct {
	ID         string  `json:"id"`
	Content    string  `json:"content"`
	Similarity float64 `json:"similarity"`
}

// Decision is one audited change to semantic memory: the candidate, the
// neighbours considered with their scores, the verdict and why, who judged,
// and the exact states before and after, so that it can be undone.
type Decision struct {
	ID            string            `json:"id"`
	Tenant        string            `json:"tenant"`
	Action        DecisionAction    `json:"action"`
	WorkflowID    string            `json:"workflow_id,omitempty"`
	EpisodeID     string            `json:"episode_id,omitempty"`
	Candidate     Candidate         `json:"candidate"`
	Neighbors     []ScoredCandidate `json:"neighbors,omitempty"`
	Verdict       Verdict           `json:"verdict,omitempty"`
	TargetID      string            `json:"target_id,omitempty"`
	Reason        string            `json:"reason"`
	Judge         string            `json:"judge,omitempty"`
	Model         string            `json:"model,omitempty"`
	PromptVersion string            `json:"prompt_version,omitempty"`
	// Before holds the current versions of every memory the decision
	// changed, as they were; After holds the versions it wrote. A memory the
	// decision created has no Before entry.
	Before    []Memory  `json:"before,omitempty"`
	After     []Memory  `json:"after,omitempty"`
	Undoes    string    `json:"undoes,omitempty"` // for ActionUndo: the decision undone
	CreatedAt time.Time `json:"created_at"`
}

// MemoryIDs returns the IDs of the memories the decision wrote.
func (d Decision) MemoryIDs() []string {
	ids := make([]string, 0, len(d.After))
	for _, m := range d.After {
		ids = append(ids, m.ID)
	}
	return ids
}

// UsageKind is what happened to a memory when it was used.
type UsageKind string

// Usage kinds.
const (
	UsageRecalled UsageKind = "recalled" // returned by recall
	UsageHelped   UsageKind = "helped"   // a task that used it succeeded
	UsageHurt     UsageKind = "hurt"     // a task that used it failed
)

// Usage is one use of a memory. Usage is kept apart from memory versions so
// that recall never writes a version (and never races a merge).
type Usage struct {
	Tenant   string    `json:"tenant"`
	MemoryID string    `json:"memory_id"`
	Kind     UsageKind `json:"kind"`
	At       time.Time `json:"at"`
}

// Query is a recall request.
type Query struct {
	Tenant string `json:"tenant"`
	// UserID and AgentID are whom recall acts for: it returns their private
	// memories with the shared ones, and without them the shared ones only.
	UserID  string `json:"user_id,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
	Text    string `json:"text"`
	TopK    int    `json:"top_k"`
	Kinds   []Kind `json:"kinds,omitempty"`
	// TaskType and Entities narrow recall to memories tagged with them.
	TaskType string   `json:"task_type,omitempty"`
	Entities []string `json:"entities,omitempty"`
	// Since and Until bound the memory's creation time (CreatedAt, when it was
	// first learned): since inclusive, until exclusive.
	Since             time.Time `json:"since,omitzero"`
	Until             time.Time `json:"until,omitzero"`
	MinConfidence     float64   `json:"min_confidence,omitempty"`
	IncludeCold       bool      `json:"include_cold,omitempty"`
	IncludeSuperseded bool      `json:"include_superseded,omitempty"`
	WithEvents        bool      `json:"with_events,omitempty"`
	// Project is the directory or project the caller works in (as
	// ProjectOf reads it, ProjectName the name of an identity that carries
	// none): memories learned there rank higher (a hint, not a filter).
	Project     string `json:"project,omitempty"`
	ProjectName string `json:"project_name,omitempty"`
	// NoParse disables query understanding (time expressions and hints).
	NoParse bool `json:"no_parse,omitempty"`
	// MaxTokens bounds the text block of the response (0: the engine's
	// default, about 600 tokens).
	MaxTokens int `json:"max_tokens,omitempty"`
}

// ScoreBreakdown explains a result's final score.
type ScoreBreakdown struct {
	Similarity float64 `json:"similarity"` // cosine similarity of the query and memory vectors
	Keyword    float64 `json:"keyword"`    // normalised BM25 score
	Fused      float64 `json:"fused"`      // the fused relevance, in [0,1], relative to the other candidates
	// Relevance is the absolute relevance, in [0,1]: how much of what the
	// query asks about the memory speaks to, comparable across queries.
	Relevance float64 `json:"relevance"`
	// Relevant says whether Relevance passed the recall threshold.
	Relevant   bool    `json:"relevant"`
	Recency    float64 `json:"recency"`
	Confidence float64 `json:"confidence"`
	Usage      float64 `json:"usage"`
	Final      float64 `json:"final"`
}

// Result is one recalled memory with its score and provenance.
type Result struct {
	Memory    Memory         `json:"memory"`
	Score     float64        `json:"score"`
	Breakdown ScoreBreakdown `json:"breakdown"`
	// Episodes summarises the source episodes (task, outcome, dates).
	Episodes []EpisodeRef `json:"episodes,omitempty"`
	// Contradicts lists other returned memories this one disagrees with.
	Contradicts []string `json:"contradicts,omitempty"`
	// EventIDs are the raw events behind the memory, when asked for.
	EventIDs []string `json:"event_ids,omitempty"`
}

// EpisodeRef is the provenance of a memory: one source episode.
type EpisodeRef struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Task      string    `json:"task"`
	Outcome   Outcome   `json:"outcome"`
	EndedAt   time.Time `json:"ended_at"`
	// Expired is set when the episode is no longer stored: its events and
	// episode passed their retention, and the memory outlived them.
	Expired bool `json:"expired,omitempty"`
	// Withheld is set when the episode is another user's session, which
	// the caller does not see (Viewer.SeesEpisode): the reference is its
	// ID alone.
	Withheld bool `json:"withheld,omitempty"`
}
