package offline

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	hlang "github.com/hindsight-memory/hindsight/lang"
)

// Memories are written for a future agent: a statement the user made
// becomes a self-contained sentence about the user or the team, in the
// user's words and with every value kept verbatim. Rewriting is grammar,
// not phrase lists: discourse markers that only make sense in the
// conversation are dropped ("No,", "Close, but", "跟你说一下"), the person
// changes (I → the user, we → the team, 我 → 用户, 我们 → 团队) with the
// verb agreeing, and framing that tells the agent to remember adds
// nothing once it is remembered ("keep that in mind", "记住").

var (
	// Framing anywhere in the sentence: what asks the agent to remember.
	framingEN     = regexp.MustCompile(`(?i)\s*[,;—–-]*\s*\b(?:so |and )?(?:please )?(?:keep (?:that|this|it) in mind|bear (?:that|this) in mind|remember (?:that|this)|note (?:that|this) down|don't forget (?:that|this)|make a note of (?:that|it|this))\b(?: (?:when|for|next time|going forward|from now on)[^,.;!?]*)?`)
	framingLeadEN = regexp.MustCompile(`(?i)^(?:from now on|going forward|from here on(?: out)?|in (?:the )?future|for the future|next time|please remember(?: that| to)?|remember(?: that| to)?|keep in mind(?: that)?|note that|make sure (?:that|to)?|just make sure(?: that| to)?|always remember to)\b[\s,:]*`)
	framingZH     = regexp.MustCompile(`[，,]?\s*(?:你)?(?:记住了?|记一下|记下来|别忘了|留意一下)[。！!]?$`)
	framingLeadZH = regexp.MustCompile(`^(?:以后|今后|往后|从现在开始|从现在起|从今以后|从今往后|从今天起|下次|记住|记得|请记住|请记得|麻烦记住)[，,：:\s]*`)
	// framingInEN is "from now on" inside a sentence: "Use X from now on,
	// not Y" keeps its comma.
	framingInEN = regexp.MustCompile(`(?i)\s*,?\s*\b(?:from now on|going forward|from here on(?: out)?|in (?:the )?future)\b,?`)
	midPleaseRE = regexp.MustCompile(`(?i)\s+please\b(\s*[,;.!])`)
	trailingEN  = regexp.MustCompile(`(?i)[\s,;—–-]*\b(?:please|pls|thanks|thank you|thx|ok\??|okay\??|alright\??|got it\??|yeah\??|lol)\s*[.!?]*$`)
)

// memoryForm rewrites a user's statement as a memory: see the comment at
// the top of this file. kind says what it is; Chinese statements stay
// Chinese.
func memoryForm(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if langOf(s) == langZH {
		return finish(rewriteZH(s))
	}
	return finish(rewriteEN(s))
}

// leadTopicEN finds the topic a leading discourse marker names ("Change
// of plan for the partner payout report:", "One more thing on the
// invoices,"): the statement after it is about that topic, and says so
// only through it.
var leadTopicEN = regexp.MustCompile(`(?i)\b(?:for|on|about|regarding|re)\s+((?:the|our|this|that|your|my|all)\s+[^:,;.!?]{2,60}?|[^:,;.!?\s][^:,;.!?]{1,60}?)\s*[:,—–-]*$`)

func rewriteEN(s string) string {
	core, lead := hlang.SplitLead(s)
	s = core
	if m := leadTopicEN.FindStringSubmatch(lead); m != nil && !mentions(core, m[1]) {
		// Said after "change of plan for X:", a statement is about X:
		// the memory says so, as the lead it loses did.
		topic := strings.TrimSpace(m[1])
		s = "For " + topic + ", " + lowerFirst(core)
	}
	for {
		t := hlang.StripLead(framingLeadEN.ReplaceAllString(s, ""))
		if t == s || wordCount(t) < 2 {
			break
		}
		s = t
	}
	if t := framingEN.ReplaceAllString(s, ""); wordCount(t) >= 2 {
		s = t
	}
	s = framingInEN.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, ",") {
			return ","
		}
		return ""
	})
	if t := trailingEN.ReplaceAllString(s, ""); wordCount(t) >= 2 {
		s = t
	}
	s = midPleaseRE.ReplaceAllString(s, "$1")
	s = thirdPersonEN(s)
	return strings.Trim(s, " ,;:—–-")
}

