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
// other process can open (embedded chDB). MemoryWrites counts memory
// writes and purges, UsageWrites the usage recorded, each once the write
// is visible; both count a write of unknown tenants (a statement served to
// another process) for every tenant. A count read before a read began, and
// unchanged after it, proves that nothing the read saw has changed since.
type WriteCounts interface {
	MemoryWrites(tenant string) uint64
	UsageWrites(tenant string) uint64
	AddMemoryWrites(tenants ...string)
	AddUsageWrites(tenants ...string)
}

// Bounds of the memory cache (CacheMemories).
const (
	cacheTenants = 256
	// cacheMemories is the most memories of one tenant the cache holds,
	// rows and content hashes alike; a tenant past it is read from the
	// store, as without the cache.
	cacheMemories = 50_000
)

// CacheMemories keeps the current memories this store reads and writes by
// ID and by content hash, per tenant, while counts proves that no other
// write changed them; the store's own memory writes, purges and usage are
// counted in counts from then on. The ledger reads the same few memories over and over
// (a candidate's exact repeats and its neighbours), each read a query of
// every column, where an answer from memory costs nothing. Only a store
// whose counts see every write may cache (embedded chDB): a server has
// other writers.
func (s *Store) CacheMemories(counts WriteCounts) {
	s.cache = &memoryCache{counts: counts, tenants: map[string]*cachedTenant{}}
}

// memoryCache holds, per tenant, the current version of memories read or
// written through the store, and usage read, each exact as of a write
// count. A read the cache can answer in full is answered from it; else the
// store is read for what is missing, and the answer kept if no write was
// counted meanwhile.
type memoryCache struct {
	counts  WriteCounts
	mu      sync.Mutex
	tenants map[string]*cachedTenant
}

type cachedTenant struct {
	// writes is the MemoryWrites count rows, absent and hashes are exact
	// at; usageWrites the UsageWrites count usage is exact at.
	writes, usageWrites uint64
	rows                map[string]memory.Memory // current version by ID, as the store returns it, without usage
	absent              map[string]bool          // IDs the store has no memory of
	// hashes is the content hash of every memory of the tenant, by ID,
	// once loaded (hashed); byHash inverts it.
	hashed bool
	hashes map[string]string
	byHash map[string][]string
	usage  map[string]usage
}

func newCachedTenant(writes, usageWrites uint64) *cachedTenant {
	return &cachedTenant{writes: writes, usageWrites: usageWrites, rows: map[string]memory.Memory{},
		absent: map[string]bool{}, usage: map[string]usage{}}
}

// tenant returns tenant's entry as of the counts writes and usageWrites:
// an entry counted at others is emptied first. c.mu is held.
func (c *memoryCache) tenant(tenant string, writes, usageWrites uint64) *cachedTenant {
	t := c.tenants[tenant]
	if t == nil {
		if len(c.tenants) >= cacheTenants {
			for k := range c.tenants { // drop any one: a map's order is random
				delete(c.tenants, k)
				break
			}
		}
		t = newCachedTenant(writes, usageWrites)
		c.tenants[tenant] = t
	}
	// An entry counted before a write a reader's count includes is
	// stale; one counted after (a write this reader began before) is not.
	if writes > t.writes || len(t.rows)+len(t.absent)+len(t.hashes) > cacheMemories {
		u := t.usage
		*t = *newCachedTenant(max(writes, t.writes), t.usageWrites)
		t.usage = u
	}
	if usageWrites > t.usageWrites {
		t.usage, t.usageWrites = map[string]usage{}, usageWrites
	}
	return t
}

