package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
	chschema "github.com/hindsight-memory/hindsight/schema/clickhouse"
)

// Store is the ClickHouse implementation of memory.EpisodicStore. It is
// safe for concurrent use.
type Store struct {
	conn driver.Conn
	cfg  Config
	log  *slog.Logger
	// lastSeq orders writes of this process: see nextSeq.
	lastSeq atomic.Uint64
	// clock is the wall clock (time.Now); tests skew it.
	clock func() time.Time
	// lease is migrationLease; tests shorten it.
	lease time.Duration
	// beforeMigration, when set (tests), runs before each migration this
	// process applies.
	beforeMigration func(version int)
	// cache, when set (CacheMemories), answers reads of memories by ID
	// and by content hash.
	cache *memoryCache
}

var _ memory.EpisodicStore = (*Store)(nil)

// Open connects to ClickHouse and, unless cfg.SkipMigrate is set, creates
// the database when missing and applies pending migrations. With
// SkipMigrate it changes nothing: it can open a read-only endpoint.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.SkipMigrate {
		if err := createDatabase(ctx, cfg); err != nil {
			return nil, err
		}
	}
	opts, err := cfg.options(cfg.Database)
	if err != nil {
		return nil, err
	}
	conn, err := ch.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: open %s: %w", cfg, err)
	}
	s := &Store{conn: conn, cfg: cfg, log: cfg.Logger, clock: time.Now, lease: migrationLease}
	if err := s.ping(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	if !cfg.SkipMigrate {
		if err := s.Migrate(ctx); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return s, nil
}

// createDatabase runs CREATE DATABASE IF NOT EXISTS over a connection to
// the server's default database. The name was validated as an identifier;
// DDL takes no parameters, so it is quoted into the statement.
func createDatabase(ctx context.Context, cfg Config) error {
	opts, err := cfg.options("")
	if err != nil {
		return err
	}
	opts.MaxOpenConns, opts.MaxIdleConns = 1, 1
	conn, err := ch.Open(opts)
	if err != nil {
		return fmt.Errorf("clickhouse: open %s: %w", cfg, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, cfg.QueryTimeout)
	defer cancel()
	stmt := "CREATE DATABASE IF NOT EXISTS `" + cfg.Database + "`"
	if cfg.Cluster != "" {
		if stmt, err = chschema.OnCluster(stmt, cfg.Cluster); err != nil {
			return err
		}
	}
	if err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("clickhouse: create database %s on %s: %w", cfg.Database, cfg, err)
	}
	return nil
}

func (s *Store) ping(ctx context.Context) error {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if err := s.conn.Ping(ctx); err != nil {
		return fmt.Errorf("clickhouse: ping %s: %w", s.cfg, err)
	}
	return nil
}

// Close releases the connections.
func (s *Store) Close() error {
	if err := s.conn.Close(); err != nil {
		return fmt.Errorf("clickhouse: close: %w", err)
	}
	return nil
}

// Config returns the configuration the store runs with (defaults filled).
func (s *Store) Config() Config { return s.cfg }

// Migrate applies the migrations of schema/clickhouse that are not yet
// recorded in schema_migrations, in order, and records each one. It is
// idempotent, and safe to run from several processes at once: when some
// are pending, the processes elect one (migrationLock) to apply them while
// the others wait until they are recorded, so that no statement (a view
// dropped and created again, say) runs twice while another process is
// already writing. A recorded migration whose file changed since is an
// error: migrations are never edited, only added.
//
// With Config.Cluster every statement runs ON CLUSTER with Replicated
// engines (see ddl), the lock included (chschema.MigrationLock says what it
// means there), and each migration is recorded with insert_quorum set to
// every replica, so that a process reading schema_migrations from any
// replica after the lock is released sees it applied and cannot run it
// again. The cluster must have one shard, and every host must be up
// while migrations are pending; with none pending Migrate only reads.
func (s *Store) Migrate(ctx context.Context) error {
	migrations, err := chschema.Migrations()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, max(s.cfg.QueryTimeout, 2*time.Minute))
	defer cancel()
	replicas := 1
	if s.cfg.Cluster != "" {
		if replicas, err = s.clusterReplicas(ctx); err != nil {
			return err
		}
	}
	// The table is created only when missing: on a cluster a CREATE, even
	// IF NOT EXISTS, is a distributed DDL task that waits for every host,
	// and a service start must not depend on that when nothing is pending.
	exists, err := s.tableExists(ctx, "schema_migrations")
	if err != nil {
		return err
	}
	if !exists {
		if err := s.ddl(ctx, chschema.MigrationsTable); err != nil {
			return fmt.Errorf("clickhouse: migrate: create schema_migrations: %w", err)
		}
	}
	applied, err := s.AppliedMigrations(ctx)
	if err != nil {
		return err
	}
	pending := func(applied map[int]string) ([]chschema.Migration, error) {
		var out []chschema.Migration
		for _, m := range migrations {
			if sum, ok := applied[m.Version]; !ok {
				out = append(out, m)
			} else if sum != m.Checksum {
				return nil, fmt.Errorf("clickhouse: migrate: migration %04d_%s changed after it was applied (checksum %.12s…, recorded %.12s…): add a new migration instead of editing it",
					m.Version, m.Name, m.Checksum, sum)
			}
		}
		return out, nil
	}
	todo, err := pending(applied)
	if err != nil || len(todo) == 0 {
		return err
	}
	ctx, release, err := s.migrationLock(ctx, func() (bool, error) {
		applied, err := s.AppliedMigrations(ctx)
		if err != nil {
			return false, err
		}
		todo, err := pending(applied)
		return len(todo) == 0, err
	})
	if err != nil || release == nil {
		return err // failed, or another process applied them
	}
	defer release()
	if applied, err = s.AppliedMigrations(ctx); err != nil {
		return err
	}
	if todo, err = pending(applied); err != nil {
		return err
	}
	record := ctx
	if replicas > 1 {
		record = ch.Context(ctx, ch.WithSettings(ch.Settings{"insert_quorum": replicas}))
	}
	for _, m := range todo {
		if s.beforeMigration != nil {
			s.beforeMigration(m.Version)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("clickhouse: migrate: %04d_%s: %w", m.Version, m.Name, context.Cause(ctx))
		}
		for i, stmt := range m.Statements {
			if err := s.ddl(ctx, stmt); err != nil {
				return fmt.Errorf("clickhouse: migrate: %04d_%s statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		err := s.conn.Exec(record, "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ({version:UInt32}, {name:String}, {checksum:String}, now64(3))",
			ch.Named("version", uint32(m.Version)), ch.Named("name", m.Name), ch.Named("checksum", m.Checksum))
		if err != nil {
			return fmt.Errorf("clickhouse: migrate: record %04d_%s: %w", m.Version, m.Name, err)
		}
		if m.Note != "" {
			s.log.Info("clickhouse: applied migration", "version", m.Version, "name", m.Name, "note", m.Note)
		} else {
			s.log.Info("clickhouse: applied migration", "version", m.Version, "name", m.Name)
		}
	}
	return nil
}

// ddl runs a schema statement: as it is on a single server; on a cluster
// on every host, with replicated engines (chschema.OnCluster). ON CLUSTER
// returns once every host ran it, so the next statement finds its effect
// everywhere.
func (s *Store) ddl(ctx context.Context, stmt string) error {
	if s.cfg.Cluster != "" {
		var err error
		if stmt, err = chschema.OnCluster(stmt, s.cfg.Cluster); err != nil {
			return err
		}
	}
	return s.conn.Exec(ctx, stmt)
}

// clusterReplicas checks that Config.Cluster is defined on the server and
// has one shard, and returns how many replicas (hosts) it has.
func (s *Store) clusterReplicas(ctx context.Context) (int, error) {
	const op = "clickhouse: migrate"
	var shards, hosts uint64
	err := s.queryRows(ctx, "migrate: read the cluster", "SELECT uniqExact(shard_num), count() FROM system.clusters WHERE cluster = {cluster:String}",
		func(r driver.Rows) error { return r.Scan(&shards, &hosts) }, ch.Named("cluster", s.cfg.Cluster))
	switch {
	case err != nil:
		return 0, err
	case shards == 0:
		return 0, memory.Invalidf(op, "cluster %q is not defined on %s: name a cluster of the servers' remote_servers (SELECT DISTINCT cluster FROM system.clusters)", s.cfg.Cluster, s.cfg)
	case shards > 1:
		return 0, memory.Invalidf(op, "cluster %q has %d shards: Hindsight's tables are replicated, not sharded, so every host must hold all the data; use a cluster of one shard with replicas (deploy/README.md, \"Production shape at scale\")", s.cfg.Cluster, shards)
	}
	return int(hosts), nil
}

// tableExists reports whether the database has the table.
func (s *Store) tableExists(ctx context.Context, name string) (bool, error) {
	var n uint64
	err := s.queryRows(ctx, "migrate: look for "+name, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = {name:String}",
		func(r driver.Rows) error { return r.Scan(&n) }, ch.Named("name", name))
	return n > 0, err
}

// alreadyExists reports a ClickHouse TABLE_ALREADY_EXISTS error.
func alreadyExists(err error) bool {
	var ex *ch.Exception
	if errors.As(err, &ex) {
		return ex.Code == 57
	}
	return strings.Contains(err.Error(), "TABLE_ALREADY_EXISTS") || strings.Contains(err.Error(), "Code: 57")
}

// AppliedMigrations returns the recorded migrations: version → checksum.
func (s *Store) AppliedMigrations(ctx context.Context) (map[int]string, error) {
	rows, err := s.conn.Query(ctx, "SELECT version, argMax(checksum, applied_at) FROM schema_migrations GROUP BY version")
	if err != nil {
		return nil, fmt.Errorf("clickhouse: read schema_migrations: %w", err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var (
			v   uint32
			sum string
		)
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, fmt.Errorf("clickhouse: read schema_migrations: %w", err)
		}
		out[int(v)] = sum
	}
	return out, rows.Err()
}

// withTimeout applies the configured query timeout to contexts without a
// deadline, so that no store call can hang forever.
func (s *Store) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.cfg.QueryTimeout)
}

