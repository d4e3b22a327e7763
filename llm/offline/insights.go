package offline

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/lang/callargs"
	"github.com/hindsight-memory/hindsight/lang/classify"
	"github.com/hindsight-memory/hindsight/memory"

	hlang "github.com/hindsight-memory/hindsight/lang"
)

// An insight is what the agent concluded, in its own words: a root cause,
// why an attempt failed, which fix worked and why, a requirement of a
// tool. Agents say these things between tool calls and in their closing
// summary; the assistant classifier (lang/classify) tells them from plans,
// guesses and status. Insights are the best wording of a lesson: the
// failure→fix pairing finds what changed, the insight says why it
// mattered.
type insight struct {
	event int
	text  string
	p     float64 // the classifier's probability of its best sentence
	final bool    // said in the closing summary
	used  bool
}

// keepInsight is the probability of "insight" a sentence needs;
// keepInsightFixing is what it needs when it was said between a failure
// and the retry that worked, where what the agent says is usually why.
const (
	keepInsight       = 0.5
	keepInsightFixing = 0.15
)

// standaloneInsight is what an insight not tied to any failure→fix pair
// needs to become a lesson of its own.
const standaloneInsight = 0.7

// maxInsightRunes bounds an insight made of several sentences.
const maxInsightRunes = 420

// agentInsights reads the assistant's messages: consecutive insight
// sentences of one message make one insight.
func agentInsights(events []memory.Event) []insight {
	model := classify.MustFor(classify.RoleAssistant)
	last := -1
	for i, e := range events {
		if e.Role == memory.RoleAssistant && strings.TrimSpace(e.Content) != "" {
			last = i
		}
	}
	var out []insight
	for i, e := range events {
		if e.Role != memory.RoleAssistant || strings.TrimSpace(e.Content) == "" || strings.HasPrefix(e.Content, subagentTask) {
			continue // a subagent's brief is instructions, not a finding
		}
		pos := classify.Later
		if i == last {
			pos = classify.Final
		}
		var cur *insight
		for _, sent := range hlang.Sentences(e.Content) {
			if quotedLineRE.MatchString(sent) {
				cur = nil
				continue // a heading, a comment or a quote: what a file says, not a finding
			}
			if narratesOwnWork(sent) {
				cur = nil
				continue // what the agent did in this session, not what it learnt
			}
			p := model.Predict(sent, pos).P[1]
			if p < keepInsightFixing || (cur != nil && p < keepInsight) {
				cur = nil
				continue
			}
			if cur != nil && len([]rune(cur.text))+len([]rune(sent)) <= maxInsightRunes {
				cur.text = endSentence(cur.text) + " " + sent
				cur.p = max(cur.p, p)
				continue
			}
			out = append(out, insight{event: i, text: sent, p: p, final: i == last})
			cur = &out[len(out)-1]
		}
	}
	return out
}

// quotedLineRE starts a line the agent quotes rather than says: a
// Markdown heading or quote, a code comment.
var quotedLineRE = regexp.MustCompile(`^\s*(#|//|--\s|>\s|/\*)`)

// subagentTask marks the brief an agent gave a subagent (see
// memory.ParseClaudeCode).
const subagentTask = "[subagent] task: "

// An agent narrating its own work speaks in the first person singular
// ("I loaded March 17 with …", "so I've left that for the platform
// team", "I'll rerun it tonight", "已用 uv add 加上 pyarrow"): what it
// did, or will do, in this session. A future agent needs what was learnt,
// said of the work ("the loader needs …"), not the report.
var (
	narrationEN = regexp.MustCompile(`(?i)(?:^|[,;:—–]\s*(?:so|and|then|but)?\s*|\b(?:so|and|then)\s+)i(?:(?:'ve|'ll| have| will| had)\s+(?:also\s+|just\s+|already\s+|now\s+)?[a-z]+|\s+(?:also\s+|just\s+|already\s+|then\s+)?[a-z]+(?:ed|en|ne|ft|ot|nt|de|an|ote|ept|ew))\b`)
	narrationZH = regexp.MustCompile(`^(?:我(?:已经?|刚刚?|先|又|再|把|给|用|在|会|来|去)|已经?(?:用|把|给|在|将|按|改|加|删|跑|装|建|提|推|发|完成))`)
)

