package offline

import (
	"regexp"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/memory"
)

// Entity rules. Each finds one sort of name; categories are ranked so that
// when there are more names than room, files and systems win over quoted
// words.
var (
	// Known systems, products and libraries, matched case-insensitively.
	knownTechRE = regexp.MustCompile(`(?i)\b(postgres(?:ql)?|mysql|mariadb|sqlite|clickhouse|milvus|redis|kafka|rabbitmq|elasticsearch|opensearch|mongodb|snowflake|bigquery|redshift|duckdb|pyspark|airflow|dbt|kubernetes|k8s|kubectl|helm|docker|podman|terraform|ansible|nginx|grafana|prometheus|datadog|sentry|jenkins|github actions|github|gitlab|bitbucket|aws|gcp|azure|gke|eks|aks|s3|google sheets|tableau|power bi|metabase|jira|confluence|ubuntu|debian|openai|ollama|vllm|pandas|numpy|polars|matplotlib|seaborn|plotly|openpyxl|xlsxwriter|chardet|sqlalchemy|psycopg2?|clickhouse_connect|pytest|fastapi|django|pydantic|node\.js|typescript|golang)\b`)
	// Names that are also common words only count when capitalised.
	knownCasedRE = regexp.MustCompile(`\b(Excel|Slack|Spark|Notion|Go|Rust|Java|Python|Windows|Linux|macOS|Sheets|Superset|Looker|Temporal|Flask|Requests)\b`)
	camelRE      = regexp.MustCompile(`\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z]+[A-Z]{2,}\b`)
	encodingRE   = regexp.MustCompile(`(?i)\b(utf-?8(?:-sig)?|utf-?16(?:-?[lb]e)?|gbk|gb2312|gb18030|big5|latin-?1|iso-8859-\d{1,2}|ascii|cp1252|cp936|shift_jis|euc-kr|euc-jp)\b`)
	timezoneRE   = regexp.MustCompile(`(?i)\butc(?:\s?[+-]\s?\d{1,2}(?::?\d{2})?)?(?:\b|$)|\bgmt(?:\s?[+-]\s?\d{1,2})?\b|\b(?:asia|america|europe|africa|australia|pacific)/[a-z_]+\b|\bbeijing time\b|北京时间|东八区`)
	tzSpaceRE    = regexp.MustCompile(`\s*([+-])\s*`)
	tzAbbrevRE   = regexp.MustCompile(`\b(CST|PST|PDT|EST|EDT|CET|CEST|JST|IST)\b`)
	errorClassRE = regexp.MustCompile(`\b(\w+(?:Error|Exception))\b`)
	importRE     = regexp.MustCompile(`(?m)^\s*(?:import|from)\s+([A-Za-z_]\w*)`)
	pipRE        = regexp.MustCompile(`\b(?:pip3?|conda|npm|yarn|pnpm)\s+(?:install|add)\s+((?:\s*[A-Za-z][\w.\-]*(?:[=<>~!]=?[\w.*]+)?)+)`)
	identRE      = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+(?:\.[a-z_][a-z0-9_]*)?\b|\b[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\b`)
	quotedRE     = regexp.MustCompile("`([^`\\n]{2,40})`|\"([^\"\\n]{2,40})\"|“([^”\\n]{1,20})”|「([^」\\n]{1,20})」|《([^》\\n]{1,20})》|【([^】\\n]{1,20})】")
	// Chinese domain nouns worth filing under: report kinds, time zones,
	// environments, chart kinds. Segmentation without a dictionary is
	// unreliable, so only these and quoted terms are taken.
	zhTermRE = regexp.MustCompile(`周报|日报|月报|季报|年报|报表|北京时间|东八区|数据仓库|数仓|生产环境|测试环境|预发环境|工作表|柱状图|折线图|饼图|销售额|销售数据|中文字体|财务`)
)

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
	for _, m := range fileRE.FindAllStringSubmatch(s, -1) {
		c.add(catFile, m[1])
	}
	for _, m := range knownTechRE.FindAllString(s, -1) {
		c.add(catTech, m)
	}
	for _, m := range knownCasedRE.FindAllString(s, -1) {
		c.add(catTech, m)
	}
	for _, m := range camelRE.FindAllString(s, -1) {
		if !errorClassRE.MatchString(m) {
			c.add(catTech, m)
		}
	}
	for _, m := range encodingRE.FindAllString(s, -1) {
		c.add(catEncoding, m)
	}
	for _, m := range timezoneRE.FindAllString(s, -1) {
		c.add(catTimezone, tzSpaceRE.ReplaceAllString(m, "$1"))
	}
	for _, m := range tzAbbrevRE.FindAllString(s, -1) {
		c.add(catTimezone, m)
	}
	for _, m := range errorClassRE.FindAllStringSubmatch(s, -1) {
		if m[1] != "Error" && m[1] != "Exception" {
			c.add(catError, m[1])
		}
	}
	for _, m := range zhTermRE.FindAllString(s, -1) {
		c.add(catZH, m)
	}
	if !user {
		return
	}
	for _, m := range identRE.FindAllString(s, -1) {
		if !fileRE.MatchString(" "+m) && !encodingRE.MatchString(m) {
			c.add(catIdent, m)
		}
	}
	for _, m := range quotedRE.FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			if g != "" && len(strings.Fields(g)) <= 4 {
				c.add(catQuoted, g)
			}
		}
	}
}

// code collects the names in a call's code or command: files, imported
// libraries, installed packages, known systems.
func (c *entityCollector) code(s string) {
	for _, m := range fileRE.FindAllStringSubmatch(s, -1) {
		c.add(catFile, m[1])
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
	for _, m := range knownTechRE.FindAllString(s, -1) {
		c.add(catTech, m)
	}
	for _, m := range encodingRE.FindAllString(s, -1) {
		c.add(catEncoding, m)
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
