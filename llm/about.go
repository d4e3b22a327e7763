package llm

import (
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/hindsight-memory/hindsight/memory"
)

// About decides whether a statement is about the person who said it (it
// goes to their private scope) or about the work (the tenant's shared
// space), by grammatical person, which every language marks:
//
//   - the speaker in the first person singular ("I", "me", "my", 我, 本人)
//     or, in a memory's own wording, "the user" (用户): about the user;
//   - a group in the first person plural or a team ("we", "our team",
//     我们, 团队, 大家): about the work, even when "my" is there too ("my
//     team uses pnpm");
//   - neither: about the work ("reports use UTC", "headlines in sentence
//     case"), as most unmarked statements in the labelled data are; what
//     a person says of themselves they nearly always say in the first
//     person ("email me", "call me", "我不看微信").
//
// On the 3,600 user statements of the classifiers' labelled data that say
// whom they are about, this is right 89% of the time; a classifier trained
// on the same labels was right 86% of the time held out by file.
//
// Lessons, which come from tool calls and what the agent found, are
// always about the work.
func About(kind memory.Kind, text string) memory.About {
	if kind == memory.KindLesson {
		return memory.AboutWork
	}
	t := strings.ToLower(strings.NewReplacer("’", "'", "‘", "'").Replace(norm.NFKC.String(text)))
	switch {
	case groupRE.MatchString(t):
		return memory.AboutWork
	case speakerRE.MatchString(t):
		return memory.AboutUser
	}
	return memory.AboutWork
}

var (
	// speakerRE is the speaker, or the user a memory is about. 我 counts
	// unless it opens 我们 (we) or 我司 (our company).
	speakerRE = regexp.MustCompile(`\b(?:i|i'm|i've|i'd|i'll|im|me|my|mine|myself|the user|the user's)\b|我(?:[^们司]|$)|本人|用户`)
	// groupRE is a group the speaker speaks for.
	groupRE = regexp.MustCompile(`\b(?:we|we're|we've|we'd|we'll|us|our|ours|ourselves|team|team's|teams|everyone|everybody|all of us)\b|我们|咱们|我司|团队|大家|全组|组里`)
)
