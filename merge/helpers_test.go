package merge

import (
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

const tenant = "acme"

// stored returns version 1 of a live memory as plan.Merge would have
// inserted it from one episode.
func stored(id string, kind memory.Kind, content string, sources ...string) memory.Memory {
	m := memory.Memory{
		ID: id, Tenant: tenant, Version: 1, Kind: kind, Content: content,
		ContentHash: memory.ContentHash(kind, content), Sources: sources,
		Status: memory.StatusLive, ValidFrom: t0, Decay: 1, DecayAnchor: t0,
		DecisionID: "dec-insert-" + id, Reason: "inserted", CreatedAt: t0, UpdatedAt: t0,
	}
	m.Confidence = memory.DefaultLifecycle.Confidence(m)
	return m
}
