package consolidate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

var summaryNow = time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)

// member builds a live episode of tenant acme that ended days after day0
// and lasted an hour.
func member(id string, days int, outcome memory.Outcome, task string) memory.Episode {
	end := day0.Add(time.Duration(days) * 24 * time.Hour)
	return memory.Episode{
		ID: id, Tenant: "acme", SessionID: "s-" + id, UserID: "u1", Agent: "agent-" + id,
		Task: task, TaskType: "data-import", Outcome: outcome, Status: memory.EpisodeLive,
		StartedAt: end.Add(-time.Hour), EndedAt: end, EventCount: days + 10, CreatedAt: end,
	}
}

func withSteps(ep memory.Episode, steps ...string) memory.Episode { ep.Steps = steps; return ep }

func withFailures(ep memory.Episode, fs ...memory.Failure) memory.Episode {
	ep.Failures = fs
	return ep
}

func withFeedback(ep memory.Episode, fb ...string) memory.Episode { ep.Feedback = fb; return ep }

func withEntities(ep memory.Episode, es ...string) memory.Episode { ep.Entities = es; return ep }

func detect(f string) string {
	return fmt.Sprintf("python: chardet.detect(open('%s','rb').read()) → {'encoding': 'GB2312'}", f)
}

func readCSV(f, enc string) string {
	return fmt.Sprintf("python: df = pd.read_csv('%s', encoding='%s')", f, enc)
}

const errB5 = "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5 in position 0: invalid start byte"
const errD6 = "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xd6 in position 7: invalid continuation byte"

// englishCluster is seven CSV imports: five succeeded after detecting the
// encoding and reading with gbk, four first failed with utf-8.
func englishCluster() []memory.Episode {
	return []memory.Episode{
		withEntities(withFeedback(withFailures(withSteps(member("e1", 1, memory.OutcomeSuccess, "Import a.csv into the sales table"),
			detect("a.csv"), readCSV("a.csv", "gbk")+" → (10, 3)"),
			memory.Failure{Attempt: readCSV("a.csv", "utf-8"), Cause: errB5, EventID: "ev1"}),
			"Thanks, that works."), "chardet", "gbk", "a.csv"),
		withEntities(withFeedback(withFailures(withSteps(member("e2", 2, memory.OutcomeSuccess, "Import b.csv into the sales table"),
			detect("b.csv"), readCSV("b.csv", "gbk")+" → (20, 3)"),
			memory.Failure{Attempt: readCSV("b.csv", "utf-8"), Cause: errD6, EventID: "ev2"}),
			"thanks, that works"), "Chardet", "GBK", "b.csv"),
		withEntities(withFailures(withSteps(member("e3", 3, memory.OutcomeSuccess, "Load c.csv into the sales table"),
			readCSV("c.csv", "gbk")),
			memory.Failure{Attempt: readCSV("c.csv", "utf-8"), Cause: errB5, EventID: "ev3"}), "gbk"),
		withFeedback(withFailures(withSteps(member("e4", 4, memory.OutcomeFailure, "Import d.csv into the sales table"),
			detect("d.csv")),
			memory.Failure{Attempt: readCSV("d.csv", "utf-8"), Cause: errB5, EventID: "ev4"},
			memory.Failure{Attempt: readCSV("d.csv", "latin-1"), Cause: "the column names came out garbled"}),
			"The columns are garbled."),
		withSteps(member("e5", 5, memory.OutcomeSuccess, "Import e.csv into the sales table"),
			detect("e.csv"), readCSV("e.csv", "gbk"), "python: df.to_sql('sales', engine) → 5 rows"),
		withSteps(member("e6", 6, memory.OutcomeSuccess, "Import f.csv into the sales table"),
			detect("f.csv"), readCSV("f.csv", "gbk")),
		member("e7", 7, memory.OutcomeUnknown, "Import g.csv"),
	}
}

