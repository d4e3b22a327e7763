package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hindsight-memory/hindsight/workflows"
)

// Schedule is one of Hindsight's Temporal Schedules: a workflow run on a
// cron expression or at a fixed interval.
type Schedule struct {
	ID          string
	Description string
	// Cron is a cron expression ("0 3 * * 0"); Every an interval. Exactly
	// one is set.
	Cron  string
	Every time.Duration
	// Workflow and Args are what each run starts.
	Workflow any
	Args     []any
}

// ScheduleConfig sets when maintenance runs. Each field is a cron
// expression or a Go duration ("168h"); empty means the default.
type ScheduleConfig struct {
	Consolidate string // weekly, Sunday 03:00 UTC
	Decay       string // daily, 02:30 UTC
	// ConsolidateInput configures each consolidation run.
	ConsolidateInput workflows.ConsolidateInput
}

// Schedule IDs.
const (
	ScheduleConsolidate = "hindsight-consolidate"
	ScheduleDecay       = "hindsight-decay"
)

// Schedules returns Hindsight's schedules for cfg.
func Schedules(cfg ScheduleConfig) ([]Schedule, error) {
	cons, err := when(cfg.Consolidate, "0 3 * * 0", "consolidate")
	if err != nil {
		return nil, err
	}
	decay, err := when(cfg.Decay, "30 2 * * *", "decay")
	if err != nil {
		return nil, err
	}
	cons.ID, cons.Description = ScheduleConsolidate, "weekly: cluster old episodes into typical episodes, archive them, promote recurring lessons, reconcile the vector index"
	cons.Workflow, cons.Args = workflows.Consolidate, []any{cfg.ConsolidateInput}
	decay.ID, decay.Description = ScheduleDecay, "daily: move unused memories to cold and archived by their decay"
	decay.Workflow, decay.Args = workflows.Decay, []any{workflows.DecayInput{}}
	return []Schedule{cons, decay}, nil
}

// when reads a cron expression or a duration.
func when(v, def, name string) (Schedule, error) {
	if v == "" {
		v = def
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < time.Minute {
			return Schedule{}, fmt.Errorf("%s schedule: an interval of %s is too short (at least 1m)", name, d)
		}
		return Schedule{Every: d}, nil
	}
	if len(strings.Fields(v)) < 5 && !strings.HasPrefix(v, "@") {
		return Schedule{}, fmt.Errorf("%s schedule %q: want a cron expression like %q or a duration like 168h", name, v, def)
	}
	return Schedule{Cron: v}, nil
}

func (s Schedule) options(taskQueue string) client.ScheduleOptions {
	spec := client.ScheduleSpec{}
	if s.Cron != "" {
		spec.CronExpressions = []string{s.Cron}
	} else {
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: s.Every}}
	}
	return client.ScheduleOptions{
		ID:   s.ID,
		Spec: spec,
		Action: &client.ScheduleWorkflowAction{
			ID: s.ID, Workflow: s.Workflow, Args: s.Args, TaskQueue: taskQueue,
			Memo: map[string]any{"schedule": s.ID},
		},
		// A run still going when the next is due is not doubled.
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP,
		Note:    s.Description,
	}
}

// ApplySchedules creates Hindsight's schedules, or updates them to match
// when they exist: safe to call at every worker start.
func ApplySchedules(ctx context.Context, c client.Client, taskQueue string, ss []Schedule) error {
	for _, s := range ss {
		opts := s.options(taskQueue)
		_, err := c.ScheduleClient().Create(ctx, opts)
		if err == nil {
			continue
		}
		if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return fmt.Errorf("create schedule %s: %w", s.ID, err)
		}
		h := c.ScheduleClient().GetHandle(ctx, s.ID)
		err = h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			sched := in.Description.Schedule
			sched.Spec = &opts.Spec
			sched.Action = opts.Action
			if sched.Policy == nil {
				sched.Policy = &client.SchedulePolicies{}
			}
			sched.Policy.Overlap = opts.Overlap
			return &client.ScheduleUpdate{Schedule: &sched}, nil
		}})
		if err != nil {
			return fmt.Errorf("update schedule %s: %w", s.ID, err)
		}
	}
	return nil
}