// Write sequences. ReplacingMergeTree keeps the row with the highest
// write_seq of each key, so a row that replaces another must carry a higher
// one, whichever process writes it and whatever its clock says:
//   - a memory version's write_seq is its version number, which the
//     tenant's ledger (the single writer) assigns in order; copies of one
//     version tie, and the last inserted wins;
//   - an episode or a setting that replaces stored rows takes a sequence
//     above theirs (see latestWrite), a Lamport clock kept in the rows;
//   - events and decisions keep their first write, whose sequence only
//     breaks the tie between identical retries.
// Sequences are nanoseconds since the epoch, strictly increasing within
// the process, and never below one seen in the store.

// nextSeq returns a write sequence number.
func (s *Store) nextSeq() uint64 { return s.reserveSeq(1) }

// reserveSeq reserves n consecutive sequence numbers and returns the first.
func (s *Store) reserveSeq(n int) uint64 { return s.reserveAfter(n, 0) }

// reserveAfter reserves n consecutive sequence numbers above seen.
func (s *Store) reserveAfter(n int, seen uint64) uint64 {
	for {
		last := s.lastSeq.Load()
		first := max(uint64(s.clock().UnixNano()), last+1, seen+1)
		if s.lastSeq.CompareAndSwap(last, first+uint64(max(n, 1))-1) {
			return first
		}
	}
}

