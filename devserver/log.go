package devserver

import (
	"context"
	"log/slog"
	"strings"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// minLevelHandler passes on only records at or above min.
//
// The server is chatty at info level (membership, shards, task queues), which
// is noise for someone running `hindsight dev`, so its logs start at warn.
// min is shared with Server so that Stop can silence them: during shutdown
// the internal pollers and queue processors report their cancelled calls as
// warnings and errors, and none of those mean anything.
type minLevelHandler struct {
	next slog.Handler
	min  slog.Leveler
}

func (h minLevelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.min.Level() && h.next.Enabled(ctx, level)
}

func (h minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{next: h.next.WithAttrs(attrs), min: h.min}
}

func (h minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{next: h.next.WithGroup(name), min: h.min}
}

// serverLogger adapts a *slog.Logger to the server's log.Logger.
type serverLogger struct{ slog *slog.Logger }

var (
	_ log.Logger     = serverLogger{}
	_ log.WithLogger = serverLogger{}
)

// fatalError is what serverLogger.Fatal panics with. The server calls Fatal
// where it cannot go on (a gRPC listener that cannot bind, say). Its own zap
// logger would exit the process there, but an embedded server must not take
// its host down, so Start recovers this panic and returns it as an error.
type fatalError struct{ msg string }

func (e fatalError) Error() string { return e.msg }

func (l serverLogger) Debug(msg string, tags ...tag.Tag) { l.log(slog.LevelDebug, msg, tags) }
func (l serverLogger) Info(msg string, tags ...tag.Tag)  { l.log(slog.LevelInfo, msg, tags) }
func (l serverLogger) Warn(msg string, tags ...tag.Tag)  { l.log(slog.LevelWarn, msg, tags) }
func (l serverLogger) Error(msg string, tags ...tag.Tag) { l.log(slog.LevelError, msg, tags) }

// DPanic panics only in development builds of the server; this is not one.
func (l serverLogger) DPanic(msg string, tags ...tag.Tag) { l.log(slog.LevelError, msg, tags) }

func (l serverLogger) Panic(msg string, tags ...tag.Tag) {
	l.log(slog.LevelError, msg, tags)
	panic(msg + describeTags(tags))
}

func (l serverLogger) Fatal(msg string, tags ...tag.Tag) {
	l.log(slog.LevelError, msg, tags)
	panic(fatalError{msg: msg + describeTags(tags)})
}

func (l serverLogger) With(tags ...tag.Tag) log.Logger {
	return serverLogger{slog: l.slog.With(attrs(tags)...)}
}

func (l serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	// Check the level before rendering tags: a tag's value goes through a
	// zap encoder, and most records are dropped here.
	if !l.slog.Enabled(context.Background(), level) {
		return
	}
	l.slog.Log(context.Background(), level, msg, attrs(tags)...)
}

func attrs(tags []tag.Tag) []any {
	out := make([]any, 0, len(tags))
	for _, t := range tags {
		out = append(out, slog.Any(t.Key(), t.Value()))
	}
	return out
}

// describeTags renders tags for an error message: " (address=..., error=...)".
func describeTags(tags []tag.Tag) string {
	if len(tags) == 0 {
		return ""
	}
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = t.Key() + "=" + slog.AnyValue(t.Value()).String()
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
