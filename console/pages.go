package console

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
)

// pageSize is how many rows a list shows at a time.
const pageSize = 50

// visible says whether who may see a memory: a token bound to a user sees
// that user's memories, its agents' and the shared ones, never another
// user's.
func (who caller) visible(m memory.Memory) bool { return who.viewer().SeesScope(m.Scope) }

// seesDecision says whether who may see a decision: every memory it
// touched must be visible.
func (who caller) seesDecision(d memory.Decision) bool {
	for _, m := range append(slices.Clone(d.Before), d.After...) {
		if !who.visible(m) {
			return false
		}
	}
	return true
}

func (who caller) scopes() []memory.Scope { return who.viewer().Scopes() }

// currentMemories reads the tenant's current memories (without usage
// when it is not needed).
func (c *Console) currentMemories(r *http.Request, who caller, f memory.MemoryFilter) ([]memory.Memory, error) {
	f.Tenant, f.Scopes = who.Tenant, who.scopes()
	return c.o.Store.Memories(r.Context(), f)
}

// ---- Overview ----

type dayCount struct {
	Day   time.Time
	Count int
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, who caller) error {
	ms, eps, err := c.snapshot(r, who)
	if err != nil {
		return err
	}
	stats := service.Summarize(who.Tenant, ms, eps)
	// The last 30 days, or, when nothing was learned in them (a store of
	// back-filled sessions), the 30 days up to the latest learning.
	end := c.o.Now().UTC()
	var latest time.Time
	for _, m := range ms {
		if m.CreatedAt.After(latest) {
			latest = m.CreatedAt
		}
	}
	const days = 30
	if !latest.IsZero() && latest.Before(end.AddDate(0, 0, -days)) {
		end = latest.UTC()
	}
	start := end.Truncate(24*time.Hour).AddDate(0, 0, -(days - 1))
	perDay := make([]dayCount, days)
	for i := range perDay {
		perDay[i].Day = start.AddDate(0, 0, i)
	}
	var live, never, flagged []memory.Memory
	for _, m := range ms {
		if i := int(m.CreatedAt.UTC().Sub(start) / (24 * time.Hour)); !m.CreatedAt.Before(start) && i < days {
			perDay[i].Count++
		}
		if m.Status == memory.StatusLive {
			live = append(live, m)
			if m.RecallCount == 0 {
				never = append(never, m)
			}
		}
		if slices.Contains(m.Flags, memory.FlagInstructionLike) || m.Status == memory.StatusQuarantined {
			flagged = append(flagged, m)
		}
	}
	most := slices.Clone(live)
	slices.SortFunc(most, func(a, b memory.Memory) int { return cmp.Or(b.RecallCount-a.RecallCount, strings.Compare(a.ID, b.ID)) })
	most = slices.DeleteFunc(most, func(m memory.Memory) bool { return m.RecallCount == 0 })
	slices.SortFunc(never, func(a, b memory.Memory) int { return a.CreatedAt.Compare(b.CreatedAt) })
	c.render(w, r, who, http.StatusOK, "overview", map[string]any{
		"Stats": stats, "Total": len(ms), "PerDay": perDay, "Chart": barChart(perDay),
		"KindChart": kindChart("live memories by kind", stats.LiveByKind), "StatusChart": kindChart("memories by status", stats.ByStatus),
		"Most": most[:min(len(most), 8)], "Never": never[:min(len(never), 8)], "NeverCount": len(never),
		"Conflicts": c.conflicts(live, 8), "Flagged": flagged[:min(len(flagged), 8)], "FlaggedCount": len(flagged),
	})
	return nil
}

