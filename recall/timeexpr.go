package recall

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeRange is a half-open interval [Since, Until) read from a time
// expression. A zero bound is open: "before March" has no Since.
type TimeRange struct {
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Expr is the expression as written in the query.
	Expr string `json:"expr"`
}

// IsZero reports whether no range was found.
func (r TimeRange) IsZero() bool { return r.Since.IsZero() && r.Until.IsZero() }

// ParseTime finds the first time expression in text (English or Chinese)
// and returns the range it denotes relative to now, read in loc, together
// with text without the expression. ok is false when text holds none.
//
// Calendar units are whole and weeks start on Monday: "last week" is the
// previous Monday-to-Sunday week, "in March" the most recent March that has
// begun (this year's if it is March or later), "3 days ago" that whole day,
// "上周三" the Wednesday of the previous week. "before", "after", "since"
// and 之前/之后/以来 open one side; "the week before <date>" is the seven
// days up to that date. Bare weekday and month names that are also
// ordinary words ("may", "march") count only after a preposition or next to
// a day or year.
func ParseTime(text string, now time.Time, loc *time.Location) (r TimeRange, rest string, ok bool) {
	if loc == nil {
		loc = time.UTC
	}
	if !mayHoldTime(text) {
		return TimeRange{}, text, false
	}
	p := timeParser{now: now.In(loc), loc: loc}
	p.today = p.day(p.now)
	start, end, sp, found := p.first(text)
	if !found {
		return TimeRange{}, text, false
	}
	// "last weekend before April 10": the expression after the relation is
	// the anchor; modify reads what precedes it.
	if rel := relationNext.FindStringIndex(text[end:]); rel != nil {
		off := end + rel[1]
		if s2, e2, sp2, ok := p.first(text[off:]); ok && s2 == 0 {
			start, end, sp = off, off+e2, sp2
		}
	}
	start, end, sp = p.modify(text, start, end, sp)
	rest = strings.Join(strings.Fields(text[:start]+" "+text[end:]), " ")
	return TimeRange{Since: sp.since, Until: sp.until, Expr: strings.TrimSpace(text[start:end])}, rest, true
}

// timeTriggers are substrings every time expression contains (besides
// digits): a text with none of them is not run through the rules, which
// keeps query understanding cheap for most queries.
var timeTriggers = []string{
	"day", "night", "morning", "afternoon", "evening", "week", "month", "year", "ago",
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
	"天", "周", "月", "年", "昨", "今", "日", "号", "星期", "礼拜", "早", "晚",
}

func mayHoldTime(text string) bool {
	if strings.ContainsFunc(text, func(r rune) bool { return r >= '0' && r <= '9' }) {
		return true
	}
	lower := strings.ToLower(text)
	for _, t := range timeTriggers {
		if strings.Contains(lower, t) {
			return true
		}
	}
	return false
}

type span struct{ since, until time.Time }

type timeParser struct {
	now, today time.Time
	loc        *time.Location
	// prefix is the text before the match being read, for rules that
	// count only after certain words.
	prefix string
}

type timeRule struct {
	re *regexp.Regexp
	fn func(p *timeParser, m []string) (span, bool)
}

// first returns the leftmost expression any rule matches, the longest when
// several start at the same place.
func (p *timeParser) first(text string) (start, end int, sp span, ok bool) {
	start = -1
	for _, r := range timeRules {
		for _, loc := range r.re.FindAllStringSubmatchIndex(text, -1) {
			if start >= 0 && (loc[0] > start || loc[0] == start && loc[1] <= end) {
				continue
			}
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = text[loc[2*i]:loc[2*i+1]]
				}
			}
			p.prefix = text[:loc[0]]
			s, good := r.fn(p, m)
			if !good {
				continue
			}
			start, end, sp, ok = loc[0], loc[1], s, true
			break
		}
	}
	return start, end, sp, ok
}

