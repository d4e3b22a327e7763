package merge

import (
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/lang"
)

// The offline judge's vocabulary. Everything here is general language and
// general software vocabulary: function words and fillers, negation and
// contrast markers, units of time, and the few slots whose values commonly
// change between sessions (time zones, encodings, indentation, languages,
// package managers, weekdays, currencies, date formats) with the nouns
// that name them. Nothing names a particular memory.

// phraseClass is what a dictionary phrase means to the analyser.
type phraseClass int

const (
	phValue       phraseClass = iota + 1 // a value of a slot (category, canonical value)
	phCue                                // a negation cue: what follows in the clause is negated
	phContrast                           // a contrast: what follows names a rejected alternative
	phContrastEnd                        // ends a contrast opened by "不是" / "not … but"
	phUnless                             // "without", "unless": cancels a negation in its clause
	phSyn                                // a synonym: replaced by its canonical word
	phPlain                              // a word that merely contains a cue ("特别"): kept as text
	phBound                              // an upper or lower bound: a value of the "bound" slot
	phBoundIfNum                         // a bound only when a number follows ("under 200 words")
	phKeep                               // a word that contains a function character but is content ("应用")
	phFiller                             // says when or how firmly, not what: "from now on", "从现在起"
	phLater                              // "以后": "from now on" opening a clause, else "after"
	phSlotNoun                           // names a slot ("时间", "编码"): not the subject when a value is given
)

type phrase struct {
	class phraseClass
	cat   string // phValue, phBound, phSlotNoun: the slot; phSyn: unused
	canon string // phValue, phBound: canonical value; phSyn: replacement text
}

// circumstantial slots describe when something happens, not what: a
// negation cue before them ("别在周五下午上线") negates the action, not the
// day, so their values never become rejected values through a cue.
var circumstantial = map[string]bool{"weekday": true, "daypart": true}

