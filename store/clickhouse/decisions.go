package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

const decisionColumns = "tenant, created_at, id, action, workflow_id, episode_id, candidate_kind, candidate_content, " +
	"candidate, neighbors, verdict, target_id, reason, judge, model, prompt_version, before, after, memory_ids, undoes, write_seq"

// decisionSelect keeps the first written row of each decision.
const decisionSelect = `SELECT ` + decisionColumns + ` FROM (
    SELECT ` + decisionColumns + ` FROM merge_decisions
    WHERE tenant = {tenant:String} AND %s
    ORDER BY write_seq
    LIMIT 1 BY id
)`

// LogDecision implements memory.DecisionLog. A decision already logged is
// left as it is: the first write wins.
func (s *Store) LogDecision(ctx context.Context, d memory.Decision) error {
	if err := validDecision("clickhouse: log decision", d); err != nil {
		return err
	}
	if s.cache != nil {
		logged, ok, err := s.cache.loggedIDs(ctx, s, d.Tenant, []string{d.ID})
		if err != nil || len(logged) > 0 {
			return err
		}
		if ok {
			return s.insertDecision(ctx, d)
		}
	}
	var n uint64
	err := s.queryRows(ctx, "log decision: look up", "SELECT count() FROM merge_decisions WHERE tenant = {tenant:String} AND id = {id:String}",
		func(r driver.Rows) error { return r.Scan(&n) }, ch.Named("tenant", d.Tenant), ch.Named("id", d.ID))
	if err != nil || n > 0 {
		return err
	}
	return s.insertDecision(ctx, d)
}

func (s *Store) insertDecision(ctx context.Context, d memory.Decision) error {
	return s.insertDecisions(ctx, "log decision", []memory.Decision{d})
}

// insertDecisions logs ds in one insert, in their order.
func (s *Store) insertDecisions(ctx context.Context, op string, ds []memory.Decision) error {
	blobs := make([][4]string, len(ds))
	for i, d := range ds {
		for j, v := range []any{d.Candidate, d.Neighbors, d.Before, d.After} {
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("clickhouse: %s: encode decision %s: %w", op, d.ID, err)
			}
			blobs[i][j] = string(b)
		}
	}
	seq := s.reserveSeq(len(ds))
	if s.cache != nil {
		return s.cache.logDecisions(ds, func() error { return s.appendDecisions(ctx, op, ds, blobs, seq) })
	}
	return s.appendDecisions(ctx, op, ds, blobs, seq)
}

func (s *Store) appendDecisions(ctx context.Context, op string, ds []memory.Decision, blobs [][4]string, seq uint64) error {
	return s.insert(ctx, op, "merge_decisions", decisionColumns, len(ds), func(i int) []any {
		d, b := ds[i], blobs[i]
		return []any{d.Tenant, toDB(d.CreatedAt), d.ID, string(d.Action), d.WorkflowID, d.EpisodeID,
			string(d.Candidate.Kind), d.Candidate.Content, b[0], b[1], string(d.Verdict),
			d.TargetID, d.Reason, d.Judge, d.Model, d.PromptVersion, b[2], b[3],
			mentionedMemories(d), d.Undoes, seq + uint64(i)}
	})
}

// AppendDecisions logs decisions its caller knows are not logged yet (the
// ledger, which looked them up when it planned them), in one insert and
// without looking them up again. Were one logged after all, readers still
// see its first write.
func (s *Store) AppendDecisions(ctx context.Context, ds []memory.Decision) error {
	for _, d := range ds {
		if err := validDecision("clickhouse: append decisions", d); err != nil {
			return err
		}
	}
	return s.insertDecisions(ctx, "append decisions", ds)
}

func validDecision(op string, d memory.Decision) error {
	if err := memory.ValidateDecision(op, d); err != nil {
		return err
	}
	return checkTime(op, "decision "+d.ID+" created_at", d.CreatedAt)
}