// snapshot is the tenant's memories and episodes, read once for every
// panel of the overview and kept while nothing was written: on a store
// that counts its writes (memory.WriteCounter: chDB, the in-memory
// store) until the count moves or snapshotLife passes, else for
// snapshotLifeUncounted. Recall counts may lag by as much. Snapshots are
// kept in a bounded cache (snapshotCache).
func (c *Console) snapshot(r *http.Request, who caller) ([]memory.Memory, []memory.Episode, error) {
	key := who.Tenant + "\x00" + who.UserID + "\x00" + strings.Join(who.Agents, ",")
	counter, counted := c.o.Store.(memory.WriteCounter)
	var writes uint64
	if counted {
		writes = counter.MemoryWrites(who.Tenant)
	}
	now := c.o.Now()
	if s, ok := c.snaps.get(key); ok {
		life := snapshotLifeUncounted
		if counted {
			life = snapshotLife
		}
		if (!counted || s.writes == writes) && now.Sub(s.at) < life {
			return s.ms, s.eps, nil
		}
	}
	// One read of the memories and one of the episodes, side by side.
	var eps []memory.Episode
	var epErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		eps, epErr = c.o.Store.Episodes(r.Context(), memory.EpisodeFilter{Tenant: who.Tenant, UserID: who.UserID,
			Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeSummary, memory.EpisodeCold}})
	}()
	ms, err := c.currentMemories(r, who, memory.MemoryFilter{})
	<-done
	if err != nil {
		return nil, nil, err
	}
	if epErr != nil {
		return nil, nil, epErr
	}
	c.snaps.put(key, &overviewSnapshot{writes: writes, at: now, ms: ms, eps: eps})
	return ms, eps, nil
}

const (
	snapshotLife          = 30 * time.Second
	snapshotLifeUncounted = 10 * time.Second
)

// conflict is two live memories that contradict each other.
type conflict struct{ A, B memory.Memory }

// conflicts are live memories that contradict another live one: a person
// should decide which holds. They are found the way recall marks
// contradictions (recall.Conflicts).
func (c *Console) conflicts(live []memory.Memory, n int) []conflict {
	var out []conflict
	for _, p := range c.conflictIndex.Find(live, n) {
		out = append(out, conflict{p[0], p[1]})
	}
	return out
}

// ---- Memories ----

// memoryQuery is the memories page's filter, as the form sends it.
type memoryQuery struct {
	Q, Kind, Status, TaskType, Entity, Since, Until, After string
	MinConf                                                float64
}

func readMemoryQuery(r *http.Request) memoryQuery {
	v := r.URL.Query()
	q := memoryQuery{Q: strings.TrimSpace(v.Get("q")), Kind: v.Get("kind"), Status: v.Get("status"), TaskType: strings.TrimSpace(v.Get("task_type")),
		Entity: strings.TrimSpace(v.Get("entity")), Since: v.Get("since"), Until: v.Get("until"), After: v.Get("after")}
	q.MinConf, _ = strconv.ParseFloat(v.Get("min_confidence"), 64)
	return q
}

// link is this query with the cursor set.
func (q memoryQuery) link(after string) string {
	v := url.Values{}
	for k, s := range map[string]string{"q": q.Q, "kind": q.Kind, "status": q.Status, "task_type": q.TaskType, "entity": q.Entity, "since": q.Since, "until": q.Until, "after": after} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.MinConf > 0 {
		v.Set("min_confidence", strconv.FormatFloat(q.MinConf, 'f', -1, 64))
	}
	return Path + "/memories?" + v.Encode()
}

// scoredMemory is a row of the memories page: with recall's score when it
// came from a search.
type scoredMemory struct {
	memory.Memory
	Score       *memory.ScoreBreakdown
	Contradicts []string
}

