package ledger

import "github.com/hindsight-memory/hindsight/memory"

// Reply is the ledger's answer to one request.
type Reply struct {
	RequestID string `json:"request_id"`
	// Decisions are the decisions applied, without the states before and
	// the neighbours considered, which the decision log keeps; a reply
	// carried across a continue-as-new keeps only their IDs and the
	// versions written (see Compact).
	Decisions []memory.Decision `json:"decisions,omitempty"`
	Forgotten *ForgetReceipt    `json:"forgotten,omitempty"`
	// Decayed counts what a decay request moved (its decisions are in
	// the decision log only: a sweep can move any number of memories).
	Decayed *DecayCounts `json:"decayed,omitempty"`
	// Code and Error are set when the request failed for good.
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	// Repeat is set when the request had been answered before: this is
	// that answer, and nothing was applied again.
	Repeat bool `json:"repeat,omitempty"`
	// Slim is set when the decisions are cut to their IDs, verdicts and
	// the memories they wrote, to keep a payload within its bound (Fit):
	// the decision log has them whole.
	Slim bool `json:"slim,omitempty"`
}

// Failed is the reply of a request that failed for good: no decisions,
// the error's code (memory.EINTERNAL if none) and message, cut to
// MaxErrorBytes (a message may quote what the request held).
func (r Reply) Failed(code, message string) Reply {
	r.Decisions = nil
	if code == "" {
		code = memory.EINTERNAL
	}
	r.Code, r.Error = code, clipError(message, MaxErrorBytes)
	return r
}

// Bound is the reply a request gets: its decisions without the states
// before and the neighbours considered, which the decision log keeps, so
// that it stays well under Temporal's payload limit (a request has at most
// MaxCandidatesPerRequest decisions).
func Bound(r Reply) Reply {
	if len(r.Decisions) == 0 {
		return r
	}
	out := r
	out.Decisions = make([]memory.Decision, len(r.Decisions))
	for i, d := range r.Decisions {
		d.Before, d.Neighbors = nil, nil
		out.Decisions[i] = d
	}
	return out
}

// DecayCounts counts the memories a decay sweep (or one page of it)
// moved, by new status. Next is the cursor of the page after ("" at the
// end).
type DecayCounts struct {
	Changed int            `json:"changed"`
	ByTo    map[string]int `json:"by_status,omitempty"`
	Next    string         `json:"next,omitempty"`
}

// Add adds a page's counts.
func (c *DecayCounts) Add(p DecayCounts) {
	c.Changed += p.Changed
	for k, n := range p.ByTo {
		if c.ByTo == nil {
			c.ByTo = map[string]int{}
		}
		c.ByTo[k] += n
	}
}

// ForgetReceipt reports what a forget removed or rebuilt, per store.
type ForgetReceipt struct {
	// Memories were deleted for good; Rebuilt lost the forgotten source
	// episodes but keep others.
	Memories []string `json:"memories"`
	Rebuilt  []string `json:"rebuilt,omitempty"`
	// Private are the memories among Memories that were in the forgotten
	// user's own scope; the others were shared, learned only from them.
	Private  []string `json:"private,omitempty"`
	Sessions []string `json:"sessions,omitempty"`
	Episodes []string `json:"episodes,omitempty"`
	// Summaries are typical episodes that stood for forgotten episodes:
	// rebuilt from the rest, or removed when too few remain.
	Summaries []string `json:"summaries,omitempty"`
	// Store counts ClickHouse rows removed; Vectors and EpisodeVectors the
	// documents removed from the vector index.
	Store          memory.PurgeCounts `json:"store"`
	Vectors        int                `json:"vectors"`
	EpisodeVectors int                `json:"episode_vectors"`
	Tombstones     int                `json:"tombstones"`
	// Truncated is set when the lists above hold only their first IDs
	// (Cap): a forget of more keeps its payloads bounded; Store counts
	// every row.
	Truncated bool `json:"truncated,omitempty"`
}

// MaxReceiptIDs bounds the IDs a receipt lists in all (about 40 bytes
// each): a forget of more lists the first and says it is Truncated.
const MaxReceiptIDs = 20000

// Cap cuts r's lists so that they hold at most n IDs in all, the
// memories' lists first, and says so in Truncated.
func (r *ForgetReceipt) Cap(n int) {
	for _, l := range []*[]string{&r.Memories, &r.Private, &r.Rebuilt, &r.Sessions, &r.Episodes, &r.Summaries} {
		if len(*l) > n {
			*l, r.Truncated = (*l)[:n:n], true
		}
		n -= len(*l)
	}
}

// Add adds o's counts to r.
func (r *ForgetReceipt) Add(o ForgetReceipt) {
	r.Memories = append(r.Memories, o.Memories...)
	r.Rebuilt = append(r.Rebuilt, o.Rebuilt...)
	r.Sessions = append(r.Sessions, o.Sessions...)
	r.Episodes = append(r.Episodes, o.Episodes...)
	r.Summaries = append(r.Summaries, o.Summaries...)
	r.Store.Events += o.Store.Events
	r.Store.Episodes += o.Store.Episodes
	r.Store.Memories += o.Store.Memories
	r.Store.Versions += o.Store.Versions
	r.Store.Decisions += o.Store.Decisions
	r.Vectors += o.Vectors
	r.EpisodeVectors += o.EpisodeVectors
	r.Tombstones += o.Tombstones
	r.Truncated = r.Truncated || o.Truncated
}

// ForgetInput names what to forget: memories, sessions, a user's sessions,
// or (All) the whole tenant. Everything derived from it goes too.
type ForgetInput struct {
	Tenant     string   `json:"tenant"`
	MemoryIDs  []string `json:"memory_ids,omitempty"`
	SessionIDs []string `json:"session_ids,omitempty"`
	UserID     string   `json:"user_id,omitempty"`
	All        bool     `json:"all,omitempty"`
}

// Validate checks that in names a tenant and something to forget.
func (in ForgetInput) Validate() error {
	const op = "forget"
	if err := memory.ValidateTenant(op, in.Tenant); err != nil {
		return err
	}
	if len(in.MemoryIDs) == 0 && len(in.SessionIDs) == 0 && in.UserID == "" && !in.All {
		return memory.Invalidf(op, "name what to forget: memory IDs, session IDs, a user, or all")
	}
	for _, s := range in.SessionIDs {
		if err := memory.ValidateSessionID(op, s); err != nil {
			return err
		}
	}
	return nil
}
