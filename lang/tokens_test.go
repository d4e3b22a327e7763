package lang

import (
	"math"
	"strings"
	"testing"
)

// TestTokens checks that Tokens is the real tokenizer (known counts) and
// measures EstimateTokens against it on the kinds of text Hindsight
// budgets: memories in English and Chinese, code, commands and logs.
func TestTokens(t *testing.T) {
	for s, want := range map[string]int{"hello world": 2, "Give report timestamps in UTC.": 6} {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d (cl100k_base)", s, got, want)
		}
	}
	if tok.err != nil {
		t.Fatalf("the tokenizer did not load: %v", tok.err)
	}
	texts := []string{
		"Before parsing a CSV with Chinese fields, detect the encoding; try utf-8-sig, then gbk.",
		"The user is vegetarian and dislikes mushrooms; suggest restaurants with vegetarian mains.",
		"Never ALTER tables in the production warehouse yourself: schema changes go through a migration PR in the warehouse-migrations repo.",
		"When running `kubectl patch`, set readinessProbe.timeoutSeconds to 5; the default of 1 second fails when /healthz calls Elasticsearch.",
		"报表里的时间统一用北京时间，写成 2026-01-12 09:11 这种，后面标上 (UTC+8)。",
		"以后导出 CSV 改成普通 UTF-8，不带 BOM；运营那边已经改成直接给 xlsx 了。",
		"spark-submit --master yarn --deploy-mode cluster --executor-memory 10g --conf spark.executor.memoryOverhead=4g jobs/dws_user_daily.py",
		"Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nUnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5 in position 0: invalid start byte",
		"[1] lesson · conf 0.60 · 2026-03-02 · mem_6e7d5e6cefca8aa72dfd591e · from ep_1f2e3d (success)\n    Use encoding='gbk' for sales_2024.csv.",
		"df = pd.read_excel(xl, sheet_name='明细', header=3, converters={'应付金额': Decimal, '已付金额': Decimal})",
	}
	var sumAbs float64
	for _, s := range texts {
		real := Tokens(s)
		est := EstimateTokens(s)
		rel := float64(est-real) / float64(real)
		sumAbs += math.Abs(rel)
		t.Logf("estimate %3d, cl100k %3d (%+.0f%%): %.50s", est, real, 100*rel, s)
		if math.Abs(rel) > 0.7 {
			t.Errorf("estimate %d vs cl100k %d (%+.0f%%) for %q", est, real, 100*rel, s)
		}
	}
	mean := sumAbs / float64(len(texts))
	t.Logf("mean absolute error %.1f%%", 100*mean)
	if mean > 0.3 {
		t.Errorf("mean absolute error %.1f%%, want at most 30%%", 100*mean)
	}
}

func TestIdentifiers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"set readinessProbe timeoutSeconds to 5", "readinessprob=readi+probe timeoutsecond=timeout+second"},
		{"pods go NotReady", "notreadi=not+readi"},
		{"call parseHTTPResponse first", "parsehttprespons=pars+http+respons"},
		{"HTTP and UTC and lowercase words stay whole", ""},
		{"读取 userId 字段", "userid=user+id"},
	} {
		var got []string
		for _, id := range Identifiers(c.in) {
			got = append(got, id.Whole+"="+strings.Join(id.Parts, "+"))
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("Identifiers(%q) = %q, want %q", c.in, s, c.want)
		}
	}
}
