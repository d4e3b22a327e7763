package offline

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	hlang "github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/classify"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
)

// A statement is a standing instruction or fact a user stated: the source
// of preferences, rules and facts. Only user messages are read: the
// assistant repeating "I'll always use UTC" is not the user's preference,
// and text inside tool output is data, never an instruction.
type statement struct {
	kind    memory.Kind
	content string
	event   int
	// p is the classifier's probability that the statement is worth
	// keeping (of its first sentence, or the best of them).
	p float64
	// signal is how the user framed it, read before rewriting drops the
	// framing ("Change of plan: …", "Again: …").
	signal memory.Signal
	// about is whether it is about the user or the work (llm.About).
	about memory.About
}

// keepStatement is the probability of "worth keeping" (any label but
// none) a sentence needs to become a statement; keepOpening is what it
// needs in the opening request, which is mostly the task itself; and
// keepContinuation is what a sentence that leans on a kept one needs to
// join it.
const (
	keepStatement    = 0.5
	keepOpening      = 0.75
	keepContinuation = 0.3
	keepFramed       = 0.35 // a sentence framed as standing needs this much
)

// userSentence is one classified sentence of a user message.
type userSentence struct {
	text string
	pred classify.Prediction
	keep float64 // 1 - P(none)
}

func (u userSentence) kind() memory.Kind {
	best, bestP := memory.KindPreference, -1.0
	for i, l := range classify.UserLabels {
		if i == 0 {
			continue
		}
		if u.pred.P[i] > bestP {
			best, bestP = memory.Kind(l), u.pred.P[i]
		}
	}
	// A wish stated as a prohibition or an obligation ("never …", "不要
	// …", "must …") binds: it is a rule whatever the model leaned to.
	if best == memory.KindPreference && bindingRE.MatchString(hlang.FoldQuotes(u.text)) {
		return memory.KindRule
	}
	return best
}

// bindingRE recognises prohibitions and obligations.
var bindingRE = regexp.MustCompile(`\b(?:never|must|mustn't|must not|do not|don't|dont|not allowed|forbidden|prohibited|under no circumstances|no exceptions)\b|不要|别|禁止|不许|不准|不能|严禁|务必|必须|切勿|不得`)

// userStatements reads the preferences, rules and facts stated in user
// messages: each sentence is classified (lang/classify), and the
// sentences worth keeping become statements, rewritten as memories. A
// kept sentence that leans on the one before it in the same message (a
// short one, or one that opens with a connective or a pronoun) is joined
// to it, so that "Use the read replica pg-ro:5432. And never the
// primary." stays one statement.
func userStatements(events []memory.Event) []statement {
	model := classify.MustFor(classify.RoleUser)
	var out []statement
	name := selfName(events)
	opening := true
	for i, e := range events {
		if e.Role != memory.RoleUser {
			continue
		}
		pos := classify.Later
		if opening {
			pos = classify.Opening
			opening = false
		}
		var ss []userSentence
		for _, sent := range statementUnits(e.Content) {
			p := model.Predict(sent, pos)
			// A reason after the statement ("— half of the readers are
			// in Singapore now", "，不然对不上账") can read as a passing
			// remark; the statement is judged on its own too.
			if head := headClause(sent); head != "" {
				if ph := model.Predict(head, pos); ph.P[0] < p.P[0] {
					p = ph
				}
			}
			ss = append(ss, userSentence{text: sent, pred: p, keep: 1 - p.P[0]})
		}
		need := keepStatement
		if pos == classify.Opening {
			need = keepOpening
		}
		for j := 0; j < len(ss); j++ {
			s := ss[j]
			bar := need
			if standingCue(s.text) && !isQuestion(hlang.FoldQuotes(s.text)) {
				// Framed as standing ("记住…", "from now on", "always"): the
				// framing is evidence the words alone may not give.
				bar = min(need, keepFramed)
			}
			if s.keep < bar {
				continue
			}
			// A verdict on the work ("the chart's Chinese is all boxes, not
			// OK", "perfect") is feedback, not a standing statement, unless
			// it is framed as one ("from now on", "never").
			if core := hlang.FoldQuotes(complaintText(hlang.StripLead(s.text))); (negativeRE.MatchString(core) || positiveRE.MatchString(core)) && !framedAsStanding(s.text) {
				continue
			}
			text := s.text
			kind := s.kind()
			p := s.keep
			// Context for a sentence that cannot stand alone.
			if j > 0 && leansOnPrevious(hlang.StripLead(s.text)) && wordCount(ss[j-1].text) <= 40 && !isQuestion(hlang.FoldQuotes(ss[j-1].text)) {
				text = ss[j-1].text + " " + text
			}
			// Continuations that lean on this one.
			for j+1 < len(ss) && ss[j+1].keep >= keepContinuation && leansOnPrevious(hlang.StripLead(ss[j+1].text)) {
				j++
				text += " " + ss[j].text
				if k := ss[j].kind(); k == memory.KindRule {
					kind = k
				}
			}
			content := withName(nameReferent(memoryForm(text), e.Content), name)
			if !substantive(content) {
				continue
			}
			out = append(out, statement{kind: kind, content: content, event: i, p: p, signal: signalOf(text), about: llm.About(kind, text)})
		}
	}
	return out
}

