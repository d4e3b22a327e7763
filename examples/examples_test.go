package examples_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/examples"
	"github.com/hindsight-memory/hindsight/lang/inject"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
)

// want is what the offline extractor must distil from one example.
type want struct {
	taskType   string
	outcome    memory.Outcome
	candidates []memory.Candidate // Kind and a substring of Content (and of CounterExample, when set)
	absent     []string           // substrings no candidate may contain
	failures   int
}

var wants = map[string]want{
	"01_csv_import_gbk.json": {
		taskType: llm.TaskDataImport,
		outcome:  memory.OutcomeSuccess,
		candidates: []memory.Candidate{
			{Kind: memory.KindLesson, Content: "When reading sales_2024.csv (Chinese fields), use encoding='gbk'; encoding='utf-8' and encoding='utf-8-sig' failed with UnicodeDecodeError.", CounterExample: "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xb5"},
			{Kind: memory.KindPreference, Content: "Always give report timestamps in UTC."},
			{Kind: memory.KindRule, Content: "Never write into the analytics schema directly; load into staging first"},
			{Kind: memory.KindFact, Content: "The team's warehouse is ClickHouse 24.8."},
		},
		absent:   []string{"whitespace", "I'll always", "chardet"},
		failures: 2,
	},
	"02_weekly_report_zh.json": {
		taskType: llm.TaskReporting,
		outcome:  memory.OutcomeSuccess,
		candidates: []memory.Candidate{
			{Kind: memory.KindLesson, Content: "读取 weekly_sales.xlsx 之前先执行 `pip install openpyxl==3.1.2`；否则会报 ImportError。", CounterExample: "Missing optional dependency 'openpyxl'"},
			{Kind: memory.KindLesson, Content: "plt.rcParams['font.sans-serif']=['SimHei']", CounterExample: "图表里的中文全是方块"},
			{Kind: memory.KindPreference, Content: "报表里的时间都用UTC。"},
			{Kind: memory.KindRule, Content: "不要覆盖原来的 sheet，结果另存为新文件。"},
			// The fact and the rule it implies, as one memory.
			{Kind: memory.KindFact, Content: "团队用的是 Excel 2016，别用太新的函数。"},
		},
		absent:   []string{"PDF", "明白", "方块，不行"},
		failures: 2,
	},
	"03_report_timezone_change.json": {
		taskType: llm.TaskReporting,
		outcome:  memory.OutcomeSuccess,
		candidates: []memory.Candidate{
			{Kind: memory.KindLesson, Content: "When querying analytics.sales_2024, use order_time instead of ordered_at", CounterExample: "Missing columns: 'ordered_at'"},
			{Kind: memory.KindPreference, Content: "Reports should use Beijing time (UTC+8), not UTC."},
			// Why: a lasting fact about who reads the reports.
			{Kind: memory.KindPreference, Content: "The finance team reads these in Shanghai."},
		},
		absent:   []string{"as you asked before"},
		failures: 1,
	},
	"04_deploy_openai_messages.json": {
		taskType: llm.TaskDeployment,
		outcome:  memory.OutcomeSuccess,
		candidates: []memory.Candidate{
			{Kind: memory.KindLesson, Content: "When running `helm upgrade --install billing-api`, use --wait --timeout 10m", CounterExample: "UPGRADE FAILED"},
			{Kind: memory.KindRule, Content: "Always pass --wait --timeout 10m for billing-api"},
			{Kind: memory.KindRule, Content: "Never deploy to production on Fridays."},
		},
		absent:   []string{"Got it"},
		failures: 1,
	},
}

func TestEveryExampleDistils(t *testing.T) {
	samples := examples.All()
	if len(samples) < 3 {
		t.Fatalf("%d examples, want at least 3", len(samples))
	}
	for _, s := range samples {
		t.Run(s.Name, func(t *testing.T) {
			w, ok := wants[s.Name]
			if !ok {
				t.Fatalf("no expectations for %s: add them to wants", s.Name)
			}
			tr, err := memory.ParseTranscript(s.Data, nil)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if err := tr.Normalize(memory.DefaultTenant, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)); err != nil {
				t.Fatalf("normalize: %v", err)
			}
			ext, err := offline.NewExtractor().Extract(context.Background(), tr)
			if err != nil {
				t.Fatalf("extract: %v", err)
			}
			ep := ext.Episode
			if ep.Task == "" || ep.TaskType != w.taskType || ep.Outcome != w.outcome || len(ep.Failures) != w.failures {
				t.Errorf("episode: task %q type %q outcome %q failures %d; want type %q outcome %q failures %d",
					ep.Task, ep.TaskType, ep.Outcome, len(ep.Failures), w.taskType, w.outcome, w.failures)
			}
			if len(ep.Steps) == 0 || len(ep.Entities) == 0 {
				t.Errorf("episode has no steps or entities: %+v", ep)
			}
			for _, wc := range w.candidates {
				found := slices.ContainsFunc(ext.Candidates, func(c memory.Candidate) bool {
					// Preferences, rules and facts are one family: which of
					// them a statement is, is the classifier's call and the
					// merge compares them with each other.
					return slices.Contains(wc.Kind.Comparable(), c.Kind) && strings.Contains(c.Content, wc.Content) && strings.Contains(c.CounterExample, wc.CounterExample)
				})
				if !found {
					t.Errorf("missing %s %q (counter-example %q)", wc.Kind, wc.Content, wc.CounterExample)
				}
			}
			if len(ext.Candidates) != len(w.candidates) {
				t.Errorf("%d candidates, want %d", len(ext.Candidates), len(w.candidates))
			}
			eventIDs := map[string]memory.Role{}
			for _, e := range tr.Events {
				eventIDs[e.ID] = e.Role
			}
			for _, c := range ext.Candidates {
				t.Logf("%s: %s | %s", c.Kind, c.Content, c.CounterExample)
				for _, a := range w.absent {
					if strings.Contains(c.Content, a) {
						t.Errorf("candidate %q contains %q", c.Content, a)
					}
				}
				if len(c.Evidence) == 0 {
					t.Errorf("candidate %q has no evidence", c.Content)
				}
				cites := false
				for _, id := range c.Evidence {
					role, ok := eventIDs[id]
					if !ok {
						t.Errorf("candidate %q cites unknown event %s", c.Content, id)
					}
					cites = cites || role == memory.RoleUser
				}
				if c.Kind != memory.KindLesson && !cites {
					t.Errorf("%s %q does not cite a user message", c.Kind, c.Content)
				}
				if _, ilk := (inject.Detector{}).Screen(c.Content); ilk {
					t.Errorf("candidate %q reads as an injected instruction", c.Content)
				}
			}
		})
	}
}
