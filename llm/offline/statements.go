package offline

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/memory"
)

// A statement is a standing instruction or fact a user stated: the source
// of preferences, rules and facts. Only user messages are read: the
// assistant repeating "I'll always use UTC" is not the user's preference,
// and text inside tool output is data, never an instruction.
type statement struct {
	kind    memory.Kind
	content string
	event   int
}

// Leading words that carry no content ("Oh, and", "FYI:", "另外").
var (
	fillerEN = regexp.MustCompile(`^(?i)(hi|hey|hello|ok|okay|oh|ah|also|and|but|so|plus|btw|by the way|fyi|ps|p\.s\.|note|one (more |last )?thing|another thing|just so you know|for context|for the record|heads[- ]up|great|thanks|thank you|perfect|cool|nice|actually|anyway|lastly|finally)\b[\s,:;.!\-–—]*`)
	fillerZH = regexp.MustCompile(`^(另外|还有|对了|顺便说一下|顺便|补充一下|补充|而且|并且|然后|好的|好|嗯|哦|噢|请注意|注意|提醒一下|说明一下|对)[，,：:\s]*`)
)

func stripFillers(s string) string {
	for {
		t := strings.TrimSpace(s)
		t = fillerEN.ReplaceAllString(t, "")
		t = fillerZH.ReplaceAllString(t, "")
		t = strings.TrimLeft(t, ",，:：;； ")
		if t == s {
			return t
		}
		s = t
	}
}

// Framing that says "this is standing" but adds nothing once stored.
var (
	framingLeadEN  = regexp.MustCompile(`^(?i)(from now on|going forward|from here on( out)?|in (the )?future|please remember (to|that)|remember (to|that)|keep in mind that|note that)\b[\s,:]*`)
	framingInEN    = regexp.MustCompile(`(?i)\s*,?\s*\b(from now on|going forward|from here on( out)?|in (the )?future)\b,?`)
	framingLeadZH  = regexp.MustCompile(`^(以后|今后|往后|从现在开始|从现在起|从今以后|从今往后|记住|记得|请记住|请记得|麻烦记住)[，,：:\s]*`)
	pleaseLeadEN   = regexp.MustCompile(`^(?i)please\s+`)
	pleaseLeadZH   = regexp.MustCompile(`^请(?:你)?`)
	ephemeralEN    = regexp.MustCompile(`\b(this time|for now|just this once|today|right now|for this (one|task|report|file|run))\b`)
	ephemeralZH    = regexp.MustCompile(`这次|这一次|暂时|今天|临时|先这样|本次`)
	dontSkipEN     = regexp.MustCompile(`\b(don't|do not|dont)\s+(worry|know|think|see|understand|mind|care|get it|remember|bother|have)\b`)
	complaintWords = regexp.MustCompile(`报错|失败|出错|不行|卡住|卡死|崩|超时|挂了|乱码|fail|error|crash|break|broke|slow|time out|times out`)
)

// Triggers. Hard ones make a rule, soft ones a preference. The English
// patterns run on folded (lower-case) text.
var (
	standingEN = regexp.MustCompile(`\b(from now on|going forward|from here on|in (the )?future|by default|every time|each time|whenever|remember (to|that)|keep in mind)\b`)
	alwaysEN   = regexp.MustCompile(`\balways\b`)
	preferEN   = regexp.MustCompile(`\b(i|we)('d| would)?\s+(prefer|rather)\b|^prefer\b|\bmy preference is\b`)
	pleaseEN   = regexp.MustCompile(`^please\s+(use|stick to|default to|keep)\b|^(stick to|default to|avoid)\b`)
	neverEN    = regexp.MustCompile(`\bnever\b`)
	mustEN     = regexp.MustCompile(`\b(must|mustn't)\b`)
	dontEN     = regexp.MustCompile(`^(please\s+)?(do not|don't|dont)\b|\b(you|we)\s+(should not|shouldn't|must not|mustn't|should never|must never)\b|\b(under no circumstances|not allowed to|is forbidden|are forbidden|is prohibited)\b`)
	specMustEN = regexp.MustCompile(`\bmust (have been|be (a|an|the|because|due|why|what|that|wrong|right|broken|off|related|caused|stale|missing|corrupt\w*|cached|it|this))\b`)

	standingZH = regexp.MustCompile(`今后|往后|从现在(开始|起)|从今(以后|往后)|以后(都|一律|所有|每次|统一|全部|也)|默认|每次|记住|记得|一律|统一|始终|偏好|更喜欢|优先(用|使用)|请(用|使用|总是|一律|统一)|最好(用|使用|都)`)
	yihouZH    = regexp.MustCompile(`(^|[，,：:；;\s]|从|请|我们|你)以后`)
	zongshiZH  = regexp.MustCompile(`(^|[，,：:；;\s]|请|你|都|也|要|就|我们)(总是|一直|永远)`)
	hardZH     = regexp.MustCompile(`必须|禁止|不许|不准|严禁|切勿|务必|千万(不要|别)|绝对不要|绝不|一定要|一定不要|不得`)
	buyaoZH    = regexp.MustCompile(`不要`)
	bieZH      = regexp.MustCompile(`(^|[，,：:；;\s]|请|你|千万|可|就|也|都|再|以后|记住|记得)别[^的人名处墅]`)
	bunengZH   = regexp.MustCompile(`(^|[，,：:；;\s]|都|也|绝对|千万|一定)不能`)

	// Words before "always"/"never"/"must" that make them describe rather
	// than instruct ("it always fails", "I never said", "it must be").
	describingSubjects = map[string]bool{
		"it": true, "this": true, "that": true, "he": true, "she": true, "they": true, "which": true,
		"there": true, "almost": true, "not": true, "is": true, "was": true, "are": true, "were": true,
		"i": true, "i've": true, "i'd": true, "have": true, "has": true, "had": true, "you've": true,
		"it's": true, "that's": true, "what": true, "who": true,
	}
)

