package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/merge"
	"github.com/hindsight-memory/hindsight/plan"
)

// MergeRequestsInput asks to merge the candidates of consecutive merge and
// store requests of one tenant's ledger, in order.
type MergeRequestsInput struct {
	Requests []ledger.Request `json:"requests"`
	Now      time.Time        `json:"now"`
}

// MergeRequests merges the candidates of several merge and store requests
// in one activity: for each candidate in arrival order, it plans the merge
// against the current state (which includes every decision applied before
// it, in this batch too) and applies it, as the ledger would one request,
// one candidate, at a time; so the decisions are the ones it would make one
// by one. The batch's writes are two, whatever its size: its decisions,
// then their versions (batchWrites). A retry after a crash applies nothing
// twice: a candidate whose decision is logged already gets that decision
// back, and versions the log has and the store lacks are stored first
// (redo). A request that fails for good (invalid input, a conflict that
// persists) gets its error reply and the others go on; any other failure
// fails the activity, which is retried, after what was decided before it
// is written.
func (a *Activities) MergeRequests(ctx context.Context, in MergeRequestsInput) ([]ledger.Reply, error) {
	// The reads every batch makes are independent of each other, and so is
	// the look-up of its candidates' neighbours as they are before it
	// begins: they run at once.
	var batch map[string]*batchState
	var batchErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		batch, batchErr = a.readBatch(ctx, in.Requests)
	}()
	warm := a.warm(ctx, in.Requests)
	logged, err := a.loggedDecisions(ctx, in.Requests)
	<-read
	pre := <-warm
	if err = cmp.Or(err, batchErr); err != nil {
		return nil, temporalError(err)
	}
	// A retry: what the log has and the store lacks is stored first, and
	// then the batch's state is read again (what warm read is older).
	redone, err := a.redo(ctx, logged)
	if err != nil {
		return nil, temporalError(err)
	}
	if redone {
		if batch, err = a.readBatch(ctx, in.Requests); err != nil {
			return nil, temporalError(err)
		}
	}
	for tenant, b := range batch {
		b.vectors = pre.vectors
		if !redone {
			b.saw(pre.found[tenant])
		}
	}
	w := a.batchWriter()
	replies := make([]ledger.Reply, 0, len(in.Requests))
	for _, req := range in.Requests {
		reply := ledger.Reply{RequestID: req.ID}
		if err := req.Validate(); err != nil {
			replies = append(replies, reply.Failed(memory.ErrorCode(err), memory.CallerMessage(err)))
			continue
		}
		// A request whose every decision was logged before this batch
		// began was applied before (the ledger no longer remembers it, or
		// a retry of this batch): it is answered from the log, a repeat.
		reply.Repeat = len(req.Candidates) > 0
		for _, id := range req.MergeDecisionIDs() {
			if _, ok := logged[id]; !ok {
				reply.Repeat = false
			}
		}
		for i := range req.Candidates {
			d, err := a.mergeOne(ctx, PlanMergeInput{
				Tenant: req.Tenant, RequestID: req.ID, Index: i, EpisodeID: req.EpisodeID,
				WorkflowID: req.WorkflowID, Candidate: req.Merged(i), UserStated: req.Op == ledger.OpStore, Now: in.Now,
			}, logged, batch[req.Tenant], w)
			if err != nil {
				code, msg, final := failure(err)
				if !final {
					// Transient: retry the batch, which replays what was
					// decided before this candidate from the log.
					if ferr := w.flush(ctx); ferr != nil {
						return nil, temporalError(ferr)
					}
					return nil, err
				}
				reply = reply.Failed(code, msg)
				reply.Repeat = false
				break
			}
			reply.Decisions = append(reply.Decisions, d)
		}
		replies = append(replies, reply)
	}
	if err := w.flush(ctx); err != nil {
		return nil, temporalError(err)
	}
	return ledger.Fit(replies, ledger.MaxPayloadBytes), nil
}

