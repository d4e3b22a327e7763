package offline

import (
	"context"
	"fmt"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/runes"
	"golang.org/x/text/unicode/norm"
)

// DefaultDim is the embedder's dimension when none is given.
const DefaultDim = 384

// embedderVersion changes whenever the features or their weights change:
// vectors of different versions are not comparable, so the model name
// carries it and a change triggers re-indexing.
const embedderVersion = "v1"

// Feature weights. Whole words and CJK bigrams carry meaning; character
// n-grams and CJK unigrams add robustness to inflection, typos and
// segmentation, at a lower weight so they do not drown the words.
const (
	weightWord    = 1.0
	weightNgram   = 0.35
	weightBigram  = 1.0
	weightUnigram = 0.4
)

// Embedder is a lexical embedder: signed feature hashing of words,
// character n-grams and CJK unigrams/bigrams, with sublinear term frequency
// and L2 normalisation. Texts that share words or characters get close
// vectors; it knows nothing of synonyms. It is safe for concurrent use.
type Embedder struct {
	dim int
}

var _ memory.Embedder = (*Embedder)(nil)

// NewEmbedder returns an embedder of dim dimensions (DefaultDim when dim
// is not positive).
func NewEmbedder(dim int) *Embedder {
	if dim <= 0 {
		dim = DefaultDim
	}
	return &Embedder{dim: dim}
}

// Dim is the length of every vector.
func (e *Embedder) Dim() int { return e.dim }

// Model names the embedder, its feature version and dimension.
func (e *Embedder) Model() string { return fmt.Sprintf("offline-ngram-%s-d%d", embedderVersion, e.dim) }

// Embed returns one unit vector per text. Text without any letter or digit
// maps to one fixed unit vector.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = e.vector(t)
	}
	return out, nil
}

// accumulator counts hashed features in an open-addressing table, so that
// term frequencies are known without sorting or allocating per text.
type accumulator struct {
	keys []uint64 // 0 marks an empty slot
	cnt  []uint32
	w    []float32
	used []int32 // occupied slots in insertion order (deterministic sums)
}

var accPool = sync.Pool{New: func() any { return newAccumulator(1024) }}

func newAccumulator(size int) *accumulator {
	return &accumulator{keys: make([]uint64, size), cnt: make([]uint32, size), w: make([]float32, size), used: make([]int32, 0, size/2)}
}

func (a *accumulator) add(h uint64, w float32) {
	if h == 0 {
		h = 1
	}
	if 2*(len(a.used)+1) > len(a.keys) {
		a.grow()
	}
	mask := uint64(len(a.keys) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch a.keys[i] {
		case h:
			a.cnt[i]++
			return
		case 0:
			a.keys[i], a.cnt[i], a.w[i] = h, 1, w
			a.used = append(a.used, int32(i))
			return
		}
	}
}

func (a *accumulator) grow() {
	b := newAccumulator(2 * len(a.keys))
	mask := uint64(len(b.keys) - 1)
	for _, i := range a.used {
		h := a.keys[i]
		j := h & mask
		for b.keys[j] != 0 {
			j = (j + 1) & mask
		}
		b.keys[j], b.cnt[j], b.w[j] = h, a.cnt[i], a.w[i]
		b.used = append(b.used, int32(j))
	}
	*a = *b
}

func (a *accumulator) reset() {
	for _, i := range a.used {
		a.keys[i] = 0
	}
	a.used = a.used[:0]
}

