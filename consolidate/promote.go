package consolidate

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/lang/callargs"
	"github.com/hindsight-memory/hindsight/lang/inject"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// DefaultPromoteMinEpisodes is how many episodes of a cluster must show a
// lesson before it is promoted: the seeds' "three or more independent
// episodes" (memory.DefaultLifecycle.MultiSourceCount), the evidence at
// which confidence may reach its multi-source cap.
const DefaultPromoteMinEpisodes = 3

// DefaultPromoteMaxLessons caps the lessons promoted from one cluster.
const DefaultPromoteMaxLessons = 5

// maxStepLessons caps the lessons drawn from shared steps alone, which are
// weaker evidence than a failure and its fix.
const maxStepLessons = 2

// PromoteConfig configures Promotions. Zero fields take the defaults.
type PromoteConfig struct {
	// MinEpisodes is the least number of episodes a lesson must be seen in
	// (default DefaultPromoteMinEpisodes, at least 2).
	MinEpisodes int
	// MaxLessons caps the lessons of one cluster (default
	// DefaultPromoteMaxLessons).
	MaxLessons int
	// Screener reads lessons for poisoning; nil means lang/inject's
	// Detector.
	Screener memory.Screener
}

func (c PromoteConfig) withDefaults() PromoteConfig {
	if c.MinEpisodes == 0 {
		c.MinEpisodes = DefaultPromoteMinEpisodes
	}
	if c.MaxLessons == 0 {
		c.MaxLessons = DefaultPromoteMaxLessons
	}
	if c.Screener == nil {
		c.Screener = inject.Detector{}
	}
	return c
}

// Validate checks c after defaults are applied.
func (c PromoteConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.MinEpisodes < 2:
		return memory.Invalidf("consolidate: promote config", "min episodes %d is below 2: one episode is not a recurring lesson", c.MinEpisodes)
	case c.MaxLessons < 1:
		return memory.Invalidf("consolidate: promote config", "max lessons %d is below 1", c.MaxLessons)
	}
	return nil
}

// Promotion is a lesson seen across several episodes of a cluster, as a
// candidate for the merge pipeline.
type Promotion struct {
	// Candidate is a lesson: an imperative with the concrete parameters,
	// and, for a failure, what failed and why as its counter-example. Its
	// text carries no counts or dates, so the same lesson promoted again
	// next week is the same candidate (same content hash).
	Candidate memory.Candidate
	// Sources are the member episodes that show the lesson, sorted. Merge
	// the candidate with all of them as sources: a lesson already known
	// gains them (and with them confidence, see memory.Lifecycle) instead
	// of a duplicate being added.
	Sources []string
	// Seen is len(Sources).
	Seen int
	// Reason says what the promotion rests on, for the decision log.
	Reason string
}

// Promotions finds the lessons that recur in at least cfg.MinEpisodes of a
// cluster's members:
//
//   - A failure that recurs (the same action failing with the same error,
//     see sameAction and sameCause) and that the members fixed the same
//     way, by a corrected retry visible in their steps (a step similar to
//     the failed attempt) or, when the retry was identical, by the setup
//     step just before it (an install, a config change). The lesson
//     states the fix with its parameters: what changed between attempt and
//     retry ("use encoding='gbk' instead of encoding='utf-8'"), the setting
//     that was added ("add --timeout 10m"), or the setup to run first. Its
//     sources are the members that show both the failure and the fix.
//   - A recurring failure without a common fix still teaches what to
//     avoid when the failed attempt has settings ("do not use
//     encoding='utf-8'"); its sources are the members that show it.
//   - A step that every successful member ran with identical wording,
//     when there are at least cfg.MinEpisodes successes, the step has
//     concrete settings, never failed in the cluster, is not already a
//     promoted fix, and either prepares the ground (an install, a
//     setting) or is missing from some episode that did not succeed. At
//     most two per cluster: shared habits are weaker evidence than a
//     failure and its fix.
//
// Lessons whose text reads like an instruction to the agent
// (instruction-like to cfg.Screener) are never promoted. Lessons are written in
// Chinese when the members' tasks are, ordered by how many episodes show
// them (ties by first appearance), at most cfg.MaxLessons. The result
// depends on the set of members, not their order. Errors (EINVALID) as
// for SummarizeOffline, and an invalid config.
func Promotions(tenant string, members []memory.Episode, cfg PromoteConfig) ([]Promotion, error) {
	const op = "consolidate: promotions"
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := validateMembers(op, tenant, members); err != nil {
		return nil, err
	}
	d := newDigest(members)
	p := &promoter{d: d, cfg: cfg, index: map[string]int{}}
	for _, g := range d.failures {
		if len(g.members) < cfg.MinEpisodes {
			break // groups are sorted by member count
		}
		p.failureLesson(g)
	}
	p.stepLessons()
	slices.SortStableFunc(p.out, func(a, b Promotion) int { return cmp.Compare(b.Seen, a.Seen) })
	if len(p.out) > cfg.MaxLessons {
		p.out = p.out[:cfg.MaxLessons]
	}
	return p.out, nil
}

