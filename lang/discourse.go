package lang

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/runes"
)

// Leading discourse: interjections, acknowledgements, reactions and
// framing that open a sentence without being part of what it states ("No
// —", "Close, but", "Right,", "跟你说一下，", "说过了，"). StripLead removes
// them, repeatedly, while something substantive remains: what a sentence
// states is read from what is left, and how it was framed from what was
// removed.
var (
	leadEN = regexp.MustCompile(`^(?:(?:no+|nope|nah|yes|yeah|yep|right|ok(?:ay)?|sure|fine|good|great|perfect|cool|nice|thanks|thank you|thx|ty|hm+|uh+|um+|oh|ah|well|wait|hold on|stop|sorry|close|almost|not quite|update|correction|important|reminder|note|again|ugh|argh|that's (?:wrong|not right|not it)|not again)(?:\s*[,.:;!—–-]+|\s+no+\b)|(?:actually|also|and|but|so|plus|btw|by the way|fyi|ps|heads[- ]up|one (?:more |last )?(?:thing|detail)(?: on [^:,]{1,40})?|another thing|quick note|for (?:the )?record|for context|just so you know|change of plan(?: for [^:,]{1,60})?|to be clear|as i said|like i said|as always|as usual|same as (?:last time|before)|please)\b)[\s,.:;!—–-]*`)
	leadZH = regexp.MustCompile(`^(?:不对|不是|不行|错了|又错了|又是|好的|好|嗯|哦|噢|哎|唉|行|可以了|可以|对|对了|另外|还有|顺便说一下|顺便|补充一下|补充|说一下|跟你说一下|和你说一下|告诉你|提醒一下|提醒|记一下|记住|记得|请记住|请记得|注意|说过了|说过多少次了|我说过|上次说过的|老规矩|老样子|重要|还是|然后|而且|并且|就是|其实|另外说一下|对了还有|等等|等一下|停)[\s，,。.：:；;！!、—-]*`)
)

// StripLead removes leading discourse from s (see above); "No." alone is
// returned as it is.
func StripLead(s string) string {
	core, _ := SplitLead(s)
	return core
}

// SplitLead splits s into its leading discourse and the rest.
func SplitLead(s string) (core, lead string) {
	orig := s
	for {
		f := Fold(s)
		re := leadEN
		if HasCJK(firstRuneString(f)) {
			re = leadZH
		}
		m := re.FindStringIndex(f)
		if m == nil || m[1] == 0 {
			if re == leadZH {
				m = leadEN.FindStringIndex(f)
			} else {
				m = leadZH.FindStringIndex(f)
			}
			if m == nil || m[1] == 0 {
				break
			}
		}
		// Fold may change byte lengths (NFKC); map the match back by runes.
		cut := runePrefixLen(s, utf8.RuneCountInString(f[:m[1]]))
		rest := strings.TrimSpace(s[cut:])
		if substantiveLen(rest) < 2 {
			break
		}
		s = rest
	}
	return s, strings.TrimSpace(strings.TrimSuffix(orig, s))
}

func firstRuneString(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}

// runePrefixLen is the byte length of the first n runes of s.
func runePrefixLen(s string, n int) int {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// substantiveLen counts words, each CJK character counting as half a word.
func substantiveLen(s string) int {
	cjk := 0
	for _, r := range s {
		if runes.IsCJK(r) {
			cjk++
		}
	}
	return len(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || runes.IsCJK(r) })) + cjk/2
}
