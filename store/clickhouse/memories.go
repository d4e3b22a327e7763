package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

const memoryColumns = "tenant, id, version, scope, kind, content, counter_example, task_type, entities, content_hash, " +
	"confidence, sources, evidence, status, superseded_by, supersedes, valid_from, valid_to, decay, decay_anchor, " +
	"pinned, flags, helped, hurt, reason, decision_id, created_at, updated_at, write_seq"

// recallColumns are the columns of a read with MemoryFilter.RecallFields:
// memoryColumns but those of memory.RecallOmits (and write_seq). A read of
// recall's candidates by ID reads every granule of the tenant's range
// whatever the IDs, so what it costs is the columns it decodes.
const recallColumns = "tenant, id, version, scope, kind, content, counter_example, task_type, entities, content_hash, " +
	"confidence, sources, status, superseded_by, supersedes, valid_from, valid_to, pinned, flags, created_at, updated_at"

func (s *Store) memoryRow(m memory.Memory, seq uint64) []any {
	return []any{m.Tenant, m.ID, uint32(m.Version), string(m.Scope.Norm()), string(m.Kind), m.Content, m.CounterExample, m.TaskType,
		nonNil(m.Entities), m.ContentHash, m.Confidence, nonNil(m.Sources), nonNil(m.Evidence), string(m.Status),
		m.SupersededBy, nonNil(m.Supersedes), toDB(m.ValidFrom), toDB(m.ValidTo), m.Decay, toDB(m.DecayAnchor),
		m.Pinned, nonNil(m.Flags), uint32(max(m.Helped, 0)), uint32(max(m.Hurt, 0)), m.Reason, m.DecisionID,
		toDB(m.CreatedAt), toDB(m.UpdatedAt), seq}
}

func scanMemory(r driver.Rows) (memory.Memory, error) {
	var (
		m            memory.Memory
		version      uint32
		scope        string
		kind, status string
		helped, hurt uint32
		seq          uint64
	)
	err := r.Scan(&m.Tenant, &m.ID, &version, &scope, &kind, &m.Content, &m.CounterExample, &m.TaskType, &m.Entities,
		&m.ContentHash, &m.Confidence, &m.Sources, &m.Evidence, &status, &m.SupersededBy, &m.Supersedes,
		&m.ValidFrom, &m.ValidTo, &m.Decay, &m.DecayAnchor, &m.Pinned, &m.Flags, &helped, &hurt, &m.Reason,
		&m.DecisionID, &m.CreatedAt, &m.UpdatedAt, &seq)
	m.Version, m.Scope, m.Kind, m.Status, m.Helped, m.Hurt = int(version), memory.Scope(scope).Norm(), memory.Kind(kind), memory.Status(status), int(helped), int(hurt)
	fromDBMemory(&m)
	return m, err
}

// scanRecallMemory scans a row of recallColumns.
func scanRecallMemory(r driver.Rows) (memory.Memory, error) {
	var (
		m            memory.Memory
		version      uint32
		scope        string
		kind, status string
	)
	err := r.Scan(&m.Tenant, &m.ID, &version, &scope, &kind, &m.Content, &m.CounterExample, &m.TaskType, &m.Entities, &m.ContentHash,
		&m.Confidence, &m.Sources, &status, &m.SupersededBy, &m.Supersedes, &m.ValidFrom, &m.ValidTo, &m.Pinned, &m.Flags, &m.CreatedAt, &m.UpdatedAt)
	m.Version, m.Scope, m.Kind, m.Status = int(version), memory.Scope(scope).Norm(), memory.Kind(kind), memory.Status(status)
	fromDBMemory(&m)
	return m, err
}

// fromDBMemory maps a scanned memory's times and lists back (fromDB, and
// empty lists nil): the form readers get, which the memory cache keeps too
// (storedForm).
func fromDBMemory(m *memory.Memory) {
	m.ValidFrom, m.ValidTo, m.DecayAnchor = fromDB(m.ValidFrom), fromDB(m.ValidTo), fromDB(m.DecayAnchor)
	m.CreatedAt, m.UpdatedAt = fromDB(m.CreatedAt), fromDB(m.UpdatedAt)
	m.Entities, m.Sources, m.Evidence = nilIfEmpty(m.Entities), nilIfEmpty(m.Sources), nilIfEmpty(m.Evidence)
	m.Supersedes, m.Flags = nilIfEmpty(m.Supersedes), nilIfEmpty(m.Flags)
}

// PutMemories implements memory.MemoryStore. Versions go to memory_versions;
// the materialized view memories_current_mv keeps memories_current (the
// highest version of each memory) up to date in the same insert.
func (s *Store) PutMemories(ctx context.Context, ms []memory.Memory) error {
	const op = "clickhouse: put memories"
	if err := memory.ValidateMemories(op, ms); err != nil {
		return err
	}
	for _, m := range ms {
		if err := checkTimes(op, "memory "+m.ID, "valid_from", m.ValidFrom, "valid_to", m.ValidTo,
			"decay_anchor", m.DecayAnchor, "created_at", m.CreatedAt, "updated_at", m.UpdatedAt); err != nil {
			return err
		}
	}
	// A version's write sequence is its number, which the ledger assigned:
	// copies of one version tie and the last inserted wins, on any clock.
	// Of two copies in one batch, the later is the one inserted.
	put := func() error {
		return s.insert(ctx, "put memories", "memory_versions", memoryColumns, len(ms), func(i int) []any {
			return s.memoryRow(ms[i], uint64(ms[i].Version))
		})
	}
	if s.cache != nil {
		return s.cache.write(ms, put)
	}
	return put()
}

