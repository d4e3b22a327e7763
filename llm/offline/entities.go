package offline

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/memory"

	hlang "github.com/hindsight-memory/hindsight/lang"
)

// Entity rules. Each finds one sort of name; categories are ranked so that
// when there are more names than room, files and systems win over quoted
// words.
var (
	camelRE      = regexp.MustCompile(`\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z]+[A-Z]{2,}\b`)
	timezoneRE   = regexp.MustCompile(`(?i)\butc(?:\s?[+-]\s?\d{1,2}(?::?\d{2})?)?(?:\b|$)|\bgmt(?:\s?[+-]\s?\d{1,2})?\b|\b(?:asia|america|europe|africa|australia|pacific)/[a-z_]+\b|\bbeijing time\b|北京时间|东八区`)
	tzSpaceRE    = regexp.MustCompile(`\s*([+-])\s*`)
	tzAbbrevRE   = regexp.MustCompile(`\b(CST|PST|PDT|EST|EDT|CET|CEST|JST|IST)\b`)
	errorClassRE = regexp.MustCompile(`\b(\w+(?:Error|Exception))\b`)
	importRE     = regexp.MustCompile(`(?m)^\s*(?:import|from)\s+([A-Za-z_]\w*)`)
	pipRE        = regexp.MustCompile(`\b(?:pip3?|conda|npm|yarn|pnpm)\s+(?:install|add)\s+((?:\s*[A-Za-z][\w.\-]*(?:[=<>~!]=?[\w.*]+)?)+)`)
	identRE      = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+(?:\.[a-z_][a-z0-9_]*)?\b|\b[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\b`)
	quotedRE     = regexp.MustCompile("`([^`\\n]{2,40})`|\"([^\"\\n]{2,40})\"|“([^”\\n]{1,20})”|「([^」\\n]{1,20})」|《([^》\\n]{1,20})》|【([^】\\n]{1,20})】")
)

// knownTech are systems, products and libraries, matched as whole words
// regardless of case; knownCased are names that are also common words and
// only count when capitalised as names. Dictionary lookups keep entity
// extraction fast: a regular expression with a hundred alternatives costs
// more than the rest of the extractor.
var (
	knownTech = wordSet(`postgres postgresql mysql mariadb sqlite clickhouse milvus redis kafka rabbitmq
		elasticsearch opensearch mongodb snowflake bigquery redshift duckdb pyspark airflow dbt kubernetes k8s
		kubectl helm docker podman terraform ansible nginx grafana prometheus datadog sentry jenkins github gitlab
		bitbucket aws gcp azure gke eks aks s3 tableau metabase jira confluence ubuntu debian openai ollama vllm
		pandas numpy polars matplotlib seaborn plotly openpyxl xlsxwriter chardet sqlalchemy psycopg psycopg2
		clickhouse_connect pytest fastapi django pydantic node.js typescript golang`)
	knownTechPairs = wordSet(`google_sheets power_bi github_actions`)
	knownCased     = wordSet(`Excel Slack Spark Notion Go Rust Java Python Windows Linux macOS Sheets Superset Looker Temporal Flask Requests`)
	zhTerms        = strings.Fields(`周报 日报 月报 季报 年报 报表 北京时间 东八区 数据仓库 数仓 生产环境 测试环境 预发环境 工作表 柱状图 折线图 饼图 销售额 销售数据 中文字体 财务`)
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// words splits text into word tokens (letters, digits, '_', '.', '+'
// inside words, so "node.js" and "utf-8" stay whole).
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '-' || r == '+' || unicode.IsLetter(r) && !isHan(r) || unicode.IsDigit(r))
	})
}

// techNames finds the known systems and libraries in s.
func techNames(s string) []string {
	var out []string
	ws := words(s)
	for i, w := range ws {
		w = strings.Trim(w, ".-+")
		lw := strings.ToLower(w)
		switch {
		case knownTech[lw]:
			out = append(out, lw)
		case knownCased[w]:
			out = append(out, w)
		case i+1 < len(ws) && knownTechPairs[lw+"_"+strings.ToLower(strings.Trim(ws[i+1], ".-+"))]:
			out = append(out, lw+" "+strings.ToLower(strings.Trim(ws[i+1], ".-+")))
		}
	}
	return out
}

