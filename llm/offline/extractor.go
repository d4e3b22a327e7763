package offline

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/lang/classify"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"

	hlang "github.com/hindsight-memory/hindsight/lang"
)

// Model is what the offline extractor reports as its model.
const Model = "offline"

// Limits of one extraction.
const (
	maxEntities   = 12
	maxSteps      = 12
	maxFailures   = 10
	maxFeedback   = 5
	maxCandidates = 5 // what a careful person keeps from the longest session
	maxStandalone = 2 // lessons from insights alone
	maxTaskRunes  = 200
)

// Extractor distils transcripts in process: rules read the tool calls,
// errors and fixes, and the sentence classifiers (lang/classify) choose
// which user and agent sentences are worth keeping.
type Extractor struct{}

var _ memory.Extractor = (*Extractor)(nil)

// NewExtractor returns the offline extractor.
func NewExtractor() *Extractor { return &Extractor{} }

// InProcess reports that extraction calls no model: it is milliseconds of
// work in this process, which a workflow may run as a local activity.
func (*Extractor) InProcess() bool { return true }

// sessionContext is what lesson rendering needs to know about the session.
type sessionContext struct {
	lang        lang
	chineseData bool // the user said the data has Chinese text
	chineseCols bool // … in its columns or fields
}

var (
	chineseColsRE  = regexp.MustCompile(`(?i)chinese\s+(column|field|header|name)s?|中文(字段|列名|列|表头)|(字段|列名|表头).{0,6}中文`)
	chineseDataRE  = regexp.MustCompile(`(?i)\bchinese\b|中文`)
	encodingWordRE = regexp.MustCompile(`(?i)decode|encod|codec|charset|unicode|乱码|编码|中文|chinese|font|glyph|字体|方块|garbled|mojibake`)
)

// qualifier says "(Chinese fields)" for lessons whose failure was about
// text encoding or rendering in a session whose data is Chinese.
func (c *sessionContext) qualifier(cause string) verb {
	if !c.chineseData || !encodingWordRE.MatchString(cause) {
		return verb{}
	}
	if c.chineseCols {
		return verb{" (Chinese fields)", "（中文字段）"}
	}
	return verb{" (Chinese text)", "（含中文）"}
}

