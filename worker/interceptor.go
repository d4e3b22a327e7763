package worker

import (
	"errors"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/metrics"
)

// workflowMetrics counts workflows started, completed and failed by type,
// once per run however often a worker replays it: the start through a
// side effect (recorded in the history, so a replay does not count it
// again), the end only when not replaying.
type workflowMetrics struct {
	interceptor.WorkerInterceptorBase
	m *metrics.Metrics
}

func (w *workflowMetrics) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &workflowCounter{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, m: w.m}
}

type workflowCounter struct {
	interceptor.WorkflowInboundInterceptorBase
	m *metrics.Metrics
}

func (c *workflowCounter) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	name := workflow.GetInfo(ctx).WorkflowType.Name
	workflow.SideEffect(ctx, func(workflow.Context) any {
		c.m.Workflow(name, metrics.WorkflowStarted)
		return nil
	})
	res, err := c.Next.ExecuteWorkflow(ctx, in)
	if !workflow.IsReplaying(ctx) {
		var can *workflow.ContinueAsNewError
		if err == nil || errors.As(err, &can) {
			c.m.Workflow(name, metrics.WorkflowCompleted)
		} else {
			c.m.Workflow(name, metrics.WorkflowFailed)
		}
	}
	return res, err
}
