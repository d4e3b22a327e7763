package merge

import (
	"context"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/internal/memtest"
	"github.com/hindsight-memory/hindsight/memory"
)

// TestOfflineRelate pins down the rules on cases built to break them: the
// wording of negation and contrast in both languages, words that contain a
// cue, width and case, numbers and names. None of these are in the
// labelled set.
func TestOfflineRelate(t *testing.T) {
	cases := []struct {
		existing, candidate string
		want                memory.Verdict
		reason              string // a substring the reason must contain
	}{
		// duplicates
		{"报表用ＵＴＣ时间。", "报表用 UTC 时间", memory.VerdictDuplicate, "same"},
		{"Never deploy without running the tests.", "Run the tests when deploying.", memory.VerdictDuplicate, "every term"},
		{"Don't log secrets; mask them.", "Do not log secrets — mask them.", memory.VerdictDuplicate, ""},
		{"Use pnpm, not npm.", "Use pnpm instead of npm.", memory.VerdictDuplicate, ""},
		{"周五下午别上线。", "周五下午不要上线。", memory.VerdictDuplicate, ""},
		{"Retry the export API up to 3 times with a 2 s backoff.", "Retry the export API up to three times.", memory.VerdictDuplicate, "adds nothing"},

		// refinements add concrete specifics
		{"Retry the export API.", "Retry the export API up to 3 times.", memory.VerdictRefines, "3"},
		{"Build the image in CI.", "Build the image in CI with --pull.", memory.VerdictRefines, "--pull"},
		{"导出报表用 UTC 时间。", "导出报表用 UTC 时间，格式 YYYY-MM-DD。", memory.VerdictRefines, "yyyy-mm-dd"},

		// conflicts: values, polarity, rejection
		{"Use port 8080 for the API.", "Use port 9090 for the API.", memory.VerdictConflicts, "8080 vs 9090"},
		{"Enable HTTP/2 on the gateway.", "Disable HTTP/2 on the gateway.", memory.VerdictConflicts, "opposite polarity"},
		{"Always answer in English.", "Never answer in English.", memory.VerdictConflicts, "english"},
		{"Summaries must be at most 100 words.", "Summaries must be at least 100 words.", memory.VerdictConflicts, "bound"},
		{"导出报表用 utf-8-sig 编码。", "导出报表不要用 utf-8-sig 编码，用 gbk。", memory.VerdictConflicts, "encoding"},
		{"Use tabs in Go files.", "Use spaces in Go files, not tabs.", memory.VerdictConflicts, "indent"},
		{"Timestamps in exports use local time.", "Timestamps in exports use UTC, not local time.", memory.VerdictConflicts, "timezone"},
		// a change of mind puts a name of the same shape in place of
		// another: "eu-west-1" and "eu-central-1" are names, and "switch
		// the default region to" announces the change
		{"The team's default AWS region for everything is eu-west-1.", "Switch the default region to eu-central-1 (Frankfurt).", memory.VerdictConflicts, "changes eu-west-1 to eu-central-1"},
		{"The default region is eu-west-1.", "The default region is eu-central-1 for the new cluster.", memory.VerdictDistinct, "different names"},

		// distinct: when unsure, never merge
		{"应用日志用 UTC 时间。", "日志用 UTC 时间。", memory.VerdictDistinct, "broader"},
		{"日志用 UTC 时间。", "应用日志用 UTC 时间。", memory.VerdictDistinct, "only adds words"},
		{"Run database migrations before deploying the API.", "Run database migrations before deploying the API to production.", memory.VerdictDistinct, "only adds words"},
		{"Reports for the finance team use UTC.", "Reports use UTC.", memory.VerdictDistinct, "broader"},
		{"Never push to main; open a PR.", "Open a PR.", memory.VerdictDistinct, ""},
		{"The user likes spicy food.", "The user dislikes spicy food.", memory.VerdictDistinct, ""},
		{"Use yarn, not npm.", "Use npm, not yarn.", memory.VerdictDistinct, ""},
		{"识别编码时先用 chardet。", "识别编码时先用 chardet，不要靠文件扩展名。", memory.VerdictDistinct, ""},
		{"每周一发周报。", "每周一次发周报。", memory.VerdictDistinct, ""},
		{"Import orders.csv with gbk.", "Import customers.csv with utf-8.", memory.VerdictDistinct, "different names"},
		{"Read data_2024.csv with gbk.", "Read data_2025.csv with gbk.", memory.VerdictDistinct, "different names"},

		// when a rule applies is scope, not a parameter
		{"周五不要上线。", "周五下午不要上线。", memory.VerdictDistinct, ""},
		{"周五下午不要上线。", "周五不要上线。", memory.VerdictDistinct, "broader"},
		{"Always run database migrations before deploying the API.", "Never run database migrations on Fridays.", memory.VerdictDistinct, ""},
		{"Never deploy to production on Fridays.", "Deploy to production only during the maintenance window, Tuesdays 02:00-04:00 UTC.", memory.VerdictDistinct, ""},
		{"Send the weekly report on Mondays.", "Send the weekly report on Fridays.", memory.VerdictConflicts, "weekday"},

		// fillers, light verbs and clause-opening 以后 say nothing about
		// the subject; 以后 inside a clause means "after"
		{"Please give invoice totals in EUR.", "Invoice totals should always be in EUR.", memory.VerdictDuplicate, "every term"},
		{"从今天开始，周报用中文写。", "周报用中文写。", memory.VerdictDuplicate, "every term"},
		{"以后日志用北京时间。", "日志用北京时间。", memory.VerdictDuplicate, "every term"},
		{"部署以后跑冒烟测试。", "部署前跑冒烟测试。", memory.VerdictDistinct, "different subjects"},
		{"Back up the database before migrating.", "Back up the database after migrating.", memory.VerdictDistinct, "different subjects"},

		// a word naming a slot is not the subject when a value is given,
		// unless it is all the statement is about
		{"Log timestamps are in UTC.", "Logs should use UTC.", memory.VerdictDuplicate, "every term"},
		{"Detect the file encoding before importing.", "Detect the file encoding before importing: try utf-8-sig, then gbk.", memory.VerdictRefines, "utf-8-sig"},
		{"日期格式用 DD/MM/YYYY。", "日期格式用 YYYY-MM-DD。", memory.VerdictConflicts, "same subject \"日期格式\""},
		{"Response time must stay under 200 ms.", "Response time must stay under 500 ms.", memory.VerdictConflicts, "same subject \"response time stay\""},

		// units of time are part of the value, in either language
		{"Set the export timeout to 30 s.", "Set the export timeout to 30 seconds.", memory.VerdictDuplicate, "every term"},
		{"导出超时设为 30 秒。", "导出超时设成 60 秒。", memory.VerdictConflicts, "duration in s differs"},

		// a cue that ends its clause negates what precedes it; "without"
		// negates what follows, and cancels another cue
		{"Deploying on Fridays is forbidden.", "Deploy on Fridays.", memory.VerdictConflicts, "negates \"deploying\" (\"forbidden\")"},
		{"周五上线是不允许的。", "周五不要上线。", memory.VerdictDuplicate, "every term"},
		{"Never run migrations without a backup.", "Run migrations without a backup.", memory.VerdictConflicts, "the candidate negates \"backup\""},
		{"Deploying without tests is forbidden.", "Deploy without tests.", memory.VerdictConflicts, "the candidate negates \"tests\""},

		// one subject word more may be the whole difference: a narrower
		// subject with another value is not a conflict the rules can vouch for
		{"报表用 UTC 时间。", "销售报表用北京时间。", memory.VerdictDistinct, "not clearly about the same subject (\"报表\" vs \"销售报表\")"},
		{"Reports use UTC.", "Store reports in Beijing time.", memory.VerdictDistinct, "not clearly about the same subject"},

		// compatible date formats do not disagree
		{"Dates in exports use YYYY-MM-DD.", "Dates in exports use ISO 8601.", memory.VerdictDistinct, "each says"},
		{"报表日期用 YYYY-MM-DD。", "报表日期用 YYYY-MM-DD HH:mm。", memory.VerdictDistinct, "each says"},
	}
	j := NewOfflineJudge(OfflineOptions{})
	for _, c := range cases {
		got, reason := j.Relate(c.existing, c.candidate)
		if got != c.want || !strings.Contains(strings.ToLower(reason), strings.ToLower(c.reason)) {
			t.Errorf("%q → %q: got %s (%s), want %s with %q", c.existing, c.candidate, got, reason, c.want, c.reason)
		}
	}
}

