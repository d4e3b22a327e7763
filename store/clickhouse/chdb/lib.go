//go:build linux && amd64

package chdb

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// lib is the C API of libchdb.so, bound with purego (no cgo). Only the
// functions the engine uses are bound. Pointers the library hands out are
// kept as unsafe.Pointer and never dereferenced by Go except through
// cString and cBytes.
type lib struct {
	path string

	version                 func() unsafe.Pointer
	setSignalHandlers       func(enabled int32)
	connect                 func(argc int32, argv []*byte) unsafe.Pointer
	closeConn               func(conn unsafe.Pointer)
	queryWithParamsN        func(conn unsafe.Pointer, query []byte, queryLen uintptr, format []byte, formatLen uintptr, names []*byte, nameLens []uintptr, values []*byte, valueLens []uintptr, count uintptr) unsafe.Pointer
	destroyQueryResult      func(result unsafe.Pointer)
	resultBuffer            func(result unsafe.Pointer) unsafe.Pointer
	resultLength            func(result unsafe.Pointer) uintptr
	resultError             func(result unsafe.Pointer) unsafe.Pointer
	resultRowsRead          func(result unsafe.Pointer) uint64
	resultBytesRead         func(result unsafe.Pointer) uint64
	resultRowsWritten       func(result unsafe.Pointer) uint64
	resultBytesWritten      func(result unsafe.Pointer) uint64
	resultElapsed           func(result unsafe.Pointer) float64
	streamInsertWithParamsN func(conn unsafe.Pointer, query []byte, queryLen uintptr, format []byte, formatLen uintptr, names []*byte, nameLens []uintptr, values []*byte, valueLens []uintptr, count uintptr) unsafe.Pointer
	streamAppend            func(stream unsafe.Pointer, data []byte, n uintptr) int32
	streamDone              func(stream unsafe.Pointer) unsafe.Pointer
	streamCancelInsert      func(stream unsafe.Pointer)
	streamInsertError       func(stream unsafe.Pointer) unsafe.Pointer
	destroyInsertStream     func(stream unsafe.Pointer)
}

var (
	loadMu  sync.Mutex
	loaded  *lib
	loadErr error
)

// ErrLibraryMissing is wrapped by the error Open returns when libchdb.so
// cannot be found; the message says how to fetch it.
var ErrLibraryMissing = errors.New("chdb: libchdb.so not found")

// load opens libchdb.so at path once per process. The library cannot be
// unloaded, so the first successful path wins; asking for another path
// later is an error rather than a silent mix of two engines.
func load(path string) (*lib, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded != nil {
		if loaded.path != path {
			return nil, fmt.Errorf("chdb: %s is already loaded in this process; cannot also load %s", loaded.path, path)
		}
		return loaded, nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w at %s: %s", ErrLibraryMissing, path, FetchHint)
	}
	// A failed dlopen (wrong architecture, truncated file) will fail the
	// same way every time; remember it so callers get one clear error.
	if loadErr != nil {
		return nil, loadErr
	}
	var l *lib
	guardSignals(func() { l, loadErr = dlopen(path) })
	if loadErr != nil {
		return nil, loadErr
	}
	loaded = l
	return l, nil
}

func dlopen(path string) (l *lib, err error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("chdb: load %s: %w (re-fetch it: %s)", path, err, FetchHint)
	}
	// RegisterLibFunc panics on a missing symbol: an older libchdb.so than
	// the pinned one. Turn that into an error that names the fix.
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, fmt.Errorf("chdb: %s lacks a symbol this build needs (%v); use chDB %s: %s", path, r, Version, FetchHint)
		}
	}()
	l = &lib{path: path}
	for name, fn := range map[string]any{
		"chdb_version":                     &l.version,
		"chdb_set_signal_handlers_enabled": &l.setSignalHandlers,
		"chdb_connect":                     &l.connect,
		"chdb_close_conn":                  &l.closeConn,
		"chdb_query_with_params_n":         &l.queryWithParamsN,
		"chdb_destroy_query_result":        &l.destroyQueryResult,
		"chdb_result_buffer":               &l.resultBuffer,
		"chdb_result_length":               &l.resultLength,
		"chdb_result_error":                &l.resultError,
		"chdb_result_rows_read":            &l.resultRowsRead,
		"chdb_result_bytes_read":           &l.resultBytesRead,
		"chdb_result_rows_written":         &l.resultRowsWritten,
		"chdb_result_bytes_written":        &l.resultBytesWritten,
		"chdb_result_elapsed":              &l.resultElapsed,
		"chdb_stream_insert_with_params_n": &l.streamInsertWithParamsN,
		"chdb_stream_append":               &l.streamAppend,
		"chdb_stream_done":                 &l.streamDone,
		"chdb_stream_cancel_insert":        &l.streamCancelInsert,
		"chdb_stream_insert_error":         &l.streamInsertError,
		"chdb_destroy_insert_stream":       &l.destroyInsertStream,
	} {
		purego.RegisterLibFunc(fn, h, name)
	}
	return l, nil
}

// libVersion is the chDB release of the loaded library.
func (l *lib) libVersion() string { return cString(l.version()) }

// cString copies a NUL-terminated C string; nil is "".
func cString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

// cBytes views n bytes of C memory; the caller copies them before the
// owning result is destroyed.
func cBytes(p unsafe.Pointer, n uintptr) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// cParams lays out name/value pairs the way the *_with_params_n functions
// take them. The returned slices point into Go memory that must stay alive
// for the duration of the call (see keepAlive).
type cParams struct {
	names     []*byte
	nameLens  []uintptr
	values    []*byte
	valueLens []uintptr
	backing   [][]byte
}

func newCParams(params map[string]string) *cParams {
	p := &cParams{}
	for k, v := range params {
		kb, vb := append([]byte(k), 0), append([]byte(v), 0)
		p.backing = append(p.backing, kb, vb)
		p.names = append(p.names, &kb[0])
		p.nameLens = append(p.nameLens, uintptr(len(k)))
		p.values = append(p.values, &vb[0])
		p.valueLens = append(p.valueLens, uintptr(len(v)))
	}
	return p
}

func (p *cParams) count() uintptr { return uintptr(len(p.names)) }

func (p *cParams) keepAlive() { runtime.KeepAlive(p) }
