package recall

import (
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/learn"
	"github.com/hindsight-memory/hindsight/memory"
)

// The learned relevance model reads a query and a memory as what each
// speaks of, and how closely: every unit of meaning of a text (an English
// stem, a Chinese word) is matched to the other text's units directly, or
// through the lexicon at one remove (a synonym, a derived form, a
// translation) or two (a broader word, a word of its definition, the
// synonym of a translation). A paraphrase that shares no word with the
// memory ("Should the quote show VAT?" against "Always quote net
// amounts, tax excluded.") still meets it: VAT's definition is "a tax
// levied on …". The model weighs how much of the query is met at each
// remove, how much of the memory, the rule relevance (coverageOf), what
// is left unmet, values, and the languages, and gives the probability
// that the memory answers the query. It is trained on labelled pairs
// written for it (recall/data), and its threshold is chosen on their
// held-out split.

// The model ranks and is a second opinion. A memory that holds at least
// DefaultMinRelevance of the query's weighted terms (the rule, coverageOf)
// is relevant, as it always was; of the memories the rule finds too
// little in (a paraphrase, the other language, a task the memory applies
// to) and that meet the query at least at one remove, the model admits
// those it is confident answer (above its threshold, chosen on the held-
// out split for a precision of relMinPrecision), with a relevance between
// the rule's threshold and 1 by its probability (modelRelevance), so that
// relevance keeps one scale. And among the relevant, its probability
// ranks as much as the fused similarity.

// relAsked reports whether the model is asked about a pair with these
// features (relFeatures): there is some evidence.
func relAsked(f []learn.Feature) bool { return f != nil }

// modelRankShare is the weight of the model's probability in the
// ranking, against the fused similarity's 1, for a memory in the query's
// language; crossRankShare for one in the other. Within a language the
// query's own words tell much, and an equal share cost LoCoMo's
// recall@10 0.04 (0.716 against 0.755 at 0.3); across languages only
// translations meet, the fused similarity says little, and the model,
// which reads the translations' glosses, decides as much.
const (
	modelRankShare = 0.3
	crossRankShare = 1.0
)

// modelRelevance maps the model's probability p to relevance: below its
// threshold nothing (the rule's own relevance stands), above it from min
// (the recall threshold) up to 1.
func modelRelevance(p, threshold, min float64) float64 {
	if p < threshold || threshold >= 1 {
		return 0
	}
	return min + (1-min)*(p-threshold)/(1-threshold)
}

// relFeatureVersion names the features; a model trained on others is
// refused.
const relFeatureVersion = "relevance-v1"

// Removes of a match: the unit itself, one step through the lexicon, two.
const (
	relDirect = 0
	relNear   = 1
	relFar    = 2
	relNone   = 255
)

// minFarSpecificity is the specificity a broader word or a definition's
// word needs to count: "act", "thing", "person" say nothing.
const minFarSpecificity = 0.35

// minSharedSpecificity is the specificity a key met through the lexicon
// needs: two texts that both lead to "get" or "number" share nothing.
const minSharedSpecificity = 0.5

// keySpecificity is lang.Specificity of a key: a Chinese word's is its
// bigrams' mean.
func keySpecificity(k string) float64 {
	if !lang.HasCJK(k) || utf8.RuneCountInString(k) < 2 {
		return lang.Specificity(k)
	}
	bs := bigrams(k)
	spec := 0.0
	for _, b := range bs {
		spec += lang.Specificity(b)
	}
	return spec / float64(len(bs))
}

// relUnit is one unit of meaning of a text.
type relUnit struct {
	key    string
	weight float64
	value  bool // holds a digit: a number, a version, an identifier
	cjk    bool
}

// relProfile is what a text speaks of: its units, and every key it may be
// met by with the closest remove at which one of its units reaches it;
// and the shapes of answers it holds.
type relProfile struct {
	units []relUnit
	keys  map[string]relKey
	cjk   float64 // the share of its units' weight that is Chinese
	// number, time and name say it holds a number, a time or date word,
	// or a name.
	number, time, name bool
}