func chineseCluster() []memory.Episode {
	zh := func(id string, days int, o memory.Outcome, n int) memory.Episode {
		f := fmt.Sprintf("订单_%02d.csv", n)
		return withFailures(member(id, days, o, "把 "+f+" 导入数据库，字段都是中文。"),
			memory.Failure{Attempt: readCSV(f, "utf-8"), Cause: errB5})
	}
	return []memory.Episode{
		withFeedback(withSteps(zh("z1", 1, memory.OutcomeSuccess, 1), readCSV("订单_01.csv", "gb18030")+" → 读取成功"), "好了，谢谢！"),
		withFeedback(withSteps(zh("z2", 2, memory.OutcomeSuccess, 2), readCSV("订单_02.csv", "gb18030")+" → 读取成功"), "好了，谢谢"),
		withFeedback(zh("z3", 3, memory.OutcomeFailure, 3), "还是乱码。"),
	}
}

func memberIDs(ms []memory.Episode) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestSummarizeOffline(t *testing.T) {
	en, zh := englishCluster(), chineseCluster()
	tests := []struct {
		name    string
		members []memory.Episode
		want    memory.Episode
	}{
		{
			name:    "english",
			members: en,
			want: memory.Episode{
				ID: SummaryID("acme", memberIDs(en)), Tenant: "acme", UserID: "u1",
				Task:     "Import a.csv into the sales table",
				TaskType: "data-import",
				Entities: []string{"gbk", "chardet"},
				Steps: []string{
					"python: chardet.detect(open('a.csv','rb').read()) (5/7)",
					"python: df = pd.read_csv('a.csv', encoding='gbk') (5/7)",
				},
				// The most common cause wording (e1 and e3) stands for the group.
				Failures:  []memory.Failure{{Attempt: "python: df = pd.read_csv('a.csv', encoding='utf-8') (4/7)", Cause: errB5}},
				Outcome:   memory.OutcomeSuccess,
				Feedback:  []string{"outcomes: 5 success, 1 failure, 1 unknown; 2026-01-02 → 2026-01-08", "Thanks, that works. (2/7)"},
				StartedAt: day0.Add(24*time.Hour - time.Hour), EndedAt: day0.Add(7 * 24 * time.Hour),
				EventCount: 11 + 12 + 13 + 14 + 15 + 16 + 17, Status: memory.EpisodeSummary,
				SourceEpisodes: memberIDs(en), Extractor: OfflineModel, CreatedAt: summaryNow,
			},
		},
		{
			name:    "chinese",
			members: zh,
			want: memory.Episode{
				ID: SummaryID("acme", memberIDs(zh)), Tenant: "acme", UserID: "u1",
				Task:      "把 订单_01.csv 导入数据库，字段都是中文。",
				TaskType:  "data-import",
				Steps:     []string{"python: df = pd.read_csv('订单_01.csv', encoding='gb18030') (2/3)"},
				Failures:  []memory.Failure{{Attempt: "python: df = pd.read_csv('订单_01.csv', encoding='utf-8') (3/3)", Cause: errB5}},
				Outcome:   memory.OutcomeSuccess,
				Feedback:  []string{"结果：成功 2 次，失败 1 次；2026-01-02 → 2026-01-04", "好了，谢谢！ (2/3)"},
				StartedAt: day0.Add(23 * time.Hour), EndedAt: day0.Add(3 * 24 * time.Hour),
				EventCount: 11 + 12 + 13, Status: memory.EpisodeSummary,
				SourceEpisodes: memberIDs(zh), Extractor: OfflineModel, CreatedAt: summaryNow,
			},
		},
		{
			name:    "single member keeps its own steps",
			members: en[:1],
			want: memory.Episode{
				ID: SummaryID("acme", []string{"e1"}), Tenant: "acme", UserID: "u1", Agent: "agent-e1",
				Task: "Import a.csv into the sales table", TaskType: "data-import",
				Entities: []string{"chardet", "gbk", "a.csv"},
				Steps: []string{
					"python: chardet.detect(open('a.csv','rb').read()) (1/1)",
					"python: df = pd.read_csv('a.csv', encoding='gbk') (1/1)",
				},
				Failures:  []memory.Failure{{Attempt: "python: df = pd.read_csv('a.csv', encoding='utf-8') (1/1)", Cause: errB5}},
				Outcome:   memory.OutcomeSuccess,
				Feedback:  []string{"outcomes: 1 success; 2026-01-02", "Thanks, that works. (1/1)"},
				StartedAt: day0.Add(23 * time.Hour), EndedAt: day0.Add(24 * time.Hour),
				EventCount: 11, Status: memory.EpisodeSummary, SourceEpisodes: []string{"e1"},
				Extractor: OfflineModel, CreatedAt: summaryNow,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SummarizeOffline("acme", tt.members, summaryNow)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("summary\n got %+v\nwant %+v", got, tt.want)
			}
			if err := memory.ValidateEpisode("test", got); err != nil {
				t.Errorf("the summary would not be stored: %v", err)
			}
		})
	}
}