// values maps each slot to its canonical values and their spellings in
// English and Chinese.
var values = map[string]map[string][]string{
	"timezone": {
		"utc":        {"utc", "gmt", "utc+0", "utc+00:00", "gmt+0", "utc time", "utc 时间", "utc时间", "协调世界时", "世界标准时间", "格林尼治时间", "零时区"},
		"utc+8":      {"utc+8", "utc+08", "utc+08:00", "gmt+8", "beijing time", "china time", "china standard time", "asia/shanghai", "北京时间", "东八区", "中国时间", "北京时区"},
		"local":      {"local time", "local timezone", "local time zone", "本地时间", "当地时间", "本地时区"},
		"us-eastern": {"eastern time", "est", "edt", "america/new_york", "美东时间"},
		"us-pacific": {"pacific time", "pst", "pdt", "america/los_angeles", "美西时间"},
		"cet":        {"cet", "cest", "central european time", "europe/berlin", "europe/paris"},
		"utc+9":      {"jst", "tokyo time", "japan time", "asia/tokyo", "东京时间"},
	},
	"encoding": {
		"utf-8":        {"utf-8", "utf8", "utf 8"},
		"utf-8-sig":    {"utf-8-sig", "utf8-sig", "utf-8 with bom", "utf-8 bom", "带 bom 的 utf-8", "带bom的utf-8"},
		"gbk":          {"gbk"},
		"gb2312":       {"gb2312"},
		"gb18030":      {"gb18030"},
		"latin-1":      {"latin-1", "latin1", "iso-8859-1"},
		"ascii":        {"ascii"},
		"utf-16":       {"utf-16", "utf16"},
		"big5":         {"big5"},
		"shift_jis":    {"shift_jis", "shift-jis", "sjis"},
		"windows-1252": {"windows-1252", "cp1252"},
	},
	"indent": {
		"tab":   {"tab", "tabs", "tab character", "tab characters", "制表符"},
		"space": {"space", "spaces", "空格"},
	},
	"language": {
		"english":             {"english", "英文", "英语"},
		"chinese":             {"chinese", "simplified chinese", "中文", "汉语", "简体中文"},
		"traditional-chinese": {"traditional chinese", "繁体中文", "繁体"},
		"japanese":            {"japanese", "日文", "日语"},
		"en-us":               {"american", "american english", "us english", "美式英语"},
		"en-gb":               {"british", "british english", "uk english", "英式英语"},
	},
	"package-manager": {
		"npm": {"npm"}, "yarn": {"yarn"}, "pnpm": {"pnpm"}, "bun": {"bun"},
		"pip": {"pip"}, "poetry": {"poetry"}, "uv": {"uv"}, "conda": {"conda"}, "pipenv": {"pipenv"},
	},
	"weekday": {
		"monday":    {"monday", "mondays", "周一", "星期一", "礼拜一"},
		"tuesday":   {"tuesday", "tuesdays", "周二", "星期二", "礼拜二"},
		"wednesday": {"wednesday", "wednesdays", "周三", "星期三", "礼拜三"},
		"thursday":  {"thursday", "thursdays", "周四", "星期四", "礼拜四"},
		"friday":    {"friday", "fridays", "周五", "星期五", "礼拜五"},
		"saturday":  {"saturday", "saturdays", "周六", "星期六", "礼拜六"},
		"sunday":    {"sunday", "sundays", "周日", "周天", "星期日", "星期天", "礼拜天"},
		"weekend":   {"weekend", "weekends", "周末"},
	},
	"daypart": {
		"morning":   {"morning", "mornings", "上午", "早上", "早晨"},
		"afternoon": {"afternoon", "afternoons", "下午"},
		"evening":   {"evening", "evenings", "晚上", "傍晚"},
		"night":     {"night", "nights", "夜里", "夜间", "凌晨"},
		"noon":      {"noon", "midday", "中午"},
	},
	"currency": {
		"usd": {"usd", "us dollar", "us dollars", "dollar", "dollars", "美元", "美金"},
		"cny": {"cny", "rmb", "yuan", "renminbi", "人民币"},
		"eur": {"eur", "euro", "euros", "欧元"},
		"gbp": {"gbp", "pound sterling", "英镑"},
		"jpy": {"jpy", "yen", "日元"},
		"hkd": {"hkd", "港币", "港元"},
	},
	"date-format": {
		"iso8601": {"iso 8601", "iso8601", "iso-8601"},
		"rfc3339": {"rfc 3339", "rfc3339"},
		"unix":    {"unix timestamp", "unix timestamps", "unix time", "epoch seconds", "时间戳"},
	},
	"quotes": {
		"single": {"single quotes", "single quote", "单引号"},
		"double": {"double quotes", "double quote", "双引号"},
	},
	"line-ending": {
		"lf":   {"lf", "unix line endings"},
		"crlf": {"crlf", "windows line endings"},
	},
	"sort-order": {
		"ascending":  {"ascending", "升序"},
		"descending": {"descending", "降序", "倒序"},
	},
}

// Negation cues, in English and Chinese. "not" and "no" are handled here too;
// the analyser turns a clause-initial "not" ("…, not npm") into a contrast.
// A cue negates what follows it in its clause or, when nothing follows,
// what precedes it ("deploying on Fridays is forbidden", "周五上线是不允许的").
var cues = []string{
	"do not", "does not", "did not", "don't", "dont", "doesn't", "didn't", "never",
	"no longer", "avoid", "avoids", "avoiding", "must not", "mustn't", "should not",
	"shouldn't", "cannot", "can't", "can not", "not", "no", "disable", "disables",
	"disabled", "forbidden", "prohibited", "not allowed", "stop using", "stop doing", "stop sending", "quit using",
	"不要", "别", "不用", "禁止", "不再", "不能", "不得", "不可", "不许", "不准", "勿", "切勿",
	"千万别", "千万不要", "避免", "严禁", "无需", "无须", "不必", "不需要", "不应", "不应该",
	"不该", "从不", "绝不", "决不", "永远不要", "禁用", "不允许", "没必要",
}

