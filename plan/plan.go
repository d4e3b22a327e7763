package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/lang/inject"
	"github.com/hindsight-memory/hindsight/memory"
)

// Planning turns a verdict (or a correction, feedback, a decay sweep, an
// undo) into a memory.Decision: the exact versions to write (After) and
// the current versions they replace (Before). Planners are pure: they read
// nothing and write nothing, so an activity can plan, log the decision and
// write its versions, and a retry plans the same decision again. A decision
// with no After is a no-op: nothing to write.
//
// Every version a planner writes has Version = current+1, UpdatedAt = Now,
// DecisionID and Reason set, and its confidence recomputed from evidence by
// Lifecycle.Confidence, so confidence never drifts from what the sources and
// feedback justify.

// JudgeExact is the Judge name of a decision taken on an exact content-hash
// match, without asking any judge.
const JudgeExact = "exact"

// JudgeQuarantine is the Judge name of a decision that kept a candidate
// apart because its text reads as an instruction to the agent.
const JudgeQuarantine = "quarantine"

// Op identifies the operation a plan belongs to.
type Op struct {
	// DecisionID names the decision; derive it deterministically (see
	// memory.DecisionID) so that a retried activity plans the same change.
	// A memory whose current version carries this ID was already changed by
	// this decision, and planning it again is a no-op.
	DecisionID string
	// WorkflowID is recorded on the decision for the audit log.
	WorkflowID string
	// Now is the decision time (workflow time, passed in; never read here).
	Now time.Time
	// Lifecycle holds the confidence and decay rules; the zero value means
	// memory.DefaultLifecycle.
	Lifecycle memory.Lifecycle
	// Screener reads new text for poisoning (quarantine, the
	// instruction-like flag); nil means lang/inject's Detector.
	Screener memory.Screener
}

func (o Op) screen(text string) (injected, instructionLike bool) {
	if o.Screener == nil {
		return inject.Detector{}.Screen(text)
	}
	return o.Screener.Screen(text)
}

func (o Op) lifecycle() memory.Lifecycle {
	if o.Lifecycle == (memory.Lifecycle{}) {
		return memory.DefaultLifecycle
	}
	return o.Lifecycle
}

func (o Op) validate(op string) error {
	if strings.TrimSpace(o.DecisionID) == "" {
		return memory.Invalidf(op, "decision id is required")
	}
	if o.Now.IsZero() {
		return memory.Invalidf(op, "the decision time (Now) is required")
	}
	return nil
}

// MergeInput is everything Merge needs to apply a verdict to one
// candidate memory.
type MergeInput struct {
	Op
	Tenant string
	// EpisodeID is the episode the candidate was distilled from; empty for
	// memories stated directly (memory_store).
	EpisodeID string
	Candidate memory.Candidate
	// Flags are extra trust flags for the candidate (Store adds
	// memory.FlagUserStated); memory.FlagInstructionLike is added by the
	// planner when the text reads like an instruction.
	Flags []string
	// Exact is a memory of the tenant with the candidate's content hash, if
	// the exact-hash lookup found one (live, cold or archived; never a
	// superseded or forgotten one). It makes the verdict a duplicate without
	// a judge, and Judgement is ignored.
	Exact *memory.Memory
	// Neighbors are the similar memories the judge saw, with similarity.
	Neighbors []memory.Neighbor
	// Judgement is the judge's verdict; its TargetID must name one of
	// Neighbors unless the verdict is distinct.
	Judgement memory.Judgement
}

// Merge applies a merge verdict:
//
//   - duplicate: a new version of the target that adds the candidate's
//     episode to its sources (and its evidence, entities, flags), counts as
//     a use for decay, and recomputes confidence, which rises with every
//     independent source. If the episode is already a source, or this
//     decision already wrote the target, the decision is a no-op, so a
//     retried merge never counts an episode twice.
//   - refines: a new version of the target with the candidate's (more
//     specific) content and the better counter-example, sources merged.
//   - conflicts: a new memory (ID memory.MemoryID(tenant, hash, DecisionID))
//     that supersedes the target; the target's new version is superseded,
//     points to it (SupersededBy), ends its validity (ValidTo = Now) and
//     loses confidence (Lifecycle.SupersededFactor). History keeps both, so
//     "what was true when" can still be answered.
//   - distinct: a new memory, version 1, live, decay 1 anchored at Now.
//
// Errors: EINVALID for a missing tenant, decision ID or time, an invalid
// candidate or verdict, or a target that is not among the neighbours.
func Merge(in MergeInput) (memory.Decision, error) {
	return planMerge("plan: merge", memory.ActionMerge, in)
}

