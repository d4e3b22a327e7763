package ledger

import (
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// The ledger's wire contract: the names under which the ledger workflow,
// its signals and its update are registered, shared by the workflow
// (package workflows), the activity that enqueues requests, and clients.
const (
	WorkflowType  = "MemoryLedger"
	SignalRequest = "ledger-request"
	SignalReply   = "ledger-reply"
	UpdateApply   = "apply"
	// UpdateApplyBatch takes several requests in one update, so that
	// a burst of clients stays under Temporal's limit of concurrent
	// updates per workflow.
	UpdateApplyBatch = "apply-batch"
)

// WorkflowID is the ID of a tenant's ledger: one per tenant, so that
// every change to the tenant's semantic memory is applied in one order.
func WorkflowID(tenant string) string { return "ledger/" + tenant }

// TaskQueue is the task queue the ledgers of a deployment run on, beside
// its task queue base: their own, so that a tenant's one writer never waits
// behind the sessions and sweeps queued for the others (workers take tasks
// from a queue in order, and a burst of sessions queues many).
func TaskQueue(base string) string {
	if strings.HasSuffix(base, ledgerQueueSuffix) {
		return base
	}
	return base + ledgerQueueSuffix
}

const ledgerQueueSuffix = "-ledger"

// State is the ledger's input: empty on first start, and the carried
// over queue and recent replies when it continues as new.
type State struct {
	Tenant  string    `json:"tenant"`
	Pending []Request `json:"pending,omitempty"`
	// Carried are the latest replies, kept to answer retried requests.
	Carried []CarriedReply `json:"carried,omitempty"`
	// Recent is how ledgers before CarriedReply carried their replies;
	// it is read, never written.
	Recent []Reply `json:"recent,omitempty"`
	// Unsettled are the decision IDs of merge batches that failed for
	// good, to be settled before the next request: some may be logged
	// with their versions not stored yet. At most MaxUnsettled.
	Unsettled []string `json:"unsettled,omitempty"`
}

// MaxUnsettled bounds State.Unsettled: 32 failed batches of
// MaxCandidatesPerRequest candidates, about 70 KB of IDs.
const MaxUnsettled = 32 * MaxCandidatesPerRequest

// CarriedReply is a reply a ledger remembers across continue-as-new: its
// decisions by ID only (the service reads them back from the decision
// log), a forget's counts without its lists, and its error cut short.
// Two hundred of them, of the largest requests, stay a few hundred
// kilobytes (TestLedgerStateIsBounded).
type CarriedReply struct {
	RequestID   string         `json:"request_id"`
	DecisionIDs []string       `json:"decision_ids,omitempty"`
	Forgotten   *ForgetReceipt `json:"forgotten,omitempty"`
	Decayed     *DecayCounts   `json:"decayed,omitempty"`
	Code        string         `json:"code,omitempty"`
	Error       string         `json:"error,omitempty"`
}

// Carry compacts a reply to carry it.
func Carry(r Reply) CarriedReply {
	c := CarriedReply{RequestID: r.RequestID, Decayed: r.Decayed, Code: r.Code, Error: clipError(r.Error, maxCarriedErrorBytes)}
	for _, d := range r.Decisions {
		c.DecisionIDs = append(c.DecisionIDs, d.ID)
	}
	if r.Forgotten != nil {
		f := *r.Forgotten
		f.Memories, f.Rebuilt, f.Private, f.Sessions, f.Episodes, f.Summaries = nil, nil, nil, nil, nil, nil
		c.Forgotten = &f
	}
	return c
}

// Reply is the reply a carried one answers with: decisions named by ID.
func (c CarriedReply) Reply(tenant string) Reply {
	r := Reply{RequestID: c.RequestID, Forgotten: c.Forgotten, Decayed: c.Decayed, Code: c.Code, Error: c.Error}
	for _, id := range c.DecisionIDs {
		r.Decisions = append(r.Decisions, memory.Decision{ID: id, Tenant: tenant})
	}
	return r
}
