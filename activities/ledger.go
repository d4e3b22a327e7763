package activities

import (
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
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
	Recent  []LedgerReply   `json:"recent,omitempty"`
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
