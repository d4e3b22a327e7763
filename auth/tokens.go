package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// Tokens maps the bearer tokens of a tokens file to identities. The file
// is read again when it changes (its size, time or inode), so a token
// removed from it stops working at the next request, on the MCP endpoint
// and in the console alike. A file that no longer reads correctly serves
// no token until it is fixed: a half-edited file must not keep a removed
// token working.
type Tokens struct {
	path string
	now  func() time.Time
	log  *slog.Logger

	mu    sync.Mutex
	set   tokenSet
	stamp stamp
	sum   [32]byte // of the content last read
	err   error    // why the file last failed to read, if it did
	refs  map[string]map[string]Identity
}

type tokenSet struct {
	byHash  map[[32]byte]Identity
	version uint64
}

// stamp is what says a file changed without reading it.
type stamp struct {
	info os.FileInfo
	mod  time.Time
	size int64
}

func (s stamp) same(fi os.FileInfo) bool {
	return s.info != nil && os.SameFile(s.info, fi) && s.mod.Equal(fi.ModTime()) && s.size == fi.Size()
}

// LoadTokens reads a tokens file: one line per token,
//
//	tenant token [user] [agents=a,b]
//
// Blank lines and lines starting with # are ignored. A token with a user
// acts for that user only, whatever the arguments say, and reaches the
// private scopes of the agents it lists (none without agents=); a token
// without a user acts for the whole tenant, and for the listed agents
// only when it lists some. Tokens must be at least 16 characters and
// unique.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path, now: time.Now, log: slog.New(slog.DiscardHandler)}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	set, err := parseTokens(path, raw)
	if err != nil {
		return nil, err
	}
	t.set, t.stamp, t.sum = set, stamp{info: fi, mod: fi.ModTime(), size: fi.Size()}, sha256.Sum256(raw)
	t.set.version = 1
	return t, nil
}

// WithLogger makes t log the reloads of its file, and why one failed.
func (t *Tokens) WithLogger(l *slog.Logger) *Tokens {
	if l != nil {
		t.log = l
	}
	return t
}

// recent is how long after a change of the file its content is compared
// even when its size, time and inode look the same: a file rewritten within
// the file system's time granularity keeps its time.
const recent = 2 * time.Second

// current returns the token set, reading the file again if it changed.
func (t *Tokens) current() tokenSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	fi, err := os.Stat(t.path)
	if err != nil {
		t.fail(fmt.Errorf("token file: %w", err))
		return t.set
	}
	if t.err == nil && t.stamp.same(fi) && t.now().Sub(fi.ModTime()) >= recent {
		return t.set
	}
	raw, err := os.ReadFile(t.path)
	if err != nil {
		t.fail(fmt.Errorf("token file: %w", err))
		return t.set
	}
	t.stamp = stamp{info: fi, mod: fi.ModTime(), size: fi.Size()}
	sum := sha256.Sum256(raw)
	if t.err == nil && sum == t.sum {
		return t.set
	}
	set, err := parseTokens(t.path, raw)
	if err != nil {
		t.fail(err)
		return t.set
	}
	t.sum, t.err = sum, nil
	set.version = t.set.version + 1
	t.set, t.refs = set, nil
	t.log.Info("token file read again", "path", t.path, "tokens", len(set.byHash))
	return t.set
}

// fail serves no token until the file reads again.
func (t *Tokens) fail(err error) {
	if t.err == nil || t.err.Error() != err.Error() {
		t.log.Error("the token file cannot be read; no token is accepted until it is fixed", "path", t.path, "error", err)
	}
	t.err, t.sum = err, [32]byte{}
	t.set = tokenSet{byHash: map[[32]byte]Identity{}, version: t.set.version + 1}
	t.refs = nil
}

// Identity returns what a bearer token stands for. Tokens are looked up
// by their SHA-256, so lookup time says nothing about a token's prefix.
func (t *Tokens) Identity(token string) (Identity, bool) {
	id, ok := t.current().byHash[sha256.Sum256([]byte(token))]
	return id, ok
}

// Ref is a reference to token, keyed with key, that a session can keep in
// place of the token: ByRef finds the token's identity from it as long as
// the token is in the file, and a ref says nothing of the token without
// the key.
func (t *Tokens) Ref(key []byte, token string) string {
	d := sha256.Sum256([]byte(token))
	return ref(key, d)
}

func ref(key []byte, digest [32]byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("hindsight-token-ref|"))
	m.Write(digest[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// ByRef returns the identity of the token Ref named, while the token is
// in the file.
func (t *Tokens) ByRef(key []byte, r string) (Identity, bool) {
	set := t.current()
	t.mu.Lock()
	defer t.mu.Unlock()
	if set.version != t.set.version {
		set = t.set
	}
	if t.refs == nil {
		t.refs = map[string]map[string]Identity{}
	}
	m, ok := t.refs[string(key)]
	if !ok {
		m = make(map[string]Identity, len(set.byHash))
		for d, id := range set.byHash {
			m[ref(key, d)] = id
		}
		t.refs[string(key)] = m
	}
	id, ok := m[r]
	return id, ok
}

func parseTokens(path string, raw []byte) (tokenSet, error) {
	set := tokenSet{byHash: map[[32]byte]Identity{}}
	for n, line := range bytes.Split(raw, []byte("\n")) {
		id, token, err := parseTokenLine(string(line))
		if err != nil {
			return tokenSet{}, fmt.Errorf("token file %s line %d: %w", path, n+1, err)
		}
		if token == "" {
			continue
		}
		h := sha256.Sum256([]byte(token))
		if _, dup := set.byHash[h]; dup {
			return tokenSet{}, fmt.Errorf("token file %s line %d: the token is used twice", path, n+1)
		}
		set.byHash[h] = id
	}
	if len(set.byHash) == 0 {
		return tokenSet{}, fmt.Errorf("token file %s has no tokens", path)
	}
	return set, nil
}

// parseTokenLine reads one line of a tokens file; a blank or comment line
// has no token.
func parseTokenLine(line string) (Identity, string, error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return Identity{}, "", nil
	}
	fields := strings.Fields(line)
	if len(fields) < 2 || len(fields) > 4 {
		return Identity{}, "", fmt.Errorf(`want "tenant token [user] [agents=a,b]"`)
	}
	id := Identity{Tenant: fields[0]}
	token := fields[1]
	for i, f := range fields[2:] {
		list, isAgents := strings.CutPrefix(f, "agents=")
		switch {
		case isAgents:
			if id.Agents != nil {
				return Identity{}, "", fmt.Errorf("agents= is given twice")
			}
			for a := range strings.SplitSeq(list, ",") {
				if !memory.AgentScope(a).Valid() {
					return Identity{}, "", fmt.Errorf("agent %q is not a valid agent ID (agents=a,b lists them without spaces)", a)
				}
				if !slices.Contains(id.Agents, a) {
					id.Agents = append(id.Agents, a)
				}
			}
		case i == 0:
			if !memory.UserScope(f).Valid() {
				return Identity{}, "", fmt.Errorf("user %q is not a valid user ID", f)
			}
			id.UserID = f
		default:
			return Identity{}, "", fmt.Errorf(`%q: after the user only agents=a,b may follow`, f)
		}
	}
	if err := memory.ValidateTenant("token file", id.Tenant); err != nil {
		return Identity{}, "", err
	}
	if len(token) < 16 {
		return Identity{}, "", fmt.Errorf("the token is shorter than 16 characters")
	}
	return id, token, nil
}