// TestOfflineRelateSeedScenario is the seeds' core scenario ("以后所有报表都
// 用 UTC 时间", later changed to 北京时间) as agents phrase it. The
// cross-language row may stay distinct: the judge has no bilingual
// vocabulary, and when unsure it does not merge.
func TestOfflineRelateSeedScenario(t *testing.T) {
	cases := []struct {
		existing, candidate string
		want                memory.Verdict
		reason              string
	}{
		{"Always give report timestamps in UTC.", "Reports should use Beijing time (UTC+8), not UTC.", memory.VerdictConflicts, `same subject "report", timezone differs: utc vs beijing time`},
		{"报表里的时间都用UTC。", "以后报表都用北京时间。", memory.VerdictConflicts, `same subject "报表", timezone differs: utc vs 北京时间`},
		{"报表里的时间都用UTC。", "Reports should use Beijing time (UTC+8), not UTC.", memory.VerdictDistinct, `not clearly about the same subject ("报表" vs "reports")`},
		{"Always give report timestamps in UTC.", "Always use UTC for report timestamps", memory.VerdictDuplicate, "every term matches"},
		{"Always give report timestamps in UTC.", "From now on, give report timestamps in Beijing time.", memory.VerdictConflicts, `same subject "report", timezone differs`},
	}
	j := NewOfflineJudge(OfflineOptions{})
	for _, c := range cases {
		got, reason := j.Relate(c.existing, c.candidate)
		if got != c.want || !strings.Contains(reason, c.reason) {
			t.Errorf("%q → %q: got %s (%s), want %s with %q", c.existing, c.candidate, got, reason, c.want, c.reason)
		}
	}
}