// instructive reports whether some match of re in s is used as an
// instruction: not right after a subject that makes it a description
// ("it always fails", "I never said").
func instructive(re *regexp.Regexp, s string) bool {
	for _, m := range re.FindAllStringIndex(s, -1) {
		if !describingSubjects[precedingWord(s[:m[0]])] {
			return true
		}
	}
	return false
}

// precedingWord is the word right before the end of s when only spaces
// separate them ("" after punctuation or at the start).
func precedingWord(s string) string {
	t := strings.TrimRight(s, " ")
	if t == s && s != "" {
		return "" // glued to something: not a separate word
	}
	i := strings.LastIndexFunc(t, func(r rune) bool { return !(unicode.IsLetter(r) || r == '\'') })
	return strings.ToLower(t[i+1:])
}

// trigger classifies a folded, filler-stripped segment: a rule (hard), a
// preference (soft) or nothing. In the opening request, polite imperatives
// ("please use pandas") are part of the task, not standing preferences.
func trigger(seg string, opening bool) (kind memory.Kind, ok bool) {
	hard, soft := false, false
	if hasLatinLetter(seg) {
		if instructive(neverEN, seg) {
			hard = true
		}
		if instructive(mustEN, seg) && !specMustEN.MatchString(seg) {
			hard = true
		}
		if dontEN.MatchString(seg) && !dontSkipEN.MatchString(seg) {
			hard = true
		}
		if instructive(alwaysEN, seg) {
			soft = true
		}
		if standingEN.MatchString(seg) || preferEN.MatchString(seg) || (!opening && pleaseEN.MatchString(seg)) {
			soft = true
		}
	}
	if !hasHan(seg) {
		return kindOf(hard, soft)
	}
	if hardZH.MatchString(seg) || bieZH.MatchString(seg) || bunengZH.MatchString(seg) ||
		(buyaoZH.MatchString(seg) && !strings.Contains(seg, "要不要") && !strings.Contains(seg, "不要紧")) {
		hard = true
	}
	if standingZH.MatchString(seg) || (yihouZH.MatchString(seg) && !strings.Contains(seg, "以后再")) {
		soft = true
	}
	if m := zongshiZH.FindStringIndex(seg); m != nil && !complaintWords.MatchString(seg[m[1]:]) {
		soft = true
	}
	return kindOf(hard, soft)
}

func kindOf(hard, soft bool) (memory.Kind, bool) {
	switch {
	case hard:
		return memory.KindRule, true
	case soft:
		return memory.KindPreference, true
	}
	return "", false
}

func hasLatinLetter(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x80 && unicode.IsLetter(r) }) >= 0
}

var (
	factEN = regexp.MustCompile(`^(our|my)\b[^.;!?]{1,60}?\b(is|are|runs|run|uses|use|lives|live|sits|was upgraded to|has been upgraded to)\b|^(we|i)('re|'m| are| am)?\s+(use|run|on|host on|deploy to|store|keep|work with|using|running)\b`)
	factZH = regexp.MustCompile(`^(我们|我司|公司|团队|咱们|我)(的|这边|这里)?[^，。,]{0,15}?(用的是|使用的是|用的|在用|使用|采用|用|是)`)
	// concreteRE is what makes a stated fact worth keeping: a number, a
	// name with capitals, Latin words inside Chinese, code.
	concreteRE = regexp.MustCompile("\\d|[`'\"“”]|\\s[A-Z][A-Za-z]+|\\p{Han}\\s*[A-Za-z]{2,}|[A-Za-z]{2,}\\s*\\p{Han}")
)

func isFact(seg string) bool {
	return (factEN.MatchString(fold(seg)) || factZH.MatchString(seg)) && concreteRE.MatchString(seg)
}

// userStatements reads the preferences, rules and facts stated in user
// messages, each cleaned into a self-contained sentence in the user's
// words.
func userStatements(events []memory.Event) []statement {
	var out []statement
	for i, e := range events {
		if e.Role != memory.RoleUser {
			continue
		}
		opening := !slices.ContainsFunc(events[:i], func(e memory.Event) bool { return e.Role == memory.RoleUser })
		for _, sent := range splitSentences(e.Content) {
			out = append(out, sentenceStatements(sent, i, opening)...)
		}
	}
	return out
}