func TestSummarizeOfflineOutcomes(t *testing.T) {
	o := func(os ...memory.Outcome) []memory.Episode {
		var ms []memory.Episode
		for i, x := range os {
			ms = append(ms, member(fmt.Sprintf("m%d", i), i+1, x, "Deploy billing-api"))
		}
		return ms
	}
	S, P, F, U := memory.OutcomeSuccess, memory.OutcomePartial, memory.OutcomeFailure, memory.OutcomeUnknown
	tests := []struct {
		name    string
		members []memory.Episode
		want    memory.Outcome
		line    string
	}{
		{"all failures", o(F, F, F), F, "outcomes: 3 failure; 2026-01-02 → 2026-01-04"},
		{"majority success", o(S, F, S), S, "outcomes: 2 success, 1 failure; 2026-01-02 → 2026-01-04"},
		{"success and failure tie: mixed record", o(S, F), P, "outcomes: 1 success, 1 failure; 2026-01-02 → 2026-01-03"},
		{"partial majority", o(P, P, S), P, "outcomes: 1 success, 2 partial; 2026-01-02 → 2026-01-04"},
		{"failure and partial tie: the less favourable", o(F, P), F, "outcomes: 1 partial, 1 failure; 2026-01-02 → 2026-01-03"},
		{"unknown does not outvote a known outcome", o(U, U, S), S, "outcomes: 1 success, 2 unknown; 2026-01-02 → 2026-01-04"},
		{"all unknown", o(U, ""), U, "outcomes: 2 unknown; 2026-01-02 → 2026-01-03"},
	}
	for _, tt := range tests {
		got, err := SummarizeOffline("acme", tt.members, summaryNow)
		if err != nil {
			t.Fatal(err)
		}
		if got.Outcome != tt.want || got.Feedback[0] != tt.line {
			t.Errorf("%s: outcome %q, line %q; want %q, %q", tt.name, got.Outcome, got.Feedback[0], tt.want, tt.line)
		}
		if got.Steps != nil || got.Failures != nil {
			t.Errorf("%s: members without steps or failures gave %q %v", tt.name, got.Steps, got.Failures)
		}
	}
}

func TestSummarizeOfflineIgnoresMemberOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, ms := range [][]memory.Episode{englishCluster(), chineseCluster(), corpusMembers(t, "csv-encoding-en")} {
		want, err := SummarizeOffline("acme", ms, summaryNow)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			shuffled := slices.Clone(ms)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			got, err := SummarizeOffline("acme", shuffled, summaryNow)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("shuffled members changed the summary\n got %+v\nwant %+v", got, want)
			}
		}
	}
}

// corpusMembers are the corpus episodes of one scenario.
func corpusMembers(t testing.TB, scenario string) []memory.Episode {
	var out []memory.Episode
	for _, c := range buildCorpus(t, 8) {
		if c.scenario == scenario {
			out = append(out, c.ep)
		}
	}
	return out
}

