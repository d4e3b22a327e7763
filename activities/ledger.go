package activities

import (
	"time"

	"github.com/hindsight-memory/hindsight/ledger"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// WorkflowTaskTimeout bounds a workflow task of the workflows that carry
// writes (sessions and ledgers): a replay and the decisions after it,
// milliseconds of work. After a crash, a task the dead worker had taken is
// handed to a live one after this rather than Temporal's default of 10 s.
const WorkflowTaskTimeout = 5 * time.Second

// LedgerStartOptions are the options every starter of a ledger uses: the
// running ledger is reused, never duplicated, and a new one runs on the
// ledgers' own task queue beside taskQueue (ledger.TaskQueue).
func LedgerStartOptions(tenant, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       ledger.WorkflowID(tenant),
		TaskQueue:                ledger.TaskQueue(taskQueue),
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowTaskTimeout:      WorkflowTaskTimeout,
		Memo:                     map[string]any{"tenant": tenant},
	}
}
