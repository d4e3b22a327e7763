package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/metrics"
	"github.com/hindsight-memory/hindsight/workflows"
)

// Register registers every workflow and the activities of a on w.
func Register(w worker.Registry, a *activities.Activities) {
	w.RegisterWorkflow(workflows.SessionEnd)
	w.RegisterWorkflow(workflows.Forget)
	w.RegisterWorkflow(workflows.Consolidate)
	w.RegisterWorkflow(workflows.Decay)
	w.RegisterWorkflow(workflows.Reindex)
	w.RegisterWorkflowWithOptions(workflows.MemoryLedger, workflow.RegisterOptions{Name: ledger.WorkflowType})
	w.RegisterActivity(a)
}

// NewWorker returns a worker on the task queue with everything registered,
// counting workflows in m (which may be nil). The caller starts and stops
// it.
func NewWorker(c client.Client, taskQueue string, a *activities.Activities, m *metrics.Metrics) worker.Worker {
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	w := worker.New(c, taskQueue, worker.Options{
		Interceptors: Interceptors(m),
		// A workflow task meant for a dead worker's sticky cache moves to the
		// shared queue after this (Temporal's default is 5 s): after a
		// crash, every workflow the old process had cached pays it once.
		StickyScheduleToStartTimeout: 2 * time.Second,
	})
	Register(w, a)
	return w
}

// Interceptors are the interceptors every Hindsight worker runs (and a
// replayer must run too, for histories to match): workflow counts into m,
// which may be nil, and heartbeats for running activities.
func Interceptors(m *metrics.Metrics) []interceptor.WorkerInterceptor {
	return []interceptor.WorkerInterceptor{&workflowMetrics{m: m}, &heartbeats{}}
}