// Store plans memory_store: a memory stated directly by an agent or a
// user. It is Merge with the memory.FlagUserStated flag and the store
// action; a statement that duplicates a known memory adds the flag to it.
func Store(in MergeInput) (memory.Decision, error) {
	in.Flags = appendUnique(in.Flags, memory.FlagUserStated)
	return planMerge("plan: store", memory.ActionStore, in)
}

func planMerge(op string, action memory.DecisionAction, in MergeInput) (memory.Decision, error) {
	if err := memory.ValidateTenant(op, in.Tenant); err != nil {
		return memory.Decision{}, err
	}
	if err := in.validate(op); err != nil {
		return memory.Decision{}, err
	}
	c := in.Candidate
	c.Content = strings.TrimSpace(c.Content)
	c.CounterExample = strings.TrimSpace(c.CounterExample)
	if !c.Kind.Valid() {
		return memory.Decision{}, memory.Invalidf(op, "candidate kind %q is not one of preference, lesson, fact, rule", c.Kind)
	}
	if c.Content == "" {
		return memory.Decision{}, memory.Invalidf(op, "candidate content is empty")
	}
	hash := memory.ContentHash(c.Kind, c.Content)
	flags := slices.Clone(in.Flags)
	// A counter-example is read with the memory it belongs to: alone, a
	// short failure report ("reading as utf-8 failed") says too little.
	withCounter := strings.TrimSpace(c.Content + "\n" + c.CounterExample)
	injected, suspect := in.screen(c.Content)
	if c.CounterExample != "" {
		i2, s2 := in.screen(withCounter)
		injected, suspect = injected || i2, suspect || s2
	}
	if injected || suspect {
		flags = appendUnique(flags, memory.FlagInstructionLike)
	}

	d := memory.Decision{
		ID:         in.DecisionID,
		Tenant:     in.Tenant,
		Action:     action,
		WorkflowID: in.WorkflowID,
		EpisodeID:  in.EpisodeID,
		Candidate:  in.Candidate,
		CreatedAt:  in.Now,
	}
	for _, n := range in.Neighbors {
		d.Neighbors = append(d.Neighbors, memory.ScoredCandidate{ID: n.Memory.ID, Content: n.Memory.Content, Similarity: n.Similarity})
	}

	var target *memory.Memory
	if injected && in.Exact == nil {
		// Text that reads as an instruction to the agent merges into
		// nothing, so it can change no memory: it is kept apart, in
		// quarantine, until a person decides.
		d.Verdict, d.Judge = memory.VerdictDistinct, JudgeQuarantine
		d.Reason = "quarantined: the text reads as an instruction to the agent, not as knowledge about the work; `hindsight quarantine release` makes it live"
		m := newMemory(in, c, hash, flags, in.lifecycle(), "quarantined: reads as an instruction to the agent")
		m.Status = memory.StatusQuarantined
		d.After = []memory.Memory{m}
		return d, nil
	}
	if in.Exact != nil {
		x := *in.Exact
		switch {
		case x.Tenant != in.Tenant:
			return memory.Decision{}, memory.Invalidf(op, "exact match %s belongs to tenant %q, not %q", x.ID, x.Tenant, in.Tenant)
		case x.ContentHash != hash:
			return memory.Decision{}, memory.Invalidf(op, "exact match %s has content hash %s, the candidate has %s", x.ID, x.ContentHash, hash)
		}
		target = &x
		d.Verdict, d.TargetID, d.Judge = memory.VerdictDuplicate, x.ID, JudgeExact
		d.Reason = fmt.Sprintf("exact duplicate of %s (same content hash)", x.ID)
	} else {
		j := in.Judgement
		if !j.Verdict.Valid() {
			return memory.Decision{}, memory.Invalidf(op, "verdict %q is not one of duplicate, refines, conflicts, distinct", j.Verdict)
		}
		d.Verdict, d.Reason, d.Judge, d.Model, d.PromptVersion = j.Verdict, j.Reason, j.Judge, j.Model, j.PromptVersion
		if j.Verdict != memory.VerdictDistinct {
			for i := range in.Neighbors {
				if in.Neighbors[i].Memory.ID == j.TargetID {
					t := in.Neighbors[i].Memory
					target = &t
					break
				}
			}
			if target == nil {
				return memory.Decision{}, memory.Invalidf(op, "verdict %s names target %q, which is not among the %d neighbours", j.Verdict, j.TargetID, len(in.Neighbors))
			}
			if target.Tenant != in.Tenant {
				return memory.Decision{}, memory.Invalidf(op, "target %s belongs to tenant %q, not %q", target.ID, target.Tenant, in.Tenant)
			}
			d.TargetID = target.ID
		}
	}
	if target != nil {
		// Merging stays within a scope: one user's memory never absorbs,
		// refines or supersedes another user's, or a shared one.
		if target.Scope.Norm() != c.Scope.Norm() {
			return memory.Decision{}, memory.Invalidf(op, "target %s is in scope %s, the candidate in %s: memories merge only within their scope", target.ID, target.Scope.Norm(), c.Scope.Norm())
		}
		switch target.Status {
		case memory.StatusSuperseded, memory.StatusForgotten:
			return memory.Decision{}, memory.Invalidf(op, "target %s is %s: only live, cold or archived memories can absorb a candidate", target.ID, target.Status)
		}
		if target.DecisionID == in.DecisionID {
			d.Reason = fmt.Sprintf("no change: decision %s already wrote %s version %d (%s)", in.DecisionID, target.ID, target.Version, d.Reason)
			return d, nil
		}
	}

	lc := in.lifecycle()
	switch d.Verdict {
	case memory.VerdictDuplicate:
		t := *target
		if srcs := candidateSources(in.EpisodeID, c); len(srcs) > 0 && !slices.ContainsFunc(srcs, func(s string) bool { return !slices.Contains(t.Sources, s) }) {
			d.Reason = fmt.Sprintf("no change: %s already has every source of the candidate (%s)", t.ID, d.Reason)
			return d, nil
		}
		m := nextVersion(t, in.Op, "duplicate: "+d.Reason)
		absorb(&m, c, in.EpisodeID, flags)
		m.Decay, m.DecayAnchor = lc.Use(t, in.Now)
		settle(&m, lc, in.Now)
		d.Before, d.After = []memory.Memory{t}, []memory.Memory{m}

	case memory.VerdictRefines:
		t := *target
		m := nextVersion(t, in.Op, "refined: "+d.Reason)
		m.Content, m.ContentHash = c.Content, hash
		m.CounterExample = betterCounterExample(t.CounterExample, c.CounterExample)
		c.CounterExample = "" // chosen above; absorb must not override it
		absorb(&m, c, in.EpisodeID, flags)
		m.Decay, m.DecayAnchor = lc.Use(t, in.Now)
		settle(&m, lc, in.Now)
		d.Before, d.After = []memory.Memory{t}, []memory.Memory{m}

	case memory.VerdictConflicts:
		t := *target
		if learned := learnedAt(in, c); learned.Before(t.ValidFrom) {
			// The candidate was said before what it contradicts (a session
			// imported late): it is history, superseded from the start by
			// the memory that came after it.
			n := newMemory(in, c, hash, flags, lc, "superseded from the start by "+t.ID+", said later: "+d.Reason)
			n.Status, n.SupersededBy, n.ValidTo = memory.StatusSuperseded, t.ID, t.ValidFrom
			n.Confidence = lc.Confidence(n)
			cur := nextVersion(t, in.Op, "supersedes "+n.ID+", said earlier: "+d.Reason)
			cur.Supersedes = appendUnique(cur.Supersedes, n.ID)
			d.Reason = "the candidate was said before " + t.ID + ", which it contradicts, so it is kept as superseded: " + d.Reason
			d.Before, d.After = []memory.Memory{t}, []memory.Memory{cur, n}
			break
		}
		n := newMemory(in, c, hash, flags, lc, "supersedes "+t.ID+": "+d.Reason)
		n.Supersedes = []string{t.ID}
		old := nextVersion(t, in.Op, "superseded by "+n.ID+": "+d.Reason)
		old.Status, old.SupersededBy, old.ValidTo = memory.StatusSuperseded, n.ID, in.Now
		old.Confidence = lc.Confidence(old)
		d.Before, d.After = []memory.Memory{t}, []memory.Memory{old, n}

	case memory.VerdictDistinct:
		d.After = []memory.Memory{newMemory(in, c, hash, flags, lc, "inserted: "+d.Reason)}
	}
	return d, nil
}

