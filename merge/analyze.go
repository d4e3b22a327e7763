package merge

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/runes"
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
	slot    string // for values: the slot
	surface string // as written (folded), for reasons
	pos     int    // order of first appearance
	// noun is the slot the term names when every occurrence is a slot
	// noun ("timestamps", "编码"); see withoutSlotNouns.
	noun string
	// rejected is set when every occurrence names a rejected alternative
	// ("…, not npm", "instead of tabs", "而不是 gbk").
	rejected bool
	// negated is set when every occurrence is in the scope of a negation
	// cue ("never deploy", "不要上线").
	negated bool
	// dismissed is set when every occurrence is negated, rejected or named
	// as what a change replaces ("从 poetry 迁到 uv …，不再用 poetry").
	dismissed bool
	// replacedAll is set when every occurrence names what a change
	// replaces ("把 black 换成 ruff").
	replacedAll bool
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
	// change is set when the statement announces a change of mind or of
	// state ("change of plan", "no longer", "switched to", "改成", "不再"):
	// it replaces what was said before about its subject.
	change bool
	// restates and refines are set when it repeats what was said before
	// ("again", "还是", "上次说过") or adds detail to it ("one more detail").
	restates, refines bool
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
	noun    string // for words that name a slot ("timestamps", "编码"): the slot
	at      int    // byte offset in the folded text
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
	pGap    // a dropped function word or filler phrase
	pLater  // "以后": a filler opening a clause, else "after"
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
	reIdent    = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*-[0-9][a-z0-9]*(?:-[a-z0-9]+)*\b`)
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

// scanner claims the parts of a folded text that are not plain words:
// code, URLs, parameters, names, dictionary phrases and numbers. A part is
// claimed once, by the first pattern that matches it, in the order analyze
// tries them.
type scanner struct {
	folded string
	proper map[string]bool
	spans  []span
}

// claim claims [s, e) for ps unless part of it is already claimed, and
// reports whether it did.
func (sc *scanner) claim(s, e int, ps ...piece) bool {
	if s >= e {
		return false
	}
	for _, sp := range sc.spans {
		if s < sp.end && e > sp.start {
			return false
		}
	}
	sc.spans = append(sc.spans, span{start: s, end: e, pieces: ps})
	return true
}

// each calls fn with the range of every match of re, or of its first
// group when the pattern has one and it matched.
func (sc *scanner) each(re *regexp.Regexp, fn func(s, e int)) {
	for _, m := range re.FindAllStringSubmatchIndex(sc.folded, -1) {
		s, e := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			s, e = m[2], m[3]
		}
		fn(s, e)
	}
}

func param(kind, s string) piece {
	s = strings.TrimSpace(s)
	return piece{kind: pContent, class: tParam, key: "p:" + kind + ":" + s, surface: s}
}

func value(slot, canon, surface string) piece {
	return piece{kind: pContent, class: tValue, key: "v:" + slot + "=" + canon, surface: surface, slot: slot, canon: canon}
}

func anchor(name string) piece {
	return piece{kind: pContent, class: tAnchor, key: "a:" + name, surface: name}
}

// analyze reads a memory text: it splits it into clauses and terms, finds
// slot values, numbers and parameters, negation and contrast, and returns
// the statement the comparison rules work on.
func analyze(text string) *statement {
	raw := norm.NFKC.String(text)
	sc := &scanner{folded: fold(raw), proper: properNouns(raw)}
	sc.claimSpans()
	f := sc.folded

	// The rest is plain text: punctuation, words and Chinese.
	sort.Slice(sc.spans, func(i, j int) bool { return sc.spans[i].start < sc.spans[j].start })
	var pieces []piece
	at := 0
	for _, sp := range sc.spans {
		pieces = append(pieces, offset(gapPieces(f[at:sp.start], sc.proper), at)...)
		ps := slices.Clone(sp.pieces)
		for i := range ps {
			ps[i].at = sp.start
		}
		pieces = append(pieces, ps...)
		at = sp.end
	}
	pieces = append(pieces, offset(gapPieces(f[at:], sc.proper), at)...)
	prefers := strings.Contains(f, "prefer") || strings.Contains(f, "偏好") || strings.Contains(f, "更喜欢")
	st := build(text, pieces, prefers, replacedSpans(f))
	st.change = lang.ChangeCue.MatchString(f)
	st.restates = lang.RestateCue.MatchString(f)
	st.refines = lang.RefineCue.MatchString(f)
	return st
}

// fold lower-cases NFKC text, unifies quotes and dashes, and spells
// numbers with digits ("three" → "3", "两位" → "2 位").
func fold(raw string) string {
	f := strings.ToLower(raw)
	f = strings.NewReplacer("’", "'", "‘", "'", "—", ", ", "–", "-").Replace(f)
	f = cjkNumberRE.ReplaceAllStringFunc(f, func(m string) string {
		sub := cjkNumberRE.FindStringSubmatch(m)
		if n, ok := cjkNumber(sub[1]); ok {
			return " " + n + " " + sub[2]
		}
		return m
	})
	return reEnNumber.ReplaceAllStringFunc(f, func(w string) string { return numberWords[w] })
}

// claimSpans claims, in priority order: code, URLs, key=value parameters,
// quoted strings, date formats, date and time literals, flags, paths,
// names (files, hosts, identifiers), dictionary phrases, numbers.
func (sc *scanner) claimSpans() {
	f := sc.folded
	sc.each(reCode, func(s, e int) { sc.claim(s, e, param("code", strings.Trim(f[s:e], "`"))) })
	sc.each(reURL, func(s, e int) {
		for e > s && strings.ContainsRune(".,;:!?", rune(f[e-1])) {
			e--
		}
		sc.claim(s, e, value("url", f[s:e], f[s:e]))
	})
	sc.each(reKV, func(s, e int) {
		kv := strings.TrimRight(f[s:e], ".:")
		k, v, _ := strings.Cut(kv, "=")
		v = strings.Trim(v, `'"`)
		sc.claim(s, s+len(kv), piece{kind: pContent, class: tParam, key: "p:kv:" + k + "=" + v, surface: kv, slot: "kv:" + k, canon: v})
	})
	sc.each(reQuoted, func(s, e int) {
		q := f[s:e]
		_, first := utf8.DecodeRuneInString(q)
		_, last := utf8.DecodeLastRuneInString(q)
		sc.claim(s, e, param("quote", q[first:len(q)-last]))
	})
	sc.each(reDateFmt, func(s, e int) {
		sc.claim(s, e, value("date-format", strings.ReplaceAll(f[s:e], "t", " "), f[s:e]))
	})
	sc.each(reDateTime, func(s, e int) { sc.claim(s, e, param("time", f[s:e])) })
	sc.each(reFlag, func(s, e int) { sc.claim(s, e, param("flag", f[s:e])) })
	sc.each(rePath, func(s, e int) {
		p := f[s:e]
		if !strings.HasSuffix(p, "/...") {
			p = strings.TrimRight(p, ".,")
		}
		sc.claim(s, s+len(p), value("path", p, p))
	})

	// Names before phrases, so that "pnpm-lock.yaml" is a file, not pnpm.
	sc.each(reDotted, func(s, e int) {
		n := f[s:e]
		if strings.IndexFunc(n, unicode.IsLetter) < 0 {
			return // a version number, claimed with the numbers
		}
		if parts := strings.Split(strings.Trim(n, "."), "."); len(parts) > 1 && len(parts[0]) == 1 && len(parts[1]) == 1 {
			return // an abbreviation: "e.g", "i.e"
		}
		sc.claim(s, e, anchor(n))
	})
	sc.each(reIdent, func(s, e int) {
		id := f[s:e]
		if ph, ok := lexicon[id]; ok && ph.class == phValue {
			sc.claim(s, e, value(ph.cat, ph.canon, id)) // "shift_jis"
			return
		}
		sc.claim(s, e, anchor(id))
	})

	phrases.find(f, func(s, e int) {
		p := f[s:e]
		ph := lexicon[p]
		switch ph.class {
		case phValue:
			sc.claim(s, e, value(ph.cat, ph.canon, p))
		case phBound:
			sc.claim(s, e, value("bound", ph.canon, p))
		case phBoundIfNum:
			sc.claim(s, e, piece{kind: pBoundIfNum, surface: p, ph: ph})
		case phCue:
			if p == "not" {
				sc.claim(s, e, piece{kind: pNot, surface: p})
			} else {
				sc.claim(s, e, piece{kind: pCue, surface: p})
			}
		case phContrast:
			sc.claim(s, e, piece{kind: pContrast, surface: p})
		case phContrastEnd:
			sc.claim(s, e, piece{kind: pContrastEnd, surface: p})
		case phUnless:
			sc.claim(s, e, piece{kind: pUnless, surface: p})
		case phSyn:
			sc.claim(s, e, gapPieces(ph.canon, sc.proper)...)
		case phPlain:
			sc.claim(s, e, gapPieces(p, sc.proper)...)
		case phKeep:
			var ps []piece
			for _, r := range p {
				ps = append(ps, piece{kind: pContent, class: tWord, key: "c:" + string(r), surface: string(r)})
			}
			sc.claim(s, e, ps...)
		case phFiller:
			sc.claim(s, e, piece{kind: pGap})
		case phLater:
			sc.claim(s, e, piece{kind: pLater, surface: p})
		case phSlotNoun:
			ps := gapPieces(p, sc.proper)
			for i := range ps {
				ps[i].noun = ph.cat
			}
			sc.claim(s, e, ps...)
		}
	})

	sc.each(reNumber, func(s, e int) {
		if r, _ := utf8.DecodeLastRuneInString(f[:s]); s > 0 && (unicode.IsLetter(r) && !runes.IsCJK(r) || r == '_' || r == '-') {
			return // part of a word: "s3", "utf8", "gpt-4"
		}
		if r, _ := utf8.DecodeRuneInString(f[e:]); e < len(f) && (unicode.IsLetter(r) && !runes.IsCJK(r) || r == '_') {
			return
		}
		n := strings.TrimPrefix(strings.ReplaceAll(f[s:e], ",", ""), "v")
		num := strings.TrimRightFunc(n, func(r rune) bool { return unicode.IsLetter(r) || r == '%' })
		p := piece{kind: pContent, class: tNumber, key: "n:" + num, surface: f[s:e], canon: num, slot: "n:" + numberSlot(f, s, e, sc.proper)}
		switch unit := n[len(num):]; {
		case unit != "":
			p.slot = "n:" + unit // "60s" is 60 in the slot "s", like "60 s"
			if u, ok := unitOf[unit]; ok {
				p.slot = "n:" + u
			}
		default:
			// "30 seconds", "30 秒": the unit is part of the value.
			if u, end, ok := timeUnitAt(f, e); ok {
				withUnit := p
				withUnit.slot, withUnit.surface = "n:"+u, f[s:end]
				if sc.claim(s, end, withUnit) {
					return
				}
			}
		}
		sc.claim(s, e, p)
	})
}