var (
	relationNext = regexp.MustCompile(`(?i)^\s+(?:before|after|prior\s+to)\s+(?:the\s+)?`)
	relationPrev = regexp.MustCompile(`(?i)\b(?:since|before|after|until|till|by|prior\s+to)\s+(?:the\s+)?$`)
	yearPrev     = regexp.MustCompile(`(?i)\b(?:in|during|of|since|before|after|until|till|by|early|mid|late|spring|summer|autumn|fall|winter)\s+$`)
	enBefore     = regexp.MustCompile(`(?i)(?:\b(?:the|last|that)\s+(day|week|weekend|month|year)|\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+couple\s+of|a\s+few|few|several)\s+(days?|weeks?|months?|years?))?\s*\b(before|after|since|until|till|by|prior\s+to)\s+(?:the\s+)?$`)
	zhAfter      = regexp.MustCompile(`^\s*(之前|以前|前|之后|以后|以来|后)`)
	zhSince      = regexp.MustCompile(`(自从|自|从)\s*$`)
)

// modify widens an expression with a relation around it: "before X",
// "since X", "the week before X", "X之前", "自X以来".
func (p *timeParser) modify(text string, start, end int, sp span) (int, int, span) {
	if m := enBefore.FindStringSubmatchIndex(text[:start]); m != nil {
		rel := strings.ToLower(strings.Join(strings.Fields(text[m[8]:m[9]]), " "))
		switch {
		case m[2] >= 0 && rel == "before":
			unit := strings.ToLower(text[m[2]:m[3]])
			sp = span{p.back(sp.since, 1, unit), sp.since}
			if unit == "weekend" {
				sp = p.weekendBefore(sp.until)
			}
		case m[4] >= 0 && rel == "before":
			n, ok := enNumber(text[m[4]:m[5]])
			if !ok {
				return start, end, sp
			}
			unit := strings.TrimSuffix(strings.ToLower(text[m[6]:m[7]]), "s")
			from := p.back(sp.since, n, unit)
			sp = span{from, p.forward(from, 1, unit)}
		case m[2] >= 0 || m[4] >= 0:
			return start, end, sp // "the week after X": leave X alone
		case rel == "before" || rel == "until" || rel == "till" || rel == "by" || rel == "prior to":
			sp = span{until: sp.since}
		case rel == "after":
			sp = span{since: sp.until}
		case rel == "since":
			sp = span{since: sp.since}
		}
		return m[0], end, sp
	}
	if m := zhAfter.FindStringSubmatchIndex(text[end:]); m != nil {
		switch text[end+m[2] : end+m[3]] {
		case "之前", "以前", "前":
			sp = span{until: sp.since}
		case "之后", "以后", "后":
			sp = span{since: sp.until}
		case "以来":
			sp = span{since: sp.since}
		}
		end += m[1]
		if z := zhSince.FindStringIndex(text[:start]); z != nil {
			start = z[0]
		}
		return start, end, sp
	}
	if z := zhSince.FindStringIndex(text[:start]); z != nil {
		return z[0], end, span{since: sp.since}
	}
	return start, end, sp
}

func (p *timeParser) day(t time.Time) time.Time {
	y, m, d := t.In(p.loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, p.loc)
}

func (p *timeParser) days(n int) span {
	d := p.today.AddDate(0, 0, -n)
	return span{d, d.AddDate(0, 0, 1)}
}