var contrasts = []string{"instead of", "rather than", "but not", "而不是", "而非", "不是"}

var contrastEnds = []string{"而是"}

var unlesses = []string{"without", "unless", "except", "除非"}

// fillers say when a statement starts to hold or how firmly it is meant,
// never what it is about: a preference restated "from now on" is the same
// preference. Chinese ones are listed here rather than with cjkWeakWords so
// that they win over the content words they contain ("现在").
var fillers = []string{
	"from now on", "from here on", "from today on", "from today", "going forward",
	"moving forward", "in the future", "in future", "henceforth", "every time", "each time",
	"make sure to", "be sure to",
	"从现在起", "从现在开始", "从今天起", "从今天开始", "从今以后", "从此以后", "今后", "往后", "每次",
}

// later words mean "from now on" when they open a clause
// ("以后报表都用北京时间") and "after" anywhere else ("部署以后跑测试"),
// where the order of steps matters.
var later = []string{"以后"}

// slotNouns name a slot rather than a subject: in "report timestamps in
// UTC" or "报表里的时间都用 UTC" the timestamps are where the time zone
// shows, and the reports are what the preference is about. The analyser
// marks them; the comparison drops them when either statement gives a
// value of the slot, unless they are all a statement is about
// (withoutSlotNouns). Otherwise they are ordinary words ("response time",
// "响应时间"). English entries are matched on stems, so inflections count.
var slotNouns = map[string][]string{
	"timezone":        {"time", "times", "timestamp", "timestamps", "timezone", "datetime", "datetimes", "clock", "时间", "时区"},
	"encoding":        {"encoding", "encodings", "encode", "encoded", "charset", "charsets", "编码", "字符集"},
	"indent":          {"indent", "indents", "indented", "indenting", "indentation", "缩进"},
	"language":        {"language", "languages", "语言"},
	"date-format":     {"date", "dates", "format", "formats", "formatted", "formatting", "日期", "格式", "日期格式"},
	"currency":        {"currency", "currencies", "币种", "货币"},
	"line-ending":     {"newline", "newlines", "line ending", "line endings", "换行符"},
	"package-manager": {"package manager", "package managers", "包管理器"},
}

// timeUnits spell the units of a duration after a number, in English and
// Chinese, so that "30 s", "30 seconds" and "30 秒" are one value in one
// slot. Units written onto the number ("60s", "30ms") are read by the
// number pattern itself.
var timeUnits = map[string][]string{
	"ms":  {"ms", "millisecond", "milliseconds", "毫秒"},
	"s":   {"s", "sec", "secs", "second", "seconds", "秒", "秒钟"},
	"min": {"min", "mins", "minute", "minutes", "分钟"},
	"h":   {"h", "hr", "hrs", "hour", "hours", "小时"},
	"d":   {"d", "day", "days", "天"},
}

// plainWords contain a cue but are not negations ("识别" holds "别", "不得不"
// means "must"); listing them lets the longest match win.
var plainWords = []string{
	"特别", "区别", "识别", "分别", "类别", "级别", "别名", "个别", "告别", "差别", "性别",
	"辨别", "鉴别", "别的", "别人", "别处", "不准确", "不可靠", "不可用", "不得不", "不用说",
	"每周一次", "一周一次", "周一次",
	// common words that would otherwise split into a bound ("可以上线" is
	// "可以 上线", not "可 以上 线")
	"可以", "所以", "难以", "足以", "予以", "加以",
}

