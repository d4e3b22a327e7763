package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/redact"
	"github.com/hindsight-memory/hindsight/workflows"
)

// Recaller is the recall engine as the service uses it.
type Recaller interface {
	Recall(ctx context.Context, q memory.Query) (recall.Response, error)
	// Refresh makes the engine see every change committed for tenant so
	// far, so that a caller reads its own writes.
	Refresh(ctx context.Context, tenant string) error
	// Invalidate drops what the engine holds of tenant (after a forget).
	Invalidate(tenant string)
}

// Config tunes the service.
type Config struct {
	TaskQueue string
	// WaitTimeout bounds session_end with wait=true and ledger updates.
	WaitTimeout time.Duration
	// Redactor replaces secrets and treats personal data in everything
	// stored, keyed with the deployment's redaction key (package keys);
	// nil means one keyed for this process alone and Policy, for tests.
	Redactor *redact.Redactor
	// Policy is the personal-data policy when Redactor is nil (nil: the
	// default).
	Policy redact.Policy
	// KeepRawEvents are tenants whose raw events are stored unredacted
	// (some audits need them). Everything derived from them (episodes,
	// memories, LLM prompts) is still redacted, at extraction.
	KeepRawEvents []string
}

// Service implements the operations. It is safe for concurrent use.
type Service struct {
	cfg      Config
	store    memory.EpisodicStore
	temporal client.Client
	recall   Recaller
	log      *slog.Logger
	clock    func() time.Time

	ledgers *ledgerQueue
}

// New returns a Service.
func New(cfg Config, store memory.EpisodicStore, tc client.Client, r Recaller, log *slog.Logger) *Service {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = workflows.TaskQueue
	}
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = 2 * time.Minute
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, store: store, temporal: tc, recall: r, log: log, clock: time.Now,
		ledgers: newLedgerQueue(sendBatch(tc, cfg.TaskQueue), cfg.WaitTimeout)}
}

// Recall returns the memories most relevant to q. The query is redacted
// first: no secret in it reaches the embedder, the query model or a log.
func (s *Service) Recall(ctx context.Context, q memory.Query) (recall.Response, error) {
	red, err := s.redactor(ctx)
	if err != nil {
		return recall.Response{}, err
	}
	return s.recall.Recall(ctx, redactQuery(red, q))
}

// LogRequest appends one event to a live session.
type LogRequest struct {
	SessionID string
	// EventID is the client's own ID for the event, if it has one: an
	// event resent with it is stored once.
	EventID    string
	UserID     string
	Role       memory.Role
	Content    string
	ToolName   string
	ToolArgs   string
	ToolResult string
	Error      string
	// CallID is the agent's ID for a tool call, on the call and on its
	// result, which it ties together.
	CallID string
	TS     time.Time
}

// Log appends an event to a session's log. It reads nothing first and
// keeps no counter, so any number of processes can append to one session:
// each acknowledged event is stored once, under the client's ID for it or
// a new unique one, and the session's events are ordered by timestamp.
func (s *Service) Log(ctx context.Context, tenant string, r LogRequest) (memory.Event, error) {
	if err := memory.CheckFields("memory_log", memory.Field{Name: "event_id", Value: r.EventID}); err != nil {
		return memory.Event{}, err
	}
	red, err := s.redactor(ctx)
	if err != nil {
		return memory.Event{}, err
	}
	r.SessionID, r.UserID, r.ToolName = red.String(r.SessionID), red.String(r.UserID), red.String(r.ToolName)
	if !s.keepsRawEvents(tenant) {
		r.Content, r.ToolArgs, r.ToolResult, r.Error = red.String(r.Content), red.String(r.ToolArgs), red.String(r.ToolResult), red.String(r.Error)
	}
	now := s.clock().UTC()
	t := memory.Transcript{SessionID: r.SessionID, Tenant: tenant, UserID: r.UserID, Events: []memory.Event{{
		Role: r.Role, Content: r.Content, TS: r.TS, ToolName: r.ToolName, ToolArgs: r.ToolArgs,
		ToolResult: r.ToolResult, Error: r.Error, CallID: r.CallID,
	}}}
	if err := t.Normalize(tenant, now); err != nil {
		return memory.Event{}, err
	}
	e := t.Events[0]
	e.Seq, e.ID = 0, memory.LoggedEventID(tenant, r.SessionID, r.EventID, now)
	if e.UserID, err = s.sessionWriter(ctx, tenant, r.SessionID, r.UserID); err != nil {
		return memory.Event{}, err
	}
	if err := s.store.AppendEvents(ctx, []memory.Event{e}); err != nil {
		return memory.Event{}, err
	}
	return e, nil
}

