package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

const eventInsertColumns = "tenant, ts, session_id, seq, id, user_id, role, content, tool_name, tool_args, tool_result, error, call_id, retention_days, write_seq"

// eventSelect reads the first written row of each event. LIMIT 1 BY id after
// ordering by write_seq makes a retried or racing write invisible even
// before the background merge folds it away.
const eventSelect = `SELECT id, tenant, session_id, user_id, seq, role, content, ts, tool_name, tool_args, tool_result, error, call_id
FROM (
    SELECT * FROM events
    WHERE tenant = {tenant:String} AND %s
    ORDER BY write_seq
    LIMIT 1 BY id
)`

// checkBatch bounds the IDs sent in one query, keeping HTTP URLs small.
const checkBatch = 2000

// AppendEvents implements memory.EventLog. The first write of an event
// wins: repeats inside the batch are dropped here, and a row written again
// later (a retried batch) is hidden by eventSelect and folded away by the
// table's background merges. Nothing is read before writing, so ingest
// costs one insert.
func (s *Store) AppendEvents(ctx context.Context, events []memory.Event) error {
	const op = "clickhouse: append events"
	if err := memory.ValidateEvents(op, events); err != nil {
		return err
	}
	for i, e := range events {
		if err := checkTime(op, "event "+e.ID+" ts", e.TS); err != nil {
			return memory.Invalidf(op, "event %d: %v", i, memory.ErrorMessage(err))
		}
	}
	type key struct{ tenant, id string }
	seen := make(map[key]bool, len(events))
	fresh := make([]memory.Event, 0, len(events))
	for _, e := range events {
		if k := (key{e.Tenant, e.ID}); !seen[k] {
			seen[k] = true
			fresh = append(fresh, e)
		}
	}
	seq := s.reserveSeq(len(fresh))
	return s.insert(ctx, "append events", "events", eventInsertColumns, len(fresh), func(i int) []any {
		e := fresh[i]
		return []any{e.Tenant, toDB(e.TS), e.SessionID, uint32(e.Seq), e.ID, e.UserID, string(e.Role), e.Content,
			e.ToolName, e.ToolArgs, e.ToolResult, e.Error, e.CallID, s.cfg.Retention.days(e.Tenant), seq + uint64(i)}
	})
}

// SessionEvents implements memory.EventLog.
func (s *Store) SessionEvents(ctx context.Context, tenant, sessionID string) ([]memory.Event, error) {
	if err := memory.ValidateTenant("clickhouse: session events", tenant); err != nil {
		return nil, err
	}
	out := []memory.Event{}
	err := s.queryRows(ctx, "session events", fmt.Sprintf(eventSelect, "session_id = {session:String}")+" ORDER BY ts, seq, id",
		func(r driver.Rows) error {
			e, err := scanEvent(r)
			out = append(out, e)
			return err
		}, ch.Named("tenant", tenant), ch.Named("session", sessionID))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SessionEventCount implements memory.EventLog: distinct event IDs, from
// the key columns alone.
func (s *Store) SessionEventCount(ctx context.Context, tenant, sessionID string) (int, error) {
	if err := memory.ValidateTenant("clickhouse: session event count", tenant); err != nil {
		return 0, err
	}
	var n uint64
	err := s.queryRows(ctx, "session event count",
		"SELECT uniqExact(id) FROM events WHERE tenant = {tenant:String} AND session_id = {session:String}",
		func(r driver.Rows) error { return r.Scan(&n) }, ch.Named("tenant", tenant), ch.Named("session", sessionID))
	return int(n), err
}

// SessionUsers implements memory.EventLog, from the key columns and the
// user column alone.
func (s *Store) SessionUsers(ctx context.Context, tenant, sessionID string) ([]string, error) {
	if err := memory.ValidateTenant("clickhouse: session users", tenant); err != nil {
		return nil, err
	}
	out := []string{}
	err := s.queryRows(ctx, "session users",
		"SELECT DISTINCT user_id FROM events WHERE tenant = {tenant:String} AND session_id = {session:String} ORDER BY user_id",
		func(r driver.Rows) error {
			var u string
			err := r.Scan(&u)
			out = append(out, u)
			return err
		}, ch.Named("tenant", tenant), ch.Named("session", sessionID))
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scanEvent(r driver.Rows) (memory.Event, error) {
	var (
		e    memory.Event
		seq  uint32
		role string
	)
	err := r.Scan(&e.ID, &e.Tenant, &e.SessionID, &e.UserID, &seq, &role, &e.Content, &e.TS, &e.ToolName, &e.ToolArgs, &e.ToolResult, &e.Error, &e.CallID)
	e.Seq, e.Role, e.TS = int(seq), memory.Role(role), fromDB(e.TS)
	return e, err
}

// EventSearch asks for the events of a tenant whose content contains a
// keyword (case-insensitive, any script: 报表 works as well as "csv").
type EventSearch struct {
	Tenant    string
	Text      string
	SessionID string    // optional
	Since     time.Time // optional, inclusive
	Until     time.Time // optional, exclusive
	Limit     int       // default 100
}

// SearchEvents returns the events matching q, newest first. The match is a
// substring match on the lower-cased content, which the ngram bloom-filter
// index of the events table accelerates; LIKE wildcards in the text are
// matched literally.
func (s *Store) SearchEvents(ctx context.Context, q EventSearch) ([]memory.Event, error) {
	const op = "clickhouse: search events"
	if err := memory.ValidateTenant(op, q.Tenant); err != nil {
		return nil, err
	}
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return nil, memory.Invalidf(op, "the search text is empty")
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	conds := []string{"lowerUTF8(content) LIKE {pattern:String}"}
	args := []any{ch.Named("tenant", q.Tenant), ch.Named("pattern", "%"+escapeLike(strings.ToLower(text))+"%"), ch.Named("limit", uint64(q.Limit))}
	if q.SessionID != "" {
		conds = append(conds, "session_id = {session:String}")
		args = append(args, ch.Named("session", q.SessionID))
	}
	if !q.Since.IsZero() {
		conds = append(conds, "ts >= {since:DateTime64(3, 'UTC')}")
		args = append(args, ch.Named("since", ceilMilli(q.Since)))
	}
	if !q.Until.IsZero() {
		conds = append(conds, "ts < {until:DateTime64(3, 'UTC')}")
		args = append(args, ch.Named("until", ceilMilli(q.Until)))
	}
	out := []memory.Event{}
	err := s.queryRows(ctx, "search events", fmt.Sprintf(eventSelect, strings.Join(conds, " AND "))+" ORDER BY ts DESC, session_id, seq LIMIT {limit:UInt64}",
		func(r driver.Rows) error {
			e, err := scanEvent(r)
			out = append(out, e)
			return err
		}, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// escapeLike makes s match itself literally inside a LIKE pattern.
func escapeLike(s string) string { return likeEscaper.Replace(s) }

// Sessions implements memory.EventLog.
func (s *Store) Sessions(ctx context.Context, tenant, userID string) ([]string, error) {
	if err := memory.ValidateTenant("clickhouse: sessions", tenant); err != nil {
		return nil, err
	}
	q := "SELECT DISTINCT session_id FROM events WHERE tenant = {tenant:String}"
	args := []any{ch.Named("tenant", tenant)}
	if userID != "" {
		q += " AND user_id = {user:String}"
		args = append(args, ch.Named("user", userID))
	}
	out := []string{}
	err := s.queryRows(ctx, "sessions", q+" ORDER BY session_id", func(r driver.Rows) error {
		var id string
		err := r.Scan(&id)
		out = append(out, id)
		return err
	}, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}
