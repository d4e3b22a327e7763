package consolidate

import (
	"cmp"
	"slices"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// digest is what a cluster's members have in common, counted: the facts
// both summarisers and promotion start from. Members are in time order
// (EndedAt, then ID), and every "first" below is a position in that
// order, so a digest does not depend on the order members were given in.
type digest struct {
	members  []memory.Episode
	steps    []*stepGroup
	failures []*failureGroup
	outcomes map[memory.Outcome]int
	zh       bool // the members' tasks are mostly Chinese
	from, to time.Time
}

// variant is one wording of a grouped step, attempt or cause.
type variant struct {
	text    string
	members int // members using this wording
	first   int
	last    int // the member that last counted it, to count members once
}

// wordings counts the wordings of a group, by normalised text.
type wordings struct {
	byNorm map[string]*variant
}

func (w *wordings) add(norm, text string, member, occurrence int) {
	if w.byNorm == nil {
		w.byNorm = map[string]*variant{}
	}
	v := w.byNorm[norm]
	if v == nil {
		v = &variant{text: text, first: occurrence, last: -1}
		w.byNorm[norm] = v
	}
	if v.last != member {
		v.members++
		v.last = member
	}
}

// best is the wording most members use; ties go to the earliest.
func (w *wordings) best() string {
	var b *variant
	for _, v := range w.byNorm {
		if b == nil || v.members > b.members || (v.members == b.members && v.first < b.first) {
			b = v
		}
	}
	if b == nil {
		return ""
	}
	return b.text
}

// memberSet records which members a group was seen in, each once, in
// order.
type memberSet []int

func (m *memberSet) add(member int) {
	if n := len(*m); n == 0 || (*m)[n-1] != member {
		*m = append(*m, member)
	}
}

// stepGroup is one step as several members wrote it.
type stepGroup struct {
	leader  action // the first occurrence; others join by sameAction with it
	members memberSet
	first   int
	words   wordings
}

// failureGroup is one failed attempt with one cause, across members.
type failureGroup struct {
	attempt  action
	cause    cause
	members  memberSet
	first    int
	attempts wordings
	causes   wordings
	events   []string // failure event IDs, in order of occurrence
	// tries holds each member's first wording of the attempt, in member
	// order, so that its fix can be looked for in that member's steps.
	tries []memberAttempt
}

type memberAttempt struct {
	member  int
	attempt action
}

func sortedMembers(members []memory.Episode) []memory.Episode {
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b memory.Episode) int { return compareEpisodes(&a, &b) })
	return ms
}

// newDigest counts what members share. It expects members validated by
// validateMembers.
func newDigest(members []memory.Episode) *digest {
	d := &digest{members: sortedMembers(members), outcomes: map[memory.Outcome]int{}}
	var tasks []string
	occurrence := 0
	for mi, ep := range d.members {
		tasks = append(tasks, ep.Task)
		d.outcomes[normOutcome(ep.Outcome)]++
		start := ep.StartedAt
		if start.IsZero() {
			start = ep.EndedAt
		}
		if !start.IsZero() && (d.from.IsZero() || start.Before(d.from)) {
			d.from = start
		}
		if ep.EndedAt.After(d.to) {
			d.to = ep.EndedAt
		}
		for _, s := range ep.Steps {
			a := newAction(s)
			if a.norm == "" {
				continue
			}
			occurrence++
			i := slices.IndexFunc(d.steps, func(g *stepGroup) bool { return sameAction(g.leader, a) })
			if i < 0 {
				d.steps = append(d.steps, &stepGroup{leader: a, first: occurrence})
				i = len(d.steps) - 1
			}
			g := d.steps[i]
			g.members.add(mi)
			g.words.add(a.norm, a.text, mi, occurrence)
		}
		for _, f := range ep.Failures {
			a, c := newAction(f.Attempt), newCause(f.Cause)
			if a.norm == "" {
				continue
			}
			occurrence++
			i := slices.IndexFunc(d.failures, func(g *failureGroup) bool {
				return sameAction(g.attempt, a) && sameCause(g.cause, c)
			})
			if i < 0 {
				d.failures = append(d.failures, &failureGroup{attempt: a, cause: c, first: occurrence})
				i = len(d.failures) - 1
			}
			g := d.failures[i]
			if n := len(g.tries); n == 0 || g.tries[n-1].member != mi {
				g.tries = append(g.tries, memberAttempt{member: mi, attempt: a})
			}
			g.members.add(mi)
			g.attempts.add(a.norm, a.text, mi, occurrence)
			if c.text != "" {
				g.causes.add(memory.Normalize(c.text), runes.OneLine(c.text), mi, occurrence)
			}
			if f.EventID != "" {
				g.events = append(g.events, f.EventID)
			}
		}
	}
	d.zh = chinese(tasks...)
	byCount := func(na, nb, fa, fb int) int {
		if c := cmp.Compare(nb, na); c != 0 {
			return c
		}
		return cmp.Compare(fa, fb)
	}
	slices.SortStableFunc(d.steps, func(a, b *stepGroup) int {
		return byCount(len(a.members), len(b.members), a.first, b.first)
	})
	slices.SortStableFunc(d.failures, func(a, b *failureGroup) int {
		return byCount(len(a.members), len(b.members), a.first, b.first)
	})
	return d
}

