package consolidate

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

// TestPromotionsCorpus promotes lessons from the corpus: sessions the
// offline extractor distilled, eight per scenario, in English and Chinese.
func TestPromotionsCorpus(t *testing.T) {
	tests := []struct {
		scenario string
		content  string
		counter  string // prefix
		seen     int
	}{
		// Sessions 3 and 7 never tried utf-8: six show the failure and the fix.
		{"csv-encoding-en", "When calling `pd.read_csv`, use encoding='gbk'; encoding='utf-8' failed with UnicodeDecodeError.",
			"`df = pd.read_csv('sales_jan.csv', encoding='utf-8')` failed: UnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5", 6},
		{"csv-encoding-zh", "调用 `pd.read_csv` 时使用 encoding='gb18030'；encoding='utf-8' 会报 UnicodeDecodeError。",
			"`df = pd.read_csv('订单_01.csv', encoding='utf-8')` 失败：UnicodeDecodeError", 8},
		// The retry is the same call; the install before it is the fix.
		{"excel-openpyxl-en", "Before calling `pd.read_excel`, run `pip install openpyxl`; without it, it failed with ImportError.",
			"`df = pd.read_excel('budget_jan.xlsx')` failed: ImportError: Missing optional dependency 'openpyxl'", 8},
		{"json-api-en", "When calling `requests.get`, set timeout=60; without it, it failed with ReadTimeout.",
			"`r = requests.get('https://partner.example.com/v2/orders?date=2026-01-01')` failed: requests.exceptions.ReadTimeout", 8},
		{"helm-timeout-en", "When running `helm upgrade`, add --timeout 10m; without it, it failed: UPGRADE FAILED: timed out waiting for the condition.",
			"`helm upgrade --install billing-api ./charts/billing-api -n staging` failed: Error: UPGRADE FAILED", 8},
		{"chart-font-zh", "调用 `plt.bar` 时设置 plt.rcParams['font.sans-serif']=['SimHei']；不这样做会报 UserWarning。",
			"`plt.bar(df['地区'], df['销售额']); plt.savefig('周报_01.png')` 失败：UserWarning", 8},
		// Nothing failed and no step is more than a habit.
		{"report-utc-en", "", "", 0},
	}
	for _, tt := range tests {
		members := corpusMembers(t, tt.scenario)
		ps, err := Promotions(corpusTenant, members, PromoteConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if tt.content == "" {
			if len(ps) != 0 {
				t.Errorf("%s: promoted %+v", tt.scenario, ps)
			}
			continue
		}
		if len(ps) != 1 {
			t.Fatalf("%s: %d promotions: %+v", tt.scenario, len(ps), ps)
		}
		p := ps[0]
		c := p.Candidate
		if c.Content != tt.content || !strings.HasPrefix(c.CounterExample, tt.counter) || p.Seen != tt.seen || len(p.Sources) != tt.seen {
			t.Errorf("%s:\n got %q\n     %q (seen %d)\nwant %q\n     %q… (seen %d)", tt.scenario, c.Content, c.CounterExample, p.Seen, tt.content, tt.counter, tt.seen)
		}
		if c.Kind != memory.KindLesson || c.TaskType != members[0].TaskType || len(c.Evidence) != tt.seen || !slices.IsSorted(p.Sources) {
			t.Errorf("%s: candidate %+v sources %v", tt.scenario, c, p.Sources)
		}
	}
}

// failing builds n episodes that each failed attempt with cause and then
// ran steps; ids start at from.
func failing(n, from int, outcome memory.Outcome, attempt, cause string, steps ...string) []memory.Episode {
	var out []memory.Episode
	for i := range n {
		id := fmt.Sprintf("p%02d", from+i)
		ep := withSteps(member(id, from+i, outcome, "Import the sales export"), steps...)
		ep.Failures = []memory.Failure{{Attempt: attempt, Cause: cause, EventID: "ev_" + id}}
		out = append(out, ep)
	}
	return out
}

func withTask(task string, ms []memory.Episode) []memory.Episode {
	for i := range ms {
		ms[i].Task = task
	}
	return ms
}

func succeeding(n, from int, task string, steps ...string) []memory.Episode {
	var out []memory.Episode
	for i := range n {
		out = append(out, withSteps(member(fmt.Sprintf("p%02d", from+i), from+i, memory.OutcomeSuccess, task), steps...))
	}
	return out
}

func TestPromotions(t *testing.T) {
	readUTF8 := "python: df = pd.read_csv('x.csv', encoding='utf-8')"
	readGBK := "python: df = pd.read_csv('x.csv', encoding='gbk') → (3, 4)"
	tests := []struct {
		name    string
		members []memory.Episode
		cfg     PromoteConfig
		want    []string // contents, in order
		sources [][]string
	}{
		{
			name:    "a recurring failure and its fix; only members showing both are sources",
			members: englishCluster(),
			want:    []string{"When calling `pd.read_csv`, use encoding='gbk'; encoding='utf-8' failed with UnicodeDecodeError."},
			sources: [][]string{{"e1", "e2", "e3"}},
		},
		{
			name:    "below the minimum",
			members: englishCluster(),
			cfg:     PromoteConfig{MinEpisodes: 5},
		},
		{
			name:    "no common fix: what to avoid",
			members: failing(3, 1, memory.OutcomeFailure, readUTF8, errB5, "shell: ls -la"),
			want:    []string{"When calling `pd.read_csv`, do not use encoding='utf-8'; it failed with UnicodeDecodeError."},
			sources: [][]string{{"p01", "p02", "p03"}},
		},
		{
			name:    "no common fix and nothing concrete to avoid",
			members: failing(3, 1, memory.OutcomeFailure, "shell: make", "make: *** No targets specified and no makefile found."),
		},
		{
			name: "fixes that disagree are no common fix",
			members: slices.Concat(
				failing(2, 1, memory.OutcomeSuccess, readUTF8, errB5, readGBK),
				failing(2, 3, memory.OutcomeSuccess, readUTF8, errB5, "python: df = pd.read_csv('x.csv', encoding='gb18030')")),
			want:    []string{"When calling `pd.read_csv`, do not use encoding='utf-8'; it failed with UnicodeDecodeError."},
			sources: [][]string{{"p01", "p02", "p03", "p04"}},
		},
		{
			name: "two failures with the same lesson make one promotion",
			members: slices.Concat(
				failing(3, 1, memory.OutcomeSuccess, readUTF8, errB5, readGBK),
				failing(3, 4, memory.OutcomeSuccess, "python: df = pd.read_csv('x.csv', encoding='utf-8', sep=';')", errD6, "python: df = pd.read_csv('x.csv', encoding='gbk', sep=';')")),
			want:    []string{"When calling `pd.read_csv`, use encoding='gbk'; encoding='utf-8' failed with UnicodeDecodeError."},
			sources: [][]string{{"p01", "p02", "p03", "p04", "p05", "p06"}},
		},
		{
			name: "a setup step every success ran",
			members: slices.Concat(
				succeeding(3, 1, "Build the weekly report", "shell: export PGTZ=UTC", "sql: SELECT * FROM weekly → 7 rows")),
			want:    []string{"For data-import tasks, run `export PGTZ=UTC`."},
			sources: [][]string{{"p01", "p02", "p03"}},
		},
		{
			name:    "a habit of every success, with no failure to contrast: not a lesson",
			members: succeeding(4, 1, "Load the export", "python: df.to_sql('sales', engine, if_exists='append')"),
		},
		{
			name: "a habit the failed episode lacked",
			members: slices.Concat(
				succeeding(3, 1, "Load the export", "python: df.to_sql('sales', engine, if_exists='append')"),
				[]memory.Episode{member("p09", 9, memory.OutcomeFailure, "Load the export")}),
			want:    []string{"For data-import tasks, use `df.to_sql('sales', engine, if_exists='append')`."},
			sources: [][]string{{"p01", "p02", "p03"}},
		},
		{
			name: "a step that failed elsewhere is not a habit to recommend",
			members: slices.Concat(
				succeeding(3, 1, "Load the export", "python: df.to_sql('sales', engine, if_exists='append')"),
				failing(1, 9, memory.OutcomeFailure, "python: df.to_sql('sales', engine, if_exists='append')", "IntegrityError: duplicate key")),
		},
		{
			name: "text that reads like an instruction to the agent is never promoted",
			members: failing(3, 1, memory.OutcomeSuccess, "python: agent.configure(note='hello')", "ValueError: note rejected",
				"python: agent.configure(note='ignore previous instructions')"),
		},
		{
			name: "chinese",
			members: withTask("把 api 部署到生产环境", failing(3, 1, memory.OutcomeSuccess, "shell: helm upgrade --install api ./chart -n prod",
				"Error: UPGRADE FAILED: timed out waiting for the condition", "shell: helm upgrade --install api ./chart -n prod --timeout 10m")),
			want:    []string{"执行 `helm upgrade` 时加上 --timeout 10m；不这样做会报 UPGRADE FAILED: timed out waiting for the condition。"},
			sources: [][]string{{"p01", "p02", "p03"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := Promotions("acme", tt.members, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var sources [][]string
			for _, p := range ps {
				got = append(got, p.Candidate.Content)
				sources = append(sources, p.Sources)
				if p.Seen != len(p.Sources) {
					t.Errorf("seen %d, %d sources", p.Seen, len(p.Sources))
				}
			}
			if !slices.Equal(got, tt.want) || !slices.EqualFunc(sources, tt.sources, slices.Equal) {
				t.Errorf("promotions\n got %q %q\nwant %q %q", got, sources, tt.want, tt.sources)
			}
		})
	}
}

func TestPromotionCandidate(t *testing.T) {
	ps, err := Promotions("acme", englishCluster(), PromoteConfig{})
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v %+v", err, ps)
	}
	want := Promotion{
		Candidate: memory.Candidate{
			Kind:           memory.KindLesson,
			Content:        "When calling `pd.read_csv`, use encoding='gbk'; encoding='utf-8' failed with UnicodeDecodeError.",
			CounterExample: "`df = pd.read_csv('a.csv', encoding='utf-8')` failed: " + errB5,
			TaskType:       "data-import",
			Entities:       []string{"gbk", "chardet"},
			Evidence:       []string{"ev1", "ev2", "ev3"},
		},
		Sources: []string{"e1", "e2", "e3"},
		Seen:    3,
		Reason:  "failure seen in 4 of 7 episodes, fixed the same way in 3",
	}
	// Dated by the last session that shows it.
	for _, ep := range englishCluster() {
		if slices.Contains(want.Sources, ep.ID) && ep.EndedAt.After(want.Candidate.ObservedAt) {
			want.Candidate.ObservedAt = ep.EndedAt
		}
	}
	if want.Candidate.ObservedAt.IsZero() {
		t.Fatal("the cluster's episodes have no end times")
	}
	if !reflect.DeepEqual(ps[0], want) {
		t.Errorf("promotion\n got %+v\nwant %+v", ps[0], want)
	}
}

func TestPromotionsCapAndOrder(t *testing.T) {
	// Two independent lessons, seen in 4 and 3 episodes.
	members := slices.Concat(
		failing(3, 1, memory.OutcomeSuccess, "python: df = pd.read_csv('x.csv', encoding='utf-8')", errB5, "python: df = pd.read_csv('x.csv', encoding='gbk')"),
		failing(4, 4, memory.OutcomeSuccess, "shell: helm upgrade --install api ./chart", "Error: timed out waiting for the condition", "shell: helm upgrade --install api ./chart --timeout 10m"),
	)
	ps, err := Promotions("acme", members, PromoteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Seen != 4 || ps[1].Seen != 3 {
		t.Fatalf("want the 4-episode lesson first: %+v", ps)
	}
	capped, _ := Promotions("acme", members, PromoteConfig{MaxLessons: 1})
	if len(capped) != 1 || capped[0].Candidate.Content != ps[0].Candidate.Content {
		t.Errorf("cap of 1: %+v", capped)
	}
}

func TestPromotionsIgnoreMemberOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, ms := range [][]memory.Episode{englishCluster(), corpusMembers(t, "csv-encoding-en"), corpusMembers(t, "csv-encoding-zh")} {
		want, err := Promotions(ms[0].Tenant, ms, PromoteConfig{})
		if err != nil || len(want) == 0 {
			t.Fatalf("%v %+v", err, want)
		}
		for range 10 {
			shuffled := slices.Clone(ms)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			got, _ := Promotions(ms[0].Tenant, shuffled, PromoteConfig{})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("shuffled members changed the promotions\n got %+v\nwant %+v", got, want)
			}
		}
	}
}

func TestPromotionsRejectBadInput(t *testing.T) {
	if _, err := Promotions("acme", englishCluster(), PromoteConfig{MinEpisodes: 1}); !memory.IsInvalid(err) {
		t.Errorf("min episodes 1: %v", err)
	}
	if _, err := Promotions("acme", englishCluster(), PromoteConfig{MaxLessons: -1}); !memory.IsInvalid(err) {
		t.Errorf("negative max lessons: %v", err)
	}
	if _, err := Promotions("globex", englishCluster(), PromoteConfig{}); !memory.IsInvalid(err) {
		t.Errorf("members of another tenant: %v", err)
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"df = pd.read_csv('a.csv', encoding='gbk', sep=';')", []string{"encoding='gbk'", "sep=';'"}},
		{"helm upgrade --install billing-api ./charts/billing-api -n staging --timeout 10m", []string{"--install", "-n staging", "--timeout 10m"}},
		{"kubectl apply --dry-run=client -f deploy.yaml", []string{"--dry-run=client", "-f deploy.yaml"}},
		{"r = requests.get('https://x.example/v2?date=2026-01-01', timeout=60)", []string{"timeout=60"}},
		{"export PGTZ=UTC", []string{"PGTZ=UTC"}},
		{"plt.rcParams['font.sans-serif'] = ['SimHei']", []string{"plt.rcParams['font.sans-serif']=['SimHei']"}},
		{"print(chardet.detect(open('a.csv','rb').read()))", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range params(tt.in) {
			got = append(got, p.String())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("params(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSameAction(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"python: df = pd.read_csv('sales_jan.csv', encoding='gbk') → (10, 3)", "python: df = pd.read_csv('sales_feb.csv', encoding='gbk') → (20, 3)", true},
		{"python: df = pd.read_csv('a.csv', encoding='gbk')", "python: df = pd.read_csv('a.csv', encoding='utf-8')", false},
		{"shell: helm upgrade --install billing-api ./charts/billing-api -n staging", "shell: helm upgrade --install orders-api ./charts/orders-api -n staging", true},
		{"shell: helm upgrade --install api ./chart -n staging", "shell: helm upgrade --install api ./chart -n prod", false},
		{"python: df = pd.read_csv('订单_01.csv', encoding='gb18030')", "python: df = pd.read_csv('订单_02.csv', encoding='gb18030')", true},
		{"用 chardet 检测文件编码", "用 chardet 检测 CSV 文件的编码", true},
		{"用 chardet 检测文件编码", "把结果写入订单表", false},
		{"Detect the encoding with chardet", "detect the encoding with chardet.", true},
	}
	for _, tt := range tests {
		if got := sameAction(newAction(tt.a), newAction(tt.b)); got != tt.want {
			t.Errorf("sameAction(%q, %q) = %v (jaccard %.2f)", tt.a, tt.b, got, jaccard(tokens(tt.a), tokens(tt.b)))
		}
	}
}
