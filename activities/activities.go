package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/redact"
)

// Indexer writes memory versions everywhere they live: the system of
// record, the vector index and the recall engine's keyword cache
// (index.Indexer). Write is idempotent; Remove drops memories from the
// vector index and recall (the store is purged separately).
type Indexer interface {
	Write(ctx context.Context, ms []memory.Memory) error
	Remove(ctx context.Context, tenant string, ids []string) error
	// AddKeywords gives documents written outside Write (the reindex)
	// their sparse keyword vectors and term statistics (index.Indexer).
	AddKeywords(ctx context.Context, tenant string, ms []memory.Memory, docs []memory.VectorDoc) error
}

// Activities holds the dependencies of every activity. The worker builds it
// once; its methods are registered as activities.
type Activities struct {
	Store     memory.EpisodicStore
	Index     memory.VectorIndex
	Embedder  memory.Embedder
	Extractor memory.Extractor
	Judge     memory.Judge
	Indexer   Indexer
	// Keywords finds memories sharing words with a candidate (the recall
	// engine's keyword index). Optional.
	Keywords KeywordSearcher
	// Summarizer writes typical episodes (consolidation, forget); nil
	// means the offline one.
	Summarizer consolidate.Summarizer
	// Generations are the vector index generations (reindexing).
	Generations Generations
	// Temporal and TaskQueue are used to hand requests to a tenant's ledger
	// workflow.
	Temporal  client.Client
	TaskQueue string
	Merge     MergeConfig
	Clock     func() time.Time
	Logger    *slog.Logger
	// Redactor is what extraction reads through: secrets are always
	// replaced, so no episode, memory or LLM prompt holds one, even for a
	// tenant that keeps its raw events unredacted. It must be keyed as
	// the service's is, with the deployment's redaction key (package
	// keys); nil means one keyed for this process alone
	// (redact.ForProcess), for tests.
	Redactor *redact.Redactor
	// RedactionPolicy is the personal-data policy when Redactor is nil.
	RedactionPolicy redact.Policy
	// Screener reads new memory text for poisoning (plan, promotions);
	// nil means lang/inject's Detector.
	Screener memory.Screener
}

// KeywordSearcher finds the current memories sharing words with a text,
// by ID (recall.Engine.Similar).
type KeywordSearcher interface {
	Similar(ctx context.Context, text string, f memory.VectorFilter, k int) ([]string, error)
}

// MergeConfig tunes merging.
type MergeConfig struct {
	// Threshold is the minimum vector similarity for a live memory to be
	// shown to the judge as a possible duplicate, refinement or conflict.
	Threshold float64
	// MaxNeighbors bounds how many similar memories the judge sees.
	MaxNeighbors int
	// KeywordNeighbors is how many memories sharing the most words with
	// the candidate the judge also sees, whatever their vector similarity.
	KeywordNeighbors int
	Lifecycle        memory.Lifecycle
}

func (a *Activities) now() time.Time {
	if a.Clock != nil {
		return a.Clock().UTC()
	}
	return time.Now().UTC()
}

// temporalError turns a domain error into what Temporal should do with it:
// errors retrying cannot fix become non-retryable application errors whose
// type is the domain code, so callers can still tell them apart.
func temporalError(err error) error {
	if err == nil {
		return nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return err
	}
	switch code := memory.ErrorCode(err); code {
	case memory.EINVALID, memory.ENOTFOUND, memory.ECONFLICT, memory.EMISCONFIGURED:
		return temporal.NewNonRetryableApplicationError(memory.CallerMessage(err), code, err)
	}
	return err
}

// LoadTranscript checks that a session's transcript is stored and
// summarises it. The events stay in the store: only the summary enters the
// workflow history.
func (a *Activities) LoadTranscript(ctx context.Context, ref SessionRef) (TranscriptInfo, error) {
	events, err := a.Store.SessionEvents(ctx, ref.Tenant, ref.SessionID)
	if err != nil {
		return TranscriptInfo{}, temporalError(fmt.Errorf("load transcript %s: %w", ref.SessionID, err))
	}
	if len(events) == 0 {
		return TranscriptInfo{}, temporalError(memory.Invalidf("load transcript",
			"session %s of tenant %s has no events: log them with memory_log or pass them to session_end", ref.SessionID, ref.Tenant))
	}
	info := TranscriptInfo{Events: len(events), StartedAt: events[0].TS, EndedAt: events[len(events)-1].TS}
	for _, e := range events {
		if e.UserID != "" {
			info.UserID = e.UserID
			break
		}
	}
	return info, nil
}

// transcript rebuilds a session's transcript from the store.
func (a *Activities) transcript(ctx context.Context, in ExtractInput) (memory.Transcript, error) {
	events, err := a.Store.SessionEvents(ctx, in.Session.Tenant, in.Session.SessionID)
	if err != nil {
		return memory.Transcript{}, err
	}
	if len(events) == 0 {
		return memory.Transcript{}, memory.Invalidf("extract", "session %s has no events", in.Session.SessionID)
	}
	t := memory.Transcript{
		SessionID: in.Session.SessionID, Tenant: in.Session.Tenant, UserID: in.Meta.UserID,
		Agent: in.Meta.Agent, Task: in.Meta.Task, Outcome: in.Meta.Outcome, Events: events,
		StartedAt: events[0].TS, EndedAt: events[len(events)-1].TS,
	}
	for _, e := range events {
		if t.UserID != "" {
			break
		}
		t.UserID = e.UserID // the first event that names whose session it is
	}
	// Events stored raw (a tenant that keeps them for audit, or stored
	// before redaction existed) are redacted before anything reads them.
	red, err := a.redactor(ctx)
	if err != nil {
		return memory.Transcript{}, err
	}
	red.Events(t.Events)
	t.Task = red.String(t.Task)
	return t, nil
}

