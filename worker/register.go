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

// NewWorker returns a worker on the task queue, and on the ledgers' queue
// beside it (ledger.TaskQueue), with everything registered on both,
// counting workflows in m (which may be nil). The caller starts and stops
// it.
//
// The ledgers have a queue, and pollers, of their own: a worker takes the
// tasks of one queue in order, and its workflows' tasks go to one sticky
// queue, so on a shared queue a tenant's ledger (its one writer, which
// every session of the tenant waits for) would wait behind the tasks of
// every session in flight. The ledger's activities run on its queue too.
// Both queues have everything registered: a ledger begun on the shared
// queue runs there until it continues as new.
func NewWorker(c client.Client, taskQueue string, a *activities.Activities, m *metrics.Metrics) worker.Worker {
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	opts := worker.Options{
		Interceptors: Interceptors(m),
		// A workflow task meant for a dead worker's sticky cache moves to the
		// shared queue after this (Temporal's default is 5 s): after a
		// crash, every workflow the old process had cached pays it once.
		StickyScheduleToStartTimeout: 2 * time.Second,
	}
	w := worker.New(c, taskQueue, opts)
	Register(w, a)
	l := worker.New(c, ledger.TaskQueue(taskQueue), opts)
	Register(l, a)
	return &workers{Worker: w, ledgers: l}
}

// workers are a deployment's worker and its ledgers' worker, started and
// stopped together. Registering registers with the first only.
type workers struct {
	worker.Worker
	ledgers worker.Worker
}

func (w *workers) Start() error {
	if err := w.ledgers.Start(); err != nil {
		return err
	}
	if err := w.Worker.Start(); err != nil {
		w.ledgers.Stop()
		return err
	}
	return nil
}

func (w *workers) Run(interruptCh <-chan any) error {
	if err := w.ledgers.Start(); err != nil {
		return err
	}
	defer w.ledgers.Stop()
	return w.Worker.Run(interruptCh)
}

func (w *workers) Stop() {
	w.Worker.Stop()
	w.ledgers.Stop()
}

// Interceptors are the interceptors every Hindsight worker runs (and a
// replayer must run too, for histories to match): workflow counts into m,
// which may be nil, and heartbeats for running activities.
func Interceptors(m *metrics.Metrics) []interceptor.WorkerInterceptor {
	return []interceptor.WorkerInterceptor{&workflowMetrics{m: m}, &heartbeats{}}
}
