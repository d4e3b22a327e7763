package lang

import "regexp"

// Cues of how a statement relates to what was said before. They are the
// closed-class words of changing, repeating and refining in English and
// Chinese, not topics: what changes, repeats or gains detail is read from
// the rest of the statement. Match them against Fold(text).
var (
	// ChangeCue announces a change of plan, tool or value.
	ChangeCue = regexp.MustCompile(`\b(?:change of plans?|changed? (?:it |that |this )?to|instead(?: of)?|rather than|no longer|not any ?more|any ?more|switch(?:ed|ing)? (?:[\w'-]+ ){0,3}(?:to|over)|mov(?:e|ed|ing) (?:[\w'-]+ ){0,3}(?:from \S+ )?to|migrat(?:e|ed|ing) (?:[\w'-]+ ){0,3}to|replac(?:e|ed|ing) (?:[\w'-]+ ){0,3}(?:by|with)|deprecated|now (?:use|uses|using|is|are|goes|go)|stop (?:using|sending|doing)|from now on|going forward)\b|改成|改为|改用|换成|换用|换到|改到|不再|不用再|别再用|已经迁到|迁到|迁移到|取代|替换成|替代|以后改|而不是|从现在起|从今天起`)
	// RestateCue repeats something said before.
	RestateCue = regexp.MustCompile(`\b(?:again|as i said|like i said|as i told you|i told you|i already said|reminder|as always|as usual|same (?:\w+ ){0,3}(?:rule|as (?:last time|before))|(?:once|one) more time)\b|还是|又|上次说过|说过了|说过多少|提醒一下|老规矩|老样子|照旧|跟上次一样|和上次一样|再说一遍|重申`)
	// RefineCue adds detail to something said before.
	RefineCue = regexp.MustCompile(`\b(?:refin(?:e|ed|ing)|one more detail|more precisely|to be (?:more )?precise|to clarify|clarification|in addition|additionally|on top of that|specifically)\b|补充一下|补充|细化|具体来说|更准确地说|再加一条|另外加`)
)
