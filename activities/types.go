package activities

import (
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
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
	// Project is where the agent worked, as memory.ProjectOf reads it (a
	// repository's identity, a directory or a name), and ProjectName the
	// repository's name when the identity carries none. The episode keeps
	// the identity, and the name becomes an entity of the episode and its
	// memories.
	Project     string `json:"project,omitempty"`
	ProjectName string `json:"project_name,omitempty"`
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
	Request ledger.Request `json:"request"`
	Now     time.Time      `json:"now"`
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
