package console

import (
	"container/list"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// snapshotCache keeps the overview's snapshots, one per tenant and user,
// within a number of snapshots and an estimate of the bytes they hold,
// evicting the least recently used: a replica that serves many tenants
// keeps the busy ones and never grows without bound.
type snapshotCache struct {
	maxEntries int
	maxBytes   int64
	metrics    SnapshotMetrics

	mu    sync.Mutex
	lru   *list.List // of *snapshotEntry, most recently used first
	byKey map[string]*list.Element
	bytes int64
}

type snapshotEntry struct {
	key  string
	snap *overviewSnapshot
	size int64
}

type overviewSnapshot struct {
	writes uint64
	at     time.Time
	ms     []memory.Memory
	eps    []memory.Episode
}

// Defaults of Options.SnapshotTenants and SnapshotBytes.
const (
	defaultSnapshotTenants = 64
	defaultSnapshotBytes   = 64 << 20
)

func newSnapshotCache(entries int, bytes int64, m SnapshotMetrics) *snapshotCache {
	if entries <= 0 {
		entries = defaultSnapshotTenants
	}
	if bytes <= 0 {
		bytes = defaultSnapshotBytes
	}
	return &snapshotCache{maxEntries: entries, maxBytes: bytes, metrics: m, lru: list.New(), byKey: map[string]*list.Element{}}
}

func (c *snapshotCache) get(key string) (*overviewSnapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*snapshotEntry).snap, true
}

// put keeps s under key, evicting the least recently used snapshots until
// the cache is within its bounds; a snapshot larger than the whole byte
// bound is not kept.
func (c *snapshotCache) put(key string, s *overviewSnapshot) {
	size := snapshotSize(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.bytes -= el.Value.(*snapshotEntry).size
		c.lru.Remove(el)
		delete(c.byKey, key)
	}
	evicted := 0
	if size <= c.maxBytes {
		c.byKey[key] = c.lru.PushFront(&snapshotEntry{key: key, snap: s, size: size})
		c.bytes += size
		for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
			old := c.lru.Back()
			e := old.Value.(*snapshotEntry)
			c.lru.Remove(old)
			delete(c.byKey, e.key)
			c.bytes -= e.size
			evicted++
		}
	}
	if c.metrics != nil {
		c.metrics.ConsoleSnapshots(c.lru.Len(), c.bytes, evicted)
	}
}

// size is the cache's count of snapshots and their bytes.
func (c *snapshotCache) size() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}

// snapshotSize estimates the memory a snapshot holds: its strings and a
// fixed share for each record's other fields.
func snapshotSize(s *overviewSnapshot) int64 {
	const memoryRecord, episodeRecord = 512, 384
	n := int64(0)
	for _, m := range s.ms {
		n += memoryRecord + int64(len(m.ID)+len(m.Content)+len(m.CounterExample)+len(m.TaskType)+len(m.Scope))
		for _, x := range m.Entities {
			n += int64(len(x)) + 16
		}
		for _, x := range m.Sources {
			n += int64(len(x)) + 16
		}
	}
	for _, ep := range s.eps {
		n += episodeRecord + int64(len(ep.ID)+len(ep.Task)+len(ep.SessionID)+len(ep.UserID))
		for _, x := range ep.Steps {
			n += int64(len(x)) + 16
		}
		for _, f := range ep.Failures {
			n += int64(len(f.Attempt)+len(f.Cause)) + 32
		}
		for _, x := range ep.Feedback {
			n += int64(len(x)) + 16
		}
	}
	return n
}
