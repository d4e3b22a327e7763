package activities

import (
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/memory"
)

// The ledger's wire contract: the names under which the ledger workflow,
// its signals and its update are registered, shared by the workflow
// (package workflows), the activity that enqueues requests, and clients.
const (
	LedgerWorkflowType  = "MemoryLedger"
	SignalLedgerRequest = "ledger-request"
	SignalLedgerReply   = "ledger-reply"
	UpdateLedgerApply   = "apply"
	// UpdateLedgerApplyBatch takes several requests in one update, so that
	// a burst of clients stays under Temporal's limit of concurrent
	// updates per workflow.
	UpdateLedgerApplyBatch = "apply-batch"
)

// LedgerWorkflowID is the ID of a tenant's ledger: one per tenant, so that
// every change to the tenant's semantic memory is applied in one order.
func LedgerWorkflowID(tenant string) string { return "ledger/" + tenant }

// LedgerState is the ledger's input: empty on first start, and the carried
// over queue and recent replies when it continues as new.
type LedgerState struct {
	Tenant  string          `json:"tenant"`
	Pending []LedgerRequest `json:"pending,omitempty"`
	// Carried are the latest replies, kept to answer retried requests.
	Carried []CarriedReply `json:"carried,omitempty"`
	// Recent is how ledgers before CarriedReply carried their replies;
	// it is read, never written.
	Recent []LedgerReply `json:"recent,omitempty"`
}

// CarriedReply is a reply a ledger remembers across continue-as-new: its
// decisions by ID only (the service reads them back from the decision
// log), and a forget's counts without its lists. Two hundred of them, of
// the largest requests, stay a few hundred kilobytes.
type CarriedReply struct {
	RequestID   string         `json:"request_id"`
	DecisionIDs []string       `json:"decision_ids,omitempty"`
	Forgotten   *ForgetReceipt `json:"forgotten,omitempty"`
	Decayed     *DecayCounts   `json:"decayed,omitempty"`
	Code        string         `json:"code,omitempty"`
	Error       string         `json:"error,omitempty"`
}

// Carry compacts a reply to carry it.
func Carry(r LedgerReply) CarriedReply {
	c := CarriedReply{RequestID: r.RequestID, Decayed: r.Decayed, Code: r.Code, Error: r.Error}
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
func (c CarriedReply) Reply(tenant string) LedgerReply {
	r := LedgerReply{RequestID: c.RequestID, Forgotten: c.Forgotten, Decayed: c.Decayed, Code: c.Code, Error: c.Error}
	for _, id := range c.DecisionIDs {
		r.Decisions = append(r.Decisions, memory.Decision{ID: id, Tenant: tenant})
	}
	return r
}

// WorkflowTaskTimeout bounds a workflow task of the workflows that carry
// writes (sessions and ledgers): a replay and the decisions after it,
// milliseconds of work. After a crash, a task the dead worker had taken is
// handed to a live one after this rather than Temporal's default of 10 s.
const WorkflowTaskTimeout = 5 * time.Second

// LedgerStartOptions are the options every starter of a ledger uses: the
// running ledger is reused, never duplicated.
func LedgerStartOptions(tenant, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       LedgerWorkflowID(tenant),
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowTaskTimeout:      WorkflowTaskTimeout,
		Memo:                     map[string]any{"tenant": tenant},
	}
}
