package redact

import (
	"math"
	"regexp"
	"strings"
	"unicode"
)

// A value is what follows a name that says secret, a flag that takes a
// password, or words that state one. Whether it is a secret is read from
// its shape, whatever its first character: a reference to where a secret
// is (a variable, a template, a command, code, a path), a placeholder
// that stands for one, or a mask is not one.

var (
	// variableRE: $NAME, ${…}, $(…), %NAME%, %(name)s, {{ … }}, {name},
	// secrets.NAME as CI systems write them.
	variableRE = regexp.MustCompile(`^(?:\$[A-Za-z_][A-Za-z0-9_]*|\$\{.*|\$\(.*|` + "`[^`]*`" + `|%[A-Za-z_][A-Za-z0-9_]*%|%\([A-Za-z_][A-Za-z0-9_]*\)[sd]|%[sdv]|\{\{.*\}\}|\{[A-Za-z_][A-Za-z0-9_.]*\}|<%=?.*%>|#\{.*\}|![A-Za-z_][A-Za-z0-9_]*)$`)
	// angledRE: <your-api-key>, <paste the token from the portal>,
	// <TOKEN>: words in angle brackets.
	angledRE = regexp.MustCompile(`^<\p{L}[\p{L}\p{N} _.\-/]*>$`)
	// bracketedRE: [REDACTED], [hidden], (secret), ***…: words or masks
	// in brackets.
	bracketedRE = regexp.MustCompile(`^[\[(][A-Za-z _\-*•x.]*[\])]$`)
	// codeRE: os.environ["X"], getenv("X"), settings.SECRET_KEY,
	// process.env.X, secrets.get('x'): code naming where a secret comes
	// from, as a whole value.
	codeRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*[(\[]|^(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(.*\)|\[.*\])(?:\.[A-Za-z_][A-Za-z0-9_]*|\(.*\)|\[.*\])*|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)$`)
	// pathRE: an absolute or relative path of ordinary names (or a glob
	// of them), a file holding the secret rather than the secret.
	pathRE = regexp.MustCompile(`^(?:~|\.{1,2})?/(?:[A-Za-z0-9_.@*-]+/)*[A-Za-z0-9_.@*?-]+/?$|^[A-Za-z0-9_.-]+/(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]+\.[a-z]{2,5}$|^(?:[A-Za-z]:)?\\[\\\w .-]+$`)
	// urlRE: a URL (one with a password in it is found on its own).
	urlRE = regexp.MustCompile(`^(?:[a-z][a-z0-9+.-]*:)?//`)
	// identifierRE: lower-case words joined by separators
	// (secret/prod/database, pg-creds, cl_base): a name, not a credential.
	identifierRE = regexp.MustCompile(`^[a-z]+(?:[/._-][a-z]+)*$`)
	// maskRunRE is a run of mask characters: a value shown masked.
	maskRunRE = regexp.MustCompile(`[xX*•#]{6,}`)
	// wordSplitRE splits a value into its words.
	wordSplitRE = regexp.MustCompile(`[\s_.\-/]+`)
)

// placeholderWords stand in for a secret or say something about it. A
// value made of them alone (and no digit) is a placeholder: "changeme",
// "your-api-key-here", "REPLACE_ME", "<token>". A random value that
// happens to contain one ("hEre7Kq…") is not.
var placeholderWords = map[string]bool{
	"your": true, "you": true, "my": true, "our": true, "the": true, "a": true, "an": true, "of": true, "for": true, "to": true, "from": true, "in": true, "with": true,
	"here": true, "there": true, "goes": true, "this": true, "that": true,
	"api": true, "key": true, "keys": true, "token": true, "tokens": true, "secret": true, "secrets": true, "password": true, "passwd": true, "pass": true, "pwd": true,
	"passphrase": true, "credential": true, "credentials": true, "auth": true, "access": true, "private": true, "client": true, "bearer": true, "value": true, "string": true,
	"example": true, "sample": true, "placeholder": true, "dummy": true, "fake": true, "test": true, "testing": true, "demo": true, "foo": true, "bar": true, "baz": true,
	"replace": true, "me": true, "change": true, "changeme": true, "changeit": true, "insert": true, "put": true, "enter": true, "paste": true, "fill": true, "set": true,
	"todo": true, "tbd": true, "fixme": true, "xxx": true, "redacted": true, "hidden": true, "masked": true, "removed": true, "omitted": true, "secured": true,
	"none": true, "null": true, "nil": true, "empty": true, "undefined": true, "unset": true, "true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"required": true, "optional": true, "missing": true, "invalid": true, "expired": true, "incorrect": true, "wrong": true, "reset": true, "default": true,
	"new": true, "old": true, "real": true, "actual": true, "generated": true, "random": true, "long": true, "strong": true, "some": true, "any": true,
	"env": true, "environment": true, "variable": true, "var": true, "config": true, "file": true, "vault": true, "provided": true, "supplied": true, "see": true, "above": true, "below": true,
}

// typeNames are values that are a type annotation (password: string).
var typeNames = map[string]bool{"string": true, "str": true, "int": true, "bool": true, "boolean": true, "number": true, "bytes": true,
	"any": true, "object": true, "secretstr": true, "text": true, "varchar": true, "char": true, "optional[str]": true, "string?": true}

// notPlaceholder reports whether v could be a secret: it is not empty, a
// variable or template, words in brackets, a mask, words that stand for a
// secret, or an ellipsis.
func notPlaceholder(v string) bool {
	v = strings.TrimSpace(strings.Trim(v, `"'`+"`"))
	if v == "" || variableRE.MatchString(v) || angledRE.MatchString(v) || bracketedRE.MatchString(v) {
		return false
	}
	if strings.Trim(v, "*x.•#-_ ") == "" || strings.Trim(v, "*xX.•#-_ ") == "" || maskRunRE.MatchString(v) {
		return false
	}
	if strings.Contains(v, "...") || strings.Contains(v, "…") {
		return false
	}
	// A provider's prefix alone, its body left out: "sk-ant-", "ghp_".
	if strings.IndexByte("-_", v[len(v)-1]) >= 0 && !strings.ContainsAny(v, "0123456789") {
		return false
	}
	// A PEM block with no key in it: "<your key here>".
	if strings.HasPrefix(v, "-----BEGIN") && !keyBodyRE.MatchString(v) {
		return false
	}
	return !placeholderValue(v)
}

// placeholderValue: every word of v stands for a secret, and v has no
// digit ("your_api_key_here", "REPLACE-ME", "changeme").
func placeholderValue(v string) bool {
	if strings.ContainsAny(v, "0123456789") {
		return false
	}
	words := wordSplitRE.Split(strings.Trim(strings.ToLower(v), "<>[](){}"), -1)
	n := 0
	for _, w := range words {
		switch {
		case w == "":
		case placeholderWords[w]:
			if len(w) >= 4 {
				n++
			}
		case len(w) <= 3:
			// A provider's prefix around the words: sk-your-key-here.
		default:
			return false
		}
	}
	return n > 0
}

// referenceValue: v names where a secret is rather than being one (code,
// a path, a URL, a type).
func referenceValue(v string) bool {
	v = strings.Trim(v, `"'`)
	return codeRE.MatchString(v) || pathRE.MatchString(v) || urlRE.MatchString(v) || typeNames[strings.ToLower(v)]
}

// mixed accepts a token with both letters and digits: real keys have both;
// "sk-and-more-words-like-this" does not.
func mixed(v string) bool {
	var letter, digit bool
	for _, r := range v {
		letter = letter || unicode.IsLetter(r)
		digit = digit || unicode.IsDigit(r)
	}
	return letter && digit
}

// classes counts the kinds of character in v: lower case, upper case,
// digits, and others.
func classes(v string) (n int, lower, upper, digit, other bool) {
	for _, r := range v {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		case unicode.IsLetter(r):
			lower = true // scripts without case
		case r == '\'' || r == '’' || r == '-':
			// As in words: "don't", "well-known".
		default:
			other = true
		}
	}
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			n++
		}
	}
	return
}

