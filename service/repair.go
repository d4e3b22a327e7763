package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/workflows"
)

// A tenant's ledger is wedged when a workflow task of its fails, and fails
// again on every retry: typically because it would send a payload past
// Temporal's limit (ledgers before "bounded-payloads" kept whole error
// strings and unbounded replies), or after a deployment that cannot
// replay it. Nothing of the tenant can then be written. RepairLedger ends
// such a run and starts the ledger again from the store's state: every
// decision is in the decision log already, and the requests the run had
// received and not answered (from its history: the state it began with,
// its signals and its accepted updates) are queued again. Requests it had
// applied are answered from the decision log as repeats (their decision
// IDs derive from the request); forgets and decay sweeps are idempotent;
// a request past today's limits gets its error reply instead.

// RepairReport says what a repair found and did.
type RepairReport struct {
	Tenant string `json:"tenant"`
	// Wedged says why the ledger was repaired, or "" when it was not
	// (running and healthy, or not running).
	Wedged string `json:"wedged,omitempty"`
	// RunID is the run that was ended.
	RunID string `json:"run_id,omitempty"`
	// Requeued are the requests queued again on the new run; Refused
	// those past the limits, answered with their error.
	Requeued int `json:"requeued"`
	Refused  int `json:"refused"`
}

// RepairLedger repairs the ledger of tenant if it is wedged (see above):
// its last workflow task failed, and no task completed since, because of a
// payload past Temporal's limit or, with force, for any cause. dc decodes the run's history (the deployment's data
// converter, with its payload codec; nil for the default). A ledger that
// is not wedged is left alone, and the report says so.
func RepairLedger(ctx context.Context, tc client.Client, dc converter.DataConverter, taskQueue, tenant string, force bool) (RepairReport, error) {
	const op = "ledger repair"
	rep := RepairReport{Tenant: tenant}
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return rep, err
	}
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	id := ledger.WorkflowID(tenant)
	desc, err := tc.DescribeWorkflowExecution(ctx, id, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("%s: describe %s: %w", op, id, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return rep, nil
	}
	if desc.GetPendingWorkflowTask() == nil {
		return rep, nil // idle, waiting for requests
	}
	runID := info.GetExecution().GetRunId()
	events, err := runHistory(ctx, tc, id, runID)
	if err != nil {
		return rep, fmt.Errorf("%s: read the history of %s: %w", op, id, err)
	}
	failed, cause := lastTaskFailure(events)
	switch {
	case !failed:
		return rep, nil // its last workflow task completed
	case cause == enums.WORKFLOW_TASK_FAILED_CAUSE_PAYLOADS_TOO_LARGE:
		rep.Wedged = "a workflow task would send a payload past Temporal's limit"
	case force:
		rep.Wedged = fmt.Sprintf("its workflow task keeps failing (%s)", strings.ToLower(strings.TrimPrefix(cause.String(), "WORKFLOW_TASK_FAILED_CAUSE_")))
	default:
		return rep, nil
	}
	state, reqs, err := recoverRequests(dc, events)
	if err != nil {
		return rep, fmt.Errorf("%s: %w", op, err)
	}
	rep.RunID = runID
	if err := tc.TerminateWorkflow(ctx, id, runID, "hindsight ledger repair: "+rep.Wedged); err != nil {
		return rep, fmt.Errorf("%s: end run %s: %w", op, runID, err)
	}
	start := activities.LedgerStartOptions(tenant, taskQueue)
	fresh := ledger.State{Tenant: tenant, Unsettled: state.Unsettled}
	if len(fresh.Unsettled) > ledger.MaxUnsettled {
		fresh.Unsettled = fresh.Unsettled[len(fresh.Unsettled)-ledger.MaxUnsettled:]
	}
	if _, err := tc.ExecuteWorkflow(ctx, start, workflows.MemoryLedger, fresh); err != nil {
		return rep, fmt.Errorf("%s: start the ledger again: %w", op, err)
	}
	for _, req := range reqs {
		if err := req.Validate(); err != nil {
			rep.Refused++
			if req.ReplyTo != "" {
				reply := ledger.Reply{RequestID: req.ID}.Failed(memory.ErrorCode(err), memory.CallerMessage(err))
				_ = tc.SignalWorkflow(ctx, req.ReplyTo, "", ledger.SignalReply, reply) // the requester may be gone
			}
			continue
		}
		if _, err := tc.SignalWithStartWorkflow(ctx, id, ledger.SignalRequest, req, start, workflows.MemoryLedger, fresh); err != nil {
			return rep, fmt.Errorf("%s: queue request %s again: %w", op, memory.Quote(req.ID), err)
		}
		rep.Requeued++
	}
	return rep, nil
}

