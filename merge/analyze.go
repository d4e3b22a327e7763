package merge

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/hindsight-memory/hindsight/lang"
)

// termClass says what a term of a statement is.
type termClass int

const (
	tWord   termClass = iota + 1 // an English word (stemmed) or a Chinese character
	tAnchor                      // a name that identifies the subject: file, host, identifier, proper noun
	tValue                       // a value of a known slot (time zone, encoding, …)
	tNumber                      // a number; its slot is the unit or the word before it
	tParam                       // code, a flag, key=value, a quoted string, a date or time literal
)

// isSubject reports whether terms of class c say what a statement is about
// (as opposed to which value or parameter it gives).
func (c termClass) isSubject() bool { return c == tWord || c == tAnchor }

// term is one distinct piece of meaning in a statement.
type term struct {
	key     string
	class   termClass
	surface string // as written (folded), for reasons
	pos     int    // order of first appearance
	// rejected is set when every occurrence names a rejected alternative
	// ("…, not npm", "instead of tabs", "而不是 gbk").
	rejected bool
	// negated is set when every occurrence is in the scope of a negation
	// cue ("never deploy", "不要上线").
	negated bool
}

// valueRef is one value of a slot as a statement uses it.
type valueRef struct {
	canon    string
	surface  string
	rejected bool // named as the rejected alternative, or negated by a cue
}

// statement is the offline judge's reading of one memory text.
type statement struct {
	text     string
	terms    map[string]*term
	negative bool     // the statement negates what it says ("never", "不要")
	cues     []string // the negation cues, as written
	// values holds slot → values; slot is a category ("timezone") or, for
	// numbers and key=value parameters, "n:<unit>" / "kv:<key>".
	values map[string][]valueRef
}

// piece is one token of the analysed text, in order.
type piece struct {
	kind    pieceKind
	key     string // for content pieces: the term key
	class   termClass
	surface string
	ph      phrase // for phrase pieces
	slot    string // for values and numbers
	canon   string
	pos     int
}

type pieceKind int

const (
	pContent pieceKind = iota + 1
	pBreak             // end of a clause
	pCue
	pContrast
	pContrastEnd
	pUnless
	pBoundIfNum
	pNot    // "not": a cue, or a contrast at the start of a later clause
	pIgnore // a conditional bound that did not apply
	pGap    // a dropped function word: keeps numbers from reaching past it
)

var (
	reCode     = regexp.MustCompile("`[^`\n]+`")
	reURL      = regexp.MustCompile(`https?://[^\s<>"'，。；）)\]]+`)
	reKV       = regexp.MustCompile(`\b[a-z_][a-z0-9_.]*=(?:'[^'\n]*'|"[^"\n]*"|[^\s,;，；。)）]+)`)
	reQuoted   = regexp.MustCompile(`(?:^|[\s(（=,:：])('[^'\n]{1,80}'|"[^"\n]{1,80}"|“[^”\n]{1,80}”|‘[^’\n]{1,80}’|「[^」\n]{1,80}」|『[^』\n]{1,80}』)`)
	reDateFmt  = regexp.MustCompile(`\b(?:yyyy|yy|mm|dd)(?:[-/.](?:yyyy|yy|mm|dd)){1,2}(?:[ t]hh(?::mm(?::ss)?)?)?\b`)
	reDateTime = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:t\d{2}:\d{2}(?::\d{2})?(?:z|[+-]\d{2}:?\d{2})?)?\b|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*-\s*\d{1,2}:\d{2})?\b`)
	reFlag     = regexp.MustCompile(`(?:^|[\s(（，,：:])(--?[a-z][a-z0-9-]*)`)
	rePath     = regexp.MustCompile(`(?:^|[\s(（，,：:=])((?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]*)*)`)
	reDotted   = regexp.MustCompile(`\b[a-z0-9_][a-z0-9_\-]*(?:\.[a-z0-9_\-]+)+(?::\d+)?\b|(?:^|[\s(（])(\.[a-z][a-z0-9_.\-]*)`)
	reIdent    = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
	reNumber   = regexp.MustCompile(`v?\d+(?:,\d{3})+(?:\.\d+)?|v?\d+(?:\.\d+)*(?:%|kb|mb|gb|tb|ms|k|s|m|h|d|x)?`)
	reWord     = regexp.MustCompile(`[a-z][a-z0-9]*(?:['’][a-z]+)?(?:-[a-z0-9]+)*`)
	reProper   = regexp.MustCompile(`\p{Lu}[\p{L}\p{N}]*`)
	reEnNumber = regexp.MustCompile(`\b(?:` + strings.Join(sortedKeys(numberWords), "|") + `)\b`)
)

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return len(ks[i]) > len(ks[j]) || len(ks[i]) == len(ks[j]) && ks[i] < ks[j] })
	return ks
}

