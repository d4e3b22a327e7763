package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// memoryDecision starts a decision about one existing memory.
func memoryDecision(op Op, action memory.DecisionAction, m memory.Memory) memory.Decision {
	return memory.Decision{
		ID:         op.DecisionID,
		Tenant:     m.Tenant,
		Action:     action,
		WorkflowID: op.WorkflowID,
		TargetID:   m.ID,
		CreatedAt:  op.Now,
	}
}

func validateMemory(op string, m memory.Memory) error {
	if err := memory.ValidateTenant(op, m.Tenant); err != nil {
		return err
	}
	if m.ID == "" || m.Version < 1 {
		return memory.Invalidf(op, "the current version of the memory is required (got id %q, version %d)", m.ID, m.Version)
	}
	return nil
}

// alreadyApplied returns a no-op decision when m's current version was
// written by this very decision: the plan is being retried after its write.
func alreadyApplied(op Op, action memory.DecisionAction, m memory.Memory) (memory.Decision, bool) {
	if m.DecisionID != op.DecisionID {
		return memory.Decision{}, false
	}
	d := memoryDecision(op, action, m)
	d.Reason = fmt.Sprintf("no change: decision %s already wrote %s version %d", op.DecisionID, m.ID, m.Version)
	return d, true
}

// Pin plans pinning or unpinning m: a pinned memory never decays and is
// never archived. It is a correction by a person, undone like any other.
func Pin(op Op, m memory.Memory, pinned bool) (memory.Decision, error) {
	const name = "plan: pin"
	if err := op.validate(name); err != nil {
		return memory.Decision{}, err
	}
	if err := validateMemory(name, m); err != nil {
		return memory.Decision{}, err
	}
	switch m.Status {
	case memory.StatusForgotten, memory.StatusQuarantined:
		return memory.Decision{}, memory.Invalidf(name, "memory %s is %s and cannot be pinned", m.ID, m.Status)
	}
	if d, ok := alreadyApplied(op, memory.ActionCorrect, m); ok {
		return d, nil
	}
	d := memoryDecision(op, memory.ActionCorrect, m)
	word := map[bool]string{true: "pinned", false: "unpinned"}[pinned]
	if m.Pinned == pinned {
		d.Reason = fmt.Sprintf("no change: %s is already %s", m.ID, word)
		return d, nil
	}
	n := nextVersion(m, op, word)
	n.Pinned = pinned
	if !pinned {
		// Decay resumes from now, not from when it was pinned.
		n.DecayAnchor = op.Now
	}
	n.Status = op.lifecycle().StatusAt(n, op.Now)
	d.Reason = word
	d.Before, d.After = []memory.Memory{m}, []memory.Memory{n}
	return d, nil
}

// Correct plans memory_correct on m, the memory's current version:
// either new content (a new version with the text replaced, its hash
// recomputed, flagged memory.FlagUserStated) or, with outdated set, a new
// version marked superseded with its validity ended at Now and its
// confidence lowered. Correcting to the same text, or marking an outdated
// memory outdated again, is a no-op.
//
// Errors: EINVALID when both or neither of content and outdated are given,
// or when m is forgotten.
func Correct(op Op, m memory.Memory, content string, outdated bool) (memory.Decision, error) {
	const name = "plan: correct"
	if err := op.validate(name); err != nil {
		return memory.Decision{}, err
	}
	if err := validateMemory(name, m); err != nil {
		return memory.Decision{}, err
	}
	content = strings.TrimSpace(content)
	switch {
	case content == "" && !outdated:
		return memory.Decision{}, memory.Invalidf(name, "give the corrected text, or mark the memory outdated")
	case content != "" && outdated:
		return memory.Decision{}, memory.Invalidf(name, "give either the corrected text or outdated, not both: an outdated memory keeps the text it had")
	case m.Status == memory.StatusForgotten:
		return memory.Decision{}, memory.Invalidf(name, "memory %s was forgotten and cannot be corrected", m.ID)
	}
	if d, ok := alreadyApplied(op, memory.ActionCorrect, m); ok {
		return d, nil
	}
	lc := op.lifecycle()
	d := memoryDecision(op, memory.ActionCorrect, m)
	if outdated {
		if m.Status == memory.StatusSuperseded {
			d.Reason = fmt.Sprintf("no change: %s is already superseded", m.ID)
			return d, nil
		}
		n := nextVersion(m, op, "marked outdated")
		n.Status = memory.StatusSuperseded
		if n.ValidTo.IsZero() {
			n.ValidTo = op.Now
		}
		n.Confidence = lc.Confidence(n)
		d.Reason = "marked outdated"
		d.Before, d.After = []memory.Memory{m}, []memory.Memory{n}
		return d, nil
	}
	if memory.Normalize(content) == memory.Normalize(m.Content) {
		d.Reason = fmt.Sprintf("no change: %s already says this", m.ID)
		return d, nil
	}
	n := nextVersion(m, op, "corrected")
	n.Content, n.ContentHash = content, memory.ContentHash(m.Kind, content)
	n.Flags = appendUnique(n.Flags, memory.FlagUserStated)
	d.Reason = "corrected text"
	injected, suspect := op.screen(content)
	if suspect {
		n.Flags = appendUnique(n.Flags, memory.FlagInstructionLike)
	}
	if injected {
		// A correction cannot smuggle an instruction into a live memory.
		n.Flags = appendUnique(n.Flags, memory.FlagInstructionLike)
		n.Flags = slices.DeleteFunc(n.Flags, func(f string) bool { return f == memory.FlagReleased })
		n.Status = memory.StatusQuarantined
		n.Reason = "corrected; quarantined: the new text reads as an instruction to the agent"
		d.Reason = "corrected text, quarantined: it reads as an instruction to the agent; `hindsight quarantine release` makes it live"
	}
	n.Confidence = lc.Confidence(n)
	d.Before, d.After = []memory.Memory{m}, []memory.Memory{n}
	return d, nil
}

