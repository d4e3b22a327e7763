package recall

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hindsight-memory/hindsight/bm25"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/memory"
)

// recallable are the statuses the cache keeps: every status some query may
// ask for. Archived and forgotten memories are never recalled.
var recallable = bm25.Recallable

// entry is the cached current version of one recallable memory.
type entry struct {
	mem memory.Memory
	// doc holds the filter fields in the form memory.VectorFilter.Match
	// reads, with entities normalised, so the keyword side filters exactly
	// as the vector index does.
	doc memory.VectorDoc
	ord int32
	// instr memoises whether the screener reads the content as
	// instruction-like (0 not yet known, 1 no, 2 yes): the check is costly
	// and versions are immutable.
	instr atomic.Int32
	// pol memoises polarityOf(mem.Content) for the conflict rule.
	pol atomic.Pointer[polarity]
	// prof memoises the relevance model's reading of the memory's text
	// (unitsOf): every recall it is a candidate of reads it.
	prof atomic.Pointer[relProfile]
}

// units returns the memoised unitsOf the entry's text.
func (en *entry) units(lx *lexicon.Lexicon) *relProfile {
	if p := en.prof.Load(); p != nil {
		return p
	}
	p := unitsOf(memoryText(en.mem), lx)
	en.prof.Store(p)
	return p
}

// polarity returns the memoised polarity of the entry's content.
func (e *entry) polarity() polarity {
	if p := e.pol.Load(); p != nil {
		return *p
	}
	p := polarityOf(e.mem.Content)
	e.pol.Store(&p)
	return p
}

// instructionLike reports whether the memory is flagged instruction-like,
// or reads like one to s although nobody flagged it.
func (e *entry) instructionLike(s memory.Screener) bool {
	if slices.Contains(e.mem.Flags, memory.FlagInstructionLike) {
		return true
	}
	v := e.instr.Load()
	if v == 0 {
		v = 1
		if _, ilk := s.Screen(memory.EmbedText(e.mem)); ilk {
			v = 2
		}
		e.instr.Store(v)
	}
	return v == 2
}

// tenantCache is one tenant's keyword index and memory cache.
type tenantCache struct {
	tenant string
	clock  func() time.Time // the engine's, for the sync times
	screen memory.Screener  // the engine's, for unflagged instruction-like text

	// syncMu serialises loads and catch-ups, so that two never interleave
	// their reads of the feed; mu guards the data below.
	syncMu sync.Mutex
	mu     sync.RWMutex

	loaded  bool
	entries map[string]*entry
	byOrd   []*entry
	// created is each ordinal's CreatedAt in Unix seconds, read where a
	// time range rejects most documents without reaching their entries.
	created  []int64
	versions map[string]int // every memory seen → its highest version seen
	kw       *keywordIndex
	// entities and taskTypes count the cached memories carrying each
	// normalised entity or task type, keyed by phraseKey, for query hints.
	entities  map[string]hintCount
	taskTypes map[string]hintCount
	// episodes orders the cached memories of each source episode by
	// creation time, for context windows.
	episodes map[string][]*entry

	watermark time.Time // highest UpdatedAt read from the store
	// writes is the store's memory.WriteCounter count read before the
	// last load or catch-up began: the cache holds every write it counts.
	writes    uint64
	lastSync  time.Time // wall clock of the last catch-up
	lastBuild time.Time // wall clock of the last full load
	syncing   atomic.Bool
}

// hintCount is a hint phrase's canonical form and how many memories carry it.
type hintCount struct {
	value string
	n     int
}

func newTenantCache(tenant string, clock func() time.Time, screen memory.Screener) *tenantCache {
	c := &tenantCache{tenant: tenant, clock: clock, screen: screen}
	c.reset()
	return c
}

func (c *tenantCache) reset() {
	c.loaded = false
	c.entries = map[string]*entry{}
	c.byOrd, c.created = nil, nil
	c.versions = map[string]int{}
	c.kw = newKeywordIndex()
	c.entities = map[string]hintCount{}
	c.taskTypes = map[string]hintCount{}
	c.episodes = map[string][]*entry{}
	c.watermark = time.Time{}
}

