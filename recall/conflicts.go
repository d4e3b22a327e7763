package recall

import (
	"slices"
	"strings"
	"sync"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// DefaultConflicts is the conflict rule used when Deps.Conflicts is nil.
// Two memories conflict when one supersedes the other, or when they say the
// same thing with opposite polarity: their content terms (polarity words
// aside) overlap by at least half, at least two terms are shared, and one
// is negated where the other is not ("always use UTC" / "never use UTC",
// "报表用UTC时间" / "报表不要用UTC时间"). It is conservative on purpose: two
// memories that merely differ ("use gbk" / "use utf-8") are not flagged,
// since a false warning teaches the agent to ignore warnings.
func DefaultConflicts(a, b memory.Memory) (bool, string) {
	return conflictOf(a, b, polarityOf(a.Content), polarityOf(b.Content))
}

// polarity is what the opposite-polarity rule reads from a text, computed
// once per text.
type polarity struct {
	negated bool
	terms   map[string]bool
}

func polarityOf(text string) polarity {
	return polarity{negated: negated(text), terms: contentTerms(text)}
}

func conflictOf(a, b memory.Memory, pa, pb polarity) (bool, string) {
	switch {
	case a.SupersededBy == b.ID || slices.Contains(b.Supersedes, a.ID):
		return true, b.ID + " supersedes " + a.ID
	case b.SupersededBy == a.ID || slices.Contains(a.Supersedes, b.ID):
		return true, a.ID + " supersedes " + b.ID
	}
	if pa.negated == pb.negated {
		return false, ""
	}
	shared := 0
	for t := range pa.terms {
		if pb.terms[t] {
			shared++
		}
	}
	union := len(pa.terms) + len(pb.terms) - shared
	if shared >= 2 && 2*shared >= union {
		return true, "same subject, opposite polarity"
	}
	return false, ""
}

// negators turn a statement around. "always" and "must" are not negators,
// but "never" is, so "always X" and "never X" differ in polarity.
var negators = map[string]bool{
	"not": true, "no": true, "never": true, "don't": true, "doesn't": true, "didn't": true,
	"isn't": true, "aren't": true, "wasn't": true, "won't": true, "shouldn't": true,
	"mustn't": true, "can't": true, "cannot": true, "avoid": true, "without": true,
	"stop": true, "disable": true, "nor": true,
}

// zhNegators are Chinese negation characters and words.
var zhNegators = []string{"不", "别", "没", "勿", "莫", "禁止", "避免", "未"}

// negated reports whether text holds an odd number of negations.
func negated(text string) bool {
	n := 0
	for _, w := range lang.Words(text) {
		if negators[w] {
			n++
		}
	}
	f := lang.Fold(text)
	for _, z := range zhNegators {
		n += strings.Count(f, z)
	}
	return n%2 == 1
}

// contentTerms are text's index terms without polarity words and without
// CJK terms that contain a negation.
func contentTerms(text string) map[string]bool {
	out := map[string]bool{}
	for _, t := range lang.Terms(text) {
		if polarityStems[t] || slices.ContainsFunc(zhNegators, func(z string) bool { return strings.Contains(t, z) }) {
			continue
		}
		out[t] = true
	}
	return out
}

// polarityStems are the stems of words that carry polarity but no
// subject: the negators, and "always", which pairs with "never".
var polarityStems = func() map[string]bool {
	m := map[string]bool{lang.Stem("always"): true}
	for w := range negators {
		m[lang.Stem(w)] = true
	}
	return m
}()

// Conflicts finds up to max pairs among ms that contradict each other by
// the opposite-polarity rule: same kind and scope, one negated, and most
// of their content terms shared. Each text is read once, and only pairs
// that share a term are compared, so a tenant's whole store can be
// checked (the console's "conflicts awaiting attention").
func Conflicts(ms []memory.Memory, max int) [][2]memory.Memory {
	return (&ConflictIndex{}).Find(ms, max)
}

// ConflictIndex is Conflicts with each memory version's reading kept
// between calls, so a page that checks a whole store again reads only
// what changed.
type ConflictIndex struct {
	mu   sync.Mutex
	pols map[string]versionPolarity // memory ID → its last version's reading
}

type versionPolarity struct {
	version int
	content string
	pol     polarity
}

// Find is Conflicts, remembering readings.
func (x *ConflictIndex) Find(ms []memory.Memory, max int) [][2]memory.Memory {
	x.mu.Lock()
	if x.pols == nil || len(x.pols) > 4*len(ms)+1024 {
		x.pols = make(map[string]versionPolarity, len(ms))
	}
	pols := make([]polarity, len(ms))
	for i, m := range ms {
		if v, ok := x.pols[m.ID]; ok && v.version == m.Version && v.content == m.Content {
			pols[i] = v.pol
			continue
		}
		pols[i] = polarityOf(m.Content)
		x.pols[m.ID] = versionPolarity{m.Version, m.Content, pols[i]}
	}
	x.mu.Unlock()
	byTerm := map[string][]int{} // term → the non-negated memories holding it
	for i := range ms {
		if !pols[i].negated {
			for t := range pols[i].terms {
				byTerm[t] = append(byTerm[t], i)
			}
		}
	}
	var out [][2]memory.Memory
	for i, m := range ms {
		if !pols[i].negated {
			continue
		}
		seen := map[int]bool{}
		for t := range pols[i].terms {
			for _, j := range byTerm[t] {
				if seen[j] || ms[j].Kind != m.Kind || ms[j].Scope.Norm() != m.Scope.Norm() {
					continue
				}
				seen[j] = true
				if ok, _ := conflictOf(m, ms[j], pols[i], pols[j]); ok {
					out = append(out, [2]memory.Memory{ms[j], m})
					if len(out) >= max {
						return out
					}
				}
			}
		}
	}
	return out
}