// relKey is how closely a profile reaches a key, and whether through a
// broader word or a definition.
type relKey struct {
	level uint8
	far   bool
}

// profileOf reads text's profile with the lexicon (nil: direct matches
// only).
func profileOf(text string, lx *lexicon.Lexicon) *relProfile { return readProfile(text, lx, true) }

// unitsOf is text's profile without the keys its units reach: what a
// relQuery meets a memory with.
func unitsOf(text string, lx *lexicon.Lexicon) *relProfile { return readProfile(text, lx, false) }

func readProfile(text string, lx *lexicon.Lexicon, withKeys bool) *relProfile {
	p := &relProfile{}
	if withKeys {
		p.keys = map[string]relKey{}
	}
	seen := map[string]bool{}
	add := func(u relUnit) {
		if seen[u.key] {
			return
		}
		seen[u.key] = true
		p.units = append(p.units, u)
		if !withKeys {
			return
		}
		unitKeys(u, lx, func(k string, level uint8, far bool) {
			if old, ok := p.keys[k]; !ok || level < old.level || level == old.level && old.far && !far {
				p.keys[k] = relKey{level, far}
			}
		})
	}
	for _, r := range lang.Runs(text) {
		if !r.CJK {
			if lang.IsStopWord(r.Text) {
				continue
			}
			st := lang.Stem(r.Text)
			add(relUnit{key: st, weight: weightWord * specWeight(lang.Specificity(st)), value: hasDigit(r.Text)})
			continue
		}
		var words []string
		if lx != nil {
			words = lx.Segment(r.Text)
		} else {
			words = runBigrams(r.Text)
		}
		for _, w := range words {
			rs := []rune(w)
			if len(rs) == 1 {
				if !lang.IsCJKStopChar(rs[0]) {
					add(relUnit{key: w, weight: weightCJKChar * specWeight(lang.Specificity(w)), cjk: true})
				}
				continue
			}
			spec := 0.0
			bs := bigrams(w)
			for _, b := range bs {
				spec += lang.Specificity(b)
			}
			add(relUnit{key: w, weight: weightCJKBigram * specWeight(spec/float64(len(bs))), cjk: true})
		}
	}
	p.number = strings.IndexFunc(text, unicode.IsDigit) >= 0
	p.time = holdsTime(text)
	p.name = holdsName(text)
	total, zh := 0.0, 0.0
	for _, u := range p.units {
		total += u.weight
		if u.cjk {
			zh += u.weight
		}
	}
	if total > 0 {
		p.cjk = zh / total
	}
	return p
}

// The answer shapes a text holds are read by scanning it once, not by
// regular expressions: every candidate of a recall is read so. The
// expressions they stand for, which TestShapeScanners holds them to, are
//
//	time: (?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|
//	      \b\d{1,2}(?::\d\d|\s?[ap]m)\b|\b(?:daily|weekly|monthly|quarterly|yearly|annually|morning|evening|noon|midnight|
//	      deadline|hours?|days?|weeks?|months?|years?)\b|周[一二三四五六日末]|星期|[上下每]午|早上|晚上|点|号|月|天|小时|分钟|季度|年
//	name: [a-z,;:] (?:[A-Z][a-z]+)|先生|女士|经理|老师|主管|总监|负责人

var (
	dayWords   = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	monthStems = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	timeWords  = map[string]bool{"daily": true, "weekly": true, "monthly": true, "quarterly": true, "yearly": true, "annually": true,
		"morning": true, "evening": true, "noon": true, "midnight": true, "deadline": true, "hour": true, "hours": true,
		"day": true, "days": true, "week": true, "weeks": true, "month": true, "months": true, "year": true, "years": true}
	cjkTimeWords = []string{"星期", "上午", "下午", "每午", "早上", "晚上", "点", "号", "月", "天", "小时", "分钟", "季度", "年",
		"周一", "周二", "周三", "周四", "周五", "周六", "周日", "周末"}
	cjkNameWords = []string{"先生", "女士", "经理", "老师", "主管", "总监", "负责人"}
)