// servable reports whether the cache can answer f: a read by IDs or by
// content hashes, narrowed only by scope, kind and status.
func servable(f memory.MemoryFilter) bool {
	if (len(f.IDs) > 0) == (f.ContentHash != "" || len(f.ContentHashes) > 0) {
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
	writes, usageWrites := c.counts.MemoryWrites(f.Tenant), c.counts.UsageWrites(f.Tenant)
	ids := f.IDs
	if len(ids) == 0 {
		hashes := f.ContentHashes
		if f.ContentHash != "" {
			hashes = append(slices.Clip(hashes), f.ContentHash)
		}
		var known bool
		if ids, known, err = c.hashed(ctx, s, f.Tenant, hashes, writes, usageWrites); err != nil || !known {
			return nil, known, err
		}
	}
	rows, err := c.rows(ctx, s, f.Tenant, ids, writes, usageWrites)
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
		if err := c.fillUsage(ctx, s, f.Tenant, out, writes, usageWrites); err != nil {
			return nil, true, err
		}
	}
	return out, true, nil
}

// keepRows reports whether memories the store answered after the count
// writes was read may be kept in t: t is exact at that count, and nothing
// was counted since. c.mu is held.
func (c *memoryCache) keepRows(t *cachedTenant, tenant string, writes uint64) bool {
	return t.writes == writes && c.counts.MemoryWrites(tenant) == writes
}

// keepUsage is keepRows for usage.
func (c *memoryCache) keepUsage(t *cachedTenant, tenant string, usageWrites uint64) bool {
	return t.usageWrites == usageWrites && c.counts.UsageWrites(tenant) == usageWrites
}