// segment is a run of clauses that states one thing.
type segment struct {
	text    string
	kind    memory.Kind
	trigger bool
	fact    bool
}

func sentenceStatements(sent string, event int, opening bool) []statement {
	stripped := stripFillers(sent)
	if stripped == "" || isQuestion(fold(stripped)) {
		return nil
	}
	// Split into segments: a clause with its own trigger starts a new
	// segment when the current one already states something, so "A, and
	// never B" yields two statements while "from now on, always A" and
	// "if X, always A" stay one.
	var segs []segment
	for _, cl := range splitClauses(stripped) {
		core := stripFillers(cl)
		k, trig := trigger(fold(core), opening)
		fact := isFact(core)
		if n := len(segs); n > 0 {
			cur := &segs[n-1]
			// A short trigger clause ("…, not UTC", "…，不要用UTC") qualifies
			// the statement before it rather than starting its own.
			startsNew := (trig || fact) && (cur.trigger || cur.fact) && substantive(clean(cur.text)) && substantive(clean(core))
			if !startsNew {
				cur.text += cl
				if trig && (!cur.trigger || k == memory.KindRule) {
					cur.kind, cur.trigger = k, true
				}
				cur.fact = cur.fact || fact
				continue
			}
		}
		segs = append(segs, segment{text: core, kind: k, trigger: trig, fact: fact})
	}
	var out []statement
	for i, sg := range segs {
		folded := fold(sg.text)
		if ephemeralEN.MatchString(folded) || ephemeralZH.MatchString(folded) {
			continue
		}
		kind := sg.kind
		switch {
		case sg.trigger:
		case sg.fact:
			kind = memory.KindFact
		default:
			continue
		}
		content := clean(sg.text)
		if kind != memory.KindFact && !substantive(content) {
			continue
		}
		// A short instruction leans on the clause before it ("We use Excel
		// 2016, don't use newer functions"): keep that context.
		if kind != memory.KindFact && i > 0 && wordCount(content) < 6 && !segs[i-1].trigger {
			prev := segs[i-1].text
			if r, _ := utf8.DecodeLastRuneInString(prev); r < utf8.RuneSelf {
				prev += " "
			}
			content = clean(prev + strings.TrimLeft(sg.text, " "))
		}
		out = append(out, statement{kind: kind, content: finish(content), event: event})
	}
	return out
}

// clean strips fillers and framing ("from now on", "以后", "记住", a
// leading "please") from a statement, keeping the user's words otherwise.
func clean(s string) string {
	s = stripFillers(strings.TrimSpace(s))
	for {
		t := framingLeadEN.ReplaceAllString(s, "")
		t = framingLeadZH.ReplaceAllString(t, "")
		t = stripFillers(t)
		if t == s {
			break
		}
		s = t
	}
	s = framingInEN.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, ",") {
			return "," // "use X from now on, not Y" keeps its comma
		}
		return ""
	})
	if rest := pleaseLeadEN.ReplaceAllString(s, ""); rest != s && rest != "" {
		s = rest
	}
	if rest := pleaseLeadZH.ReplaceAllString(s, ""); rest != s && wordCount(rest) >= 2 {
		s = rest
	}
	s = strings.Join(strings.Fields(s), " ")
	return strings.Trim(s, ",，;；:： ")
}

// substantive reports whether a cleaned statement says enough to act on:
// at least three words, two of them more than triggers, function words and
// pronouns ("Never do that again" leans on context it does not carry).
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
	for _, w := range words(fold(s)) {
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
	won can isn doesn didn shouldn`)

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
		for _, sent := range splitSentences(e.Content) {
			f := fold(stripFillers(sent))
			if isQuestion(f) {
				continue
			}
			if k, trig := trigger(f, false); trig && k != "" && !positiveRE.MatchString(f) && !negativeRE.MatchString(f) {
				continue
			}
			pos, neg := positiveRE.MatchString(fold(sent)), negativeRE.MatchString(fold(sent))
			switch {
			case pos && neg, pos && contrastRE.MatchString(f):
				out = append(out, evaluation{i, oneLine(sent), 0})
			case neg:
				out = append(out, evaluation{i, oneLine(sent), -1})
			case pos:
				out = append(out, evaluation{i, oneLine(sent), +1})
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
		if k >= 0 && acts[k].lastEvent() < ev.event && acts[k].events[0] > prevUser {
			a := acts[k]
			if !a.failed {
				a.failed, a.userReported, a.cause, a.complaint = true, true, c.text, ev.event
			}
			c.action = a
		}
		if c.action == nil {
			for j := ev.event - 1; j > prevUser; j-- {
				if events[j].Role == memory.RoleAssistant && strings.TrimSpace(events[j].Content) != "" {
					if s := splitSentences(events[j].Content); len(s) > 0 {
						c.attempt = clipRunes(s[0], 150)
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