// weekStart is the Monday of t's week.
func (p *timeParser) weekStart(t time.Time) time.Time {
	d := p.day(t)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

func (p *timeParser) week(weeksAgo int) span {
	ws := p.weekStart(p.now).AddDate(0, 0, -7*weeksAgo)
	return span{ws, ws.AddDate(0, 0, 7)}
}

func (p *timeParser) month(y int, m time.Month) span {
	s := time.Date(y, m, 1, 0, 0, 0, 0, p.loc)
	return span{s, s.AddDate(0, 1, 0)}
}

func (p *timeParser) monthsAgo(n int) span {
	y, m, _ := p.now.Date()
	return p.month(y, m-time.Month(n)) // time.Date normalises month overflow
}

func (p *timeParser) year(y int) span {
	s := time.Date(y, 1, 1, 0, 0, 0, 0, p.loc)
	return span{s, s.AddDate(1, 0, 0)}
}

// weekday returns the day wd of the week weeksAgo weeks back (0: this
// week), weeks starting on Monday.
func (p *timeParser) weekday(wd time.Weekday, weeksAgo int) span {
	d := p.weekStart(p.now).AddDate(0, 0, -7*weeksAgo+(int(wd)+6)%7)
	return span{d, d.AddDate(0, 0, 1)}
}

// lastWeekday is the most recent day wd strictly before today, or not
// after today when today counts.
func (p *timeParser) lastWeekday(wd time.Weekday, todayCounts bool) span {
	back := (int(p.today.Weekday()) - int(wd) + 7) % 7
	if back == 0 && !todayCounts {
		back = 7
	}
	return p.days(back)
}

// weekendBefore is the Saturday and Sunday before t.
func (p *timeParser) weekendBefore(t time.Time) span {
	d := p.day(t)
	back := (int(d.Weekday()) - int(time.Saturday) + 7) % 7
	if back == 0 {
		back = 7
	}
	if d.Weekday() == time.Sunday {
		back = 8
	}
	sat := d.AddDate(0, 0, -back)
	return span{sat, sat.AddDate(0, 0, 2)}
}

// recentMonth is the most recent month m that has begun.
func (p *timeParser) recentMonth(m time.Month, strictlyPast bool) span {
	y := p.now.Year()
	if m > p.now.Month() || strictlyPast && m == p.now.Month() {
		y--
	}
	return p.month(y, m)
}

// recentDate is the most recent m/d not after today.
func (p *timeParser) recentDate(m time.Month, d int) (span, bool) {
	y := p.now.Year()
	t := time.Date(y, m, d, 0, 0, 0, 0, p.loc)
	if t.After(p.today) {
		t = time.Date(y-1, m, d, 0, 0, 0, 0, p.loc)
	}
	if t.Day() != d {
		return span{}, false // 30 February
	}
	return span{t, t.AddDate(0, 0, 1)}, true
}

func (p *timeParser) date(y int, m time.Month, d int) (span, bool) {
	t := time.Date(y, m, d, 0, 0, 0, 0, p.loc)
	if t.Day() != d || t.Month() != m {
		return span{}, false
	}
	return span{t, t.AddDate(0, 0, 1)}, true
}

// back steps n units back from t; forward n units on.
func (p *timeParser) back(t time.Time, n int, unit string) time.Time { return p.forward(t, -n, unit) }

func (p *timeParser) forward(t time.Time, n int, unit string) time.Time {
	switch unit {
	case "day":
		return t.AddDate(0, 0, n)
	case "week", "weekend":
		return t.AddDate(0, 0, 7*n)
	case "month":
		return t.AddDate(0, n, 0)
	}
	return t.AddDate(n, 0, 0)
}

// rolling is the last n units up to the end of today.
func (p *timeParser) rolling(n int, unit string) span {
	return span{p.back(p.today, n, unit), p.today.AddDate(0, 0, 1)}
}

// ago is the whole unit n units back: "3 days ago" is that day, "2 weeks
// ago" that week.
func (p *timeParser) ago(n int, unit string) span {
	switch unit {
	case "day":
		return p.days(n)
	case "week":
		return p.week(n)
	case "month":
		return p.monthsAgo(n)
	}
	return p.year(p.now.Year() - n)
}

var enNumbers = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
	"a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}

func enNumber(s string) (int, bool) {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	if n, err := strconv.Atoi(s); err == nil {
		return n, n > 0 && n < 10000
	}
	n, ok := enNumbers[s]
	return n, ok
}

var enMonths = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

var enWeekdays = map[string]time.Weekday{
	"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday, "sunday": time.Sunday,
}

// zhNumber reads 1–99 written in digits or Chinese numerals (三, 十二, 二十五, 两).
func zhNumber(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	digit := func(r rune) int {
		for i, z := range []rune("零一二三四五六七八九") {
			if r == z {
				return i
			}
		}
		return -1
	}
	rs := []rune(strings.ReplaceAll(strings.ReplaceAll(s, "两", "二"), "〇", "零"))
	switch {
	case len(rs) == 1 && rs[0] == '十':
		return 10, true
	case len(rs) == 1:
		d := digit(rs[0])
		return d, d > 0
	case len(rs) == 2 && rs[0] == '十':
		d := digit(rs[1])
		return 10 + d, d > 0
	case len(rs) == 2 && rs[1] == '十':
		d := digit(rs[0])
		return 10 * d, d > 0
	case len(rs) == 3 && rs[1] == '十':
		a, b := digit(rs[0]), digit(rs[2])
		return 10*a + b, a > 0 && b > 0
	}
	return 0, false
}

func zhWeekday(s string) time.Weekday {
	switch s {
	case "一", "1":
		return time.Monday
	case "二", "2":
		return time.Tuesday
	case "三", "3":
		return time.Wednesday
	case "四", "4":
		return time.Thursday
	case "五", "5":
		return time.Friday
	case "六", "6":
		return time.Saturday
	}
	return time.Sunday // 日, 天, 7
}

const (
	enNum     = `(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+couple\s+of|a\s+few|few|several)`
	enMonth   = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)`
	enWeekday = `(monday|tuesday|wednesday|thursday|friday|saturday|sunday)`
	zhNum     = `(\d{1,2}|[一二两三四五六七八九十]{1,3})`
	zhWeek    = `(?:周|星期|礼拜)`
	zhWD      = `([一二三四五六日天1-7])`
)

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

var timeRules = []timeRule{
	// English, relative days.
	{re(`(?i)\b(?:the\s+)?day\s+before\s+yesterday\b`), func(p *timeParser, m []string) (span, bool) { return p.days(2), true }},
	{re(`(?i)\byesterday\b|\blast\s+night\b`), func(p *timeParser, m []string) (span, bool) { return p.days(1), true }},
	{re(`(?i)\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b`), func(p *timeParser, m []string) (span, bool) { return p.days(0), true }},
	// this/last week, month, year, weekend.
	{re(`(?i)\b(this|last|previous|past)\s+(week|weekend|month|year)\b`), func(p *timeParser, m []string) (span, bool) {
		which, unit := strings.ToLower(m[1]), strings.ToLower(m[2])
		if which == "past" && unit != "weekend" {
			return p.rolling(1, unit), true
		}
		back := 0
		if which != "this" {
			back = 1
		}
		switch unit {
		case "week":
			return p.week(back), true
		case "weekend":
			if back == 0 {
				sat := p.weekStart(p.now).AddDate(0, 0, 5)
				return span{sat, sat.AddDate(0, 0, 2)}, true
			}
			return p.weekendBefore(p.weekStart(p.now)), true
		case "month":
			return p.monthsAgo(back), true
		}
		return p.year(p.now.Year() - back), true
	}},
	// the last/past N days.
	{re(`(?i)\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?:last|past)\s+` + enNum + `\s+(day|week|month|year)s?\b`), func(p *timeParser, m []string) (span, bool) {
		n, ok := enNumber(m[1])
		return p.rolling(n, strings.ToLower(m[2])), ok
	}},
	// N days ago.
	{re(`(?i)\b` + enNum + `\s+(day|week|month|year)s?\s+ago\b`), func(p *timeParser, m []string) (span, bool) {
		n, ok := enNumber(m[1])
		return p.ago(n, strings.ToLower(m[2])), ok
	}},
	// last/this/on Wednesday.
	{re(`(?i)\b(last|this|on|past)\s+` + enWeekday + `\b`), func(p *timeParser, m []string) (span, bool) {
		wd := enWeekdays[strings.ToLower(m[2])]
		switch strings.ToLower(m[1]) {
		case "this":
			return p.weekday(wd, 0), true
		case "on":
			return p.lastWeekday(wd, true), true
		}
		return p.lastWeekday(wd, false), true
	}},
	// Dates: March 3(rd)(, 2023); 3(rd) (of) March(,) (2023); 2023-03-03.
	{re(`(?i)(?:\bon\s+)?\b` + enMonth + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s*(\d{4})\b)?`), func(p *timeParser, m []string) (span, bool) {
		return p.enDate(m[3], m[1], m[2])
	}},
	{re(`(?i)(?:\bon\s+(?:the\s+)?)?\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + enMonth + `\b\.?(?:,?\s*(\d{4})\b)?`), func(p *timeParser, m []string) (span, bool) {
		return p.enDate(m[3], m[2], m[1])
	}},
	{re(`\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b`), func(p *timeParser, m []string) (span, bool) {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		return p.date(y, time.Month(mo), d)
	}},
	// Months: March 2023; in/during/last/this/early/mid/late March.
	{re(`(?i)\b` + enMonth + `\.?,?\s+(\d{4})\b`), func(p *timeParser, m []string) (span, bool) {
		y, _ := strconv.Atoi(m[2])
		return p.month(y, enMonths[strings.ToLower(m[1])]), true
	}},
	{re(`(?i)\b(in|during|last|this|early|mid|late)\s+(?:(?:early|mid|late)\s+)?` + enMonth + `\b(?:\.?,?\s+(\d{4})\b)?`), func(p *timeParser, m []string) (span, bool) {
		mo := enMonths[strings.ToLower(m[2])]
		if m[3] != "" {
			y, _ := strconv.Atoi(m[3])
			return p.month(y, mo), true
		}
		switch strings.ToLower(m[1]) {
		case "last":
			return p.recentMonth(mo, true), true
		case "this":
			return p.month(p.now.Year(), mo), true
		}
		return p.recentMonth(mo, false), true
	}},
	// A bare month name counts as the object of a relation ("since March"),
	// which modify then applies.
	{re(`(?i)\b` + enMonth + `\b`), func(p *timeParser, m []string) (span, bool) {
		return p.recentMonth(enMonths[strings.ToLower(m[1])], false), relationPrev.MatchString(p.prefix)
	}},
	// Years after a preposition or a season: in 2023, summer 2021, since 2020.
	{re(`(?i)\b(?:(in|during|early|mid|late|spring|summer|autumn|fall|winter)\s+)?((?:19|20)\d{2})\b`), func(p *timeParser, m []string) (span, bool) {
		y, _ := strconv.Atoi(m[2])
		return p.year(y), m[1] != "" || yearPrev.MatchString(p.prefix)
	}},

	// Chinese, relative days.
	{re(`大前天`), func(p *timeParser, m []string) (span, bool) { return p.days(3), true }},
	{re(`前天`), func(p *timeParser, m []string) (span, bool) { return p.days(2), true }},
	{re(`昨天|昨日|昨晚|昨儿`), func(p *timeParser, m []string) (span, bool) { return p.days(1), true }},
	{re(`今天|今日|今晚|今早|今儿`), func(p *timeParser, m []string) (span, bool) { return p.days(0), true }},
	// 上周三, 上上周五, 这周一, 本星期二, 周三.
	{re(`(上上|上|本|这)?(?:个)?` + zhWeek + zhWD), func(p *timeParser, m []string) (span, bool) {
		wd := zhWeekday(m[2])
		switch m[1] {
		case "上上":
			return p.weekday(wd, 2), true
		case "上":
			return p.weekday(wd, 1), true
		case "本", "这":
			return p.weekday(wd, 0), true
		}
		return p.lastWeekday(wd, true), true
	}},
	// 上周末, 这周末.
	{re(`(上|本|这)(?:个)?` + zhWeek + `末`), func(p *timeParser, m []string) (span, bool) {
		if m[1] == "上" {
			return p.weekendBefore(p.weekStart(p.now)), true
		}
		sat := p.weekStart(p.now).AddDate(0, 0, 5)
		return span{sat, sat.AddDate(0, 0, 2)}, true
	}},
	// 上周, 上上周, 本周, 这个星期.
	{re(`(上上|上|本|这)(?:个)?` + zhWeek), func(p *timeParser, m []string) (span, bool) {
		return p.week(map[string]int{"上上": 2, "上": 1}[m[1]]), true
	}},
	// 上个月, 本月, 这个月, 今年, 去年, 前年.
	{re(`(上上|上|本|这)(?:个)?月`), func(p *timeParser, m []string) (span, bool) {
		return p.monthsAgo(map[string]int{"上上": 2, "上": 1}[m[1]]), true
	}},
	{re(`今年|去年|前年`), func(p *timeParser, m []string) (span, bool) {
		return p.year(p.now.Year() - map[string]int{"今年": 0, "去年": 1, "前年": 2}[m[0]]), true
	}},
	// 三天前, 3个星期前, 两个月前, 一年前.
	// "3月之前" is "before March"; months ago need 个: "3个月前".
	{re(zhNum + `\s*(?:个)?(天|日|周|星期|礼拜|年)(?:之|以)?前|` + zhNum + `\s*个(月)(?:之|以)?前`), func(p *timeParser, m []string) (span, bool) {
		if m[1] == "" {
			m = m[2:]
		}
		n, ok := zhNumber(m[1])
		return p.ago(n, zhUnit(m[2])), ok
	}},
	// 最近三天, 过去两周, 近一个月.
	{re(`(?:最近|过去|近|前)(?:的)?` + zhNum + `\s*(?:个)?(天|日|周|星期|礼拜|月|年)`), func(p *timeParser, m []string) (span, bool) {
		n, ok := zhNumber(m[1])
		return p.rolling(n, zhUnit(m[2])), ok
	}},
	// 2023年3月5日, 2023年3月, 3月5号, 3月(份), 2023年.
	{re(`(\d{4})\s*年\s*` + zhNum + `\s*月\s*` + zhNum + `\s*[日号]`), func(p *timeParser, m []string) (span, bool) {
		y, _ := strconv.Atoi(m[1])
		mo, ok1 := zhNumber(m[2])
		d, ok2 := zhNumber(m[3])
		if !ok1 || !ok2 {
			return span{}, false
		}
		return p.date(y, time.Month(mo), d)
	}},
	{re(`(\d{4})\s*年\s*` + zhNum + `\s*月(?:份)?`), func(p *timeParser, m []string) (span, bool) {
		y, _ := strconv.Atoi(m[1])
		mo, ok := zhNumber(m[2])
		return p.month(y, time.Month(mo)), ok && mo >= 1 && mo <= 12
	}},
	{re(zhNum + `\s*月\s*` + zhNum + `\s*[日号]`), func(p *timeParser, m []string) (span, bool) {
		mo, ok1 := zhNumber(m[1])
		d, ok2 := zhNumber(m[2])
		if !ok1 || !ok2 || mo < 1 || mo > 12 {
			return span{}, false
		}
		return p.recentDate(time.Month(mo), d)
	}},
	{re(zhNum + `\s*月(?:份)?`), func(p *timeParser, m []string) (span, bool) {
		mo, ok := zhNumber(m[1])
		if !ok || mo < 1 || mo > 12 {
			return span{}, false
		}
		return p.recentMonth(time.Month(mo), false), true
	}},
	{re(`(\d{4})\s*年`), func(p *timeParser, m []string) (span, bool) {
		y, _ := strconv.Atoi(m[1])
		return p.year(y), y >= 1900 && y < 2200
	}},
}

func zhUnit(s string) string {
	switch s {
	case "天", "日":
		return "day"
	case "周", "星期", "礼拜":
		return "week"
	case "月":
		return "month"
	}
	return "year"
}

// enDate reads an English day of a month, with an optional year.
func (p *timeParser) enDate(year, month, day string) (span, bool) {
	mo := enMonths[strings.ToLower(month)]
	d, _ := strconv.Atoi(day)
	if d < 1 || d > 31 {
		return span{}, false
	}
	if year == "" {
		return p.recentDate(mo, d)
	}
	y, _ := strconv.Atoi(year)
	return p.date(y, mo, d)
}
