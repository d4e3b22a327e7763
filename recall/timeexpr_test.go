package recall

import (
	"testing"
	"time"
)

// now is Wednesday 18 March 2026, 10:00 UTC.
var now = time.Date(2026, 3, 18, 10, 0, 0, 0, time.UTC)

func d(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC) }

type timeCase struct {
	text         string
	since, until time.Time // zero for an open side
	rest         string    // the text without the expression
}

func runTimeCases(t *testing.T, cases []timeCase) {
	t.Helper()
	for _, c := range cases {
		r, rest, ok := ParseTime(c.text, now, time.UTC)
		if !ok {
			t.Errorf("ParseTime(%q) found no expression, want [%s, %s)", c.text, c.since.Format(time.DateOnly), c.until.Format(time.DateOnly))
			continue
		}
		if !r.Since.Equal(c.since) || !r.Until.Equal(c.until) {
			t.Errorf("ParseTime(%q) = [%s, %s) from %q, want [%s, %s)", c.text, r.Since.Format(time.DateOnly), r.Until.Format(time.DateOnly), r.Expr, c.since.Format(time.DateOnly), c.until.Format(time.DateOnly))
		}
		if c.rest != "" && rest != c.rest {
			t.Errorf("ParseTime(%q) rest = %q, want %q", c.text, rest, c.rest)
		}
	}
}

func TestParseTimeEnglish(t *testing.T) {
	runTimeCases(t, []timeCase{
		{"what did we decide yesterday about the CSV parser", d(2026, 3, 17), d(2026, 3, 18), "what did we decide about the CSV parser"},
		{"Today's deploy", d(2026, 3, 18), d(2026, 3, 19), "'s deploy"},
		{"the day before yesterday", d(2026, 3, 16), d(2026, 3, 17), ""},
		{"errors last week", d(2026, 3, 9), d(2026, 3, 16), "errors"},
		{"this week", d(2026, 3, 16), d(2026, 3, 23), ""},
		{"what happened last weekend", d(2026, 3, 14), d(2026, 3, 16), ""},
		{"this month", d(2026, 3, 1), d(2026, 4, 1), ""},
		{"reports from last month", d(2026, 2, 1), d(2026, 3, 1), "reports from"},
		{"last year", d(2025, 1, 1), d(2026, 1, 1), ""},
		{"what did I fix in March", d(2026, 3, 1), d(2026, 4, 1), "what did I fix"},
		{"in May", d(2025, 5, 1), d(2025, 6, 1), ""},
		{"last March", d(2025, 3, 1), d(2025, 4, 1), ""},
		{"camping in July 2023", d(2023, 7, 1), d(2023, 8, 1), "camping"},
		{"March 2023", d(2023, 3, 1), d(2023, 4, 1), ""},
		{"3 days ago", d(2026, 3, 15), d(2026, 3, 16), ""},
		{"three days ago", d(2026, 3, 15), d(2026, 3, 16), ""},
		{"2 weeks ago", d(2026, 3, 2), d(2026, 3, 9), ""},
		{"a month ago", d(2026, 2, 1), d(2026, 3, 1), ""},
		{"two years ago", d(2024, 1, 1), d(2025, 1, 1), ""},
		{"in the last 7 days", d(2026, 3, 11), d(2026, 3, 19), ""},
		{"past 2 weeks", d(2026, 3, 4), d(2026, 3, 19), ""},
		{"last Monday", d(2026, 3, 16), d(2026, 3, 17), ""},
		{"last Wednesday", d(2026, 3, 11), d(2026, 3, 12), ""},
		{"on Friday", d(2026, 3, 13), d(2026, 3, 14), ""},
		{"on March 3", d(2026, 3, 3), d(2026, 3, 4), ""},
		{"March 25th", d(2025, 3, 25), d(2025, 3, 26), ""},
		{"What painting did Melanie show on October 13, 2023?", d(2023, 10, 13), d(2023, 10, 14), "What painting did Melanie show ?"},
		{"on 1 February, 2023", d(2023, 2, 1), d(2023, 2, 2), ""},
		{"the 3rd of May 2022", d(2022, 5, 3), d(2022, 5, 4), ""},
		{"2023-03-05", d(2023, 3, 5), d(2023, 3, 6), ""},
		{"beach trips in 2023", d(2023, 1, 1), d(2024, 1, 1), "beach trips"},
		{"summer 2021", d(2021, 1, 1), d(2022, 1, 1), ""},
		{"since March", d(2026, 3, 1), time.Time{}, ""},
		{"everything before 2024", time.Time{}, d(2024, 1, 1), "everything"},
		{"after last week", d(2026, 3, 16), time.Time{}, ""},
		{"the week before August 3, 2023", d(2023, 7, 27), d(2023, 8, 3), ""},
		{"last weekend before April 10, 2023", d(2023, 4, 8), d(2023, 4, 10), ""},
		{"two weeks before August 11, 2023", d(2023, 7, 28), d(2023, 8, 4), ""},
	})
}