// fileExts are the extensions that make a token a file name.
var fileExts = wordSet(`csv tsv xlsx xls json jsonl ndjson parquet avro orc xml yaml yml toml ini cfg conf txt md log sql
	py ipynb go js ts java rs sh html pdf png jpg jpeg svg zip gz tar doc docx ppt pptx`)

// fileNames finds file names ("sales_2024.csv", "./out/chart.png" →
// "chart.png") in s, in order.
func fileNames(s string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '-' || r == '/' || r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	}) {
		if i := strings.LastIndexByte(tok, '/'); i >= 0 {
			tok = tok[i+1:]
		}
		tok = strings.TrimRight(tok, ".")
		if isFileName(tok) {
			out = append(out, tok)
		}
	}
	return out
}

func isFileName(tok string) bool {
	dot := strings.LastIndexByte(tok, '.')
	return dot > 0 && fileExts[strings.ToLower(tok[dot+1:])] && strings.Trim(tok[:dot], ".-_") != "" && !knownTech[strings.ToLower(tok)]
}

// knownEncodings are the character encodings worth naming.
var knownEncodings = wordSet(`utf-8 utf8 utf-8-sig utf_8 utf-16 utf16 utf-16le utf-16be gbk gb2312 gb18030 big5 latin-1 latin1
	ascii cp1252 cp936 shift_jis euc-kr euc-jp`)

func isEncoding(w string) bool {
	w = strings.ToLower(w)
	return knownEncodings[w] || strings.HasPrefix(w, "iso-8859-")
}

