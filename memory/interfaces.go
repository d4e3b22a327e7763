package memory

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// EventLog is the append-only log of raw session events.
type EventLog interface {
	// AppendEvents stores events. It is idempotent: an event whose
	// (Tenant, ID) is already stored is not stored again, so retried batches
	// never produce duplicates that readers can see. Every event must carry
	// a tenant, a session ID and an ID; otherwise it returns EINVALID and
	// stores nothing.
	AppendEvents(ctx context.Context, events []Event) error
	// SessionEvents returns the events of one session of one tenant in
	// CompareEvents order (time, position, ID); an unknown session yields
	// an empty slice, not an error.
	SessionEvents(ctx context.Context, tenant, sessionID string) ([]Event, error)
	// SessionEventCount is how many events of the session are stored: the
	// length of SessionEvents, without reading the events.
	SessionEventCount(ctx context.Context, tenant, sessionID string) (int, error)
	// SessionUsers are the distinct user IDs the session's events carry,
	// sorted, "" for events of no user: whose the session is (a session
	// belongs to the user who first wrote to it, and no other user may
	// write to it). An unknown session has none.
	SessionUsers(ctx context.Context, tenant, sessionID string) ([]string, error)
	// Sessions returns the IDs of the tenant's sessions that have events of
	// userID (of any user when userID is empty), sorted. Forgetting a user
	// starts here.
	Sessions(ctx context.Context, tenant, userID string) ([]string, error)
}

// EpisodeFilter selects episodes. Tenant is required. Zero fields do not
// filter. Since/Until bound EndedAt (Since inclusive, Until exclusive).
type EpisodeFilter struct {
	Tenant    string
	IDs       []string
	SessionID string
	UserID    string
	TaskType  string
	// Entity keeps episodes that carry it (a project's name: ProjectEntity).
	Entity string
	// Project keeps episodes of the project with this identity (Project.ID).
	Project string
	Since   time.Time
	Until   time.Time
	// Statuses defaults to live and summary episodes; ask for EpisodeCold to
	// read the archive.
	Statuses []EpisodeStatus
	Limit    int // 0 means no limit
}

// EpisodeStore holds distilled episodes, hot and archived.
type EpisodeStore interface {
	// PutEpisode stores an episode, replacing any stored episode with the
	// same (Tenant, ID). Writing the same episode twice is a no-op for
	// readers. Missing tenant or ID returns EINVALID.
	PutEpisode(ctx context.Context, ep Episode) error
	// Episode returns one episode of a tenant, hot or archived, or ENOTFOUND.
	Episode(ctx context.Context, tenant, id string) (Episode, error)
	// Episodes returns the episodes matching f, newest EndedAt first.
	Episodes(ctx context.Context, f EpisodeFilter) ([]Episode, error)
	// ArchiveEpisodes moves episodes to cold storage: afterwards they are
	// returned with Status EpisodeCold and only when asked for. Unknown IDs
	// are ignored; archiving twice is a no-op.
	ArchiveEpisodes(ctx context.Context, tenant string, ids []string) error
}

// MemoryFilter selects current memory versions. Tenant is required. Zero
// fields do not filter.
type MemoryFilter struct {
	Tenant        string
	IDs           []string
	Scopes        []Scope // any of; none means every scope of the tenant
	Kinds         []Kind
	Statuses      []Status
	ContentHash   string
	ContentHashes []string  // any of these content hashes
	Source        string    // memories that name this episode as a source
	Sources       []string  // memories that name any of these episodes as a source
	UpdatedAfter  time.Time // exclusive; for change feeds
	// ByID orders the results by ID instead, after IDAfter (exclusive):
	// pages that a change of UpdatedAt does not reshuffle.
	ByID    bool
	IDAfter string
	// Newest orders newest first (UpdatedAt, then ID, both descending),
	// after the cursor Before/BeforeID when set (exclusive): a list's pages.
	Newest   bool
	Before   time.Time
	BeforeID string
	Limit    int // 0 means no limit
	// NoUsage skips the usage counts (RecallCount and LastRecalledAt stay
	// zero), which cost a second read: for callers that compare versions.
	NoUsage bool
	// RecallFields reads only the fields recall ranks by and answers with
	// (every field but those RecallOmits names), which a store may leave
	// zero: stateless recall reads its candidates so, by ID.
	RecallFields bool
}

