//go:build linux && amd64

package chdb

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// transport serves ClickHouse's HTTP interface from the in-process engine,
// as an http.RoundTripper for clickhouse-go (Options.Protocol HTTP). It
// implements what the driver sends:
//
//   - POST with the statement in the body, or in the `query` URL parameter
//     with INSERT data (`INSERT … FORMAT Native`) in the body;
//   - `database`, `default_format` (Native), `query_id`, typed query
//     parameters `param_<name>` ({name:Type} placeholders, bound by the
//     engine, never spliced into the text), and any other URL parameter as
//     a setting for this query only;
//   - request bodies encoded with gzip or deflate.
//
// Errors come back as a 500 with the engine's "Code: N. DB::Exception: …"
// text and the X-ClickHouse-Exception-Code header, which the driver turns
// into a *clickhouse.Exception.
//
// One difference from a server is deliberate: chDB writes the Native format
// of a protocol-revision-0 peer (no block info, no custom-serialization
// flags), while a server adapts to the client_protocol_version the driver
// sends. The driver decodes its hello query (below) with its own revision
// and every later answer with the revision() the hello returned. So the
// transport answers the hello itself, encoded for the driver's revision,
// with revision 0, and the driver then reads exactly what chDB writes.
type transport struct {
	eng *engine
	// database is where a request that names none runs. Without it, such
	// a request would run in whatever database its pooled session last
	// used: "default" on a fresh session, the store's on a reused one.
	database string
	// described caches the answers to DESCRIBE TABLE, which the driver
	// asks before every batch insert, until a statement that may change a
	// table runs.
	described describeCache
	// readOnly serves readers only (Store.ReadOnlyHandler).
	readOnly bool
}

// readOnlySettings are the settings a reader may send: bounds of its own
// query. readonly itself is always 1.
var readOnlySettings = map[string]bool{
	"max_execution_time": true, "max_result_rows": true, "max_result_bytes": true, "result_overflow_mode": true,
	"max_threads": true, "max_block_size": true, "readonly": true,
}

// confine makes r a reader's request, or says why it cannot be one.
func confine(r *request) error {
	if r.insert {
		return errors.New("this endpoint only reads: INSERT is refused")
	}
	for k := range r.settings {
		if !readOnlySettings[k] {
			return fmt.Errorf("setting %s is not accepted by this endpoint, which only reads", k)
		}
	}
	if !r.hello {
		if err := Confined(r.sql); err != nil {
			return err
		}
	}
	r.settings["readonly"] = "1"
	return nil
}

// describeCache holds DESCRIBE TABLE answers by database, statement and
// format. gen counts the statements that cleared it, so that an answer
// read while one ran is not kept.
type describeCache struct {
	mu  sync.Mutex
	gen uint64
	out map[string][]byte
}

func (c *describeCache) get(key string) ([]byte, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, ok := c.out[key]
	return out, c.gen, ok
}

func (c *describeCache) put(key string, gen uint64, out []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.out == nil {
		c.out = map[string][]byte{}
	}
	c.out[key] = out
}

func (c *describeCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.out)
}

// describeKey is the cache key of a DESCRIBE TABLE request, if r is one.
func (t *transport) describeKey(r *request) (string, bool) {
	if r.insert || r.hello || !hasPrefixFold(strings.TrimSpace(r.sql), "DESCRIBE TABLE ") || len(r.params) > 0 {
		return "", false
	}
	return cmpOr(r.database, t.database) + "\x00" + r.format + "\x00" + strings.TrimSpace(r.sql), true
}

