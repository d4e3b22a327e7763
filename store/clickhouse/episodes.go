package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strings"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

// episodeColumns is the column list shared by both episode tables, in the
// order episodeRow and scanEpisode use.
const episodeColumns = "tenant, ended_at, id, session_id, user_id, agent, task, task_type, entities, steps, " +
	"failure_attempts, failure_causes, failure_event_ids, outcome, feedback, started_at, event_count, status, " +
	"source_episodes, extractor, project, project_name, created_at, retention_days, write_seq"

// archiveSelect copies hot rows into the archive, marked cold, with a write
// sequence above the hot row's, so that the archived copy outranks it even
// if the process that wrote the hot row has a clock ahead of this one's.
const archiveSelect = "tenant, ended_at, id, session_id, user_id, agent, task, task_type, entities, steps, " +
	"failure_attempts, failure_causes, failure_event_ids, outcome, feedback, started_at, event_count, 'cold', " +
	"source_episodes, extractor, project, project_name, created_at, retention_days, greatest({seq:UInt64}, write_seq + 1), now64(3, 'UTC')"

func (s *Store) episodeRow(ep memory.Episode, seq uint64) []any {
	var attempts, causes, eventIDs []string
	for _, f := range ep.Failures {
		attempts, causes, eventIDs = append(attempts, f.Attempt), append(causes, f.Cause), append(eventIDs, f.EventID)
	}
	return []any{ep.Tenant, toDB(ep.EndedAt), ep.ID, ep.SessionID, ep.UserID, ep.Agent, ep.Task, ep.TaskType,
		nonNil(ep.Entities), nonNil(ep.Steps), nonNil(attempts), nonNil(causes), nonNil(eventIDs), string(ep.Outcome),
		nonNil(ep.Feedback), toDB(ep.StartedAt), uint32(max(ep.EventCount, 0)), string(ep.Status),
		nonNil(ep.SourceEpisodes), ep.Extractor, ep.Project, ep.ProjectName, toDB(ep.CreatedAt), s.cfg.Retention.days(ep.Tenant), seq}
}

func scanEpisode(r driver.Rows) (memory.Episode, error) {
	var (
		ep                         memory.Episode
		attempts, causes, eventIDs []string
		outcome, status            string
		eventCount                 uint32
		retention                  uint16
		seq                        uint64
	)
	err := r.Scan(&ep.Tenant, &ep.EndedAt, &ep.ID, &ep.SessionID, &ep.UserID, &ep.Agent, &ep.Task, &ep.TaskType,
		&ep.Entities, &ep.Steps, &attempts, &causes, &eventIDs, &outcome, &ep.Feedback, &ep.StartedAt,
		&eventCount, &status, &ep.SourceEpisodes, &ep.Extractor, &ep.Project, &ep.ProjectName, &ep.CreatedAt, &retention, &seq)
	if err != nil {
		return ep, err
	}
	for i := range attempts {
		f := memory.Failure{Attempt: attempts[i]}
		if i < len(causes) {
			f.Cause = causes[i]
		}
		if i < len(eventIDs) {
			f.EventID = eventIDs[i]
		}
		ep.Failures = append(ep.Failures, f)
	}
	ep.Outcome, ep.Status, ep.EventCount = memory.Outcome(outcome), memory.EpisodeStatus(status), int(eventCount)
	ep.EndedAt, ep.StartedAt, ep.CreatedAt = fromDB(ep.EndedAt), fromDB(ep.StartedAt), fromDB(ep.CreatedAt)
	ep.Entities, ep.Steps, ep.Feedback, ep.SourceEpisodes = nilIfEmpty(ep.Entities), nilIfEmpty(ep.Steps), nilIfEmpty(ep.Feedback), nilIfEmpty(ep.SourceEpisodes)
	return ep, nil
}

// PutEpisode implements memory.EpisodeStore; see PutEpisodes.
func (s *Store) PutEpisode(ctx context.Context, ep memory.Episode) error {
	return s.PutEpisodes(ctx, []memory.Episode{ep})
}