// keepWords are common Chinese words that contain a character the analyser
// otherwise drops as a function word (用, 要, 会, 应, 请, 试, 并, 有, 一, 地,
// 对, 向, 在, …). Without them "应用日志" (application logs) would read as
// "日志" (logs) and merge with it.
var keepWords = []string{
	"应用", "响应", "供应", "对应", "相应", "适应", "费用", "作用", "用法", "用量", "可用", "调用",
	"引用", "占用", "启用", "停用", "用例", "信用", "重要", "要点", "主要", "摘要", "概要", "要素",
	"会议", "会话", "会员", "机会", "社会", "请求", "申请", "测试", "调试", "考试", "试用", "重试",
	"合并", "并发", "并行", "带宽", "携带", "含量", "首先", "优先", "先进", "所有权", "所有者", "有效", "没有",
	"有时", "一致", "一样", "一般", "一起", "唯一", "地址", "本地", "地区", "获得", "得到", "对象",
	"对比", "方向", "向量", "其他", "尤其", "还原", "就绪", "首都", "接着", "个人", "个数", "是否",
	"存在", "现在", "在线", "了解", "参与", "及时", "目的", "以太网", "再次", "每日", "将来", "给定",
	"被动", "和解", "与会", "之间", "先后", "让步", "把握", "向导", "从库", "主从",
	"公里", "里程",
}

var bounds = map[string][]string{
	"max": {"at most", "up to", "no more than", "not more than", "maximum of", "maximum", "max",
		"最多", "至多", "不超过", "不多于", "以内", "之内", "以下"},
	"min": {"at least", "no less than", "not less than", "no fewer than", "minimum of", "minimum",
		"至少", "最少", "不少于", "不低于", "以上"},
}

// boundsIfNumber are bounds only before a number: "under 200 words", but
// "under /var/data".
var boundsIfNumber = map[string][]string{
	"max": {"under", "below", "less than", "fewer than", "少于", "低于"},
	"min": {"over", "above", "more than", "多于", "超过"},
}

// weakWords are English words that carry no subject or value: modal verbs,
// "the user prefers", generic verbs and nouns. They are matched after
// lang's stop words, on folded (not yet stemmed) words.
var weakWords = []string{
	"should", "must", "always", "please", "user", "users", "prefer", "prefers", "preferred",
	"want", "wants", "wanted", "like", "likes", "liked", "need", "needs", "needed", "wish",
	"wishes", "ensure", "sure", "make", "makes", "first", "then", "instead", "use", "uses",
	"used", "using", "utilise", "utilize", "try", "tries", "trying", "keep", "file", "files",
	"thing", "things", "way", "generally", "usually", "typically", "whenever", "remember",
	"note", "important", "actually", "able", "let", "lets", "currently", "now", "going",
	"ones", "etc", "it's", "get", "gets", "often", "normally",
	// light verbs: "give report timestamps in UTC" says what "use UTC for
	// report timestamps" says
	"give", "gives", "giving", "provide", "provides", "providing",
}

// keptWords are lang stop words that matter to a rule: the order of steps
// ("run the tests before deploying" is not "after deploying").
var keptWords = map[string]bool{"before": true, "after": true, "until": true}

// cjkWeak are Chinese function and filler words, removed before the text is
// split into characters.
var cjkWeakWords = []string{
	"用户", "希望", "要求", "偏好", "喜欢", "想要", "需要", "必须", "务必", "一定", "应该", "应当",
	"总是", "始终", "一律", "统一", "使用", "采用", "然后", "依次", "尝试", "包含", "含有", "带有",
	"形式", "进行", "一下", "里的", "中的", "里面", "改为", "改用", "改成", "改到", "设为", "设成",
	"设置为", "设置成", "设定为", "可以", "能够", "记得", "注意到", "所有", "全部",
	"而且", "并且", "或者", "以便", "以及", "另外", "同时",
	"请", "先", "再", "试", "含", "带", "用", "要", "每", "以", "会", "应", "将", "把", "被", "让",
	"给", "对", "从", "向", "的", "了", "是", "在", "和", "与", "及", "也", "就", "都", "而", "着",
	"或", "吗", "呢", "吧", "啊", "呀", "嘛", "哦", "这", "那", "之", "其", "我", "你", "他",
	"她", "它", "们", "个", "一", "有", "很", "还", "又", "并", "得", "地", "所", "里",
}

