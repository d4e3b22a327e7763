package lang

import (
	"slices"
	"testing"
)

func TestStemPorterVocabulary(t *testing.T) {
	// Input and output pairs from Porter's paper and its reference vocabulary.
	cases := map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress",
		"cats": "cat", "feed": "feed", "agreed": "agre", "plastered": "plaster",
		"bled": "bled", "motoring": "motor", "sing": "sing", "conflated": "conflat",
		"troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan",
		"falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat",
		"conditional": "condit", "rational": "ration", "digitizer": "digit",
		"operator": "oper", "feudalism": "feudal", "decisiveness": "decis",
		"hopefulness": "hope", "callousness": "callous", "triplicate": "triplic",
		"formative": "form", "formalize": "formal", "electrical": "electr",
		"hopeful": "hope", "goodness": "good", "revival": "reviv",
		"allowance": "allow", "inference": "infer", "airliner": "airlin",
		"gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
		"irritant": "irrit", "replacement": "replac", "adjustment": "adjust",
		"dependent": "depend", "adoption": "adopt", "communism": "commun",
		"activate": "activ", "effective": "effect", "bowdlerize": "bowdler",
		"probate": "probat", "rate": "rate", "cease": "ceas", "controlling": "control",
		"roll": "roll", "generalizations": "gener", "oscillators": "oscil",
		"running": "run", "painted": "paint", "paintings": "paint",
		// left alone: short, numeric, non-ASCII
		"go": "go", "2023": "2023", "18th": "18th", "café": "café",
	}
	for in, want := range cases {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Caroline's LGBTQ-friendly group!", []string{"caroline", "lgbtq", "friendly", "group"}},
		{"I don’t use UTF-8", []string{"i", "don't", "use", "utf", "8"}},
		{"ＣＳＶ文件用gbk打开", []string{"csv", "文", "件", "用", "gbk", "打", "开"}},
		{"'quoted' kids' toys", []string{"quoted", "kids", "toys"}},
		{"", nil},
	}
	for _, c := range cases {
		if got := Words(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTerms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		// stop words go, the rest is stemmed
		{"What did Caroline research about adoption agencies?", []string{"carolin", "research", "adopt", "agenc"}},
		// CJK runs: single characters that are not stop words, plus bigrams
		{"读取CSV文件", []string{"读", "读取", "取", "csv", "文", "文件", "件"}},
		{"我的报告", []string{"我的", "的报", "报", "报告", "告"}},
		// a lone CJK character is a unigram
		{"猫 cat", []string{"猫", "cat"}},
	}
	for _, c := range cases {
		if got := Terms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTermsAgreeAcrossWidthAndCase(t *testing.T) {
	if a, b := Terms("ＣＳＶ Parsing"), Terms("csv parsing"); !slices.Equal(a, b) {
		t.Fatalf("full-width and half-width text index differently: %q vs %q", a, b)
	}
}

func TestStopWords(t *testing.T) {
	for _, w := range []string{"the", "what", "didn't", "i'm"} {
		if !IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"csv", "never", "last", "encoding"} {
		if IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = true, want false", w)
		}
	}
	if !HasCJK("abc中") || HasCJK("abc") {
		t.Error("HasCJK misreports")
	}
}

func BenchmarkTerms(b *testing.B) {
	s := "Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful. 上周三我们讨论了CSV文件的编码问题。"
	for b.Loop() {
		Terms(s)
	}
}