// Feedback plans memory_feedback on m: a task that used the memory
// succeeded (helped) or failed. The new version counts the outcome (Helped
// or Hurt), which moves confidence by Lifecycle.HelpedStep or HurtStep
// within the evidence cap, and counts as a use for decay (Lifecycle.Use),
// which may bring a cold memory back to live. Superseded memories keep
// their status.
//
// Errors: EINVALID when m is forgotten.
func Feedback(op Op, m memory.Memory, helped bool) (memory.Decision, error) {
	const name = "plan: feedback"
	if err := op.validate(name); err != nil {
		return memory.Decision{}, err
	}
	if err := validateMemory(name, m); err != nil {
		return memory.Decision{}, err
	}
	if m.Status == memory.StatusForgotten {
		return memory.Decision{}, memory.Invalidf(name, "memory %s was forgotten and takes no feedback", m.ID)
	}
	if d, ok := alreadyApplied(op, memory.ActionFeedback, m); ok {
		return d, nil
	}
	lc := op.lifecycle()
	outcome, result := "hurt", "failed"
	if helped {
		outcome, result = "helped", "succeeded"
	}
	n := nextVersion(m, op, "feedback: a task that used it "+result)
	if helped {
		n.Helped++
	} else {
		n.Hurt++
	}
	n.Decay, n.DecayAnchor = lc.Use(m, op.Now)
	settle(&n, lc, op.Now)
	d := memoryDecision(op, memory.ActionFeedback, m)
	d.Reason = fmt.Sprintf("feedback %s: confidence %.3f → %.3f", outcome, m.Confidence, n.Confidence)
	d.Before, d.After = []memory.Memory{m}, []memory.Memory{n}
	return d, nil
}

// Decay plans the lifecycle sweep for m at op.Now: its status becomes
// Lifecycle.StatusAt (live, cold below ColdBelow, archived below
// ArchiveBelow; pinned memories stay live; superseded and forgotten ones
// keep theirs). The new version keeps Decay and DecayAnchor as they were:
// the effective score is always computed from those timestamps, so sweeps
// that run twice, late or never agree. When the status does not change the
// decision is a no-op.
func Decay(op Op, m memory.Memory) (memory.Decision, error) {
	const name = "plan: decay"
	if err := op.validate(name); err != nil {
		return memory.Decision{}, err
	}
	if err := validateMemory(name, m); err != nil {
		return memory.Decision{}, err
	}
	lc := op.lifecycle()
	d := memoryDecision(op, memory.ActionDecay, m)
	eff := lc.EffectiveDecay(m, op.Now)
	st := lc.StatusAt(m, op.Now)
	if st == m.Status {
		d.Reason = fmt.Sprintf("no change: %s stays %s (decay %.3f)", m.ID, st, eff)
		return d, nil
	}
	n := nextVersion(m, op, fmt.Sprintf("decay %.3f: %s → %s", eff, m.Status, st))
	n.Status = st
	n.Confidence = lc.Confidence(n)
	d.Reason = n.Reason
	d.Before, d.After = []memory.Memory{m}, []memory.Memory{n}
	return d, nil
}

