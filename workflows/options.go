package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/memory"
)

// TaskQueue is the task queue Hindsight's workers poll.
const TaskQueue = "hindsight"

// NonRetryable lists the application error types that retrying cannot fix.
// Activities return domain errors; activities.toTemporal maps EINVALID,
// ENOTFOUND and ECONFLICT to these types.
var NonRetryable = []string{memory.EINVALID, memory.ENOTFOUND, memory.ECONFLICT}

// retryPolicy is shared by every activity: quick first retries, backoff to
// a minute, and no retries for errors retrying cannot fix.
var retryPolicy = &temporal.RetryPolicy{
	InitialInterval:        time.Second,
	BackoffCoefficient:     2,
	MaximumInterval:        time.Minute,
	MaximumAttempts:        10,
	NonRetryableErrorTypes: NonRetryable,
}

// withStoreOptions is for activities that read or write the stores.
func withStoreOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         retryPolicy,
	})
}

// withModelOptions is for activities that may call an LLM: longer timeouts,
// and a heartbeat so a stuck call is noticed.
func withModelOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         retryPolicy,
	})
}