// RepairWedgedLedgers repairs every running ledger wedged by a payload
// past Temporal's limit (RepairLedger without force), as a process starts:
// a deployment upgraded from a version that could wedge heals without an
// operator. It logs what it repaired; a ledger it cannot read is skipped
// with a warning.
func RepairWedgedLedgers(ctx context.Context, tc client.Client, dc converter.DataConverter, taskQueue string, log *slog.Logger) ([]RepairReport, error) {
	var out []RepairReport
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", ledger.WorkflowType), NextPageToken: token,
		})
		if err != nil {
			return out, fmt.Errorf("ledger repair: list the ledgers: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			tenant, ok := strings.CutPrefix(ex.GetExecution().GetWorkflowId(), ledger.WorkflowID(""))
			if !ok {
				continue
			}
			rep, err := RepairLedger(ctx, tc, dc, taskQueue, tenant, false)
			if err != nil {
				log.Warn("ledger repair: skipped", "tenant", tenant, "error", err)
				continue
			}
			if rep.Wedged != "" {
				log.Warn("ledger repair: a wedged ledger was ended and started again from the store's state",
					"tenant", tenant, "why", rep.Wedged, "run", rep.RunID, "requeued", rep.Requeued, "refused", rep.Refused)
				out = append(out, rep)
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}

// runHistory reads every event of one run.
func runHistory(ctx context.Context, tc client.Client, id, runID string) ([]*history.HistoryEvent, error) {
	var events []*history.HistoryEvent
	it := tc.GetWorkflowHistory(ctx, id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	return events, nil
}

// lastTaskFailure reports whether the run's last workflow task to end
// failed, and why. Temporal records the first failure of a task that
// keeps failing, and none of its retries, so a run whose last recorded
// task failed has made no progress since: a ledger's tasks fail the same
// way each time they replay the same history.
func lastTaskFailure(events []*history.HistoryEvent) (bool, enums.WorkflowTaskFailedCause) {
	failed, cause := false, enums.WORKFLOW_TASK_FAILED_CAUSE_UNSPECIFIED
	for _, ev := range events {
		switch {
		case ev.GetWorkflowTaskFailedEventAttributes() != nil:
			failed, cause = true, ev.GetWorkflowTaskFailedEventAttributes().GetCause()
		case ev.GetWorkflowTaskCompletedEventAttributes() != nil:
			failed, cause = false, enums.WORKFLOW_TASK_FAILED_CAUSE_UNSPECIFIED
		}
	}
	return failed, cause
}

// recoverRequests reads from a ledger run's history the state it began
// with and every request it received, in order, each once: those pending
// in its input, those signalled, and those of its accepted updates.
func recoverRequests(dc converter.DataConverter, events []*history.HistoryEvent) (ledger.State, []ledger.Request, error) {
	var state ledger.State
	var reqs []ledger.Request
	seen := map[string]bool{}
	add := func(rs ...ledger.Request) {
		for _, r := range rs {
			if r.ID != "" && !seen[r.ID] {
				seen[r.ID] = true
				reqs = append(reqs, r)
			}
		}
	}
	for _, ev := range events {
		switch {
		case ev.GetWorkflowExecutionStartedEventAttributes() != nil:
			if in := ev.GetWorkflowExecutionStartedEventAttributes().GetInput(); in != nil {
				if err := dc.FromPayloads(in, &state); err != nil {
					return state, nil, fmt.Errorf("read the run's input: %w", err)
				}
			}
			add(state.Pending...)
		case ev.GetWorkflowExecutionSignaledEventAttributes() != nil:
			a := ev.GetWorkflowExecutionSignaledEventAttributes()
			if a.GetSignalName() != ledger.SignalRequest {
				continue
			}
			var r ledger.Request
			if err := dc.FromPayloads(a.GetInput(), &r); err != nil {
				return state, nil, fmt.Errorf("read signal %d: %w", ev.GetEventId(), err)
			}
			add(r)
		case ev.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			in := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
			switch in.GetName() {
			case ledger.UpdateApply:
				var r ledger.Request
				if err := dc.FromPayloads(in.GetArgs(), &r); err != nil {
					return state, nil, fmt.Errorf("read update %d: %w", ev.GetEventId(), err)
				}
				add(r)
			case ledger.UpdateApplyBatch:
				var rs []ledger.Request
				if err := dc.FromPayloads(in.GetArgs(), &rs); err != nil {
					return state, nil, fmt.Errorf("read update %d: %w", ev.GetEventId(), err)
				}
				add(rs...)
			}
		}
	}
	return state, reqs, nil
}
