package lang

import "strings"

// Stem reduces a folded English word to its Porter stem ("running" →
// "run", "parties" → "parti", "relational" → "relat"), so that inflected
// forms of a word match in the keyword index. Words shorter than three
// letters and words with anything but ASCII letters (numbers, CJK, accents)
// are returned unchanged.
//
// It implements M. F. Porter's 1980 algorithm ("An algorithm for suffix
// stripping"), steps 1a to 5b, with the published revision of step 2
// (-logi). Stems are index keys, not words: they only need to be equal for
// related forms.
func Stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	s := stemmer{b: []byte(w)}
	s.step1a()
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return string(s.b)
}

type stemmer struct{ b []byte }

// cons reports whether b[i] is a consonant: not a vowel, and 'y' only when
// it follows a vowel or starts the word.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// measure is m in [C](VC)^m[V] for the first n letters.
func (s *stemmer) measure(n int) int {
	m, i := 0, 0
	for i < n && s.cons(i) {
		i++
	}
	for i < n {
		for i < n && !s.cons(i) {
			i++
		}
		if i >= n {
			break
		}
		m++
		for i < n && s.cons(i) {
			i++
		}
	}
	return m
}

func (s *stemmer) hasVowel(n int) bool {
	for i := 0; i < n; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doubleCons reports whether the first n letters end in a double consonant.
func (s *stemmer) doubleCons(n int) bool {
	return n >= 2 && s.b[n-1] == s.b[n-2] && s.cons(n-1)
}

// cvc reports whether the first n letters end consonant-vowel-consonant
// with the last consonant not w, x or y ("hop", not "snow").
func (s *stemmer) cvc(n int) bool {
	if n < 3 || !s.cons(n-1) || s.cons(n-2) || !s.cons(n-3) {
		return false
	}
	c := s.b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func (s *stemmer) ends(suffix string) bool { return strings.HasSuffix(string(s.b), suffix) }

// replace swaps suffix (known to be present) for repl.
func (s *stemmer) replace(suffix, repl string) {
	s.b = append(s.b[:len(s.b)-len(suffix)], repl...)
}

func (s *stemmer) step1a() {
	switch {
	case s.ends("sses"):
		s.replace("sses", "ss")
	case s.ends("ies"):
		s.replace("ies", "i")
	case s.ends("ss"):
	case s.ends("s"):
		s.replace("s", "")
	}
}

func (s *stemmer) step1b() {
	if s.ends("eed") {
		if s.measure(len(s.b)-3) > 0 {
			s.replace("eed", "ee")
		}
		return
	}
	var cut string
	switch {
	case s.ends("ed") && s.hasVowel(len(s.b)-2):
		cut = "ed"
	case s.ends("ing") && s.hasVowel(len(s.b)-3):
		cut = "ing"
	default:
		return
	}
	s.replace(cut, "")
	n := len(s.b)
	switch {
	case s.ends("at"), s.ends("bl"), s.ends("iz"):
		s.b = append(s.b, 'e')
	case s.doubleCons(n) && s.b[n-1] != 'l' && s.b[n-1] != 's' && s.b[n-1] != 'z':
		s.b = s.b[:n-1]
	case s.measure(n) == 1 && s.cvc(n):
		s.b = append(s.b, 'e')
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.hasVowel(len(s.b)-1) {
		s.b[len(s.b)-1] = 'i'
	}
}

// rule is one suffix rewrite of steps 2 to 4.
type rule struct{ suffix, repl string }

var step2Rules = []rule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"abli", "able"}, {"alli", "al"}, {"entli", "ent"},
	{"eli", "e"}, {"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"},
	{"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"},
	{"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
	{"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

// applyLongest rewrites the longest suffix of rules present, if the stem
// before it has a measure above minM. Only the longest matching suffix is
// considered, as the algorithm specifies.
func (s *stemmer) applyLongest(rules []rule, minM int) {
	best := -1
	for i, r := range rules {
		if s.ends(r.suffix) && (best < 0 || len(r.suffix) > len(rules[best].suffix)) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	r := rules[best]
	if s.measure(len(s.b)-len(r.suffix)) > minM {
		s.replace(r.suffix, r.repl)
	}
}

func (s *stemmer) step2() { s.applyLongest(step2Rules, 0) }
func (s *stemmer) step3() { s.applyLongest(step3Rules, 0) }

func (s *stemmer) step4() {
	best := ""
	for _, suf := range step4Suffixes {
		if s.ends(suf) && len(suf) > len(best) {
			best = suf
		}
	}
	if best == "" {
		return
	}
	n := len(s.b) - len(best)
	if s.measure(n) <= 1 {
		return
	}
	if best == "ion" && (n == 0 || s.b[n-1] != 's' && s.b[n-1] != 't') {
		return
	}
	s.b = s.b[:n]
}

func (s *stemmer) step5() {
	n := len(s.b)
	if s.b[n-1] == 'e' {
		m := s.measure(n - 1)
		if m > 1 || m == 1 && !s.cvc(n-1) {
			s.b = s.b[:n-1]
			n--
		}
	}
	if s.b[n-1] == 'l' && s.doubleCons(n) && s.measure(n) > 1 {
		s.b = s.b[:n-1]
	}
}
