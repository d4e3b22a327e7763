package recall

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// usageBatch bounds the uses written by one RecordUsage call.
const usageBatch = 256

// usageDelay is the longest a recall's uses wait to be written with
// others' (Engine.Flush writes them at once).
const usageDelay = time.Second

// usageRecorder writes recall counts in the background, off the request
// path: recall enqueues and returns; one goroutine drains the queue in
// batches, at most usageDelay after a use was queued. When the queue is full the use is dropped and counted, since a
// recall count is worth less than a recall's latency.
type usageRecorder struct {
	store   memory.MemoryStore
	queue   chan memory.Usage
	flushes chan chan struct{}
	log     *slog.Logger
	metrics Metrics

	// mu orders record against close: once closed, uses are dropped
	// rather than sent on the closed queue.
	mu        sync.RWMutex
	closed    bool
	closeOnce sync.Once
	done      chan struct{}
}

func newUsageRecorder(store memory.MemoryStore, size int, log *slog.Logger, m Metrics) *usageRecorder {
	r := &usageRecorder{
		store: store, queue: make(chan memory.Usage, size), flushes: make(chan chan struct{}),
		log: log, metrics: m, done: make(chan struct{}),
	}
	go r.run()
	return r
}

// record enqueues uses without blocking.
func (r *usageRecorder) record(us []memory.Usage) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		r.metrics.UsageDropped(len(us))
		return
	}
	for i, u := range us {
		select {
		case r.queue <- u:
		default:
			r.metrics.UsageDropped(len(us) - i)
			return
		}
	}
}

// flush returns once every use enqueued before the call has been written
// (or dropped on a write error), or when ctx ends.
func (r *usageRecorder) flush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case r.flushes <- ack:
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close writes what is queued and stops the recorder.
func (r *usageRecorder) close() {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		close(r.queue)
		r.mu.Unlock()
	})
	<-r.done
}

func (r *usageRecorder) run() {
	defer close(r.done)
	batch := make([]memory.Usage, 0, usageBatch)
	write := func() {
		if len(batch) == 0 {
			return
		}
		// Writes outlive the recalls that caused them, so they use their
		// own context.
		if err := r.store.RecordUsage(context.Background(), batch); err != nil {
			r.log.Warn("recall: record usage", "uses", len(batch), "err", err)
			r.metrics.UsageDropped(len(batch))
		}
		batch = batch[:0]
	}
	// drain takes what is queued now, writing full batches as it goes.
	drain := func() bool {
		for {
			select {
			case u, ok := <-r.queue:
				if !ok {
					return false
				}
				batch = append(batch, u)
				if len(batch) == usageBatch {
					write()
				}
			default:
				return true
			}
		}
	}
	// A write waits up to usageDelay for more uses to share it: under
	// load one insert a second, not one per recall, each of which the
	// store pays for again in its background merges.
	var due <-chan time.Time
	for {
		select {
		case u, ok := <-r.queue:
			if !ok {
				write()
				return
			}
			batch = append(batch, u)
			switch {
			case len(batch) == usageBatch:
				write()
				due = nil
			case due == nil:
				due = time.After(usageDelay)
			}
		case <-due:
			due = nil
			write()
		case ack := <-r.flushes:
			open := drain()
			write()
			due = nil
			close(ack)
			if !open {
				return
			}
		}
	}
}