func TestOfflineJudgePicksTheLeastDestructiveVerdict(t *testing.T) {
	j := NewOfflineJudge(OfflineOptions{})
	pref := func(id, s string, sim float64) memory.Neighbor {
		return memory.Neighbor{Memory: memtest.Stored(id, memory.KindPreference, s, "ep_1"), Similarity: sim}
	}
	c := memory.Candidate{Kind: memory.KindPreference, Content: "Reports should use Beijing time, formatted as YYYY-MM-DD HH:mm."}
	ns := []memory.Neighbor{
		pref("mem_utc", "Reports should use UTC.", 0.95),
		pref("mem_bj", "Reports should use Beijing time.", 0.90),
		pref("mem_logs", "Logs should use Beijing time.", 0.97),
	}
	got, err := j.Judge(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != memory.VerdictRefines || got.TargetID != "mem_bj" || got.Judge != JudgeOffline {
		t.Errorf("got %+v, want refines of mem_bj (a refinement beats a conflict)", got)
	}

	// Only the conflicting neighbour left: it is superseded.
	got, _ = j.Judge(context.Background(), c, ns[:1])
	if got.Verdict != memory.VerdictConflicts || got.TargetID != "mem_utc" {
		t.Errorf("got %+v, want conflicts with mem_utc", got)
	}

	// Another kind never merges, and MaxNeighbors bounds the comparison.
	lesson := memory.Candidate{Kind: memory.KindLesson, Content: "Reports should use Beijing time."}
	if got, _ := j.Judge(context.Background(), lesson, ns); got.Verdict != memory.VerdictDistinct || got.TargetID != "" {
		t.Errorf("different kind: %+v", got)
	}
	one := NewOfflineJudge(OfflineOptions{MaxNeighbors: 1})
	if got, _ := one.Judge(context.Background(), c, ns); got.Verdict != memory.VerdictDistinct || !strings.Contains(got.Reason, "mem_logs") {
		t.Errorf("with one neighbour (mem_logs, the most similar): %+v", got)
	}
	if got, _ := j.Judge(context.Background(), c, nil); got.Verdict != memory.VerdictDistinct {
		t.Errorf("no neighbours: %+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Judge(ctx, c, ns); err == nil {
		t.Error("a cancelled context must fail")
	}
}

func TestConflicts(t *testing.T) {
	utc := memtest.Stored("a", memory.KindPreference, "报表用 UTC 时间。")
	bj := memtest.Stored("b", memory.KindRule, "报表必须用北京时间。")
	logs := memtest.Stored("c", memory.KindPreference, "日志用北京时间。")
	if ok, reason := Conflicts(utc, bj); !ok || !strings.Contains(reason, "timezone") {
		t.Errorf("UTC vs Beijing time reports: %v %q", ok, reason)
	}
	if ok, reason := Conflicts(bj, utc); !ok {
		t.Errorf("conflict must be found in either order: %q", reason)
	}
	if ok, reason := Conflicts(utc, logs); ok {
		t.Errorf("reports vs logs is not a conflict: %q", reason)
	}
}