// MergesInProcess reports whether a merge batch is a short step on this
// worker: its judge and its embedder call no model, so a batch is the
// store's reads and writes and milliseconds of work. The ledger then runs
// its batches as local activities.
func (a *Activities) MergesInProcess(ctx context.Context) (bool, error) {
	return inProcess(a.Judge) && strings.HasPrefix(a.Embedder.Model(), "offline-"), nil
}

// inProcess reports whether v (a judge, an extractor) says it calls no
// model: its work is milliseconds in this process.
func inProcess(v any) bool {
	p, ok := v.(interface{ InProcess() bool })
	return ok && p.InProcess()
}

// loggedDecisions reads, in one query, the decisions of the batch's
// candidates that are logged already (a retry after a crash); the others
// need no look-up of their own.
func (a *Activities) loggedDecisions(ctx context.Context, reqs []ledger.Request) (map[string]memory.Decision, error) {
	byTenant := map[string][]string{}
	for _, req := range reqs {
		byTenant[req.Tenant] = append(byTenant[req.Tenant], req.MergeDecisionIDs()...)
	}
	return a.logged(ctx, byTenant)
}

// logged reads the decisions among ids (by tenant) that are logged, by ID.
func (a *Activities) logged(ctx context.Context, byTenant map[string][]string) (map[string]memory.Decision, error) {
	out := map[string]memory.Decision{}
	for tenant, ids := range byTenant {
		if memory.ValidateTenant("merge", tenant) != nil {
			continue // the request fails its validation below
		}
		if f, ok := a.Store.(loggedIDs); ok {
			// Which are logged first, from the ID column alone; the
			// decisions themselves only for those (a retry).
			var err error
			if ids, err = f.LoggedDecisionIDs(ctx, tenant, ids); err != nil {
				return nil, err
			}
			if len(ids) == 0 {
				continue
			}
		}
		ds, err := a.Store.Decisions(ctx, memory.DecisionFilter{Tenant: tenant, IDs: ids})
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			out[d.ID] = d
		}
	}
	return out, nil
}

// loggedIDs says which decisions are logged without reading them
// (clickhouse.Store).
type loggedIDs interface {
	LoggedDecisionIDs(ctx context.Context, tenant string, ids []string) ([]string, error)
}

// failure says whether err is final (a non-retryable application error,
// which temporalError makes of every domain error), with its code and
// message for the reply.
func failure(err error) (code, message string, final bool) {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.NonRetryable() {
		return cmp.Or(appErr.Type(), memory.EINTERNAL), appErr.Message(), true
	}
	return "", "", false
}

// mergeOne plans one candidate and applies the plan; if the state moved in
// between (ECONFLICT), it plans once more. logged holds the batch's
// decisions that were logged before it began: the others are new. With w
// set, the decision is staged in w, to be written with the batch's others
// (batchWrites); without, it is written at once.
//
// The plan is checked against the state it was made from, read in this
// call: the ledger is the tenant's one writer, and the batch applies its
// candidates one after the other, so nothing can move it in between, and
// reading it again would cost a query for nothing. The decision is logged
// without a look-up for the same reason.
func (a *Activities) mergeOne(ctx context.Context, in PlanMergeInput, logged map[string]memory.Decision, batch *batchState, w *batchWrites) (memory.Decision, error) {
	var err error
	for attempt := range 2 {
		var d memory.Decision
		var read map[string]memory.Memory
		known := batch
		if attempt > 0 {
			known = nil // the state moved after all: read it afresh
		}
		if d, read, err = a.planMerge(ctx, in, logged, attempt == 0, known); err != nil {
			return d, err
		}
		if _, ok := logged[d.ID]; ok {
			return d, nil // applied before the ledger lost track: replay it
		}
		var applied memory.Decision
		if w != nil {
			applied, err = w.stage(ctx, d, read)
		} else {
			applied, err = a.applyPlanned(ctx, d, read)
		}
		if err == nil {
			batch.saw(applied.After)
			return applied, nil
		}
		if memory.ErrorCode(err) != memory.ECONFLICT {
			return d, err
		}
	}
	return memory.Decision{}, err
}