// RecallOmits names the fields of a Memory that a read with
// MemoryFilter.RecallFields may leave zero: the store's bookkeeping, which
// recall neither ranks by nor serves (Evidence it serves only as a
// result's event IDs, when asked for; such a recall reads them). What a
// result shows of its memory (content, hash, validity, times) is read.
var RecallOmits = []string{"Evidence", "Decay", "DecayAnchor", "Helped", "Hurt", "Reason", "DecisionID"}

// WriteCounter is implemented by stores that no other process can open
// (the in-memory store, embedded chDB). MemoryWrites counts a tenant's
// memory writes and purges made through every handle of this process on
// the data, which are then all the writes there are: recall knows without
// a query whether the tenant's memories changed since it last read them.
type WriteCounter interface {
	MemoryWrites(tenant string) uint64
}

// WriteCounts keeps the counts of a WriteCounter. The zero value is ready.
type WriteCounts struct {
	any      atomic.Uint64 // writes of unknown tenants, counted for all
	byTenant sync.Map      // tenant → *atomic.Uint64
}

// Add counts a write of each tenant named.
func (c *WriteCounts) Add(tenants ...string) {
	for _, t := range tenants {
		n, _ := c.byTenant.LoadOrStore(t, new(atomic.Uint64))
		n.(*atomic.Uint64).Add(1)
	}
}

// AddAny counts a write that may be of any tenant.
func (c *WriteCounts) AddAny() { c.any.Add(1) }

// Count is a tenant's count, writes of unknown tenants included.
func (c *WriteCounts) Count(tenant string) uint64 {
	n := c.any.Load()
	if v, ok := c.byTenant.Load(tenant); ok {
		n += v.(*atomic.Uint64).Load()
	}
	return n
}

// TenantsOf lists the tenants of ms, each once.
func TenantsOf(ms []Memory) []string {
	var out []string
	for _, m := range ms {
		if !slices.Contains(out, m.Tenant) {
			out = append(out, m.Tenant)
		}
	}
	return out
}

// MemoryStore is the system of record for semantic memories: every version
// of every memory, plus usage.
type MemoryStore interface {
	// PutMemories appends memory versions. It is idempotent on
	// (Tenant, ID, Version): rewriting a version leaves one visible copy.
	// Every memory needs a tenant, an ID, a version ≥ 1, a valid kind and
	// status; otherwise EINVALID and nothing is stored.
	PutMemories(ctx context.Context, ms []Memory) error
	// Memory returns the current (highest) version of a memory, with usage
	// filled in, or ENOTFOUND.
	Memory(ctx context.Context, tenant, id string) (Memory, error)
	// Memories returns the current versions matching f, with usage filled
	// in, ordered by UpdatedAt then ID (by ID with f.ByID).
	Memories(ctx context.Context, f MemoryFilter) ([]Memory, error)
	// CurrentVersions returns the current version number of each of the
	// tenant's memories named, by ID; memories the store does not hold are
	// absent. It is the cheapest read of the store's current state: recall
	// checks its results with it.
	CurrentVersions(ctx context.Context, tenant string, ids []string) (map[string]int, error)
	// History returns every version of a memory, oldest first, or ENOTFOUND.
	History(ctx context.Context, tenant, id string) ([]Memory, error)
	// RecordUsage appends uses. RecallCount and LastRecalledAt of later
	// reads reflect the recorded UsageRecalled entries. Recording the same
	// entry (tenant, memory, kind, time) twice counts once.
	RecordUsage(ctx context.Context, us []Usage) error
}

// DecisionFilter selects decisions. Tenant is required.
type DecisionFilter struct {
	Tenant     string
	IDs        []string // any of these decisions
	MemoryID   string   // decisions whose Before or After mention this memory
	WorkflowID string
	// Before keeps decisions made before it (exclusive): a feed's next page.
	Before time.Time
	// Newest orders newest first (a feed) instead of oldest first.
	Newest bool
	Limit  int // 0 means no limit
}

// DecisionLog is the audit log of every change to semantic memory.
type DecisionLog interface {
	// LogDecision appends a decision. It is idempotent on (Tenant, ID).
	LogDecision(ctx context.Context, d Decision) error
	// Decision returns one decision or ENOTFOUND.
	Decision(ctx context.Context, tenant, id string) (Decision, error)
	// Decisions returns the decisions matching f, oldest first (newest
	// first with f.Newest).
	Decisions(ctx context.Context, f DecisionFilter) ([]Decision, error)
}