// span is a claimed byte range of the folded text and the pieces it yields.
type span struct {
	start, end int
	pieces     []piece
}

// analyze reads a memory text: it splits it into clauses and terms, finds
// slot values, numbers and parameters, negation and contrast, and returns
// the statement the comparison rules work on.
func analyze(text string) *statement {
	raw := norm.NFKC.String(text)
	proper := properNouns(raw)
	folded := strings.ToLower(raw)
	folded = strings.NewReplacer("’", "'", "‘", "'", "—", ", ", "–", "-").Replace(folded)
	folded = cjkNumberRE.ReplaceAllStringFunc(folded, func(m string) string {
		sub := cjkNumberRE.FindStringSubmatch(m)
		if n, ok := cjkNumber(sub[1]); ok {
			return " " + n + " " + sub[2]
		}
		return m
	})
	folded = reEnNumber.ReplaceAllStringFunc(folded, func(w string) string { return numberWords[w] })

	var spans []span
	claimed := func(s, e int) bool {
		for _, sp := range spans {
			if s < sp.end && e > sp.start {
				return true
			}
		}
		return false
	}
	claim := func(s, e int, ps ...piece) {
		if s >= e || claimed(s, e) {
			return
		}
		for i := range ps {
			ps[i].pos = s
		}
		spans = append(spans, span{start: s, end: e, pieces: ps})
	}
	param := func(kind, s string) piece {
		s = strings.TrimSpace(s)
		return piece{kind: pContent, class: tParam, key: "p:" + kind + ":" + s, surface: s}
	}
	group := func(re *regexp.Regexp, fn func(s, e int)) {
		for _, m := range re.FindAllStringSubmatchIndex(folded, -1) {
			s, e := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				s, e = m[2], m[3]
			}
			fn(s, e)
		}
	}

	group(reCode, func(s, e int) { claim(s, e, param("code", strings.Trim(folded[s:e], "`"))) })
	group(reURL, func(s, e int) {
		for e > s && strings.ContainsRune(".,;:!?", rune(folded[e-1])) {
			e--
		}
		u := folded[s:e]
		claim(s, e, piece{kind: pContent, class: tValue, key: "v:url=" + u, surface: u, slot: "url", canon: u})
	})
	group(reKV, func(s, e int) {
		kv := strings.TrimRight(folded[s:e], ".:")
		e = s + len(kv)
		k, v, _ := strings.Cut(kv, "=")
		v = strings.Trim(v, `'"`)
		claim(s, e, piece{kind: pContent, class: tParam, key: "p:kv:" + k + "=" + v, surface: kv, slot: "kv:" + k, canon: v})
	})
	group(reQuoted, func(s, e int) {
		q := folded[s:e]
		_, size := utf8.DecodeRuneInString(q)
		_, last := utf8.DecodeLastRuneInString(q)
		claim(s, e, param("quote", q[size:len(q)-last]))
	})
	group(reDateFmt, func(s, e int) {
		f := strings.ReplaceAll(folded[s:e], "t", " ")
		claim(s, e, piece{kind: pContent, class: tValue, key: "v:date-format=" + f, surface: folded[s:e], slot: "date-format", canon: f})
	})
	group(reDateTime, func(s, e int) { claim(s, e, param("time", folded[s:e])) })
	group(reFlag, func(s, e int) { claim(s, e, param("flag", folded[s:e])) })
	group(rePath, func(s, e int) {
		p := folded[s:e]
		if !strings.HasSuffix(p, "/...") {
			p = strings.TrimRight(p, ".,")
		}
		e = s + len(p)
		claim(s, e, piece{kind: pContent, class: tValue, key: "v:path=" + p, surface: p, slot: "path", canon: p})
	})

	// Names before phrases, so that "pnpm-lock.yaml" is a file, not pnpm.
	group(reDotted, func(s, e int) {
		n := folded[s:e]
		if strings.IndexFunc(n, unicode.IsLetter) < 0 {
			return // a version number, handled below
		}
		if parts := strings.Split(strings.Trim(n, "."), "."); len(parts) > 1 && len(parts[0]) == 1 && len(parts[1]) == 1 {
			return // an abbreviation: "e.g", "i.e"
		}
		claim(s, e, piece{kind: pContent, class: tAnchor, key: "a:" + n, surface: n})
	})
	group(reIdent, func(s, e int) {
		id := folded[s:e]
		if ph, ok := lexicon[id]; ok && ph.class == phValue {
			claim(s, e, piece{kind: pContent, class: tValue, key: "v:" + ph.cat + "=" + ph.canon, surface: id, slot: ph.cat, canon: ph.canon})
			return
		}
		claim(s, e, piece{kind: pContent, class: tAnchor, key: "a:" + id, surface: id})
	})
	// Dictionary phrases: values, cues, contrasts, bounds, synonyms.
	for _, m := range phraseRE.FindAllStringIndex(folded, -1) {
		s, e := m[0], m[1]
		p := folded[s:e]
		ph := lexicon[p]
		switch ph.class {
		case phValue:
			claim(s, e, piece{kind: pContent, class: tValue, key: "v:" + ph.cat + "=" + ph.canon, surface: p, slot: ph.cat, canon: ph.canon})
		case phBound:
			claim(s, e, piece{kind: pContent, class: tValue, key: "v:bound=" + ph.canon, surface: p, slot: "bound", canon: ph.canon})
		case phBoundIfNum:
			claim(s, e, piece{kind: pBoundIfNum, surface: p, ph: ph})
		case phCue:
			if p == "not" {
				claim(s, e, piece{kind: pNot, surface: p})
			} else {
				claim(s, e, piece{kind: pCue, surface: p})
			}
		case phContrast:
			claim(s, e, piece{kind: pContrast, surface: p})
		case phContrastEnd:
			claim(s, e, piece{kind: pContrastEnd, surface: p})
		case phUnless:
			claim(s, e, piece{kind: pUnless, surface: p})
		case phSyn:
			claim(s, e, textPieces(ph.canon, proper)...)
		case phPlain:
			claim(s, e, textPieces(p, proper)...)
		case phKeep:
			var ps []piece
			for _, r := range p {
				ps = append(ps, piece{kind: pContent, class: tWord, key: "c:" + string(r), surface: string(r)})
			}
			claim(s, e, ps...)
		}
	}

	group(reNumber, func(s, e int) {
		if s > 0 {
			if r, _ := utf8.DecodeLastRuneInString(folded[:s]); unicode.IsLetter(r) && !lang.IsCJK(r) || r == '_' || r == '-' {
				return // part of a word: "s3", "utf8", "gpt-4"
			}
		}
		if e < len(folded) {
			if r, _ := utf8.DecodeRuneInString(folded[e:]); unicode.IsLetter(r) && !lang.IsCJK(r) || r == '_' {
				return
			}
		}
		n := strings.TrimPrefix(strings.ReplaceAll(folded[s:e], ",", ""), "v")
		num := strings.TrimRightFunc(n, func(r rune) bool { return unicode.IsLetter(r) || r == '%' })
		p := piece{kind: pContent, class: tNumber, key: "n:" + num, surface: folded[s:e], canon: num, slot: "n:" + numberSlot(folded, s, e, proper)}
		if unit := n[len(num):]; unit != "" {
			p.slot = "n:" + unit // "60s" is 60 in the slot "s", like "60 s"
		}
		claim(s, e, p)
	})

	// The rest is plain text: punctuation, words and Chinese.
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var pieces []piece
	at := 0
	for _, sp := range spans {
		pieces = append(pieces, gapPieces(folded[at:sp.start], at, proper)...)
		pieces = append(pieces, sp.pieces...)
		at = sp.end
	}
	pieces = append(pieces, gapPieces(folded[at:], at, proper)...)
	prefers := strings.Contains(folded, "prefer") || strings.Contains(folded, "偏好") || strings.Contains(folded, "更喜欢")
	return build(text, pieces, prefers)
}

