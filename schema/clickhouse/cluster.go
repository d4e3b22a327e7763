package clickhouse

import (
	"fmt"
	"regexp"
	"strings"
)

// Replicated tables on a cluster keep their replication state in ClickHouse
// Keeper (or ZooKeeper) under ReplicaPath, one replica per host named
// ReplicaName. {shard} and {replica} are macros every server of the cluster
// must define (<macros> in its configuration); {database} and {table} are
// ClickHouse's own. These are the arguments of ClickHouse's documentation,
// so a replica added later joins by running the same CREATE on its host.
const (
	ReplicaPath = "/clickhouse/tables/{shard}/{database}/{table}"
	ReplicaName = "{replica}"
)

var clusterRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// ValidCluster reports whether name can be used as a cluster name: the
// name of a cluster in the servers' remote_servers configuration.
func ValidCluster(name string) error {
	if !clusterRE.MatchString(name) {
		return fmt.Errorf("cluster name %q is not valid: use 1-128 letters, digits, '_', '.' or '-'", name)
	}
	return nil
}

// OnCluster rewrites one schema statement (a migration's, MigrationsTable,
// MigrationLock, or the DDL the store runs around them) to run on every
// host of cluster. It is derived from the statement, so the clustered
// schema cannot drift from the files:
//   - CREATE TABLE, VIEW, MATERIALIZED VIEW, DATABASE and DICTIONARY,
//     ALTER TABLE, DROP and TRUNCATE get ON CLUSTER after the object's name;
//   - in CREATE TABLE and CREATE MATERIALIZED VIEW, an engine of the
//     MergeTree family becomes its Replicated form, with ReplicaPath and
//     ReplicaName before its own arguments: ReplacingMergeTree(write_seq)
//     becomes ReplicatedReplacingMergeTree('/clickhouse/tables/…',
//     '{replica}', write_seq). Other engines stay as they are: Memory (the
//     migration lock) keeps one table on each host, and a view's storage is
//     its TO table;
//   - INSERT is returned unchanged: it runs on the host the connection
//     reaches, and replication copies the rows.
//
// Any other statement is an error that names it, so that a migration the
// rewriter cannot run on a cluster fails the tests instead of a deployment.
func OnCluster(stmt, cluster string) (string, error) {
	if err := ValidCluster(cluster); err != nil {
		return "", err
	}
	lx := &lexer{src: stmt}
	first := lx.next()
	var (
		at          int  // where ON CLUSTER goes
		storage     bool // whether an ENGINE clause follows that may be replicated
		needsEngine bool // whether the statement must name its engine
	)
	switch first.upper() {
	case "INSERT":
		return stmt, nil
	case "CREATE":
		kind := lx.next()
		if kind.upper() == "OR" {
			if lx.next().upper() != "REPLACE" {
				return "", unsupported(stmt)
			}
			kind = lx.next()
		}
		switch kind.upper() {
		case "TABLE":
			storage, needsEngine = true, true
		case "MATERIALIZED":
			if lx.next().upper() != "VIEW" {
				return "", unsupported(stmt)
			}
			storage = true
		case "VIEW", "DATABASE", "DICTIONARY":
		default:
			return "", unsupported(stmt)
		}
		if !lx.skipWords("IF", "NOT", "EXISTS") {
			return "", unsupported(stmt)
		}
		name, ok := lx.name()
		if !ok {
			return "", unsupported(stmt)
		}
		at = name.end
		save := *lx
		if lx.next().upper() == "UUID" {
			u := lx.next()
			if u.kind != tokString {
				return "", unsupported(stmt)
			}
			at = u.end
		} else {
			*lx = save
		}
	case "ALTER":
		if lx.next().upper() != "TABLE" {
			return "", unsupported(stmt)
		}
		name, ok := lx.name()
		if !ok {
			return "", unsupported(stmt)
		}
		at = name.end
	case "DROP":
		switch lx.next().upper() {
		case "TABLE", "VIEW", "DICTIONARY", "DATABASE":
		default:
			return "", unsupported(stmt)
		}
		if !lx.skipWords("IF", "EXISTS") {
			return "", unsupported(stmt)
		}
		name, ok := lx.name()
		if !ok {
			return "", unsupported(stmt)
		}
		at = name.end
	case "TRUNCATE":
		save := *lx
		if lx.next().upper() != "TABLE" {
			*lx = save
		}
		if !lx.skipWords("IF", "EXISTS") {
			return "", unsupported(stmt)
		}
		name, ok := lx.name()
		if !ok {
			return "", unsupported(stmt)
		}
		at = name.end
	default:
		return "", unsupported(stmt)
	}
	save := *lx
	if lx.next().upper() == "ON" && lx.next().upper() == "CLUSTER" {
		return "", fmt.Errorf("schema: statement already names a cluster: %s", firstLine(stmt))
	}
	*lx = save

	edits := []edit{{at: at, text: " ON CLUSTER `" + cluster + "`"}}
	if storage {
		e, found, err := replicateEngine(lx, stmt)
		if err != nil {
			return "", err
		}
		if !found && needsEngine {
			return "", fmt.Errorf("schema: CREATE TABLE without an ENGINE clause cannot be replicated; name the engine: %s", firstLine(stmt))
		}
		edits = append(edits, e...)
	}
	return apply(stmt, edits), nil
}

