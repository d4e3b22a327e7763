package worker

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
)

// heartbeats keeps every running activity that has a heartbeat timeout
// heartbeating while it runs, so that the server learns within that
// timeout, not at the end of the start-to-close timeout, that a worker died
// with the activity in flight (a kill -9, a lost machine), and retries it
// on a live worker at once. An activity's own heartbeats carry progress
// details (a batch index, a cursor) that its retry resumes from; the
// periodic heartbeat repeats the latest details rather than clearing them.
type heartbeats struct {
	interceptor.WorkerInterceptorBase
}

func (*heartbeats) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &heartbeatInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

// heartbeatInbound serves one activity execution.
type heartbeatInbound struct {
	interceptor.ActivityInboundInterceptorBase
	out *heartbeatOutbound
}

func (h *heartbeatInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	h.out = &heartbeatOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}}
	return h.Next.Init(h.out)
}

func (h *heartbeatInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	every := heartbeatEvery(activity.GetInfo(ctx).HeartbeatTimeout)
	if every == 0 {
		return h.Next.ExecuteActivity(ctx, in)
	}
	h.out.resumeFrom(ctx)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				h.out.repeat(ctx)
			}
		}
	}()
	defer func() { close(done); <-stopped }()
	return h.Next.ExecuteActivity(ctx, in)
}

// heartbeatEvery is how often to heartbeat for a heartbeat timeout: three
// times per timeout, so one late tick is not a missed heartbeat. The SDK
// batches heartbeats itself, so ticking often costs no extra calls.
func heartbeatEvery(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 0
	}
	return max(timeout/3, 100*time.Millisecond)
}

// heartbeatOutbound remembers the details of the activity's own latest
// heartbeat.
type heartbeatOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	mu      sync.Mutex
	details []any
}

func (o *heartbeatOutbound) RecordHeartbeat(ctx context.Context, details ...any) {
	o.mu.Lock()
	o.details = details
	o.mu.Unlock()
	o.Next.RecordHeartbeat(ctx, details...)
}

// resumeFrom starts from the details of the previous attempt's latest
// heartbeat, so that an attempt that dies before its first heartbeat of its
// own leaves them for the next. Every Hindsight activity records a single
// details value, which travels here as its JSON.
func (o *heartbeatOutbound) resumeFrom(ctx context.Context) {
	if !activity.HasHeartbeatDetails(ctx) {
		return
	}
	var raw json.RawMessage
	if err := activity.GetHeartbeatDetails(ctx, &raw); err == nil {
		o.mu.Lock()
		o.details = []any{raw}
		o.mu.Unlock()
	}
}

func (o *heartbeatOutbound) repeat(ctx context.Context) {
	o.mu.Lock()
	details := o.details
	o.mu.Unlock()
	o.Next.RecordHeartbeat(ctx, details...)
}