// properNouns returns, folded, the capitalised words of raw that do not
// start a sentence and are not all capitals: names such as "Acme",
// "ClickHouse" or "Python". Acronyms ("API", "CI") are ordinary words.
func properNouns(raw string) map[string]bool {
	out := map[string]bool{}
	for _, m := range reProper.FindAllStringIndex(raw, -1) {
		w := raw[m[0]:m[1]]
		if strings.ToUpper(w) == w {
			continue
		}
		if rest := raw[m[1]:]; strings.HasPrefix(rest, "_") || len(rest) > 1 && rest[0] == '.' && unicode.IsLetter(rune(rest[1])) {
			continue // part of a name like Foo_bar or Foo.csv
		}
		if sentenceStart(raw[:m[0]]) {
			continue
		}
		out[strings.ToLower(w)] = true
	}
	return out
}

func sentenceStart(before string) bool {
	before = strings.TrimRightFunc(before, unicode.IsSpace)
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return strings.ContainsRune(".!?;:。！？；：\n\"'“‘(（", r)
}

// breakRunes end a clause: a negation or contrast reaches no further.
const breakRunes = ",;:.!?，；：。！？\n"

// gapPieces tokenises text between claimed spans: clause breaks, English
// words and Chinese characters.
func gapPieces(s string, offset int, proper map[string]bool) []piece {
	var out []piece
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case strings.ContainsRune(breakRunes, r):
			out = append(out, piece{kind: pBreak, pos: offset + i})
			i += size
		case lang.IsCJK(r):
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !lang.IsCJK(r2) {
					break
				}
				j += sz
			}
			for _, p := range cjkPieces(s[i:j]) {
				p.pos = offset + i
				out = append(out, p)
			}
			i = j
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			loc := reWord.FindStringIndex(s[i:])
			if loc == nil || loc[0] != 0 {
				i += size
				continue
			}
			w := s[i : i+loc[1]]
			ps := wordPieces(w, proper)
			if len(ps) == 0 {
				ps = []piece{{kind: pGap}}
			}
			for _, p := range ps {
				p.pos = offset + i
				out = append(out, p)
			}
			i += loc[1]
		default:
			i += size
		}
	}
	return out
}

