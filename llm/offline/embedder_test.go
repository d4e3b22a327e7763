package offline

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func embed(t testing.TB, e *Embedder, texts ...string) [][]float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestEmbedderUnitVectorsOfTheRightDimension(t *testing.T) {
	for _, dim := range []int{64, 384, 1024} {
		e := NewEmbedder(dim)
		texts := []string{"Always give report timestamps in UTC.", "以后报表都用UTC时间", "", "!!! ???", strings.Repeat("gbk ", 500)}
		for i, v := range embed(t, e, texts...) {
			if len(v) != dim {
				t.Fatalf("dim %d: text %d has length %d", dim, i, len(v))
			}
			var sum float64
			for _, x := range v {
				sum += float64(x) * float64(x)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("dim %d: text %q has norm² %f", dim, texts[i], sum)
			}
		}
		if e.Dim() != dim || !strings.Contains(e.Model(), "v1") || !strings.HasSuffix(e.Model(), "d"+itoa(dim)) {
			t.Errorf("Dim %d Model %q", e.Dim(), e.Model())
		}
	}
	if NewEmbedder(0).Dim() != DefaultDim {
		t.Errorf("NewEmbedder(0).Dim() = %d, want DefaultDim", NewEmbedder(0).Dim())
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestEmbedderIsDeterministic(t *testing.T) {
	a := embed(t, NewEmbedder(256), "When reading sales_2024.csv, use encoding='gbk'.")[0]
	b := embed(t, NewEmbedder(256), "When reading sales_2024.csv, use encoding='gbk'.")[0]
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("vectors differ at %d", i)
		}
	}
}

func TestEmbedderSimilarity(t *testing.T) {
	e := NewEmbedder(DefaultDim)
	tests := []struct {
		name              string
		anchor, near, far string
	}{
		{"paraphrase", "Always give report timestamps in UTC.", "Report timestamps should always be in UTC", "Install openpyxl before reading Excel files with pandas."},
		{"inflection", "reading CSV files with Chinese columns", "read the csv file; the column names are Chinese", "deploy billing-api to staging with helm"},
		{"chinese near-duplicate", "以后报表都用UTC时间", "报表时间以后统一用UTC", "图表里的中文全是方块"},
		{"chinese lesson", "读取 weekly_sales.xlsx 之前先安装 openpyxl", "读取 xlsx 文件前要先安装 openpyxl", "不要覆盖原来的 sheet，结果另存为新文件"},
		{"mixed scripts", "用 gbk 编码读取 sales_2024.csv", "reading sales_2024.csv needs encoding gbk", "Never deploy to production on Fridays."},
	}
	for _, tt := range tests {
		vs := embed(t, e, tt.anchor, tt.near, tt.far)
		near, far := memory.Cosine(vs[0], vs[1]), memory.Cosine(vs[0], vs[2])
		if near <= far || near < 0.2 {
			t.Errorf("%s: similarity to near %.3f, to far %.3f", tt.name, near, far)
		}
		t.Logf("%s: near %.3f far %.3f", tt.name, near, far)
	}
	// Full-width and half-width text are the same text.
	vs := embed(t, e, "ＵＴＣ　时间", "UTC 时间")
	if c := memory.Cosine(vs[0], vs[1]); c < 0.999 {
		t.Errorf("NFKC: full-width and half-width differ: %.3f", c)
	}
}

func TestEmbedderRespectsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewEmbedder(64).Embed(ctx, []string{"x"}); err == nil {
		t.Error("Embed ignored a cancelled context")
	}
}

var benchTexts = map[string]string{
	"en": "When reading sales_2024.csv (Chinese fields), use encoding='gbk'; encoding='utf-8' and encoding='utf-8-sig' failed with UnicodeDecodeError.",
	"zh": "生成图表 weekly_report.png（含中文）时加上 plt.rcParams['font.sans-serif']=['SimHei']；不加时出现问题：图表里的中文全是方块。",
}

func BenchmarkEmbed(b *testing.B) {
	for _, name := range []string{"en", "zh"} {
		text := benchTexts[name]
		b.Run(name, func(b *testing.B) {
			e := NewEmbedder(DefaultDim)
			ctx := context.Background()
			in := []string{text}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestEmbedderConcurrentUseMatchesSequential(t *testing.T) {
	e := NewEmbedder(128)
	var many strings.Builder // enough distinct features to grow the accumulator
	for i := range 1500 {
		many.WriteString("w" + itoa(i) + " ")
	}
	texts := []string{"Always give report timestamps in UTC.", "以后报表都用UTC时间", many.String(), ""}
	want := embed(t, e, texts...)
	errs := make(chan string, 8)
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				got, err := e.Embed(context.Background(), texts)
				if err != nil {
					errs <- err.Error()
					return
				}
				for i := range got {
					for j := range got[i] {
						if got[i][j] != want[i][j] {
							errs <- "concurrent vectors differ from sequential ones"
							return
						}
					}
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