// applyPlanned writes a decision not yet logged, checked against read: the
// current memories it was planned from (or, for ApplyDecision, read again
// since), keyed by ID.
func (a *Activities) applyPlanned(ctx context.Context, d memory.Decision, read map[string]memory.Memory) (memory.Decision, error) {
	if err := verifyPlanned(d, read); err != nil {
		return memory.Decision{}, err
	}
	if len(d.After) > 0 {
		write := a.Indexer.Write
		if w, ok := a.Indexer.(knownWriter); ok {
			write = func(ctx context.Context, ms []memory.Memory) error {
				return w.WriteAfter(ctx, ms, slices.Collect(maps.Values(read)))
			}
		}
		if err := write(ctx, d.After); err != nil {
			return memory.Decision{}, temporalError(fmt.Errorf("write decision %s: %w", d.ID, err))
		}
	}
	log := a.Store.LogDecision
	if ap, ok := a.Store.(decisionAppender); ok {
		log = func(ctx context.Context, d memory.Decision) error {
			return ap.AppendDecisions(ctx, []memory.Decision{d})
		}
	}
	if err := log(ctx, d); err != nil {
		return memory.Decision{}, temporalError(err)
	}
	return d, nil
}

// verifyPlanned checks a decision against read, the current memories it
// was planned from: ECONFLICT if one moved since, unless only the
// decision's own writes moved them (a retry after some landed).
func verifyPlanned(d memory.Decision, read map[string]memory.Memory) error {
	if err := plan.VerifyCurrent(d, read); err != nil && !halfApplied(d, read) {
		return temporalError(err)
	}
	return nil
}

// knownWriter writes memory versions given what the store held of them
// (index.Indexer.WriteAfter).
type knownWriter interface {
	WriteAfter(ctx context.Context, ms, before []memory.Memory) error
}

// decisionAppender logs decisions known to be new, in one write, without
// looking them up (clickhouse.Store).
type decisionAppender interface {
	AppendDecisions(ctx context.Context, ds []memory.Decision) error
}

// PlanMerge decides what to do with one candidate memory, in the order the
// design asks for: normalise; exact-duplicate check on the content hash (no
// judge); vector pre-filter among live memories of the same tenant and
// kind; the judge's verdict; then the plan of versions to write. It writes
// nothing, so a retry simply plans again.
func (a *Activities) PlanMerge(ctx context.Context, in PlanMergeInput) (memory.Decision, error) {
	d, _, err := a.planMerge(ctx, in, nil, false, nil)
	return d, err
}

// planMerge is PlanMerge, returning as well the current memories the plan
// was made from. With known set, the batch has looked the decision up
// already (in logged). With batch set, the batch's state answers the
// reads it holds (see batchState).
func (a *Activities) planMerge(ctx context.Context, in PlanMergeInput, logged map[string]memory.Decision, known bool, batch *batchState) (memory.Decision, map[string]memory.Memory, error) {
	c := normalizeCandidate(in.Candidate)
	if err := ledger.ValidateCandidate(c); err != nil {
		return memory.Decision{}, nil, temporalError(err)
	}
	hash := memory.ContentHash(c.Kind, c.Content)
	id := ledger.MergeDecisionID(in.Tenant, in.RequestID, in.Index, c)
	if d, ok := logged[id]; ok {
		return d, nil, nil
	}
	if !known {
		if d, err := a.Store.Decision(ctx, in.Tenant, id); err == nil {
			if logged != nil {
				logged[id] = d
			}
			return d, nil, nil // applied before the ledger lost track: replay it
		} else if !memory.IsNotFound(err) {
			return memory.Decision{}, nil, temporalError(err)
		}
	}

	mi := plan.MergeInput{
		Op:        plan.Op{DecisionID: id, WorkflowID: in.WorkflowID, Now: in.Now, Lifecycle: a.Merge.Lifecycle, Screener: a.Screener},
		Tenant:    in.Tenant,
		EpisodeID: in.EpisodeID,
		Candidate: c,
	}
	var exact []memory.Memory
	var err error
	if batch != nil {
		exact = batch.exact(hash, c.Scope.Norm())
	} else if exact, err = a.Store.Memories(ctx, memory.MemoryFilter{
		Tenant: in.Tenant, ContentHash: hash, Scopes: []memory.Scope{c.Scope.Norm()}, Statuses: exactStatuses,
	}); err != nil {
		return memory.Decision{}, nil, temporalError(err)
	}
	read := map[string]memory.Memory{}
	if len(exact) > 0 {
		read[exact[0].ID] = exact[0]
		mi.Exact = &exact[0]
	} else {
		if mi.Neighbors, err = a.neighbors(ctx, in.Tenant, c, batch); err != nil {
			return memory.Decision{}, nil, temporalError(err)
		}
		for _, n := range mi.Neighbors {
			read[n.Memory.ID] = n.Memory
		}
		if len(mi.Neighbors) > 0 {
			activity.RecordHeartbeat(ctx, "judging")
			if mi.Judgement, err = a.Judge.Judge(ctx, c, mi.Neighbors); err != nil {
				return memory.Decision{}, nil, temporalError(fmt.Errorf("judge candidate %d: %w", in.Index, err))
			}
		} else {
			mi.Judgement = memory.Judgement{Verdict: memory.VerdictDistinct, Judge: "prefilter",
				Reason: fmt.Sprintf("no live %s memory is similar enough (similarity ≥ %.2f) or shares enough words to judge", c.Kind, a.threshold())}
		}
	}
	planner := plan.Merge
	if in.UserStated {
		planner = plan.Store
	}
	d, err := planner(mi)
	return d, read, temporalError(err)
}

