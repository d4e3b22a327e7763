package service

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/workflows"
)

// StoreRequest stores one memory stated directly by an agent or user.
type StoreRequest struct {
	Kind           memory.Kind
	Content        string
	CounterExample string
	TaskType       string
	Entities       []string
	Pinned         bool
	// Scope is where the memory goes: "shared", "user" (UserID's), "agent"
	// (AgentID's) or a full scope such as "user:u-17". Empty follows the
	// rule distillation follows: about UserID, to their scope; else shared.
	Scope   string
	UserID  string
	AgentID string
	// RequestID is the client's ID for the request: a retry with the same
	// ID gets the first answer, and the same ID with other content is an
	// error. Without one, the same request within repeatWindow of its
	// first application is a repeat.
	RequestID string
}

// Store merges a directly stated memory like a distilled one: an exact or
// near duplicate strengthens the existing memory instead of adding one. A
// retry (the same request_id, or the same memory within repeatWindow) is
// answered with the first reply, repeat set, and changes nothing.
func (s *Service) Store(ctx context.Context, tenant string, r StoreRequest) (memory.Decision, bool, error) {
	if err := memory.CheckFields("memory_store", memory.Field{Name: "request_id", Value: r.RequestID},
		memory.Field{Name: "user_id", Value: r.UserID, Max: memory.MaxName}, memory.Field{Name: "agent_id", Value: r.AgentID, Max: memory.MaxName},
		memory.Field{Name: "scope", Value: r.Scope, Max: memory.MaxName + 16}); err != nil {
		return memory.Decision{}, false, err
	}
	red, err := s.redactor(ctx)
	if err != nil {
		return memory.Decision{}, false, err
	}
	r.UserID, r.AgentID, r.Scope = red.String(r.UserID), red.String(r.AgentID), red.String(r.Scope)
	c := memory.Candidate{Kind: r.Kind, Content: red.String(r.Content), CounterExample: red.String(r.CounterExample), TaskType: red.String(r.TaskType), Entities: redactAll(red, r.Entities), Pinned: r.Pinned}
	scope, err := memory.ParseScope(r.Scope, r.UserID, r.AgentID)
	if err != nil {
		return memory.Decision{}, false, err
	}
	c.About = llm.About(c.Kind, c.Content)
	c.Scope = scope
	c.Scope = memory.ScopeFor(c, r.UserID)
	if err := ledger.ValidateCandidate(c); err != nil {
		return memory.Decision{}, false, err
	}
	req := ledger.Request{Tenant: tenant, Op: ledger.OpStore, Candidates: []memory.Candidate{c}}
	return s.decide(ctx, req, r.RequestID, string(c.Kind), string(c.Scope), c.Content, c.CounterExample, c.TaskType, strings.Join(c.Entities, "\x1f"), fmt.Sprint(c.Pinned))
}

// repeatWindow is how long the same request without a request ID counts
// as a retry of the first (answered with its reply) rather than a new
// statement: a request identical to one first applied less than
// repeatWindow ago is that request. The window slides with each request,
// wherever the clock stands; it is no calendar bucket that a retry
// crossing its boundary would escape.
const repeatWindow = 2 * time.Minute

// identify names req so that a retry names it the same and the ledger
// answers it once: from the client's request ID when it gave one, else
// from what it asks (parts) within repeatWindow. The content's ID changes
// every repeatWindow (its period), and a request takes the previous
// period's ID when that was first applied less than repeatWindow ago (the
// decision log says when), else the current one's: so the same content
// within repeatWindow of its first application, in whichever period,
// finds that application. A retry sent while its first attempt, in the
// previous period, is still on its way to the ledger is not yet in the
// log, and is applied again: a client that retries that fast should send
// a request ID.
func (s *Service) identify(ctx context.Context, req *ledger.Request, clientID string, parts ...string) error {
	if clientID != "" {
		req.ID = ClientRequestID(req.Op, req.Tenant, clientID)
		return nil
	}
	now := s.clock().UTC()
	period := now.UnixNano() / int64(repeatWindow)
	prev := *req
	prev.ID = contentRequestID(req.Op, req.Tenant, period-1, parts)
	at, ok, err := s.appliedAt(ctx, prev)
	if err != nil {
		return err
	}
	if ok && now.Sub(at) < repeatWindow {
		req.ID = prev.ID
		return nil
	}
	req.ID = contentRequestID(req.Op, req.Tenant, period, parts)
	return nil
}

