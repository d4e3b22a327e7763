//go:build linux && amd64

package chdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// Open starts chDB on cfg.DataDir (loading libchdb.so on first use) and
// returns the episodic store on it, migrated unless cfg.Store.SkipMigrate.
// If the library is missing, the error wraps ErrLibraryMissing and says how
// to fetch it; nothing else in the process is affected.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(cfg.LibPath); err != nil {
		return nil, fmt.Errorf("%w at %s: %s", ErrLibraryMissing, cfg.LibPath, FetchHint)
	}
	eng, err := acquireEngine(cfg.LibPath, cfg.DataDir, cfg.Sessions)
	if err != nil {
		return nil, err
	}
	sc := cfg.Store
	database := sc.WithDefaults().Database
	sc.Transport = &transport{eng: eng, database: database}
	sc.Protocol = clickhouse.HTTP
	sc.MaxOpenConns, sc.MaxIdleConns = cfg.Sessions, cfg.Sessions
	// Every statement carries the setting the adapter's inserts carry: a
	// pooled session then keeps one value, where switching it for each
	// insert and back for the next read cost a statement each way.
	sc.Settings = maps.Clone(sc.Settings)
	if sc.Settings == nil {
		sc.Settings = map[string]any{}
	}
	sc.Settings["insert_deduplicate"] = 0
	st, err := clickhouse.Open(ctx, sc)
	if err != nil {
		eng.release()
		return nil, err
	}
	if !sc.SkipMigrate {
		err := packSkipIndexes(ctx, eng, database)
		if err == nil {
			err = lightenParts(ctx, eng, database)
		}
		if err != nil {
			st.Close()
			eng.release()
			return nil, err
		}
	}
	st.CacheMemories(counts{eng})
	return &Store{Store: st, eng: eng, database: database}, nil
}

// packedSkipIndexBytes is the size below which a part's skip-index files
// go into one archive in the part (ClickHouse's packed_skip_index_max_bytes).
// A part of a small insert then has one skip-index file instead of two per
// index (an event's part has 14 files instead of 21). The embedded engine
// writes a part for every insert, and on a local file system creating a
// file is the dearest step of one: on ext4 without a journal, each new
// file skips over every inode freed in the last minutes, which a store
// that merges parts frees by the thousand. Parts above the size, the
// merged ones, keep a file per index. The threshold also bounds what a
// write buffers per index, twice over (data and marks).
const packedSkipIndexBytes = 256 << 10

// packSkipIndexes sets packedSkipIndexBytes on the tables of database that
// have skip indexes and lack it. The setting changes how new parts are
// written; readers serve either layout. Only the embedded engine gets it: a
// server's operator tunes its tables, and older servers do not know it.
func packSkipIndexes(ctx context.Context, eng *engine, database string) error {
	return modifyTables(ctx, eng, database, unpacked, fmt.Sprintf("packed_skip_index_max_bytes = %d", packedSkipIndexBytes), "pack the skip indexes of")
}

// modifyTables sets settings on the tables of database that find lists;
// what names the change for an error.
func modifyTables(ctx context.Context, eng *engine, database string, find func(*engine, *session, string) ([]string, error), settings, what string) error {
	s, err := eng.acquire(ctx, nil)
	if err != nil {
		return err
	}
	reuse := false
	defer func() { eng.put(s, reuse) }()
	tables, err := find(eng, s, database)
	if err != nil {
		return err
	}
	for _, table := range tables {
		// Both names are identifiers: the database's is validated, and the
		// tables are the migrations'.
		sql := fmt.Sprintf("ALTER TABLE `%s`.`%s` MODIFY SETTING %s", database, table, settings)
		if _, _, err := eng.query(s, sql, "TSV", nil); err != nil {
			return fmt.Errorf("chdb: %s %s: %w", what, table, err)
		}
	}
	reuse = true
	return nil
}

// Store is the ClickHouse adapter running on the embedded engine. It has
// every method of clickhouse.Store; Close also stops the engine once the
// last store on it is closed.
type Store struct {
	*clickhouse.Store
	eng      *engine
	database string
}

var (
	_ memory.EpisodicStore = (*Store)(nil)
	_ memory.WriteCounter  = (*Store)(nil)
)

// MemoryWrites implements memory.WriteCounter. The data directory is
// locked to this process, so the engine sees every write: those of every
// store on it (which count them: clickhouse.Store.CacheMemories), and
// every request served by Handler (counted as writes, whatever they are).
func (s *Store) MemoryWrites(tenant string) uint64 {
	return s.eng.writes[clickhouse.MemoryWrites].Count(tenant)
}

