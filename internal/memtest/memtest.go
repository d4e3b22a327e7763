// Package memtest builds memory values for tests only: the plan and merge
// tests share one stored memory, one tenant and one start time.
package memtest

import (
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// T0 is when the fixtures' memories were stored.
var T0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// Tenant is the fixtures' tenant.
const Tenant = "acme"

// Stored returns version 1 of a live memory of Tenant as plan.Merge would
// have inserted it from one episode at T0.
func Stored(id string, kind memory.Kind, content string, sources ...string) memory.Memory {
	m := memory.Memory{
		ID: id, Tenant: Tenant, Version: 1, Kind: kind, Content: content,
		ContentHash: memory.ContentHash(kind, content), Sources: sources,
		Status: memory.StatusLive, ValidFrom: T0, Decay: 1, DecayAnchor: T0,
		DecisionID: "dec-insert-" + id, Reason: "inserted", CreatedAt: T0, UpdatedAt: T0,
	}
	m.Confidence = memory.DefaultLifecycle.Confidence(m)
	return m
}
