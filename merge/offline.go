package merge

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/hindsight-memory/hindsight/memory"
)

// JudgeOffline is the Judge name recorded by the offline judge.
const JudgeOffline = "offline"

// OfflineOptions configures the offline judge.
type OfflineOptions struct {
	// MaxNeighbors caps how many neighbours are compared, most similar
	// first. Zero means DefaultMaxNeighbors.
	MaxNeighbors int
}

// DefaultMaxNeighbors is how many neighbours a judge looks at by default.
const DefaultMaxNeighbors = 5

// OfflineJudge is the deterministic merge judge used when no LLM is
// configured. It reads English and Chinese with a small general lexicon
// (function words and fillers, negation, contrast, slot values such as
// time zones and encodings and the nouns that name them, numbers and
// units, names) and merges only on positive evidence: when unsure it
// answers distinct. See compare for the rules.
type OfflineJudge struct {
	maxNeighbors int
}

var _ memory.Judge = (*OfflineJudge)(nil)

// NewOfflineJudge returns an offline judge.
func NewOfflineJudge(opts OfflineOptions) *OfflineJudge {
	if opts.MaxNeighbors <= 0 {
		opts.MaxNeighbors = DefaultMaxNeighbors
	}
	return &OfflineJudge{maxNeighbors: opts.MaxNeighbors}
}

// InProcess reports that the judge calls no model: it judges in
// microseconds, in this process.
func (*OfflineJudge) InProcess() bool { return true }

// verdictRank orders verdicts from the least to the most preferred when a
// candidate relates to several neighbours: the least destructive change
// that accounts for the candidate wins (a duplicate adds a source, a
// refinement rewrites one memory, a conflict retires one).
var verdictRank = map[memory.Verdict]int{
	memory.VerdictDistinct:  0,
	memory.VerdictConflicts: 1,
	memory.VerdictRefines:   2,
	memory.VerdictDuplicate: 3,
}

// Judge compares the candidate with each neighbour of the same kind (most
// similar first, at most MaxNeighbors) and returns the preferred verdict:
// duplicate, then refines, then conflicts; ties go to the more similar
// neighbour. With no merging verdict it answers distinct and names the
// nearest neighbour's reason. It never fails except on a cancelled context.
func (j *OfflineJudge) Judge(ctx context.Context, c memory.Candidate, neighbors []memory.Neighbor) (memory.Judgement, error) {
	if err := ctx.Err(); err != nil {
		return memory.Judgement{}, err
	}
	out := memory.Judgement{Verdict: memory.VerdictDistinct, Judge: JudgeOffline, Model: JudgeOffline, Reason: "no similar memories"}
	ns := sortedNeighbors(neighbors)
	if len(ns) > j.maxNeighbors {
		ns = ns[:j.maxNeighbors]
	}
	cand := analyze(c.Content)
	switch c.Signal {
	case memory.SignalChange:
		cand.change = true
	case memory.SignalRestate:
		cand.restates = true
	case memory.SignalRefine:
		cand.refines = true
	}
	best, bestRank := -1, -1
	var rels []relation
	for i, n := range ns {
		var r relation
		if !slices.Contains(c.Kind.Comparable(), n.Memory.Kind) {
			r = relation{memory.VerdictDistinct, fmt.Sprintf("different kind (%s vs %s)", n.Memory.Kind, c.Kind)}
		} else {
			r = compare(analyze(n.Memory.Content), cand)
		}
		rels = append(rels, r)
		if rank := verdictRank[r.verdict]; rank > bestRank {
			best, bestRank = i, rank
		}
	}
	if best < 0 {
		return out, nil
	}
	r := rels[best]
	out.Verdict = r.verdict
	if r.verdict == memory.VerdictDistinct {
		out.Reason = fmt.Sprintf("nearest memory %s: %s", ns[best].Memory.ID, r.reason)
		return out, nil
	}
	out.TargetID = ns[best].Memory.ID
	out.Reason = r.reason
	return out, nil
}

// Relate returns the offline verdict for a candidate text against one
// existing memory text of the same kind, with its reason.
func (j *OfflineJudge) Relate(existing, candidate string) (memory.Verdict, string) {
	r := compare(analyze(existing), analyze(candidate))
	return r.verdict, r.reason
}

// Conflicts reports whether two memories contradict each other by the
// offline rules (same subject, different value of a slot, opposite
// polarity, or one rejecting what the other asserts), with the reason. It
// ignores kinds, so that a preference and a rule can contradict; recall
// uses it to flag contradictions between returned memories.
func Conflicts(a, b memory.Memory) (bool, string) {
	sa, sb := analyzed(a.Content), analyzed(b.Content)
	if r := compare(sa, sb); r.verdict == memory.VerdictConflicts {
		return true, r.reason
	}
	if r := compare(sb, sa); r.verdict == memory.VerdictConflicts {
		return true, r.reason
	}
	return false, ""
}

// analyses caches the analysis of texts that Conflicts compares: recall
// checks every pair of its results, so each text would be read once per
// pair. Analyses are read-only; the cache is dropped when it grows large.
var analyses struct {
	sync.Mutex
	m map[string]*statement
}

func analyzed(text string) *statement {
	analyses.Lock()
	s, ok := analyses.m[text]
	analyses.Unlock()
	if ok {
		return s
	}
	s = analyze(text)
	analyses.Lock()
	if analyses.m == nil || len(analyses.m) >= 8192 {
		analyses.m = make(map[string]*statement, 1024)
	}
	analyses.m[text] = s
	analyses.Unlock()
	return s
}

// sortedNeighbors returns the neighbours most similar first, ties by ID,
// without changing the caller's slice.
func sortedNeighbors(ns []memory.Neighbor) []memory.Neighbor {
	out := append([]memory.Neighbor(nil), ns...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Similarity != out[j].Similarity {
			return out[i].Similarity > out[j].Similarity
		}
		return out[i].Memory.ID < out[j].Memory.ID
	})
	return out
}