// Extract distils t. It expects a normalised transcript (see
// memory.Transcript.Normalize) so that events carry IDs for evidence.
func (x *Extractor) Extract(ctx context.Context, t memory.Transcript) (memory.Extraction, error) {
	const op = "offline: extract"
	if err := ctx.Err(); err != nil {
		return memory.Extraction{}, err
	}
	// A model that does not match this build would fail every session the
	// same way: say so once, for an operator, instead of retrying.
	for _, r := range []classify.Role{classify.RoleUser, classify.RoleAssistant} {
		if _, err := classify.For(r); err != nil {
			return memory.Extraction{}, memory.Misconfiguredf(op, "%v", err)
		}
	}
	if len(t.Events) == 0 {
		return memory.Extraction{}, memory.Invalidf(op, "session %s has no events", t.SessionID)
	}

	var userText strings.Builder
	for _, e := range t.Events {
		if e.Role == memory.RoleUser {
			userText.WriteString(e.Content)
			userText.WriteString("\n")
		}
	}
	sc := &sessionContext{
		lang:        langOf(userText.String()),
		chineseData: chineseDataRE.MatchString(userText.String()),
		chineseCols: chineseColsRE.MatchString(userText.String()),
	}

	acts := buildActions(t.Events)
	evals := evaluations(t.Events)
	complaints := markComplaints(t.Events, acts, evals)
	lessons := findLessons(acts, sc)
	ins := agentInsights(t.Events)
	attachInsights(lessons, ins)
	lessons = slices.DeleteFunc(lessons, func(l lesson) bool { return l.needsWords && !l.worded })
	lessons = append(lessons, standaloneLessons(ins, acts, outcomeOf(t, acts, evals), maxStandalone)...)
	stmts := userStatements(t.Events)

	task := taskOf(t)
	var others []string
	for _, e := range t.Events {
		if e.Role == memory.RoleUser {
			others = append(others, e.Content)
		}
	}
	taskType := taskTypeOf(task, others...)
	if taskType == "" {
		taskType = llm.TaskOther
	}

	ep := memory.Episode{
		Tenant:     t.Tenant,
		SessionID:  t.SessionID,
		UserID:     t.UserID,
		Agent:      t.Agent,
		Task:       task,
		TaskType:   taskType,
		Entities:   episodeEntities(t, acts, maxEntities),
		Steps:      keySteps(t, acts),
		Failures:   failuresOf(t, acts, complaints),
		Outcome:    outcomeOf(t, acts, evals),
		Feedback:   feedbackOf(evals),
		StartedAt:  t.StartedAt,
		EndedAt:    t.EndedAt,
		EventCount: len(t.Events),
		Extractor:  Model,
	}
	if len(ep.Failures) > maxFailures {
		ep.Failures = ep.Failures[:maxFailures]
	}

	type ranked struct {
		at    int // the event, then the order within it
		seq   int
		score float64
		c     memory.Candidate
		extra []string // a lesson's subject, program and tool
	}
	// What a careful person keeps from one session is a handful: the best
	// lessons (a failure and its fix in the agent's words first) and the
	// user's clearest statements, shown in the order they happened.
	best := func(rs []ranked, n int) []ranked {
		slices.SortStableFunc(rs, func(a, b ranked) int {
			switch {
			case a.score > b.score:
				return -1
			case a.score < b.score:
				return 1
			}
			return a.at - b.at
		})
		return rs[:min(n, len(rs))]
	}
	var ls, ss []ranked
	for _, l := range lessons {
		score := l.score
		if score == 0 {
			score = 1 // a failure and the call that fixed it
			if l.worded {
				score = 1.5
			}
		}
		ls = append(ls, ranked{l.firstEvent, len(ls), score, memory.Candidate{
			Kind:           memory.KindLesson,
			Content:        l.content,
			CounterExample: l.counter,
			TaskType:       taskType,
			About:          memory.AboutWork,
			Evidence:       eventIDs(t, l.evidence),
		}, []string{l.target, l.program, l.tool}})
	}
	for _, s := range uniqueStatements(stmts) {
		tt := taskTypeOf(s.content)
		if tt == "" {
			tt = taskType // said in this context; recall filtered by type still finds it
		}
		ss = append(ss, ranked{s.event, len(ss), s.p, memory.Candidate{
			Kind:     s.kind,
			Content:  s.content,
			TaskType: tt,
			Evidence: eventIDs(t, []int{s.event}),
			Signal:   s.signal,
			About:    s.about,
		}, nil})
	}
	nl, ns := keepBudget(t)
	n := min(maxCandidates, nl+ns)
	rs := append(best(ls, nl), best(ss, ns)...)
	// The best of both, then in the order they were said.
	slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(b.score, a.score) })
	rs = rs[:min(len(rs), n)]
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.at != b.at {
			return a.at - b.at
		}
		return a.seq - b.seq
	})
	var cands []memory.Candidate
	seen := map[string]bool{}
	for _, r := range rs {
		h := memory.ContentHash(r.c.Kind, r.c.Content)
		if seen[h] {
			continue
		}
		seen[h] = true
		// Entities last: they are the costliest part, and duplicates
		// need none.
		r.c.Entities = candidateEntities(r.c.Content, r.c.CounterExample, r.c.Kind != memory.KindLesson, r.extra...)
		cands = append(cands, r.c)
	}
	return memory.Extraction{Episode: ep, Candidates: cands, Model: Model}, nil
}

// keepBudget is how many memories of each kind a session may yield: at
// most two lessons (the rest of a long debugging session is detail), and
// no more statements than the user wrote messages, since a careful person
// rarely keeps two things from one message. The two together are capped
// at maxCandidates, the best-scored first.
func keepBudget(t memory.Transcript) (lessons, statements int) {
	users := 0
	for _, e := range t.Events {
		if e.Role == memory.RoleUser {
			users++
		}
	}
	return 2, min(maxCandidates, max(1, users))
}

// uniqueStatements drops restatements, keeping the first (a user who says
// "always use UTC" in every message said it once, first).
func uniqueStatements(stmts []statement) []statement {
	var out []statement
	seen := map[string]bool{}
	for _, s := range stmts {
		if h := memory.ContentHash(s.kind, s.content); !seen[h] {
			seen[h] = true
			out = append(out, s)
		}
	}
	return out
}

