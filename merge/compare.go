package merge

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// The offline comparison rules. They are deliberately conservative: a
// wrong merge loses information for good, a missed one only leaves a
// near-duplicate for the next consolidation. So every merging verdict needs
// positive evidence, and anything the rules cannot place is distinct.
//
// A statement's subject is its content words (English stems, Chinese
// characters) and names. The analyser has already dropped what says when
// or how firmly a statement holds rather than what it is about: modal and
// light verbs, adverbs of frequency, determiners, Chinese particles and
// function words ("should", "always", "give", "from now on", 的, 里, 都,
// 要, 请, 一律, 从现在起, a clause-opening 以后), and values and parameters
// are not subject terms. Here the words that name a slot ("timestamps",
// "encoding", 时间, 编码) are dropped too when either statement gives a
// value of that slot (withoutSlotNouns): "report timestamps in UTC" and
// "reports should use Beijing time" are both about reports.
//
// Two statements are about the same subject when one's subject terms
// contain the other's and they share more than half of them: one word
// more is enough for "send invoices to Acme" against "Acme's invoices",
// but not for "reports" against "store reports" or 报表 against 销售报表,
// where the extra word may be the whole difference. Two statements
// disagree when a slot has different values (utc vs utc+8, 500 vs 2000
// rows; compatible date formats agree), when a shared term is negated in
// one and asserted in the other ("never deploy" vs "deploy", "deploying on
// Fridays is forbidden" vs "deploy on Fridays", "without a backup" vs
// "after a backup"), or when one rejects a term the other asserts ("…, not
// on the local disk").
//
//   - different names (orders.csv vs customers.csv, Acme vs Globex):
//     distinct, before anything else.
//   - conflicts: same subject and they disagree. Disagreement without a
//     clear common subject is distinct, never a merge.
//   - duplicate: no disagreement, and the candidate adds nothing: every
//     term matches, or the candidate says a part of the existing memory
//     (leaving out at most one subject term of four or more).
//   - refines: no disagreement, the candidate keeps every term of the
//     existing memory and adds at least one concrete specific (a value, a
//     number, code, a flag, a path, a name).
//   - distinct: everything else, including a candidate that only adds words
//     (a narrower scope is not a refinement the rules can vouch for).

// relation is the verdict of comparing a candidate with one existing memory.
type relation struct {
	verdict memory.Verdict
	reason  string
}

// minSubjectJaccard is the share of subject terms two statements must
// exceed in common to be about the same subject.
const minSubjectJaccard = 0.5

// maxMissingSubject is how many subject terms of the existing memory a
// candidate may leave out and still be a duplicate, provided the existing
// memory has at least minSubjectForMissing of them.
const (
	maxMissingSubject    = 1
	minSubjectForMissing = 4
)