// So is a proposal not yet tried ("Quickest fix would be to add the
// column", "one option is …", "可以考虑…"): what might work, not what
// did.
var proposalRE = regexp.MustCompile(`(?i)\b(?:would|could|might) be to\b|^(?:one|another|an) option\b|^(?:alternatively|option [a-z0-9])\b|\bi(?:'d| would)? (?:suggest|propose|recommend)\b|^(?:可以考虑|建议|或者可以|也可以)`)

func narratesOwnWork(sent string) bool {
	s := hlang.StripLead(strings.TrimSpace(sent))
	return narrationEN.MatchString(s) || narrationZH.MatchString(s) || proposalRE.MatchString(s)
}

// Openings of an agent's sentence that report rather than state.
var insightLeadRE = regexp.MustCompile(`(?i)^(?:done|fixed|works|working|recovered|resolved|summary|in short|tl;dr|note|noted|understood|confirmed|got it|ok(?:ay)?|good news|update|result|status|key point|the key|关键|要点|总结|小结|结论|原因|根因|已解决|已修复|好的|明白)\s*[:：,，.。;；—-]+\s*`)

// insightMemory is an insight as a lesson's content: its reporting
// opening dropped, ending in a full stop.
func insightMemory(s string) string {
	s = strings.TrimSpace(strings.TrimLeftFunc(s, func(r rune) bool { return unicode.Is(unicode.So, r) || unicode.IsSpace(r) || r == '\ufe0f' }))
	for {
		t := insightLeadRE.ReplaceAllString(s, "")
		if t == s || wordCount(t) < 3 {
			break
		}
		s = t
	}
	return finish(s)
}

// lessonTokens are the words of a lesson that tie an insight to it: its
// fix's settings, the failed call's target and program, and its cause.
func lessonTokens(l lesson, fix *action) map[string]bool {
	set := map[string]bool{}
	addAll := func(s string) {
		for _, t := range tokens(hlang.FoldQuotes(s)) {
			if len(t) >= 3 && !isNumber(t) && !hollowWords[t] {
				set[t] = true
			}
		}
	}
	for _, p := range l.settings {
		addAll(p.Key)
		addAll(p.Value)
	}
	if fix != nil {
		addAll(fix.primary)
	}
	addAll(l.target)
	addAll(l.program)
	addAll(l.counter)
	addAll(l.about)
	return set
}

func overlap(text string, set map[string]bool) int {
	n := 0
	seen := map[string]bool{}
	for _, t := range tokens(hlang.FoldQuotes(text)) {
		if set[t] && !seen[t] {
			seen[t] = true
			n++
		}
	}
	return n
}

// attachInsights words each lesson with the insight that explains it: one
// said while the failure was being fixed or in the closing summary, that
// shares words with the fix or the failure. The lesson keeps the fix's
// settings verbatim: if the insight does not name them, they follow it.
func attachInsights(ls []lesson, ins []insight) {
	for li := range ls {
		l := &ls[li]
		set := lessonTokens(*l, l.fix)
		lo, hi := l.firstEvent-1, l.lastEvent+3
		best, bestScore := -1, 0.0
		for k, in := range ins {
			if in.used {
				continue
			}
			between := in.event > l.firstEvent && in.event < l.lastEvent
			if in.p < keepInsight && !(l.needsWords && between) {
				continue
			}
			near := in.event >= lo && in.event <= hi
			ov := overlap(in.text, set)
			if !near && !(in.final && ov > 0) {
				continue
			}
			if ov == 0 && !near {
				continue
			}
			score := in.p * (1 + float64(min(ov, 4)))
			if score > bestScore {
				best, bestScore = k, score
			}
		}
		if best < 0 {
			continue
		}
		// An insight must share words with the lesson, unless the lesson
		// was fixed by something the calls do not show and the insight was
		// said between the failure and the retry that worked.
		between := ins[best].event > l.firstEvent && ins[best].event < l.lastEvent
		if overlap(ins[best].text, set) == 0 && !(l.needsWords && between) {
			continue
		}
		ins[best].used = true
		content := insightMemory(ins[best].text)
		if missing := missingSettings(content, l.settings); len(missing) > 0 {
			content = strings.TrimRight(content, ".。") + fixSuffix(content, missing)
		} else if l.showFix && !mentionsAny(content, l.fixWords) {
			content = strings.TrimRight(content, ".。") + fixCall(content, l.fix)
		}
		l.content = content
		l.worded = true
		if !slices.Contains(l.evidence, ins[best].event) {
			l.evidence = append(l.evidence, ins[best].event)
			slices.Sort(l.evidence)
		}
	}
}