// decide names req (identify) and sends it to the tenant's ledger: its
// one decision, and whether it answers a repeat of an earlier request.
func (s *Service) decide(ctx context.Context, req ledger.Request, clientID string, parts ...string) (memory.Decision, bool, error) {
	if err := s.identify(ctx, &req, clientID, parts...); err != nil {
		return memory.Decision{}, false, err
	}
	reply, err := s.ledger(ctx, req)
	if err != nil {
		return memory.Decision{}, false, err
	}
	d, err := firstDecision(reply)
	return d, reply.Repeat, err
}

// contentRequestID is the ID of a request without a client's ID: its op,
// tenant and content, and the period of repeatWindow it is named for.
func contentRequestID(op ledger.Op, tenant string, period int64, parts []string) string {
	h := sha256.New()
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	fmt.Fprintf(h, "%d", period)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return string(op) + "/" + hex.EncodeToString(h.Sum(nil)[:12])
}

// appliedAt reports when req was first applied, from the decision log;
// ok is false when it was not.
func (s *Service) appliedAt(ctx context.Context, req ledger.Request) (at time.Time, ok bool, err error) {
	ids := req.DecisionIDs()
	if len(ids) == 0 {
		return time.Time{}, false, nil
	}
	if f, is := s.store.(loggedIDs); is {
		if found, err := f.LoggedDecisionIDs(ctx, req.Tenant, ids); err != nil || len(found) == 0 {
			return time.Time{}, false, err
		}
	}
	ds, err := s.store.Decisions(ctx, memory.DecisionFilter{Tenant: req.Tenant, IDs: ids})
	if err != nil || len(ds) == 0 {
		return time.Time{}, false, err
	}
	at = ds[0].CreatedAt
	for _, d := range ds[1:] {
		if d.CreatedAt.Before(at) {
			at = d.CreatedAt
		}
	}
	return at, true, nil
}

// ClientRequestID is the ledger request ID of an op a client named with
// its own request ID: the same for every retry of it.
func ClientRequestID(op ledger.Op, tenant, clientID string) string {
	h := sha256.New()
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	h.Write([]byte(clientID))
	return string(op) + "/c/" + hex.EncodeToString(h.Sum(nil)[:12])
}

// Correct replaces a memory's text, or marks it outdated.
func (s *Service) Correct(ctx context.Context, tenant, id, content string, outdated bool, requestID string) (memory.Decision, bool, error) {
	if err := memory.CheckFields("memory_correct", memory.Field{Name: "memory_id", Value: id}, memory.Field{Name: "request_id", Value: requestID}); err != nil {
		return memory.Decision{}, false, err
	}
	red, err := s.redactor(ctx)
	if err != nil {
		return memory.Decision{}, false, err
	}
	content = red.String(content)
	if len(content) > ledger.MaxContent {
		return memory.Decision{}, false, memory.Invalidf("correct", "content is %d bytes; the limit is %d: state one memory, concisely", len(content), ledger.MaxContent)
	}
	req := ledger.Request{Tenant: tenant, Op: ledger.OpCorrect, MemoryIDs: []string{id}, Content: content, Outdated: outdated}
	return s.decide(ctx, req, requestID, id, content, fmt.Sprint(outdated))
}

// Pin pins or unpins a memory (a pinned memory never decays), as a
// decision that can be undone.
func (s *Service) Pin(ctx context.Context, tenant, id string, pinned bool, requestID string) (memory.Decision, bool, error) {
	if err := memory.CheckFields("pin", memory.Field{Name: "memory_id", Value: id}, memory.Field{Name: "request_id", Value: requestID}); err != nil {
		return memory.Decision{}, false, err
	}
	word := map[bool]string{true: "pin", false: "unpin"}[pinned]
	req := ledger.Request{Tenant: tenant, Op: ledger.OpCorrect, MemoryIDs: []string{id}, Pin: word}
	return s.decide(ctx, req, requestID, id, word)
}