// EndRequest ends a session.
type EndRequest struct {
	SessionID string
	// Events, when given, are the session's full transcript from its first
	// event; positions already logged keep what was logged.
	Events  []memory.Event
	Task    string
	Outcome memory.Outcome
	Agent   string
	UserID  string
	// StartedAt and EndedAt, when given, date the session; events without
	// a timestamp take the start (OpenAI messages carry none).
	StartedAt, EndedAt time.Time
	// Project is where the agent worked, as memory.ProjectOf reads it: a
	// repository's identity (its remote, "git:" its root commit), the
	// directory (an agent log's cwd) or a name; ProjectName names an
	// identity that carries no name. The episode keeps the identity, and
	// the name becomes an entity of the episode and its memories, so
	// recall in the same project prefers them.
	Project, ProjectName string
	// Wait blocks until the session is distilled and its memories are
	// recallable.
	Wait bool
	// KeepOpen stores the events without distilling: the session goes on
	// (an agent about to compact its context, say), and is distilled,
	// whole, when it ends.
	KeepOpen bool
}

// EndResponse says where the distillation stands.
type EndResponse struct {
	WorkflowID string                      `json:"workflow_id"`
	RunID      string                      `json:"run_id"`
	Status     string                      `json:"status"` // started, running, completed, open (KeepOpen)
	Events     int                         `json:"events"`
	Result     *workflows.SessionEndResult `json:"result,omitempty"`
}

// EndSession stores the session's events (if given) and starts its
// distillation with SignalWithStart. The workflow ID comes from the tenant
// and session, so ending a session twice distils it once: a second call
// joins the running or finished workflow.
func (s *Service) EndSession(ctx context.Context, tenant string, r EndRequest) (EndResponse, error) {
	const op = "session_end"
	if err := memory.CheckFields(op, memory.Field{Name: "user_id", Value: r.UserID, Max: memory.MaxName},
		memory.Field{Name: "agent", Value: r.Agent, Max: memory.MaxName}, memory.Field{Name: "project", Value: r.Project, Max: memory.MaxProject},
		memory.Field{Name: "project_name", Value: r.ProjectName, Max: memory.MaxName}); err != nil {
		return EndResponse{}, err
	}
	if len(r.Task) > memory.MaxTask {
		return EndResponse{}, memory.Invalidf(op, "task is %d bytes; the limit is %d: say what the session was for in a sentence or two", len(r.Task), memory.MaxTask)
	}
	red, err := s.redactor(ctx)
	if err != nil {
		return EndResponse{}, err
	}
	r.Task = red.String(r.Task)
	r.SessionID, r.UserID, r.Agent, r.Project = red.String(r.SessionID), red.String(r.UserID), red.String(r.Agent), red.String(r.Project)
	if !s.keepsRawEvents(tenant) {
		r.Events = slices.Clone(r.Events)
		red.Events(r.Events)
	}
	t := memory.Transcript{SessionID: r.SessionID, Tenant: tenant, UserID: r.UserID, Agent: r.Agent, Task: r.Task, Outcome: r.Outcome,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, Events: r.Events}
	now := s.clock().UTC()
	if len(t.Events) > 0 {
		if err := t.Normalize(tenant, now); err != nil {
			return EndResponse{}, err
		}
	} else {
		if err := memory.ValidateSessionID(op, r.SessionID); err != nil {
			return EndResponse{}, err
		}
		outcome, err := memory.ParseOutcome(string(t.Outcome))
		if err != nil {
			return EndResponse{}, err
		}
		t.Outcome = outcome
	}
	user, err := s.sessionWriter(ctx, tenant, r.SessionID, r.UserID)
	if err != nil {
		return EndResponse{}, err
	}
	if user != r.UserID {
		r.UserID = user
		for i := range t.Events {
			t.Events[i].UserID = user
		}
	}
	// How many events are stored is all this needs of them: the
	// distillation reads the transcript itself.
	stored, err := s.store.SessionEventCount(ctx, tenant, r.SessionID)
	if err != nil {
		return EndResponse{}, err
	}
	// A session with no events stored before this call was never
	// distilled (a distillation needs them).
	neverDistilled := stored == 0
	// The transcript runs from the session's first event: the positions
	// already logged (or sent by an earlier call) keep what is stored.
	if fresh := t.Events[min(stored, len(t.Events)):]; len(fresh) > 0 {
		if err := s.store.AppendEvents(ctx, fresh); err != nil {
			return EndResponse{}, fmt.Errorf("%s: store events: %w", op, err)
		}
		stored += len(fresh)
	}
	if stored == 0 {
		return EndResponse{}, memory.Invalidf(op, "session %s has no events: pass events, or log them with memory_log before ending the session", r.SessionID)
	}

	if r.KeepOpen {
		return EndResponse{Status: "open", Events: stored}, nil
	}

	id := memory.SessionWorkflowID(tenant, r.SessionID)
	if !neverDistilled {
		if id, err = s.distillationID(ctx, tenant, r.SessionID, stored); err != nil {
			return EndResponse{}, err
		}
	}
	meta := activities.SessionMeta{Task: r.Task, Outcome: t.Outcome, Agent: r.Agent, UserID: r.UserID, Project: r.Project, ProjectName: r.ProjectName}
	opts := client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: s.cfg.TaskQueue,
		// A session that was distilled stays distilled; one whose
		// distillation failed may be ended again.
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		WorkflowTaskTimeout:   activities.WorkflowTaskTimeout,
		Memo:                  map[string]any{"tenant": tenant, "session_id": r.SessionID, "events": stored},
	}
	resp := EndResponse{WorkflowID: id, Status: "started", Events: stored}
	run, err := s.temporal.SignalWithStartWorkflow(ctx, id, workflows.SignalSessionEnd, meta, opts,
		workflows.SessionEnd, workflows.SessionEndInput{Tenant: tenant, SessionID: r.SessionID})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &already):
		resp.Status = "completed"
		resp.RunID = already.RunId
	case err != nil:
		return EndResponse{}, fmt.Errorf("%s: start distillation: %w", op, err)
	default:
		resp.RunID = run.GetRunID()
	}
	if !r.Wait {
		return resp, nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, s.cfg.WaitTimeout)
	defer cancel()
	var res workflows.SessionEndResult
	if err := s.temporal.GetWorkflow(waitCtx, id, resp.RunID).Get(waitCtx, &res); err != nil {
		return resp, workflowError(op, err)
	}
	resp.Status, resp.Result = "completed", &res
	// Read your writes: the memories are recallable when this returns.
	if err := s.recall.Refresh(ctx, tenant); err != nil {
		return resp, err
	}
	return resp, nil
}