func compare(existing, candidate *statement) relation {
	if normText(existing.text) == normText(candidate.text) {
		return relation{memory.VerdictDuplicate, "same text after normalisation"}
	}
	given := map[string]bool{}
	for _, s := range []*statement{existing, candidate} {
		for slot := range s.values {
			given[slot] = true
		}
	}
	a, b := withoutSlotNouns(existing, given), withoutSlotNouns(candidate, given)
	var shared, onlyA, onlyB []*term
	for k, t := range a.terms {
		if _, ok := b.terms[k]; ok {
			shared = append(shared, t)
		} else {
			onlyA = append(onlyA, t)
		}
	}
	for k, t := range b.terms {
		if _, ok := a.terms[k]; !ok {
			onlyB = append(onlyB, t)
		}
	}
	sortTerms(shared)
	sortTerms(onlyA)
	sortTerms(onlyB)

	// A change of mind names what it replaces: "we no longer use
	// PagerDuty", "instead of USD", "不再用 poetry". When the candidate
	// announces a change and negates or rejects a name or value the
	// existing memory asserts, the change replaces that memory, however
	// differently the rest is worded.
	if candidate.change {
		var dropped []*term
		for _, t := range shared {
			tb := b.terms[t.key]
			if t.class != tAnchor && t.class != tValue && t.class != tParam && !tb.replacedAll {
				continue
			}
			if tb.dismissed && !t.rejected && !t.negated {
				dropped = append(dropped, t)
			}
		}
		if len(dropped) > 0 {
			return relation{memory.VerdictConflicts, fmt.Sprintf("the candidate changes %q, which the existing memory asserts (%s)", joinTerms(dropped), strings.Join(quoteAll(candidate.cues), ", "))}
		}
	}

	if na, nb := filter(onlyA, isClass(tAnchor)), filter(onlyB, isClass(tAnchor)); len(na) > 0 && len(nb) > 0 {
		// Under a change of mind, a name of the same shape in place of
		// another on a shared subject is the new value ("switch the
		// default region to eu-central-1" against "… is eu-west-1").
		if candidate.change && len(filter(shared, isSubject)) > 0 {
			if x, y, ok := sameShape(na, nb); ok {
				return relation{memory.VerdictConflicts, fmt.Sprintf("the candidate changes %s to %s", x.surface, y.surface)}
			}
		}
		return relation{memory.VerdictDistinct, fmt.Sprintf("different names: %s vs %s", surfaces(na), surfaces(nb))}
	}

	subjA, subjB := filter(termList(a), isSubject), filter(termList(b), isSubject)
	sharedSubj := filter(shared, isSubject)
	subject := joinTerms(sharedSubj)
	sameSubject := len(sharedSubj) > 0 &&
		(len(sharedSubj) == len(subjA) || len(sharedSubj) == len(subjB)) &&
		float64(len(sharedSubj))/float64(len(subjA)+len(subjB)-len(sharedSubj)) > minSubjectJaccard

	// Disagreement: a slot with different values, a term one negates and
	// the other asserts, or one the other rejects. On the same subject it
	// is a conflict; otherwise it still rules out any merge.
	diffs := slotConflicts(a, b)
	var flipped []*term
	if sameScope(a, b) {
		// "Never run migrations on Fridays" does not contradict "run
		// migrations before deploying": the prohibition has its own scope.
		flipped = negationFlips(shared, a, b)
	}
	var rejectedByB, rejectedByA []*term
	for _, t := range shared {
		tb := b.terms[t.key]
		switch {
		case tb.rejected && !t.rejected:
			rejectedByB = append(rejectedByB, t)
		case t.rejected && !tb.rejected:
			rejectedByA = append(rejectedByA, t)
		}
	}
	if sameSubject {
		switch {
		case len(diffs) > 0:
			return relation{memory.VerdictConflicts, fmt.Sprintf("same subject %q, %s", subject, strings.Join(diffs, "; "))}
		case len(flipped) > 0:
			who, cues := "candidate", b.cues
			if a.negative && !b.negative {
				who, cues = "existing memory", a.cues
			}
			return relation{memory.VerdictConflicts, fmt.Sprintf("same subject %q with opposite polarity: the %s negates %q (%s)", subject, who, joinTerms(flipped), strings.Join(quoteAll(cues), ", "))}
		case len(rejectedByB) > 0:
			return relation{memory.VerdictConflicts, fmt.Sprintf("same subject %q, but the candidate rejects %q, which the existing memory asserts", subject, joinTerms(rejectedByB))}
		case len(rejectedByA) > 0:
			return relation{memory.VerdictConflicts, fmt.Sprintf("same subject %q, but the candidate asserts %q, which the existing memory rejects", subject, joinTerms(rejectedByA))}
		}
	}
	// A restatement ("again", "还是", "same … rule") of a memory it shares
	// its subject or its values with, and whose values it does not change,
	// is that memory said again, in other words.
	if candidate.restates && len(diffs) == 0 && len(flipped) == 0 && len(rejectedByB) == 0 && restatedIn(a, b, shared, sharedSubj, subjA, subjB) {
		return relation{memory.VerdictDuplicate, fmt.Sprintf("the candidate restates the existing memory (%s) about %q", strings.Join(quoteAll(restateCues(candidate.text)), ", "), joinTerms(shared))}
	}
	if disagree := len(diffs) > 0 || len(flipped) > 0 || len(rejectedByB) > 0; disagree && candidate.change && looselySameSubject(sharedSubj, subjA, subjB) {
		// The candidate announces a change ("instead of USD, use EUR",
		// "以后改成 UTC") and disagrees with a memory that shares its
		// subject, if less of it than a plain restatement would: the
		// change replaces it.
		return relation{memory.VerdictConflicts, fmt.Sprintf("the candidate changes what the existing memory says about %q: %s", subject, disagreement(diffs, flipped, nil, rejectedByB))}
	}
	if len(diffs) > 0 || len(flipped) > 0 || len(rejectedByA)+len(rejectedByB) > 0 {
		return relation{memory.VerdictDistinct, fmt.Sprintf("they disagree (%s), but not clearly about the same subject (%s vs %s); unsure, not merged",
			disagreement(diffs, flipped, rejectedByA, rejectedByB), describe(subjA), describe(subjB))}
	}

	switch {
	case len(onlyA) == 0 && len(onlyB) == 0 && len(shared) > 0:
		// Every term, value and rejection matches: the same statement,
		// even when it names no subject ("use pnpm, not npm").
		return relation{memory.VerdictDuplicate, fmt.Sprintf("same statement: every term matches (%s)", joinTerms(shared))}
	case len(sharedSubj) == 0:
		return relation{memory.VerdictDistinct, "no subject in common"}
	case !sameSubject && len(onlyA) > 0 && len(onlyB) > 0:
		return relation{memory.VerdictDistinct, fmt.Sprintf("different subjects: %s vs %s", describe(filter(onlyA, isSubject)), describe(filter(onlyB, isSubject)))}
	}
	// From here on the statements agree in polarity, values and rejections,
	// and share a subject.
	switch {
	case len(onlyB) == 0:
		missing := filter(onlyA, isScope)
		if len(missing) == 0 || len(missing) <= maxMissingSubject && len(subjA) >= minSubjectForMissing {
			return relation{memory.VerdictDuplicate, fmt.Sprintf("the candidate restates part of the existing memory about %q and adds nothing (the existing memory also says %s)", subject, describe(onlyA))}
		}
		return relation{memory.VerdictDistinct, fmt.Sprintf("the candidate is broader: it drops %s; unsure, not merged", describe(missing))}
	case len(onlyA) == 0:
		specifics := filter(onlyB, isSpecific)
		if len(specifics) > 0 {
			return relation{memory.VerdictRefines, fmt.Sprintf("same subject %q; the candidate adds specifics: %s", subject, surfaces(specifics))}
		}
		return relation{memory.VerdictDistinct, fmt.Sprintf("the candidate only adds words (%s), no concrete parameter; unsure, not merged", describe(onlyB))}
	}
	return relation{memory.VerdictDistinct, fmt.Sprintf("each says something the other does not: %s vs %s", describe(onlyA), describe(onlyB))}
}