// ensureLoaded loads the cache unless it is loaded, and says whether
// this call loaded it.
func (c *tenantCache) ensureLoaded(ctx context.Context, store memory.MemoryStore) (bool, error) {
	c.mu.RLock()
	loaded := c.loaded
	c.mu.RUnlock()
	if loaded {
		return false, nil
	}
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if c.loaded { // syncMu excludes the only writer of loaded
		return false, nil
	}
	return true, c.loadLocked(ctx, store)
}

// sources are the IDs of the cached memories' source episodes.
func (c *tenantCache) sources() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.episodes))
	for id := range c.episodes {
		out = append(out, id)
	}
	return out
}

// reload rebuilds the cache from the store.
func (c *tenantCache) reload(ctx context.Context, store memory.MemoryStore) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	return c.loadLocked(ctx, store)
}

// loadLocked replaces the cache with every recallable memory of the
// tenant. Callers hold syncMu.
func (c *tenantCache) loadLocked(ctx context.Context, store memory.MemoryStore) error {
	started, writes := c.clock(), writesOf(store, c.tenant)
	ms, err := store.Memories(ctx, memory.MemoryFilter{Tenant: c.tenant, Statuses: recallable})
	if err != nil {
		return errorf("recall: load memories of tenant "+c.tenant, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reset()
	for _, m := range ms {
		c.apply(m)
	}
	c.loaded = true
	c.lastBuild, c.lastSync, c.writes = started, started, writes
	return nil
}

// writesOf is the store's write count of tenant, if it keeps one (0
// otherwise).
func writesOf(store memory.MemoryStore, tenant string) uint64 {
	if wc, ok := store.(memory.WriteCounter); ok {
		return wc.MemoryWrites(tenant)
	}
	return 0
}

// catchUp applies the versions the store's change feed holds since the
// watermark, re-reading overlap before it; an unloaded cache is loaded.
func (c *tenantCache) catchUp(ctx context.Context, store memory.MemoryStore, overlap time.Duration) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if !c.loaded {
		return c.loadLocked(ctx, store)
	}
	started, writes := c.clock(), writesOf(store, c.tenant)
	c.mu.RLock()
	after := c.watermark
	c.mu.RUnlock()
	if !after.IsZero() {
		after = after.Add(-overlap)
	}
	ms, err := store.Memories(ctx, memory.MemoryFilter{Tenant: c.tenant, UpdatedAfter: after})
	if err != nil {
		return errorf("recall: catch up tenant "+c.tenant, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range ms {
		c.apply(m)
	}
	c.lastSync, c.writes = started, writes
	return nil
}

// applyAll applies versions written by this process. With precompute, the
// per-memory checks recall would otherwise make on first use (is it
// instruction-like, its polarity) run now, on the write path.
func (c *tenantCache) applyAll(ms []memory.Memory, precompute bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range ms {
		c.apply(m)
		if e := c.entries[m.ID]; precompute && e != nil {
			e.instructionLike(c.screen)
			e.polarity()
		}
	}
}

// apply makes m the cached version of its memory unless a newer version is
// known. Applying a version twice is a no-op, which is what makes the
// overlapping change feed and retried writes safe. Callers hold mu.
func (c *tenantCache) apply(m memory.Memory) {
	if m.UpdatedAt.After(c.watermark) {
		c.watermark = m.UpdatedAt
	}
	if v, ok := c.versions[m.ID]; ok && v >= m.Version {
		if e := c.entries[m.ID]; e != nil && v == m.Version && m.RecallCount > e.mem.RecallCount {
			e.mem.RecallCount, e.mem.LastRecalledAt = m.RecallCount, m.LastRecalledAt
		}
		return
	}
	c.versions[m.ID] = m.Version
	if e := c.entries[m.ID]; e != nil {
		c.remove(e)
	}
	if slices.Contains(recallable, m.Status) {
		c.add(m)
	}
}

// markAbsent records that the store holds no version of ids the cache
// does not know, as version 0: any real version supersedes it.
func (c *tenantCache) markAbsent(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if _, ok := c.versions[id]; !ok {
			c.versions[id] = 0
		}
	}
}

// drop removes memories from the cache, e.g. after a forget.
func (c *tenantCache) drop(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if e := c.entries[id]; e != nil {
			c.remove(e)
		}
		delete(c.versions, id)
	}
}

func (c *tenantCache) add(m memory.Memory) {
	m = m.Clone()
	doc := memory.VectorDocOf(m, nil)
	e := &entry{mem: m, doc: doc}
	e.ord = c.kw.add(m.ID, indexText(m))
	for int(e.ord) >= len(c.byOrd) {
		c.byOrd, c.created = append(c.byOrd, nil), append(c.created, 0)
	}
	c.byOrd[e.ord], c.created[e.ord] = e, doc.CreatedAt.Unix()
	c.entries[m.ID] = e
	for _, ent := range doc.Entities {
		countHint(c.entities, ent, 1)
	}
	if m.TaskType != "" {
		countHint(c.taskTypes, m.TaskType, 1)
	}
	for _, src := range m.Sources {
		list := c.episodes[src]
		i, _ := slices.BinarySearchFunc(list, e, compareEntries)
		c.episodes[src] = slices.Insert(list, i, e)
	}
}

func (c *tenantCache) remove(e *entry) {
	c.kw.remove(e.ord)
	c.byOrd[e.ord] = nil
	delete(c.entries, e.mem.ID)
	for _, ent := range e.doc.Entities {
		countHint(c.entities, ent, -1)
	}
	if e.mem.TaskType != "" {
		countHint(c.taskTypes, e.mem.TaskType, -1)
	}
	for _, src := range e.mem.Sources {
		list := c.episodes[src]
		if i := slices.Index(list, e); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(c.episodes, src)
		} else {
			c.episodes[src] = list
		}
	}
}

