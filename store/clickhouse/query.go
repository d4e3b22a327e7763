package clickhouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/hindsight-memory/hindsight/memory"
)

// Output formats of QueryReadOnly.
const (
	FormatTable = "table" // aligned columns for a terminal
	FormatTSV   = "tsv"   // tab-separated, with a header line
	FormatJSON  = "json"  // one JSON object per row
)

// QueryOptions bounds an ad-hoc query.
type QueryOptions struct {
	Format  string        // FormatTable (default), FormatTSV or FormatJSON
	MaxRows int           // rows printed; default 1000
	Timeout time.Duration // server-side execution limit; default 30s
	// MaxBytes caps the result the server produces; default 64 MiB.
	MaxBytes int
}

// QueryReadOnly runs one operator-supplied SELECT (or SHOW, DESCRIBE,
// EXPLAIN) over the episodic log and writes the result to w. It is for
// operators (`hindsight sql`), not tenants: it is not scoped to a tenant.
// The server enforces that it only reads (the setting readonly=1, which the
// query cannot lift), and bounds its run time and result size; rows beyond
// MaxRows are cut and a note says so. A query the server refuses returns
// EINVALID with the server's message.
func (s *Store) QueryReadOnly(ctx context.Context, query string, w io.Writer, opt QueryOptions) error {
	const op = "clickhouse: sql"
	if strings.TrimSpace(query) == "" {
		return memory.Invalidf(op, "the query is empty")
	}
	if opt.Format == "" {
		opt.Format = FormatTable
	}
	if opt.Format != FormatTable && opt.Format != FormatTSV && opt.Format != FormatJSON {
		return memory.Invalidf(op, "format %q is not one of table, tsv, json", opt.Format)
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = 1000
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 30 * time.Second
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 64 << 20
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout+5*time.Second)
	defer cancel()
	ctx = ch.Context(ctx, ch.WithSettings(ch.Settings{
		"max_execution_time":   int(math.Ceil(opt.Timeout.Seconds())),
		"max_result_rows":      opt.MaxRows + 1,
		"max_result_bytes":     opt.MaxBytes,
		"result_overflow_mode": "break",
		// Last, and on the server's side of the wire: from here on the
		// query cannot change any setting, this one included.
		"readonly": 1,
	}))
	rows, err := s.conn.Query(ctx, query)
	if err != nil {
		var ex *ch.Exception
		if errors.As(err, &ex) {
			return memory.Invalidf(op, "%s", strings.TrimSpace(ex.Message))
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()

	names := rows.Columns()
	types := rows.ColumnTypes()
	out := newTableWriter(w, opt.Format, names)
	dest := make([]any, len(types))
	for i, t := range types {
		dest[i] = reflect.New(t.ScanType()).Interface()
	}
	n, cut := 0, false
	for rows.Next() {
		if n == opt.MaxRows {
			cut = true
			break
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("%s: scan: %w", op, err)
		}
		vals := make([]any, len(dest))
		for i, d := range dest {
			vals[i] = reflect.ValueOf(d).Elem().Interface()
		}
		if err := out.row(vals); err != nil {
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil && !cut {
		var ex *ch.Exception
		if errors.As(err, &ex) {
			return memory.Invalidf(op, "%s", strings.TrimSpace(ex.Message))
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := out.flush(); err != nil {
		return err
	}
	if opt.Format == FormatTable {
		note := fmt.Sprintf("(%d rows)", n)
		if cut {
			note = fmt.Sprintf("(output cut at %d rows; add a LIMIT or raise the row limit)", n)
		}
		_, err = fmt.Fprintln(w, note)
	}
	return err
}

// tableWriter prints rows as a table, TSV or JSON lines.
type tableWriter struct {
	w      io.Writer
	tw     *tabwriter.Writer
	format string
	names  []string
}

func newTableWriter(w io.Writer, format string, names []string) *tableWriter {
	t := &tableWriter{w: w, format: format, names: names}
	switch format {
	case FormatTable:
		t.tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(t.tw, strings.Join(names, "\t"))
		dashes := make([]string, len(names))
		for i, n := range names {
			dashes[i] = strings.Repeat("-", max(len([]rune(n)), 3))
		}
		fmt.Fprintln(t.tw, strings.Join(dashes, "\t"))
	case FormatTSV:
		fmt.Fprintln(w, strings.Join(names, "\t"))
	}
	return t
}

func (t *tableWriter) row(vals []any) error {
	if t.format == FormatJSON {
		var b strings.Builder
		b.WriteByte('{')
		for i, v := range vals {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(t.names[i])
			val, err := json.Marshal(jsonValue(v))
			if err != nil {
				return fmt.Errorf("clickhouse: sql: column %s: %w", t.names[i], err)
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(val)
		}
		b.WriteString("}\n")
		_, err := io.WriteString(t.w, b.String())
		return err
	}
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = tsvEscaper.Replace(textValue(v))
	}
	dst := t.w
	if t.tw != nil {
		dst = t.tw
	}
	_, err := fmt.Fprintln(dst, strings.Join(cells, "\t"))
	return err
}

func (t *tableWriter) flush() error {
	if t.tw != nil {
		return t.tw.Flush()
	}
	return nil
}

// tsvEscaper keeps one row on one line.
var tsvEscaper = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// textValue renders a scanned value the way ClickHouse prints it.
func textValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.000")
	case string:
		return x
	case []byte:
		return string(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return "NULL"
		}
		return textValue(rv.Elem().Interface())
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		b, err := json.Marshal(jsonValue(v))
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// jsonValue makes times readable and NULLs null in JSON output.
func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return string(x)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		return jsonValue(rv.Elem().Interface())
	}
	return v
}