// eventIDs maps event indexes to IDs (computing them for transcripts that
// were not normalised).
func eventIDs(t memory.Transcript, idx []int) []string {
	var out []string
	for _, i := range idx {
		if id := eventID(t, i); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func eventID(t memory.Transcript, i int) string {
	if i < 0 || i >= len(t.Events) {
		return ""
	}
	if id := t.Events[i].ID; id != "" {
		return id
	}
	if t.Tenant != "" && t.SessionID != "" {
		return memory.EventID(t.Tenant, t.SessionID, i)
	}
	return ""
}

var (
	requestLeadEN = regexp.MustCompile(`(?i)^(hi|hey|hello|ok|okay)\b[\s,!.]*|^(can|could|would|will) you( please)?\s+|^please\s+|^i (need|want) you to\s+|^i'd like you to\s+`)
	requestLeadZH = regexp.MustCompile(`^(你好|您好|嗨)[，,！!。\s]*|^(请你|请|帮我|帮忙|麻烦你|麻烦|能不能|可以)\s*`)
	greetingRE    = regexp.MustCompile(`(?i)^(hi|hey|hello|你好|您好|嗨)[\s,!.！，。]*$`)
)

// taskOf is the platform's task, else the first substantive user request,
// cleaned of greetings and politeness and clipped.
func taskOf(t memory.Transcript) string {
	if s := runes.OneLine(t.Task); s != "" {
		return runes.ClipWords(s, maxTaskRunes)
	}
	for _, e := range t.Events {
		if e.Role != memory.RoleUser {
			continue
		}
		var parts []string
		for _, sent := range hlang.Sentences(e.Content) {
			if greetingRE.MatchString(sent) {
				continue
			}
			s := sent
			for {
				c := requestLeadZH.ReplaceAllString(requestLeadEN.ReplaceAllString(s, ""), "")
				if c == s {
					break
				}
				s = c
			}
			if s != sent && (strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？")) {
				// "Can you build X?" is the request "Build X".
				s = strings.TrimRight(s, "?？")
			}
			if wordCount(s) < 3 {
				continue
			}
			parts = append(parts, finish(s))
			if len([]rune(strings.Join(parts, " "))) >= 40 {
				break
			}
		}
		if len(parts) > 0 {
			sep := " "
			if langOf(parts[0]) == langZH {
				sep = ""
			}
			return runes.ClipWords(strings.Join(parts, sep), maxTaskRunes)
		}
	}
	// A subagent's log read alone: its task is the brief it was given.
	for _, e := range t.Events {
		if brief, ok := strings.CutPrefix(e.Content, subagentTask); ok && e.Role == memory.RoleAssistant {
			if s := firstSentences(brief, 40); s != "" {
				return runes.Clip(s, maxTaskRunes)
			}
		}
	}
	return ""
}

// firstSentences are the first sentences of s, up to about n runes.
func firstSentences(s string, n int) string {
	var parts []string
	for _, sent := range hlang.Sentences(s) {
		parts = append(parts, finish(sent))
		if len([]rune(strings.Join(parts, " "))) >= n {
			break
		}
	}
	return strings.Join(parts, " ")
}

var doneRE = regexp.MustCompile(`(?i)^(i've|i have|i|done|created|updated|added|fixed|deployed|imported|generated|saved|wrote|sent)\b.*\b(done|created|updated|added|fixed|deployed|imported|generated|saved|written|sent|loaded|installed)\b|^(已|我已|已经|完成)`)

// keySteps lists the calls that succeeded, in order, without repeats. A
// session without tool calls falls back to what the assistant says it did.
func keySteps(t memory.Transcript, acts []*action) []string {
	var steps []string
	seen := map[string]bool{}
	for _, a := range acts {
		if a.failed {
			continue
		}
		s := a.summary()
		key := memory.Normalize(s)
		if seen[key] {
			continue
		}
		seen[key] = true
		if h := a.resultHint(); h != "" {
			s += " → " + h
		}
		steps = append(steps, s)
		if len(steps) == maxSteps {
			return steps
		}
	}
	if len(acts) > 0 {
		return steps
	}
	for _, e := range t.Events {
		if e.Role != memory.RoleAssistant {
			continue
		}
		for _, sent := range hlang.Sentences(e.Content) {
			if doneRE.MatchString(sent) && !seen[memory.Normalize(sent)] {
				seen[memory.Normalize(sent)] = true
				steps = append(steps, runes.ClipWords(sent, 160))
				break
			}
		}
		if len(steps) == maxSteps {
			break
		}
	}
	return steps
}

// outcomeOf is the platform's outcome, else the user's last verdict, else
// how the last call ended.
func outcomeOf(t memory.Transcript, acts []*action, evals []evaluation) memory.Outcome {
	if t.Outcome != "" && t.Outcome != memory.OutcomeUnknown {
		return t.Outcome
	}
	if n := len(evals); n > 0 {
		switch evals[n-1].sentiment {
		case +1:
			return memory.OutcomeSuccess
		case -1:
			return memory.OutcomeFailure
		default:
			return memory.OutcomePartial
		}
	}
	if n := len(acts); n > 0 {
		if acts[n-1].failed {
			return memory.OutcomeFailure
		}
		return memory.OutcomeSuccess
	}
	return memory.OutcomeUnknown
}

// feedbackOf is the user's verdicts, in order, at most maxFeedback (the
// last ones: the end of a session says most).
func feedbackOf(evals []evaluation) []string {
	var out []string
	for _, e := range evals {
		s := runes.ClipWords(e.text, 200)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > maxFeedback {
		out = out[len(out)-maxFeedback:]
	}
	return out
}
