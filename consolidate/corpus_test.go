package consolidate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
)

// The corpus: realistic episodes distilled by the real offline extractor
// from generated sessions. Each scenario is one kind of task, instantiated
// with different files, months, phrasings and detours, in English and in
// Chinese; consolidation should group the instances of a scenario and keep
// scenarios apart.

const corpusTenant = "acme"

var corpusStart = time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)

func cUser(s string) memory.Event { return memory.Event{Role: memory.RoleUser, Content: s} }

func cCall(tool, args, result, errText string) memory.Event {
	return memory.Event{Role: memory.RoleTool, ToolName: tool, ToolArgs: args, ToolResult: result, Error: errText}
}

func cCode(src string) string {
	b, _ := json.Marshal(map[string]string{"code": src})
	return string(b)
}

func cCommand(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

const cDecodeErr = "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nUnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5 in position 0: invalid start byte"

// scenario builds the events of instance i.
type scenario struct {
	name   string
	events func(i int) []memory.Event
}

var months = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

var corpusScenarios = []scenario{
	{"csv-encoding-en", func(i int) []memory.Event {
		f := fmt.Sprintf("sales_%s.csv", months[i%12])
		asks := []string{
			"Import %s into the sales table. It has Chinese column names.",
			"Please load %s into the warehouse; the columns are in Chinese.",
			"Can you parse %s and load it into the sales table? Chinese column names again.",
		}
		ev := []memory.Event{cUser(fmt.Sprintf(asks[i%3], f))}
		if i%4 != 3 {
			ev = append(ev, cCall("python", cCode(fmt.Sprintf("df = pd.read_csv('%s', encoding='utf-8')", f)), "", cDecodeErr))
		}
		if i%2 == 0 {
			ev = append(ev, cCall("python", cCode(fmt.Sprintf("import chardet\nprint(chardet.detect(open('%s','rb').read()))", f)), "{'encoding': 'GB2312'}", ""))
		}
		if i%3 == 1 {
			ev = append(ev, cCall("shell", cCommand("head -c 200 "+f+" | xxd | head -3"), "00000000: b5a5 bcdb 2cca fdc1 bf2c", ""))
		}
		ev = append(ev,
			cCall("python", cCode(fmt.Sprintf("df = pd.read_csv('%s', encoding='gbk')", f)), fmt.Sprintf("(%d, 6)", 1000+i*37), ""),
			cCall("python", cCode("df.to_sql('sales', engine, if_exists='append', index=False)"), fmt.Sprintf("%d rows", 1000+i*37), ""),
		)
		if i%5 == 4 {
			return append(ev, cUser("The totals are still wrong, it doesn't work."))
		}
		return append(ev, cUser("Thanks, that works."))
	}},
	{"excel-openpyxl-en", func(i int) []memory.Event {
		f := fmt.Sprintf("budget_%s.xlsx", months[i%12])
		return []memory.Event{
			cUser(fmt.Sprintf("Read %s and give me the totals per department.", f)),
			cCall("python", cCode(fmt.Sprintf("df = pd.read_excel('%s')", f)), "", "ImportError: Missing optional dependency 'openpyxl'.  Use pip or conda to install openpyxl."),
			cCall("shell", cCommand("pip install openpyxl"), "Successfully installed openpyxl-3.1.2", ""),
			cCall("python", cCode(fmt.Sprintf("df = pd.read_excel('%s')", f)), "(84, 12)", ""),
			cCall("python", cCode("df.groupby('department')['amount'].sum()"), "sales 1200\nops 800", ""),
			cUser("Great, thanks!"),
		}
	}},
	{"json-api-en", func(i int) []memory.Event {
		day := fmt.Sprintf("2026-01-%02d", i%28+1)
		ev := []memory.Event{
			cUser(fmt.Sprintf("Pull the orders for %s from the partner API and load them into the orders table.", day)),
			cCall("python", cCode(fmt.Sprintf("r = requests.get('https://partner.example.com/v2/orders?date=%s')", day)), "", "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='partner.example.com', port=443): Read timed out. (read timeout=5)"),
			cCall("python", cCode(fmt.Sprintf("r = requests.get('https://partner.example.com/v2/orders?date=%s', timeout=60)", day)), "<Response [200]>", ""),
			cCall("python", cCode("rows = r.json()['orders']; len(rows)"), fmt.Sprint(200+i), ""),
			cCall("sql", `{"query":"INSERT INTO orders SELECT * FROM staging_orders"}`, "ok", ""),
		}
		if i%3 == 2 {
			ev = append(ev, cCall("python", cCode("df = pd.json_normalize(rows)"), "(212, 9)", ""))
		}
		return append(ev, cUser("Looks good."))
	}},
	{"report-utc-en", func(i int) []memory.Event {
		m := months[i%12]
		return []memory.Event{
			cUser(fmt.Sprintf("Build the monthly revenue report for %s, timestamps in UTC.", m)),
			cCall("sql", fmt.Sprintf(`{"query":"SELECT toStartOfDay(ts, 'UTC') AS day, sum(amount) FROM revenue WHERE month = '%s' GROUP BY day"}`, m), "31 rows", ""),
			cCall("python", cCode(fmt.Sprintf("df.to_excel('revenue_%s.xlsx', index=False)", m)), "written", ""),
			cUser("Thanks, perfect."),
		}
	}},
	{"helm-timeout-en", func(i int) []memory.Event {
		svc := []string{"billing-api", "orders-api", "auth-api"}[i%3]
		ev := []memory.Event{
			cUser(fmt.Sprintf("Deploy %s version 2.%d to staging with helm.", svc, i)),
			cCall("shell", cCommand(fmt.Sprintf("helm upgrade --install %s ./charts/%s -n staging", svc, svc)), "", "Error: UPGRADE FAILED: timed out waiting for the condition"),
			cCall("shell", cCommand(fmt.Sprintf("helm upgrade --install %s ./charts/%s -n staging --timeout 10m", svc, svc)), "Release \""+svc+"\" has been upgraded. Happy Helming!", ""),
			cCall("shell", cCommand(fmt.Sprintf("kubectl rollout status deploy/%s -n staging", svc)), "successfully rolled out", ""),
		}
		if i%2 == 1 {
			ev = append(ev, cCall("shell", cCommand(fmt.Sprintf("kubectl get pods -n staging -l app=%s", svc)), "3/3 Running", ""))
		}
		return append(ev, cUser("Deployed, thanks."))
	}},
	{"csv-encoding-zh", func(i int) []memory.Event {
		f := fmt.Sprintf("订单_%02d.csv", i%12+1)
		asks := []string{
			"把 %s 导入数据库，字段都是中文。",
			"帮我把 %s 导入到订单表，列名是中文的。",
			"请把 %s 加载到数据仓库，表头是中文。",
		}
		ev := []memory.Event{cUser(fmt.Sprintf(asks[i%3], f))}
		ev = append(ev, cCall("python", cCode(fmt.Sprintf("df = pd.read_csv('%s', encoding='utf-8')", f)), "", cDecodeErr))
		if i%2 == 1 {
			ev = append(ev, cCall("python", cCode(fmt.Sprintf("import chardet\nprint(chardet.detect(open('%s','rb').read()))", f)), "{'encoding': 'GB18030'}", ""))
		}
		ev = append(ev,
			cCall("python", cCode(fmt.Sprintf("df = pd.read_csv('%s', encoding='gb18030')", f)), "读取成功", ""),
			cCall("python", cCode("df.to_sql('orders', engine, if_exists='append', index=False)"), fmt.Sprintf("写入 %d 行", 500+i*11), ""),
			cUser("好了，谢谢！"),
		)
		return ev
	}},
	{"chart-font-zh", func(i int) []memory.Event {
		f := fmt.Sprintf("周报_%02d.png", i%12+1)
		return []memory.Event{
			cUser(fmt.Sprintf("生成第 %d 周的销售周报图表，保存成 %s。", i+1, f)),
			cCall("python", cCode(fmt.Sprintf("plt.bar(df['地区'], df['销售额']); plt.savefig('%s')", f)), "", "UserWarning: Glyph 38144 missing from current font."),
			cUser("图表里的中文是方块，乱码了。"),
			cCall("python", cCode(fmt.Sprintf("plt.rcParams['font.sans-serif'] = ['SimHei']; plt.bar(df['地区'], df['销售额']); plt.savefig('%s')", f)), "saved", ""),
			cUser("可以了，谢谢。"),
		}
	}},
}

// corpusEpisode is an episode with the scenario it was generated from.
type corpusEpisode struct {
	scenario string
	ep       memory.Episode
}

var corpusCache = struct {
	sync.Mutex
	byN map[int][]corpusEpisode
}{byN: map[int][]corpusEpisode{}}

// buildCorpus distils perScenario sessions of every scenario with the
// offline extractor, interleaving scenarios in time, one session a day.
// The result is shared between tests: treat it as read-only.
func buildCorpus(t testing.TB, perScenario int) []corpusEpisode {
	t.Helper()
	corpusCache.Lock()
	defer corpusCache.Unlock()
	if c, ok := corpusCache.byN[perScenario]; ok {
		return slices.Clone(c)
	}
	x := offline.NewExtractor()
	var out []corpusEpisode
	n := 0
	for i := 0; i < perScenario; i++ {
		for _, sc := range corpusScenarios {
			start := corpusStart.Add(time.Duration(n) * 24 * time.Hour)
			n++
			tr := memory.Transcript{
				SessionID: fmt.Sprintf("%s-%02d", sc.name, i),
				Tenant:    corpusTenant,
				StartedAt: start,
				EndedAt:   start.Add(20 * time.Minute),
				Events:    sc.events(i),
			}
			if err := tr.Normalize(corpusTenant, start); err != nil {
				t.Fatalf("%s: %v", tr.SessionID, err)
			}
			ext, err := x.Extract(context.Background(), tr)
			if err != nil {
				t.Fatalf("%s: extract: %v", tr.SessionID, err)
			}
			ep := ext.Episode
			ep.ID = memory.EpisodeID(tr.Tenant, tr.SessionID)
			ep.Status = memory.EpisodeLive
			ep.CreatedAt = ep.EndedAt
			out = append(out, corpusEpisode{scenario: sc.name, ep: ep})
		}
	}
	corpusCache.byN[perScenario] = out
	return slices.Clone(out)
}

// corpusItems embeds the corpus with the offline embedder, as the
// episodes collection stores it (memory.EpisodeEmbedText).
func corpusItems(t testing.TB, corpus []corpusEpisode) []Item {
	t.Helper()
	texts := make([]string, len(corpus))
	for i, c := range corpus {
		texts[i] = memory.EpisodeEmbedText(c.ep)
	}
	vecs, err := offline.NewEmbedder(offline.DefaultDim).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	items := make([]Item, len(corpus))
	for i, c := range corpus {
		items[i] = Item{Episode: c.ep, Vector: vecs[i]}
	}
	return items
}