// synonyms fold common abbreviations and near-synonyms to one word. English
// entries are matched on folded words before stemming; Chinese entries are
// replaced in the text.
var synonyms = map[string]string{
	"db": "database", "dbs": "databases", "repo": "repository", "repos": "repositories",
	"prod": "production", "env": "environment", "envs": "environments", "config": "configuration",
	"cfg": "configuration", "conf": "configuration", "deps": "dependencies", "docs": "documentation",
	"doc": "documentation", "k8s": "kubernetes", "begin": "start", "begins": "start",
	"began": "start", "begun": "start", "starts": "start", "execute": "run", "executes": "run",
	"timezone": "timezone", "timezones": "timezone", "tz": "timezone", "msg": "message", "msgs": "messages",
	"pr": "pr", "prs": "pr", "mr": "pr",
	// irregular verb forms the Porter stemmer leaves apart
	"written": "write", "wrote": "write", "ran": "run", "sent": "send", "built": "build",
	"broke": "break", "broken": "break", "made": "make", "kept": "keep", "chose": "choose",
	"chosen": "choose", "gave": "give", "given": "give", "took": "take", "taken": "take",
	"found": "find", "ate": "eat", "drove": "drive", "driven": "drive", "shown": "show",
	"failing": "fail", "failed": "fail", "afterwards": "after", "afterward": "after",
}

// phraseSynonyms are multi-word or Chinese synonyms, replaced in the text.
var phraseSynonyms = map[string]string{
	"time zone": "timezone", "pull request": "pr", "merge request": "pr", "pull requests": "pr",
	"跑": "运行", "执行": "运行", "不然": "否则", "要不然": "否则", "之前": "前", "以前": "前",
	"之后": "后", "时候": "时", "prior to": "before",
}

// numberWords turn spelled-out small numbers into digits.
var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
	"twenty": "20", "thirty": "30", "fifty": "50", "hundred": "100",
}

// cjkUnits are measure words and units after a number; they name the
// number's slot ("500 条", "3 次").
var cjkUnits = []string{
	"分钟", "小时", "毫秒", "条", "次", "个", "位", "秒", "天", "周", "点", "字", "行", "列",
	"页", "项", "倍", "年", "月", "号", "日", "元", "人", "台", "步", "遍", "种", "分",
}

var (
	weakSet      = map[string]bool{}
	slotNounOf   = map[string]string{} // stem of an English slot noun → its slot
	unitOf       = map[string]string{} // folded time unit → canonical unit
	cjkTimeUnits []string              // the Chinese units of unitOf, longest first
	lexicon      = map[string]phrase{} // folded phrase → meaning
	phrases      phraseIndex           // the lexicon's phrases
	cjkWeak      phraseIndex           // cjkWeakWords
	cjkNumberRE  *regexp.Regexp
)

// phraseIndex finds dictionary phrases in text, leftmost first and longest
// first at each position. Phrases that start with an ASCII letter or digit
// match whole words only (like \b in a regexp); Chinese phrases match
// anywhere. It replaces one large regexp alternation, which Go runs far
// slower than a lookup by first character.
type phraseIndex map[rune][]string

func newPhraseIndex(ps []string) phraseIndex {
	idx := phraseIndex{}
	for _, p := range ps {
		r, _ := utf8.DecodeRuneInString(p)
		idx[r] = append(idx[r], p)
	}
	for _, list := range idx {
		sort.Slice(list, func(i, j int) bool {
			return len(list[i]) > len(list[j]) || len(list[i]) == len(list[j]) && list[i] < list[j]
		})
	}
	return idx
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// find calls fn for every non-overlapping phrase in s.
func (idx phraseIndex) find(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		matched := 0
		for _, p := range idx[r] {
			if !strings.HasPrefix(s[i:], p) {
				continue
			}
			e := i + len(p)
			if isWordByte(p[0]) && i > 0 && isWordByte(s[i-1]) || isWordByte(p[len(p)-1]) && e < len(s) && isWordByte(s[e]) {
				continue // inside a longer word
			}
			matched = len(p)
			break
		}
		if matched > 0 {
			fn(i, i+matched)
			i += matched
			continue
		}
		i += size
	}
}