// neighbors returns the live memories of the candidate's tenant and kind
// that the judge should see, as the store has them now: those whose vectors
// are at least Threshold similar (at most MaxNeighbors, most similar
// first), and those sharing the most words with it (at most
// KeywordNeighbors), whatever their vector similarity. The keyword side
// catches paraphrases a lexical embedder scores low; the judge, which only
// merges on positive evidence, decides.
func (a *Activities) neighbors(ctx context.Context, tenant string, c memory.Candidate, batch *batchState) ([]memory.Neighbor, error) {
	vec, err := batch.embedding(ctx, a.Embedder, candidateText(c))
	if err != nil {
		return nil, fmt.Errorf("embed candidate: %w", err)
	}
	found, err := a.similar(ctx, tenant, c, vec)
	if err != nil {
		return nil, err
	}
	ids := found.ids()
	if len(ids) == 0 {
		return nil, nil
	}
	// The vector index is derived; the store says what each memory is now,
	// and Prefilter drops any that is no longer live.
	current, err := batch.memories(ctx, a.Store, memory.MemoryFilter{Tenant: tenant, Scopes: []memory.Scope{c.Scope.Norm()}, IDs: ids})
	if err != nil {
		return nil, err
	}
	var byVector, byWords []memory.Neighbor
	for _, m := range current {
		n := memory.Neighbor{Memory: m, Similarity: found.sim[m.ID]}
		if slices.Contains(found.lexical, m.ID) {
			byWords = append(byWords, n)
		} else {
			byVector = append(byVector, n)
		}
	}
	threshold := a.threshold()
	out := merge.Prefilter(byVector, threshold, a.Merge.MaxNeighbors)
	return append(out, merge.Prefilter(byWords, -1, a.Merge.KeywordNeighbors)...), nil
}

// similarMemories are the IDs a neighbour search found: by vector (at
// least the threshold similar) and, of the others, by shared words; with
// each one's vector similarity.
type similarMemories struct {
	vector, lexical []string
	sim             map[string]float64
}

func (s similarMemories) ids() []string { return append(slices.Clone(s.vector), s.lexical...) }