func (c *Console) memories(w http.ResponseWriter, r *http.Request, who caller) error {
	q := readMemoryQuery(r)
	f := memory.MemoryFilter{}
	if q.Kind != "" {
		f.Kinds = []memory.Kind{memory.Kind(q.Kind)}
	}
	status := memory.Status(q.Status)
	if status != "" {
		f.Statuses = []memory.Status{status}
	}
	var since, until time.Time
	if q.Since != "" {
		since, _ = memory.ParseTime(q.Since, nil)
	}
	if q.Until != "" {
		until, _ = memory.ParseTime(q.Until, nil)
	}
	keep := func(m memory.Memory) bool {
		return (q.TaskType == "" || m.TaskType == q.TaskType) &&
			(q.Entity == "" || slices.Contains(memory.NormalizeEntities(m.Entities), memory.NormalizeEntity(q.Entity))) &&
			m.Confidence >= q.MinConf && (since.IsZero() || !m.CreatedAt.Before(since)) && (until.IsZero() || m.CreatedAt.Before(until))
	}
	data := map[string]any{"Q": q, "Kinds": []memory.Kind{memory.KindPreference, memory.KindLesson, memory.KindFact, memory.KindRule},
		"Statuses": []memory.Status{memory.StatusLive, memory.StatusCold, memory.StatusSuperseded, memory.StatusArchived, memory.StatusQuarantined}}
	var rows []scoredMemory
	if q.Q != "" {
		// The search box is recall itself: what an agent would get, with
		// each result's score breakdown.
		resp, err := c.o.Service.Recall(r.Context(), memory.Query{Tenant: who.Tenant, UserID: who.UserID, Text: q.Q, TopK: pageSize,
			Kinds: f.Kinds, TaskType: q.TaskType, Since: since, Until: until, MinConfidence: q.MinConf,
			// A person looks at everything: what was replaced or decayed
			// comes back too, after what is current, marked.
			IncludeCold: status != memory.StatusLive, IncludeSuperseded: status == "" || status == memory.StatusSuperseded})
		if err != nil {
			return err
		}
		for _, x := range resp.Results {
			if (status == "" || x.Memory.Status == status) && keep(x.Memory) && who.visible(x.Memory) {
				b := x.Breakdown
				rows = append(rows, scoredMemory{Memory: x.Memory, Score: &b, Contradicts: x.Contradicts})
			}
		}
		data["Searched"] = true
		data["Parsed"] = resp.Parsed
	} else {
		// Newest first, a page at a time from the store; the cursor is
		// the last row's (UpdatedAt, ID). Filters the store does not know
		// are applied here, reading on until the page is full.
		f.Newest, f.Limit = true, 4*pageSize
		if at, id, ok := parseCursor(q.After); ok {
			f.Before, f.BeforeID = at, id
		}
		for batch := 0; batch < 20 && len(rows) <= pageSize; batch++ {
			ms, err := c.currentMemories(r, who, f)
			if err != nil {
				return err
			}
			for _, m := range ms {
				if keep(m) {
					rows = append(rows, scoredMemory{Memory: m})
				}
			}
			if len(ms) < f.Limit {
				break
			}
			last := ms[len(ms)-1]
			f.Before, f.BeforeID = last.UpdatedAt, last.ID
		}
		if len(rows) > pageSize {
			rows = rows[:pageSize]
			last := rows[len(rows)-1]
			data["Next"] = q.link(cursor(last.UpdatedAt, last.ID))
		}
	}
	data["Rows"] = rows
	c.render(w, r, who, http.StatusOK, "memories", data)
	return nil
}

func cursor(t time.Time, id string) string { return t.UTC().Format(time.RFC3339Nano) + "~" + id }