// PutEpisodes stores episodes as PutEpisode does, in two batched inserts
// (hot and archived) instead of one per episode. Each goes to the hot
// table, or to the archive when its status is cold. A copy of the same
// episode left in the other table, or under another EndedAt (part of the
// sorting key, so ReplacingMergeTree would not fold it), is deleted after
// the write, so that readers never see an episode missing.
func (s *Store) PutEpisodes(ctx context.Context, eps []memory.Episode) error {
	const op = "clickhouse: put episode"
	for _, ep := range eps {
		if err := memory.ValidateEpisode(op, ep); err != nil {
			return err
		}
		if err := checkTimes(op, "episode "+ep.ID, "started_at", ep.StartedAt, "ended_at", ep.EndedAt, "created_at", ep.CreatedAt); err != nil {
			return err
		}
	}
	if len(eps) == 0 {
		return nil
	}
	byTenant := map[string][]string{}
	for _, ep := range eps {
		byTenant[ep.Tenant] = append(byTenant[ep.Tenant], ep.ID)
	}
	// The new rows replace every stored row of these episodes, wherever it
	// is: their sequence is above all of them.
	var seen uint64
	var stale bool
	for tenant, ids := range byTenant {
		for chunk := range slices.Chunk(ids, checkBatch) {
			args := []any{ch.Named("tenant", tenant), ch.Named("ids", chunk)}
			most, existed, err := s.latestEpisodeWrite(ctx, args)
			if err != nil {
				return err
			}
			seen, stale = max(seen, most), stale || existed
		}
	}
	seq := s.reserveAfter(len(eps), seen)
	var hot, cold [][]any
	now := toDB(s.now())
	for i, ep := range eps {
		row := s.episodeRow(ep, seq+uint64(i))
		if ep.Status == memory.EpisodeCold {
			cold = append(cold, append(row, now))
		} else {
			hot = append(hot, row)
		}
	}
	if err := s.insert(ctx, "put episode", "episodes", episodeColumns, len(hot), func(i int) []any { return hot[i] }); err != nil {
		return err
	}
	if err := s.insert(ctx, "put episode", "episodes_archive", episodeColumns+", archived_at", len(cold), func(i int) []any { return cold[i] }); err != nil {
		return err
	}
	if !stale {
		return nil
	}
	// Rows of these episodes written before this call are stale. Deleting
	// by write sequence, not by content, keeps a concurrent newer write
	// safe.
	for tenant, ids := range byTenant {
		for chunk := range slices.Chunk(ids, checkBatch) {
			args := []any{ch.Named("tenant", tenant), ch.Named("ids", chunk), ch.Named("seq", seq)}
			for _, table := range []string{"episodes", "episodes_archive"} {
				if err := s.deleteStale(ctx, table, args); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// latestEpisodeWrite finds the latest write of the episodes args name
// (tenant, ids), in either table.
func (s *Store) latestEpisodeWrite(ctx context.Context, args []any) (uint64, bool, error) {
	const where = " WHERE tenant = {tenant:String} AND id IN {ids:Array(String)}"
	return s.latestWrite(ctx, "put episode",
		"SELECT max(w), sum(n) FROM (SELECT max(write_seq) AS w, count() AS n FROM episodes"+where+
			" UNION ALL SELECT max(write_seq) AS w, count() AS n FROM episodes_archive"+where+")", args...)
}

// deleteStale deletes rows of the episodes ids written before seq, if any.
// Checking first keeps the common case (new episodes) to one cheap read.
func (s *Store) deleteStale(ctx context.Context, table string, args []any) error {
	const where = " WHERE tenant = {tenant:String} AND id IN {ids:Array(String)} AND write_seq < {seq:UInt64}"
	var n uint64
	err := s.queryRows(ctx, "put episode: find stale copies", "SELECT count() FROM "+table+where,
		func(r driver.Rows) error { return r.Scan(&n) }, args...)
	if err != nil || n == 0 {
		return err
	}
	return s.exec(ctx, "put episode: delete stale copies", "DELETE FROM "+table+where, args...)
}

// episodeUnion reads both episode tables; %[1]s is the hot-table condition
// and %[2]s the archive's. The newest write of each episode wins.
//
// The union is wrapped in its own subquery: in ClickHouse an ORDER BY or
// LIMIT after UNION ALL binds to the last SELECT only.
const episodeUnion = `SELECT ` + episodeColumns + ` FROM (
    SELECT ` + episodeColumns + ` FROM (
        SELECT ` + episodeColumns + ` FROM episodes FINAL WHERE tenant = {tenant:String} AND %[1]s
        UNION ALL
        SELECT ` + episodeColumns + ` FROM episodes_archive FINAL WHERE tenant = {tenant:String} AND %[2]s
    )
    ORDER BY write_seq DESC
    LIMIT 1 BY id
)`

// Episode implements memory.EpisodeStore.
func (s *Store) Episode(ctx context.Context, tenant, id string) (memory.Episode, error) {
	const op = "clickhouse: episode"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return memory.Episode{}, err
	}
	var (
		out   memory.Episode
		found bool
	)
	err := s.queryRows(ctx, "episode", fmt.Sprintf(episodeUnion, "id = {id:String}", "id = {id:String}"),
		func(r driver.Rows) (err error) {
			out, err = scanEpisode(r)
			found = true
			return err
		}, ch.Named("tenant", tenant), ch.Named("id", id))
	if err != nil {
		return memory.Episode{}, err
	}
	if !found {
		return memory.Episode{}, memory.NotFoundf(op, "episode %s not found", id)
	}
	return out, nil
}

// Episodes implements memory.EpisodeStore.
func (s *Store) Episodes(ctx context.Context, f memory.EpisodeFilter) ([]memory.Episode, error) {
	const op = "clickhouse: episodes"
	if err := memory.ValidateTenant(op, f.Tenant); err != nil {
		return nil, err
	}
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeSummary}
	}
	var names []string
	for _, st := range statuses {
		names = append(names, string(st))
	}
	conds := []string{"status IN {statuses:Array(String)}"}
	args := []any{ch.Named("tenant", f.Tenant), ch.Named("statuses", names)}
	if len(f.IDs) > 0 {
		conds = append(conds, "id IN {ids:Array(String)}")
		args = append(args, ch.Named("ids", f.IDs))
	}
	if f.SessionID != "" {
		conds = append(conds, "session_id = {session:String}")
		args = append(args, ch.Named("session", f.SessionID))
	}
	if f.UserID != "" {
		conds = append(conds, "user_id = {user:String}")
		args = append(args, ch.Named("user", f.UserID))
	}
	if f.TaskType != "" {
		conds = append(conds, "task_type = {task_type:String}")
		args = append(args, ch.Named("task_type", f.TaskType))
	}
	if f.Entity != "" {
		conds = append(conds, "has(entities, {entity:String})")
		args = append(args, ch.Named("entity", f.Entity))
	}
	if f.Project != "" {
		conds = append(conds, "project = {project:String}")
		args = append(args, ch.Named("project", f.Project))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "ended_at >= {since:DateTime64(3, 'UTC')}")
		args = append(args, ch.Named("since", ceilMilli(f.Since)))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "ended_at < {until:DateTime64(3, 'UTC')}")
		args = append(args, ch.Named("until", ceilMilli(f.Until)))
	}
	hot, cold := strings.Join(conds, " AND "), "0"
	if slices.Contains(statuses, memory.EpisodeCold) {
		cold = hot
	}
	if !slices.ContainsFunc(statuses, func(st memory.EpisodeStatus) bool { return st != memory.EpisodeCold }) {
		hot = "0"
	}
	query := fmt.Sprintf(episodeUnion, hot, cold) + " ORDER BY ended_at DESC, id"
	if f.Limit > 0 {
		query += " LIMIT {limit:UInt64}"
		args = append(args, ch.Named("limit", uint64(f.Limit)))
	}
	out := []memory.Episode{}
	err := s.queryRows(ctx, "episodes", query, func(r driver.Rows) error {
		ep, err := scanEpisode(r)
		out = append(out, ep)
		return err
	}, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ArchiveEpisodes implements memory.EpisodeStore: the rows are copied to
// episodes_archive (as cold, with a newer write sequence) and then deleted
// from the hot table. Were the process to stop in between, the archived copy
// already wins on read, and archiving again completes the move.
func (s *Store) ArchiveEpisodes(ctx context.Context, tenant string, ids []string) error {
	const op = "clickhouse: archive episodes"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	args := []any{ch.Named("tenant", tenant), ch.Named("ids", ids), ch.Named("seq", s.nextSeq())}
	var n uint64
	err := s.queryRows(ctx, "archive episodes: count hot rows",
		"SELECT count() FROM episodes WHERE tenant = {tenant:String} AND id IN {ids:Array(String)}",
		func(r driver.Rows) error { return r.Scan(&n) }, args...)
	if err != nil || n == 0 {
		return err
	}
	err = s.exec(insertCtx(ctx), "archive episodes: copy",
		"INSERT INTO episodes_archive ("+episodeColumns+", archived_at) SELECT "+archiveSelect+
			" FROM episodes FINAL WHERE tenant = {tenant:String} AND id IN {ids:Array(String)}", args...)
	if err != nil {
		return err
	}
	return s.exec(ctx, "archive episodes: delete hot rows",
		"DELETE FROM episodes WHERE tenant = {tenant:String} AND id IN {ids:Array(String)}", args...)
}

// nonNil returns an empty slice for nil, which the driver needs for arrays.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nilIfEmpty returns nil for an empty slice, as the domain types use nil
// for "none".
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