// restatedIn reports whether b can restate a: they share most of the
// smaller subject, or the values b asserts are all among a's.
func restatedIn(a, b *statement, shared, sharedSubj, subjA, subjB []*term) bool {
	if looselySameSubject(sharedSubj, subjA, subjB) {
		return true
	}
	asserted := 0
	for _, t := range b.terms {
		if (t.class == tValue || t.class == tAnchor || t.class == tParam) && !t.rejected && !t.negated {
			asserted++
			ta, ok := a.terms[t.key]
			if !ok || ta.rejected || ta.negated {
				return false
			}
		}
	}
	return asserted > 0
}

func restateCues(text string) []string {
	return lang.RestateCue.FindAllString(lang.Fold(text), 3)
}

// sameShape finds a name of each list written the same way, letters and
// digits aside ("eu-west-1" and "eu-central-1", "pg-orders-ro" and
// "pg-orders-primary"): the same slot with another value.
func sameShape(as, bs []*term) (*term, *term, bool) {
	for _, x := range as {
		for _, y := range bs {
			if shapeOf(x.surface) == shapeOf(y.surface) && strings.ContainsAny(x.surface, "-_./:") {
				return x, y, true
			}
		}
	}
	return nil, nil, false
}

func shapeOf(s string) string {
	var b strings.Builder
	last := rune(0)
	for _, r := range s {
		var c rune
		switch {
		case r >= '0' && r <= '9':
			c = '9'
		case unicode.IsLetter(r):
			c = 'a'
		default:
			c = r
		}
		if c != last || (c != 'a' && c != '9') {
			b.WriteRune(c)
		}
		last = c
	}
	return b.String()
}

// minLooseSubject is the share of the smaller subject a change must
// share with a memory to replace it.
const minLooseSubject = 0.5