// asciiWord reports whether b is a byte of a regular expression's \w.
func asciiWord(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}

func asciiDigit(b byte) bool { return b >= '0' && b <= '9' }

// isSpace is \s: ASCII white space.
func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r' }

// holdsTime reports whether text names a time or date word.
func holdsTime(text string) bool {
	for i := 0; i < len(text); {
		if !asciiWord(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && asciiWord(text[j]) {
			j++
		}
		if timeRun(text, i, j) {
			return true
		}
		i = j
	}
	if text = strings.ToValidUTF8(text, ""); !lang.HasCJK(text) {
		return false
	}
	for _, w := range cjkTimeWords {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// timeRun reports whether the run of word bytes text[i:j] starts a time
// expression.
func timeRun(text string, i, j int) bool {
	w := strings.ToLower(text[i:j])
	for _, d := range dayWords {
		if strings.HasPrefix(w, d) {
			return true
		}
	}
	for _, m := range monthStems {
		if strings.HasPrefix(w, m) && strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 {
			return true
		}
	}
	if timeWords[w] {
		return true
	}
	// One or two digits: "9am", "9 pm", "10:30".
	n := 0
	for n < len(w) && asciiDigit(w[n]) {
		n++
	}
	if n == 0 || n > 2 {
		return false
	}
	if rest := w[n:]; rest == "am" || rest == "pm" {
		return true
	}
	if n != len(w) || j >= len(text) {
		return false
	}
	switch {
	case text[j] == ':':
		return j+3 <= len(text) && asciiDigit(text[j+1]) && asciiDigit(text[j+2]) && (j+3 == len(text) || !asciiWord(text[j+3]))
	case isSpace(text[j]):
		k := j + 1
		return k+2 <= len(text) && (text[k]|0x20 == 'a' || text[k]|0x20 == 'p') && text[k+1]|0x20 == 'm' && (k+2 == len(text) || !asciiWord(text[k+2]))
	}
	return false
}

// holdsName reports whether text names someone: a capitalised word after
// a lower-case letter or a comma, semicolon or colon and a space, or a
// Chinese title.
func holdsName(text string) bool {
	for i := 0; i+3 < len(text); i++ {
		if c := text[i]; (c >= 'a' && c <= 'z' || c == ',' || c == ';' || c == ':') && text[i+1] == ' ' &&
			text[i+2] >= 'A' && text[i+2] <= 'Z' && text[i+3] >= 'a' && text[i+3] <= 'z' {
			return true
		}
	}
	for _, w := range cjkNameWords {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

func specWeight(spec float64) float64 { return minSpecificity + (1-minSpecificity)*spec }

func hasDigit(s string) bool { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

// unitKeys calls f with every key a unit may be met by and its remove.
// A Chinese word is also met by its bigrams (the other text may segment
// around it differently), and through its English glosses; an English
// stem through its Chinese words, synonyms, related forms, broader words
// and the words of its definition.
func unitKeys(u relUnit, lx *lexicon.Lexicon, f func(key string, level uint8, far bool)) {
	f(u.key, relDirect, false)
	if u.cjk {
		rs := []rune(u.key)
		if len(rs) == 1 {
			return // a character alone has too many senses to translate
		}
		if len(rs) > 2 {
			for _, b := range bigrams(u.key) {
				f(b, relDirect, false)
			}
		}
		for _, g := range lx.English(u.key) {
			if len(g) == 1 {
				f(g[0], relNear, false)
				for _, s := range lx.Synonyms(g[0]) {
					f(s, relFar, false)
				}
				continue
			}
			for _, t := range g {
				if lang.Specificity(t) >= minFarSpecificity {
					f(t, relFar, true)
				}
			}
		}
		return
	}
	if u.value {
		return // a value is met as it is written
	}
	for _, w := range lx.Chinese(u.key) {
		if utf8.RuneCountInString(w) > 1 { // a character alone means too much
			f(w, relNear, false)
		}
	}
	for _, s := range lx.Synonyms(u.key) {
		f(s, relNear, false)
	}
	for _, s := range lx.Related(u.key) {
		f(s, relNear, false)
	}
	for _, list := range [][]string{lx.Broader(u.key), lx.Gloss(u.key)} {
		for _, s := range list {
			if lang.Specificity(s) >= minFarSpecificity {
				f(s, relFar, true)
			}
		}
	}
}

// distance is the closest remove at which unit u of one text meets the
// other text's profile p: the sum of the two sides' removes over the keys
// they share (0 to 4), or relNone; far says the closest went through a
// broader word or a definition.
func distance(u relUnit, lx *lexicon.Lexicon, p *relProfile) (d uint8, far bool) {
	d = relNone
	unitKeys(u, lx, func(k string, level uint8, viaFar bool) {
		e, ok := p.keys[k]
		if !ok || level+e.level > 0 && keySpecificity(k) < minSharedSpecificity {
			return
		}
		if n := level + e.level; n < d || n == d && far && !(viaFar || e.far) {
			d, far = n, viaFar || e.far
		}
	})
	return d, far
}

// coverageAt is how a text's units meet another text: the share of its
// weight met at each remove, apart (0: directly; 1: through one synonym,
// derived form or translation; 2: through two such steps; 3: through a
// broader word or a definition, or further), the largest weight of a unit
// met nowhere (what it asks that the other never speaks to), how many of
// its specific units are met directly, and its values.
type coverageAt struct {
	share             [4]float64
	unmet             float64
	unmetShare        float64
	specificDirect    int
	values, valuesMet int
}

// specificUnit is the weight from which a unit is specific: a rare word,
// not a common one.
const specificUnit = 0.6

func cover(a, b *relProfile, lx *lexicon.Lexicon) coverageAt {
	return coverOf(a.units, func(i int) (uint8, bool) { return distance(a.units[i], lx, b) })
}

// coverOf is cover of units, the closest remove at which the other text
// meets each given by dist.
func coverOf(units []relUnit, dist func(i int) (uint8, bool)) coverageAt {
	var c coverageAt
	total := 0.0
	for _, u := range units {
		total += u.weight
	}
	if total == 0 {
		return c
	}
	for i, u := range units {
		d, far := dist(i)
		if u.value {
			c.values++
			if d == relDirect {
				c.valuesMet++
			}
		}
		w := u.weight / total
		switch {
		case d == relDirect:
			c.share[0] += w
			if u.weight >= specificUnit {
				c.specificDirect++
			}
		case d == 1:
			c.share[1] += w
		case d == 2 && !far:
			c.share[2] += w
		case d <= 3:
			c.share[3] += w
		default:
			c.unmetShare += w
			c.unmet = math.Max(c.unmet, u.weight)
		}
	}
	return c
}

// Question words and what answers them, in English and Chinese: a query
// that asks when, who, where or how many is answered by a memory that
// holds a time, a person, a place or a number.
var asks = []struct {
	name  string
	words []string
}{
	{"when", []string{"when", "时候", "何时", "几点", "哪天", "多久", "日期"}},
	{"who", []string{"who", "whom", "whose", "谁"}},
	{"where", []string{"where", "哪里", "哪儿", "在哪"}},
	{"howmany", []string{"how many", "how much", "how long", "多少", "几个", "几天", "几次", "几张"}},
	{"which", []string{"which", "what", "哪个", "哪些", "什么"}},
	{"yesno", []string{"should", "can", "may", "is it", "do we", "do i", "要不要", "能不能", "可以", "是否", "吗"}},
}

// queryAsks is the question the query asks, or "task" for a request or
// keywords.
func queryAsks(q string) string {
	low := " " + strings.ToLower(q) + " "
	for _, a := range asks {
		for _, w := range a.words {
			if lang.HasCJK(w) && strings.Contains(low, w) || strings.Contains(low, " "+w+" ") {
				return a.name
			}
		}
	}
	return "task"
}

// relFeatures are the model's features for a query's profile against a
// memory's, with the query's text, the rule relevance (coverageOf) of the
// pair and the memory's kind.
//
// It returns nil when the memory meets nothing of the query, directly or
// at one remove, and the rule finds nothing either: with no evidence the
// pair is irrelevant, and the model is not asked (nor trained on it).
func relFeatures(query string, q, m *relProfile, rule float64, kind memory.Kind, lx *lexicon.Lexicon) []learn.Feature {
	return featuresOf(queryAsks(query), q, m, cover(q, m, lx), cover(m, q, lx), rule)
}

// featuresOf are relFeatures from the two texts' coverage of each other
// (fwd: the query's units met by the memory; back: the memory's met by
// the query) and what the query asks.
func featuresOf(ask string, q, m *relProfile, fwd, back coverageAt, rule float64) []learn.Feature {
	if rule == 0 && fwd.share[0]+fwd.share[1] == 0 {
		return nil
	}
	cross := math.Abs(q.cjk - m.cjk)
	f := []learn.Feature{
		{Name: "bias", Value: 1},
		{Name: "rule", Value: rule},
		{Name: "q.unmet.share", Value: fwd.unmetShare},
		{Name: "q.specific.direct", Value: math.Min(float64(fwd.specificDirect), 3) / 3},
		{Name: "cross", Value: cross},
	}
	near := fwd.share[0] + fwd.share[1]
	// Two removes or more through the lexicon (a synonym's synonym, a
	// definition's word) link nearly any two texts: only the direct and
	// the one-step matches are evidence.
	for n := range 2 {
		f = append(f, learn.Feature{Name: "q.cov" + string(rune('0'+n)), Value: fwd.share[n]},
			learn.Feature{Name: "cross*q.cov" + string(rune('0'+n)), Value: cross * fwd.share[n]})
	}
	f = append(f, learn.Feature{Name: "q.near^2", Value: near * near},
		learn.Feature{Name: "m.specific.met", Value: math.Min(float64(back.specificDirect), 3) / 3})
	// What the question asks against what the memory holds, as evidence
	// in proportion to how much of the query the memory meets.
	for _, a := range answerShapes(m) {
		f = append(f, learn.Feature{Name: "asks:" + ask + "&m:" + a + "*q.near", Value: near})
	}
	if fwd.values > 0 {
		f = append(f, learn.Feature{Name: "q.values.met", Value: float64(fwd.valuesMet) / float64(fwd.values)})
	}
	return f
}

// answerShapes are the kinds of answer a memory's text holds: a number,
// a time or date word, a name (a capitalised word not first in its
// sentence).
func answerShapes(m *relProfile) []string {
	var out []string
	if m.number {
		out = append(out, "number")
	}
	if m.time {
		out = append(out, "time")
	}
	if m.name {
		out = append(out, "name")
	}
	return out
}

func indicator(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// memoryText is what the relevance model reads of a memory: its content
// and, for a lesson, its counter-example.
func memoryText(m memory.Memory) string {
	if m.CounterExample == "" {
		return m.Content
	}
	return m.Content + "\n" + m.CounterExample
}

// relQuery is one query's side of relFeatures, read once for all of a
// recall's candidates: what it asks, and for every key one of its units
// reaches, which units and how closely. It meets a memory's units
// (unitsOf) one by one, and remembers how each distinct unit met the
// query's, so that a word many candidates share is looked up once. Its
// features equal relFeatures' (TestRelQueryMatchesRelFeatures). Not safe
// for concurrent use: one recall ranks in one goroutine.
type relQuery struct {
	prof  *relProfile
	ask   string
	lx    *lexicon.Lexicon
	byKey map[string][]unitReach
	met   map[relUnitKey][]unitMeet
}

// unitReach is how closely one query unit reaches a key.
type unitReach struct {
	unit  int
	level uint8
	far   bool
}

// unitMeet is the closest remove at which a memory unit meets one query
// unit (relNone: not at all).
type unitMeet struct {
	d   uint8
	far bool
}

// relUnitKey is what unitKeys reads of a unit.
type relUnitKey struct {
	key        string
	cjk, value bool
}

func newRelQuery(text string, lx *lexicon.Lexicon) *relQuery {
	q := &relQuery{prof: profileOf(text, lx), ask: queryAsks(text), lx: lx,
		byKey: map[string][]unitReach{}, met: map[relUnitKey][]unitMeet{}}
	for i, u := range q.prof.units {
		unitKeys(u, lx, func(k string, level uint8, far bool) {
			rs := q.byKey[k]
			for j := range rs {
				if rs[j].unit == i {
					if level < rs[j].level || level == rs[j].level && rs[j].far && !far {
						rs[j].level, rs[j].far = level, far
					}
					return
				}
			}
			q.byKey[k] = append(rs, unitReach{i, level, far})
		})
	}
	return q
}

// meet is how memory unit u meets each of the query's units.
func (q *relQuery) meet(u relUnit) []unitMeet {
	key := relUnitKey{u.key, u.cjk, u.value}
	if m, ok := q.met[key]; ok {
		return m
	}
	m := make([]unitMeet, len(q.prof.units))
	for i := range m {
		m[i].d = relNone
	}
	for _, x := range expansionsOf(key, q.lx) {
		for _, r := range q.byKey[x.key] {
			n := x.level + r.level
			if n > 0 && x.unspecific {
				continue
			}
			if met := (unitMeet{n, x.far || r.far}); closer(met, m[r.unit]) {
				m[r.unit] = met
			}
		}
	}
	q.met[key] = m
	return m
}

// unitKey is one key a unit may be met by (unitKeys), with whether the
// key is too common to be met through the lexicon.
type unitKey struct {
	key        string
	level      uint8
	far        bool
	unspecific bool // keySpecificity(key) < minSharedSpecificity
}

// expansions caches, process-wide, what unitKeys gives each unit: the
// units of memory texts are few (a language's words), and every recall
// meets many of them again. It is dropped when it grows past
// maxExpansions, or when another lexicon asks.
var expansions struct {
	sync.Mutex
	lx *lexicon.Lexicon
	m  map[relUnitKey][]unitKey
}

const maxExpansions = 1 << 18

func expansionsOf(u relUnitKey, lx *lexicon.Lexicon) []unitKey {
	expansions.Lock()
	xs, ok := expansions.m[u]
	if ok && expansions.lx == lx {
		expansions.Unlock()
		return xs
	}
	expansions.Unlock()
	unitKeys(relUnit{key: u.key, cjk: u.cjk, value: u.value}, lx, func(k string, level uint8, far bool) {
		xs = append(xs, unitKey{k, level, far, keySpecificity(k) < minSharedSpecificity})
	})
	expansions.Lock()
	if expansions.m == nil || expansions.lx != lx || len(expansions.m) >= maxExpansions {
		expansions.m, expansions.lx = make(map[relUnitKey][]unitKey, 4096), lx
	}
	expansions.m[u] = xs
	expansions.Unlock()
	return xs
}

// closer reports whether a is a closer meeting than b: a smaller remove,
// or the same without going through a broader word or definition.
func closer(a, b unitMeet) bool { return a.d < b.d || a.d == b.d && b.far && !a.far }

// features are relFeatures of the query against a memory's units.
func (q *relQuery) features(m *relProfile, rule float64) []learn.Feature {
	meets := make([][]unitMeet, len(m.units))
	for j, u := range m.units {
		meets[j] = q.meet(u)
	}
	fwd := coverOf(q.prof.units, func(i int) (uint8, bool) {
		best := unitMeet{d: relNone}
		for _, mj := range meets {
			if closer(mj[i], best) {
				best = mj[i]
			}
		}
		return best.d, best.far
	})
	back := coverOf(m.units, func(j int) (uint8, bool) {
		best := unitMeet{d: relNone}
		for _, mi := range meets[j] {
			if closer(mi, best) {
				best = mi
			}
		}
		return best.d, best.far
	})
	return featuresOf(q.ask, q.prof, m, fwd, back, rule)
}