// TestSummarizeOfflineCorpus summarises episodes the offline extractor
// distilled from real-looking sessions: results differ in every session
// (row counts, file names), and must still count as one step.
func TestSummarizeOfflineCorpus(t *testing.T) {
	tests := []struct {
		scenario string
		steps    []string // expected prefixes of the first steps
		failure  string
	}{
		{"helm-timeout-en", []string{
			"shell: helm upgrade --install billing-api ./charts/billing-api -n staging --timeout 10m (8/8)",
			"shell: kubectl rollout status deploy/billing-api -n staging (8/8)",
		}, "shell: helm upgrade --install billing-api ./charts/billing-api -n staging (8/8)"},
		{"json-api-en", []string{
			"python: r = requests.get('https://partner.example.com/v2/orders?date=2026-01-01', timeout=60) (8/8)",
		}, "python: r = requests.get('https://partner.example.com/v2/orders?date=2026-01-01') (8/8)"},
		// Session 4 ends with the user saying the totals are wrong, so its
		// to_sql is a failure, not a step; sessions 3 and 7 never tried
		// utf-8; every other one probes the encoding (chardet) and every
		// third one dumps the bytes.
		{"csv-encoding-en", []string{
			"python: df = pd.read_csv('sales_jan.csv', encoding='gbk') (8/8)",
			"python: df.to_sql('sales', engine, if_exists='append', index=False) (7/8)",
			"python: print(chardet.detect(open('sales_jan.csv','rb').read())) (4/8)",
			"shell: head -c 200 sales_feb.csv | xxd | head -3 (3/8)",
		}, "python: df = pd.read_csv('sales_jan.csv', encoding='utf-8') (6/8)"},
		{"chart-font-zh", []string{
			"python: plt.rcParams['font.sans-serif'] = ['SimHei']; plt.bar(df['地区'], df['销售额']); plt.savefig('周报_01.png') (8/8)",
		}, "python: plt.bar(df['地区'], df['销售额']); plt.savefig('周报_01.png') (8/8)"},
	}
	for _, tt := range tests {
		ep, err := SummarizeOffline(corpusTenant, corpusMembers(t, tt.scenario), summaryNow)
		if err != nil {
			t.Fatal(err)
		}
		if len(ep.Steps) < len(tt.steps) || !slices.Equal(ep.Steps[:len(tt.steps)], tt.steps) {
			t.Errorf("%s: steps\n got %q\nwant %q first", tt.scenario, ep.Steps, tt.steps)
		}
		if len(ep.Failures) == 0 || ep.Failures[0].Attempt != tt.failure {
			t.Errorf("%s: failures %+v, want first %q", tt.scenario, ep.Failures, tt.failure)
		}
	}
}

func TestSummarizeOfflineRejectsBadInput(t *testing.T) {
	good := englishCluster()
	other := good[1]
	other.Tenant = "globex"
	summary := good[1]
	summary.Status = memory.EpisodeSummary
	noID := good[1]
	noID.ID = ""
	tests := []struct {
		name    string
		tenant  string
		members []memory.Episode
		want    string
	}{
		{"no members", "acme", nil, "at least one"},
		{"bad tenant", "a b", good, "tenant"},
		{"other tenant", "acme", []memory.Episode{good[0], other}, `belongs to tenant "globex"`},
		{"summary member", "acme", []memory.Episode{good[0], summary}, "summarise its source episodes"},
		{"missing id", "acme", []memory.Episode{good[0], noID}, "episode id is required"},
		{"twice", "acme", []memory.Episode{good[0], good[0]}, "given twice"},
	}
	for _, tt := range tests {
		_, err := SummarizeOffline(tt.tenant, tt.members, summaryNow)
		if !memory.IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want EINVALID mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestSummaryID(t *testing.T) {
	a := SummaryID("acme", []string{"ep_2", "ep_1", "ep_3"})
	if b := SummaryID("acme", []string{"ep_3", "ep_1", "ep_2", "ep_1"}); a != b {
		t.Errorf("order or repeats changed the ID: %s vs %s", a, b)
	}
	if !strings.HasPrefix(a, "ep_sum_") || len(a) != len("ep_sum_")+24 {
		t.Errorf("ID %q", a)
	}
	for _, other := range []string{SummaryID("globex", []string{"ep_1", "ep_2", "ep_3"}), SummaryID("acme", []string{"ep_1", "ep_2"}), SummaryID("acme", []string{"ep_1", "ep_23"})} {
		if other == a {
			t.Errorf("different clusters share the ID %s", a)
		}
	}
}

func TestOfflineSummarizer(t *testing.T) {
	s, err := Offline{}.Summarize(context.Background(), "acme", englishCluster(), summaryNow)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := SummarizeOffline("acme", englishCluster(), summaryNow)
	if s.Model != OfflineModel || s.Fallback != "" || s.Usage != (memory.TokenUsage{}) || !reflect.DeepEqual(s.Episode, want) {
		t.Errorf("offline summarizer: %+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Offline{}).Summarize(ctx, "acme", englishCluster(), summaryNow); err == nil {
		t.Error("a cancelled context must stop the summarizer")
	}
}