// PurgeRequest names what to delete for good. Tenant is required; with All
// set every row of the tenant goes.
type PurgeRequest struct {
	Tenant     string
	SessionIDs []string // their events
	EpisodeIDs []string // hot and archived
	MemoryIDs  []string // every version, with usage
	All        bool
}

// PurgeCounts reports rows removed per table.
type PurgeCounts struct {
	Events    int `json:"events"`
	Episodes  int `json:"episodes"`
	Memories  int `json:"memories"` // distinct memories
	Versions  int `json:"versions"`
	Decisions int `json:"decisions"`
}

// EpisodicStore is everything Hindsight keeps in its system of record
// (ClickHouse in production, chDB embedded, MemStore in tests).
type EpisodicStore interface {
	EventLog
	EpisodeStore
	MemoryStore
	DecisionLog
	// Purge deletes rows for good (forget). Decisions that mention a purged
	// memory are deleted too, so no text of it survives. It is idempotent.
	Purge(ctx context.Context, r PurgeRequest) (PurgeCounts, error)
	// Tenants lists the tenants that have any episode or memory.
	Tenants(ctx context.Context) ([]string, error)
	// Setting returns a deployment-wide setting ("" when unset); every
	// process reads the same value. PutSetting sets it; the latest write
	// wins. Keys are short names of letters, digits, '.', '_' and '-'.
	Setting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error
	// DeleteSetting removes a setting, every write of it, for good: no
	// query reads it after it returns (keys leaving the store, see
	// package keys). Deleting what is unset does nothing.
	DeleteSetting(ctx context.Context, key string) error
	// Settings returns every setting whose key starts with prefix.
	Settings(ctx context.Context, prefix string) (map[string]string, error)
	Close() error
}

// Collection names a vector collection.
type Collection string

// Vector collections.
const (
	CollectionMemories Collection = "memories"
	CollectionEpisodes Collection = "episodes"
)