// distillationID is the workflow ID that distils a session of n stored
// events. The first distillation's ID comes from the tenant and session
// alone. A session that grew since it was distilled (an agent's session
// resumed, a log imported again after it grew) is distilled again, whole,
// under an ID that adds the event count, so the same grown transcript is
// still distilled once; its memories merge with what the first
// distillation stored, and a duplicate that already has the session as a
// source changes nothing.
func (s *Service) distillationID(ctx context.Context, tenant, sessionID string, n int) (string, error) {
	base := memory.SessionWorkflowID(tenant, sessionID)
	ep, err := s.store.Episode(ctx, tenant, memory.EpisodeID(tenant, sessionID))
	switch {
	case memory.IsNotFound(err):
		return base, nil
	case err != nil:
		return "", err
	case ep.EventCount <= 0 || ep.EventCount > n:
		return base, nil
	}
	grown := fmt.Sprintf("%s/%d", base, n)
	if ep.EventCount < n {
		return grown, nil
	}
	// Distilled at this size: by the first run, or by a grown one.
	if _, err := s.temporal.DescribeWorkflowExecution(ctx, grown, ""); err == nil {
		return grown, nil
	}
	return base, nil
}

// ledger sends one request to the tenant's ledger and, once it is
// applied, makes recall see the change.
// Requests go through the process's ledger queue (see ledgerQueue).
func (s *Service) ledger(ctx context.Context, req ledger.Request) (ledger.Reply, error) {
	req, err := named(req)
	if err != nil {
		return ledger.Reply{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WaitTimeout)
	defer cancel()
	// A request applied before, however long ago, is answered from the
	// decision log at once: its decisions' IDs derive from the request.
	if reply, ok, err := s.loggedReply(ctx, req); err != nil || ok {
		return reply, err
	}
	reply, err := s.ledgers.call(ctx, req)
	if err != nil {
		return reply, err
	}
	if err := sameRequest(req, reply); err != nil {
		return ledger.Reply{}, err
	}
	if reply.Repeat || reply.Slim {
		// A ledger carries old replies with their decisions' IDs only,
		// and slims a reply too large for its payloads: the answer is
		// read back from the decision log.
		for i, d := range reply.Decisions {
			if logged, err := s.store.Decision(ctx, req.Tenant, d.ID); err == nil {
				reply.Decisions[i] = logged
			} else if !memory.IsNotFound(err) {
				return reply, err
			}
		}
	}
	if err := s.recall.Refresh(ctx, req.Tenant); err != nil {
		return reply, err
	}
	return reply, nil
}

// sameRequest checks that a repeat answers req rather than another
// request sent under its ID: the decisions a request makes are named from
// its ID and what it asks, so a client's request ID used again for other
// content is answered with other decisions, and is an error.
func sameRequest(req ledger.Request, reply ledger.Reply) error {
	ids := req.DecisionIDs()
	if !reply.Repeat || len(ids) == 0 {
		return nil
	}
	same := len(reply.Decisions) == len(ids)
	for i := 0; same && i < len(ids); i++ {
		same = reply.Decisions[i].ID == ids[i]
	}
	if same {
		return nil
	}
	return memory.Invalidf(string(req.Op), "request_id was used before for a request with other content: a retry repeats its request as it was; send a new request_id for a new request")
}

// loggedReply answers a request whose every decision is logged already
// (a retry of a request applied before) from the decision log, as a
// repeat; ok is false when the request is new, or only partly applied,
// and goes to the ledger.
func (s *Service) loggedReply(ctx context.Context, req ledger.Request) (ledger.Reply, bool, error) {
	ids := req.DecisionIDs()
	if len(ids) == 0 {
		return ledger.Reply{}, false, nil
	}
	if f, ok := s.store.(loggedIDs); ok {
		// Which are logged, from the ID column alone (cached on the
		// embedded engine): a new request reads nothing else.
		found, err := f.LoggedDecisionIDs(ctx, req.Tenant, ids)
		if err != nil || len(found) < len(ids) {
			return ledger.Reply{}, false, err
		}
	}
	ds, err := s.store.Decisions(ctx, memory.DecisionFilter{Tenant: req.Tenant, IDs: ids})
	if err != nil || len(ds) < len(ids) {
		return ledger.Reply{}, false, err
	}
	byID := make(map[string]memory.Decision, len(ds))
	for _, d := range ds {
		byID[d.ID] = d
	}
	reply := ledger.Reply{RequestID: req.ID, Repeat: true}
	for _, id := range ids {
		d, ok := byID[id]
		if !ok {
			return ledger.Reply{}, false, nil
		}
		reply.Decisions = append(reply.Decisions, d)
	}
	return reply, true, nil
}

// loggedIDs says which decisions are logged without reading them
// (clickhouse.Store).
type loggedIDs interface {
	LoggedDecisionIDs(ctx context.Context, tenant string, ids []string) ([]string, error)
}

// CallLedger sends one request to the tenant's ledger workflow as an
// update (starting the ledger if it is not running) and waits up
// to timeout for its reply. A request without an ID gets a fresh one; the
// ID is also the update ID, so Temporal deduplicates a retried call.
func CallLedger(ctx context.Context, tc client.Client, taskQueue string, req ledger.Request, timeout time.Duration) (ledger.Reply, error) {
	req, err := named(req)
	if err != nil {
		return ledger.Reply{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var reply ledger.Reply
	if err := updateLedger(ctx, tc, taskQueue, req.Tenant, req.ID, ledger.UpdateApply, req, &reply); err != nil {
		return reply, workflowError(string(req.Op), err)
	}
	if reply.Error != "" {
		return reply, &memory.Error{Code: reply.Code, Op: string(req.Op), Message: reply.Error}
	}
	return reply, nil
}

// named gives a request without an ID a fresh one, and validates it
// before it is queued.
func named(req ledger.Request) (ledger.Request, error) {
	if req.ID == "" {
		req.ID = string(req.Op) + "/" + newID()
	}
	return req, req.Validate()
}

// workflowError unwraps Temporal's error chain to the domain error the
// activity raised, so transports show the caller what to fix.
func workflowError(op string, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case memory.EINVALID, memory.ENOTFOUND, memory.ECONFLICT:
			return &memory.Error{Code: appErr.Type(), Op: op, Message: appErr.Message()}
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &memory.Error{Code: memory.EINTERNAL, Op: op, Message: "still running after the wait timeout; it continues in the background", Err: err}
	}
	return fmt.Errorf("%s: %w", op, err)
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