// A statement that opens on a definite reference to the work's artifact
// ("Heads-up: the file has Chinese column names") does not stand alone
// once it leaves the message that named the file. nameReferent names it:
// when the message names exactly one file, "The file has …" becomes
// "The file sales_2024.csv has …".
var (
	artifactRE = regexp.MustCompile(`(?i)\b[\w.-]*\w\.(?:csv|tsv|xlsx?|json|jsonl|ya?ml|toml|parquet|sql|txt|md|pdf|docx?|pptx?|log|py|go|ts|js|sh|ini|conf|xml|html)\b`)
	referentEN = regexp.MustCompile(`(?i)^(?:the|this|that) (?:file|csv|spreadsheet|sheet|workbook|attachment|export|dump|document|doc|script|config)\b`)
	referentZH = regexp.MustCompile(`^(?:这个|该|那个|这份|那份)?(?:文件|表格|附件|脚本)`)
)

func nameReferent(content, message string) string {
	names := map[string]bool{}
	var name string
	for _, m := range artifactRE.FindAllString(message, -1) {
		if !names[m] {
			names[m] = true
			name = m
		}
	}
	if len(names) != 1 || strings.Contains(content, name) {
		return content
	}
	if m := referentEN.FindString(content); m != "" {
		return m + " " + name + content[len(m):]
	}
	if m := referentZH.FindString(content); m != "" {
		return m + " " + name + " " + strings.TrimLeft(content[len(m):], " ")
	}
	return content
}

// A person who says who they are ("I'm Maria Okafor", "my name is Jonas
// Weber") is one of many an agent serves: a support desk's customers, an
// assistant's contacts. Their memories name them, not "the user", so
// that the next agent who serves them finds them. Only a full name
// counts; a first name alone, or "I'm sorry", does not.
var selfIntroRE = regexp.MustCompile(`(?:^|\b)(?:I'm|I am|my name is|My name is|this is|This is)\s+(\p{Lu}\p{Ll}+(?:[ -]\p{Lu}[\p{Ll}']+){1,2})\s*(?:here)?\s*[.!,]?`)

func selfName(events []memory.Event) string {
	for _, e := range events {
		if e.Role != memory.RoleUser {
			continue
		}
		if m := selfIntroRE.FindStringSubmatch(e.Content); m != nil {
			return m[1]
		}
	}
	return ""
}

// withName puts the person's name in place of "the user", except in the
// introduction itself ("The user is Maria Okafor").
func withName(content, name string) string {
	if name == "" || strings.Contains(content, "user is "+name) {
		return content
	}
	return strings.NewReplacer("The user", name, "the user", name).Replace(content)
}

// reasonRE finds where a statement's justification begins: a dash, a
// semicolon, or a connective of reason or consequence after a comma.
var reasonRE = regexp.MustCompile(`\s[—–-]{1,2}\s|——|;\s|；|,\s*(?:because|since|as|otherwise|or else|so that|so)\s|，\s*(?:因为|不然|否则|免得|省得|要不然|要不)`)

// headClause is the statement before its justification, or "" when the
// sentence has none or the head is too short to judge.
func headClause(s string) string {
	loc := reasonRE.FindStringIndex(s)
	if loc == nil {
		return ""
	}
	head := strings.TrimSpace(s[:loc[0]])
	if wordCount(head) < 4 {
		return ""
	}
	return head
}

// standingCue reports whether a sentence is framed as standing.
func standingCue(s string) bool {
	return slices.Contains(classify.Cues(s), "standing")
}

// framedAsStanding reports whether a sentence carries a cue of a standing
// or binding statement.
func framedAsStanding(s string) bool {
	for _, c := range classify.Cues(s) {
		if c == "standing" || c == "binding" || c == "change" {
			return true
		}
	}
	return false
}