// textPieces tokenises a replacement text (a synonym's canonical form).
func textPieces(s string, proper map[string]bool) []piece {
	return gapPieces(s, 0, proper)
}

// wordPieces turns one English word into pieces: nothing for a weak word,
// otherwise its stem (after synonyms), marked as an anchor when it is a
// proper noun.
func wordPieces(w string, proper map[string]bool) []piece {
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
	if w == "" {
		return nil
	}
	if syn, ok := synonyms[w]; ok {
		w = syn
	}
	if lang.IsStopWord(w) || weakSet[w] {
		return nil
	}
	key := w
	if !strings.ContainsAny(w, "-'") {
		key = lang.Stem(w)
	}
	class := tWord
	if proper[w] {
		class = tAnchor
	}
	return []piece{{kind: pContent, class: class, key: "w:" + key, surface: w}}
}

// cjkPieces turns a run of Chinese characters (with phrases already
// claimed) into one piece per remaining content character.
func cjkPieces(run string) []piece {
	run = cjkWeakRE.ReplaceAllString(run, " ")
	var out []piece
	for _, r := range run {
		if r == ' ' {
			continue
		}
		c := string(r)
		out = append(out, piece{kind: pContent, class: tWord, key: "c:" + c, surface: c})
	}
	return out
}

// build runs the clause-level pass: it resolves "not" (cue or contrast),
// conditional bounds, negation and contrast scopes and number slots, and
// collects the statement's terms and values.
func build(text string, ps []piece, prefers bool) *statement {
	st := &statement{text: text, terms: map[string]*term{}, values: map[string][]valueRef{}}
	for i := range ps {
		if ps[i].kind != pBoundIfNum {
			continue
		}
		switch {
		case i+1 < len(ps) && ps[i+1].kind == pContent && ps[i+1].class == tNumber:
			ps[i] = piece{kind: pContent, class: tValue, key: "v:bound=" + ps[i].ph.canon, surface: ps[i].surface, slot: "bound", canon: ps[i].ph.canon, pos: ps[i].pos}
		case ps[i].surface == "over" && prefers:
			// "prefers X over Y" names Y as the rejected option.
			ps[i] = piece{kind: pContrast, surface: "over", pos: ps[i].pos}
		default:
			ps[i] = piece{kind: pIgnore, pos: ps[i].pos}
		}
	}

	var (
		inNeg, inContrast bool
		clauseStart       = true // no content yet in this clause
		seenContent       bool   // content in an earlier clause
		clauseNeg         bool
		clauseUnless      bool
		clauseCues        []string
		clauseNegated     []*term
	)
	endClause := func() {
		if clauseNeg && !clauseUnless {
			st.negative = true
			st.cues = append(st.cues, clauseCues...)
		}
		if clauseUnless {
			// "Never deploy without running the tests" asserts: a double
			// negation leaves nothing negated.
			for _, t := range clauseNegated {
				t.negated = false
			}
		}
		inNeg, inContrast, clauseNeg, clauseUnless, clauseCues, clauseNegated = false, false, false, false, nil, nil
		if !clauseStart {
			seenContent = true
		}
		clauseStart = true
	}
	for _, p := range ps {
		switch p.kind {
		case pBreak:
			endClause()
			continue
		case pNot:
			// "Use pnpm, not npm": a later clause opening with "not" names
			// a rejected alternative; anywhere else "not" negates.
			if clauseStart && seenContent {
				inContrast = true
			} else {
				inNeg, clauseNeg = true, true
				clauseCues = append(clauseCues, p.surface)
			}
			continue
		case pCue:
			inNeg, clauseNeg = true, true
			clauseCues = append(clauseCues, p.surface)
			clauseStart = false
			continue
		case pContrast:
			inContrast = true
			continue
		case pContrastEnd:
			inContrast = false
			continue
		case pUnless:
			if clauseNeg {
				clauseUnless = true
				inNeg = false
			}
			continue
		case pContent:
		default:
			continue
		}
		clauseStart = false
		// A cue negates the action, not when it happens: in "never deploy
		// on Fridays" Friday is not negated.
		negated := inNeg && !circumstantial[p.slot]
		rejected := inContrast || negated && p.class == tValue
		t, ok := st.terms[p.key]
		if !ok {
			t = &term{key: p.key, class: p.class, surface: p.surface, pos: len(st.terms), rejected: rejected, negated: negated}
			st.terms[p.key] = t
		} else {
			t.rejected = t.rejected && rejected
			t.negated = t.negated && negated
		}
		if negated {
			clauseNegated = append(clauseNegated, t)
		}
		if p.slot != "" {
			canon := p.canon
			if canon == "" {
				canon = strings.TrimPrefix(p.key, "n:")
			}
			st.values[p.slot] = append(st.values[p.slot], valueRef{canon: canon, surface: p.surface, rejected: rejected})
		}
	}
	endClause()
	return st
}

