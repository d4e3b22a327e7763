package worker

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/metrics"
	"github.com/hindsight-memory/hindsight/workflows"
)

// Register registers every workflow and the activities of a on w.
func Register(w worker.Registry, a *activities.Activities) {
	w.RegisterWorkflow(workflows.SessionEnd)
	w.RegisterWorkflow(workflows.Forget)
	w.RegisterWorkflow(workflows.Consolidate)
	w.RegisterWorkflow(workflows.Decay)
	w.RegisterWorkflowWithOptions(workflows.MemoryLedger, workflow.RegisterOptions{Name: activities.LedgerWorkflowType})
	w.RegisterActivity(a)
}

// NewWorker returns a worker on the task queue with everything registered,
// counting workflows in m (which may be nil). The caller starts and stops
// it.
func NewWorker(c client.Client, taskQueue string, a *activities.Activities, m *metrics.Metrics) worker.Worker {
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	w := worker.New(c, taskQueue, worker.Options{Interceptors: Interceptors(m)})
	Register(w, a)
	return w
}

// Interceptors are the workflow interceptors every Hindsight worker runs
// (and a replayer must run too, for histories to match): workflow counts
// into m, which may be nil.
func Interceptors(m *metrics.Metrics) []interceptor.WorkerInterceptor {
	return []interceptor.WorkerInterceptor{&workflowMetrics{m: m}}
}