// credentialLike reports whether a value stated in words could be a
// password or key rather than a word of the sentence: at least six
// characters, and letters with digits or symbols, or three kinds of
// character, or upper and lower case inside a word of eight or more
// ("CorrectHorseBattery"), and no placeholder.
func credentialLike(v string) bool {
	v = strings.Trim(v, `"'`+"`“”‘’")
	if len(v) < 6 || !notPlaceholder(v) || referenceValue(v) || identifierRE.MatchString(v) {
		return false
	}
	n, lower, upper, digit, other := classes(v)
	letters := lower || upper
	switch {
	case n >= 3:
		return true
	case letters && (digit || other):
		return !isNumberLike(v)
	case lower && upper && len(v) >= 8:
		// Inner capitals: not a capitalised word.
		for _, r := range v[1:] {
			if unicode.IsUpper(r) {
				return true
			}
		}
	}
	return false
}

// isNumberLike: a version, a size, a date or a time (1.2.3, 12GB, v2,
// 2026-03-01, 10:30), which words may follow "is".
func isNumberLike(v string) bool {
	return numberLikeRE.MatchString(v)
}

var numberLikeRE = regexp.MustCompile(`^(?:v?\d+(?:[.:/-]\d+)*[a-zA-Z%]{0,3}|\d+(?:st|nd|rd|th)|[a-zA-Z]{1,3}\d{1,3})$`)

// highEntropy accepts a random-looking value: upper and lower case and
// digits, not all hex (digests and IDs are), eight characters or more,
// and at least 3.5 bits of entropy per character (or, shorter, most of
// what its length allows).
func highEntropy(v string) bool {
	if !mixed(v) || isHex(strings.Trim(v, "=")) {
		return false
	}
	var upper, lower bool
	for _, r := range v {
		upper = upper || unicode.IsUpper(r)
		lower = lower || unicode.IsLower(r)
	}
	// A short value cannot reach 3.5 bits a character: ask for most of
	// what its length allows.
	need := min(3.5, 0.85*math.Log2(float64(len(v))))
	return upper && lower && len(v) >= 8 && entropy(v) >= need
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF-", r) {
			return false
		}
	}
	return true
}

func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}