// hashed returns the IDs of tenant's memories with one of hashes, loading
// the content hashes of all its memories on first use; known is false for
// a tenant too large to hold them.
func (c *memoryCache) hashed(ctx context.Context, s *Store, tenant string, hashes []string, writes, usageWrites uint64) (ids []string, known bool, err error) {
	c.mu.Lock()
	t := c.tenant(tenant, writes, usageWrites)
	loaded := t.hashed
	c.mu.Unlock()
	if !loaded {
		all := map[string]string{}
		err := s.queryRows(ctx, "memories: content hashes",
			"SELECT id, content_hash FROM memories_current FINAL WHERE tenant = {tenant:String} LIMIT {limit:UInt64}",
			func(r driver.Rows) error {
				var id, hash string
				err := r.Scan(&id, &hash)
				all[id] = hash
				return err
			}, ch.Named("tenant", tenant), ch.Named("limit", uint64(cacheMemories+1)))
		if err != nil || len(all) > cacheMemories {
			return nil, false, err
		}
		byHash := map[string][]string{}
		for id, h := range all {
			byHash[h] = append(byHash[h], id)
		}
		c.mu.Lock()
		t = c.tenant(tenant, writes, usageWrites)
		if c.keepRows(t, tenant, writes) && !t.hashed {
			t.hashed, t.hashes, t.byHash = true, all, byHash
		}
		c.mu.Unlock()
		for _, h := range hashes {
			for _, id := range byHash[h] {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
		return ids, true, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range hashes {
		for _, id := range t.byHash[h] {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids, true, nil
}

// rows returns the current versions of ids (those the store has), from the
// cache, reading the store for the rest.
func (c *memoryCache) rows(ctx context.Context, s *Store, tenant string, ids []string, writes, usageWrites uint64) ([]memory.Memory, error) {
	var out []memory.Memory
	var missing []string
	c.mu.Lock()
	t := c.tenant(tenant, writes, usageWrites)
	for _, id := range ids {
		if m, ok := t.rows[id]; ok {
			if !slices.ContainsFunc(out, func(o memory.Memory) bool { return o.ID == id }) {
				out = append(out, cloneMemory(m))
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
	t = c.tenant(tenant, writes, usageWrites)
	keep := c.keepRows(t, tenant, writes)
	for _, id := range missing {
		if keep {
			t.absent[id] = true
		}
	}
	for _, m := range read {
		out = append(out, m)
		if keep {
			delete(t.absent, m.ID)
			t.rows[m.ID] = cloneMemory(m)
		}
	}
	return out, nil
}

// fillUsage sets the usage of ms, from the cache and the store.
func (c *memoryCache) fillUsage(ctx context.Context, s *Store, tenant string, ms []memory.Memory, writes, usageWrites uint64) error {
	us := map[string]usage{}
	var missing []string
	c.mu.Lock()
	t := c.tenant(tenant, writes, usageWrites)
	for _, m := range ms {
		if u, ok := t.usage[m.ID]; ok {
			us[m.ID] = u
		} else {
			missing = append(missing, m.ID)
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		read, err := s.usageOf(ctx, tenant, missing)
		if err != nil {
			return err
		}
		c.mu.Lock()
		t = c.tenant(tenant, writes, usageWrites)
		keep := c.keepUsage(t, tenant, usageWrites)
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

// write runs a write of tenants' memories (PutMemories), counts it, and
// keeps the versions ms it wrote, as the store returns them, for each
// tenant whose entry was exact just before: then the write's count is the
// only one since. Any other entry of theirs is emptied, as it is after a
// failed write.
func (c *memoryCache) write(ms []memory.Memory, do func() error) error {
	tenants := memory.TenantsOf(ms)
	before := make([]uint64, len(tenants))
	for i, t := range tenants {
		before[i] = c.counts.MemoryWrites(t)
	}
	err := do()
	c.counts.AddMemoryWrites(tenants...)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, tenant := range tenants {
		t := c.tenants[tenant]
		if t == nil {
			continue
		}
		now := c.counts.MemoryWrites(tenant)
		if err != nil || now != before[i]+1 || (t.writes != before[i] && t.writes != now) {
			delete(c.tenants, tenant)
			continue
		}
		t.writes = now
		for _, m := range ms {
			if m.Tenant == tenant {
				t.wrote(m)
			}
		}
	}
	return err
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

// purged counts a purge of tenant (or a failed one), which empties its
// entry.
func (c *memoryCache) purged(tenant string) {
	c.counts.AddMemoryWrites(tenant)
	c.mu.Lock()
	delete(c.tenants, tenant)
	c.mu.Unlock()
}

// recorded counts usage recorded for tenants; readers then read it again.
func (c *memoryCache) recorded(us []memory.Usage) {
	var tenants []string
	for _, u := range us {
		if !slices.Contains(tenants, u.Tenant) {
			tenants = append(tenants, u.Tenant)
		}
	}
	c.counts.AddUsageWrites(tenants...)
}

// storedForm is m as the store returns it after writing it (memoryRow, then
// scanMemory): scope normalised, empty lists nil, times in UTC to the
// millisecond with the epoch as the zero time, and no usage. ok is false
// for what a round trip would change otherwise (out-of-range numbers,
// times before 1970 or past 2262), which is not cached.
func storedForm(m memory.Memory) (memory.Memory, bool) {
	out := cloneMemory(m)
	out.Scope = m.Scope.Norm()
	out.Entities, out.Sources, out.Evidence = nilIfEmpty(out.Entities), nilIfEmpty(out.Sources), nilIfEmpty(out.Evidence)
	out.Supersedes, out.Flags = nilIfEmpty(out.Supersedes), nilIfEmpty(out.Flags)
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
		*t = fromDB(t.UTC().Truncate(time.Millisecond))
	}
	return out, ok
}

// lastNano is where UnixNano, which the driver writes times with, ends.
var lastNano = time.Unix(0, math.MaxInt64).UTC().Truncate(time.Second)

// cloneMemory copies m's lists, so that a caller changing them changes no
// cached memory.
func cloneMemory(m memory.Memory) memory.Memory {
	m.Entities, m.Sources, m.Evidence = slices.Clone(m.Entities), slices.Clone(m.Sources), slices.Clone(m.Evidence)
	m.Supersedes, m.Flags = slices.Clone(m.Supersedes), slices.Clone(m.Flags)
	return m
}