// timeUnitAt reads a unit of time at folded[at:], after optional spaces:
// a whole English word or a Chinese unit. It returns the canonical unit
// and where the unit ends.
func timeUnitAt(folded string, at int) (unit string, end int, ok bool) {
	rest := strings.TrimLeft(folded[at:], " ")
	start := len(folded) - len(rest)
	if loc := reWord.FindStringIndex(rest); loc != nil && loc[0] == 0 {
		u, ok := unitOf[rest[:loc[1]]]
		return u, start + loc[1], ok
	}
	for _, u := range cjkTimeUnits {
		if strings.HasPrefix(rest, u) {
			return unitOf[u], start + len(u), true
		}
	}
	return "", 0, false
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
// offset shifts the offsets of pieces read from a substring starting at
// base of the folded text.
func offset(ps []piece, base int) []piece {
	for i := range ps {
		ps[i].at += base
	}
	return ps
}

func gapPieces(s string, proper map[string]bool) []piece {
	var out []piece
	i := 0
	mark := func(from int) {
		for k := from; k < len(out); k++ {
			out[k].at = i
		}
	}
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		from := len(out)
		switch {
		case strings.ContainsRune(breakRunes, r):
			out = append(out, piece{kind: pBreak})
			mark(from)
			i += size
		case runes.IsCJK(r):
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !runes.IsCJK(r2) {
					break
				}
				j += sz
			}
			out = append(out, cjkPieces(s[i:j])...)
			mark(from)
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
			out = append(out, ps...)
			mark(from)
			i += loc[1]
		default:
			i += size
		}
	}
	return out
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
	if lang.IsStopWord(w) && !keptWords[w] || weakSet[w] {
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
	return []piece{{kind: pContent, class: class, key: "w:" + key, surface: w, noun: slotNounOf[key]}}
}