// encodings finds encoding names in s, in order.
func encodings(s string) []string {
	var out []string
	for _, w := range words(s) {
		if w = strings.Trim(w, ".-+"); isEncoding(w) {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// hasCamel reports whether s has a lower-case letter followed by an
// upper-case one (ClickHouse, PostgreSQL).
func hasCamel(s string) bool {
	for i := 1; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' && 'a' <= s[i-1] && s[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// hasUpperRun reports whether s has three upper-case letters in a row.
func hasUpperRun(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			if run++; run == 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

var stdlib = map[string]bool{
	"os": true, "sys": true, "re": true, "json": true, "time": true, "datetime": true, "io": true, "math": true,
	"typing": true, "collections": true, "itertools": true, "functools": true, "pathlib": true, "subprocess": true,
	"logging": true, "random": true, "string": true, "csv": true, "glob": true, "shutil": true, "tempfile": true,
	"as": true,
}

// Words an identifier rule would pick up that name nothing.
var notEntities = map[string]bool{
	"e.g": true, "i.e": true, "pre-upgrade": true, "re-run": true, "follow-up": true, "heads-up": true,
	"one-off": true, "built-in": true, "set-up": true, "read-only": true, "real-time": true,
}

// entityCollector gathers entities by category, keeping first-seen order
// inside each category.
type entityCollector struct {
	cats [][]string
	seen map[string]bool
}

const (
	catFile = iota
	catTech
	catLibrary
	catEncoding
	catTimezone
	catError
	catTool
	catIdent
	catQuoted
	catZH
	numCats
)

func newCollector() *entityCollector {
	return &entityCollector{cats: make([][]string, numCats), seen: map[string]bool{}}
}

func (c *entityCollector) add(cat int, name string) {
	n := memory.NormalizeEntity(name)
	if n == "" || len([]rune(n)) > 48 || c.seen[n] || notEntities[n] {
		return
	}
	c.seen[n] = true
	c.cats[cat] = append(c.cats[cat], n)
}

// text collects the names in free text. user says whether the text is the
// user's own (quoted words and identifiers are only taken from users:
// assistants and tools quote too much).
func (c *entityCollector) text(s string, user bool) {
	for _, f := range fileNames(s) {
		c.add(catFile, f)
	}
	for _, m := range techNames(s) {
		c.add(catTech, m)
	}
	// Cheap checks first: most texts have no CamelCase, time zone or
	// exception name, and the regular expressions cost far more than
	// the checks.
	if hasCamel(s) {
		for _, m := range camelRE.FindAllString(s, -1) {
			if !errorClassRE.MatchString(m) {
				c.add(catTech, m)
			}
		}
	}
	for _, e := range encodings(s) {
		c.add(catEncoding, e)
	}
	if f := hlang.FoldQuotes(s); strings.Contains(f, "utc") || strings.Contains(f, "gmt") || strings.Contains(f, "/") || strings.Contains(f, "beijing") || strings.Contains(f, "北京时间") || strings.Contains(f, "东八区") {
		for _, m := range timezoneRE.FindAllString(s, -1) {
			c.add(catTimezone, tzSpaceRE.ReplaceAllString(m, "$1"))
		}
	}
	if hasUpperRun(s) {
		for _, m := range tzAbbrevRE.FindAllString(s, -1) {
			c.add(catTimezone, m)
		}
	}
	if strings.Contains(s, "Error") || strings.Contains(s, "Exception") {
		for _, m := range errorClassRE.FindAllStringSubmatch(s, -1) {
			if m[1] != "Error" && m[1] != "Exception" {
				c.add(catError, m[1])
			}
		}
	}
	// Chinese domain nouns worth filing under: report kinds, time zones,
	// environments, chart kinds. Segmentation without a dictionary is
	// unreliable, so only these and quoted terms are taken.
	if hasHan(s) {
		for _, term := range zhTerms {
			if strings.Contains(s, term) {
				c.add(catZH, term)
			}
		}
	}
	if !user {
		return
	}
	if strings.ContainsAny(s, "_-.") {
		for _, m := range identRE.FindAllString(s, -1) {
			if !isFileName(m) && !isEncoding(m) {
				c.add(catIdent, m)
			}
		}
	}
	if strings.ContainsAny(s, "`\"“「《【") {
		for _, m := range quotedRE.FindAllStringSubmatch(s, -1) {
			for _, g := range m[1:] {
				if g != "" && len(strings.Fields(g)) <= 4 {
					c.add(catQuoted, g)
				}
			}
		}
	}
}

// code collects the names in a call's code or command: files, imported
// libraries, installed packages, known systems.
func (c *entityCollector) code(s string) {
	for _, f := range fileNames(s) {
		c.add(catFile, f)
	}
	for _, m := range importRE.FindAllStringSubmatch(s, -1) {
		if !stdlib[m[1]] {
			c.add(catLibrary, m[1])
		}
	}
	for _, m := range pipRE.FindAllStringSubmatch(s, -1) {
		for _, pkg := range strings.Fields(m[1]) {
			if name := strings.FieldsFunc(pkg, func(r rune) bool { return strings.ContainsRune("=<>~!", r) }); len(name) > 0 {
				c.add(catLibrary, name[0])
			}
		}
	}
	for _, m := range techNames(s) {
		c.add(catTech, m)
	}
	for _, e := range encodings(s) {
		c.add(catEncoding, e)
	}
}

// list returns up to limit entities, best categories first.
func (c *entityCollector) list(limit int) []string {
	var out []string
	for _, cat := range c.cats {
		for _, e := range cat {
			if len(out) == limit {
				return out
			}
			out = append(out, e)
		}
	}
	return out
}

// episodeEntities collects the entities of a session: from user and
// assistant messages, tool calls and error causes (not from tool output,
// which is data and mostly noise).
func episodeEntities(t memory.Transcript, acts []*action, limit int) []string {
	c := newCollector()
	for _, e := range t.Events {
		switch e.Role {
		case memory.RoleUser:
			c.text(e.Content, true)
		case memory.RoleAssistant:
			c.text(e.Content, false)
		}
	}
	for _, a := range acts {
		c.code(a.primary)
		if a.failed && !a.userReported {
			c.text(a.cause, false)
		}
	}
	for _, a := range acts {
		if a.tool != "tool" {
			c.add(catTool, a.tool)
		}
	}
	return c.list(limit)
}

// candidateEntities are the names a candidate's own text mentions, plus
// extra (a lesson's subject, then its program and tool). user says whether content is in the
// user's own words.
func candidateEntities(content, counter string, user bool, extra ...string) []string {
	c := newCollector()
	c.text(content, user)
	c.code(content)
	c.text(counter, false)
	for i, e := range extra {
		switch {
		case e == "" || e == "tool":
		case i == 0:
			c.add(catFile, e) // the subject comes first
		default:
			c.add(catTool, e)
		}
	}
	out := c.list(6)
	return slices.Clip(out)
}