// English person: subject pronouns with the verb that follows, object and
// possessive pronouns. The user is "the user"; "we" is the team.
var (
	contractedEN = []struct{ re, repl string }{
		{`\bi'm\b`, "the user is"}, {`\bi am\b`, "the user is"}, {`\bi've\b`, "the user has"},
		{`\bi'd\b`, "the user would"}, {`\bi'll\b`, "the user will"}, {`\bi was\b`, "the user was"},
		{`\bwe're\b`, "the team is"}, {`\bwe are\b`, "the team is"}, {`\bwe've\b`, "the team has"},
		{`\bwe'd\b`, "the team would"}, {`\bwe'll\b`, "the team will"}, {`\bwe were\b`, "the team was"},
	}
	contractedRE = func() []*regexp.Regexp {
		out := make([]*regexp.Regexp, len(contractedEN))
		for i, c := range contractedEN {
			out[i] = regexp.MustCompile(`(?i)` + c.re)
		}
		return out
	}()
	subjectRE    = regexp.MustCompile(`(?i)\b(i|we)\s+((?:(?:no longer|not|no|always|never|usually|generally|normally|really|just|also|only|still|mostly|genuinely|definitely|absolutely|strongly|actually|totally|honestly|even|all|both|typically|basically|literally)\s+)*)([a-z][a-z']*)`)
	possessiveRE = regexp.MustCompile(`(?i)\b(my|our|mine|ours|me|us|myself|ourselves)\b`)
	modalsEN     = wordSet(`can can't cannot could couldn't will won't would wouldn't shall should shouldn't must mustn't may might need't ought did didn't was were had`)
)

func thirdPersonEN(s string) string {
	for i, re := range contractedRE {
		repl := contractedEN[i].repl
		s = re.ReplaceAllString(s, repl)
	}
	s = subjectRE.ReplaceAllStringFunc(s, func(m string) string {
		sm := subjectRE.FindStringSubmatch(m)
		who := "the user"
		if strings.EqualFold(sm[1], "we") {
			who = "the team"
		}
		return who + " " + sm[2] + thirdSingular(sm[3])
	})
	s = possessiveRE.ReplaceAllStringFunc(s, func(m string) string {
		switch strings.ToLower(m) {
		case "my", "mine":
			return "the user's"
		case "our", "ours":
			return "the team's"
		case "me", "myself":
			return "the user"
		}
		return "the team"
	})
	// "Order A-20931. I'm Maria Okafor." → "… The user is Maria Okafor."
	s = sentenceThirdRE.ReplaceAllString(s, "${1}T$2")
	return capitalize(s)
}

var sentenceThirdRE = regexp.MustCompile(`([.!?]["')\]]?\s+)t(he (?:user|team))`)

// thirdSingular conjugates a verb for a third-person singular subject.
func thirdSingular(v string) string {
	lv := strings.ToLower(v)
	switch {
	case modalsEN[lv] || strings.HasSuffix(lv, "ed") || strings.Contains(lv, "'"):
		if lv == "don't" {
			return "doesn't"
		}
		if lv == "haven't" {
			return "hasn't"
		}
		return v
	case lv == "am", lv == "are":
		return "is"
	case lv == "have":
		return "has"
	case lv == "do":
		return "does"
	case lv == "go":
		return "goes"
	case strings.HasSuffix(lv, "s") || strings.HasSuffix(lv, "sh") || strings.HasSuffix(lv, "ch") || strings.HasSuffix(lv, "x") || strings.HasSuffix(lv, "z"):
		if strings.HasSuffix(lv, "ss") || !strings.HasSuffix(lv, "s") {
			return v + "es"
		}
		return v // already inflected, or a noun
	case strings.HasSuffix(lv, "y") && len(lv) > 1 && !strings.ContainsRune("aeiou", rune(lv[len(lv)-2])):
		return v[:len(v)-1] + "ies"
	}
	return v + "s"
}

// Chinese person: 我们/咱们 are the team, 我 is the user. 你 addressing
// the agent is left: an instruction stays an instruction.
var (
	weZH = regexp.MustCompile(`我们(?:这边|这里|公司|组|团队)?|咱们`)
	iZH  = regexp.MustCompile(`我(?:这边|这里)?`)
)

func rewriteZH(s string) string {
	s = hlang.StripLead(s)
	for {
		t := hlang.StripLead(framingLeadZH.ReplaceAllString(s, ""))
		if t == s || wordCount(t) < 2 {
			break
		}
		s = t
	}
	if t := framingZH.ReplaceAllString(s, ""); wordCount(t) >= 2 {
		s = t
	}
	s = weZH.ReplaceAllString(s, "团队")
	s = iZH.ReplaceAllString(s, "用户")
	return strings.TrimLeftFunc(strings.Trim(s, " ，,；;：:"), unicode.IsSpace)
}

// mentions reports whether s has the last word of topic, in any case.
func mentions(s, topic string) bool {
	tw := hlang.Words(topic)
	return len(tw) > 0 && slices.Contains(hlang.Words(s), tw[len(tw)-1])
}

// lowerFirst lowers the first letter of s unless it starts a name or an
// acronym (its second letter is upper case too, or it is "I").
func lowerFirst(s string) string {
	rs := []rune(s)
	if len(rs) < 2 || !unicode.IsUpper(rs[0]) || unicode.IsUpper(rs[1]) || rs[0] == 'I' && !unicode.IsLetter(rs[1]) {
		return s
	}
	rs[0] = unicode.ToLower(rs[0])
	return string(rs)
}