type promoter struct {
	d     *digest
	cfg   PromoteConfig
	out   []Promotion
	index map[string]int // content hash → position in out
	fixes []action       // fixes already promoted
}

// fix is how one member got past a failed attempt.
type fix struct {
	member int
	step   action
	setup  bool // a setup step before an identical retry
}

// findFix looks for the fix of attempt in one member's steps: the most
// similar later call of the same tool that differs from the attempt, or,
// when the closest step is the attempt itself run again, the setup step
// right before it.
func findFix(steps []string, attempt action) (fix, bool) {
	tool, _ := splitTool(attempt.text)
	acts := make([]action, 0, len(steps))
	for _, s := range steps {
		acts = append(acts, newAction(s))
	}
	best, bestSim := -1, 0.0
	for i, a := range acts {
		if t, _ := splitTool(a.text); tool != "" && t != "" && t != tool {
			continue
		}
		if sim := jaccard(a.toks, attempt.toks); sim >= fixJaccard && sim > bestSim {
			best, bestSim = i, sim
		}
	}
	if best < 0 {
		return fix{}, false
	}
	if acts[best].norm != attempt.norm {
		return fix{step: acts[best]}, true
	}
	if best > 0 {
		prev := acts[best-1]
		if _, call := splitTool(prev.text); setupRE.MatchString(call) && jaccard(prev.toks, attempt.toks) < fixJaccard {
			return fix{step: prev, setup: true}, true
		}
	}
	return fix{}, false
}

// setupRE recognises calls that prepare the ground (install, configure),
// as the offline extractor does.
var setupRE = regexp.MustCompile(`(?i)\b(install|config|set|export|mkdir|chmod|chown|login|auth|enable|init|migrate|apt|brew|conda|pip3?|npm|go get|add|mount|source|activate)\b`)

func (p *promoter) failureLesson(g *failureGroup) {
	d := p.d
	// Group the members' fixes; the most common one, if enough members
	// share it, is the lesson.
	type fixGroup struct {
		leader  fix
		members []int
	}
	var groups []*fixGroup
	for _, t := range g.tries {
		f, ok := findFix(d.members[t.member].Steps, t.attempt)
		if !ok {
			continue
		}
		f.member = t.member
		i := slices.IndexFunc(groups, func(fg *fixGroup) bool {
			return fg.leader.setup == f.setup && sameAction(fg.leader.step, f.step)
		})
		if i < 0 {
			groups = append(groups, &fixGroup{leader: f})
			i = len(groups) - 1
		}
		groups[i].members = append(groups[i].members, t.member)
	}
	var best *fixGroup
	for _, fg := range groups {
		if best == nil || len(fg.members) > len(best.members) {
			best = fg
		}
	}
	attempt := newAction(g.attempts.best())
	causeText := g.causes.best()
	if best != nil && len(best.members) >= p.cfg.MinEpisodes {
		content := renderFixLesson(d.zh, attempt, best.leader, causeText)
		if content != "" {
			p.fixes = append(p.fixes, best.leader.step)
			p.add(content, counterExample(d.zh, attempt, causeText), best.members, g,
				fmt.Sprintf("failure seen in %d of %d episodes, fixed the same way in %d", len(g.members), len(d.members), len(best.members)))
			return
		}
	}
	if content := renderAvoidLesson(d.zh, attempt, causeText); content != "" {
		p.add(content, counterExample(d.zh, attempt, causeText), g.members, g,
			fmt.Sprintf("failure seen in %d of %d episodes, with no common fix", len(g.members), len(d.members)))
	}
}

