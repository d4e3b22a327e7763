package clickhouse

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// MigrationsTable is the DDL of the table that records applied migrations.
// It is created before any migration runs, so it is not a migration itself.
const MigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations
(
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(applied_at)
ORDER BY version`

// MigrationLockPrefix names the migration lock's tables: the lock of
// generation g is the table MigrationLockPrefix+g (MigrationLock(g)).
// Creating a table is atomic, so of processes creating one name exactly
// one succeeds: taking the lock is creating the next generation's table,
// a compare-and-set on the generation, whether the lock was free or is
// taken over from a process that died. The table holds its holder's
// renewals (the holder first, then one row per renewal) and, once it
// released the lock, a row marked released; a Memory table also goes with
// a server restart.
//
// On a cluster the tables are created ON CLUSTER (see OnCluster): one
// Memory table on every host, not a replicated one. What makes creating
// one a lock there is the distributed DDL queue in Keeper: concurrent
// CREATEs are queued in one order and every host runs them in that order,
// so the same process wins on every host and each other one gets "already
// exists" from at least one host. Taking the lock needs every host up, as
// every ON CLUSTER statement of the migrations does.
const MigrationLockPrefix = "schema_migration_lock_"

// MigrationLock is the DDL that takes the migration lock of generation
// gen (see MigrationLockPrefix).
func MigrationLock(gen int) string {
	return fmt.Sprintf("CREATE TABLE %s%d (holder String, at DateTime64(3, 'UTC'), released UInt8) ENGINE = Memory", MigrationLockPrefix, gen)
}

// LegacyMigrationLock is the lock's table before generations: a process
// of an earlier version holds the lock while it exists and is younger
// than the lease.
const LegacyMigrationLock = "schema_migration_lock"

// Migration is one versioned schema change.
type Migration struct {
	Version int
	Name    string // file name without the version and extension, e.g. "events"
	// Checksum is the SHA-256 of the file; a recorded checksum that differs
	// from the embedded one means the file was edited after it was applied.
	Checksum   string
	Statements []string
	// Note is what the migration means for data already stored, from its
	// "-- note:" lines; it is logged when the migration is applied.
	Note string
}

var fileRE = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Migrations returns every embedded migration in version order. It fails if
// a file is misnamed, a version repeats, or a file holds no statement.
func Migrations() ([]Migration, error) {
	return parse(files)
}

func parse(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range names {
		m := fileRE.FindStringSubmatch(path.Base(name))
		if m == nil {
			return nil, fmt.Errorf("schema: migration file %q must be named NNNN_name.sql", name)
		}
		version, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		stmts, err := SplitStatements(string(body))
		if err != nil {
			return nil, fmt.Errorf("schema: %s: %w", name, err)
		}
		if len(stmts) == 0 {
			return nil, fmt.Errorf("schema: %s holds no statement", name)
		}
		sum := sha256.Sum256(body)
		out = append(out, Migration{Version: version, Name: m[2], Checksum: hex.EncodeToString(sum[:]), Statements: stmts, Note: note(string(body))})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("schema: two migrations have version %04d", out[i].Version)
		}
	}
	return out, nil
}

// SplitStatements splits SQL text into statements at semicolons that are
// outside quotes and comments. Comments are kept inside the statement they
// precede; empty statements are dropped.
func SplitStatements(sql string) ([]string, error) {
	var (
		out   []string
		start int
	)
	flush := func(end int) {
		if s := strings.TrimSpace(sql[start:end]); s != "" && !onlyComments(s) {
			out = append(out, s)
		}
	}
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for ; j < len(sql) && sql[j] != c; j++ {
				if sql[j] == '\\' {
					j++
				}
			}
			if j >= len(sql) {
				return nil, fmt.Errorf("unterminated %c quote starting at byte %d", c, i)
			}
			i = j
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			if nl := strings.IndexByte(sql[i:], '\n'); nl >= 0 {
				i += nl
			} else {
				i = len(sql)
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment starting at byte %d", i)
			}
			i += end + 3
		case c == ';':
			flush(i)
			start = i + 1
		}
	}
	flush(len(sql))
	return out, nil
}

// onlyComments reports whether s holds nothing but comments and space.
func onlyComments(s string) bool {
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		switch {
		case strings.HasPrefix(s, "--"):
			if nl := strings.IndexByte(s, '\n'); nl >= 0 {
				s = s[nl:]
			} else {
				s = ""
			}
		case strings.HasPrefix(s, "/*"):
			end := strings.Index(s, "*/")
			if end < 0 {
				return false
			}
			s = s[end+2:]
		default:
			return false
		}
	}
	return true
}

// note joins a migration's "-- note:" lines.
func note(body string) string {
	var notes []string
	for line := range strings.Lines(body) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "-- note:"); ok {
			notes = append(notes, strings.TrimSpace(n))
		}
	}
	return strings.Join(notes, " ")
}
