package consolidate

import (
	"slices"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// Reconciliation repairs the vector index (Milvus, or the embedded index)
// against the system of record (ClickHouse): the index is derived data,
// so whatever differs, the store is right.
//
// What the index should hold:
//
//   - memories: the current version of every memory whose status is live,
//     cold or superseded. Cold ones stay searchable when recall asks for
//     them (the seeds: cold memories can be woken up), superseded ones
//     when history is asked for. Archived and forgotten memories are not
//     indexed: archived ones are out of recall for good until restored,
//     and a forgotten one must leave no trace.
//   - episodes: every stored episode, live, cold or summary, with its
//     current status, so that filters on status see archived episodes as
//     cold.
//
// A document is stale when it describes another version than the store's
// current one: a different UpdatedAt (compared at millisecond precision,
// which both ClickHouse and Milvus keep), or a different status, kind or
// task type (the fields recall filters on; an archived episode keeps its
// UpdatedAt but changes status).

// Entry is what reconciliation compares about one memory or episode, on
// either side.
type Entry struct {
	ID        string
	Status    string
	Kind      memory.Kind
	TaskType  string
	UpdatedAt time.Time
}

// Reconciliation is what to do to the index: re-embed and upsert Upsert,
// delete Delete. Both are sorted; an ID is in at most one of them.
type Reconciliation struct {
	Upsert []string `json:"upsert,omitempty"`
	Delete []string `json:"delete,omitempty"`
	// Counts by reason, for logs and metrics.
	Missing   int `json:"missing"`   // in the store, should be indexed, not in the index
	Stale     int `json:"stale"`     // indexed, but not the current version
	Extra     int `json:"extra"`     // in the index, unknown to the store
	Unindexed int `json:"unindexed"` // in the index, but its status should not be
}

// Empty reports whether the index already matches the store.
func (r Reconciliation) Empty() bool { return len(r.Upsert) == 0 && len(r.Delete) == 0 }

// Indexed reports whether a memory with status s belongs in the vector
// index: live, cold and superseded memories do; archived and forgotten
// ones do not.
func Indexed(s memory.Status) bool {
	switch s {
	case memory.StatusLive, memory.StatusCold, memory.StatusSuperseded:
		return true
	}
	return false
}

// MemoryEntry is the entry of a memory's version.
func MemoryEntry(m memory.Memory) Entry {
	return Entry{ID: m.ID, Status: string(m.Status), Kind: m.Kind, TaskType: m.TaskType, UpdatedAt: m.UpdatedAt}
}

// EpisodeEntry is the entry of an episode, as memory.EpisodeVectorDoc
// indexes it (its UpdatedAt is the episode's CreatedAt).
func EpisodeEntry(ep memory.Episode) Entry {
	return Entry{ID: ep.ID, Status: string(ep.Status), TaskType: ep.TaskType, UpdatedAt: ep.CreatedAt}
}

// DocEntry is the entry of an indexed document.
func DocEntry(d memory.VectorDoc) Entry {
	return Entry{ID: d.ID, Status: d.Status, Kind: d.Kind, TaskType: d.TaskType, UpdatedAt: d.UpdatedAt}
}

// Reconcile compares what the store holds with what the index holds.
// want lists every document the index should hold (already filtered by
// Indexed), have every document it holds; an ID listed twice counts with
// its latest UpdatedAt. Documents in want but not in have are missing,
// documents in both that differ are stale, and documents only in have are
// extra. known lists IDs the store holds that must not be indexed
// (archived, forgotten); an indexed one is counted as unindexed rather
// than extra, and deleted all the same.
func Reconcile(want, have []Entry, known []string) Reconciliation {
	w, h := latest(want), latest(have)
	isKnown := make(map[string]bool, len(known))
	for _, id := range known {
		isKnown[id] = true
	}
	var r Reconciliation
	for id, e := range w {
		got, ok := h[id]
		switch {
		case !ok:
			r.Missing++
			r.Upsert = append(r.Upsert, id)
		case !sameVersion(e, got):
			r.Stale++
			r.Upsert = append(r.Upsert, id)
		}
	}
	for id := range h {
		if _, ok := w[id]; ok {
			continue
		}
		if isKnown[id] {
			r.Unindexed++
		} else {
			r.Extra++
		}
		r.Delete = append(r.Delete, id)
	}
	slices.Sort(r.Upsert)
	slices.Sort(r.Delete)
	return r
}

// ReconcileMemories plans the repair of tenant's memories collection:
// store are the current versions the store holds (every status), index
// the documents the index holds. An older version of a memory next to a
// newer one is ignored. Rows of another tenant return EINVALID: a
// reconciliation must never delete another tenant's vectors.
func ReconcileMemories(tenant string, store []memory.Memory, index []memory.VectorDoc) (Reconciliation, error) {
	const op = "consolidate: reconcile memories"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return Reconciliation{}, err
	}
	current := map[string]memory.Memory{}
	for i, m := range store {
		if m.Tenant != tenant {
			return Reconciliation{}, memory.Invalidf(op, "store row %d (%s) belongs to tenant %q, not %q", i, m.ID, m.Tenant, tenant)
		}
		if c, ok := current[m.ID]; !ok || m.Version > c.Version {
			current[m.ID] = m
		}
	}
	var want []Entry
	var known []string
	for _, m := range current {
		if Indexed(m.Status) {
			want = append(want, MemoryEntry(m))
		} else {
			known = append(known, m.ID)
		}
	}
	have, err := docEntries(op, tenant, index)
	if err != nil {
		return Reconciliation{}, err
	}
	return Reconcile(want, have, known), nil
}

// ReconcileEpisodes plans the repair of tenant's episodes collection:
// store are the tenant's episodes of every status (live, cold, summary),
// index the documents the index holds. Rows of another tenant return
// EINVALID.
func ReconcileEpisodes(tenant string, store []memory.Episode, index []memory.VectorDoc) (Reconciliation, error) {
	const op = "consolidate: reconcile episodes"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return Reconciliation{}, err
	}
	want := make([]Entry, 0, len(store))
	for i, ep := range store {
		if ep.Tenant != tenant {
			return Reconciliation{}, memory.Invalidf(op, "store row %d (%s) belongs to tenant %q, not %q", i, ep.ID, ep.Tenant, tenant)
		}
		want = append(want, EpisodeEntry(ep))
	}
	have, err := docEntries(op, tenant, index)
	if err != nil {
		return Reconciliation{}, err
	}
	return Reconcile(want, have, nil), nil
}

func docEntries(op, tenant string, docs []memory.VectorDoc) ([]Entry, error) {
	out := make([]Entry, 0, len(docs))
	for i, d := range docs {
		if d.Tenant != tenant {
			return nil, memory.Invalidf(op, "index row %d (%s) belongs to tenant %q, not %q", i, d.ID, d.Tenant, tenant)
		}
		out = append(out, DocEntry(d))
	}
	return out, nil
}

// latest keeps one entry per ID: the one with the latest UpdatedAt (the
// first of equals).
func latest(es []Entry) map[string]Entry {
	m := make(map[string]Entry, len(es))
	for _, e := range es {
		if c, ok := m[e.ID]; !ok || e.UpdatedAt.After(c.UpdatedAt) {
			m[e.ID] = e
		}
	}
	return m
}

// sameVersion reports whether an indexed entry describes the store's
// version.
func sameVersion(store, index Entry) bool {
	return store.UpdatedAt.Truncate(time.Millisecond).Equal(index.UpdatedAt.Truncate(time.Millisecond)) &&
		store.Status == index.Status && store.Kind == index.Kind && store.TaskType == index.TaskType
}
