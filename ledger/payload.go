package ledger

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/memory"
)

// Temporal refuses a payload over 2 MiB (its blob size limit): a workflow
// task that would send one fails, and fails again on every retry, so a
// ledger that once tried to is wedged for good. Every payload the ledger
// receives, sends or keeps (requests, replies, activity inputs and
// results, its carried state) is therefore bounded by construction, in
// encoded bytes (JSON escapes each of < > & and control characters as six
// bytes), with a margin of half the limit.
const (
	// MaxPayloadBytes bounds one payload of the ledger's: an update's
	// replies, a merge batch's input or result, the state it continues
	// with.
	MaxPayloadBytes = 1 << 20
	// MaxCandidateBytes bounds one candidate as encoded; with
	// MaxCandidatesPerRequest of them a request stays within
	// MaxRequestBytes.
	MaxCandidateBytes = 24 << 10
	// MaxRequestBytes bounds one request as encoded.
	MaxRequestBytes = MaxCandidatesPerRequest*MaxCandidateBytes + 64<<10
	// MaxRequestID bounds the IDs the ledger's own callers make (request,
	// workflow and reply-to IDs derive from session IDs); IDs a client
	// gives are bounded at the edge by memory.MaxID.
	MaxRequestID = 1024
	// MaxReason bounds the reason a person gives (a release from
	// quarantine).
	MaxReason = 2000
	// MaxForgetIDs bounds the memories one forget request names; the
	// Forget workflow sends larger sets in parts.
	MaxForgetIDs = 2000
	// MaxErrorBytes bounds the error a reply carries, and
	// maxCarriedErrorBytes the error a carried reply keeps.
	MaxErrorBytes        = 1024
	maxCarriedErrorBytes = 256
	// slimReason bounds a slim decision's reason.
	slimReason = 200
)

// EncodedSize is the size of v as Temporal's default JSON payload
// converter encodes it (encoding/json, which escapes HTML characters).
func EncodedSize(v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(raw)
}

// clipError makes an error message safe to keep: control characters as
// spaces, at most n bytes, cut at a character boundary.
func clipError(msg string, n int) string {
	msg = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, msg)
	return clipBytes(msg, n)
}

// Slim is r with its decisions cut to what names them (ID, verdict,
// target, a short reason, the kinds and IDs of the memories written) and
// Slim set: the full decisions are in the decision log, where a caller
// that needs them reads them back (service). A forget's receipt keeps its
// counts and lists, which its request bounds (MaxForgetIDs).
func Slim(r Reply) Reply {
	if r.Slim || len(r.Decisions) == 0 {
		return r
	}
	out := r
	out.Slim = true
	out.Decisions = make([]memory.Decision, len(r.Decisions))
	for i, d := range r.Decisions {
		s := memory.Decision{
			ID: d.ID, Tenant: d.Tenant, Action: d.Action, WorkflowID: d.WorkflowID, EpisodeID: d.EpisodeID,
			Verdict: d.Verdict, TargetID: d.TargetID, Reason: clipError(d.Reason, slimReason),
			Judge: d.Judge, Model: d.Model, Undoes: d.Undoes, CreatedAt: d.CreatedAt,
			Candidate: memory.Candidate{Kind: d.Candidate.Kind, Scope: d.Candidate.Scope},
		}
		for _, m := range d.After {
			s.After = append(s.After, memory.Memory{ID: m.ID, Tenant: m.Tenant, Version: m.Version, Scope: m.Scope,
				Kind: m.Kind, Status: m.Status, Confidence: m.Confidence, SupersededBy: m.SupersededBy, DecisionID: m.DecisionID})
		}
		out.Decisions[i] = s
	}
	return out
}

// Fit makes replies encode to at most budget bytes in all. Each is
// bounded (Bound); then, largest first and only as far as needed, their
// decisions are slimmed (Slim), then cut to bare IDs and verdicts (Bare),
// then the lists of a forget's receipt are halved (its counts per store
// stay whole). A bare reply holds its request's ID, error and decision
// IDs only, so the replies of a whole batch fit MaxPayloadBytes whatever
// the requests were.
func Fit(replies []Reply, budget int) []Reply {
	out := make([]Reply, len(replies))
	sizes := make([]int, len(replies))
	total := 2 + len(replies) // brackets and commas
	for i, r := range replies {
		out[i] = Bound(r)
		sizes[i] = EncodedSize(out[i])
		total += sizes[i]
	}
	for _, shrink := range []func(Reply) (Reply, bool){slim, Bare, halveReceipt} {
		for total > budget {
			largest := -1
			var smaller Reply
			for i := range out {
				if largest >= 0 && sizes[i] <= sizes[largest] {
					continue
				}
				if r, ok := shrink(out[i]); ok {
					largest, smaller = i, r
				}
			}
			if largest < 0 {
				break
			}
			out[largest] = smaller
			n := EncodedSize(smaller)
			total += n - sizes[largest]
			sizes[largest] = n
		}
	}
	return out
}