// cjkPieces turns a run of Chinese characters (with phrases already
// claimed) into one piece per remaining content character.
func cjkPieces(run string) []piece {
	var out []piece
	add := func(s string) {
		for _, r := range s {
			c := string(r)
			out = append(out, piece{kind: pContent, class: tWord, key: "c:" + c, surface: c})
		}
	}
	at := 0
	cjkWeak.find(run, func(s, e int) {
		add(run[at:s])
		at = e
	})
	add(run[at:])
	return out
}

// build runs the clause-level pass: it resolves "not" (cue or contrast),
// conditional bounds, negation and contrast scopes and number slots, and
// collects the statement's terms and values.
func build(text string, ps []piece, prefers bool, replaced [][2]int) *statement {
	st := &statement{text: text, terms: map[string]*term{}, values: map[string][]valueRef{}}
	for i := range ps {
		if ps[i].kind != pBoundIfNum {
			continue
		}
		switch {
		case i+1 < len(ps) && ps[i+1].kind == pContent && ps[i+1].class == tNumber:
			ps[i] = value("bound", ps[i].ph.canon, ps[i].surface)
		case ps[i].surface == "over" && prefers:
			// "prefers X over Y" names Y as the rejected option.
			ps[i] = piece{kind: pContrast, surface: "over"}
		default:
			ps[i] = piece{kind: pIgnore}
		}
	}

	// An occurrence is one appearance of a term in the current clause; its
	// flags are final only at the end of the clause, since a cue that ends
	// a clause negates what came before it.
	type occurrence struct {
		t        *term
		p        piece
		negated  bool
		rejected bool
		replaced bool // named as what a change replaces
	}
	var (
		clause            []occurrence
		inNeg, inContrast bool
		clauseStart       = true // no content yet in this clause
		seenContent       bool   // content in an earlier clause
		clauseNeg         bool
		clauseUnless      bool // a double negation: nothing in the clause is negated
		clauseWithout     bool // the clause's negation is "without", "unless" or "except"
		clauseCues        []string
		afterCue          bool // content since the clause's last cue
		beforeCue         int  // occurrences before the clause's first cue
		negCount          = map[*term]int{}
		gone              = map[*term]int{} // occurrences negated, rejected or replaced
		replacedCount     = map[*term]int{}
		rejCount          = map[*term]int{}
		count             = map[*term]int{}
	)
	endClause := func() {
		switch {
		case clauseUnless:
			// "Never deploy without running the tests" asserts: a double
			// negation leaves nothing negated.
			for i := range clause {
				clause[i].negated = false
			}
		case clauseNeg && !afterCue:
			// "Deploying on Fridays is forbidden": nothing follows the
			// cue, so it negates what precedes it.
			for i := range clause[:beforeCue] {
				o := &clause[i]
				if !circumstantial[o.p.slot] {
					o.negated = true
					o.rejected = o.rejected || o.p.class == tValue
				}
			}
		}
		if clauseNeg && !clauseUnless {
			st.negative = true
			st.cues = append(st.cues, clauseCues...)
		}
		for _, o := range clause {
			count[o.t]++
			if o.negated {
				negCount[o.t]++
			}
			if o.rejected {
				rejCount[o.t]++
			}
			if o.negated || o.rejected || o.replaced {
				gone[o.t]++
			}
			if o.replaced {
				replacedCount[o.t]++
			}
			if o.p.slot != "" {
				canon := o.p.canon
				if canon == "" {
					canon = strings.TrimPrefix(o.p.key, "n:")
				}
				st.values[o.p.slot] = append(st.values[o.p.slot], valueRef{canon: canon, surface: o.p.surface, rejected: o.rejected})
			}
		}
		clause = clause[:0]
		inNeg, inContrast, clauseNeg, clauseUnless, clauseWithout, clauseCues, afterCue, beforeCue = false, false, false, false, false, nil, false, 0
		if !clauseStart {
			seenContent = true
		}
		clauseStart = true
	}
	cue := func(surface string) {
		if clauseWithout {
			// "Deploying without tests is forbidden": a double negation.
			clauseUnless, inNeg = true, false
			return
		}
		if !clauseNeg {
			beforeCue = len(clause)
		}
		inNeg, clauseNeg, afterCue = true, true, false
		clauseCues = append(clauseCues, surface)
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
				cue(p.surface)
			}
			continue
		case pCue:
			cue(p.surface)
			clauseStart = false
			continue
		case pContrast:
			inContrast = true
			continue
		case pContrastEnd:
			inContrast = false
			continue
		case pUnless:
			switch {
			case clauseNeg:
				// "Never deploy without running the tests".
				clauseUnless, inNeg = true, false
			case !clauseUnless:
				// "Run migrations without a backup": what follows is
				// left out, as after a cue.
				cue(p.surface)
				clauseWithout = true
			}
			continue
		case pLater:
			if clauseStart {
				continue // "以后报表都用北京时间": from now on
			}
			p = piece{kind: pContent, class: tWord, key: "c:后", surface: "后"} // "部署以后": after
		case pContent:
		default:
			continue
		}
		clauseStart = false
		afterCue = true
		// A cue negates the action, not when it happens: in "never deploy
		// on Fridays" Friday is not negated.
		negated := inNeg && !circumstantial[p.slot]
		t, ok := st.terms[p.key]
		switch {
		case !ok:
			t = &term{key: p.key, class: p.class, slot: p.slot, surface: p.surface, pos: len(st.terms), noun: p.noun}
			st.terms[p.key] = t
		case t.noun != p.noun:
			t.noun = "" // "超时时间": 时 is also a plain word here
		}
		clause = append(clause, occurrence{t: t, p: p, negated: negated, rejected: inContrast || negated && p.class == tValue, replaced: within(replaced, p.at)})
	}
	endClause()
	for _, t := range st.terms {
		t.negated = negCount[t] == count[t]
		t.rejected = rejCount[t] == count[t]
		t.dismissed = gone[t] == count[t]
		t.replacedAll = replacedCount[t] == count[t] && count[t] > 0
	}
	return st
}