// readsOnly reports whether a request cannot change a table's columns:
// any other clears the cache of DESCRIBE answers.
func readsOnly(r *request) bool {
	return r.insert || r.hello || ReadOnly(r.sql)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// codeUnknownDatabase is ClickHouse's UNKNOWN_DATABASE, codeReadonly its
// READONLY.
const (
	codeUnknownDatabase = 81
	codeReadonly        = 164
)

// helloQuery is clickhouse-go's first query on every HTTP connection.
const helloQuery = "SELECT displayName(), version(), revision(), timezone()"

// URL parameters that are part of the protocol, not settings.
var protocolParams = map[string]bool{
	"query": true, "database": true, "default_format": true, "client_protocol_version": true,
	"query_id": true, "quota_key": true, "user": true, "password": true, "session_id": true,
	"session_timeout": true, "session_check": true, "wait_end_of_query": true, "buffer_size": true,
	"send_progress_in_http_headers": true,
}

var (
	settingNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	databaseRE    = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	// insertFormatRE finds the trailing FORMAT clause of an INSERT whose
	// data is in the request body.
	insertFormatRE = regexp.MustCompile(`(?is)^\s*INSERT\s.*?\sFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$`)
	formatClauseRE = regexp.MustCompile(`(?is)\sFORMAT\s+[A-Za-z0-9_]+\s*;?\s*$`)
)

// request is a parsed HTTP request.
type request struct {
	sql      string
	format   string
	database string
	params   map[string]string
	settings map[string]string
	// insert is set for INSERT … FORMAT x with the data in body.
	insert bool
	body   io.Reader
	// hello is the driver's hello query, answered by helloBlock.
	hello bool
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	r, err := parseRequest(req)
	if err != nil {
		return errorResponse(req, http.StatusBadRequest, 0, err.Error()), nil
	}
	if t.readOnly {
		if err := confine(r); err != nil {
			return errorResponse(req, http.StatusForbidden, codeReadonly, "forbidden: "+err.Error()), nil
		}
	}
	ctx := req.Context()
	// chDB cannot be interrupted mid-statement; let the engine stop the
	// query itself when the caller's deadline passes.
	secs := 0
	if v, set := r.settings["max_execution_time"]; set {
		secs, _ = strconv.Atoi(v) // not a count of seconds: left as given
	} else if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left < time.Second {
			return nil, context.DeadlineExceeded
		}
		secs = int(math.Ceil(left.Seconds()))
	}
	if secs > 0 {
		r.settings["max_execution_time"] = strconv.Itoa(executionBound(secs))
	}
	key, describe := t.describeKey(r)
	var gen uint64
	if describe {
		var out []byte
		var hit bool
		if out, gen, hit = t.described.get(key); hit {
			resp := response(req, http.StatusOK, out)
			resp.Header.Set("X-ClickHouse-Format", r.format)
			resp.Header.Set("X-ClickHouse-Summary", `{"written_rows":"0"}`)
			return resp, nil
		}
	} else if !readsOnly(r) {
		defer t.described.clear() // after the statement, whatever its outcome
	}
	readonly := r.settings["readonly"] != "" && r.settings["readonly"] != "0"
	var s *session
	if readonly {
		// readonly cannot be lifted once set, so a read-only query gets a
		// session of its own, thrown away afterwards.
		s, err = t.eng.freshSession(ctx)
	} else {
		s, err = t.eng.acquire(ctx, r.settings)
	}
	if err != nil {
		return nil, err
	}
	out, rows, err := t.serve(ctx, s, r)
	t.eng.put(s, !readonly)
	if err != nil {
		if ee, ok := err.(*engineError); ok {
			return errorResponse(req, http.StatusInternalServerError, ee.code(), ee.msg), nil
		}
		return nil, err
	}
	if describe {
		t.described.put(key, gen, out)
	}
	resp := response(req, http.StatusOK, out)
	resp.Header.Set("X-ClickHouse-Format", r.format)
	resp.Header.Set("X-ClickHouse-Summary", fmt.Sprintf(`{"written_rows":"%d"}`, rows))
	return resp, nil
}

// executionBound is the max_execution_time the engine enforces for one of
// secs: secs rounded up to a power of two, so less than twice secs. The
// driver derives the setting from each caller's deadline, which differ by
// the second, and a session whose setting changes runs a SET first (a
// statement of its own); a few rounded values let the pooled sessions keep
// theirs (engine.acquire picks a session that has it).
func executionBound(secs int) int {
	bound := 1
	for bound < secs {
		bound *= 2
	}
	return bound
}

func (t *transport) serve(ctx context.Context, s *session, r *request) ([]byte, uint64, error) {
	database := r.database
	if database == "" {
		database = t.database
	}
	err := t.eng.prepare(s, database, r.settings)
	var ee *engineError
	if err != nil && r.database == "" && errors.As(err, &ee) && ee.code() == codeUnknownDatabase {
		// Before the store's database exists (the adapter's hello and
		// CREATE DATABASE), a request that names none runs in default.
		err = t.eng.prepare(s, "default", r.settings)
	}
	if err != nil {
		return nil, 0, err
	}
	if r.insert {
		n, err := t.eng.insert(ctx, s, r.sql, r.format, r.params, r.body)
		return nil, n, err
	}
	if r.hello {
		out, _, err := t.eng.query(s, "SELECT displayName(), version(), timezone()", "TabSeparatedRaw", nil)
		if err != nil {
			return nil, 0, err
		}
		f := strings.Split(strings.TrimRight(string(out), "\n"), "\t")
		if len(f) != 3 {
			return nil, 0, fmt.Errorf("chdb: unexpected hello answer %q", out)
		}
		return helloBlock(f[0], f[1], f[2]), 0, nil
	}
	return t.eng.query(s, r.sql, r.format, r.params)
}

