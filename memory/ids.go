package memory

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/hindsight-memory/hindsight/runes"
)

// IDs are deterministic: the same input always yields the same ID, so a
// retried activity or a session ended twice writes the same rows again
// instead of new ones.

func hashID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return prefix + hex.EncodeToString(h.Sum(nil))[:24]
}

// EventID is the ID of the seq-th event of a session.
func EventID(tenant, sessionID string, seq int) string {
	return hashID("ev_", tenant, sessionID, strconv.Itoa(seq))
}

// LoggedEventID is the ID of an event appended to a live session (by
// memory_log). With the client's own ID for the event, a resent event keeps
// its ID and is stored once. Without one, the ID is new for every call,
// unique across processes with no shared counter: the time in nanoseconds,
// then random bits, so that IDs sort in the order they were made on one
// clock.
func LoggedEventID(tenant, sessionID, clientID string, now time.Time) string {
	if clientID != "" {
		return hashID("ev_", tenant, sessionID, "client", clientID)
	}
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return fmt.Sprintf("ev_%016x%s", now.UnixNano(), hex.EncodeToString(b[:]))
}

// CompareEvents orders the events of a session: by timestamp, then by
// position in a transcript sent whole (logged events have none), then by ID.
func CompareEvents(a, b Event) int {
	return cmp.Or(a.TS.Compare(b.TS), cmp.Compare(a.Seq, b.Seq), strings.Compare(a.ID, b.ID))
}

// EpisodeID is the ID of the episode distilled from a session.
func EpisodeID(tenant, sessionID string) string {
	return hashID("ep_", tenant, sessionID)
}

// MemoryID is the ID of a memory first written for a candidate with this
// content hash, by the operation identified by origin (a decision ID).
func MemoryID(tenant, contentHash, origin string) string {
	return hashID("mem_", tenant, contentHash, origin)
}

// DecisionID is the ID of the decision about one candidate of one request.
// request identifies the operation (a workflow ID, a tool call's idempotency
// key) and index orders candidates inside it.
func DecisionID(tenant, request string, index int, contentHash string) string {
	return hashID("dec_", tenant, request, strconv.Itoa(index), contentHash)
}

// SessionWorkflowID is the Temporal workflow ID of a session's distillation.
// A session ended twice maps to the same workflow and is distilled once.
// Workflow IDs travel in gRPC headers, which take printable ASCII only: an
// ID with other characters (会话-1, sess-é, an emoji) is percent-encoded
// under "u/", which no session ID can contain (they have no '/'), so the
// mapping stays one to one. The data keeps the original ID.
func SessionWorkflowID(tenant, sessionID string) string {
	for i := 0; i < len(sessionID); i++ {
		if c := sessionID[i]; c < 0x20 || c > 0x7e {
			var b strings.Builder
			for j := 0; j < len(sessionID); j++ {
				if c := sessionID[j]; c < 0x20 || c > 0x7e || c == '%' {
					fmt.Fprintf(&b, "%%%02X", c)
				} else {
					b.WriteByte(c)
				}
			}
			return "session-end/" + tenant + "/u/" + b.String()
		}
	}
	return "session-end/" + tenant + "/" + sessionID
}

var spaceRun = regexp.MustCompile(`\s+`)

// Normalize folds text for comparison and hashing: Unicode NFKC (full-width
// to half-width), lower case, trimmed trailing punctuation and collapsed
// white space, with no space next to a CJK character (Chinese text is
// written with or without spaces around Latin words). It keeps meaning:
// "Never" and "never." hash alike, "never" and "always" do not, and
// "报表用UTC时间" and "报表用 UTC 时间" do.
func Normalize(s string) string {
	s = norm.NFKC.String(s)
	s = strings.ToLower(s)
	s = spaceRun.ReplaceAllString(strings.TrimSpace(s), " ")
	s = strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsPunct(r) || unicode.IsSpace(r)
	})
	if !strings.Contains(s, " ") {
		return s
	}
	rs := []rune(s)
	out := rs[:0]
	for i, r := range rs {
		if r == ' ' && i > 0 && i < len(rs)-1 && (runes.IsCJK(rs[i-1]) || runes.IsCJK(rs[i+1])) {
			continue
		}
		out = append(out, r)
	}
	return string(out)
}

// ContentHash is the exact-duplicate key of a memory: its kind and its
// normalised content.
func ContentHash(kind Kind, content string) string {
	sum := sha256.Sum256([]byte(string(kind) + "\x00" + Normalize(content)))
	return hex.EncodeToString(sum[:16])
}

var tenantRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$`)

// ValidateTenant checks a tenant name: 1–64 characters of letters, digits,
// '_', '.', '-', starting with a letter or digit.
func ValidateTenant(op, tenant string) error {
	if !tenantRE.MatchString(tenant) {
		return Invalidf(op, "tenant %s is not valid: use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit", Quote(tenant))
	}
	return nil
}

var sessionRE = regexp.MustCompile(`^[^\x00-\x1f/]{1,200}$`)

// ValidateSessionID checks a session ID: 1–200 printable characters, no '/'.
func ValidateSessionID(op, id string) error {
	if strings.TrimSpace(id) != id || !sessionRE.MatchString(id) {
		return Invalidf(op, "session_id %s is not valid: use 1-200 printable characters without '/' or surrounding spaces", Quote(id))
	}
	return nil
}