// missingSettings are the settings a fix changed that an insight does
// not mention.
func missingSettings(text string, settings []callargs.Param) []callargs.Param {
	f := hlang.FoldQuotes(text)
	var out []callargs.Param
	for _, p := range settings {
		if !strings.Contains(f, hlang.FoldQuotes(p.Key)) && !strings.Contains(f, hlang.FoldQuotes(p.Value)) {
			out = append(out, p)
		}
	}
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

func fixSuffix(content string, ps []callargs.Param) string {
	if langOf(content) == langZH {
		return "（修复：" + callargs.Join(ps, "、") + "）。"
	}
	return " (fix: " + callargs.Join(ps, " ") + ")."
}

// standaloneLessons turns the strongest insights not tied to a
// failure→fix pair into lessons: what the agent concluded about a problem
// it could not fix, or a finding stated in its summary.
func standaloneLessons(ins []insight, acts []*action, outcome memory.Outcome, max int) []lesson {
	// Without a call that failed or changed something, in a session that
	// went fine, the agent only looked or explained: what it knows in
	// general, or found passing by, is not experience of this
	// environment. An investigation that did not end in success is worth
	// its findings, however it looked.
	worked := slices.ContainsFunc(acts, func(a *action) bool { return a.failed || changes(a) })
	if !worked && (outcome == memory.OutcomeSuccess || len(acts) == 0) {
		return nil
	}
	var cands []insight
	for _, in := range ins {
		if !in.used && in.p >= standaloneInsight && substantive(in.text) {
			cands = append(cands, in)
		}
	}
	slices.SortStableFunc(cands, func(a, b insight) int {
		sa, sb := a.p, b.p
		if a.final {
			sa += 0.1
		}
		if b.final {
			sb += 0.1
		}
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return a.event - b.event
	})
	var out []lesson
	for _, in := range cands {
		if len(out) == max {
			break
		}
		l := lesson{content: insightMemory(in.text), evidence: []int{in.event}, firstEvent: in.event, lastEvent: in.event, worded: true, score: in.p}
		// A diagnosis is usually followed by what the agent changed about
		// it: the lesson keeps that change, verbatim, if the agent's words
		// do not already carry it.
		if fix := changeAfter(acts, in.event); fix != nil {
			if !mentionsCall(l.content, fix) {
				l.content = strings.TrimRight(l.content, ".。") + fixCall(l.content, fix)
			}
			l.evidence = append(l.evidence, fix.events...)
			l.lastEvent = fix.lastEvent()
		}
		// The failure it is about, when one came before it.
		for k := len(acts) - 1; k >= 0; k-- {
			a := acts[k]
			if a.failed && a.lastEvent() < in.event {
				l.counter = failureLine(a)
				l.tool, l.program = a.tool, programOf(a)
				break
			}
		}
		out = append(out, l)
	}
	return out
}

// failureLine says what failed and how, for a counter-example.
func failureLine(a *action) string {
	s := a.named(100) + " failed"
	if a.cause != "" {
		s += ": " + a.cause
	}
	return s
}

// changes reports whether a call changes something rather than looking.
func changes(a *action) bool {
	switch a.kind {
	case primaryCommand, primaryQuery:
		return !readsOnly(a)
	case primaryCode:
		return len(params(a)) > 0 || writeCodeRE.MatchString(a.primary)
	}
	return len(params(a)) > 0
}

var writeCodeRE = regexp.MustCompile(`\b(?:to_\w+|write\w*|save\w*|insert\w*|upload\w*|execute|send\w*|put|post|patch|delete|update)\s*\(`)

// changeAfter is the first call after event e (among the next few) that
// succeeded and changed something: what the agent did about what it
// found.
func changeAfter(acts []*action, e int) *action {
	seen := 0
	for _, a := range acts {
		if a.events[0] <= e {
			continue
		}
		if seen++; seen > 3 {
			break
		}
		if executed(a) && isCheck(a) {
			return nil // verified: what follows is the next step (a commit), not the fix
		}
		if !a.failed && executed(a) && changes(a) && strings.TrimSpace(a.primary) != "" && checkFix(nil, a, nil, a.primary) == nil {
			return a
		}
	}
	return nil
}

// mentionsCall reports whether text already names what the call changed:
// one of its settings, or its distinctive words.
func mentionsCall(text string, a *action) bool {
	f := hlang.FoldQuotes(text)
	for _, p := range params(a) {
		if len(p.Value) >= 3 && strings.Contains(f, hlang.FoldQuotes(p.Value)) || len(p.Key) >= 4 && strings.Contains(f, hlang.FoldQuotes(strings.TrimLeft(p.Key, "-"))) {
			return true
		}
	}
	n := 0
	for _, t := range tokens(hlang.FoldQuotes(a.primary)) {
		if len(t) >= 5 && !hollowWords[t] && strings.Contains(f, t) {
			n++
		}
	}
	return n >= 2
}

// mentionsAny reports whether text names one of words (three letters or
// more).
func mentionsAny(text string, words []string) bool {
	f := hlang.FoldQuotes(text)
	for _, w := range words {
		if len(w) >= 3 && strings.Contains(f, hlang.FoldQuotes(w)) {
			return true
		}
	}
	return false
}

func fixCall(content string, a *action) string {
	call := "`" + summarizeCall(a, 120) + "`"
	if langOf(content) == langZH {
		return "（修复：" + call + "）。"
	}
	return " (fix: " + call + ")."
}

// Chatter reports whether event i of t holds nothing to learn: a user
// message after the opening request, or an assistant message before the
// closing summary, with no tool call, result or error, that the
// classifiers read as chatter with high confidence (classify.Chatter).
// The LLM extractor leaves such events out of its prompt
// (llm.WithChatter): the opening request, tool calls, errors and the
// agent's summary always reach the model.
func Chatter(t memory.Transcript, i int) bool {
	if i < 0 || i >= len(t.Events) {
		return false
	}
	e := t.Events[i]
	if e.ToolName != "" || e.ToolArgs != "" || e.ToolResult != "" || e.Error != "" {
		return false
	}
	switch e.Role {
	case memory.RoleUser:
		first := slices.IndexFunc(t.Events, func(e memory.Event) bool { return e.Role == memory.RoleUser })
		return i != first && classify.Chatter(classify.RoleUser, e.Content, classify.Later)
	case memory.RoleAssistant:
		last := -1
		for k, e := range t.Events {
			if e.Role == memory.RoleAssistant && strings.TrimSpace(e.Content) != "" {
				last = k
			}
		}
		return i != last && classify.Chatter(classify.RoleAssistant, e.Content, classify.Later)
	}
	return false
}

// Thresholds of NothingToLearn: well below what keeps a statement or an
// insight, so that a session the classifiers are unsure about still goes
// to the model.
const (
	nothingStatement = 0.05
	nothingInsight   = 0.1
)

// NothingToLearn reports whether a session, by the offline classifiers,
// holds nothing a model could distil: no failed call, no call that
// changed something (only lookups, or none at all), no user sentence
// that may state something lasting (beyond the opening request), no
// agent sentence that may be a finding. Chat, lookups and one-off
// questions are such sessions; the LLM extractor records their episodes
// without a model call (llm.WithoutModelWhen).
func NothingToLearn(t memory.Transcript) bool {
	for _, a := range buildActions(t.Events) {
		if a.failed || changes(a) {
			return false // something failed, or was changed: there may be a lesson
		}
	}
	um := classify.MustFor(classify.RoleUser)
	am := classify.MustFor(classify.RoleAssistant)
	first := slices.IndexFunc(t.Events, func(e memory.Event) bool { return e.Role == memory.RoleUser })
	for i, e := range t.Events {
		switch e.Role {
		case memory.RoleUser:
			pos, need := classify.Later, nothingStatement
			if i == first {
				pos, need = classify.Opening, 0.3
			}
			for _, s := range hlang.Sentences(e.Content) {
				if 1-um.Predict(s, pos).P[0] >= need {
					return false
				}
			}
		case memory.RoleAssistant:
			for _, s := range hlang.Sentences(e.Content) {
				if am.Predict(s, classify.Later).P[1] >= nothingInsight {
					return false
				}
			}
		}
	}
	return true
}