func parseRequest(req *http.Request) (*request, error) {
	if req.Method != http.MethodPost && req.Method != http.MethodGet {
		return nil, fmt.Errorf("method %s is not supported; use POST", req.Method)
	}
	q := req.URL.Query()
	r := &request{
		format:   cmpOr(q.Get("default_format"), "TabSeparated"),
		database: q.Get("database"),
		params:   map[string]string{},
		settings: map[string]string{},
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch {
		case strings.HasPrefix(k, "param_"):
			r.params[strings.TrimPrefix(k, "param_")] = v
		case k == "compress" && v != "0", k == "decompress" && v != "0":
			return nil, fmt.Errorf("%s=1 (ClickHouse block compression) is not supported by the in-process engine; disable compression", k)
		case k == "compress", k == "decompress", protocolParams[k]:
		case !settingNameRE.MatchString(k):
			return nil, fmt.Errorf("%q is not a valid setting name", k)
		default:
			r.settings[k] = v
		}
	}
	if r.database != "" && !databaseRE.MatchString(r.database) {
		return nil, fmt.Errorf("database %q is not a plain identifier", r.database)
	}
	var body io.Reader = http.NoBody
	if req.Body != nil {
		body = req.Body
	}
	switch enc := req.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		body = zr
	case "deflate":
		zr, err := zlib.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("deflate body: %w", err)
		}
		body = zr
	default:
		return nil, fmt.Errorf("Content-Encoding %q is not supported by the in-process engine; use gzip, deflate or none", enc)
	}
	query := q.Get("query")
	if query != "" {
		if m := insertFormatRE.FindStringSubmatchIndex(query); m != nil {
			loc := formatClauseRE.FindStringIndex(query)
			r.sql, r.format, r.insert, r.body = query[:loc[0]], query[m[2]:m[3]], true, body
			return r, nil
		}
	}
	// Otherwise the statement is the query parameter followed by the body,
	// as a server reads it.
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	r.sql = query
	if len(data) > 0 {
		if r.sql != "" {
			r.sql += "\n"
		}
		r.sql += string(data)
	}
	if strings.TrimSpace(r.sql) == "" {
		return nil, fmt.Errorf("empty query")
	}
	r.hello = r.sql == helloQuery
	return r, nil
}

// prepare points the session at database and makes its settings exactly
// settings: changed ones are set, ones no longer asked for go back to their
// defaults. readonly is set last: after it nothing can be changed.
func (e *engine) prepare(s *session, database string, settings map[string]string) error {
	if database != "" && database != s.db {
		if _, _, err := e.query(s, "USE `"+database+"`", "TabSeparated", nil); err != nil {
			return err
		}
		s.db = database
	}
	var assign []string
	for k, v := range settings {
		if k != "readonly" && s.settings[k] != v {
			assign = append(assign, k+" = "+quote(v))
		}
	}
	for k := range s.settings {
		if _, keep := settings[k]; !keep {
			assign = append(assign, k+" = DEFAULT")
		}
	}
	if v, ok := settings["readonly"]; ok && v != "0" {
		slices.Sort(assign)
		assign = append(assign, "readonly = "+quote(v))
	}
	if len(assign) == 0 {
		return nil
	}
	// SET checks every assignment before applying any, so on failure the
	// session keeps the settings it had.
	e.sets.Add(1)
	if _, _, err := e.query(s, "SET "+strings.Join(assign, ", "), "TabSeparated", nil); err != nil {
		return err
	}
	s.settings = map[string]string{}
	for k, v := range settings {
		s.settings[k] = v
	}
	return nil
}

// freshSession opens a session outside the pool (its slot is taken).
func (e *engine) freshSession(ctx context.Context) (*session, error) {
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s, err := e.newSession()
	if err != nil {
		<-e.slots
	}
	return s, err
}

var quoter = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// quote renders a setting value as a string literal; the engine converts it
// to the setting's type.
func quote(v string) string { return "'" + quoter.Replace(v) + "'" }

func response(req *http.Request, status int, body []byte) *http.Response {
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/octet-stream"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

func errorResponse(req *http.Request, status, code int, msg string) *http.Response {
	if !strings.HasPrefix(msg, "Code: ") {
		name := "BAD_ARGUMENTS"
		switch code {
		case 0:
			code = 36
		case codeReadonly:
			name = "READONLY"
		}
		msg = fmt.Sprintf("Code: %d. DB::Exception: %s. (%s)", code, msg, name)
	}
	resp := response(req, status, []byte(msg+"\n"))
	resp.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	if code > 0 {
		resp.Header.Set("X-ClickHouse-Exception-Code", strconv.Itoa(code))
	}
	return resp
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// helloBlock encodes the answer to the driver's hello query as one Native
// block in the layout of a revision-aware server: block info first, and a
// no-custom-serialization flag after each column type. Its revision column
// is 0, the revision of what chDB writes.
func helloBlock(displayName, version, timezone string) []byte {
	var b []byte
	uvarint := func(v uint64) { b = binary.AppendUvarint(b, v) }
	str := func(s string) { uvarint(uint64(len(s))); b = append(b, s...) }
	// Block info: field 1 is_overflows=false, field 2 bucket_num=-1, end.
	uvarint(1)
	b = append(b, 0)
	uvarint(2)
	b = binary.LittleEndian.AppendUint32(b, math.MaxUint32)
	uvarint(0)
	uvarint(4) // columns
	uvarint(1) // rows
	for _, c := range []struct{ name, typ, value string }{
		{"displayName()", "String", displayName},
		{"version()", "String", version},
		{"revision()", "UInt32", ""},
		{"timezone()", "String", timezone},
	} {
		str(c.name)
		str(c.typ)
		b = append(b, 0) // no custom serialization
		if c.typ == "UInt32" {
			b = binary.LittleEndian.AppendUint32(b, 0)
		} else {
			str(c.value)
		}
	}
	return b
}