// Changes name what they replace: "switched from X to Y", "replace X
// with Y", "从 X 迁到 Y", "把 X 换成 Y". replacedSpans finds the X of each
// in the folded text, as byte ranges.
var replacedREs = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:switch(?:ed|ing)?|mov(?:e|ed|ing)|migrat(?:e|ed|ing)|chang(?:e|ed|ing)|went|gone|upgrad(?:e|ed|ing)|port(?:ed|ing)?)\s+(?:\w+\s+)?from\s+([^,;.]{1,40}?)\s+(?:to|onto|over to)\b`),
	regexp.MustCompile(`\breplac(?:e|ed|ing)\s+([^,;.]{1,40}?)\s+(?:with|by)\b`),
	regexp.MustCompile(`(?:从|把|由)\s*([^，。；,;]{1,24}?)\s*(?:迁到|迁移到|换成|换到|改成|改为|改到|切到|切换到|替换成|升级到|换为)`),
}

func replacedSpans(folded string) [][2]int {
	var out [][2]int
	for _, re := range replacedREs {
		for _, m := range re.FindAllStringSubmatchIndex(folded, -1) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	return out
}

func within(spans [][2]int, at int) bool {
	for _, sp := range spans {
		if at >= sp[0] && at < sp[1] {
			return true
		}
	}
	return false
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
	if r, _ := utf8.DecodeLastRuneInString(before); runes.IsCJK(r) {
		rs := []rune(before)
		k := len(rs) - 1
		for k > 0 && len(rs)-k < 2 && runes.IsCJK(rs[k-1]) {
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
