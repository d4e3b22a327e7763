package offline

import (
	"slices"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func TestMemoryForm(t *testing.T) {
	for _, tt := range []struct{ say, want string }{
		{"I'm vegetarian so keep that in mind", "The user is vegetarian."},
		{"I always want metric units (kilometres, metres) in your answers.", "The user always wants metric units (kilometres, metres) in your answers."},
		{"I can't stand bullet points.", "The user can't stand bullet points."},
		{"My manager hates long emails.", "The user's manager hates long emails."},
		{"We no longer use PagerDuty, we moved to Opsgenie.", "The team no longer uses PagerDuty, the team moved to Opsgenie."},
		{"No — replacements over $500 don't need approval.", "Replacements over $500 don't need approval."},
		{"Close, but put the currency symbol after the amount.", "Put the currency symbol after the amount."},
		{"Change of plan: use EUR from now on, not USD.", "Use EUR, not USD."},
		// The topic a lead names stays with the statement.
		{"Change of plan for the partner payout report: instead of USD, use EUR from now on.", "For the partner payout report, instead of USD, use EUR."},
		{"One more thing on the invoices: PDF only.", "For the invoices, PDF only."},
		{"One more thing on the invoices: invoices go out as PDF only.", "Invoices go out as PDF only."},
		{"Again: write to me, don't ring.", "Write to the user, don't ring."},
		{"跟你说一下，以后日报的时间改成 UTC。", "日报的时间改成 UTC。"},
		{"不对，我们用的是 pnpm 8。", "团队用的是 pnpm 8。"},
		{"说过了，我要的是 Excel 文件。", "用户要的是 Excel 文件。"},
		{"记住，周报发到 ops@example.com。", "周报发到 ops@example.com。"},
		{"Order A-20931. I'm Maria Okafor.", "Order A-20931. The user is Maria Okafor."},
	} {
		if got := memoryForm(tt.say); got != tt.want {
			t.Errorf("memoryForm(%q) = %q, want %q", tt.say, got, tt.want)
		}
	}
}

// TestLessonsFromAnyTranscriptShape: a command in the tool event's
// content instead of tool_args, and a traceback inside tool_result
// instead of error, still give the failure→fix lesson; a flag of a
// command after a pipe is not the fix.
func TestLessonsFromAnyTranscriptShape(t *testing.T) {
	tr := session(t,
		user("Build the admin panel."),
		memory.Event{Role: memory.RoleTool, ToolName: "bash", Content: "cd legacy/admin-panel && npm run build 2>&1 | tail -n 20",
			ToolResult: "Error: error:0308010C:digital envelope routines::unsupported\n    at new Hash (node:internal/crypto/hash:69:19)"},
		assistant("Node 17+ ships OpenSSL 3, which rejects the MD4 hash webpack 4 uses; the legacy provider re-enables it."),
		memory.Event{Role: memory.RoleTool, ToolName: "bash", Content: "cd legacy/admin-panel && NODE_OPTIONS=--openssl-legacy-provider npm run build 2>&1 | tail -n 12",
			ToolResult: "Compiled successfully."},
		user("thanks"),
	)
	ls := ofKind(extract(t, tr), memory.KindLesson)
	if len(ls) == 0 {
		t.Fatal("no lesson")
	}
	text := ls[0].Content + " " + ls[0].CounterExample
	if !strings.Contains(text, "openssl-legacy-provider") {
		t.Errorf("lesson %q lacks the fix", text)
	}
	if strings.Contains(ls[0].Content, "-n 12") || strings.Contains(ls[0].Content, "-n 20") {
		t.Errorf("lesson %q took tail's -n for the fix", ls[0].Content)
	}
	if !strings.Contains(ls[0].CounterExample, "0308010C") {
		t.Errorf("counter-example %q lacks the error", ls[0].CounterExample)
	}
}

// TestUnfixedFailureKeepsWhy: when nothing fixed it, the lesson says what
// failed and why, in the agent's words, with no made-up fix.
func TestUnfixedFailureKeepsWhy(t *testing.T) {
	tr := session(t,
		user("Load the partner files from s3://partner-drop/acme/."),
		call("bash", `{"command":"aws s3 ls s3://partner-drop/acme/ --profile loader"}`, "", "An error occurred (AccessDenied) when calling the ListObjectsV2 operation: Access Denied"),
		call("bash", `{"command":"aws s3 ls s3://partner-drop/acme/ --profile readonly"}`, "", "An error occurred (AccessDenied) when calling the ListObjectsV2 operation: Access Denied"),
		assistant("Access is denied because the bucket policy only allows the partner account, not our loader roles."),
		user("ok, leave it"),
	)
	ls := ofKind(extract(t, tr), memory.KindLesson)
	if len(ls) != 1 || !strings.Contains(ls[0].Content, "bucket policy") || !strings.Contains(ls[0].CounterExample, "AccessDenied") {
		t.Fatalf("lessons %+v, want one that says the bucket policy denies both roles, with the error", ls)
	}
	if strings.Contains(ls[0].Content, "fix:") {
		t.Errorf("lesson %q invents a fix", ls[0].Content)
	}
}

// TestChatWithoutWorkTeachesNoLesson: an agent explaining things in a
// chat with no tool call learned nothing about this environment.
func TestChatWithoutWorkTeachesNoLesson(t *testing.T) {
	tr := session(t,
		user("Out of curiosity, what's the difference between VACUUM and VACUUM FULL?"),
		assistant("VACUUM FULL rewrites the whole table and takes an exclusive lock, while plain VACUUM only marks dead tuples as reusable."),
		user("ok thanks"),
	)
	if c := extract(t, tr).Candidates; len(c) != 0 {
		t.Errorf("candidates %+v, want none", c)
	}
}

// TestNameReferent: a statement about "the file" names the file its
// message named, so that it stands alone; with two files named, or none,
// it is left as it was rather than guessed.
func TestNameReferent(t *testing.T) {
	for _, c := range []struct{ content, message, want string }{
		{"The file has Chinese column names.", "Import sales_2024.csv please. Heads-up: the file has Chinese column names.", "The file sales_2024.csv has Chinese column names."},
		{"这个文件是GBK编码。", "把 orders.xlsx 导进去，这个文件是GBK编码。", "这个文件 orders.xlsx 是GBK编码。"},
		{"The file has Chinese column names.", "Merge a.csv into b.csv; the file has Chinese column names.", "The file has Chinese column names."},
		{"The file has Chinese column names.", "Heads-up: the file has Chinese column names.", "The file has Chinese column names."},
		{"The file sales.csv is in GBK.", "The file sales.csv is in GBK.", "The file sales.csv is in GBK."},
		{"The filesystem is read-only.", "Check out.log; the filesystem is read-only.", "The filesystem is read-only."},
	} {
		if got := nameReferent(c.content, c.message); got != c.want {
			t.Errorf("nameReferent(%q) = %q, want %q", c.content, got, c.want)
		}
	}
}

// TestSelfNamedUser: a person who gives their full name is named in their
// memories, so that an agent serving many people finds them; "I'm sorry"
// or a first name alone changes nothing.
func TestSelfNamedUser(t *testing.T) {
	got := extract(t, session(t,
		user("Hi, my blender arrived with a cracked jug. I'm Maria Okafor."),
		assistant("Sorry about that, a replacement is on its way."),
		user("Thanks. Please only contact me by email, I never pick up calls from unknown numbers."),
	)).Candidates
	if !slices.ContainsFunc(got, func(c memory.Candidate) bool {
		return strings.Contains(c.Content, "Maria Okafor by email") && !strings.Contains(c.Content, "the user")
	}) {
		t.Errorf("candidates %+v, want the email rule to name Maria Okafor", got)
	}
	got = extract(t, session(t,
		user("I'm sorry, I was unclear. Please only contact me by email from now on."),
	)).Candidates
	if len(got) != 1 || !strings.Contains(got[0].Content, "the user by email") {
		t.Errorf("candidates %+v, want the email rule about the user", got)
	}
}

// TestCheckFixedByRedoingTheProducer: a check fails on what an earlier
// call wrote, the call is redone with other settings (one try failing on
// the way), and the same check then passes. The lesson is everything the
// redo changed, told against the check's error, as one lesson.
func TestCheckFixedByRedoingTheProducer(t *testing.T) {
	tr := session(t,
		user("Write the orders to /srv/out/orders.avro so the billing reader can load it."),
		call("python", `{"code":"write_avro(df, '/srv/out/orders.avro', codec='deflate')"}`, "None", ""),
		call("bash", `{"command":"billing-reader check /srv/out/orders.avro"}`, "", "Error: unsupported codec deflate in orders.avro"),
		call("python", `{"code":"write_avro(df, '/srv/out/orders.avro', codec='snappy')"}`, "", "ValueError: snappy needs sync_interval"),
		call("python", `{"code":"write_avro(df, '/srv/out/orders.avro', codec='snappy', sync_interval=16000)"}`, "None", ""),
		call("bash", `{"command":"billing-reader check /srv/out/orders.avro"}`, "ok: 1200 records", ""),
	)
	ls := ofKind(extract(t, tr), memory.KindLesson)
	if len(ls) != 1 {
		t.Fatalf("lessons %+v, want one", ls)
	}
	if c := ls[0].Content; !strings.Contains(c, "codec='snappy'") || !strings.Contains(c, "sync_interval=16000") || !strings.Contains(c, "unsupported codec") {
		t.Errorf("lesson %q, want both settings the redo changed and the check's error", c)
	}
}

// TestRetryThatAlsoCollectsItsOutput: the call that worked does more than
// the failures did (it also fetches and filters what it produced). It is
// still their fix, and what it did instead is told by its own text, not
// by the flags of the steps that only collect its output.
func TestRetryThatAlsoCollectsItsOutput(t *testing.T) {
	tr := session(t,
		user("The search pod is stuck, grab a heap histogram before we restart it."),
		call("kubectl", `{"command":"kubectl -n search exec search-0 -- jmap -histo 1"}`, "", `exec: "jmap": executable file not found in $PATH`),
		assistant("The search image ships only a JRE, so jmap is missing there."),
		call("kubectl", `{"command":"kubectl -n search exec search-0 -- jattach 1 jcmd GC.class_histogram && kubectl -n search logs search-0 --since=30s | grep -m5 instances"}`, "num #instances #bytes", ""),
	)
	ls := ofKind(extract(t, tr), memory.KindLesson)
	if len(ls) != 1 {
		t.Fatalf("lessons %+v, want one", ls)
	}
	if c := ls[0].Content; !strings.Contains(c, "jattach 1 jcmd GC.class_histogram") || strings.Contains(c, "fix: --since") {
		t.Errorf("lesson %q, want the call that worked, not the flags that collect its output", c)
	}
}

// TestStatementWithItsReason: a standing instruction followed by its
// reason is kept whole, reason included, though the reason alone reads as
// a passing remark.
func TestStatementWithItsReason(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Going forward, put all the prices in the catalogue in EUR, not CHF — half of the buyers are in Germany now.", "EUR, not CHF — half of the buyers are in Germany now"},
		{"以后合同编号统一用 HT-年份-序号，不然法务那边归档对不上。", "HT-年份-序号，不然法务那边归档对不上"},
	} {
		got := extract(t, session(t, user("Update the spring catalogue."), assistant("Done."), user(c.text))).Candidates
		if len(got) != 1 || !strings.Contains(got[0].Content, c.want) {
			t.Errorf("%q: candidates %+v, want one with %q", c.text, got, c.want)
		}
	}
	if h := headClause("Please rerun it — it timed out."); h != "" {
		t.Errorf("headClause of a short request = %q, want none", h)
	}
}