// mentionedMemories lists the memories a decision names (the same set as
// memory.Decision.Mentions), so that filters and forgetting find it.
func mentionedMemories(d memory.Decision) []string {
	out := []string{}
	add := func(id string) {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	add(d.TargetID)
	for _, m := range d.Before {
		add(m.ID)
	}
	for _, m := range d.After {
		add(m.ID)
	}
	return out
}

func scanDecision(r driver.Rows) (memory.Decision, error) {
	var (
		d                                      memory.Decision
		action, candKind, candContent, verdict string
		candidate, neighbors, before, after    string
		memoryIDs                              []string
		seq                                    uint64
	)
	err := r.Scan(&d.Tenant, &d.CreatedAt, &d.ID, &action, &d.WorkflowID, &d.EpisodeID, &candKind, &candContent,
		&candidate, &neighbors, &verdict, &d.TargetID, &d.Reason, &d.Judge, &d.Model, &d.PromptVersion,
		&before, &after, &memoryIDs, &d.Undoes, &seq)
	if err != nil {
		return d, err
	}
	d.Action, d.Verdict, d.CreatedAt = memory.DecisionAction(action), memory.Verdict(verdict), fromDB(d.CreatedAt)
	for _, f := range []struct {
		text string
		into any
	}{{candidate, &d.Candidate}, {neighbors, &d.Neighbors}, {before, &d.Before}, {after, &d.After}} {
		if err := json.Unmarshal([]byte(f.text), f.into); err != nil {
			return d, fmt.Errorf("decision %s: decode: %w", d.ID, err)
		}
	}
	return d, nil
}

// Decision implements memory.DecisionLog.
func (s *Store) Decision(ctx context.Context, tenant, id string) (memory.Decision, error) {
	const op = "clickhouse: decision"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return memory.Decision{}, err
	}
	ds, err := s.decisions(ctx, "decision", "id = {id:String}", "", ch.Named("tenant", tenant), ch.Named("id", id))
	if err != nil {
		return memory.Decision{}, err
	}
	if len(ds) == 0 {
		return memory.Decision{}, memory.NotFoundf(op, "decision %s not found", id)
	}
	return ds[0], nil
}

// Decisions implements memory.DecisionLog: oldest first (CreatedAt, then
// the order they were logged).
func (s *Store) Decisions(ctx context.Context, f memory.DecisionFilter) ([]memory.Decision, error) {
	const op = "clickhouse: decisions"
	if err := memory.ValidateTenant(op, f.Tenant); err != nil {
		return nil, err
	}
	conds := []string{"1"}
	args := []any{ch.Named("tenant", f.Tenant)}
	if len(f.IDs) > 0 {
		conds = append(conds, "id IN {ids:Array(String)}")
		args = append(args, ch.Named("ids", f.IDs))
	}
	if f.MemoryID != "" {
		conds = append(conds, "has(memory_ids, {memory:String})")
		args = append(args, ch.Named("memory", f.MemoryID))
	}
	if f.WorkflowID != "" {
		conds = append(conds, "workflow_id = {workflow:String}")
		args = append(args, ch.Named("workflow", f.WorkflowID))
	}
	if !f.Before.IsZero() {
		conds = append(conds, "created_at < {before:DateTime64(3, 'UTC')}")
		args = append(args, ch.Named("before", ceilMilli(f.Before)))
	}
	tail := " ORDER BY created_at, write_seq"
	if f.Newest {
		tail = " ORDER BY created_at DESC, write_seq DESC"
	}
	if f.Limit > 0 {
		tail += " LIMIT {limit:UInt64}"
		args = append(args, ch.Named("limit", uint64(f.Limit)))
	}
	return s.decisions(ctx, "decisions", strings.Join(conds, " AND "), tail, args...)
}

// LoggedDecisionIDs returns which of ids are logged, reading the ID
// column only: the ledger asks this of every candidate of a batch, and
// almost every answer is none.
func (s *Store) LoggedDecisionIDs(ctx context.Context, tenant string, ids []string) ([]string, error) {
	const op = "clickhouse: logged decision ids"
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return nil, err
	}
	if s.cache != nil {
		if out, ok, err := s.cache.loggedIDs(ctx, s, tenant, ids); ok || err != nil {
			return out, err
		}
	}
	var out []string
	err := s.queryRows(ctx, "logged decision ids",
		"SELECT DISTINCT id FROM merge_decisions WHERE tenant = {tenant:String} AND id IN {ids:Array(String)}",
		func(r driver.Rows) error {
			var id string
			if err := r.Scan(&id); err != nil {
				return err
			}
			out = append(out, id)
			return nil
		}, ch.Named("tenant", tenant), ch.Named("ids", ids))
	return out, err
}

// decisions runs decisionSelect with the condition where, followed by tail
// (ordering and limit).
func (s *Store) decisions(ctx context.Context, op, where, tail string, args ...any) ([]memory.Decision, error) {
	out := []memory.Decision{}
	err := s.queryRows(ctx, op, fmt.Sprintf(decisionSelect, where)+tail, func(r driver.Rows) error {
		d, err := scanDecision(r)
		out = append(out, d)
		return err
	}, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}