// looselySameSubject reports whether two statements share at least half
// of the smaller one's subject terms, and at least two of them (one when
// that is all the smaller one has).
func looselySameSubject(shared, a, b []*term) bool {
	small := min(len(a), len(b))
	if small == 0 || len(shared) == 0 {
		return false
	}
	if len(shared) < 2 && small > 1 {
		return false
	}
	return float64(len(shared))/float64(small) >= minLooseSubject
}

// withoutSlotNouns returns s without the terms that name a slot either
// statement gives a value of: in "report timestamps in UTC" against
// "reports should use Beijing time" the timestamps are where the time zone
// shows, the reports what both are about; and "detect the file encoding"
// is what "detect the encoding: try utf-8-sig, then gbk" says. When such
// nouns are all a statement is about ("日期格式用 DD/MM/YYYY") they stay:
// they are its subject.
func withoutSlotNouns(s *statement, given map[string]bool) *statement {
	drop, rest := 0, 0
	for _, t := range s.terms {
		switch {
		case t.noun != "" && given[t.noun]:
			drop++
		case t.class.isSubject():
			rest++
		}
	}
	if drop == 0 || rest == 0 {
		return s
	}
	out := *s
	out.terms = make(map[string]*term, len(s.terms)-drop)
	for k, t := range s.terms {
		if t.noun == "" || !given[t.noun] {
			out.terms[k] = t
		}
	}
	return &out
}

// disagreement summarises why two statements disagree, for a reason.
func disagreement(diffs []string, flipped, rejectedByA, rejectedByB []*term) string {
	var parts []string
	parts = append(parts, diffs...)
	if len(flipped) > 0 {
		parts = append(parts, fmt.Sprintf("one negates %q", joinTerms(flipped)))
	}
	if rej := append(rejectedByA, rejectedByB...); len(rej) > 0 {
		parts = append(parts, fmt.Sprintf("one rejects %q", joinTerms(rej)))
	}
	return strings.Join(parts, "; ")
}

// sameScope reports whether two statements apply at the same times: the
// same values in every circumstantial slot (weekday, part of the day).
func sameScope(a, b *statement) bool {
	for slot := range circumstantial {
		pa, _ := split(a.values[slot])
		pb, _ := split(b.values[slot])
		if len(pa) != len(pb) || len(pa) != len(common(pa, pb)) {
			return false
		}
	}
	return true
}

// negationFlips returns the shared terms (of the existing statement a) that
// one statement negates and the other asserts. Only a statement without
// any negation asserts: when both negate something, a term inside one
// scope and outside the other is word order ("周五下午不要上线", "别在周五
// 下午上线"), not meaning.
func negationFlips(shared []*term, a, b *statement) []*term {
	if a.negative == b.negative {
		return nil
	}
	var out []*term
	for _, t := range shared {
		if t.negated != b.terms[t.key].negated {
			out = append(out, t)
		}
	}
	return out
}

// slotConflicts lists the slots where the two statements give different
// values: disjoint asserted values, or a value one asserts and the other
// rejects.
func slotConflicts(a, b *statement) []string {
	var out []string
	slots := make([]string, 0, len(a.values))
	for s := range a.values {
		if _, ok := b.values[s]; ok {
			slots = append(slots, s)
		}
	}
	sort.Strings(slots)
	for _, slot := range slots {
		if circumstantial[slot] && (a.negative || b.negative) {
			// "Never deploy on Fridays" and "deploy on Tuesdays" agree.
			continue
		}
		posA, negA := split(a.values[slot])
		posB, negB := split(b.values[slot])
		name := slotName(slot)
		switch {
		case len(posA) > 0 && len(posB) > 0 && !intersects(posA, posB) && !compatible(slot, posA, posB):
			out = append(out, fmt.Sprintf("%s differs: %s vs %s", name, joinSurfaces(posA), joinSurfaces(posB)))
		case intersects(posA, negB):
			out = append(out, fmt.Sprintf("%s: the candidate rejects %s", name, joinSurfaces(common(posA, negB))))
		case intersects(negA, posB):
			out = append(out, fmt.Sprintf("%s: the candidate asserts %s, which the existing memory rejects", name, joinSurfaces(common(posB, negA))))
		}
	}
	return out
}

