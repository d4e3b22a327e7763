package workflows

import (
	"cmp"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
)

// DecayInput configures a decay sweep: one tenant, or every tenant when
// Tenant is empty.
type DecayInput struct {
	Tenant string `json:"tenant,omitempty"`
	// TenantTimeout bounds how long the sweep waits for one tenant's ledger
	// (DefaultDecayTenantTimeout); a ledger that takes longer is reported
	// as stuck, and the other tenants are swept all the same.
	TenantTimeout time.Duration `json:"tenant_timeout,omitempty"`
}

// DecayReport counts what a sweep changed.
type DecayReport struct {
	Tenants int            `json:"tenants"`
	Changed int            `json:"changed"`
	ByTo    map[string]int `json:"by_status"` // new status → memories
	// Stuck are the tenants whose ledger did not answer within the
	// tenant timeout; Failed the tenants whose sweep failed, with why.
	// Their memories are swept next time.
	Stuck  []string          `json:"stuck,omitempty"`
	Failed map[string]string `json:"failed,omitempty"`
}

const (
	// decayFanOut is how many tenants' ledgers a sweep has asked at once.
	decayFanOut = 8
	// DefaultDecayTenantTimeout bounds the wait for one tenant's ledger.
	DefaultDecayTenantTimeout = time.Hour
)

// Decay moves memories between live, cold and archived by their decay
// score (computed from timestamps, so a sweep that runs twice, late or
// never agrees with one on time) through each tenant's ledger, so it never
// races a merge. Tenants are swept decayFanOut at a time, each within its
// own timeout: one stuck ledger delays nobody else's sweep.
func Decay(ctx workflow.Context, in DecayInput) (DecayReport, error) {
	var a *activities.Activities
	rep := DecayReport{ByTo: map[string]int{}}
	tenants := []string{in.Tenant}
	if in.Tenant == "" {
		if err := workflow.ExecuteActivity(withStoreOptions(ctx), a.ListTenants).Get(ctx, &tenants); err != nil {
			return rep, err
		}
	}
	info := workflow.GetInfo(ctx)
	request := func(t string) ledger.Request {
		return ledger.Request{
			ID: "decay/" + info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + t, Tenant: t,
			Op: ledger.OpDecay, ReplyTo: info.WorkflowExecution.ID, WorkflowID: info.WorkflowExecution.ID,
		}
	}
	count := func(reply ledger.Reply) {
		rep.Tenants++
		if reply.Decayed != nil {
			rep.Changed += reply.Decayed.Changed
			for to, n := range reply.Decayed.ByTo {
				rep.ByTo[to] += n
			}
		}
		for _, d := range reply.Decisions { // a ledger that has not paged its sweeps yet
			for _, m := range d.After {
				rep.Changed++
				rep.ByTo[string(m.Status)]++
			}
		}
	}
	if workflow.GetVersion(ctx, "decay-fan-out", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		for _, t := range tenants { // one at a time, as sweeps begun before fan-out did
			reply, err := callLedger(ctx, request(t))
			if err != nil {
				return rep, err
			}
			count(reply)
		}
		return rep, nil
	}

	timeout := cmp.Or(in.TenantTimeout, DefaultDecayTenantTimeout)
	replies := workflow.GetSignalChannel(ctx, ledger.SignalReply)
	waiting := map[string]string{} // request ID → tenant
	stopTimer := map[string]workflow.CancelFunc{}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(replies, func(c workflow.ReceiveChannel, _ bool) {
		var reply ledger.Reply
		c.Receive(ctx, &reply)
		t, ok := waiting[reply.RequestID]
		if !ok {
			return // a reply to a tenant given up on, or a repeat
		}
		delete(waiting, reply.RequestID)
		stopTimer[reply.RequestID]()
		if reply.Error != "" {
			rep.fail(t, reply.Error)
			return
		}
		count(reply)
	})
	ask := func(t string) {
		req := request(t)
		if err := workflow.ExecuteActivity(withStoreOptions(ctx), a.EnqueueLedger, req).Get(ctx, nil); err != nil {
			rep.fail(t, rootMessage(err))
			return
		}
		waiting[req.ID] = t
		timerCtx, cancel := workflow.WithCancel(ctx)
		stopTimer[req.ID] = cancel
		sel.AddFuture(workflow.NewTimer(timerCtx, timeout), func(workflow.Future) {
			if _, ok := waiting[req.ID]; ok {
				delete(waiting, req.ID)
				rep.Stuck = append(rep.Stuck, t)
				workflow.GetLogger(ctx).Warn("decay: the tenant's ledger did not answer in time; swept next time", "tenant", t, "timeout", timeout)
			}
		})
	}
	for next := 0; next < len(tenants) || len(waiting) > 0; {
		for next < len(tenants) && len(waiting) < decayFanOut {
			ask(tenants[next])
			next++
		}
		if len(waiting) > 0 {
			sel.Select(ctx)
		}
	}
	return rep, nil
}

func (r *DecayReport) fail(tenant, why string) {
	if r.Failed == nil {
		r.Failed = map[string]string{}
	}
	r.Failed[tenant] = why
}