func slim(r Reply) (Reply, bool) {
	if r.Slim || len(r.Decisions) == 0 {
		return r, false
	}
	return Slim(r), true
}

// Bare is r with its decisions cut to their IDs, verdicts and targets,
// and Slim set, as a carried reply keeps them; ok is false when they are
// bare already.
func Bare(r Reply) (Reply, bool) {
	bare := true
	for _, d := range r.Decisions {
		if len(d.After) > 0 || d.Reason != "" || d.Candidate.Kind != "" || d.WorkflowID != "" {
			bare = false
		}
	}
	if bare {
		return r, false
	}
	out := r
	out.Slim = true
	out.Decisions = make([]memory.Decision, len(r.Decisions))
	for i, d := range r.Decisions {
		out.Decisions[i] = memory.Decision{ID: d.ID, Tenant: d.Tenant, Action: d.Action, Verdict: d.Verdict, TargetID: d.TargetID}
	}
	return out, true
}

// halveReceipt halves the lists of r's forget receipt, marking it
// Truncated; ok is false when they are empty.
func halveReceipt(r Reply) (Reply, bool) {
	f := r.Forgotten
	if f == nil {
		return r, false
	}
	n := len(f.Memories) + len(f.Private) + len(f.Rebuilt) + len(f.Sessions) + len(f.Episodes) + len(f.Summaries)
	if n == 0 {
		return r, false
	}
	capped := *f
	capped.Cap(n / 2)
	r.Forgotten = &capped
	return r, true
}

// MaxBatchItems bounds what one batch of requests (an update) may name in
// all: candidates, memories and memories to rebuild. Each makes at most
// one decision, which a bare reply holds in a few hundred bytes, so the
// replies of any batch the ledger accepts fit MaxPayloadBytes (Fit).
const MaxBatchItems = 2000

// ValidateBatch checks a batch of requests for one update: not empty,
// each for tenant with an ID, and within MaxBatchItems in all. Each
// request is validated on its own when it is applied, and an invalid one
// gets its error reply; only a batch that cannot be answered is refused.
func ValidateBatch(tenant string, reqs []Request) error {
	const op = "ledger batch"
	if len(reqs) == 0 {
		return memory.Invalidf(op, "empty batch")
	}
	items := 0
	for _, req := range reqs {
		if req.Tenant != tenant || req.ID == "" {
			return memory.Invalidf(op, "request %s for tenant %s sent to the ledger of %s", memory.Quote(req.ID), memory.Quote(req.Tenant), tenant)
		}
		items += len(req.Candidates) + len(req.MemoryIDs) + len(req.Rebuild)
	}
	if items > MaxBatchItems {
		return memory.Invalidf(op, "the batch names %d candidates and memories; the limit is %d: send it in parts", items, MaxBatchItems)
	}
	return nil
}

// DecisionIDs are the IDs of the decisions a request makes, when they
// derive from the request alone: a merge or store (one per candidate), a
// correction or release (one), feedback (one per memory). They let a
// retry find its answer in the decision log however long ago it was
// applied. Other requests (undo, forget, decay) name none.
func (r Request) DecisionIDs() []string {
	switch r.Op {
	case OpMerge, OpStore:
		return r.MergeDecisionIDs()
	case OpCorrect, OpRelease, OpFeedback:
		ids := make([]string, len(r.MemoryIDs))
		for i, id := range r.MemoryIDs {
			ids[i] = ChangeDecisionID(r.Tenant, r.ID, i, id)
		}
		return ids
	}
	return nil
}

// ChangeDecisionID is the ID of the decision a change request (correct,
// release, feedback, decay, a forget's rebuild) makes about the index-th
// memory it names, keyed by key (the memory's ID, or its ID and version).
func ChangeDecisionID(tenant, requestID string, index int, key string) string {
	return memory.DecisionID(tenant, requestID, index, key)
}
