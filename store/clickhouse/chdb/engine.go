//go:build linux && amd64

package chdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// The chDB engine is a process-wide singleton: it runs on one data
// directory at a time, and only one process may own that directory. engine
// holds it, with a lock file that keeps other processes out and a pool of
// sessions (chDB connections) that requests take turns on.
type engine struct {
	lib  *lib
	dir  string
	lock *os.File
	// slots bounds the sessions in use at once; a request waits for one.
	slots chan struct{}
	// writes counts writes by kind (clickhouse.WriteKind), memory writes
	// for memory.WriteCounter too.
	writes [len(clickhouse.Writes{})]memory.WriteCounts

	// sets counts the statements run to change a session's settings,
	// statements every statement run.
	sets, statements atomic.Uint64

	mu     sync.Mutex
	idle   []*session
	pooled int // sessions of the pool, idle or in use
	refs   int
	closed bool
}

// session is one chDB connection. A connection runs one statement at a
// time and keeps state between statements (current database, settings),
// so a session is used by one request at a time and remembers what it set.
type session struct {
	outer    unsafe.Pointer // chdb_connection *, for chdb_close_conn
	conn     unsafe.Pointer // chdb_connection, for queries
	db       string
	settings map[string]string // settings changed from their defaults
}

var (
	engineMu sync.Mutex
	current  *engine
)

// acquireEngine returns the engine on dir, starting it if needed. Stores on
// the same directory share the engine; a second directory while the first
// is in use is an error, as chDB cannot run two in one process.
func acquireEngine(libPath, dir string, sessions int) (*engine, error) {
	engineMu.Lock()
	defer engineMu.Unlock()
	if current != nil {
		if current.dir != dir {
			return nil, fmt.Errorf("chdb: this process already runs chDB on %s; one data directory per process (close the other store first)", current.dir)
		}
		current.mu.Lock()
		current.refs++
		current.mu.Unlock()
		return current, nil
	}
	l, err := load(libPath)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chdb: create data directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	e := &engine{lib: l, dir: dir, lock: lock, slots: make(chan struct{}, sessions), refs: 1}
	// Opt out of chDB's crash handlers before the first connection: the Go
	// runtime owns those signals (guardSignals puts its handlers back).
	guardSignals(func() { l.setSignalHandlers(0) })
	s, err := e.newSession()
	if err != nil {
		unlockDir(lock)
		return nil, err
	}
	e.idle = append(e.idle, s)
	e.pooled = 1
	current = e
	return e, nil
}

// lockDir takes an exclusive lock on dir for this process. The lock file
// names the owner so that the error can say who holds it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "hindsight-chdb.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chdb: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		owner, _ := os.ReadFile(path)
		f.Close()
		return nil, fmt.Errorf("chdb: data directory %s is in use by another process (pid %s): chDB lets one process own a data directory; stop that process, or query it through its server", dir, strings.TrimSpace(string(owner)))
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

func unlockDir(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// release drops one reference; the last one closes every session and
// unlocks the directory, after which another directory may be opened.
func (e *engine) release() {
	engineMu.Lock()
	defer engineMu.Unlock()
	e.mu.Lock()
	e.refs--
	if e.refs > 0 {
		e.mu.Unlock()
		return
	}
	e.closed = true
	idle := e.idle
	e.idle = nil
	e.mu.Unlock()
	// Wait for sessions in use: taking every slot means none is left.
	for range cap(e.slots) {
		e.slots <- struct{}{}
	}
	for _, s := range idle {
		e.closeSession(s)
	}
	unlockDir(e.lock)
	if current == e {
		current = nil
	}
}

func (e *engine) newSession() (*session, error) {
	argv := cStrings("clickhouse", "--path="+e.dir)
	var outer unsafe.Pointer
	guardSignals(func() { outer = e.lib.connect(int32(len(argv.ptrs)), argv.ptrs) })
	argv.keepAlive()
	if outer == nil {
		return nil, fmt.Errorf("chdb: could not start the engine on %s (is it a chDB data directory, and writable?)", e.dir)
	}
	return &session{outer: outer, conn: *(*unsafe.Pointer)(outer), db: "default", settings: map[string]string{}}, nil
}

func (e *engine) closeSession(s *session) {
	guardSignals(func() { e.lib.closeConn(s.outer) })
}

// acquire takes a session, waiting for a free slot. It prefers an idle
// session that already has settings, which needs no SET; else, while the
// pool has room, a new one (which keeps its settings for requests like
// this one); else the one idle longest, so that the sessions used since
// keep theirs.
func (e *engine) acquire(ctx context.Context, settings map[string]string) (*session, error) {
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		<-e.slots
		return nil, errors.New("chdb: the engine is closed")
	}
	i := slices.IndexFunc(e.idle, func(s *session) bool { return maps.Equal(s.settings, settings) })
	if i < 0 && e.pooled >= cap(e.slots) && len(e.idle) > 0 {
		i = 0
	}
	if i >= 0 {
		s := e.idle[i]
		e.idle = slices.Delete(e.idle, i, i+1)
		e.mu.Unlock()
		return s, nil
	}
	e.pooled++
	e.mu.Unlock()
	s, err := e.newSession()
	if err != nil {
		e.mu.Lock()
		e.pooled--
		e.mu.Unlock()
		<-e.slots
		return nil, err
	}
	return s, nil
}