func (p *promoter) stepLessons() {
	d := p.d
	var winners, others []int
	for mi, ep := range d.members {
		if ep.Outcome == memory.OutcomeSuccess {
			winners = append(winners, mi)
		} else {
			others = append(others, mi)
		}
	}
	if len(winners) < p.cfg.MinEpisodes {
		return
	}
	added := 0
	for _, g := range d.steps {
		if added == maxStepLessons || len(g.members) < len(winners) {
			break
		}
		rep := newAction(g.words.best())
		if params(rep.text) == nil || !p.allRan(winners, rep) || p.failedOrPromoted(rep) {
			continue
		}
		// A habit of every success is only a lesson when something says it
		// matters: an episode that went wrong without it, or a step that
		// prepares the ground (an install, a setting). Otherwise "append
		// to the sales table" would become advice for every import.
		_, call := splitTool(rep.text)
		if !setupRE.MatchString(call) && (len(others) == 0 || p.allRan(others, rep)) {
			continue
		}
		if p.add(renderStepLesson(d, rep), "", winners, nil,
			fmt.Sprintf("step run by all %d successful episodes of %d", len(winners), len(d.members))) {
			added++
		}
	}
}

// allRan reports whether every member of idx has a step worded exactly as
// rep (after normalisation and without its result).
func (p *promoter) allRan(idx []int, rep action) bool {
	for _, mi := range idx {
		if !slices.ContainsFunc(p.d.members[mi].Steps, func(s string) bool { return newAction(s).norm == rep.norm }) {
			return false
		}
	}
	return true
}

func (p *promoter) failedOrPromoted(a action) bool {
	for _, g := range p.d.failures {
		if sameAction(g.attempt, a) {
			return true
		}
	}
	return slices.ContainsFunc(p.fixes, func(f action) bool { return sameAction(f, a) })
}

func (p *promoter) instructionLike(text string) bool {
	_, ilk := p.cfg.Screener.Screen(text)
	return ilk
}

// add records a lesson unless it reads like an instruction to the agent;
// a lesson with the same text as an earlier one joins it. It reports
// whether the lesson is new.
func (p *promoter) add(content, counter string, memberIdx []int, g *failureGroup, reason string) bool {
	if p.instructionLike(content) || p.instructionLike(counter) {
		return false
	}
	d := p.d
	var sources, evidence []string
	var sub []memory.Episode
	for _, mi := range memberIdx {
		sources = append(sources, d.members[mi].ID)
		sub = append(sub, d.members[mi])
	}
	if g != nil {
		in := map[string]bool{}
		for _, mi := range memberIdx {
			for _, f := range d.members[mi].Failures {
				if f.EventID != "" {
					in[f.EventID] = true
				}
			}
		}
		for _, e := range g.events {
			if in[e] {
				evidence = append(evidence, e)
			}
		}
	}
	key := memory.ContentHash(memory.KindLesson, content)
	if i, ok := p.index[key]; ok {
		pr := &p.out[i]
		pr.Sources = sortedUnion(pr.Sources, sources)
		pr.Seen = len(pr.Sources)
		pr.Candidate.Evidence = sortedUnion(pr.Candidate.Evidence, evidence)
		if t := latestEnd(sub); t.After(pr.Candidate.ObservedAt) {
			pr.Candidate.ObservedAt = t
		}
		pr.Reason += "; " + reason
		return false
	}
	p.index[key] = len(p.out)
	sources = sortedUnion(nil, sources)
	p.out = append(p.out, Promotion{
		Candidate: memory.Candidate{
			Kind:           memory.KindLesson,
			Content:        content,
			CounterExample: counter,
			TaskType:       d.taskType(),
			Entities:       newDigest(sub).entities(6),
			Evidence:       sortedUnion(nil, evidence),
			// Learned by the sessions that show it, as of the last one.
			ObservedAt: latestEnd(sub),
		},
		Sources: sources,
		Seen:    len(sources),
		Reason:  reason,
	})
	return true
}