// VectorDoc is one vector with the scalar fields recall filters and ranks on.
// For episodes, Kind is empty and Status is the episode status.
type VectorDoc struct {
	ID          string    `json:"id"`
	Tenant      string    `json:"tenant"`
	Vector      []float32 `json:"vector,omitempty"`
	Scope       Scope     `json:"scope,omitempty"` // "" for episodes and read as shared
	Kind        Kind      `json:"kind,omitempty"`
	TaskType    string    `json:"task_type,omitempty"`
	Status      string    `json:"status"`
	Confidence  float64   `json:"confidence"`
	Decay       float64   `json:"decay"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	RecallCount int       `json:"recall_count"`
	Pinned      bool      `json:"pinned"`
	Entities    []string  `json:"entities,omitempty"`
	// Sparse is the document's keyword vector (its BM25 term weights, see
	// package bm25), for indexes that implement HybridSearcher;
	// empty for episodes and for indexes that search densely only.
	Sparse SparseVector `json:"sparse,omitzero"`
}

// VectorFilter restricts a vector search or listing. Tenant is required and
// always applied. Zero fields do not filter. See Match for the semantics
// every VectorIndex implements.
type VectorFilter struct {
	Tenant        string
	Scopes        []Scope // any of; none means every scope of the tenant
	Kinds         []Kind
	TaskType      string
	Statuses      []string
	MinConfidence float64
	Entities      []string  // any of
	CreatedAfter  time.Time // inclusive
	CreatedBefore time.Time // exclusive
}

// VectorHit is a search result: the document without its vector, and its
// cosine similarity to the query (higher is closer).
type VectorHit struct {
	Doc   VectorDoc `json:"doc"`
	Score float64   `json:"score"`
}

// VectorIndex is the derived index of embeddings (Milvus in production, a
// local persisted index embedded). It can always be rebuilt from the
// EpisodicStore.
type VectorIndex interface {
	// Upsert inserts or replaces documents by (Tenant, ID). Every document
	// must carry a vector of the index's dimension; a mismatch returns
	// EINVALID naming both dimensions. Acknowledged writes survive a crash.
	Upsert(ctx context.Context, c Collection, docs []VectorDoc) error
	// Search returns up to k documents matching f, most similar first.
	Search(ctx context.Context, c Collection, vector []float32, f VectorFilter, k int) ([]VectorHit, error)
	// Get returns the stored documents (with vectors) among ids; unknown
	// IDs are omitted.
	Get(ctx context.Context, c Collection, tenant string, ids []string) ([]VectorDoc, error)
	// Delete removes documents by ID; unknown IDs are ignored.
	Delete(ctx context.Context, c Collection, tenant string, ids []string) error
	// List pages through the documents matching f in ID order, starting
	// after afterID, without vectors.
	List(ctx context.Context, c Collection, f VectorFilter, afterID string, limit int) ([]VectorDoc, error)
	Close() error
}

// HybridQuery is one hybrid search: a dense and a sparse (keyword) query
// vector under one filter. Each representation yields its own best
// PerSide candidates; the result is their union.
type HybridQuery struct {
	Filter VectorFilter
	// Dense is the dense query vector; nil searches the sparse side only.
	Dense []float32
	// Sparse is the query's term weights (IDF); empty searches the dense
	// side only.
	Sparse SparseVector
	// PerSide is how many candidates each side contributes (1 to 1000).
	PerSide int
	// DenseWeight is the dense side's weight when the index fuses the
	// two lists itself (Milvus's weighted reranker), in [0,1]. The caller
	// re-fuses from the two scores each hit carries, so it only decides
	// which candidates an index that must cut the union keeps.
	DenseWeight float64
}

// HybridHit is one candidate of a hybrid search: the document without its
// vectors, and its score on each side that returned it. Dense is the
// cosine similarity of the document to the dense query; Sparse is the dot
// product of the two sparse vectors, the document's BM25 score. DenseRank
// and SparseRank are its 1-based ranks among the side's PerSide best. A
// side that did not return the document has rank 0 and scores 0: an index
// that searches the sides apart knows no other score without reading the
// document's vectors.
type HybridHit struct {
	Doc        VectorDoc `json:"doc"`
	Dense      float64   `json:"dense"`
	Sparse     float64   `json:"sparse"`
	DenseRank  int       `json:"dense_rank,omitempty"`
	SparseRank int       `json:"sparse_rank,omitempty"`
}

// HybridSearcher is a VectorIndex that also searches documents' sparse
// vectors, and both at once. Implementations: store/milvus (a search of
// each side, at once), store/local and MemIndex (exact).
type HybridSearcher interface {
	VectorIndex
	// HybridSearch returns the union of the dense and the sparse side's
	// best q.PerSide documents among those matching q.Filter, each with
	// its rank and score on each side that returned it (see HybridHit),
	// best fused first. A sparse query matches only documents that share
	// a term with it.
	HybridSearch(ctx context.Context, c Collection, q HybridQuery) ([]HybridHit, error)
}

// Embedder turns text into vectors.
type Embedder interface {
	// Embed returns one vector per text, each of length Dim(). The vectors
	// are L2-normalised.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dim() int
	// Model names the embedding model; a change means re-indexing.
	Model() string
}

// Stage names a pipeline stage; each stage may use its own model.
type Stage string

// Pipeline stages that call an LLM.
const (
	StageExtract   Stage = "extract"
	StageJudge     Stage = "judge"
	StageSummarize Stage = "summarize"
	StageQuery     Stage = "query"
)

// ChatRequest is one chat completion with structured output.
type ChatRequest struct {
	Stage  Stage
	System string
	User   string
	// SchemaName and Schema request JSON output matching a JSON schema.
	SchemaName  string
	Schema      json.RawMessage
	Temperature float64
	MaxTokens   int
}

// ChatResponse is the model's answer.
type ChatResponse struct {
	Content string
	Model   string
	Usage   TokenUsage
}

// LLM is a chat model with JSON-schema output.
type LLM interface {
	// Chat runs one completion. Errors that retrying cannot fix (bad
	// request, bad credentials) return EINVALID.
	Chat(ctx context.Context, r ChatRequest) (ChatResponse, error)
}

// Extractor distils a transcript into an episode and candidate memories.
type Extractor interface {
	// Extract is deterministic for a given transcript and model. It fills
	// Episode fields it can derive; the caller sets IDs and timestamps.
	Extract(ctx context.Context, t Transcript) (Extraction, error)
}

// Judge decides how a candidate relates to its most similar live memories.
type Judge interface {
	// Judge returns one verdict. When unsure it must answer distinct: a
	// wrong merge loses information, a missed one only costs a duplicate.
	Judge(ctx context.Context, c Candidate, neighbors []Neighbor) (Judgement, error)
}