// signalOf reads how a statement is framed: a change, a refinement or a
// restatement (see package lang's cues).
func signalOf(s string) memory.Signal {
	f := hlang.Fold(s)
	switch {
	case hlang.ChangeCue.MatchString(f):
		return memory.SignalChange
	case hlang.RefineCue.MatchString(f):
		return memory.SignalRefine
	case hlang.RestateCue.MatchString(f):
		return memory.SignalRestate
	}
	return ""
}

// A clause that opens with a discourse or framing marker after a comma
// starts a statement of its own: "以后报表里的时间都用UTC，记住不要覆盖原来的
// sheet" says two things. newClauseRE finds such boundaries.
var newClauseRE = regexp.MustCompile(`[，,；;]\s*(?:另外|还有|记住|记得|对了|顺便|以后|也请|请记住|(?i:also|and also|and never|and always|plus|oh and|btw|one more thing|remember to|also make sure))`)

// statementUnits splits a user message into sentences, and a sentence
// at clause boundaries that open a new statement.
func statementUnits(text string) []string {
	var out []string
	for _, sent := range hlang.Sentences(text) {
		for {
			m := newClauseRE.FindStringIndex(sent)
			if m == nil || m[0] == 0 {
				break
			}
			// Keep the comma with the first part, drop it from the next.
			head := strings.TrimSpace(sent[:m[0]])
			_, size := utf8.DecodeRuneInString(sent[m[0]:])
			if wordCount(head) < 3 {
				break
			}
			out = append(out, head)
			sent = strings.TrimSpace(sent[m[0]+size:])
		}
		if sent != "" {
			out = append(out, sent)
		}
	}
	return out
}

// Words that make a sentence lean on the one before: pronouns and
// demonstratives that point back ("It's pnpm, always.", "这样清就行"), and
// connectives of consequence ("So no match statements."). Connectives that
// add something new ("And never …", "另外…") start a statement of their
// own.
var (
	leanEN    = regexp.MustCompile(`(?i)^(?:so|therefore|thus|hence|otherwise|which|that|this|these|those|it|it's|they|them|there|such|same|except|unless|including|instead|she|he|she's|he's|her|his|their)\b`)
	leanEndEN = regexp.MustCompile(`(?i)\b(?:that|this|it|them|those|the same)\s*[.!]?$`)
	leanZH    = regexp.MustCompile(`^(?:所以|因此|否则|不然|这个|这样|这么|那个|那样|它|他们|她们|这些|那些|同样|其他|其余|除了)|(?:这样|这么|那样|一样)(?:做|办|清|弄|处理|来)?[。！]?$`)
)

func leansOnPrevious(s string) bool {
	s = strings.TrimSpace(s)
	if leanEN.MatchString(s) || leanZH.MatchString(s) {
		return true
	}
	n := wordCount(s)
	return n <= 3 || n <= 6 && leanEndEN.MatchString(s)
}

// substantive reports whether a statement says enough to act on: at
// least three words, two of them more than function words and pronouns
// ("Never do that again" leans on context it does not carry).
func substantive(s string) bool {
	if wordCount(s) < 3 {
		return false
	}
	content, han := 0, 0
	for _, r := range s {
		if isHan(r) {
			han++
		}
	}
	for _, w := range words(hlang.FoldQuotes(s)) {
		if w = strings.Trim(w, ".-+"); w != "" && !hollowWords[w] {
			content++
		}
	}
	return content+han/2 >= 2
}

// hollowWords say nothing about what to do on their own.
var hollowWords = wordSet(`a an the to of in on at for with and or is are be it its this that these those them they
	so if but do does did done don't dont not no yes ok okay please always never must again now from then there
	here one thing way like just also too very really i we you me us my our your don t s ll re ve d m
	won can isn doesn didn shouldn user team user's team's`)

// Evaluations: the user's verdict on the work.
var (
	positiveRE = regexp.MustCompile(`\b(thanks|thank you|thx|(it|that|this|everything|all)('s| is)? (works|worked|working)|works now|working now|perfect|great|looks good|looks great|looks right|lgtm|nice|awesome|excellent|exactly|(that's|that is|it's|it is|looks|is) (correct|right)|well done|good job|spot on)\b|谢谢|多谢|好了|可以了|没问题|不错|完美|对了|搞定|成功了|很好|太好了|行了|辛苦`)
	negativeRE = regexp.MustCompile(`\b(doesn't work|does not work|didn't work|did not work|isn't working|not working|still (fails|failing|broken|wrong|errors?|erroring|doesn't|crashes)|wrong|incorrect|broken|garbled|not what i (asked|wanted)|that's not right|doesn't look right|no good|failed|failing|fails)\b|不行|不对|错了|还是(报错|不行|失败|乱码|有问题|不对)|乱码|方块|有问题|没用|不是我要的|失败了|报错了|出错了|不好使|没生效|不生效`)
	contrastRE = regexp.MustCompile(`\b(but|however|except|although)\b|但是|不过|就是|只是`)
)

