package main

import (
	"context"
	"log/slog"

	tlog "go.temporal.io/sdk/log"
)

// temporalLogger routes the Temporal SDK's logs to slog, one level down:
// the SDK's info logs are chatter for a Hindsight operator.
func temporalLogger(l *slog.Logger) tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(quieter{l.Handler()}))
}

type quieter struct{ slog.Handler }

func (q quieter) Enabled(ctx context.Context, level slog.Level) bool {
	if level < slog.LevelWarn {
		level -= 4
	}
	return q.Handler.Enabled(ctx, level)
}