// redactor is the deployment's redactor (keyed as the service's is).
func (a *Activities) redactor(context.Context) (*redact.Redactor, error) {
	return redact.Or(a.Redactor, a.RedactionPolicy), nil
}

// ExtractEpisode distils a stored session into an episode and candidate
// memories. The episode gets its deterministic ID and the session's times;
// candidates are validated, and instruction-like text is flagged later, at
// merge time, so that nothing the transcript says is obeyed.
func (a *Activities) ExtractEpisode(ctx context.Context, in ExtractInput) (memory.Extraction, error) {
	t, err := a.transcript(ctx, in)
	if err != nil {
		return memory.Extraction{}, temporalError(err)
	}
	activity.RecordHeartbeat(ctx, "extracting")
	x, err := a.Extractor.Extract(ctx, t)
	if err != nil {
		return memory.Extraction{}, temporalError(fmt.Errorf("extract session %s: %w", t.SessionID, err))
	}
	ep := &x.Episode
	ep.ID = memory.EpisodeID(t.Tenant, t.SessionID)
	ep.Tenant, ep.SessionID, ep.UserID, ep.Agent = t.Tenant, t.SessionID, t.UserID, t.Agent
	if in.Meta.Task != "" {
		ep.Task = in.Meta.Task
	}
	if in.Meta.Outcome != "" && in.Meta.Outcome != memory.OutcomeUnknown {
		ep.Outcome = in.Meta.Outcome
	}
	if ep.Outcome == "" {
		ep.Outcome = memory.OutcomeUnknown
	}
	ep.StartedAt, ep.EndedAt, ep.EventCount = t.StartedAt, t.EndedAt, len(t.Events)
	ep.Status = memory.EpisodeLive
	ep.Extractor = x.Model
	ep.CreatedAt = in.Now
	p := memory.ProjectOf(in.Meta.Project, in.Meta.ProjectName)
	ep.Project, ep.ProjectName = p.ID, p.Name
	project := p.Name
	if project != "" {
		ep.Entities = appendEntity(ep.Entities, project)
	}
	kept := x.Candidates[:0]
	for _, c := range x.Candidates {
		if ledger.ValidateCandidate(c) != nil || memory.HarnessMarkup(c.Content+c.CounterExample) != "" {
			continue // the extractor proposed something unusable (or the agent's harness talking); the episode still stands
		}
		if c.TaskType == "" {
			c.TaskType = ep.TaskType
		}
		// Said when the session happened, in the project it happened in.
		c.ObservedAt = ep.EndedAt
		if project != "" {
			c.Entities = appendEntity(c.Entities, project)
		}
		kept = append(kept, c)
	}
	x.Candidates = kept
	return x, nil
}

// LocalExtraction is ExtractInProcess's answer: the session's extraction,
// or Remote when this worker's extractor calls a model.
type LocalExtraction struct {
	Remote     bool              `json:"remote,omitempty"`
	Extraction memory.Extraction `json:"extraction"`
}

// ExtractInProcess is ExtractEpisode for a local activity: it extracts
// when the extractor calls no model (milliseconds of work in this
// process), and otherwise answers Remote without reading anything, for the
// workflow to ask a worker's queue, where a model's minutes are heartbeated
// and bounded as an activity's.
func (a *Activities) ExtractInProcess(ctx context.Context, in ExtractInput) (LocalExtraction, error) {
	if !inProcess(a.Extractor) {
		return LocalExtraction{Remote: true}, nil
	}
	x, err := a.ExtractEpisode(ctx, in)
	return LocalExtraction{Extraction: x}, err
}

func appendEntity(es []string, e string) []string {
	if slices.ContainsFunc(es, func(x string) bool { return memory.NormalizeEntity(x) == memory.NormalizeEntity(e) }) {
		return es
	}
	return append(slices.Clip(es), e)
}

// StoreEpisode writes an episode; rewriting the same episode is a no-op.
func (a *Activities) StoreEpisode(ctx context.Context, ep memory.Episode) error {
	return temporalError(a.Store.PutEpisode(ctx, ep))
}

// IndexEpisode embeds an episode's task and steps into the episodes
// collection, so that similar past tasks can be found and clustered.
func (a *Activities) IndexEpisode(ctx context.Context, ep memory.Episode) error {
	vecs, err := a.Embedder.Embed(ctx, []string{memory.EpisodeEmbedText(ep)})
	if err != nil {
		return temporalError(fmt.Errorf("embed episode %s: %w", ep.ID, err))
	}
	return temporalError(a.Index.Upsert(ctx, memory.CollectionEpisodes, []memory.VectorDoc{memory.EpisodeVectorDoc(ep, vecs[0])}))
}

// EnqueueLedger hands a request to the tenant's ledger workflow, starting
// it if needed. The ledger ignores request IDs it has already seen, so a
// retried enqueue is harmless.
func (a *Activities) EnqueueLedger(ctx context.Context, req ledger.Request) error {
	if err := req.Validate(); err != nil {
		return temporalError(err)
	}
	_, err := a.Temporal.SignalWithStartWorkflow(ctx, ledger.WorkflowID(req.Tenant), ledger.SignalRequest, req,
		LedgerStartOptions(req.Tenant, a.TaskQueue), ledger.WorkflowType, ledger.State{Tenant: req.Tenant})
	if err != nil {
		return fmt.Errorf("enqueue ledger request %s: %w", req.ID, err)
	}
	return nil
}

// ListTenants returns every tenant with episodes or memories.
func (a *Activities) ListTenants(ctx context.Context) ([]string, error) {
	ts, err := a.Store.Tenants(ctx)
	return ts, temporalError(err)
}