// evaluation is one user sentence that judges the result.
type evaluation struct {
	event     int
	text      string
	sentiment int // +1 positive, -1 negative, 0 mixed
}

// evaluations reads the user's verdicts, skipping the opening request
// (which describes the problem, not the result) and questions.
func evaluations(events []memory.Event) []evaluation {
	model := classify.MustFor(classify.RoleUser)
	var out []evaluation
	seenWork := false
	for i, e := range events {
		if e.Role != memory.RoleUser {
			if e.Role == memory.RoleAssistant || e.Role == memory.RoleTool {
				seenWork = true
			}
			continue
		}
		if !seenWork {
			continue
		}
		for _, sent := range hlang.Sentences(e.Content) {
			f := hlang.FoldQuotes(hlang.StripLead(sent))
			if isQuestion(f) {
				continue
			}
			if p := model.Predict(sent, classify.Later); p.Label != "none" && !positiveRE.MatchString(f) && !negativeRE.MatchString(f) {
				continue // a standing statement, not a verdict
			}
			pos, neg := positiveRE.MatchString(hlang.FoldQuotes(sent)), negativeRE.MatchString(hlang.FoldQuotes(sent))
			switch {
			case pos && neg, pos && contrastRE.MatchString(f):
				out = append(out, evaluation{i, runes.OneLine(sent), 0})
			case neg:
				out = append(out, evaluation{i, runes.OneLine(sent), -1})
			case pos:
				out = append(out, evaluation{i, runes.OneLine(sent), +1})
			}
		}
	}
	return out
}

var bareVerdictRE = regexp.MustCompile(`(?i)^(不行|不对|错了|还是不行|没用|有问题|不好使|wrong|no|nope|not good|doesn't work|didn't work|not working|still broken|still failing)$`)

// complaintText is a complaint without its bare verdict clauses ("…全是方
// 块，不行。" says what went wrong in its first clause).
func complaintText(s string) string {
	var keep []string
	for _, cl := range splitClauses(s) {
		core := strings.Trim(strings.TrimSpace(cl), ",，;；、。.!！")
		if core != "" && !bareVerdictRE.MatchString(core) {
			keep = append(keep, cl)
		}
	}
	if len(keep) == 0 {
		return strings.TrimSpace(s)
	}
	return strings.Trim(strings.TrimSpace(strings.Join(keep, "")), ",，;；、")
}

// complaint is a user saying something did not work, tied to the call it
// is about when there is one.
type complaint struct {
	event   int
	text    string
	action  *action
	attempt string // what was tried, when no call can be named
}

// markComplaints turns negative evaluations into failures: the last call
// since the user's previous message is marked failed with the user's words
// as its cause; without such a call, the complaint stands on its own.
func markComplaints(events []memory.Event, acts []*action, evals []evaluation) []complaint {
	var out []complaint
	for _, ev := range evals {
		if ev.sentiment != -1 {
			continue
		}
		prevUser := -1
		for j := ev.event - 1; j >= 0; j-- {
			if events[j].Role == memory.RoleUser {
				prevUser = j
				break
			}
		}
		c := complaint{event: ev.event, text: complaintText(ev.text)}
		// The last call that started before the complaint (acts are in
		// order of their first event).
		k := sort.Search(len(acts), func(i int) bool { return acts[i].events[0] >= ev.event }) - 1
		bare := bareVerdictRE.MatchString(strings.Trim(c.text, ",，;；、。.!！ "))
		if k >= 0 && acts[k].lastEvent() < ev.event && acts[k].events[0] > prevUser {
			a := acts[k]
			// A bare "wrong!" says that the call did not do what was
			// wanted, not what went wrong: no lesson can be drawn from it.
			if !a.failed && !bare {
				a.failed, a.userReported, a.cause, a.complaint = true, true, c.text, ev.event
			}
			c.action = a
		}
		if c.action == nil {
			for j := ev.event - 1; j > prevUser; j-- {
				if events[j].Role == memory.RoleAssistant && strings.TrimSpace(events[j].Content) != "" {
					if s := hlang.Sentences(events[j].Content); len(s) > 0 {
						c.attempt = runes.ClipWords(s[0], 150)
					}
					break
				}
			}
			if c.attempt == "" {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}
