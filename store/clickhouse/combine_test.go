package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// recordingConn is a connection whose batches record the rows they send;
// the first Send waits for release, as a slow insert would.
type recordingConn struct {
	driver.Conn
	mu      sync.Mutex
	sent    [][]string // the rows of each insert sent
	release chan struct{}
	held    atomic.Bool // whether the first Send has come
}

func (c *recordingConn) PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error) {
	return &recordingBatch{conn: c}, nil
}

type recordingBatch struct {
	driver.Batch
	conn *recordingConn
	rows []string
}

var errRefused = errors.New("cannot convert the value")

func (b *recordingBatch) Append(v ...any) error {
	if v[0] == "refuse" {
		return errRefused
	}
	b.rows = append(b.rows, strings.TrimSpace(fmt.Sprintln(v...)))
	return nil
}

func (b *recordingBatch) Abort() error { return nil }

func (b *recordingBatch) Send() error {
	if b.conn.held.CompareAndSwap(false, true) {
		<-b.conn.release
	}
	b.conn.mu.Lock()
	defer b.conn.mu.Unlock()
	b.conn.sent = append(b.conn.sent, b.rows)
	return nil
}

// TestConcurrentInsertsAreCombined holds the first insert into a table on
// its way while seven more arrive: they go as one insert, each caller
// returning when its rows are sent; a caller whose row the driver refuses
// fails alone, and one that gives up while waiting is withdrawn.
func TestConcurrentInsertsAreCombined(t *testing.T) {
	conn := &recordingConn{release: make(chan struct{})}
	s := &Store{conn: conn, cfg: Config{QueryTimeout: time.Minute}}
	joined := make(chan struct{}, 16)
	s.inserts.waits = func() { joined <- struct{}{} }
	rows := func(name string, n int) func(int) []any {
		return func(i int) []any { return []any{name, i} }
	}
	ctx := context.Background()
	errs := make(chan error, 16)
	go func() { errs <- s.insert(ctx, "first", "t", "a, b", 1, rows("first", 1)) }()
	<-joined
	for k := range 5 {
		go func() { errs <- s.insert(ctx, "put", "t", "a, b", 2, rows(fmt.Sprint("c", k), 2)) }()
	}
	refused := make(chan error, 1)
	go func() {
		refused <- s.insert(ctx, "put", "t", "a, b", 2, func(i int) []any { return []any{map[bool]string{true: "refuse", false: "bad"}[i == 1], i} })
	}()
	gone, cancel := context.WithCancel(ctx)
	withdrawn := make(chan error, 1)
	go func() { withdrawn <- s.insert(gone, "put", "t", "a, b", 1, rows("gone", 1)) }()
	for range 7 {
		<-joined
	}
	cancel()
	if err := <-withdrawn; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up got %v, want its context's error", err)
	}
	// Another table is not held up by this one's insert.
	if err := s.insert(ctx, "other", "u", "a", 1, rows("other", 1)); err != nil {
		t.Fatal(err)
	}
	close(conn.release)
	if err := <-refused; !errors.Is(err, errRefused) {
		t.Fatalf("the caller whose row was refused got %v", err)
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(conn.sent) != 3 {
		t.Fatalf("%d inserts were sent, want 3 (the other table's, the first, and the five that waited, together): %q", len(conn.sent), conn.sent)
	}
	combined := conn.sent[2]
	if len(combined) != 10 {
		t.Errorf("the combined insert sent %d rows, want the 10 of the five callers that waited: %q", len(combined), combined)
	}
	for _, r := range combined {
		if r == "bad 0" || r == "gone 0" {
			t.Errorf("the combined insert sent %q, a row of a caller that failed or gave up", r)
		}
	}
	if !slices.Equal(conn.sent[1], []string{"first 0"}) {
		t.Errorf("the first insert sent %q", conn.sent[1])
	}
}