// Feedback records that a task which used the memories succeeded (helped)
// or failed, moving their confidence.
// A retry (the same request ID, or the same feedback within
// repeatWindow) moves nothing twice.
func (s *Service) Feedback(ctx context.Context, tenant string, ids []string, helped bool, requestID string) ([]memory.Decision, bool, error) {
	fields := []memory.Field{{Name: "request_id", Value: requestID}}
	for i, id := range ids {
		fields = append(fields, memory.Field{Name: fmt.Sprintf("memory_ids[%d]", i), Value: id})
	}
	if err := memory.CheckFields("memory_feedback", fields...); err != nil {
		return nil, false, err
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	req := ledger.Request{Tenant: tenant, Op: ledger.OpFeedback, MemoryIDs: ids, Helped: helped}
	if err := s.identify(ctx, &req, requestID, strings.Join(sorted, "\x1f"), fmt.Sprint(helped)); err != nil {
		return nil, false, err
	}
	reply, err := s.ledger(ctx, req)
	return reply.Decisions, reply.Repeat, err
}

// Undo restores the state before a decision. Without force it refuses when
// a later decision changed the same memories.
func (s *Service) Undo(ctx context.Context, tenant, decisionID string, force bool) (memory.Decision, error) {
	reply, err := s.ledger(ctx, ledger.Request{Tenant: tenant, Op: ledger.OpUndo, DecisionID: decisionID, Force: force})
	if err != nil {
		return memory.Decision{}, err
	}
	return firstDecision(reply)
}

// Forget deletes for good what in names (memories, sessions, a user's
// sessions, or the whole tenant) and everything derived from it, in both
// stores, with the Forget workflow, and returns its receipt. Afterwards
// recall in this process returns nothing of it.
func (s *Service) Forget(ctx context.Context, in ForgetRequest) (ForgetReceipt, error) {
	receipt, err := RunForget(ctx, s.temporal, s.cfg.TaskQueue, in, s.cfg.WaitTimeout)
	if err != nil {
		return receipt, err
	}
	// The change feed shows new versions, not deletions: rebuild.
	s.recall.Invalidate(in.Tenant)
	return receipt, nil
}

// ForgetRequest names what to forget, and ForgetReceipt says what went:
// the ledger's types, as the service's callers see them.
type (
	ForgetRequest = ledger.ForgetInput
	ForgetReceipt = ledger.ForgetReceipt
)

// RunForget runs the Forget workflow for in and waits up to timeout for
// its receipt. The same request maps to the same workflow ID.
func RunForget(ctx context.Context, tc client.Client, taskQueue string, in ledger.ForgetInput, timeout time.Duration) (ledger.ForgetReceipt, error) {
	var receipt ledger.ForgetReceipt
	if err := in.Validate(); err != nil {
		return receipt, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.ForgetWorkflowID(in), TaskQueue: taskQueue,
		// Forgetting again (new data may have arrived) runs again; a running
		// forget is joined.
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		Memo:                     map[string]any{"tenant": in.Tenant},
	}, workflows.Forget, in)
	if err != nil {
		return receipt, workflowError("forget", err)
	}
	if err := run.Get(ctx, &receipt); err != nil {
		return receipt, workflowError("forget", err)
	}
	return receipt, nil
}

func firstDecision(r ledger.Reply) (memory.Decision, error) {
	if len(r.Decisions) == 0 {
		return memory.Decision{}, memory.Invalidf("ledger", "request %s produced no decision", r.RequestID)
	}
	return r.Decisions[0], nil
}

// History is a memory's versions and the decisions that wrote them.
type History struct {
	Versions  []memory.Memory   `json:"versions"`
	Decisions []memory.Decision `json:"decisions"`
}

// History returns every version of a memory, oldest first, and the
// decisions that mention it.
func (s *Service) History(ctx context.Context, tenant, id string) (History, error) {
	vs, err := s.store.History(ctx, tenant, id)
	if err != nil {
		return History{}, err
	}
	ds, err := s.store.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, MemoryID: id})
	if err != nil {
		return History{}, err
	}
	return History{Versions: vs, Decisions: ds}, nil
}

// Decision returns one logged decision.
func (s *Service) Decision(ctx context.Context, tenant, id string) (memory.Decision, error) {
	return s.store.Decision(ctx, tenant, id)
}

// Stats summarises what a tenant's memory holds.
type Stats struct {
	Tenant     string         `json:"tenant"`
	Memories   int            `json:"memories"`
	ByStatus   map[string]int `json:"by_status"`
	LiveByKind map[string]int `json:"live_by_kind"`
	// LiveByScope counts live memories by scope kind: shared, user, agent.
	LiveByScope  map[string]int `json:"live_by_scope"`
	Episodes     int            `json:"episodes"`
	ColdEpisodes int            `json:"cold_episodes"`
	LastEpisode  time.Time      `json:"last_episode_at,omitzero"`
	LastUpdate   time.Time      `json:"last_memory_update_at,omitzero"`
	TopRecalled  []RecallCount  `json:"top_recalled,omitempty"`
}

// RecallCount is a memory and how often it was recalled.
type RecallCount struct {
	MemoryID string       `json:"memory_id"`
	Scope    memory.Scope `json:"scope"`
	Content  string       `json:"content"`
	Count    int          `json:"count"`
}