// put returns a session to the pool, or closes it when it cannot be reused.
func (e *engine) put(s *session, reuse bool) {
	if reuse {
		e.mu.Lock()
		e.idle = append(e.idle, s)
		e.mu.Unlock()
	} else {
		e.closeSession(s)
	}
	<-e.slots
}

// engineError is an error reported by chDB: "Code: N. DB::Exception: …".
type engineError struct{ msg string }

func (e *engineError) Error() string { return e.msg }

var codeRE = regexp.MustCompile(`^Code: (\d+)\.`)

// code is the ClickHouse error code, 0 when the message carries none.
func (e *engineError) code() int {
	if m := codeRE.FindStringSubmatch(e.msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// query runs one statement and returns its whole output in format.
func (e *engine) query(s *session, sql, format string, params map[string]string) ([]byte, uint64, error) {
	e.statements.Add(1)
	p := newCParams(params)
	q, f := []byte(sql), []byte(format)
	var res unsafe.Pointer
	guardSignals(func() {
		res = e.lib.queryWithParamsN(s.conn, q, uintptr(len(q)), f, uintptr(len(f)), p.names, p.nameLens, p.values, p.valueLens, p.count())
	})
	p.keepAlive()
	if res == nil {
		return nil, 0, nil
	}
	defer e.lib.destroyQueryResult(res)
	if msg := cString(e.lib.resultError(res)); msg != "" {
		return nil, 0, &engineError{msg: strings.TrimSpace(msg)}
	}
	out := slices.Clone(cBytes(e.lib.resultBuffer(res), e.lib.resultLength(res)))
	return out, e.lib.resultRowsRead(res), nil
}

// insertChunk is how much request body is handed to chDB per append.
const insertChunk = 1 << 20

// insertBuffers hold insertChunk bytes each: an insert reuses one rather
// than clearing a new megabyte for what is mostly a few kilobytes.
var insertBuffers = sync.Pool{New: func() any { b := make([]byte, insertChunk); return &b }}

// insert runs a streaming INSERT: sql names the table and columns, data is
// in format. Streaming, not inline data after the statement: chDB stops
// reading inline data at the first blank line.
func (e *engine) insert(ctx context.Context, s *session, sql, format string, params map[string]string, data io.Reader) (uint64, error) {
	e.statements.Add(1)
	p := newCParams(params)
	q, f := []byte(sql), []byte(format)
	var stream unsafe.Pointer
	guardSignals(func() {
		stream = e.lib.streamInsertWithParamsN(s.conn, q, uintptr(len(q)), f, uintptr(len(f)), p.names, p.nameLens, p.values, p.valueLens, p.count())
	})
	p.keepAlive()
	defer e.lib.destroyInsertStream(stream)
	if msg := cString(e.lib.streamInsertError(stream)); msg != "" {
		return 0, &engineError{msg: strings.TrimSpace(msg)}
	}
	pooled := insertBuffers.Get().(*[]byte)
	defer insertBuffers.Put(pooled)
	buf := *pooled
	for {
		if err := ctx.Err(); err != nil {
			e.lib.streamCancelInsert(stream)
			return 0, err
		}
		n, err := io.ReadFull(data, buf)
		if n > 0 {
			var rc int32
			guardSignals(func() { rc = e.lib.streamAppend(stream, buf[:n], uintptr(n)) })
			if rc != 0 {
				return 0, &engineError{msg: strings.TrimSpace(cString(e.lib.streamInsertError(stream)))}
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			e.lib.streamCancelInsert(stream)
			return 0, fmt.Errorf("chdb: read insert data: %w", err)
		}
	}
	var res unsafe.Pointer
	guardSignals(func() { res = e.lib.streamDone(stream) })
	if res == nil {
		return 0, nil
	}
	defer e.lib.destroyQueryResult(res)
	if msg := cString(e.lib.resultError(res)); msg != "" {
		return 0, &engineError{msg: strings.TrimSpace(msg)}
	}
	return e.lib.resultRowsWritten(res), nil
}

// cStringArray is argv for chdb_connect.
type cStringArray struct {
	ptrs    []*byte
	backing [][]byte
}

func cStrings(ss ...string) *cStringArray {
	a := &cStringArray{}
	for _, s := range ss {
		b := append([]byte(s), 0)
		a.backing = append(a.backing, b)
		a.ptrs = append(a.ptrs, &b[0])
	}
	return a
}

func (a *cStringArray) keepAlive() { runtime.KeepAlive(a) }
