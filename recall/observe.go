package recall

import "github.com/hindsight-memory/hindsight/memory"

// Observe applies versions written in this process to a loaded cache
// (index.Cache). An unloaded cache will read them from the store when it
// loads.
func (e *Engine) Observe(tenant string, ms []memory.Memory) {
	e.mu.Lock()
	el, ok := e.tenants[tenant]
	e.mu.Unlock()
	if !ok {
		return
	}
	c := el.Value.(*tenantCache)
	c.syncMu.Lock() // order with loads, so a load never overwrites newer writes with older reads
	defer c.syncMu.Unlock()
	if !c.loaded {
		return
	}
	c.applyAll(ms, true)
	// On a store that counts its writes, a cache that was current before
	// this write is current after it, if it was the only one since.
	if wc, ok := e.deps.Memories.(memory.WriteCounter); ok {
		c.mu.Lock()
		if n := wc.MemoryWrites(tenant); n == c.writes+1 {
			c.writes = n
		}
		c.mu.Unlock()
	}
}

// Forget drops memories from a tenant's cache (index.Cache).
func (e *Engine) Forget(tenant string, ids []string) {
	e.mu.Lock()
	el, ok := e.tenants[tenant]
	e.mu.Unlock()
	if ok {
		el.Value.(*tenantCache).drop(ids)
	}
}
