package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/runes"
	"github.com/hindsight-memory/hindsight/worker"
	"github.com/hindsight-memory/hindsight/workflows"
)

var scheduleEnvs = []string{"HINDSIGHT_CONSOLIDATE_SCHEDULE", "HINDSIGHT_DECAY_SCHEDULE", "HINDSIGHT_CONSOLIDATE_MIN_AGE"}

func init() {
	envHelp["HINDSIGHT_CONSOLIDATE_SCHEDULE"] = "when consolidation runs: a cron expression or an interval like 168h (0 3 * * 0)"
	envHelp["HINDSIGHT_DECAY_SCHEDULE"] = "when the decay sweep runs: cron or interval (30 2 * * *)"
	envHelp["HINDSIGHT_CONSOLIDATE_MIN_AGE"] = "how old episodes must be to be consolidated (720h)"
}

// scheduleConfig reads the schedules' timing from the environment.
func scheduleConfig() (worker.ScheduleConfig, error) {
	cfg := worker.ScheduleConfig{
		Consolidate: os.Getenv("HINDSIGHT_CONSOLIDATE_SCHEDULE"),
		Decay:       os.Getenv("HINDSIGHT_DECAY_SCHEDULE"),
	}
	if v := os.Getenv("HINDSIGHT_CONSOLIDATE_MIN_AGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("HINDSIGHT_CONSOLIDATE_MIN_AGE=%q: want a duration like 720h", v)
		}
		cfg.ConsolidateInput = workflows.ConsolidateInput{MinAge: d}
	}
	return cfg, nil
}

// applySchedules creates or updates the schedules; worker and dev call it
// at start.
func applySchedules(ctx context.Context, c client.Client, taskQueue string) error {
	cfg, err := scheduleConfig()
	if err != nil {
		return err
	}
	ss, err := worker.Schedules(cfg)
	if err != nil {
		return err
	}
	return worker.ApplySchedules(ctx, c, taskQueue, ss)
}

func runSchedules(ctx context.Context, args []string, out io.Writer) error {
	usage := "Usage: hindsight schedules list | apply | trigger NAME [flags]\n\n" +
		"  list     show Hindsight's schedules, their timing, next and recent runs\n" +
		"  apply    create or update them (the worker does this at start)\n" +
		"  trigger  run one now: " + worker.ScheduleConsolidate + " or " + worker.ScheduleDecay + "\n"
	if len(args) == 0 || (args[0] != "list" && args[0] != "apply" && args[0] != "trigger") {
		fmt.Fprint(os.Stderr, usage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return nil
		}
		return errUsage
	}
	sub := args[0]
	fs := newFlags("schedules "+sub, "", usage, append([]string{"TEMPORAL_ADDR", "TEMPORAL_NAMESPACE", "HINDSIGHT_TASK_QUEUE"}, scheduleEnvs...)...)
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	tc, err := t.dial(&s)
	if err != nil {
		return err
	}
	defer tc.Close()
	switch sub {
	case "apply":
		if err := applySchedules(ctx, tc, s.taskQueue); err != nil {
			return err
		}
		fmt.Fprintln(out, "schedules applied")
		return nil
	case "trigger":
		if fs.NArg() != 1 {
			return fmt.Errorf("trigger NAME: name one of %s, %s", worker.ScheduleConsolidate, worker.ScheduleDecay)
		}
		if err := tc.ScheduleClient().GetHandle(ctx, fs.Arg(0)).Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
			return fmt.Errorf("trigger %s: %w", fs.Arg(0), err)
		}
		fmt.Fprintf(out, "triggered %s; follow it in the Temporal UI\n", fs.Arg(0))
		return nil
	}
	cfg, err := scheduleConfig()
	if err != nil {
		return err
	}
	ss, err := worker.Schedules(cfg)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCHEDULE\tWHEN\tNEXT RUN\tRECENT RUNS\tNOTE")
	for _, sc := range ss {
		d, err := tc.ScheduleClient().GetHandle(ctx, sc.ID).Describe(ctx)
		if err != nil {
			fmt.Fprintf(tw, "%s\t(not created: run hindsight schedules apply)\t\t\t\n", sc.ID)
			continue
		}
		when := sc.Cron
		if when == "" {
			when = "every " + sc.Every.String()
		}
		next := ""
		if len(d.Info.NextActionTimes) > 0 {
			next = d.Info.NextActionTimes[0].UTC().Format(time.DateTime)
		}
		paused := ""
		if d.Schedule.State != nil && d.Schedule.State.Paused {
			paused = " (paused)"
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%s\t%d\t%s\n", sc.ID, when, paused, next, len(d.Info.RecentActions), runes.ClipLine(sc.Description, 60))
	}
	return tw.Flush()
}
