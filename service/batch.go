package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/workflows"
)

const (
	// ledgerUpdatesInFlight is how many updates one process keeps open
	// against a tenant's ledger at once. Temporal refuses more than 10 per
	// workflow (ResourceExhausted); this leaves room for a second replica
	// and for the CLI.
	ledgerUpdatesInFlight = 4
	// ledgerBatchMax, ledgerBatchBytes and ledgerBatchDecisions bound one
	// update: requests, their JSON size, and the decisions their replies
	// can hold (a candidate or a memory named makes one, up to about 26 KB
	// with the longest texts), well under Temporal's 2 MB payload limit
	// both ways.
	ledgerBatchMax       = 32
	ledgerBatchBytes     = 512 << 10
	ledgerBatchDecisions = 64
)

// batchSender sends one batch of requests for a tenant to its ledger and
// returns a reply for each, in order.
type batchSender func(ctx context.Context, tenant string, reqs []ledger.Request) ([]ledger.Reply, error)

// ledgerQueue funnels a process's requests to each tenant's ledger: at most
// ledgerUpdatesInFlight updates per tenant at a time, and requests that
// arrive while those run wait in a queue and go together in the next
// update. A burst of clients thus queues here, in order, rather than
// being refused by Temporal and retried against its limit.
type ledgerQueue struct {
	send    batchSender
	timeout time.Duration

	mu      sync.Mutex
	tenants map[string]*tenantQueue
	// drains counts running drain goroutines, and queued (tests) is
	// called once a request is queued.
	drains sync.WaitGroup
	queued func()
}

type tenantQueue struct {
	pending  []*ledgerCall
	inFlight int
}

type ledgerCall struct {
	req  ledger.Request
	size int
	// decisions is how many decisions the reply can hold.
	decisions int
	done      chan struct{}
	reply     ledger.Reply
	err       error
}

func newLedgerQueue(send batchSender, timeout time.Duration) *ledgerQueue {
	return &ledgerQueue{send: send, timeout: timeout, tenants: map[string]*tenantQueue{}}
}

// call queues req and waits for its reply, or for ctx. A caller that gives
// up leaves its request queued: requests are idempotent by ID, and the
// reply is kept by the ledger for a retry.
func (q *ledgerQueue) call(ctx context.Context, req ledger.Request) (ledger.Reply, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return ledger.Reply{}, err
	}
	c := &ledgerCall{req: req, size: len(raw), decisions: max(1, len(req.Candidates)+len(req.MemoryIDs)), done: make(chan struct{})}
	q.mu.Lock()
	tq := q.tenants[req.Tenant]
	if tq == nil {
		tq = &tenantQueue{}
		q.tenants[req.Tenant] = tq
	}
	tq.pending = append(tq.pending, c)
	if tq.inFlight < ledgerUpdatesInFlight {
		tq.inFlight++
		q.drains.Add(1)
		go q.drain(req.Tenant, tq)
	}
	q.mu.Unlock()
	if q.queued != nil {
		q.queued()
	}
	select {
	case <-c.done:
		return c.reply, c.err
	case <-ctx.Done():
		return ledger.Reply{}, &memory.Error{Code: memory.EINTERNAL, Op: string(req.Op),
			Message: "still queued for the tenant's ledger when the wait ended; it is applied in the background", Err: ctx.Err()}
	}
}

// drain sends the tenant's queued requests, a batch at a time, until none
// are left.
func (q *ledgerQueue) drain(tenant string, tq *tenantQueue) {
	defer q.drains.Done()
	for {
		q.mu.Lock()
		batch := takeBatch(tq)
		if len(batch) == 0 {
			tq.inFlight--
			if tq.inFlight == 0 && len(tq.pending) == 0 {
				delete(q.tenants, tenant)
			}
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()

		reqs := make([]ledger.Request, len(batch))
		for i, c := range batch {
			reqs[i] = c.req
		}
		ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
		replies, err := q.send(ctx, tenant, reqs)
		cancel()
		for i, c := range batch {
			switch {
			case err != nil:
				c.err = err
			case i < len(replies):
				c.reply = replies[i]
				if c.reply.Error != "" {
					c.err = &memory.Error{Code: c.reply.Code, Op: string(c.req.Op), Message: c.reply.Error}
				}
			default:
				c.err = &memory.Error{Code: memory.EINTERNAL, Op: string(c.req.Op), Message: "the ledger answered a batch without a reply for this request"}
			}
			close(c.done)
		}
	}
}

// takeBatch removes from the queue's head what one update may carry.
func takeBatch(tq *tenantQueue) []*ledgerCall {
	n, size, decisions := 0, 0, 0
	for n < len(tq.pending) && n < ledgerBatchMax {
		c := tq.pending[n]
		if n > 0 && (size+c.size > ledgerBatchBytes || decisions+c.decisions > ledgerBatchDecisions) {
			break
		}
		size, decisions = size+c.size, decisions+c.decisions
		n++
	}
	batch := tq.pending[:n:n]
	tq.pending = tq.pending[n:]
	return batch
}

// sendBatch is the batchSender of a Temporal client: one update carrying
// every request of the batch (see updateLedger).
func sendBatch(tc client.Client, taskQueue string) batchSender {
	return func(ctx context.Context, tenant string, reqs []ledger.Request) ([]ledger.Reply, error) {
		h := sha256.New()
		for _, r := range reqs {
			h.Write([]byte(r.ID))
			h.Write([]byte{0})
		}
		// One ID per send: Temporal answers a repeated update ID with its
		// first outcome without asking the ledger, which would hide that a
		// request was a repeat; the ledger deduplicates by request ID, and
		// the SDK's own retries of this call keep this ID.
		id := "batch/" + hex.EncodeToString(h.Sum(nil)[:12]) + "/" + newID()
		var replies []ledger.Reply
		if err := updateLedger(ctx, tc, taskQueue, tenant, id, ledger.UpdateApplyBatch, reqs, &replies); err != nil {
			return nil, workflowError(string(reqs[0].Op), err)
		}
		return replies, nil
	}
}

// updateLedger sends the update name(arg) with ID id to the tenant's
// ledger, waits for its result in out, and starts the ledger if none is
// running. A running ledger gets a plain update: an update with start
// asked more of the server each time, and a memory_store took 8-20 ms
// longer with it (six pairs of 300 calls). A ledger found not running
// (never started, or ended) gets the update with start, which starts it
// or, if another caller just did, uses that run.
func updateLedger(ctx context.Context, tc client.Client, taskQueue, tenant, id, name string, arg, out any) error {
	opts := client.UpdateWorkflowOptions{
		WorkflowID:   ledger.WorkflowID(tenant),
		UpdateID:     id,
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	u, err := tc.UpdateWorkflow(ctx, opts)
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		opts.WorkflowID = ""
		start := tc.NewWithStartWorkflowOperation(activities.LedgerStartOptions(tenant, taskQueue),
			workflows.MemoryLedger, ledger.State{Tenant: tenant})
		u, err = tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: start, UpdateOptions: opts})
	}
	if err != nil {
		return err
	}
	return u.Get(ctx, out)
}