// counts are the engine's write counts, for clickhouse.Store.CacheMemories.
type counts struct{ eng *engine }

func (c counts) Writes(tenant string) clickhouse.Writes {
	var w clickhouse.Writes
	for k := range w {
		w[k] = c.eng.writes[k].Count(tenant)
	}
	return w
}

func (c counts) AddWrites(kind clickhouse.WriteKind, tenants ...string) {
	c.eng.writes[kind].Add(tenants...)
}

// Close closes the store and releases the engine.
func (s *Store) Close() error {
	err := s.Store.Close()
	s.eng.release()
	return err
}

// Handler serves ClickHouse's HTTP interface from the engine this store
// runs on, in the store's database unless a request names another, so that other processes (clickhouse-go with Protocol HTTP, or
// curl) can reach a data directory that only this process may open. Mount
// it on a loopback listener only: it applies no authentication.
func (s *Store) Handler() http.Handler {
	return &handler{rt: &transport{eng: s.eng, database: s.database}}
}

// ReadOnlyHandler is Handler for another process that may only read:
// every statement runs with the engine's readonly=1 (no write, no DDL, no
// table function, no setting changed), after Confined refused what
// readonly lets through (file(), INTO OUTFILE) and anything but one
// reading statement; inserts and settings other than a query's bounds are
// refused. What it serves changes nothing, so it counts no write.
func (s *Store) ReadOnlyHandler() http.Handler {
	return &handler{rt: &transport{eng: s.eng, database: s.database, readOnly: true}}
}

type handler struct{ rt *transport }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Another process may have written: see MemoryWrites.
	defer func() {
		if h.rt.readOnly {
			return
		}
		for k := range h.rt.eng.writes {
			h.rt.eng.writes[k].AddAny()
		}
	}()
	resp, err := h.rt.RoundTrip(r)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			status = http.StatusServiceUnavailable
		}
		http.Error(w, fmt.Sprintf("Code: 1001. DB::Exception: %v. (STD_EXCEPTION)", err), status)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body) // the client went away if this fails; nothing to tell it
}

// Describe names the store for people: "embedded ClickHouse (chDB 26.7.3)
// in ./data/clickhouse".
func (s *Store) Describe() string {
	v := ""
	if s.eng.lib.version != nil {
		v = " " + s.eng.lib.libVersion()
	}
	return "embedded ClickHouse (chDB" + v + ") in " + s.eng.dir
}

// unpacked lists the tables of database that have skip indexes and lack
// packedSkipIndexBytes.
// lightParts are the settings that make a small part cheaper to write:
// no file of substream marks (which a compact part's reader does without),
// and its marks and primary key uncompressed, where each was compressed
// with ZSTD(3), whose compressor costs more to set up than a small part's
// few hundred bytes of marks save. A one-row insert into a table of 20
// columns took 3.8 ms with them against 4.4 ms without, side by side.
// Like packedSkipIndexBytes they change only how new parts are written,
// and only on the embedded engine.
const lightParts = "write_marks_for_substreams_in_compact_parts = 0, compress_marks = 0, compress_primary_key = 0"

// lightenParts sets lightParts on the MergeTree tables of database that
// lack them.
func lightenParts(ctx context.Context, eng *engine, database string) error {
	return modifyTables(ctx, eng, database, heavy, lightParts, "lighten the parts of")
}

// heavy lists the MergeTree tables of database without lightParts.
func heavy(eng *engine, s *session, database string) ([]string, error) {
	out, _, err := eng.query(s, "SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree'"+
		" AND NOT positionCaseInsensitive(create_table_query, 'write_marks_for_substreams_in_compact_parts') ORDER BY name",
		"TSV", map[string]string{"db": database})
	if err != nil {
		return nil, fmt.Errorf("chdb: find the tables whose parts to lighten: %w", err)
	}
	return strings.Fields(string(out)), nil
}

func unpacked(eng *engine, s *session, database string) ([]string, error) {
	out, _, err := eng.query(s, "SELECT DISTINCT t.name FROM system.tables AS t INNER JOIN system.data_skipping_indices AS i"+
		" ON i.database = t.database AND i.table = t.name WHERE t.database = {db:String}"+
		" AND NOT positionCaseInsensitive(t.create_table_query, 'packed_skip_index_max_bytes') ORDER BY t.name",
		"TSV", map[string]string{"db": database})
	if err != nil {
		return nil, fmt.Errorf("chdb: find the tables whose skip indexes to pack: %w", err)
	}
	return strings.Fields(string(out)), nil
}