// compareEntries orders the memories of an episode: by creation time, then
// by ID.
func compareEntries(a, b *entry) int {
	if c := a.mem.CreatedAt.Compare(b.mem.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.mem.ID, b.mem.ID)
}

// neighbor is a memory near another in a source episode, and how far.
type neighbor struct {
	e    *entry
	dist int
}

// episodeNeighbors returns the memories within radius of e in each of its
// source episodes, each once, at its smallest distance.
func episodeNeighbors(episodes map[string][]*entry, e *entry, radius int) []neighbor {
	var out []neighbor
	for _, src := range e.mem.Sources {
		list := episodes[src]
		i, found := slices.BinarySearchFunc(list, e, compareEntries)
		if !found {
			continue
		}
		for j := max(0, i-radius); j <= min(len(list)-1, i+radius); j++ {
			if j == i {
				continue
			}
			d := j - i
			if d < 0 {
				d = -d
			}
			if k := slices.IndexFunc(out, func(n neighbor) bool { return n.e == list[j] }); k >= 0 {
				out[k].dist = min(out[k].dist, d)
				continue
			}
			out = append(out, neighbor{list[j], d})
		}
	}
	return out
}

// bumpUsage records recalls in the cache at once, ahead of the store.
func (c *tenantCache) bumpUsage(ids []string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if e := c.entries[id]; e != nil {
			e.mem.RecallCount++
			if at.After(e.mem.LastRecalledAt) {
				e.mem.LastRecalledAt = at
			}
		}
	}
}

// indexText is what the keyword index matches a memory on.
func indexText(m memory.Memory) string { return memory.IndexText(m) }

// phraseKey is the form hint phrases are matched in (bm25.PhraseKey).
func phraseKey(s string) string { return bm25.PhraseKey(s) }

func countHint(m map[string]hintCount, value string, delta int) {
	k := phraseKey(value)
	if k == "" {
		return
	}
	h := m[k]
	h.n += delta
	if h.n <= 0 {
		delete(m, k)
		return
	}
	if h.value == "" {
		h.value = value
	}
	m[k] = h
}