// nextVersion returns the next version of m for op: same memory, version
// +1, stamped with the decision.
func nextVersion(m memory.Memory, op Op, reason string) memory.Memory {
	m = m.Clone()
	m.Version++
	m.UpdatedAt = op.Now
	m.DecisionID = op.DecisionID
	m.Reason = reason
	return m
}

// learnedAt is when a candidate was said: its ObservedAt, never later than
// the decision.
func learnedAt(in MergeInput, c memory.Candidate) time.Time {
	if c.ObservedAt.IsZero() || c.ObservedAt.After(in.Now) {
		return in.Now
	}
	return c.ObservedAt.UTC()
}

// newMemory returns version 1 of a memory for the candidate, dated when
// the candidate was said. Its decay counts from now: a memory imported
// from an old session has not yet had the chance to be used, so it does
// not arrive cold.
func newMemory(in MergeInput, c memory.Candidate, hash string, flags []string, lc memory.Lifecycle, reason string) memory.Memory {
	learned := learnedAt(in, c)
	m := memory.Memory{
		ID:             memory.MemoryID(in.Tenant, hash, in.DecisionID),
		Tenant:         in.Tenant,
		Version:        1,
		Scope:          c.Scope.Norm(),
		Kind:           c.Kind,
		Content:        c.Content,
		CounterExample: c.CounterExample,
		TaskType:       c.TaskType,
		ContentHash:    hash,
		Status:         memory.StatusLive,
		ValidFrom:      learned,
		Decay:          1,
		DecayAnchor:    in.Now,
		Pinned:         c.Pinned,
		Reason:         reason,
		DecisionID:     in.DecisionID,
		CreatedAt:      learned,
		UpdatedAt:      in.Now,
	}
	c.CounterExample = ""
	absorb(&m, c, in.EpisodeID, flags)
	m.Confidence = lc.Confidence(m)
	return m
}