// Undo plans undoing decision d. current holds the current version of
// every memory d wrote (d.After), keyed by ID.
//
// Each memory d changed gets a new version (current version + 1) whose
// content and state are exactly those of its version in d.Before; each
// memory d created gets a new version with status forgotten and its
// validity ended. Forgotten, not superseded: an undone memory was never
// true, so it must not come back even when recall asks for superseded
// history; its versions stay in the history for the audit.
//
// Undo refuses with ECONFLICT, naming the later decision, when a memory was
// changed after d (its current version is not the one d wrote), unless
// force is set, in which case the restored state is written on top of the
// later change. Undoing twice is safe: when every memory's current version
// was written by this undo (op.DecisionID), the plan is a no-op.
//
// Errors: EINVALID when d changed nothing; ENOTFOUND when a memory d wrote
// is missing from current (purged since).
func Undo(op Op, d memory.Decision, current map[string]memory.Memory, force bool) (memory.Decision, error) {
	const name = "plan: undo"
	if err := op.validate(name); err != nil {
		return memory.Decision{}, err
	}
	if err := memory.ValidateTenant(name, d.Tenant); err != nil {
		return memory.Decision{}, err
	}
	if len(d.After) == 0 {
		return memory.Decision{}, memory.Invalidf(name, "decision %s changed nothing, so there is nothing to undo", d.ID)
	}
	u := memory.Decision{
		ID:         op.DecisionID,
		Tenant:     d.Tenant,
		Action:     memory.ActionUndo,
		WorkflowID: op.WorkflowID,
		TargetID:   d.TargetID,
		Undoes:     d.ID,
		CreatedAt:  op.Now,
	}
	before := map[string]memory.Memory{}
	for _, b := range d.Before {
		before[b.ID] = b
	}
	done := 0
	for _, a := range d.After {
		cur, ok := current[a.ID]
		if !ok {
			return memory.Decision{}, memory.NotFoundf(name, "memory %s, written by decision %s, no longer exists", a.ID, d.ID)
		}
		if cur.Tenant != d.Tenant {
			return memory.Decision{}, memory.Invalidf(name, "memory %s belongs to tenant %q, decision %s to %q", a.ID, cur.Tenant, d.ID, d.Tenant)
		}
		if cur.DecisionID == op.DecisionID {
			done++ // restored by this undo already (a retry)
			continue
		}
		if cur.Version != a.Version && !force {
			return memory.Decision{}, memory.Conflictf(name,
				"memory %s was changed after decision %s by decision %s (now version %d, %s wrote version %d): undo %s first, or force the undo",
				a.ID, d.ID, orUnknown(cur.DecisionID), cur.Version, d.ID, a.Version, orUnknown(cur.DecisionID))
		}
		var n memory.Memory
		if b, ok := before[a.ID]; ok {
			n = b.Clone()
			n.Version = cur.Version + 1
			n.UpdatedAt = op.Now
			n.DecisionID = op.DecisionID
			n.Reason = fmt.Sprintf("undo of %s: restored version %d", d.ID, b.Version)
			// Usage is kept apart from versions; carry the current reading.
			n.RecallCount, n.LastRecalledAt = cur.RecallCount, cur.LastRecalledAt
		} else {
			n = nextVersion(cur, op, fmt.Sprintf("undo of %s: retired the memory it created", d.ID))
			n.Status = memory.StatusForgotten
			if n.ValidTo.IsZero() {
				n.ValidTo = op.Now
			}
		}
		u.Before = append(u.Before, cur)
		u.After = append(u.After, n)
	}
	switch {
	case done == len(d.After):
		u.Reason = fmt.Sprintf("no change: decision %s was already undone by %s", d.ID, op.DecisionID)
	case force:
		u.Reason = fmt.Sprintf("forced undo of %s (%s)", d.ID, d.Action)
	default:
		u.Reason = fmt.Sprintf("undo of %s (%s)", d.ID, d.Action)
	}
	return u, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// Release plans a person's release of m from quarantine: a new
// version, live (or cold or archived by its decay), flagged
// memory.FlagReleased, with why in its reason. Undoing the decision puts
// it back in quarantine.
//
// Errors: EINVALID when m is not quarantined.
func Release(op Op, m memory.Memory, why string) (memory.Decision, error) {
	const name = "plan: release"
	if err := op.validate(name); err != nil {
		return memory.Decision{}, err
	}
	if err := validateMemory(name, m); err != nil {
		return memory.Decision{}, err
	}
	if d, ok := alreadyApplied(op, memory.ActionRelease, m); ok {
		return d, nil
	}
	if m.Status != memory.StatusQuarantined {
		return memory.Decision{}, memory.Invalidf(name, "memory %s is %s, not quarantined: only a quarantined memory can be released", m.ID, m.Status)
	}
	d := memoryDecision(op, memory.ActionRelease, m)
	why = strings.TrimSpace(why)
	reason := "released from quarantine by a person"
	if why != "" {
		reason += ": " + why
	}
	n := nextVersion(m, op, reason)
	n.Status = memory.StatusLive
	n.Flags = appendUnique(n.Flags, memory.FlagReleased)
	lc := op.lifecycle()
	n.Status = lc.StatusAt(n, op.Now)
	n.Confidence = lc.Confidence(n)
	d.Reason = reason
	d.Before, d.After = []memory.Memory{m}, []memory.Memory{n}
	return d, nil
}