// Stats returns counts by kind and status, episodes, and the most recalled
// memories.
func (s *Service) Stats(ctx context.Context, tenant string) (Stats, error) {
	if err := memory.ValidateTenant("stats", tenant); err != nil {
		return Stats{}, err
	}
	ms, err := s.store.Memories(ctx, memory.MemoryFilter{Tenant: tenant})
	if err != nil {
		return Stats{}, err
	}
	eps, err := s.store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeSummary, memory.EpisodeCold}})
	if err != nil {
		return Stats{}, err
	}
	return Summarize(tenant, ms, eps), nil
}

// Summarize counts a tenant's current memories (with usage) and its
// episodes, hot and archived, as Stats does.
func Summarize(tenant string, ms []memory.Memory, eps []memory.Episode) Stats {
	st := Stats{Tenant: tenant, ByStatus: map[string]int{}, LiveByKind: map[string]int{}, LiveByScope: map[string]int{}}
	var top []RecallCount
	for _, m := range ms {
		if m.Status == memory.StatusForgotten {
			continue
		}
		st.Memories++
		st.ByStatus[string(m.Status)]++
		if m.Status == memory.StatusLive {
			st.LiveByKind[string(m.Kind)]++
			st.LiveByScope[m.Scope.Kind()]++
		}
		if m.UpdatedAt.After(st.LastUpdate) {
			st.LastUpdate = m.UpdatedAt
		}
		if m.RecallCount > 0 {
			top = append(top, RecallCount{MemoryID: m.ID, Scope: m.Scope.Norm(), Content: m.Content, Count: m.RecallCount})
		}
	}
	slices.SortFunc(top, func(a, b RecallCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.MemoryID, b.MemoryID))
	})
	st.TopRecalled = top[:min(len(top), 5)]
	for _, e := range eps {
		if e.Status == memory.EpisodeCold {
			st.ColdEpisodes++
			continue
		}
		st.Episodes++
		if e.EndedAt.After(st.LastEpisode) {
			st.LastEpisode = e.EndedAt
		}
	}
	return st
}

// Episode returns one episode of the tenant.
func (s *Service) Episode(ctx context.Context, tenant, id string) (memory.Episode, error) {
	return s.store.Episode(ctx, tenant, id)
}

// RecentSessions are the latest sessions in a project, newest first,
// that a caller acting for userID sees (memory.ActingFor: theirs and
// those of no user; without a user, only those of no user): those of the
// repository's identity, and those stored before episodes had one that
// carry its name as an entity. A project given by a directory git could
// not read, or by name alone, is found by the identity and by the name:
// nothing there tells two repositories of one name apart.
func (s *Service) RecentSessions(ctx context.Context, tenant string, p memory.Project, userID string, n int) ([]memory.Episode, error) {
	// Stored redacted, so looked up redacted.
	red, err := s.redactor(ctx)
	if err != nil {
		return nil, err
	}
	p.ID, p.Name, userID = red.String(p.ID), red.String(p.Name), red.String(userID)
	entity := p.Entity()
	if n <= 0 || (p.ID == "" && entity == "") {
		return nil, nil
	}
	var eps []memory.Episode
	if p.ID != "" {
		byID, err := s.store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Project: p.ID, Limit: 4 * n})
		if err != nil {
			return nil, err
		}
		eps = byID
	}
	if entity != "" {
		byName, err := s.store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Entity: entity, Limit: 4 * n})
		if err != nil {
			return nil, err
		}
		strict := p.ID != "" && !strings.HasPrefix(p.ID, memory.ProjectDirectory)
		for _, ep := range byName {
			// Another repository of the same name is another project.
			if !strict || ep.Project == "" {
				eps = append(eps, ep)
			}
		}
	}
	slices.SortStableFunc(eps, func(a, b memory.Episode) int { return b.EndedAt.Compare(a.EndedAt) })
	out := eps[:0]
	viewer := memory.ActingFor(userID, "")
	seen := map[string]bool{}
	for _, ep := range eps {
		if viewer.SeesEpisode(ep) && len(out) < n && !seen[ep.ID] {
			seen[ep.ID] = true
			out = append(out, ep)
		}
	}
	return out, nil
}

// Browse lists, newest first, up to limit live memories of the tenant in
// scopes (every scope when none), and up to limit of its episodes, for
// clients that show what memory holds.
func (s *Service) Browse(ctx context.Context, tenant string, scopes []memory.Scope, limit int) ([]memory.Memory, []memory.Episode, error) {
	ms, err := s.store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, Scopes: scopes, Statuses: []memory.Status{memory.StatusLive}})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(ms, func(a, b memory.Memory) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	eps, err := s.store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(eps, func(a, b memory.Episode) int { return b.EndedAt.Compare(a.EndedAt) })
	return ms[:min(len(ms), limit)], eps[:min(len(eps), limit)], nil
}