func TestParseTimeChinese(t *testing.T) {
	runTimeCases(t, []timeCase{
		{"今天的报错", d(2026, 3, 18), d(2026, 3, 19), "的报错"},
		{"昨天", d(2026, 3, 17), d(2026, 3, 18), ""},
		{"前天", d(2026, 3, 16), d(2026, 3, 17), ""},
		{"上周我们讨论了什么", d(2026, 3, 9), d(2026, 3, 16), "我们讨论了什么"},
		{"上个星期", d(2026, 3, 9), d(2026, 3, 16), ""},
		{"本周", d(2026, 3, 16), d(2026, 3, 23), ""},
		{"这周", d(2026, 3, 16), d(2026, 3, 23), ""},
		{"上上周", d(2026, 3, 2), d(2026, 3, 9), ""},
		{"上周三我们讨论了什么", d(2026, 3, 11), d(2026, 3, 12), "我们讨论了什么"},
		{"上星期日", d(2026, 3, 15), d(2026, 3, 16), ""},
		{"周一的会议", d(2026, 3, 16), d(2026, 3, 17), "的会议"},
		{"上周末", d(2026, 3, 14), d(2026, 3, 16), ""},
		{"三天前", d(2026, 3, 15), d(2026, 3, 16), ""},
		{"3天前", d(2026, 3, 15), d(2026, 3, 16), ""},
		{"两周前", d(2026, 3, 2), d(2026, 3, 9), ""},
		{"一个月前", d(2026, 2, 1), d(2026, 3, 1), ""},
		{"上个月", d(2026, 2, 1), d(2026, 3, 1), ""},
		{"本月", d(2026, 3, 1), d(2026, 4, 1), ""},
		{"去年", d(2025, 1, 1), d(2026, 1, 1), ""},
		{"今年", d(2026, 1, 1), d(2027, 1, 1), ""},
		{"前年", d(2024, 1, 1), d(2025, 1, 1), ""},
		{"3月", d(2026, 3, 1), d(2026, 4, 1), ""},
		{"三月份", d(2026, 3, 1), d(2026, 4, 1), ""},
		{"5月的报表", d(2025, 5, 1), d(2025, 6, 1), "的报表"},
		{"十二月", d(2025, 12, 1), d(2026, 1, 1), ""},
		{"3月5日", d(2026, 3, 5), d(2026, 3, 6), ""},
		{"2023年3月", d(2023, 3, 1), d(2023, 4, 1), ""},
		{"2023年3月5号", d(2023, 3, 5), d(2023, 3, 6), ""},
		{"2023年", d(2023, 1, 1), d(2024, 1, 1), ""},
		{"最近三天", d(2026, 3, 15), d(2026, 3, 19), ""},
		{"3月之前", time.Time{}, d(2026, 3, 1), ""},
		{"去年以来", d(2025, 1, 1), time.Time{}, ""},
	})
}

func TestParseTimeNoExpression(t *testing.T) {
	for _, text := range []string{
		"What may I do with the CSV parser?",
		"we march on",
		"What did Caroline research?",
		"Monday meetings",
		"a lesson about weeks of work",
		"port 2023 is open",
		"一个好的报表",
	} {
		if r, _, ok := ParseTime(text, now, time.UTC); ok {
			t.Errorf("ParseTime(%q) found %q = [%v, %v), want nothing", text, r.Expr, r.Since, r.Until)
		}
	}
}

func TestParseTimeZone(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	// 20:00 UTC on the 17th is already the 18th in Shanghai.
	late := time.Date(2026, 3, 17, 20, 0, 0, 0, time.UTC)
	r, _, ok := ParseTime("昨天", late, shanghai)
	want := time.Date(2026, 3, 17, 0, 0, 0, 0, shanghai)
	if !ok || !r.Since.Equal(want) || !r.Until.Equal(want.AddDate(0, 0, 1)) {
		t.Fatalf("昨天 at %v in UTC+8 = [%v, %v), want [%v, +1d)", late, r.Since, r.Until, want)
	}
}