func (e *Embedder) vector(text string) []float32 {
	acc := accPool.Get().(*accumulator)
	defer func() {
		acc.reset()
		accPool.Put(acc)
	}()
	addFeatures(acc, text)
	if len(acc.used) == 0 {
		acc.add(hashBytes(0, []byte("\x00empty")), 1)
	}
	v := make([]float32, e.dim)
	dim := uint64(e.dim)
	for _, i := range acc.used {
		// Sublinear term frequency: a feature seen n times counts 1+ln(n)
		// times its weight, so repetition cannot dominate a text.
		val := acc.w[i]
		if n := acc.cnt[i]; n > 1 {
			val *= float32(1 + math.Log(float64(n)))
		}
		h := acc.keys[i]
		if h&1 == 1 {
			val = -val
		}
		v[(h>>1)%dim] += val
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		// Every feature cancelled out in its bucket (vanishingly rare):
		// fall back to the empty text's vector.
		v[(hashBytes(0, []byte("\x00empty"))>>1)%dim] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Feature kinds, mixed into the hash so that the word "ab" and the n-gram
// "ab" are different features.
const (
	kindWord uint64 = iota + 1
	kindNgram3
	kindNgram4
	kindUnigram
	kindBigram
)

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// stopwords carry no topic; they would make every English text look
// alike. Negations and quantifiers that change an instruction's meaning
// (not, never, always, only) are kept.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "at": true, "for": true,
	"with": true, "and": true, "or": true, "is": true, "are": true, "was": true, "were": true, "be": true,
	"been": true, "it": true, "its": true, "this": true, "that": true, "as": true, "by": true, "from": true,
	"i": true, "we": true, "you": true, "my": true, "our": true, "your": true, "me": true, "us": true,
	"so": true, "if": true, "but": true, "then": true, "there": true, "than": true, "into": true, "do": true,
	"does": true, "did": true, "have": true, "has": true, "had": true, "will": true, "would": true, "can": true,
	"could": true, "should": true, "please": true,
}

// stopHan are function characters whose unigrams say nothing (their
// bigrams still count).
var stopHan = map[rune]bool{
	'的': true, '了': true, '是': true, '在': true, '和': true, '就': true, '都': true, '也': true, '把': true,
	'被': true, '要': true, '我': true, '你': true, '他': true, '她': true, '它': true, '们': true, '这': true,
	'那': true, '个': true, '有': true, '时': true, '用': true,
}

// addFeatures adds the features of text. Text is folded with NFKC and lower
// case; CJK runs give unigrams and bigrams; other words give the word and
// the 3- and 4-grams of "^word$".
func addFeatures(acc *accumulator, text string) {
	if !isNFKCQuick(text) {
		text = norm.NFKC.String(text)
	}
	var buf [256]byte
	word := buf[:0]  // "^" + lower-cased word bytes
	var offs [66]int // rune start offsets in word, for n-grams
	nr := 0          // runes in word (including "^")
	var prevCJK rune
	flushWord := func() {
		if nr <= 1 {
			word, nr = word[:0], 0
			return
		}
		if !stopwords[string(word[1:])] { // no allocation: the compiler optimises map[string(b)]
			acc.add(hashBytes(kindWord, word[1:]), weightWord)
			word = append(word, '$')
			if nr < len(offs) {
				offs[nr] = len(word) - 1
				offs[nr+1] = len(word)
				n := nr + 1 // runes in ^word$
				for i := 0; i+3 <= n; i++ {
					acc.add(hashBytes(kindNgram3, word[offs[i]:offs[i+3]]), weightNgram)
				}
				for i := 0; i+4 <= n; i++ {
					acc.add(hashBytes(kindNgram4, word[offs[i]:offs[i+4]]), weightNgram)
				}
			}
		}
		word, nr = word[:0], 0
	}
	for _, r := range text {
		switch {
		case r >= 0x2E80 && runes.IsCJK(r): // not the Hangul Jamo below, as the embedder always read them
			flushWord()
			if !stopHan[r] {
				acc.add(hashRune(kindUnigram, r), weightUnigram)
			}
			if prevCJK != 0 {
				acc.add(hashRune(hashRune(kindBigram, prevCJK), r), weightBigram)
			}
			prevCJK = r
		case isWordRune(r):
			prevCJK = 0
			if nr == 0 {
				word = append(word[:0], '^')
				offs[0] = 0
				nr = 1
			}
			if nr < len(offs)-2 {
				offs[nr] = len(word)
			}
			nr++
			if r < utf8.RuneSelf {
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				word = append(word, byte(r))
			} else {
				word = utf8.AppendRune(word, unicode.ToLower(r))
			}
		default:
			prevCJK = 0
			flushWord()
		}
	}
	flushWord()
}

// isNFKCQuick reports whether s is certainly already NFKC: plain ASCII, or
// text that passes the quick check. It spares the common case an
// allocation.
func isNFKCQuick(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFKC.IsNormalString(s)
		}
	}
	return true
}

// FNV-1a, 64 bit: fast, stable across processes and platforms (vectors are
// persisted), and good enough for feature hashing.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashRune(seed uint64, r rune) uint64 {
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	return hashBytes(seed, b[:n])
}

func hashBytes(seed uint64, b []byte) uint64 {
	h := uint64(fnvOffset) ^ seed*fnvPrime
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return mix(h)
}

// mix spreads FNV's weak low bits (a final avalanche step, as in
// SplitMix64) so that the bucket and the sign are independent.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