// latestWrite runs query, a SELECT of the highest write_seq and the count
// of the rows a write is about to replace, so that the write can take a
// sequence above theirs (reserveAfter) even if they were written by a
// process whose clock is ahead of this one's.
func (s *Store) latestWrite(ctx context.Context, what, query string, args ...any) (most uint64, existed bool, err error) {
	var rows uint64
	err = s.queryRows(ctx, what+": latest write", query, func(r driver.Rows) error { return r.Scan(&most, &rows) }, args...)
	return most, rows > 0, err
}

// insertCtx marks inserts as not to be deduplicated by block content. The
// tables already make retries idempotent; server-side block deduplication
// (on by default for replicated tables) would instead silently drop a
// legitimate rewrite of rows that were purged in between.
func insertCtx(ctx context.Context) context.Context {
	return ch.Context(ctx, ch.WithSettings(ch.Settings{"insert_deduplicate": 0}))
}

// exec runs a statement with typed parameters.
func (s *Store) exec(ctx context.Context, op, query string, args ...any) error {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if err := s.conn.Exec(ctx, query, args...); err != nil {
		return fmt.Errorf("clickhouse: %s: %w", op, err)
	}
	return nil
}

// queryRows runs a query with typed parameters and calls scan for each row.
func (s *Store) queryRows(ctx context.Context, op, query string, scan func(driver.Rows) error, args ...any) error {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("clickhouse: %s: %w", op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("clickhouse: %s: scan: %w", op, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("clickhouse: %s: %w", op, err)
	}
	return nil
}

// insert sends rows as one Native-format batch with an explicit column list.
func (s *Store) insert(ctx context.Context, op, table, columns string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	batch, err := s.conn.PrepareBatch(insertCtx(ctx), "INSERT INTO "+table+" ("+columns+")")
	if err != nil {
		return fmt.Errorf("clickhouse: %s: prepare: %w", op, err)
	}
	defer batch.Close()
	for i := range n {
		if err := batch.Append(row(i)...); err != nil {
			return fmt.Errorf("clickhouse: %s: row %d: %w", op, i, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("clickhouse: %s: send %d rows: %w", op, n, err)
	}
	return nil
}

// epoch stands for the zero time.Time: DateTime64 cannot hold year 1.
var epoch = time.Unix(0, 0).UTC()

// Earliest and latest instants DateTime64(3) can hold.
var (
	minTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2299, 12, 31, 23, 59, 59, 999_000_000, time.UTC)
)

// toDB maps a time to its stored form: UTC, and the zero time as the epoch.
func toDB(t time.Time) time.Time {
	if t.IsZero() {
		return epoch
	}
	return t.UTC()
}

// fromDB maps a stored time back: the epoch is the zero time.
func fromDB(t time.Time) time.Time {
	if t.Equal(epoch) {
		return time.Time{}
	}
	return t.UTC()
}

// checkTime reports a time DateTime64(3) cannot store.
func checkTime(op, what string, t time.Time) error {
	if t.IsZero() || !t.Before(minTime) && !t.After(maxTime) {
		return nil
	}
	return memory.Invalidf(op, "%s %s is out of the storable range 1900-01-01 to 2299-12-31", what, t.Format(time.RFC3339))
}

// ceilMilli rounds t up to the millisecond. Stored times have millisecond
// precision, so for a stored x: x >= t ⇔ x >= ceilMilli(t), and
// x < t ⇔ x < ceilMilli(t).
func ceilMilli(t time.Time) time.Time {
	if r := t.Truncate(time.Millisecond); !r.Equal(t) {
		return r.Add(time.Millisecond)
	}
	return t
}

// checkTimes checks name/time pairs with checkTime.
func checkTimes(op, what string, pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := checkTime(op, what+" "+pairs[i].(string), pairs[i+1].(time.Time)); err != nil {
			return err
		}
	}
	return nil
}

// now is the wall clock, in UTC.
func (s *Store) now() time.Time { return s.clock().UTC() }