func parseCursor(s string) (time.Time, string, bool) {
	ts, id, ok := strings.Cut(s, "~")
	if !ok {
		return time.Time{}, "", false
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, id, err == nil
}

// ---- A memory ----

type versionRow struct {
	memory.Memory
	Diff []diffPart // from the version before
}

type decisionRow struct {
	memory.Decision
	Run string // the Temporal UI page of the run that made it
}

func (c *Console) visibleMemory(r *http.Request, who caller, id string) (memory.Memory, error) {
	m, err := c.o.Store.Memory(r.Context(), who.Tenant, id)
	if err != nil {
		return m, err
	}
	if !who.visible(m) {
		return memory.Memory{}, memory.NotFoundf("console", "memory %s", id)
	}
	return m, nil
}

func (c *Console) memory(w http.ResponseWriter, r *http.Request, who caller) error {
	ctx := r.Context()
	m, err := c.visibleMemory(r, who, r.PathValue("id"))
	if err != nil {
		return err
	}
	hist, err := c.o.Store.History(ctx, who.Tenant, m.ID)
	if err != nil {
		return err
	}
	versions := make([]versionRow, len(hist))
	for i, v := range hist {
		versions[i] = versionRow{Memory: v}
		if i > 0 && hist[i-1].Content != v.Content {
			versions[i].Diff = wordDiff(hist[i-1].Content, v.Content)
		}
	}
	slices.Reverse(versions)
	ds, err := c.o.Store.Decisions(ctx, memory.DecisionFilter{Tenant: who.Tenant, MemoryID: m.ID, Newest: true})
	if err != nil {
		return err
	}
	var eps []memory.Episode
	hidden := 0
	if len(m.Sources) > 0 {
		if eps, err = c.o.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: who.Tenant, IDs: m.Sources,
			Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeSummary, memory.EpisodeCold}}); err != nil {
			return err
		}
		// A shared memory learned from other users' sessions says so, and
		// no more: their tasks are theirs.
		n := len(eps)
		eps = slices.DeleteFunc(eps, func(ep memory.Episode) bool { return !who.viewer().SeesEpisode(ep) })
		hidden = n - len(eps)
	}
	related := map[string]memory.Memory{}
	for _, id := range append(slices.Clone(m.Supersedes), m.SupersededBy) {
		if id == "" {
			continue
		}
		if o, err := c.visibleMemory(r, who, id); err == nil {
			related[id] = o
		}
	}
	c.render(w, r, who, http.StatusOK, "memory", map[string]any{
		"M": m, "Versions": versions, "Decisions": c.decisionRows(ds), "Episodes": eps, "Hidden": hidden, "Related": related,
	})
	return nil
}

func (c *Console) decisionRows(ds []memory.Decision) []decisionRow {
	out := make([]decisionRow, len(ds))
	for i, d := range ds {
		out[i] = decisionRow{Decision: d, Run: c.runLink(d.WorkflowID)}
	}
	return out
}

// runLink is the Temporal UI's list of a workflow's runs (the workflow
// list filtered by its ID, which every UI version serves).
func (c *Console) runLink(workflowID string) string {
	if c.o.TemporalUI == "" || workflowID == "" {
		return ""
	}
	return strings.TrimRight(c.o.TemporalUI, "/") + "/namespaces/" + url.PathEscape(c.o.Namespace) + "/workflows?query=" +
		url.QueryEscape(fmt.Sprintf("WorkflowId=%q", workflowID))
}

// ---- Episodes ----

func (c *Console) episodes(w http.ResponseWriter, r *http.Request, who caller) error {
	v := r.URL.Query()
	f := memory.EpisodeFilter{Tenant: who.Tenant, TaskType: strings.TrimSpace(v.Get("task_type")), Limit: 4 * pageSize}
	if p := strings.TrimSpace(v.Get("project")); p != "" {
		// A repository's identity (the worktrees of one repository are one
		// project), or a name, for episodes stored before they had one.
		if id := memory.ProjectOf(p, "").ID; id != "" {
			f.Project = id
		} else {
			f.Entity = memory.NormalizeEntity(p)
		}
	}
	if who.UserID != "" {
		f.UserID = who.UserID
	}
	if s := v.Get("since"); s != "" {
		f.Since, _ = memory.ParseTime(s, nil)
	}
	if u := v.Get("before"); u != "" {
		f.Until, _ = time.Parse(time.RFC3339Nano, u)
	} else if u := v.Get("until"); u != "" {
		f.Until, _ = memory.ParseTime(u, nil)
	}
	outcome := memory.Outcome(v.Get("outcome"))
	if v.Get("archived") == "on" {
		f.Statuses = []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeSummary, memory.EpisodeCold}
	}
	eps, err := c.o.Store.Episodes(r.Context(), f)
	if err != nil {
		return err
	}
	var rows []memory.Episode
	next := ""
	for _, ep := range eps {
		if outcome != "" && ep.Outcome != outcome {
			continue
		}
		if len(rows) == pageSize {
			q := url.Values{}
			for k, s := range map[string]string{"task_type": f.TaskType, "project": v.Get("project"), "outcome": string(outcome), "archived": v.Get("archived"), "since": v.Get("since")} {
				if s != "" {
					q.Set(k, s)
				}
			}
			q.Set("before", rows[len(rows)-1].EndedAt.UTC().Format(time.RFC3339Nano))
			next = Path + "/episodes?" + q.Encode()
			break
		}
		rows = append(rows, ep)
	}
	c.render(w, r, who, http.StatusOK, "episodes", map[string]any{"Rows": rows, "Next": next, "F": f, "Outcome": outcome, "Archived": v.Get("archived") == "on",
		"Since": v.Get("since"), "Project": v.Get("project"), "Outcomes": []memory.Outcome{memory.OutcomeSuccess, memory.OutcomePartial, memory.OutcomeFailure, memory.OutcomeUnknown}})
	return nil
}