// replicateEngine finds the statement's ENGINE clause, outside parentheses
// and before AS SELECT, and returns the edits that replicate a MergeTree
// engine. found reports whether there was an ENGINE clause.
func replicateEngine(lx *lexer, stmt string) (edits []edit, found bool, err error) {
	depth := 0
	for t := lx.next(); t.kind != tokEOF; t = lx.next() {
		switch {
		case t.text == "(":
			depth++
		case t.text == ")":
			depth--
		case depth > 0:
		case t.upper() == "AS":
			save := *lx
			if n := lx.next(); n.upper() == "SELECT" || n.upper() == "WITH" || n.text == "(" {
				return nil, false, nil // the query of CREATE … AS SELECT: no ENGINE after it
			}
			*lx = save
		case t.upper() == "ENGINE":
			name := lx.next()
			if name.text == "=" {
				name = lx.next()
			}
			if name.kind != tokWord {
				return nil, false, fmt.Errorf("schema: cannot read the engine of: %s", firstLine(stmt))
			}
			if !strings.HasSuffix(name.text, "MergeTree") || strings.HasPrefix(name.text, "Replicated") || strings.HasPrefix(name.text, "Shared") {
				return nil, true, nil
			}
			edits = append(edits, edit{at: name.start, text: "Replicated"})
			args := "'" + ReplicaPath + "', '" + ReplicaName + "'"
			save := *lx
			if open := lx.next(); open.text == "(" {
				if closing := lx.next(); closing.text == ")" {
					return append(edits, edit{at: open.end, text: args}), true, nil
				}
				return append(edits, edit{at: open.end, text: args + ", "}), true, nil
			}
			*lx = save
			return append(edits, edit{at: name.end, text: "(" + args + ")"}), true, nil
		}
	}
	return nil, false, nil
}

func unsupported(stmt string) error {
	return fmt.Errorf("schema: cannot run this statement on a cluster (OnCluster knows CREATE, ALTER TABLE, DROP, TRUNCATE and INSERT): %s", firstLine(stmt))
}

// firstLine is the statement's first line that is not a comment, for
// error messages.
func firstLine(stmt string) string {
	for line := range strings.Lines(stmt) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "--") {
			return l
		}
	}
	return strings.TrimSpace(stmt)
}

// edit inserts text at a byte offset of the statement.
type edit struct {
	at   int
	text string
}

// apply makes the edits, given in increasing offsets.
func apply(s string, edits []edit) string {
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(s[last:e.at])
		b.WriteString(e.text)
		last = e.at
	}
	b.WriteString(s[last:])
	return b.String()
}

// A lexer reads just enough of ClickHouse SQL to find where a statement
// names its object and its engine: words, quoted identifiers, string
// literals and punctuation, skipping space and comments.
type lexer struct {
	src string
	pos int
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuoted // `identifier` or "identifier"
	tokString // 'literal'
	tokPunct
)

type token struct {
	kind       tokKind
	text       string
	start, end int
}

func (t token) upper() string {
	if t.kind != tokWord {
		return ""
	}
	return strings.ToUpper(t.text)
}

func (lx *lexer) next() token {
	s := lx.src
	for lx.pos < len(s) {
		switch {
		case s[lx.pos] == ' ' || s[lx.pos] == '\t' || s[lx.pos] == '\n' || s[lx.pos] == '\r':
			lx.pos++
		case strings.HasPrefix(s[lx.pos:], "--"):
			if nl := strings.IndexByte(s[lx.pos:], '\n'); nl >= 0 {
				lx.pos += nl + 1
			} else {
				lx.pos = len(s)
			}
		case strings.HasPrefix(s[lx.pos:], "/*"):
			if end := strings.Index(s[lx.pos+2:], "*/"); end >= 0 {
				lx.pos += end + 4
			} else {
				lx.pos = len(s)
			}
		default:
			return lx.token()
		}
	}
	return token{kind: tokEOF, start: len(s), end: len(s)}
}

func (lx *lexer) token() token {
	s, start := lx.src, lx.pos
	c := s[start]
	switch {
	case c == '`' || c == '"' || c == '\'':
		j := start + 1
		for ; j < len(s) && s[j] != c; j++ {
			if s[j] == '\\' {
				j++
			}
		}
		lx.pos = min(j+1, len(s))
		kind := tokQuoted
		if c == '\'' {
			kind = tokString
		}
		return token{kind: kind, text: s[start:lx.pos], start: start, end: lx.pos}
	case isWordByte(c):
		j := start
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		lx.pos = j
		return token{kind: tokWord, text: s[start:j], start: start, end: j}
	}
	lx.pos++
	return token{kind: tokPunct, text: s[start:lx.pos], start: start, end: lx.pos}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// skipWords consumes words if the statement has them all, in order, and
// reports false if it has only some of them. Having none is fine.
func (lx *lexer) skipWords(words ...string) bool {
	save := *lx
	for i, w := range words {
		if lx.next().upper() != w {
			if i == 0 {
				*lx = save
				return true
			}
			return false
		}
	}
	return true
}

// name reads an object name, database-qualified or not, and returns its
// last token.
func (lx *lexer) name() (token, bool) {
	t := lx.next()
	if t.kind != tokWord && t.kind != tokQuoted {
		return t, false
	}
	save := *lx
	if lx.next().text != "." {
		*lx = save
		return t, true
	}
	u := lx.next()
	return u, u.kind == tokWord || u.kind == tokQuoted
}