func slotName(slot string) string {
	switch {
	case strings.HasPrefix(slot, "n:"):
		u := strings.TrimPrefix(slot, "n:")
		if _, ok := timeUnits[u]; ok {
			return "duration in " + u
		}
		if u != "number" {
			return "number of " + u
		}
		return "number"
	case strings.HasPrefix(slot, "kv:"):
		return "parameter " + strings.TrimPrefix(slot, "kv:")
	}
	return slot
}

// split returns the asserted and the rejected values of a slot, keyed by
// canonical value with a surface form each.
func split(vs []valueRef) (pos, neg map[string]string) {
	pos, neg = map[string]string{}, map[string]string{}
	for _, v := range vs {
		if v.rejected {
			if _, ok := neg[v.canon]; !ok {
				neg[v.canon] = v.surface
			}
			continue
		}
		if _, ok := pos[v.canon]; !ok {
			pos[v.canon] = v.surface
		}
	}
	// A value asserted anywhere in the statement is asserted.
	for c := range pos {
		delete(neg, c)
	}
	return pos, neg
}

// compatible reports whether two sets of values of a slot can both hold
// although no value is shared: a date format and the same format with a
// time of day ("yyyy-mm-dd", "yyyy-mm-dd hh:mm"), or an ISO 8601 / RFC
// 3339 format and a pattern that follows it.
func compatible(slot string, a, b map[string]string) bool {
	if slot != "date-format" {
		return false
	}
	iso := func(v string) bool { return v == "iso8601" || v == "rfc3339" }
	for x := range a {
		for y := range b {
			switch {
			case strings.HasPrefix(x, y) || strings.HasPrefix(y, x):
				return true
			case iso(x) && strings.HasPrefix(y, "yyyy-mm-dd"), iso(y) && strings.HasPrefix(x, "yyyy-mm-dd"):
				return true
			}
		}
	}
	return false
}

func intersects(a, b map[string]string) bool {
	for k := range a {
		if _, ok := b[k]; ok {
			return true
		}
	}
	return false
}

func common(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if _, ok := b[k]; ok {
			out[k] = v
		}
	}
	return out
}

func joinSurfaces(m map[string]string) string {
	ss := make([]string, 0, len(m))
	for _, v := range m {
		ss = append(ss, v)
	}
	sort.Strings(ss)
	return strings.Join(ss, ", ")
}

func normText(s string) string {
	return strings.Join(strings.Fields(memory.Normalize(s)), " ")
}

func termList(s *statement) []*term {
	out := make([]*term, 0, len(s.terms))
	for _, t := range s.terms {
		out = append(out, t)
	}
	sortTerms(out)
	return out
}

func sortTerms(ts []*term) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].pos != ts[j].pos {
			return ts[i].pos < ts[j].pos
		}
		return ts[i].key < ts[j].key
	})
}

func filter(ts []*term, keep func(*term) bool) []*term {
	var out []*term
	for _, t := range ts {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out
}

func isClass(c termClass) func(*term) bool { return func(t *term) bool { return t.class == c } }

func isSubject(t *term) bool { return t.class.isSubject() }

// isScope reports whether t narrows what a statement covers rather than
// how: subject terms, and when it applies ("周五下午", "on Friday
// afternoons"). A candidate that adds scope is narrower, one that drops it
// broader; neither is a duplicate or a refinement.
func isScope(t *term) bool { return t.class.isSubject() || t.class == tValue && circumstantial[t.slot] }

// isSpecific reports whether t is a concrete parameter a refinement may add.
func isSpecific(t *term) bool { return !isScope(t) }

// surfaces lists terms as written, comma separated.
func surfaces(ts []*term) string {
	ss := make([]string, len(ts))
	for i, t := range ts {
		ss[i] = t.surface
	}
	return strings.Join(ss, ", ")
}

// joinTerms renders terms as a phrase: words separated by spaces, Chinese
// characters run together.
func joinTerms(ts []*term) string {
	var b strings.Builder
	prevCJK := false
	for i, t := range ts {
		cjk := strings.HasPrefix(t.key, "c:")
		if i > 0 && !(cjk && prevCJK) {
			b.WriteByte(' ')
		}
		b.WriteString(t.surface)
		prevCJK = cjk
	}
	return b.String()
}

// describe renders a term list for a reason, or "nothing".
func describe(ts []*term) string {
	if len(ts) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%q", joinTerms(ts))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
