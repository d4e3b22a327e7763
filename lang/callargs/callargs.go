package callargs

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Param is one setting of a call.
type Param struct {
	// Key is the name as written: a flag keeps its dashes ("--timeout"),
	// a subscripted key its subscript (plt.rcParams['font.family']).
	Key string
	// Value is as written, quotes included; "" for a flag without one.
	Value string
	// Flag marks a command-line flag, Eq one written --key=value.
	Flag, Eq bool
	// Scope names what the setting belongs to when a call has several
	// parts (the program of one command of a pipeline); "" otherwise.
	Scope string
}

// String writes p back the way it was written: "--force", "-n staging",
// "--dry-run=client", "encoding='gbk'".
func (p Param) String() string {
	switch {
	case p.Flag && p.Value == "":
		return p.Key
	case p.Flag && !p.Eq:
		return p.Key + " " + p.Value
	default:
		return p.Key + "=" + p.Value
	}
}

// Add returns ps with p added. A key already in ps takes p's value in its
// place, so that the last value of a repeated key wins and settings stay
// in order of first appearance.
func Add(ps []Param, p Param) []Param {
	if i := slices.IndexFunc(ps, func(q Param) bool { return q.Key == p.Key && q.Scope == p.Scope }); i >= 0 {
		ps[i] = p
		return ps
	}
	return append(ps, p)
}

// Join writes ps with sep between them.
func Join(ps []Param, sep string) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, sep)
}

// Flags returns the command-line flags among words, the words of a
// command line split the caller's way, in order of appearance with the
// last value of a repeated flag winning.
//
// A flag is a word of one or two dashes and a letter ("-5" is a number,
// "---" a rule). A short flag takes the next word as its value (-n
// staging); a long flag only when the word looks like a value: a number,
// a duration or a size, or a word with '=', '/' or ':' (--timeout 10m,
// --values ./prod.yaml), so that "--install billing-api" is a flag and a
// name. A word that starts with a dash, or an unquoted one holding a shell
// operator (|, ;, &, <, >), is never a value.
func Flags(words []string) []Param {
	var out []Param
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !isFlag(w) {
			continue
		}
		if k, v, ok := strings.Cut(w, "="); ok {
			out = Add(out, Param{Key: k, Value: v, Flag: true, Eq: true})
			continue
		}
		if i+1 < len(words) && takesValue(w, words[i+1]) {
			out = Add(out, Param{Key: w, Value: words[i+1], Flag: true})
			i++
			continue
		}
		out = Add(out, Param{Key: w, Flag: true})
	}
	return out
}

func isFlag(w string) bool {
	name := strings.TrimLeft(w, "-")
	if len(w)-len(name) > 2 || name == w || name == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsLetter(r)
}

// valueLikeRE recognises a long flag's value: a number, a duration or a
// size (--timeout 10m, --retries 3, --memory 512Mi).
var valueLikeRE = regexp.MustCompile(`^[\d.]+[a-zA-Z]{0,3}$|^\d`)

func takesValue(flag, next string) bool {
	if strings.HasPrefix(next, "-") {
		return false
	}
	if !strings.HasPrefix(next, "'") && !strings.HasPrefix(next, `"`) && strings.ContainsAny(next, "|;&<>") {
		return false // a pipe or a redirection, not a value
	}
	if !strings.HasPrefix(flag, "--") {
		return true
	}
	return valueLikeRE.MatchString(next) || strings.ContainsAny(next, "=/:")
}

// assignRE finds keyword arguments and assignments (encoding='gbk',
// if_exists="append", VAR=value, plt.rcParams['font.family'] = [...]).
// The value is a quoted string, a list, a dict or a bare word, none of
// them across a line break; the pattern cannot match "==", since a value
// never starts with '='.
var assignRE = regexp.MustCompile(`([A-Za-z_][\w.]*(?:\[['"][^'"\]\n]+['"]\])?)\s*=\s*('[^'\n]*'|"[^"\n]*"|\[[^\]\n]*\]|\{[^}\n]*\}|[\w.+\-:/]+)`)

// Assignments returns the keyword arguments and assignments in src, in
// order of appearance with the last value of a repeated key winning.
//
// Three look-alikes are not settings: a bare word followed by '(' is a
// call's result (df = pd.read_csv(…)); an assignment inside a string
// literal is data (a URL's ?date=…); and a key right after a dash belongs
// to a flag written --key=value, which Flags reads.
func Assignments(src string) []Param {
	var out []Param
	quoted := quotedMask(src)
	for _, m := range assignRE.FindAllStringSubmatchIndex(src, -1) {
		keyStart, end := m[2], m[1]
		switch {
		case keyStart > 0 && src[keyStart-1] == '-':
			continue
		case quoted[keyStart]:
			continue
		case end < len(src) && src[end] == '(':
			continue
		}
		out = Add(out, Param{Key: src[m[2]:m[3]], Value: src[m[4]:m[5]]})
	}
	return out
}

// quotedMask marks the bytes of s inside a '…' or "…" literal. A literal
// ends at a line break, as assignRE's quoted values do: an apostrophe in a
// comment ("# let's try gbk") must not hide the settings of the lines
// after it.
func quotedMask(s string) []bool {
	mask := make([]bool, len(s))
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			quote = 0
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			mask[i] = true
		case c == '\'' || c == '"':
			quote = c
		}
	}
	return mask
}
