package clickhouse

import (
	"context"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

// WriteCounts are the per-tenant write counts of a data directory that no
// other process can open (embedded chDB), one count per WriteKind, each
// taken once the write is visible; a write of unknown tenants (a statement
// served to another process) counts for every tenant. A count read before
// a read began, and unchanged after it, proves that nothing the read saw
// has changed since.
type WriteCounts interface {
	Writes(tenant string) Writes
	AddWrites(kind WriteKind, tenants ...string)
}

// Writes are a tenant's counts, by WriteKind.
type Writes [writeKinds]uint64

// WriteKind is what a write changed.
type WriteKind int

const (
	MemoryWrites   WriteKind = iota // memory versions, and purges (which change everything)
	UsageWrites                     // usage recorded
	DecisionWrites                  // decisions logged
	writeKinds
)

// Bounds of the memory cache (CacheMemories); variables for tests.
var (
	cacheTenants = 64
	// cacheMemories is the most memories of one tenant the cache holds,
	// rows and content hashes each; a tenant with more content hashes is
	// read from the store, as without the cache. cacheIDs bounds the IDs
	// of memories with usage and of decisions logged likewise.
	cacheMemories = 20_000
	cacheIDs      = 100_000
)

// CacheMemories keeps the current memories this store reads and writes by
// ID and by content hash, the IDs of memories with usage and the IDs of
// decisions logged, per tenant, while counts proves that no other write
// changed them; the store's own writes are counted in counts from then on.
// The ledger asks the same of the store over and over (is a decision
// logged, a candidate's exact repeats, its neighbours with their usage),
// each a query of chDB (a read of every column of a memory takes 5-8 ms),
// where an answer from memory costs nothing. Only a store whose counts see
// every write may cache (embedded chDB): a server has other writers.
func (s *Store) CacheMemories(counts WriteCounts) {
	s.cache = &memoryCache{counts: counts, tenants: map[string]*cachedTenant{}}
}

// memoryCache holds, per tenant, what CacheMemories says, each part exact
// as of its count (cachedTenant.at). A read the cache can answer in full is
// answered from it; else the store is read for what is missing, and the
// answer kept if nothing was counted meanwhile.
type memoryCache struct {
	counts  WriteCounts
	mu      sync.Mutex
	tenants map[string]*cachedTenant
}

type cachedTenant struct {
	// at are the counts each part is exact at.
	at Writes
	// MemoryWrites: current versions by ID, as the store returns them,
	// without usage; IDs the store has no memory of; and, once loaded
	// (hashed), the content hash of every memory, by ID, and inverted.
	rows   map[string]memory.Memory
	absent map[string]bool
	hashed bool
	hashes map[string]string
	byHash map[string][]string
	// UsageWrites: usage read, by memory ID; and, once loaded (non-nil),
	// the ID of every memory with any usage.
	usage map[string]usage
	used  map[string]bool
	// DecisionWrites: once loaded (non-nil), the ID of every decision
	// logged.
	logged map[string]bool
	// tooMany marks the sets a tenant has too many of to hold (content
	// hashes, IDs with usage, decisions logged): they are not loaded
	// again, and the store answers, for as long as the entry lasts.
	tooMany [writeKinds]bool
}

// reset empties t's part of kind, exact at at.
func (t *cachedTenant) reset(kind WriteKind, at uint64) {
	t.at[kind] = at
	switch kind {
	case MemoryWrites:
		t.rows, t.absent, t.hashed, t.hashes, t.byHash = map[string]memory.Memory{}, map[string]bool{}, false, nil, nil
	case UsageWrites:
		t.usage, t.used = map[string]usage{}, nil
	case DecisionWrites:
		t.logged = nil
	}
}

// tenant returns tenant's entry as of the counts w: a part counted before
// a write w includes is stale, and emptied; one counted after (a write
// this reader began before) is not. c.mu is held.
func (c *memoryCache) tenant(tenant string, w Writes) *cachedTenant {
	t := c.tenants[tenant]
	if t == nil {
		if len(c.tenants) >= cacheTenants {
			for k := range c.tenants { // drop any one: a map's order is random
				delete(c.tenants, k)
				break
			}
		}
		t = &cachedTenant{}
		for k := range writeKinds {
			t.reset(k, w[k])
		}
		c.tenants[tenant] = t
	}
	for k := range writeKinds {
		if w[k] > t.at[k] {
			t.reset(k, w[k])
		}
	}
	if len(t.rows)+len(t.absent) > cacheMemories {
		t.rows, t.absent = map[string]memory.Memory{}, map[string]bool{}
	}
	if len(t.hashes) > cacheMemories {
		t.hashed, t.hashes, t.byHash, t.tooMany[MemoryWrites] = false, nil, nil, true
	}
	if len(t.usage) > cacheIDs {
		t.usage = map[string]usage{}
	}
	if len(t.used) > cacheIDs {
		t.used, t.tooMany[UsageWrites] = nil, true
	}
	if len(t.logged) > cacheIDs {
		t.logged, t.tooMany[DecisionWrites] = nil, true
	}
	return t
}

// keep reports whether what the store answered of kind after the counts w
// were read may be kept in t: t's part is exact at w's count, and nothing
// was counted since. c.mu is held.
func (c *memoryCache) keep(t *cachedTenant, tenant string, kind WriteKind, w Writes) bool {
	return t.at[kind] == w[kind] && c.counts.Writes(tenant)[kind] == w[kind]
}

// servable reports whether the cache can answer f: a read by IDs or by
// content hashes (one field of the two), narrowed only by scope, kind and
// status. A read of recall's fields is not: its rows are not whole, so the
// cache could not keep them, and its caller (stateless recall) is a
// replica's, which has no cache of the store.
func servable(f memory.MemoryFilter) bool {
	if (len(f.IDs) > 0) == (f.ContentHash != "" || len(f.ContentHashes) > 0) || (f.ContentHash != "" && len(f.ContentHashes) > 0) {
		return false
	}
	rest := f
	rest.Tenant, rest.IDs, rest.Scopes, rest.Kinds, rest.Statuses = "", nil, nil, nil, nil
	rest.ContentHash, rest.ContentHashes, rest.NoUsage = "", nil, false
	return reflect.ValueOf(rest).IsZero()
}

// memories answers f from the cache and what the store adds to it, as
// Store.Memories would; ok is false when the cache cannot answer it.
func (c *memoryCache) memories(ctx context.Context, s *Store, f memory.MemoryFilter) (out []memory.Memory, ok bool, err error) {
	if !servable(f) {
		return nil, false, nil
	}
	// The counts are read before the store is: a write they do not count
	// yet is one a fill below must not keep (see keep).
	w := c.counts.Writes(f.Tenant)
	ids := f.IDs
	if len(ids) == 0 {
		hashes := f.ContentHashes
		if f.ContentHash != "" {
			hashes = []string{f.ContentHash}
		}
		var known bool
		if ids, known, err = c.hashed(ctx, s, f.Tenant, hashes, w); err != nil || !known {
			return nil, known, err
		}
	}
	rows, err := c.rows(ctx, s, f.Tenant, ids, w)
	if err != nil {
		return nil, true, err
	}
	out = []memory.Memory{}
	for _, m := range rows {
		if (len(f.Scopes) > 0 && !memory.InScopes(m.Scope, f.Scopes)) || (len(f.Kinds) > 0 && !slices.Contains(f.Kinds, m.Kind)) ||
			(len(f.Statuses) > 0 && !slices.Contains(f.Statuses, m.Status)) {
			continue
		}
		out = append(out, m)
	}
	slices.SortFunc(out, memory.CompareUpdated)
	if !f.NoUsage && len(out) > 0 {
		if err := c.fillUsage(ctx, s, f.Tenant, out, w); err != nil {
			return nil, true, err
		}
	}
	return out, true, nil
}

// hashed returns the IDs of tenant's memories with one of hashes, loading
// the content hashes of all its memories on first use; known is false for
// a tenant too large to hold them.
func (c *memoryCache) hashed(ctx context.Context, s *Store, tenant string, hashes []string, w Writes) (ids []string, known bool, err error) {
	of := func(byHash map[string][]string) []string {
		var ids []string
		for _, h := range hashes {
			for _, id := range byHash[h] {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
		return ids
	}
	c.mu.Lock()
	t := c.tenant(tenant, w)
	if t.tooMany[MemoryWrites] {
		c.mu.Unlock()
		return nil, false, nil
	}
	if t.hashed {
		defer c.mu.Unlock()
		return of(t.byHash), true, nil
	}
	c.mu.Unlock()
	all := map[string]string{}
	err = s.queryRows(ctx, "memories: content hashes",
		"SELECT id, content_hash FROM memories_current FINAL WHERE tenant = {tenant:String} LIMIT {limit:UInt64}",
		func(r driver.Rows) error {
			var id, hash string
			err := r.Scan(&id, &hash)
			all[id] = hash
			return err
		}, ch.Named("tenant", tenant), ch.Named("limit", uint64(cacheMemories+1)))
	if err != nil {
		return nil, false, err
	}
	byHash := map[string][]string{}
	for id, h := range all {
		byHash[h] = append(byHash[h], id)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t = c.tenant(tenant, w)
	if len(all) > cacheMemories {
		t.tooMany[MemoryWrites] = true
		return nil, false, nil
	}
	if c.keep(t, tenant, MemoryWrites, w) && !t.hashed {
		t.hashed, t.hashes, t.byHash = true, all, byHash
	}
	return of(byHash), true, nil
}

// rows returns the current versions of ids (those the store has), from the
// cache, reading the store for the rest.
func (c *memoryCache) rows(ctx context.Context, s *Store, tenant string, ids []string, w Writes) ([]memory.Memory, error) {
	var out []memory.Memory
	var missing []string
	c.mu.Lock()
	t := c.tenant(tenant, w)
	for _, id := range ids {
		if m, ok := t.rows[id]; ok {
			if !slices.ContainsFunc(out, func(o memory.Memory) bool { return o.ID == id }) {
				out = append(out, m.Clone())
			}
		} else if !t.absent[id] && !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	read, err := s.readMemories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: missing, NoUsage: true})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t = c.tenant(tenant, w)
	keep := c.keep(t, tenant, MemoryWrites, w)
	for _, id := range missing {
		if keep {
			t.absent[id] = true
		}
	}
	for _, m := range read {
		out = append(out, m)
		if keep {
			delete(t.absent, m.ID)
			t.rows[m.ID] = m.Clone()
		}
	}
	return out, nil
}

// fillUsage sets the usage of ms, from the cache and the store. A memory
// missing from the IDs with usage has none: only the others are read.
func (c *memoryCache) fillUsage(ctx context.Context, s *Store, tenant string, ms []memory.Memory, w Writes) error {
	us := map[string]usage{}
	var missing []string
	c.mu.Lock()
	t := c.tenant(tenant, w)
	used, tooMany := t.used, t.tooMany[UsageWrites]
	for _, m := range ms {
		if u, ok := t.usage[m.ID]; ok {
			us[m.ID] = u
		} else if used == nil || used[m.ID] {
			missing = append(missing, m.ID)
		}
	}
	c.mu.Unlock()
	if used == nil && !tooMany {
		ids, err := c.loadIDs(ctx, s, tenant, UsageWrites, w, "memories: ids with usage",
			"SELECT DISTINCT memory_id FROM memory_usage WHERE tenant = {tenant:String} LIMIT {limit:UInt64}")
		if err != nil {
			return err
		}
		if ids != nil {
			missing = slices.DeleteFunc(missing, func(id string) bool { return !ids[id] })
		}
	}
	if len(missing) > 0 {
		read, err := s.usageOf(ctx, tenant, missing)
		if err != nil {
			return err
		}
		c.mu.Lock()
		t = c.tenant(tenant, w)
		keep := c.keep(t, tenant, UsageWrites, w)
		for _, id := range missing {
			us[id] = read[id] // none read: never recalled
			if keep {
				t.usage[id] = read[id]
			}
		}
		c.mu.Unlock()
	}
	applyUsage(ms, us)
	return nil
}

// loadIDs reads the IDs query returns (one String column; its limit is
// cacheIDs + 1) and keeps them as t's set of kind (used or logged), unless
// something was counted meanwhile. It returns nil for a tenant with more,
// and marks it (tooMany).
func (c *memoryCache) loadIDs(ctx context.Context, s *Store, tenant string, kind WriteKind, w Writes, op, query string) (map[string]bool, error) {
	ids := map[string]bool{}
	err := s.queryRows(ctx, op, query, func(r driver.Rows) error {
		var id string
		err := r.Scan(&id)
		ids[id] = true
		return err
	}, ch.Named("tenant", tenant), ch.Named("limit", uint64(cacheIDs+1)))
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenant(tenant, w)
	if err != nil || len(ids) > cacheIDs {
		if err == nil {
			t.tooMany[kind] = true
		}
		return nil, err
	}
	if c.keep(t, tenant, kind, w) {
		if kind == UsageWrites && t.used == nil {
			t.used = ids
		} else if kind == DecisionWrites && t.logged == nil {
			t.logged = ids
		}
	}
	return ids, nil
}

// loggedIDs is Store.LoggedDecisionIDs answered from the IDs of every
// decision of tenant logged, loaded on first use; ok is false for a tenant
// with too many to hold.
func (c *memoryCache) loggedIDs(ctx context.Context, s *Store, tenant string, ids []string) (out []string, ok bool, err error) {
	w := c.counts.Writes(tenant)
	c.mu.Lock()
	t := c.tenant(tenant, w)
	logged, tooMany := t.logged, t.tooMany[DecisionWrites]
	c.mu.Unlock()
	if tooMany {
		return nil, false, nil
	}
	if logged == nil {
		logged, err = c.loadIDs(ctx, s, tenant, DecisionWrites, w, "logged decision ids: all",
			"SELECT DISTINCT id FROM merge_decisions WHERE tenant = {tenant:String} LIMIT {limit:UInt64}")
		if err != nil || logged == nil {
			return nil, false, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if logged[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, true, nil
}

// counted runs a write of kind for tenants, counts it, and then, for each
// tenant whose part of kind was exact just before (so that the write's
// count is the only one since), lets apply bring the part up to date; any
// other part of theirs of kind is emptied, as it is after a failed write.
func (c *memoryCache) counted(kind WriteKind, tenants []string, do func() error, apply func(t *cachedTenant, tenant string)) error {
	before := make([]uint64, len(tenants))
	for i, t := range tenants {
		before[i] = c.counts.Writes(t)[kind]
	}
	err := do()
	c.counts.AddWrites(kind, tenants...)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, tenant := range tenants {
		t := c.tenants[tenant]
		if t == nil {
			continue
		}
		now := c.counts.Writes(tenant)[kind]
		if err != nil || now != before[i]+1 || (t.at[kind] != before[i] && t.at[kind] != now) {
			t.reset(kind, max(now, t.at[kind]))
			continue
		}
		t.at[kind] = now
		apply(t, tenant)
	}
	return err
}

// write runs a write of memory versions ms (PutMemories), and keeps them,
// as the store returns them (wrote).
func (c *memoryCache) write(ms []memory.Memory, do func() error) error {
	return c.counted(MemoryWrites, memory.TenantsOf(ms), do, func(t *cachedTenant, tenant string) {
		for _, m := range ms {
			if m.Tenant == tenant {
				t.wrote(m)
			}
		}
	})
}

// logDecisions runs a write of decisions ds, and adds their IDs to the
// logged ones.
func (c *memoryCache) logDecisions(ds []memory.Decision, do func() error) error {
	return c.counted(DecisionWrites, tenantsOf(ds, func(d memory.Decision) string { return d.Tenant }), do, func(t *cachedTenant, tenant string) {
		for _, d := range ds {
			if d.Tenant == tenant && t.logged != nil {
				t.logged[d.ID] = true
			}
		}
	})
}

// record runs a write of usage us, after which their memories' usage is
// read again, and they have usage.
func (c *memoryCache) record(us []memory.Usage, do func() error) error {
	return c.counted(UsageWrites, tenantsOf(us, func(u memory.Usage) string { return u.Tenant }), do, func(t *cachedTenant, tenant string) {
		for _, u := range us {
			if u.Tenant == tenant {
				delete(t.usage, u.MemoryID)
				if t.used != nil {
					t.used[u.MemoryID] = true
				}
			}
		}
	})
}

// wrote keeps m, just written, as the current version of its memory when
// the entry knows what the store held of it before: the cached current
// version, or that there was none (absent, or no content hash of the whole
// tenant's). Otherwise the store may hold a later version of it, and the
// entry forgets the memory (and the content hashes, which may be its).
func (t *cachedTenant) wrote(m memory.Memory) {
	st, ok := storedForm(m)
	cur, cached := t.rows[m.ID]
	_, hashedID := t.hashes[m.ID]
	known := cached || t.absent[m.ID] || (t.hashed && !hashedID)
	if !ok || !known {
		delete(t.rows, m.ID)
		delete(t.absent, m.ID)
		t.hashed, t.hashes, t.byHash = false, nil, nil
		return
	}
	if cached && cur.Version > m.Version {
		return // the current version stays (ReplacingMergeTree(version))
	}
	t.rows[m.ID] = st
	delete(t.absent, m.ID)
	if t.hashed {
		if old, ok := t.hashes[m.ID]; ok {
			t.byHash[old] = slices.DeleteFunc(t.byHash[old], func(id string) bool { return id == m.ID })
		}
		t.hashes[m.ID] = m.ContentHash
		t.byHash[m.ContentHash] = append(t.byHash[m.ContentHash], m.ID)
	}
}

// tenantsOf lists the tenants of xs, each once.
func tenantsOf[T any](xs []T, tenant func(T) string) []string {
	var out []string
	for _, x := range xs {
		if t := tenant(x); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// purged counts a purge of tenant (or a failed one), which may have
// removed anything of it: every part of its entry goes.
func (c *memoryCache) purged(tenant string) {
	for k := range writeKinds {
		c.counts.AddWrites(k, tenant)
	}
	c.mu.Lock()
	delete(c.tenants, tenant)
	c.mu.Unlock()
}

// storedForm is m as the store returns it after writing it (memoryRow, then
// scanMemory): scope normalised, empty lists nil, times in UTC to the
// millisecond with the epoch as the zero time, and no usage. ok is false
// for what a round trip would change otherwise (out-of-range numbers,
// times before 1970 or past 2262), which is not cached.
func storedForm(m memory.Memory) (memory.Memory, bool) {
	out := m.Clone()
	out.Scope = m.Scope.Norm()
	out.RecallCount, out.LastRecalledAt = 0, time.Time{}
	if m.Version < 0 || m.Version > math.MaxUint32 || m.Helped > math.MaxUint32 || m.Hurt > math.MaxUint32 {
		return out, false
	}
	out.Helped, out.Hurt = max(m.Helped, 0), max(m.Hurt, 0)
	ok := true
	for _, t := range []*time.Time{&out.ValidFrom, &out.ValidTo, &out.DecayAnchor, &out.CreatedAt, &out.UpdatedAt} {
		if t.IsZero() {
			continue
		}
		if !t.After(epoch) || !t.Before(lastNano) {
			ok = false
		}
		*t = t.Truncate(time.Millisecond) // DateTime64(3)
	}
	fromDBMemory(&out)
	return out, ok
}

// lastNano is where UnixNano, which the driver writes times with, ends.
var lastNano = time.Unix(0, math.MaxInt64).UTC().Truncate(time.Second)