func latestEnd(eps []memory.Episode) time.Time {
	var t time.Time
	for _, ep := range eps {
		if ep.EndedAt.After(t) {
			t = ep.EndedAt
		}
	}
	return t
}

func sortedUnion(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// Rendering. A call is named by what it calls: the function for code
// (`pd.read_csv`), the program and sub-command for a command (`helm
// upgrade`).

var callRE = regexp.MustCompile(`([A-Za-z_][\w.]*)\(`)

// commandTools are tool names whose calls are shell commands.
var commandTools = map[string]bool{"shell": true, "bash": true, "sh": true, "zsh": true, "terminal": true, "cmd": true, "powershell": true, "exec": true, "run_command": true}

// callee names the call of an attempt and says whether it is a command.
func callee(a action) (name string, command bool) {
	tool, call := splitTool(a.text)
	if !commandTools[strings.ToLower(tool)] {
		if m := callRE.FindStringSubmatch(call); m != nil {
			return m[1], false
		}
	}
	var words []string
	for _, w := range strings.Fields(call) {
		if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "=/.'\"|;&<>()") || len(words) == 2 {
			break
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return "", true
	}
	return strings.Join(words, " "), true
}

// codeOf is a step or attempt without its tool prefix, for quoting.
func codeOf(a action) string {
	_, call := splitTool(a.text)
	return runes.ClipWords(call, 120)
}

// diffParams compares the settings of an attempt and its fix: settings
// the fix changed (with the attempt's old values) and settings it added.
func diffParams(attempt, fixed string) (changed, old, added []callargs.Param) {
	before := params(attempt)
	for _, p := range params(fixed) {
		i := slices.IndexFunc(before, func(q callargs.Param) bool { return q.Key == p.Key })
		switch {
		case i < 0:
			added = append(added, p)
		case before[i].Value != p.Value:
			changed = append(changed, p)
			old = append(old, before[i])
		}
	}
	return changed, old, added
}

// failedWith phrases how something failed: "failed with UnicodeDecodeError"
// when the cause names an error, else "failed: <first line>"; in Chinese
// "会报 …".
func failedWith(zh bool, cause string) string {
	short := shortCause(cause)
	switch {
	case short == "" && zh:
		return "会失败"
	case short == "":
		return "failed"
	case zh:
		return "会报 " + short
	case errorName(cause) != "":
		return "failed with " + short
	}
	return "failed: " + short
}

func renderFixLesson(zh bool, attempt action, f fix, cause string) string {
	name, command := callee(attempt)
	if name == "" {
		return ""
	}
	subjEN, subjZH := "calling `"+name+"`", "调用 `"+name+"`"
	if command {
		subjEN, subjZH = "running `"+name+"`", "执行 `"+name+"`"
	}
	why := failedWith(zh, cause)
	if f.setup {
		if zh {
			return zhSpace(fmt.Sprintf("%s之前先执行 `%s`；否则%s。", subjZH, codeOf(f.step), why))
		}
		return fmt.Sprintf("Before %s, run `%s`; without it, it %s.", subjEN, codeOf(f.step), why)
	}
	changed, old, added := diffParams(attempt.text, f.step.text)
	switch {
	case len(changed) > 0:
		use, was := callargs.Join(append(changed, added...), " "), callargs.Join(old, " ")
		if zh {
			return zhSpace(fmt.Sprintf("%s时使用 %s；%s %s。", subjZH, use, was, why))
		}
		return fmt.Sprintf("When %s, use %s; %s %s.", subjEN, use, was, why)
	case len(added) > 0:
		verbEN, verbZH := "set", "设置"
		if added[0].Flag {
			verbEN, verbZH = "add", "加上"
		}
		if zh {
			return zhSpace(fmt.Sprintf("%s时%s %s；不这样做%s。", subjZH, verbZH, callargs.Join(added, " "), why))
		}
		return fmt.Sprintf("When %s, %s %s; without it, it %s.", subjEN, verbEN, callargs.Join(added, " "), why)
	}
	if zh {
		return zhSpace(fmt.Sprintf("%s时改用 `%s`；`%s` %s。", subjZH, codeOf(f.step), codeOf(attempt), why))
	}
	return fmt.Sprintf("When %s, use `%s` instead of `%s`, which %s.", subjEN, codeOf(f.step), codeOf(attempt), why)
}

// renderAvoidLesson warns off a failing attempt's settings; an attempt
// without settings gives nothing general enough to say.
func renderAvoidLesson(zh bool, attempt action, cause string) string {
	name, command := callee(attempt)
	ps := params(attempt.text)
	if name == "" || len(ps) == 0 {
		return ""
	}
	if len(ps) > 3 {
		ps = ps[:3]
	}
	why := failedWith(zh, cause)
	if zh {
		verb := "调用"
		if command {
			verb = "执行"
		}
		return zhSpace(fmt.Sprintf("%s `%s` 时不要用 %s；%s。", verb, name, callargs.Join(ps, " "), why))
	}
	verb := "calling"
	if command {
		verb = "running"
	}
	return fmt.Sprintf("When %s `%s`, do not use %s; it %s.", verb, name, callargs.Join(ps, " "), why)
}

func counterExample(zh bool, attempt action, cause string) string {
	c := runes.ClipWords(runes.OneLine(cause), 200)
	switch {
	case zh && c == "":
		return zhSpace(fmt.Sprintf("`%s` 失败。", codeOf(attempt)))
	case zh:
		return zhSpace(fmt.Sprintf("`%s` 失败：%s", codeOf(attempt), c))
	case c == "":
		return fmt.Sprintf("`%s` failed.", codeOf(attempt))
	}
	return fmt.Sprintf("`%s` failed: %s", codeOf(attempt), c)
}

// renderStepLesson states a shared step for the cluster's kind of task.
func renderStepLesson(d *digest, step action) string {
	tt := d.taskType()
	code := codeOf(step)
	_, command := callee(step)
	if d.zh {
		kind := tt + " 任务"
		if tt == "" || tt == "other" {
			kind = "「" + runes.ClipWords(d.task(), 40) + "」这类任务"
		}
		return zhSpace(fmt.Sprintf("处理%s时执行 `%s`。", kind, code))
	}
	kind := tt + " tasks"
	if tt == "" || tt == "other" {
		kind = "tasks like \"" + runes.ClipWords(d.task(), 60) + "\""
	}
	verb := "use"
	if command {
		verb = "run"
	}
	return fmt.Sprintf("For %s, %s `%s`.", kind, verb, code)
}

// zhSpace tidies spacing in generated Chinese: no space next to Chinese
// punctuation, one between Han and Latin text, as the offline extractor
// writes it. Code in backticks and quoted literals are left as they are.
func zhSpace(s string) string {
	rs := []rune(s)
	var b strings.Builder
	var quote rune
	for i, r := range rs {
		switch {
		case quote != 0:
			b.WriteRune(r)
			if r == quote {
				quote = 0
				if i+1 < len(rs) && runes.IsCJK(rs[i+1]) {
					b.WriteRune(' ')
				}
			}
			continue
		case r == '`' || r == '\'' || r == '"':
			quote = r
		}
		if r == ' ' {
			var prev, next rune
			if i > 0 {
				prev = rs[i-1]
			}
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			if prev == 0 || next == 0 || prev == ' ' || zhPunct(prev) || zhPunct(next) || (runes.IsCJK(prev) && runes.IsCJK(next)) {
				continue
			}
		}
		b.WriteRune(r)
		if i+1 < len(rs) && quote == 0 {
			next := rs[i+1]
			if (runes.IsCJK(r) && latinish(next)) || (latinish(r) && runes.IsCJK(next)) {
				b.WriteRune(' ')
			}
		}
	}
	return b.String()
}

func zhPunct(r rune) bool { return strings.ContainsRune("，。；：、！？（）「」“”", r) }

func latinish(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '`' || r == '\'' || r == '_')
}
