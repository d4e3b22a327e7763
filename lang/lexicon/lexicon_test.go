package lexicon

import (
	"slices"
	"testing"
)

func installed(t *testing.T) *Lexicon {
	t.Helper()
	l := Default()
	if l == nil {
		t.Skipf("dictionaries not installed (%v); make dicts installs them", Err())
	}
	return l
}

func TestTranslations(t *testing.T) {
	l := installed(t)
	has := func(gs [][]string, term string) bool {
		return slices.ContainsFunc(gs, func(g []string) bool { return slices.Contains(g, term) })
	}
	for word, term := range map[string]string{"时区": "zone", "退款": "refund", "编码": "encod", "导出": "export", "邮件": "email"} {
		if gs := l.English(word); !has(gs, term) {
			t.Errorf("English(%s) = %v, want a gloss with %q", word, gs, term)
		}
	}
	for stem, word := range map[string]string{"refund": "退款", "encod": "编码", "timestamp": "时间戳", "email": "邮件"} {
		if ws := l.Chinese(stem); !slices.Contains(ws, word) {
			t.Errorf("Chinese(%s) = %v, want %s among them", stem, ws, word)
		}
	}
	if syn := l.Synonyms("refund"); !slices.Contains(syn, "repay") {
		t.Errorf("Synonyms(refund) = %v, want repay", syn)
	}
}

func TestSegment(t *testing.T) {
	l := installed(t)
	if got := l.Segment("报表时间用什么时区"); !slices.Equal(got, []string{"报表", "时间", "用", "什么", "时区"}) {
		t.Errorf("Segment = %q", got)
	}
	var none *Lexicon
	if got := none.Segment("报表"); !slices.Equal(got, []string{"报", "表"}) || none.English("报表") != nil || none.Chinese("report") != nil {
		t.Errorf("a nil lexicon should know nothing: %q", got)
	}
}

func TestIndexRoundTrip(t *testing.T) {
	l := installed(t)
	path := t.TempDir() + "/index.gz"
	if err := l.writeIndex(path); err != nil {
		t.Fatal(err)
	}
	r, err := readIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	zh, en := l.Words()
	rzh, ren := r.Words()
	if zh != rzh || en != ren || !slices.Equal(r.Chinese("refund"), l.Chinese("refund")) || r.maxZh != l.maxZh {
		t.Errorf("index round trip: %d/%d words, want %d/%d", rzh, ren, zh, en)
	}
}

func TestLoadSaysWhatIsMissing(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil {
		t.Fatal("Load of an empty folder succeeded")
	}
}