// Memory implements memory.MemoryStore.
func (s *Store) Memory(ctx context.Context, tenant, id string) (memory.Memory, error) {
	const op = "clickhouse: memory"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return memory.Memory{}, err
	}
	ms, err := s.Memories(ctx, memory.MemoryFilter{Tenant: tenant, IDs: []string{id}})
	if err != nil {
		return memory.Memory{}, err
	}
	if len(ms) == 0 {
		return memory.Memory{}, memory.NotFoundf(op, "memory %s not found", id)
	}
	return ms[0], nil
}

// Memories implements memory.MemoryStore. Filters apply to the current
// version: WHERE runs after FINAL has folded the versions together.
func (s *Store) Memories(ctx context.Context, f memory.MemoryFilter) ([]memory.Memory, error) {
	if err := memory.ValidateTenant("clickhouse: memories", f.Tenant); err != nil {
		return nil, err
	}
	if s.cache != nil {
		if out, ok, err := s.cache.memories(ctx, s, f); ok || err != nil {
			return out, err
		}
	}
	return s.readMemories(ctx, f)
}

// readMemories is Memories read from the store.
func (s *Store) readMemories(ctx context.Context, f memory.MemoryFilter) ([]memory.Memory, error) {
	const op = "clickhouse: memories"
	if err := memory.ValidateTenant(op, f.Tenant); err != nil {
		return nil, err
	}
	conds := []string{"tenant = {tenant:String}"}
	args := []any{ch.Named("tenant", f.Tenant)}
	if len(f.IDs) > 0 {
		conds = append(conds, "id IN {ids:Array(String)}")
		args = append(args, ch.Named("ids", f.IDs))
	}
	if len(f.Scopes) > 0 {
		var scopes []string
		for _, sc := range f.Scopes {
			scopes = append(scopes, string(sc.Norm()))
		}
		conds = append(conds, "scope IN {scopes:Array(String)}")
		args = append(args, ch.Named("scopes", scopes))
	}
	if len(f.Kinds) > 0 {
		var kinds []string
		for _, k := range f.Kinds {
			kinds = append(kinds, string(k))
		}
		conds = append(conds, "kind IN {kinds:Array(String)}")
		args = append(args, ch.Named("kinds", kinds))
	}
	if len(f.Statuses) > 0 {
		var statuses []string
		for _, st := range f.Statuses {
			statuses = append(statuses, string(st))
		}
		conds = append(conds, "status IN {statuses:Array(String)}")
		args = append(args, ch.Named("statuses", statuses))
	}
	if f.ContentHash != "" {
		conds = append(conds, "content_hash = {hash:String}")
		args = append(args, ch.Named("hash", f.ContentHash))
	}
	if len(f.ContentHashes) > 0 {
		conds = append(conds, "content_hash IN {hashes:Array(String)}")
		args = append(args, ch.Named("hashes", f.ContentHashes))
	}
	if f.Source != "" {
		conds = append(conds, "has(sources, {source:String})")
		args = append(args, ch.Named("source", f.Source))
	}
	if len(f.Sources) > 0 {
		conds = append(conds, "hasAny(sources, {sources:Array(String)})")
		args = append(args, ch.Named("sources", f.Sources))
	}
	if !f.UpdatedAfter.IsZero() {
		// x > t for millisecond x ⇔ x > t truncated to the millisecond.
		conds = append(conds, "updated_at > {after:DateTime64(3, 'UTC')}")
		args = append(args, ch.Named("after", f.UpdatedAfter.UTC().Truncate(time.Millisecond)))
	}
	order := " ORDER BY updated_at, id"
	if f.Newest {
		order = " ORDER BY updated_at DESC, id DESC"
		if !f.Before.IsZero() {
			conds = append(conds, "(updated_at, id) < ({before:DateTime64(3, 'UTC')}, {before_id:String})")
			args = append(args, ch.Named("before", f.Before.UTC().Truncate(time.Millisecond)), ch.Named("before_id", f.BeforeID))
		}
	}
	if f.ByID {
		conds = append(conds, "id > {id_after:String}")
		args = append(args, ch.Named("id_after", f.IDAfter))
		order = " ORDER BY id"
	}
	columns, scan := memoryColumns, scanMemory
	if f.RecallFields {
		columns, scan = recallColumns, scanRecallMemory
	}
	query := "SELECT " + columns + " FROM memories_current FINAL WHERE " + strings.Join(conds, " AND ") + order
	if f.Limit > 0 {
		query += " LIMIT {limit:UInt64}"
		args = append(args, ch.Named("limit", uint64(f.Limit)))
	}
	// A read by ID knows whose usage to read before the memories come
	// back: both reads run at once.
	type usageRead struct {
		us  map[string]usage
		err error
	}
	var early chan usageRead
	if len(f.IDs) > 0 && !f.NoUsage {
		early = make(chan usageRead, 1)
		go func() {
			us, err := s.usageOf(ctx, f.Tenant, f.IDs)
			early <- usageRead{us, err}
		}()
	}
	out := []memory.Memory{}
	err := s.queryRows(ctx, "memories", query, func(r driver.Rows) error {
		m, err := scan(r)
		out = append(out, m)
		return err
	}, args...)
	if early != nil {
		u := <-early
		if err == nil {
			err = u.err
		}
		applyUsage(out, u.us)
	}
	if err != nil {
		return nil, err
	}
	if f.NoUsage || early != nil {
		return out, nil
	}
	if err := s.fillUsage(ctx, f.Tenant, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CurrentVersions implements memory.MemoryStore: one read of the
// current-state table's key and version columns.
func (s *Store) CurrentVersions(ctx context.Context, tenant string, ids []string) (map[string]int, error) {
	const op = "clickhouse: current versions"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(ids))
	for chunk := range slices.Chunk(ids, checkBatch) {
		err := s.queryRows(ctx, "current versions",
			"SELECT id, max(version) FROM memories_current WHERE tenant = {tenant:String} AND id IN {ids:Array(String)} GROUP BY id",
			func(r driver.Rows) error {
				var id string
				var v uint32
				if err := r.Scan(&id, &v); err != nil {
					return err
				}
				out[id] = int(v)
				return nil
			}, ch.Named("tenant", tenant), ch.Named("ids", chunk))
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fillUsage sets RecallCount and LastRecalledAt from memory_usage.
func (s *Store) fillUsage(ctx context.Context, tenant string, ms []memory.Memory) error {
	if len(ms) == 0 {
		return nil
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	us, err := s.usageOf(ctx, tenant, ids)
	if err != nil {
		return err
	}
	applyUsage(ms, us)
	return nil
}

// usage is one memory's recall count and last recall.
type usage struct {
	count int
	last  time.Time
}

// usageOf reads the usage of memories from memory_usage. A use stored
// twice (a retried RecordUsage) counts once: distinct times count.
func (s *Store) usageOf(ctx context.Context, tenant string, ids []string) (map[string]usage, error) {
	out := make(map[string]usage, len(ids))
	for chunk := range slices.Chunk(ids, checkBatch) {
		err := s.queryRows(ctx, "memories: usage",
			`SELECT memory_id, uniqExactIf(at, kind = 'recalled'), maxIf(at, kind = 'recalled')
FROM memory_usage
WHERE tenant = {tenant:String} AND memory_id IN {ids:Array(String)}
GROUP BY memory_id`,
			func(r driver.Rows) error {
				var (
					id    string
					count uint64
					last  time.Time
				)
				if err := r.Scan(&id, &count, &last); err != nil {
					return err
				}
				out[id] = usage{int(count), fromDB(last)}
				return nil
			}, ch.Named("tenant", tenant), ch.Named("ids", chunk))
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func applyUsage(ms []memory.Memory, us map[string]usage) {
	for i := range ms {
		if u, ok := us[ms[i].ID]; ok {
			ms[i].RecallCount, ms[i].LastRecalledAt = u.count, u.last
		}
	}
}

// History implements memory.MemoryStore.
func (s *Store) History(ctx context.Context, tenant, id string) ([]memory.Memory, error) {
	const op = "clickhouse: history"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return nil, err
	}
	var out []memory.Memory
	err := s.queryRows(ctx, "history",
		"SELECT "+memoryColumns+" FROM memory_versions FINAL WHERE tenant = {tenant:String} AND id = {id:String} ORDER BY version",
		func(r driver.Rows) error {
			m, err := scanMemory(r)
			out = append(out, m)
			return err
		}, ch.Named("tenant", tenant), ch.Named("id", id))
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, memory.NotFoundf(op, "memory %s not found", id)
	}
	return out, nil
}

// RecordUsage implements memory.MemoryStore.
func (s *Store) RecordUsage(ctx context.Context, us []memory.Usage) error {
	const op = "clickhouse: record usage"
	for i, u := range us {
		if err := memory.ValidateTenant(op, u.Tenant); err != nil {
			return err
		}
		if u.MemoryID == "" {
			return memory.Invalidf(op, "usage %d: memory_id is required", i)
		}
		if err := checkTime(op, fmt.Sprintf("usage %d at", i), u.At); err != nil {
			return err
		}
	}
	record := func() error {
		return s.insert(ctx, "record usage", "memory_usage", "tenant, memory_id, kind, at", len(us), func(i int) []any {
			u := us[i]
			return []any{u.Tenant, u.MemoryID, string(u.Kind), toDB(u.At)}
		})
	}
	if s.cache != nil {
		return s.cache.record(us, record)
	}
	return record()
}
