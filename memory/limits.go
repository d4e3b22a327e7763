package memory

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the identifiers and names a caller gives, one table for every
// entry point (the MCP tools, the console, the CLI, transcript files and
// the service): nothing past them reaches a workflow, whose payloads
// Temporal bounds, or an error message, which quotes what it refuses.
const (
	// MaxID bounds an ID the caller names or chooses: a memory, decision,
	// episode or event ID, a request ID, a session ID.
	MaxID = 200
	// MaxName bounds a user, agent or tool name.
	MaxName = 200
	// MaxProject bounds a project: a repository's identity or a directory.
	MaxProject = 1024
	// MaxTaskType bounds a task type.
	MaxTaskType = 100
	// MaxTask bounds a session's task as the caller states it.
	MaxTask = 4000
	// MaxEntity and MaxEntities bound the entities of a memory or a query.
	MaxEntity   = 200
	MaxEntities = 32
)

// CheckID checks an identifier the caller gives for field: at most MaxID
// bytes of printable text without surrounding space. Empty is left to the
// caller (most IDs are optional).
func CheckID(op, field, v string) error {
	if err := CheckName(op, field, v, MaxID); err != nil {
		return err
	}
	if strings.TrimSpace(v) != v {
		return Invalidf(op, "%s %s has surrounding spaces: send the ID as it was given", field, Quote(v))
	}
	return nil
}

// CheckName checks a name or a short text for field: at most max bytes,
// valid UTF-8, no control characters.
func CheckName(op, field, v string, max int) error {
	if len(v) > max {
		return Invalidf(op, "%s is %d bytes; the limit is %d (it begins %s)", field, len(v), max, Quote(v))
	}
	if !utf8.ValidString(v) {
		return Invalidf(op, "%s %s is not valid UTF-8", field, Quote(v))
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return Invalidf(op, "%s %s holds a control character: send it as plain text", field, Quote(v))
	}
	return nil
}

// CheckFields checks several names at once with CheckName: each field's
// value against its limit, in the order given.
func CheckFields(op string, fields ...Field) error {
	for _, f := range fields {
		check := func() error { return CheckName(op, f.Name, f.Value, f.Max) }
		if f.Max == 0 {
			check = func() error { return CheckID(op, f.Name, f.Value) }
		}
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// Field is a named value and its limit in bytes for CheckFields; a Max of
// zero checks it as an ID (CheckID).
type Field struct {
	Name, Value string
	Max         int
}

// quoteRunes is how much of a refused value an error message shows.
const quoteRunes = 40

// Quote is v as an error message shows it: quoted and escaped (control
// characters and invalid bytes as escapes), at most quoteRunes characters
// of it, with an ellipsis when cut. Whatever a caller sends, the message
// quoting it stays short and printable.
func Quote(v string) string {
	cut, n := len(v), 0
	for i := range v {
		if n == quoteRunes {
			cut = i
			break
		}
		n++
	}
	if cut < len(v) {
		return strconv.Quote(v[:cut]) + "…"
	}
	return strconv.Quote(v)
}