// absorb merges what a candidate brings into m: its episode as a source,
// its evidence, entities, flags and pin, and a counter-example or task
// type when m has none. Lists stay deduplicated and in first-seen order.
func absorb(m *memory.Memory, c memory.Candidate, episodeID string, flags []string) {
	m.Sources = appendUnique(m.Sources, candidateSources(episodeID, c)...)
	m.Evidence = appendUnique(m.Evidence, c.Evidence...)
	m.Entities = appendEntities(m.Entities, c.Entities...)
	m.Flags = appendUnique(m.Flags, flags...)
	m.Pinned = m.Pinned || c.Pinned
	if m.CounterExample == "" {
		m.CounterExample = strings.TrimSpace(c.CounterExample)
	}
	if m.TaskType == "" {
		m.TaskType = c.TaskType
	}
}

// candidateSources are the episodes a candidate brings as evidence: the
// one it is merged for and any it was also seen in.
func candidateSources(episodeID string, c memory.Candidate) []string {
	if episodeID == "" {
		return c.Sources
	}
	return append([]string{episodeID}, c.Sources...)
}

// settle recomputes what follows from a version's evidence and decay: its
// confidence, and its lifecycle status (a re-learned cold memory is live
// again).
func settle(m *memory.Memory, lc memory.Lifecycle, now time.Time) {
	m.Status = lc.StatusAt(*m, now)
	m.Confidence = lc.Confidence(*m)
}

// betterCounterExample keeps the more specific of two counter-examples:
// the longer one after normalisation, the existing one on a tie, so that a
// vaguer restatement never replaces a concrete "doing X failed because …".
func betterCounterExample(existing, candidate string) string {
	existing, candidate = strings.TrimSpace(existing), strings.TrimSpace(candidate)
	if len([]rune(memory.Normalize(candidate))) > len([]rune(memory.Normalize(existing))) {
		return candidate
	}
	return existing
}

func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		if it = strings.TrimSpace(it); it != "" && !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// appendEntities adds entities that are new after memory.NormalizeEntity,
// keeping the first spelling seen.
func appendEntities(list []string, items ...string) []string {
	seen := map[string]bool{}
	for _, e := range list {
		seen[memory.NormalizeEntity(e)] = true
	}
	for _, e := range items {
		k := memory.NormalizeEntity(e)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		list = append(list, strings.TrimSpace(e))
	}
	return list
}

// VerifyCurrent is the optimistic check that serialises concurrent changes
// to one memory: call it with the current versions of the memories a
// planned decision touches, just before writing. Every memory in d.Before
// must still be at the version d read; a memory d creates must not exist
// yet, unless d itself wrote it (a retry). Otherwise it returns ECONFLICT
// naming the decision that got there first: re-read, re-judge and re-plan.
func VerifyCurrent(d memory.Decision, current map[string]memory.Memory) error {
	const op = "merge: verify current"
	before := map[string]bool{}
	for _, b := range d.Before {
		before[b.ID] = true
		cur, ok := current[b.ID]
		switch {
		case !ok:
			return memory.Conflictf(op, "memory %s, read at version %d by decision %s, no longer exists", b.ID, b.Version, d.ID)
		case cur.Version != b.Version:
			return memory.Conflictf(op, "memory %s changed since decision %s read it: version %d → %d by decision %s", b.ID, d.ID, b.Version, cur.Version, orUnknown(cur.DecisionID))
		}
	}
	for _, a := range d.After {
		if before[a.ID] {
			continue
		}
		if cur, ok := current[a.ID]; ok && cur.DecisionID != d.ID {
			return memory.Conflictf(op, "memory %s, which decision %s creates, already exists (version %d by decision %s)", a.ID, d.ID, cur.Version, orUnknown(cur.DecisionID))
		}
	}
	return nil
}
