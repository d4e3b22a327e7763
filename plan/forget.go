package plan

import (
	"fmt"
	"slices"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// RemainingSources are m's source episodes that are not in drop.
func RemainingSources(m memory.Memory, drop []string) []string {
	return slices.DeleteFunc(slices.Clone(m.Sources), func(s string) bool { return slices.Contains(drop, s) })
}

// DropSources plans a new version of m without the forgotten source
// episodes (drop) and without the evidence events that came from them:
// evidence survives only if it is one of kept, the events of the sessions
// of the sources that remain. Its confidence is recomputed from what
// remains. A memory this decision rebuilt already, or with none of the
// forgotten sources, needs no change.
func DropSources(op Op, m memory.Memory, drop, kept []string) (memory.Decision, error) {
	if err := op.validate("plan: drop sources"); err != nil {
		return memory.Decision{}, err
	}
	d := memory.Decision{ID: op.DecisionID, Tenant: m.Tenant, Action: memory.ActionForget, TargetID: m.ID, CreatedAt: op.Now}
	if m.DecisionID == op.DecisionID {
		d.Reason = "no change: already rebuilt"
		return d, nil
	}
	keep := RemainingSources(m, drop)
	if len(keep) == len(m.Sources) {
		d.Reason = fmt.Sprintf("no change: %s has none of the forgotten sources", m.ID)
		return d, nil
	}
	n := m
	n.Sources = keep
	n.Evidence = slices.DeleteFunc(slices.Clone(m.Evidence), func(e string) bool { return len(keep) == 0 || !slices.Contains(kept, e) })
	n.Version, n.UpdatedAt, n.DecisionID = m.Version+1, op.Now, op.DecisionID
	n.Reason = fmt.Sprintf("forgot %d source episode(s); %d remain", len(m.Sources)-len(keep), len(keep))
	n.RecallCount, n.LastRecalledAt = 0, time.Time{}
	n.Confidence = op.lifecycle().Confidence(n)
	d.Reason = n.Reason
	d.Before, d.After = []memory.Memory{m}, []memory.Memory{n}
	return d, nil
}

// Tombstone is what remains of a forgotten memory: its ID, tenant and kind,
// a version after its last, and no text.
func Tombstone(m memory.Memory, now time.Time) memory.Memory {
	return memory.Memory{
		ID: m.ID, Tenant: m.Tenant, Version: m.Version + 1, Scope: m.Scope, Kind: m.Kind,
		Status: memory.StatusForgotten, Reason: "forgotten", ValidTo: now,
		CreatedAt: m.CreatedAt, UpdatedAt: now,
	}
}
