package clickhouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	chschema "github.com/hindsight-memory/hindsight/schema/clickhouse"
)

// migrationLease is how long the migration lock holds without a renewal:
// a lock not renewed for longer was left by a process that died while
// migrating, and is taken over. The holder renews it every third of the
// lease while it migrates, however long that takes.
const migrationLease = time.Minute

// lockState is what the store says of the migration lock.
type lockState struct {
	gen      int    // the newest generation's number, 0 when there is none
	holder   string // who created it
	released bool   // its holder released it
	// idle is how long ago it was last renewed (or, before its holder's
	// first row, created).
	idle time.Duration
	// legacy is the age of an earlier version's lock, -1 when there is
	// none.
	legacy time.Duration
}

// free reports whether the lock may be taken: no generation yet, or the
// newest released or not renewed within lease, and no live lock of an
// earlier version.
func (l lockState) free(lease time.Duration) bool {
	if l.legacy >= 0 && l.legacy <= lease {
		return false
	}
	return l.gen == 0 || l.released || l.idle > lease
}

// migrationLock takes the migration lock (chschema.MigrationLockPrefix
// says how): it returns once this process holds it, with a context that
// ends if the lock is lost (a process that found it unrenewed took it
// over) and a release func, or with a nil release when done() reports,
// while waiting, that another process applied everything.
//
// Taking the lock is creating the next generation's table, which only one
// process can do, so of two processes that both find the lock free (or
// both find it stale) one wins and the other waits: no takeover is a
// check followed by a drop. Only the holder releases, by marking its own
// generation released; the next holder drops the generations before its
// own.
func (s *Store) migrationLock(ctx context.Context, done func() (bool, error)) (context.Context, func(), error) {
	holder := lockHolder()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := s.lockState(ctx)
		if err != nil {
			return nil, nil, err
		}
		if st.free(s.lease) {
			if st.gen > 0 && !st.released {
				s.log.Warn("clickhouse: taking over a migration lock left by a process that died", "holder", st.holder, "idle_s", st.idle.Seconds())
			}
			gen := st.gen + 1
			err := s.ddl(ctx, chschema.MigrationLock(gen))
			if err == nil {
				return s.holdMigrationLock(ctx, gen, holder, st)
			}
			if !alreadyExists(err) {
				return nil, nil, fmt.Errorf("clickhouse: migrate: take the migration lock: %w", err)
			}
			// Another process took this generation first.
		}
		if ok, err := done(); err != nil || ok {
			return nil, nil, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("clickhouse: migrate: waiting for another process to apply the migrations: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// holdMigrationLock starts holding generation gen, just created: it
// writes the holder's first row, drops what came before (prev), and
// renews the lock until released.
func (s *Store) holdMigrationLock(ctx context.Context, gen int, holder string, prev lockState) (context.Context, func(), error) {
	table := lockTable(gen)
	if err := s.renewLock(ctx, table, holder, 0); err != nil {
		return nil, nil, err
	}
	for g := prev.gen; g >= 1 && g >= prev.gen-1; g-- {
		if err := s.ddl(ctx, "DROP TABLE IF EXISTS "+lockTable(g)); err != nil {
			return nil, nil, fmt.Errorf("clickhouse: migrate: drop an earlier migration lock: %w", err)
		}
	}
	if prev.legacy >= 0 {
		if err := s.ddl(ctx, "DROP TABLE IF EXISTS "+chschema.LegacyMigrationLock); err != nil {
			return nil, nil, fmt.Errorf("clickhouse: migrate: drop an earlier version's migration lock: %w", err)
		}
	}
	held, lost := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(max(s.lease/3, 50*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-held.Done():
				return
			case <-t.C:
			}
			st, err := s.lockState(held)
			switch {
			case err != nil:
				s.log.Warn("clickhouse: migrate: read the migration lock to renew it", "error", err)
				continue // the lease allows a miss or two
			case st.gen != gen || st.holder != holder:
				lost(fmt.Errorf("clickhouse: migrate: the migration lock was taken over (generation %d, holder %s) while this process (%s) migrated", st.gen, st.holder, holder))
				return
			}
			if err := s.renewLock(held, table, holder, 0); err != nil {
				s.log.Warn("clickhouse: migrate: renew the migration lock", "error", err)
			}
		}
	}()
	release := func() {
		close(stop)
		<-renewed
		defer lost(nil)
		rctx, cancel := s.withTimeout(context.Background())
		defer cancel()
		st, err := s.lockState(rctx)
		if err != nil || st.gen != gen || st.holder != holder {
			return // not ours any more: whoever holds it keeps it
		}
		if err := s.renewLock(rctx, table, holder, 1); err != nil {
			s.log.Warn("clickhouse: migrate: release the migration lock", "error", err)
			return
		}
		// Released, it may go: the next holder makes the next
		// generation whether this one is there or not.
		_ = s.ddl(rctx, "DROP TABLE IF EXISTS "+table)
	}
	return held, release, nil
}

// renewLock writes one row of holder into the lock's table: a renewal, or
// with released 1 its release. The time is the server's, so that no
// process's clock decides another's lease.
func (s *Store) renewLock(ctx context.Context, table, holder string, released uint8) error {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	err := s.conn.Exec(ctx, "INSERT INTO "+table+" (holder, at, released) SELECT {holder:String}, now64(3), {released:UInt8}",
		ch.Named("holder", holder), ch.Named("released", released))
	if err != nil {
		return fmt.Errorf("clickhouse: migrate: write the migration lock: %w", err)
	}
	return nil
}

// lockState reads the migration lock: its newest generation and that
// generation's rows. On a cluster, every host's copy is read.
func (s *Store) lockState(ctx context.Context) (lockState, error) {
	st := lockState{legacy: -1}
	tables := "system.tables"
	if s.cfg.Cluster != "" {
		tables = "clusterAllReplicas('" + s.cfg.Cluster + "', system.tables)"
	}
	type table struct {
		name string
		age  int64
	}
	var found []table
	err := s.queryRows(ctx, "migrate: find the migration lock",
		"SELECT name, max(dateDiff('millisecond', metadata_modification_time, now64(3))) FROM "+tables+
			" WHERE database = {db:String} AND startsWith(name, 'schema_migration_lock') GROUP BY name",
		func(r driver.Rows) error {
			var t table
			if err := r.Scan(&t.name, &t.age); err != nil {
				return err
			}
			found = append(found, t)
			return nil
		}, ch.Named("db", s.cfg.Database))
	if err != nil {
		return st, err
	}
	var created time.Duration
	for _, t := range found {
		if t.name == chschema.LegacyMigrationLock {
			st.legacy = time.Duration(t.age) * time.Millisecond
			continue
		}
		g, err := strconv.Atoi(strings.TrimPrefix(t.name, chschema.MigrationLockPrefix))
		if err == nil && g > st.gen {
			st.gen, created = g, time.Duration(t.age)*time.Millisecond
		}
	}
	if st.gen == 0 {
		return st, nil
	}
	from := lockTable(st.gen)
	if s.cfg.Cluster != "" {
		from = "clusterAllReplicas('" + s.cfg.Cluster + "', currentDatabase(), '" + from + "')"
	}
	var rows, released uint64
	var idle int64
	err = s.queryRows(ctx, "migrate: read the migration lock",
		"SELECT count(), argMin(holder, at), countIf(released = 1), if(count() = 0, 0, dateDiff('millisecond', max(at), now64(3))) FROM "+from,
		func(r driver.Rows) error { return r.Scan(&rows, &st.holder, &released, &idle) })
	if err != nil {
		if isUnknownTable(err) {
			// Released and dropped between the two reads: it is free.
			st.released = true
			return st, nil
		}
		return st, err
	}
	st.released = released > 0
	st.idle = time.Duration(idle) * time.Millisecond
	if rows == 0 {
		st.idle = created // its creator has not written its first row yet
	}
	return st, nil
}

func lockTable(gen int) string { return chschema.MigrationLockPrefix + strconv.Itoa(gen) }

// lockHolder names this process's claim on the lock: its host and PID,
// and a random part that tells two claims of one process apart.
func lockHolder() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// isUnknownTable reports a ClickHouse UNKNOWN_TABLE error.
func isUnknownTable(err error) bool {
	var ex *ch.Exception
	if errors.As(err, &ex) {
		return ex.Code == 60
	}
	return strings.Contains(err.Error(), "UNKNOWN_TABLE") || strings.Contains(err.Error(), "Code: 60")
}