// numberSlot names the slot of the number at folded[s:e]: the unit or
// noun right after it ("500 rows", "3 次"), else the word right before it
// ("Python 3.12", "端口 9000"), else "number". Only white space may stand
// between the number and that word.
func numberSlot(folded string, s, e int, proper map[string]bool) string {
	after := strings.TrimLeft(folded[e:], " ")
	for _, u := range cjkUnits {
		if strings.HasPrefix(after, u) {
			return u
		}
	}
	if loc := reWord.FindStringIndex(after); loc != nil && loc[0] == 0 {
		if ps := wordPieces(after[:loc[1]], proper); len(ps) == 1 {
			return strings.TrimPrefix(ps[0].key, "w:")
		}
	}
	before := strings.TrimRight(folded[:s], " ")
	if r, _ := utf8.DecodeLastRuneInString(before); lang.IsCJK(r) {
		rs := []rune(before)
		k := len(rs) - 1
		for k > 0 && len(rs)-k < 2 && lang.IsCJK(rs[k-1]) {
			k--
		}
		return string(rs[k:])
	}
	if ws := reWord.FindAllString(before, -1); len(ws) > 0 && strings.HasSuffix(before, ws[len(ws)-1]) {
		if ps := wordPieces(ws[len(ws)-1], proper); len(ps) == 1 {
			return strings.TrimPrefix(ps[0].key, "w:")
		}
	}
	return "number"
}
