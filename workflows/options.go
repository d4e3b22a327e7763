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

// HeartbeatTimeout is how long an activity may go without a heartbeat
// before the server takes its worker for dead and retries it elsewhere.
// Every worker heartbeats for its running activities (worker.heartbeats),
// so after a crash in-flight work resumes within this, not within the
// activity's start-to-close timeout.
const HeartbeatTimeout = 5 * time.Second

// withLocalOptions is for short, idempotent steps run as local activities
// (no heartbeat: the workflow task's own timeout watches the worker),
// bounded by timeout, with the shared retry policy.
func withLocalOptions(ctx workflow.Context, timeout time.Duration) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: timeout,
		RetryPolicy:         retryPolicy,
	})
}

// withStoreOptions is for activities that read or write the stores: a
// minute bounds a slow store, and the heartbeat notices a dead worker.
func withStoreOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         retryPolicy,
	})
}

// withModelOptions is for activities that may call an LLM: a longer bound
// for the calls, and the same heartbeat.
func withModelOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         retryPolicy,
	})
}
