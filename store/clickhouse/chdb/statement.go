package chdb

import "strings"

// ReadOnly reports whether stmt is one statement that only reads (SELECT,
// WITH, SHOW, DESCRIBE, EXPLAIN, EXISTS), comments aside: what the SQL
// endpoint of `hindsight dev` runs, and what leaves the cache of table
// descriptions as it is.
func ReadOnly(stmt string) bool {
	s := strings.TrimSpace(stripSQLComments(stmt))
	s = strings.TrimLeft(s, "( \t\r\n")
	if i := strings.IndexByte(s, ';'); i >= 0 && strings.TrimSpace(s[i+1:]) != "" {
		return false
	}
	word, _, _ := strings.Cut(strings.ToUpper(s), " ")
	word = strings.TrimRight(word, "\n\t\r(")
	switch word {
	case "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "EXISTS":
		return true
	}
	return false
}

// stripSQLComments drops -- and /* */ comments.
func stripSQLComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "--"):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(s)
			}
		case strings.HasPrefix(s[i:], "/*"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(s)
			}
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