// eventRow is a raw event with what it was to the episode.
type eventRow struct {
	memory.Event
	Failed bool // a failing call
	Fix    bool // the call that worked after a failure
}

func (c *Console) episode(w http.ResponseWriter, r *http.Request, who caller) error {
	ctx := r.Context()
	ep, err := c.o.Store.Episode(ctx, who.Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	if !who.viewer().SeesEpisode(ep) {
		return memory.NotFoundf("console", "episode %s", ep.ID)
	}
	events, err := c.o.Store.SessionEvents(ctx, who.Tenant, ep.SessionID)
	if err != nil {
		return err
	}
	failing := map[string]bool{}
	for _, f := range ep.Failures {
		failing[f.EventID] = true
	}
	rows := make([]eventRow, len(events))
	pending := map[string]bool{} // tools with a failure not yet fixed
	for i, e := range events {
		rows[i] = eventRow{Event: e, Failed: failing[e.ID] || e.Error != ""}
		switch {
		case rows[i].Failed && e.ToolName != "":
			pending[e.ToolName] = true
		case e.ToolName != "" && e.Error == "" && pending[e.ToolName] && (e.ToolResult != "" || e.Role == memory.RoleTool):
			rows[i].Fix = true
			delete(pending, e.ToolName)
		}
	}
	produced, err := c.currentMemories(r, who, memory.MemoryFilter{Source: ep.ID})
	if err != nil {
		return err
	}
	c.render(w, r, who, http.StatusOK, "episode", map[string]any{"E": ep, "Events": rows, "Produced": produced, "Withheld": withheldParts(c.o.Screener, ep)})
	return nil
}

// withheldParts are the texts of ep an agent is not shown
// (memory.ForAgent), so the page can mark them for the person reading it.
func withheldParts(s memory.Screener, ep memory.Episode) map[string]bool {
	out := map[string]bool{}
	for _, t := range append(append([]string{ep.Task}, ep.Steps...), ep.Feedback...) {
		if memory.ForAgent(s, t) != t {
			out[t] = true
		}
	}
	for _, f := range ep.Failures {
		for _, t := range []string{f.Attempt, f.Cause} {
			if memory.ForAgent(s, t) != t {
				out[t] = true
			}
		}
	}
	return out
}

// ---- Decisions ----

func (c *Console) decisions(w http.ResponseWriter, r *http.Request, who caller) error {
	f := memory.DecisionFilter{Tenant: who.Tenant, Newest: true, Limit: pageSize + 1}
	if b := r.URL.Query().Get("before"); b != "" {
		f.Before, _ = time.Parse(time.RFC3339Nano, b)
	}
	ds, err := c.o.Store.Decisions(r.Context(), f)
	if err != nil {
		return err
	}
	ds = slices.DeleteFunc(ds, func(d memory.Decision) bool { return !who.seesDecision(d) })
	next := ""
	if len(ds) > pageSize {
		ds = ds[:pageSize]
		next = Path + "/decisions?before=" + url.QueryEscape(ds[len(ds)-1].CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	c.render(w, r, who, http.StatusOK, "decisions", map[string]any{"Rows": c.decisionRows(ds), "Next": next})
	return nil
}

// ---- Actions ----

// requestID makes a form's change safe to resubmit: the same form sent
// twice (a double click, a reload) is one change.
func requestID(r *http.Request) string { return "console-" + r.PostForm.Get("nonce") }

// changeMemory runs a change to the memory the path names, if the caller
// may see it, and shows the decision it made.
func (c *Console) changeMemory(w http.ResponseWriter, r *http.Request, who caller, kind auth.Kind, change func(id string) (memory.Decision, bool, error)) error {
	m, err := c.visibleMemory(r, who, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := c.o.Service.Authorize(r.Context(), who.Tenant, auth.Action{Kind: kind, ID: m.ID}); err != nil {
		return err
	}
	d, _, err := change(m.ID)
	if err != nil {
		return err
	}
	return c.done(w, r, who, d, Path+"/memories/"+m.ID)
}

func (c *Console) correct(w http.ResponseWriter, r *http.Request, who caller) error {
	content := strings.TrimSpace(r.PostForm.Get("content"))
	if content == "" {
		return memory.Invalidf("correct", "write the corrected text, or use “mark outdated”")
	}
	return c.changeMemory(w, r, who, auth.ChangeMemory, func(id string) (memory.Decision, bool, error) {
		return c.o.Service.Correct(r.Context(), who.Tenant, id, content, false, requestID(r))
	})
}

func (c *Console) outdated(w http.ResponseWriter, r *http.Request, who caller) error {
	return c.changeMemory(w, r, who, auth.ChangeMemory, func(id string) (memory.Decision, bool, error) {
		return c.o.Service.Correct(r.Context(), who.Tenant, id, "", true, requestID(r))
	})
}

func (c *Console) pin(w http.ResponseWriter, r *http.Request, who caller) error {
	return c.changeMemory(w, r, who, auth.ChangeMemory, func(id string) (memory.Decision, bool, error) {
		return c.o.Service.Pin(r.Context(), who.Tenant, id, r.PostForm.Get("pinned") == "true", requestID(r))
	})
}

// release lets a quarantined memory out, with the person's reason: a
// decision like any other, undone from the page it leads to.
func (c *Console) release(w http.ResponseWriter, r *http.Request, who caller) error {
	why := strings.TrimSpace(r.PostForm.Get("why"))
	if why == "" {
		return memory.Invalidf("release", "say why this text is knowledge about the work and not an instruction to the agent")
	}
	return c.changeMemory(w, r, who, auth.Release, func(id string) (memory.Decision, bool, error) {
		return c.o.Service.Release(r.Context(), who.Tenant, id, why+" (in the console)", requestID(r))
	})
}

func (c *Console) undo(w http.ResponseWriter, r *http.Request, who caller) error {
	d, err := c.o.Store.Decision(r.Context(), who.Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	if !who.seesDecision(d) {
		return memory.NotFoundf("console", "decision %s", d.ID)
	}
	if err := c.o.Service.Authorize(r.Context(), who.Tenant, auth.Action{Kind: auth.Undo, ID: d.ID}); err != nil {
		return err
	}
	u, err := c.o.Service.Undo(r.Context(), who.Tenant, d.ID, r.PostForm.Get("force") == "true")
	if err != nil {
		return err
	}
	back := safeNext(r.PostForm.Get("back"))
	return c.done(w, r, who, u, back)
}

// done shows the decision a change made, with the way back.
func (c *Console) done(w http.ResponseWriter, r *http.Request, who caller, d memory.Decision, back string) error {
	c.render(w, r, who, http.StatusOK, "done", map[string]any{"D": d, "Back": back, "Run": c.runLink(d.WorkflowID)})
	return nil
}

// confirm asks before a destructive action; its form posts the action.
func (c *Console) confirm(w http.ResponseWriter, r *http.Request, who caller) error {
	v := r.URL.Query()
	what, id := v.Get("what"), v.Get("id")
	var title, detail, action string
	switch what {
	case "forget-memory":
		m, err := c.visibleMemory(r, who, id)
		if err != nil {
			return err
		}
		title, detail, action = "Forget this memory?", m.Content, Path+"/forget"
	case "forget-session":
		if err := c.o.Service.Authorize(r.Context(), who.Tenant, auth.Action{Kind: auth.ForgetSession, ID: id}); err != nil {
			return err
		}
		title, detail, action = "Forget session "+id+"?", "Its events, its episode, and every memory learned only from it are deleted for good.", Path+"/forget"
	case "forget-user":
		if err := c.o.Service.Authorize(r.Context(), who.Tenant, auth.Action{Kind: auth.ForgetUser, ID: id}); err != nil {
			return err
		}
		title, detail, action = "Forget user "+id+"?", "Every session of this user, every memory in their scope, and the shared memories learned only from them are deleted for good.", Path+"/forget"
	case "undo":
		d, err := c.o.Store.Decision(r.Context(), who.Tenant, id)
		if err != nil {
			return err
		}
		if !who.seesDecision(d) {
			return memory.NotFoundf("console", "decision %s", d.ID)
		}
		title, detail, action = "Undo this decision?", fmt.Sprintf("%s %s: %s", d.Action, d.Verdict, d.Reason), Path+"/decisions/"+id+"/undo"
	case "outdated":
		m, err := c.visibleMemory(r, who, id)
		if err != nil {
			return err
		}
		title, detail, action = "Mark this memory outdated?", m.Content, Path+"/memories/"+id+"/outdated"
	case "release":
		m, err := c.visibleMemory(r, who, id)
		if err != nil {
			return err
		}
		if m.Status != memory.StatusQuarantined {
			return memory.Invalidf("release", "memory %s is not in quarantine", id)
		}
		if err := c.o.Service.Authorize(r.Context(), who.Tenant, auth.Action{Kind: auth.Release, ID: id}); err != nil {
			return err
		}
		title, detail, action = "Release this memory from quarantine?", m.Content, Path+"/memories/"+id+"/release"
	default:
		return memory.Invalidf("confirm", "nothing to confirm")
	}
	c.render(w, r, who, http.StatusOK, "confirm", map[string]any{"Title": title, "Detail": detail, "Action": action, "What": what, "ID": id,
		"Back": safeNext(v.Get("back")), "Nonce": c.sign(fmt.Sprint(what, id, c.o.Now().UnixNano()))[:16]})
	return nil
}

func (c *Console) forget(w http.ResponseWriter, r *http.Request, who caller) error {
	in := service.ForgetRequest{Tenant: who.Tenant}
	id := strings.TrimSpace(r.PostForm.Get("id"))
	var act auth.Action
	switch r.PostForm.Get("what") {
	case "forget-memory":
		if _, err := c.visibleMemory(r, who, id); err != nil {
			return err
		}
		in.MemoryIDs, act = []string{id}, auth.Action{Kind: auth.ForgetMemory, ID: id}
	case "forget-session":
		in.SessionIDs, act = []string{id}, auth.Action{Kind: auth.ForgetSession, ID: id}
	case "forget-user":
		in.UserID, act = id, auth.Action{Kind: auth.ForgetUser, ID: id}
	default:
		return memory.Invalidf("forget", "say what to forget: a memory, a session or a user")
	}
	if id == "" {
		return memory.Invalidf("forget", "name the memory, session or user to forget")
	}
	// The rule of memory_forget: a user-bound sign-in forgets its user's
	// sessions and memories, never another user's or the team's.
	if err := c.o.Service.Authorize(r.Context(), who.Tenant, act); err != nil {
		return err
	}
	receipt, err := c.o.Service.Forget(r.Context(), in)
	if err != nil {
		return err
	}
	c.render(w, r, who, http.StatusOK, "receipt", map[string]any{"R": receipt, "What": r.PostForm.Get("what"), "ID": id})
	return nil
}
