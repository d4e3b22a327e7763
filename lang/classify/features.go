package classify

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/runes"
)

// FeatureVersion names the feature extraction. A model records the
// version it was trained with and refuses to load under another one.
const FeatureVersion = "f10"

// Position says where a sentence sits in a session.
type Position string

// Positions.
const (
	// Opening is the first user message of a session, usually the task.
	Opening Position = "opening"
	// Later is any other turn.
	Later Position = "later"
	// Final is the agent's closing summary.
	Final Position = "final"
)

// Value shapes: values are replaced by the shape of what they are before
// words are read, so that a model learns "uses a flag" rather than one
// flag. Order matters: the first pattern that matches a span claims it.
var masks = []struct {
	re   *regexp.Regexp
	mask string
}{
	{regexp.MustCompile("`[^`\n]{1,200}`"), " ⟨code⟩ "},
	{regexp.MustCompile(`https?://[^\s<>"'，。；）)\]]+`), " ⟨url⟩ "},
	{regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`), " ⟨email⟩ "},
	{regexp.MustCompile(`#[a-z][\w-]*`), " ⟨channel⟩ "},
	{regexp.MustCompile(`\d{4}-\d{1,2}-\d{1,2}(?:[t ]\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:z|[+-]\d{2}:?\d{2})?)?`), " ⟨date⟩ "},
	{regexp.MustCompile(`\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?\b`), " ⟨time⟩ "},
	{regexp.MustCompile(`[$€£¥￥]\s?\d[\d,]*(?:\.\d+)?[kmb]?`), " ⟨money⟩ "},
	{regexp.MustCompile(`(?:^|\s)(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-<>]*)*`), " ⟨path⟩ "},
	{regexp.MustCompile(`(?:^|[\s(（，,：:])--?[a-z][\w-]*(?:=\S+)?`), " ⟨flag⟩ "},
	{regexp.MustCompile(`\b[a-z_][\w.]*=(?:'[^'\n]*'|"[^"\n]*"|[^\s,;，；。)）]+)`), " ⟨kv⟩ "},
	{regexp.MustCompile(`\bv?\d+(?:\.\d+){1,3}\b`), " ⟨version⟩ "},
	{regexp.MustCompile(`\b[\w-]+\.(?:csv|tsv|json|jsonl|xlsx?|parquet|pdf|docx?|pptx?|txt|md|ya?ml|toml|ini|conf|sql|py|go|js|ts|tsx|jsx|java|rb|rs|sh|log|zip|gz|tar|png|jpe?g|svg|html?)\b`), " ⟨file⟩ "},
	{regexp.MustCompile(`\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+(?::\d+)?\b`), " ⟨host⟩ "},
	{regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`), " ⟨ident⟩ "},
	{regexp.MustCompile(`\b[a-z]{1,8}-\d{2,}\b`), " ⟨ticket⟩ "},
	{regexp.MustCompile(`\d+(?:[.,]\d+)*\s?(?:%|[kmgt]i?b|ms|s|m|h|d|x|px|pt|kg|km|mb|gb)?\b`), " ⟨num⟩ "},
}

// Masks returns s folded with its values replaced by their shapes.
func Masks(s string) string {
	t := lang.FoldQuotes(s)
	for _, m := range masks {
		t = m.re.ReplaceAllString(t, m.mask)
	}
	return t
}

// token is one unit of a masked sentence.
type token struct {
	text string
	han  bool // a run of Han characters
}

// tokens splits a masked sentence into words, masks, runs of Han and the
// punctuation that carries meaning (? ! : —).
func tokens(s string) []token {
	var out []token
	var b strings.Builder
	var hanRun bool
	flush := func() {
		if b.Len() > 0 {
			out = append(out, token{b.String(), hanRun})
			b.Reset()
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '⟨':
			flush()
			j := i
			for j < len(rs) && rs[j] != '⟩' {
				j++
			}
			if j < len(rs) {
				out = append(out, token{text: string(rs[i : j+1])})
				i = j
			}
		case runes.IsCJK(r):
			if !hanRun {
				flush()
			}
			hanRun = true
			b.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (r == '\'' && b.Len() > 0 && !hanRun):
			if hanRun {
				flush()
			}
			hanRun = false
			b.WriteRune(r)
		default:
			flush()
			hanRun = false
			switch r {
			case '?', '？':
				out = append(out, token{text: "?"})
			case '!', '！':
				out = append(out, token{text: "!"})
			case ':', '：':
				out = append(out, token{text: ":"})
			case '—', '–':
				out = append(out, token{text: "—"})
			}
		}
	}
	flush()
	return out
}

// Features returns the features of one sentence at a position: what a
// model sees. They are sorted and without repeats.
func Features(sentence string, pos Position) []string {
	// Words are read from what the sentence states, without its leading
	// discourse ("No —", "跟你说一下，"); the discourse is a feature of its
	// own, and the cues are read from the whole sentence.
	core, lead := lang.SplitLead(sentence)
	full := Masks(sentence)
	masked := Masks(core)
	toks := tokens(masked)
	set := map[string]struct{}{}
	add := func(f string) { set[f] = struct{}{} }

	// The word stream: English words stemmed, masks as they are, and each
	// Han run as one item for bigrams across scripts.
	var stream []string
	words, han := 0, 0
	for _, t := range toks {
		switch {
		case t.han:
			rs := []rune(t.text)
			han += len(rs)
			for i := range rs {
				if len(rs) == 1 {
					// A character alone says little about the sentence;
					// it counts only when it stands alone.
					add("c:" + string(rs[i]))
				}
				if i+1 < len(rs) {
					add("cc:" + string(rs[i:i+2]))
				}
				if i+2 < len(rs) {
					add("ccc:" + string(rs[i:i+3]))
				}
			}
			// In the word stream a run of Han is its first and last
			// bigrams: what it opens and ends with.
			stream = append(stream, "⟪"+string(rs[:min(2, len(rs))])+"⟫")
			if len(rs) > 2 {
				stream = append(stream, "⟪"+string(rs[len(rs)-2:])+"⟫")
			}
		case strings.HasPrefix(t.text, "⟨"):
			words++ // a value, a path, a command: a word of the sentence
			add("u:" + t.text)
			stream = append(stream, t.text)
		case len(t.text) == 1 && strings.Contains("?!:—", t.text):
			stream = append(stream, t.text)
		default:
			words++
			w := t.text
			if !strings.Contains(w, "'") {
				w = lang.Stem(w)
			}
			add("u:" + w)
			stream = append(stream, w)
		}
	}
	if len(stream) > 0 {
		add("first:" + stream[0])
		add("p:" + string(pos) + ":" + stream[0])
		if len(stream) > 1 {
			add("first2:" + stream[0] + " " + stream[1])
		}
	}
	prev := "^"
	for _, w := range append(stream, "$") {
		add("b:" + prev + " " + w)
		prev = w
	}
	if hr := firstHan(toks); hr != "" {
		rs := []rune(hr)
		add("c^:" + string(rs[:min(2, len(rs))]))
	}
	trimmed := strings.TrimSpace(full)
	switch {
	case strings.HasSuffix(trimmed, "?") || strings.HasSuffix(trimmed, "？"):
		add("end:?")
	case strings.HasSuffix(trimmed, "!") || strings.HasSuffix(trimmed, "！"):
		add("end:!")
	}
	if lead != "" {
		l := []rune(strings.Trim(lang.FoldQuotes(lead), " ,.:;!?—–-，。：；！？、"))
		add("lead:" + string(l[:min(len(l), 8)]))
		add("lead")
	}
	for _, c := range cueFeatures {
		if c.matches(full) {
			add("cue:" + c.name)
			add("cue:" + c.name + "@" + string(pos))
		}
	}
	n := words + han/2
	add("len:" + lengthBucket(n) + "@" + string(pos))
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// cueFeatures seed the models with the closed-class words that frame a
// statement: what makes it standing, binding, a taste, a fact about "us",
// a change, a one-off, a question or a request. They are features, not
// rules: the models learn how much each counts, and with what.
var cueFeatures = []cue{
	{"standing", regexp.MustCompile(`\b(?:from now on|from today(?: on(?:wards?)?)?|starting (?:today|now)|as of today|effective (?:today|immediately)|going forward|in (?:the )?future|from here on|always|never|every time|whenever|by default|as a rule|each time|remember|keep in mind|make sure|don't forget)\b|以后|今后|往后|从现在起|从现在开始|一律|统一|每次|始终|总是|永远|默认|记住|记得|别忘了|下次|从今天起|从今天开始|即日起`), nil},
	{"binding", regexp.MustCompile(`\b(?:must|mustn't|must not|never|not allowed|forbidden|prohibited|only|has to|have to|needs? to|required|requires|mandatory|no exceptions|under no circumstances)\b|必须|禁止|不许|不准|不能|严禁|务必|只能|只许|一定要|千万别|千万不要|不得`), nil},
	{"taste", regexp.MustCompile(`\b(?:prefer|prefers|rather|i like|i love|i hate|hates|can't stand|cannot stand|allergic|i want|i'd like|please use|please keep|i'm (?:a|an|more of)|we're (?:a|an))\b|喜欢|偏好|更喜欢|讨厌|受不了|希望|过敏|吃素|不吃|习惯`), nil},
	{"us", regexp.MustCompile(`\b(?:we|our|ours|us|we're|we've|the team|my team|here we)\b|我们|咱们|我司|公司|团队|我们这边|我这边`), nil},
	{"i", regexp.MustCompile(`\b(?:i|my|me|i'm|i've|i'd|mine)\b|我(?:[^们]|$)`), nil},
	{"you", regexp.MustCompile(`\b(?:you|your|you're|you've)\b|你|您`), nil},
	{"change", lang.ChangeCue, nil},
	{"restate", lang.RestateCue, nil},
	{"refine", lang.RefineCue, nil},
	{"oneoff", regexp.MustCompile(`\b(?:this time|just this once|for now|today|tonight|this week|for this (?:one|task|report|file|run|deck|trip)|right now|at the moment|temporarily|until (?:monday|tuesday|wednesday|thursday|friday|tomorrow|next week))\b|这次|这一次|暂时|今天|今晚|本周|这周|这单|先这样|临时|目前`), standingFrom},
	{"question", regexp.MustCompile(`[?？]\s*$|^(?:should|shall|can|could|would|will|do|does|did|is|are|was|were|what|why|how|when|where|which|who|any idea)\b|吗[。！!]?$|呢[。]?$|要不要|是否|能不能|可不可以|会不会|是不是|有没有|为什么|怎么`), nil},
	{"request", regexp.MustCompile(`^(?:can you|could you|would you|will you|please|pls|i need you to|i'd like you to|go ahead|let's)\b|^(?:请|帮我|帮忙|麻烦|给我)|一下[。！!]?$`), nil},
	{"thanks", regexp.MustCompile(`\b(?:thanks|thank you|thx|great|perfect|nice|awesome|cool|lgtm|good job|well done)\b|谢谢|辛苦|不错|很好|完美|好的`), nil},
}

// cue is one cue feature: the sentence matches re, once what unless
// matches is taken out (so "from today" is not a one-off's "today").
type cue struct {
	name   string
	re     *regexp.Regexp
	unless *regexp.Regexp
}

func (c cue) matches(s string) bool {
	if c.unless != nil {
		s = c.unless.ReplaceAllString(s, " ")
	}
	return c.re.MatchString(s)
}

// standingFrom is a standing start: "from today", "从今天起".
var standingFrom = regexp.MustCompile(`(?i)\b(?:from today(?: on(?:wards?)?)?|starting today|as of today|effective today)\b|从今天起|从今天开始`)

func firstHan(toks []token) string {
	if len(toks) > 0 && toks[0].han {
		return toks[0].text
	}
	return ""
}

func lengthBucket(n int) string {
	switch {
	case n <= 2:
		return "1-2"
	case n <= 5:
		return "3-5"
	case n <= 10:
		return "6-10"
	case n <= 20:
		return "11-20"
	}
	return "21+"
}

func script(words, han int) string {
	switch {
	case han == 0:
		return "latin"
	case words == 0:
		return "han"
	case han >= 2*words:
		return "han+latin"
	}
	return "latin+han"
}

// Cues returns the names of the cue features a sentence carries
// ("standing", "binding", "taste", "change", …), for callers that weigh a
// model's reading against how a sentence is framed.
func Cues(sentence string) []string {
	full := Masks(sentence)
	var out []string
	for _, c := range cueFeatures {
		if c.matches(full) {
			out = append(out, c.name)
		}
	}
	return out
}