// similar searches the index for the memories the candidate (embedded as
// vec) should be judged against: the first step of neighbors, which the
// store's reads follow.
func (a *Activities) similar(ctx context.Context, tenant string, c memory.Candidate, vec []float32) (similarMemories, error) {
	// Merging stays within the candidate's scope.
	f := memory.VectorFilter{Tenant: tenant, Scopes: []memory.Scope{c.Scope.Norm()}, Kinds: c.Kind.Comparable(), Statuses: []string{string(memory.StatusLive)}}
	hits, err := a.Index.Search(ctx, memory.CollectionMemories, vec, f, max(a.Merge.MaxNeighbors, 1))
	if err != nil {
		return similarMemories{}, fmt.Errorf("search similar memories: %w", err)
	}
	threshold := a.threshold()
	out := similarMemories{sim: map[string]float64{}}
	for _, h := range hits {
		if h.Score >= threshold {
			out.sim[h.Doc.ID] = h.Score
			out.vector = append(out.vector, h.Doc.ID)
		}
	}
	if a.Keywords == nil || a.Merge.KeywordNeighbors <= 0 {
		return out, nil
	}
	kw, err := a.Keywords.Similar(ctx, c.Content, f, a.Merge.KeywordNeighbors)
	if err != nil {
		return similarMemories{}, fmt.Errorf("search memories sharing words: %w", err)
	}
	for _, id := range kw {
		if _, ok := out.sim[id]; !ok {
			out.lexical = append(out.lexical, id)
		}
	}
	// Their similarity, for the judge and the audit log.
	docs, err := a.Index.Get(ctx, memory.CollectionMemories, tenant, out.lexical)
	if err != nil {
		return similarMemories{}, fmt.Errorf("read vectors of memories sharing words: %w", err)
	}
	for _, d := range docs {
		out.sim[d.ID] = memory.Cosine(vec, d.Vector)
	}
	return out, nil
}

// threshold is the configured pre-filter threshold, or the default for
// the active embedder (which changes with a reindex).
func (a *Activities) threshold() float64 {
	if a.Merge.Threshold > 0 {
		return a.Merge.Threshold
	}
	return merge.ThresholdFor(a.Embedder.Model())
}

func normalizeCandidate(c memory.Candidate) memory.Candidate {
	var ents []string
	for _, e := range c.Entities {
		if e = memory.NormalizeEntity(e); e != "" && !slices.Contains(ents, e) {
			ents = append(ents, e)
		}
	}
	c.Entities = ents
	return c
}

// ApplyDecision writes a planned decision: its versions (through the
// indexer, so the vector index and recall see them), then the decision to
// the audit log. The log entry is written last and is the mark of
// completion: a retry of an applied decision returns the logged one, and a
// retry of a half-applied one rewrites the same versions. Before writing it
// checks that every memory the plan changes is still at the version the
// plan read, and returns ECONFLICT otherwise.
func (a *Activities) ApplyDecision(ctx context.Context, d memory.Decision) (memory.Decision, error) {
	if logged, err := a.Store.Decision(ctx, d.Tenant, d.ID); err == nil {
		return logged, nil
	} else if !memory.IsNotFound(err) {
		return memory.Decision{}, temporalError(err)
	}
	// Planned by another activity: the state may have moved since.
	current, err := a.current(ctx, d.Tenant, d.MemoryIDs(), d.Before)
	if err != nil {
		return memory.Decision{}, temporalError(err)
	}
	return a.applyPlanned(ctx, d, current)
}

// current returns the current versions of the memories ids and before
// name, keyed by ID; missing memories are absent.
func (a *Activities) current(ctx context.Context, tenant string, ids []string, before []memory.Memory) (map[string]memory.Memory, error) {
	for _, b := range before {
		if !slices.Contains(ids, b.ID) {
			ids = append(ids, b.ID)
		}
	}
	out := map[string]memory.Memory{}
	if len(ids) == 0 {
		return out, nil
	}
	ms, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: ids, NoUsage: true})
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		out[m.ID] = m
	}
	return out, nil
}

// halfApplied reports whether every memory d touches is either at the
// version d read or already at the version d writes: a retry after some of
// its writes landed.
func halfApplied(d memory.Decision, current map[string]memory.Memory) bool {
	want := map[string]int{}
	for _, b := range d.Before {
		want[b.ID] = b.Version
	}
	for _, m := range d.After {
		cur, ok := current[m.ID]
		if !ok {
			continue
		}
		if cur.DecisionID == d.ID && cur.Version == m.Version {
			continue
		}
		if v, ok := want[m.ID]; ok && cur.Version == v {
			continue
		}
		return false
	}
	return true
}