// minShared is how many members must show something for a summary to
// call it typical: two, or one in a cluster of one.
func (d *digest) minShared() int { return min(2, len(d.members)) }

func normOutcome(o memory.Outcome) memory.Outcome {
	switch o {
	case memory.OutcomeSuccess, memory.OutcomePartial, memory.OutcomeFailure:
		return o
	}
	return memory.OutcomeUnknown
}

// outcome is the members' majority outcome among the known ones (unknown
// only when none is known). A tie between success and failure is
// partial, the honest reading of a mixed record; other ties go to the
// less favourable outcome, so that a summary never looks better than its
// record.
func (d *digest) outcome() memory.Outcome {
	s, p, f := d.outcomes[memory.OutcomeSuccess], d.outcomes[memory.OutcomePartial], d.outcomes[memory.OutcomeFailure]
	switch {
	case s == 0 && p == 0 && f == 0:
		return memory.OutcomeUnknown
	case s == f && s >= p:
		return memory.OutcomePartial
	case f >= s && f >= p:
		return memory.OutcomeFailure
	case p >= s:
		return memory.OutcomePartial
	}
	return memory.OutcomeSuccess
}

// entities are the members' entities seen in at least minShared members,
// most common first (ties by first appearance), at most limit.
func (d *digest) entities(limit int) []string {
	type counted struct {
		name         string
		count, first int
	}
	var list []*counted
	index := map[string]*counted{}
	for _, ep := range d.members {
		seen := map[string]bool{}
		for _, e := range ep.Entities {
			n := memory.NormalizeEntity(e)
			if n == "" || seen[n] {
				continue
			}
			seen[n] = true
			c := index[n]
			if c == nil {
				c = &counted{name: n, first: len(list)}
				index[n] = c
				list = append(list, c)
			}
			c.count++
		}
	}
	slices.SortStableFunc(list, func(a, b *counted) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		return cmp.Compare(a.first, b.first)
	})
	var out []string
	for _, c := range list {
		if c.count < d.minShared() || len(out) == limit {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// task is the representative task: the members' lexical medoid, the task
// sharing the most words with all the others (so the most common
// phrasing wins when there is one); ties go to the earliest member.
func (d *digest) task() string {
	toks := make([][]string, len(d.members))
	for i, ep := range d.members {
		toks[i] = tokens(ep.Task)
	}
	best, bestScore := 0, -1.0
	for i := range d.members {
		if runes.OneLine(d.members[i].Task) == "" {
			continue
		}
		score := 0.0
		for j := range d.members {
			if i != j {
				score += jaccard(toks[i], toks[j])
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return runes.OneLine(d.members[best].Task)
}

// common returns the values shared by every member, or "".
func common(members []memory.Episode, get func(memory.Episode) string) string {
	v := get(members[0])
	for _, ep := range members[1:] {
		if get(ep) != v {
			return ""
		}
	}
	return v
}
