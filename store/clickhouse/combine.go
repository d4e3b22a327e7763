package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Concurrent inserts into one table are combined (group commit). Every
// insert makes a part on disk, one directory of files per table, and the
// cost of a small insert is mostly creating them; the parts are merged
// again later. So while one insert into a table is on its way, the inserts
// into that table that arrive meanwhile wait, and go together as the next
// one, a single part. An insert that finds none on its way goes at once:
// one writer alone waits for nothing.
//
// Each caller still returns when its own rows are written, with the
// error of the insert that carried them, so an acknowledged write is as
// durable as before. A caller whose context ends while it waits returns
// its context's error: its rows are withdrawn, or, if an insert has taken
// them, may still be written (as with an insert the server finished after
// its client gave up). A row the driver
// refuses fails its own caller only: the others go without it.

// maxCombinedRows bounds the rows of one combined insert.
const maxCombinedRows = 100_000

// insertQueue combines the inserts into one table, with one column list.
type insertQueue struct {
	// turn is held by the caller whose insert is on its way.
	turn    chan struct{}
	mu      sync.Mutex
	waiting []*insertCall
}

// insertCall is one caller's rows, and where its outcome goes.
type insertCall struct {
	op   string
	n    int
	row  func(i int) []any
	done chan error // buffered: the insert that carried the rows sends once
}

// insertQueues are the store's queues, by table and columns.
type insertQueues struct {
	mu sync.Mutex
	by map[string]*insertQueue
	// waits, when set, is told that a call has joined a queue (tests).
	waits func()
}

func (qs *insertQueues) get(table, columns string) *insertQueue {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	key := table + "\x00" + columns
	q := qs.by[key]
	if q == nil {
		if qs.by == nil {
			qs.by = map[string]*insertQueue{}
		}
		q = &insertQueue{turn: make(chan struct{}, 1)}
		qs.by[key] = q
	}
	return q
}

// insert writes the n rows row gives into table, combined with the inserts
// into it that wait meanwhile.
func (s *Store) insert(ctx context.Context, op, table, columns string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	q := s.inserts.get(table, columns)
	call := &insertCall{op: op, n: n, row: row, done: make(chan error, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, call)
	q.mu.Unlock()
	if s.inserts.waits != nil {
		s.inserts.waits()
	}
	for {
		select {
		case err := <-call.done: // written by the turn before
			return err
		default:
		}
		select {
		case err := <-call.done:
			return err
		case <-ctx.Done():
			q.withdraw(call)
			return fmt.Errorf("clickhouse: %s: %w", op, ctx.Err())
		case q.turn <- struct{}{}:
		}
		// This caller's turn: write what waits, its own rows among them
		// unless the turn before carried them.
		q.mu.Lock()
		calls, rows := q.waiting, 0
		for i, c := range q.waiting {
			if rows += c.n; rows > maxCombinedRows && i > 0 {
				calls = q.waiting[:i]
				break
			}
		}
		q.waiting = q.waiting[len(calls):]
		q.mu.Unlock()
		if len(calls) > 0 {
			// The rows of callers who are waiting go too: no one caller's
			// cancellation may fail the others.
			s.insertNow(context.WithoutCancel(ctx), table, columns, calls)
		}
		<-q.turn
	}
}

// withdraw takes a call whose caller gave up out of the queue, unless an
// insert has taken it already.
func (q *insertQueue) withdraw(call *insertCall) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.Index(q.waiting, call); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
	}
}

// insertNow writes the calls' rows in one insert and tells each caller
// its outcome.
func (s *Store) insertNow(ctx context.Context, table, columns string, calls []*insertCall) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	for len(calls) > 0 {
		batch, err := s.conn.PrepareBatch(insertCtx(ctx), "INSERT INTO "+table+" ("+columns+")")
		if err != nil {
			for _, c := range calls {
				c.done <- fmt.Errorf("clickhouse: %s: prepare: %w", c.op, err)
			}
			return
		}
		refused := -1
		for k, c := range calls {
			for i := range c.n {
				if err := batch.Append(c.row(i)...); err != nil {
					c.done <- fmt.Errorf("clickhouse: %s: row %d: %w", c.op, i, err)
					refused = k
					break
				}
			}
			if refused >= 0 {
				break
			}
		}
		if refused >= 0 {
			// The batch holds part of the refused caller's rows: start
			// again without them.
			batch.Abort()
			calls = append(calls[:refused:refused], calls[refused+1:]...)
			continue
		}
		err = batch.Send()
		for _, c := range calls {
			if err != nil {
				c.done <- fmt.Errorf("clickhouse: %s: send %d rows: %w", c.op, c.n, err)
			} else {
				c.done <- nil
			}
		}
		return
	}
}
