package lang

// IsStopWord reports whether folded word w carries too little meaning to
// index: English function words and contractions, question words, and
// Chinese function characters.
func IsStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

func isCJKStop(r rune) bool {
	_, ok := cjkStops[r]
	return ok
}

var stopWords = setOf(
	// articles, pronouns, determiners
	"a", "an", "the", "i", "me", "my", "mine", "myself", "we", "us", "our", "ours",
	"ourselves", "you", "your", "yours", "yourself", "yourselves", "he", "him",
	"his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
	"they", "them", "their", "theirs", "themselves", "this", "that", "these",
	"those", "some", "any", "each", "every", "all", "both", "either", "neither",
	"such", "own", "same", "other", "another",
	// question words
	"what", "which", "who", "whom", "whose", "when", "where", "why", "how",
	// auxiliaries
	"am", "is", "are", "was", "were", "be", "been", "being", "have", "has",
	"had", "having", "do", "does", "did", "doing", "will", "would", "shall",
	"should", "can", "could", "may", "might", "must",
	// prepositions and conjunctions
	"and", "but", "or", "nor", "if", "then", "else", "so", "than", "as", "of",
	"at", "by", "for", "with", "about", "against", "between", "into", "through",
	"during", "before", "after", "above", "below", "to", "from", "up", "down",
	"in", "out", "on", "off", "over", "under", "again", "further", "once",
	"because", "while", "until", "upon", "onto", "via", "per",
	// adverbs and fillers
	"here", "there", "too", "very", "just", "also", "only", "even", "still",
	"yet", "ever", "quite", "really", "oh", "ah", "hey", "hi", "hello", "um",
	"uh", "yeah", "yes", "ok", "okay", "wow", "lol",
	// contractions (apostrophes are kept by the tokenizer)
	"i'm", "i've", "i'd", "i'll", "you're", "you've", "you'd", "you'll",
	"he'd", "he'll", "she'd", "she'll", "it'd", "it'll", "we're", "we've",
	"we'd", "we'll", "they're", "they've", "they'd", "they'll", "that'll",
	"there're", "let's", "isn't", "aren't", "wasn't", "weren't", "hasn't",
	"haven't", "hadn't", "doesn't", "don't", "didn't", "won't", "wouldn't",
	"shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't", "mightn't",
	"ain't", "y'all",
	// fragments left by apostrophes the tokenizer saw as separators
	"s", "t", "m", "re", "ve", "ll", "d",
)

// cjkStops are Chinese function characters: particles, pronouns and
// measure words that would otherwise match almost every text. They are
// dropped as single characters only; bigrams keep them ("不要").
var cjkStops = func() map[rune]struct{} {
	m := map[rune]struct{}{}
	for _, r := range "的了是在和与及也就都而着或吗呢吧啊呀嘛哦把被让给对从向这那之其我你他她它们个一有不很还又" {
		m[r] = struct{}{}
	}
	return m
}()

func setOf(ws ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(ws))
	for _, w := range ws {
		m[w] = struct{}{}
	}
	return m
}
