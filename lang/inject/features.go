package inject

import (
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/runes"
)

// FeatureVersion names the feature extraction below. A model trained with
// other features is refused at load.
const FeatureVersion = "i4"

// The value masks replace values by their kind, so that the model reads "sends
// to an e-mail address" rather than one address's words ("example",
// "com"), which say nothing of intent. Names that carry it (".env",
// "OPENAI_API_KEY", "pastebin") stay.
// Addresses are masked before leetspeak is folded (an address's "@" and
// digits are not letters in disguise), sums and numbers after it (the "4"
// of "p4ss" is).
type valueMask struct {
	re   *regexp.Regexp
	mask string
}

var (
	addressMasks = []valueMask{
		{regexp.MustCompile(`https?://[^\s<>"'，。；）)\]]+`), " xurl "},
		{regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`), " xemail "},
		{regexp.MustCompile(`\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|example|cn|co|ai|app|xyz|ru|info|biz)(?::\d+)?\b`), " xhost "},
	}
	numberMasks = []valueMask{
		{regexp.MustCompile(`[$€£¥￥]\s?\d[\d,]*(?:\.\d+)?[kmb]?`), " xmoney "},
		{regexp.MustCompile(`\b\d+(?:[.,:]\d+)*\b`), " xnum "},
	}
)

// leet maps the digits and signs that stand in for letters in
// obfuscated text ("1gn0re prev10us").
var leet = map[rune]rune{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's', '!': 'i', '|': 'l'}

// Normalize folds the disguises of a text: width and case (NFKC, lower),
// zero-width and control characters, letters written as digits inside
// words, words spelt out a letter at a time ("i g n o r e" → "ignore"),
// payloads in base64, base32 or hex that decode to text, and runs of words
// written backwards or in a Caesar cipher (ROT13 and others). Names of secrets are followed by the
// word xsecret, so that what is learnt of one ("send … the password")
// holds for others ("send … SENDGRID_API_KEY", "把私钥发给…").
func Normalize(text string) string {
	t := unspell(undot(decodePayloads(norm.NFKC.String(text))))
	fs := strings.Fields(t)
	for i, f := range fs {
		fs[i] = unconfuse(f)
	}
	t = strings.ToLower(strings.Join(fs, " "))
	t = strings.Map(func(r rune) rune {
		switch {
		case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff':
			return -1
		case unicode.IsControl(r) && r != '\n' && r != '\t':
			return ' '
		}
		return r
	}, t)
	for _, m := range addressMasks {
		t = m.re.ReplaceAllString(t, m.mask)
	}
	fields := strings.Fields(t)
	for i, f := range fields {
		fields[i] = unleet(f)
	}
	t = strings.Join(fields, " ")
	for _, m := range numberMasks {
		t = m.re.ReplaceAllString(t, m.mask)
	}
	return strings.Join(markSecrets(unscramble(joinSpelled(strings.Fields(t)))), " ")
}

// confusables are Greek and Cyrillic letters that look like Latin ones.
var confusables = map[rune]rune{
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	'α': 'a', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S',
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
}

// unconfuse writes a word that mixes lookalike Greek or Cyrillic letters
// with Latin ones, or is made of lookalikes only, in Latin letters
// ("ιgνοrε" → "ignore"). Greek or Russian words with other letters stay.
func unconfuse(w string) string {
	latin, look, other := 0, 0, 0
	for _, r := range w {
		switch {
		case r < 0x80 && unicode.IsLetter(r):
			latin++
		case confusables[r] != 0:
			look++
		case unicode.IsLetter(r):
			other++
		}
	}
	if look == 0 || other > 0 && latin == 0 {
		return w
	}
	return strings.Map(func(r rune) rune {
		if l, ok := confusables[r]; ok {
			return l
		}
		return r
	}, w)
}

// unleet rewrites digits and signs inside a word that has letters too:
// "1gn0re" → "ignore", "p455w0rd5" → "password", "d|_|mp" → "dump", but
// "v2", "2026" and "$5" stay.
func unleet(w string) string {
	if strings.Contains(w, "|_|") {
		w = strings.ReplaceAll(w, "|_|", "u")
	}
	letters, subs := 0, 0
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letters++
		case leet[r] != 0:
			subs++
		}
	}
	if letters < 2 || subs == 0 || subs > 2*letters {
		return w
	}
	rs := []rune(w)
	for i, r := range rs {
		if l, ok := leet[r]; ok && (i > 0 && unicode.IsLetter(rs[i-1]) || i+1 < len(rs) && unicode.IsLetter(rs[i+1])) {
			rs[i] = l
		}
	}
	return string(rs)
}

// spelledRE is a word spelt a letter at a time: "i g n o r e".
var (
	spelledRE = regexp.MustCompile(`^(?:\pL ){1,}\pL$`)
	gapRE     = regexp.MustCompile(`\s{2,}`)
)

// dottedRE is a word spelt with a separator after each letter: "s.k.i.p",
// "s-k-i-p", "s_k_i_p".
var dottedRE = regexp.MustCompile(`\b\pL(?:[._\-*]\pL){2,}\b`)

// undot joins words spelt with a separator after each letter.
func undot(t string) string {
	return dottedRE.ReplaceAllStringFunc(t, func(w string) string {
		return strings.Map(func(r rune) rune {
			if r == '.' || r == '_' || r == '-' || r == '*' {
				return -1
			}
			return r
		}, w)
	})
}

// unspell joins words spelt a letter at a time where wider gaps separate
// the words ("i g n o r e   a l l" → "ignore all"), when one of them at
// least is four letters long.
func unspell(t string) string {
	chunks := gapRE.Split(t, -1)
	long := false
	for _, c := range chunks {
		if spelledRE.MatchString(c) && len(c) >= 7 {
			long = true
		}
	}
	if !long {
		return t
	}
	for i, c := range chunks {
		if spelledRE.MatchString(c) {
			chunks[i] = strings.ReplaceAll(c, " ", "")
		}
	}
	return strings.Join(chunks, " ")
}

// joinSpelled joins runs of four or more one-letter words ("i g n o r e")
// into one. Runs separated by wider gaps were one word each in the
// original; here every run becomes one word, which is enough for the
// n-grams below to see them.
func joinSpelled(fields []string) []string {
	var out []string
	for i := 0; i < len(fields); {
		j := i
		for j < len(fields) && len([]rune(fields[j])) == 1 && unicode.IsLetter([]rune(fields[j])[0]) && !runes.IsCJK([]rune(fields[j])[0]) {
			j++
		}
		if j-i >= 4 {
			out = append(out, strings.Join(fields[i:j], ""))
			i = j
			continue
		}
		out = append(out, fields[i])
		i++
	}
	return out
}

// Features are what the model reads of a text, once normalized: stemmed
// content words, adjacent word pairs, pairs of content words up to
// skipWindow apart, Chinese characters and character pairs, and the cues
// it holds and their pairs (see cues).
func Features(text string) []string {
	t := Normalize(text)
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	words := lang.Words(t)
	prev := "^"
	var content []string // stems of the content words, in order
	for _, w := range words {
		rs := []rune(w)
		if runes.IsCJK(rs[0]) {
			continue
		}
		s := lang.Stem(w)
		if !lang.IsStopWord(w) || addressee[w] {
			add("w:" + s)
			content = append(content, s)
		}
		add("b:" + prev + "_" + s)
		prev = s
	}
	add("b:" + prev + "_$")
	for i := range content {
		for j := i + 1; j < len(content) && j <= i+skipWindow; j++ {
			add("s:" + content[i] + "_" + content[j])
		}
	}
	var han []rune
	for _, r := range t {
		if runes.IsCJK(r) {
			han = append(han, r)
			continue
		}
		if len(han) > 0 && han[len(han)-1] != ' ' {
			han = append(han, ' ')
		}
	}
	for i, r := range han {
		if r == ' ' {
			continue
		}
		add("h:" + string(r))
		if i+1 < len(han) && han[i+1] != ' ' {
			add("hh:" + string(han[i:i+2]))
		}
	}
	for _, f := range cueFeatures(t, words) {
		add(f)
	}
	return out
}

// addressee words say who a text speaks to; they stay features although
// they are stop words.
var addressee = map[string]bool{"you": true, "your": true, "yours": true, "yourself": true}

// skipWindow is how far apart two content words may be to make a pair
// feature ("ignore … instructions", "send … key").
const skipWindow = 3