func init() {
	for _, w := range weakWords {
		weakSet[w] = true
	}
	add := func(p string, ph phrase) {
		p = lang.Fold(p)
		if _, dup := lexicon[p]; !dup {
			lexicon[p] = ph
		}
	}
	// Order matters only for phrases listed twice; the first meaning wins.
	for _, p := range plainWords {
		add(p, phrase{class: phPlain})
	}
	for _, p := range keepWords {
		add(p, phrase{class: phKeep})
	}
	for kind, ps := range bounds {
		for _, p := range ps {
			add(p, phrase{class: phBound, cat: "bound", canon: kind})
		}
	}
	for kind, ps := range boundsIfNumber {
		for _, p := range ps {
			add(p, phrase{class: phBoundIfNum, cat: "bound", canon: kind})
		}
	}
	for cat, vs := range values {
		for canon, ps := range vs {
			for _, p := range ps {
				add(p, phrase{class: phValue, cat: cat, canon: canon})
			}
		}
	}
	for _, p := range contrasts {
		add(p, phrase{class: phContrast})
	}
	for _, p := range contrastEnds {
		add(p, phrase{class: phContrastEnd})
	}
	for _, p := range unlesses {
		add(p, phrase{class: phUnless})
	}
	for _, p := range cues {
		add(p, phrase{class: phCue})
	}
	for p, r := range phraseSynonyms {
		add(p, phrase{class: phSyn, canon: r})
	}
	for _, p := range fillers {
		add(p, phrase{class: phFiller})
	}
	for _, p := range later {
		add(p, phrase{class: phLater})
	}
	for slot, ps := range slotNouns {
		for _, p := range ps {
			if lang.HasCJK(p) || strings.Contains(p, " ") {
				add(p, phrase{class: phSlotNoun, cat: slot})
			} else {
				slotNounOf[lang.Stem(p)] = slot
			}
		}
	}
	for canon, us := range timeUnits {
		for _, u := range us {
			unitOf[u] = canon
			if lang.HasCJK(u) {
				cjkTimeUnits = append(cjkTimeUnits, u)
			}
		}
	}
	sort.Slice(cjkTimeUnits, func(i, j int) bool {
		a, b := cjkTimeUnits[i], cjkTimeUnits[j]
		return len(a) > len(b) || len(a) == len(b) && a < b
	})

	keys := make([]string, 0, len(lexicon))
	for k := range lexicon {
		keys = append(keys, k)
	}
	phrases = newPhraseIndex(keys)
	cjkWeak = newPhraseIndex(cjkWeakWords)

	cjkNumberRE = regexp.MustCompile(`([零一二两三四五六七八九十]+)(` + strings.Join(cjkUnits, "|") + `)`)
}

// cjkNumber converts a Chinese numeral below 100 ("三", "十五", "二十") to
// digits; ok is false for anything else.
func cjkNumber(s string) (string, bool) {
	digit := map[rune]int{'零': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	rs := []rune(s)
	itoa := func(n int) string {
		if n < 10 {
			return string(rune('0' + n))
		}
		return string(rune('0'+n/10)) + string(rune('0'+n%10))
	}
	switch {
	case len(rs) == 1 && rs[0] == '十':
		return "10", true
	case len(rs) == 1:
		d, ok := digit[rs[0]]
		return itoa(d), ok
	case len(rs) == 2 && rs[0] == '十':
		d, ok := digit[rs[1]]
		return itoa(10 + d), ok
	case len(rs) == 2 && rs[1] == '十':
		d, ok := digit[rs[0]]
		return itoa(10 * d), ok && d > 0
	case len(rs) == 3 && rs[1] == '十':
		a, ok1 := digit[rs[0]]
		b, ok2 := digit[rs[2]]
		return itoa(10*a + b), ok1 && ok2 && a > 0
	}
	return "", false
}
