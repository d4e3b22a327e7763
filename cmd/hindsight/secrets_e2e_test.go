package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// TestSecretsNeverStored ends a session full of credentials (a .env file
// read by a tool, a password in a connection string that failed and was
// retried, a bearer token, a private key, keys of every provider, a card
// number) and stores a memory holding a key, then scans every table of the
// episodic store and the vector index: none of the secrets is anywhere,
// and recall shows placeholders where they were.
func TestSecretsNeverStored(t *testing.T) {
	st := startTestDev(t, filepath.Join(t.TempDir(), "data"))
	defer st.Close()
	session := connect(t, st.mcpURL())
	ctx := context.Background()

	secrets := map[string]string{
		"password":       "Tr0ub4dor-x93",
		"openai":         "sk-proj-Qz8xLm2Np4Rs6Tv8Wb0Yd2Fh4Jk6Lm8Np0R",
		"anthropic":      "sk-ant-api03-Hq2Wz8Xc4Vb6Nm1Lk3Jh5Gf7Ds9Aa0Pp",
		"aws-access":     "AKIA4QX7TZ2LMN8PRSTV",
		"aws-secret":     "wJr7XUtnFEMIK7MDENGbPxRfiCYz9Q3kLm2Np4Rs",
		"github":         "ghp_Qm4Zx8Lk2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2Mn4P",
		"gitlab":         "glpat-Xy7Zq2Lm9Np4Rs6Tv8Wb",
		"slack":          "xoxb-2231-99812-Qz8xLm2Np4Rs6Tv",
		"stripe":         "sk_live_51Hq8Zx2Lm4Np6Rs8Tv0Wb",
		"google":         "AIzaSyD4Qx8Lm2Np6Rt0Vw3Yb7Cd1Ef5Gh9Jk2M",
		"jwt":            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhcHAtc3ZjIn0.Tq9Zx2Lm4Np6Rs8Tv0Wb2Yd4Fh6Jk8Lm0Np2R",
		"private-key":    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
		"card":           "4111 1111 1111 1111",
		"stored-memory":  "sk-proj-Mm3Nn4Bb5Vv6Cc7Xx8Zz9Aa0Ss1Dd2Ff3G",
		"conn-in-lesson": "postgres://app:Tr0ub4dor-x93@db",
	}
	env := "DB_PASSWORD=" + secrets["password"] + "\nOPENAI_API_KEY=" + secrets["openai"] + "\nANTHROPIC_API_KEY=" + secrets["anthropic"] +
		"\nAWS_ACCESS_KEY_ID=" + secrets["aws-access"] + "\nAWS_SECRET_ACCESS_KEY=" + secrets["aws-secret"] + "\nGITHUB_TOKEN=" + secrets["github"] +
		"\nGITLAB_TOKEN=" + secrets["gitlab"] + "\nSLACK_BOT_TOKEN=" + secrets["slack"] + "\nSTRIPE_SECRET_KEY=" + secrets["stripe"] + "\nGOOGLE_MAPS_KEY=" + secrets["google"]
	ts := func(m string) string { return "2026-06-01T10:" + m + ":00Z" }
	events := []map[string]any{
		{"role": "user", "content": "Count yesterday's orders in the prod database; the credentials are in .env.", "ts": ts("00")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"cat .env"}`, "tool_result": env, "ts": ts("01")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"psql postgres://app:` + secrets["password"] + `@db:5432/prod -c 'select 1'"}`,
			"error": `psql: error: connection to server at "db", port 5432 failed: FATAL: no pg_hba.conf entry for host, SSL off`, "ts": ts("02")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"psql 'postgres://app:` + secrets["password"] + `@db:5432/prod?sslmode=require' -c 'select count(*) from orders'"}`,
			"tool_result": "count\n-------\n 1423", "ts": ts("03")},
		{"role": "tool", "tool_name": "http", "tool_args": `{"url":"https://api.internal/orders","headers":{"Authorization":"Bearer ` + secrets["jwt"] + `"}}`,
			"tool_result": `{"orders":1423}`, "ts": ts("04")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"cat ~/.ssh/deploy_key"}`,
			"tool_result": "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secrets["private-key"] + "\n-----END OPENSSH PRIVATE KEY-----", "ts": ts("05")},
		{"role": "assistant", "content": "Yesterday there were 1423 orders. The database needs sslmode=require.", "ts": ts("06")},
		{"role": "user", "content": "Thanks. The customer on order 88 paid with card " + secrets["card"] + ", refund them. From now on always connect to prod with sslmode=require.", "ts": ts("07")},
	}
	end := call[mcpserver.EndOutput](t, session, mcpserver.ToolEnd, map[string]any{"session_id": "s-secrets", "events": events, "wait": true,
		"task": "count orders using password " + secrets["password"]})
	if end.Status != "completed" || len(end.Memories) == 0 {
		t.Fatalf("session_end = %+v", end)
	}
	call[mcpserver.DecisionOutput](t, session, mcpserver.ToolStore, map[string]any{
		"content": "For the staging OpenAI account use the key " + secrets["stored-memory"] + ".", "kind": "fact"})

	// Every table of the episodic store, every stored vector document.
	q, ok := st.runtime.Store.(interface {
		QueryReadOnly(context.Context, string, io.Writer, clickhouse.QueryOptions) error
	})
	if !ok {
		t.Fatalf("the embedded store %T does not run SQL", st.runtime.Store)
	}
	var dump bytes.Buffer
	for _, table := range []string{"events", "episodes", "episodes_archive", "memory_versions", "memories_current", "merge_decisions"} {
		var b bytes.Buffer
		if err := q.QueryReadOnly(ctx, "SELECT * FROM "+table, &b, clickhouse.QueryOptions{Format: clickhouse.FormatTSV, MaxRows: 100000}); err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		if table == "events" && !strings.Contains(b.String(), "⟨secret:") {
			t.Fatalf("the events hold no placeholder; is the session stored?\n%s", b.String())
		}
		dump.Write(b.Bytes())
	}
	for _, c := range []memory.Collection{memory.CollectionMemories, memory.CollectionEpisodes} {
		docs, err := st.runtime.Index.List(ctx, c, memory.VectorFilter{Tenant: memory.DefaultTenant}, "", 10000)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(docs)
		dump.Write(raw)
	}
	rec := call[mcpserver.RecallOutput](t, session, mcpserver.ToolRecall, map[string]any{"query": "how do I connect to the prod database with psql?", "top_k": 10})
	raw, _ := json.Marshal(rec)
	dump.Write(raw)
	for name, s := range secrets {
		if i := strings.Index(dump.String(), s); i >= 0 {
			d := dump.String()
			t.Errorf("the %s secret %q is stored or recalled: …%s…", name, s, d[max(0, i-200):min(len(d), i+100)])
		}
	}
	var placeholders bytes.Buffer
	for _, m := range end.Memories {
		placeholders.WriteString(m.Content)
	}
	if !strings.Contains(placeholders.String()+rec.Context, "⟨secret:") && !strings.Contains(dump.String(), "postgres://app:⟨secret:password:") {
		t.Errorf("no placeholder where the secrets were:\n%s", rec.Context)
	}
}

// TestRawEventsKeptForAudit runs a tenant that keeps its raw events
// unredacted (HINDSIGHT_KEEP_RAW_EVENTS): the events table holds the
// secret, and nothing derived from it does (episodes, memories, decisions).
func TestRawEventsKeptForAudit(t *testing.T) {
	t.Setenv("HINDSIGHT_KEEP_RAW_EVENTS", memory.DefaultTenant)
	st := startTestDev(t, filepath.Join(t.TempDir(), "data"))
	defer st.Close()
	session := connect(t, st.mcpURL())
	const secret = "Tr0ub4dor-x93"
	events := []map[string]any{
		{"role": "user", "content": "Count the orders in prod.", "ts": "2026-06-02T10:00:00Z"},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"psql postgres://app:` + secret + `@db:5432/prod -c 'select 1'"}`,
			"error": "FATAL: no pg_hba.conf entry for host, SSL off", "ts": "2026-06-02T10:01:00Z"},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"psql 'postgres://app:` + secret + `@db:5432/prod?sslmode=require' -c 'select count(*) from orders'"}`,
			"tool_result": "1423", "ts": "2026-06-02T10:02:00Z"},
		{"role": "user", "content": "From now on always connect to prod with sslmode=require, the password is " + secret + ".", "ts": "2026-06-02T10:03:00Z"},
	}
	end := call[mcpserver.EndOutput](t, session, mcpserver.ToolEnd, map[string]any{"session_id": "s-audit", "events": events, "wait": true})
	if end.Status != "completed" || len(end.Memories) == 0 {
		t.Fatalf("session_end = %+v", end)
	}
	q := st.runtime.Store.(interface {
		QueryReadOnly(context.Context, string, io.Writer, clickhouse.QueryOptions) error
	})
	scan := func(table string) string {
		var b bytes.Buffer
		if err := q.QueryReadOnly(context.Background(), "SELECT * FROM "+table, &b, clickhouse.QueryOptions{Format: clickhouse.FormatTSV, MaxRows: 100000}); err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		return b.String()
	}
	if !strings.Contains(scan("events"), secret) {
		t.Fatal("the raw events were redacted for a tenant that keeps them")
	}
	for _, table := range []string{"episodes", "memory_versions", "memories_current", "merge_decisions"} {
		if strings.Contains(scan(table), secret) {
			t.Errorf("%s holds the secret of a raw event", table)
		}
	}
}

// TestEveryShapeKeptOut ends a session with each shape of secret the
// review of issue 37 found stored as written (an inline assignment before
// a command, a name with words before it, values that start with a
// symbol, a password stated in prose, dotted and prefixed provider tokens,
// the passwords of curl -u and docker login -p, an npm token), with
// secrets in the identifiers a caller chooses too (session, agent, task
// type, project), stores a memory and recalls with a query holding one:
// no secret is in any table of the store, the vector index, the user's
// export or what recall returns.
func TestEveryShapeKeptOut(t *testing.T) {
	st := startTestDev(t, filepath.Join(t.TempDir(), "data"))
	defer st.Close()
	session := connect(t, st.mcpURL())
	ctx := context.Background()

	secrets := map[string]string{
		"inline":       "Vx9mQ2rLtW",
		"extra-words":  "Kp3wZ8nRqT",
		"symbol-first": "%Tz8qLw3Nx5B",
		"bracket":      "[Hq7zLm2Xv9]",
		"prose":        "Q7mZx2Lk9Np4Rs6Tv8Wb0Yd2Fh4Jk6Lm8Np0RtA",
		"sendgrid":     "SG.Lm4Nq8Rt2Vx6Zb0Cd3Ef7.Gh1Jk5Mn9Pq3Rs7Tv1Wx5Yz9Ab3Cd7Ef1Gh5Jk9Mn",
		"vault":        "hvs.CAESIHm2Qx8Lz4Vb7Np1Kt5Rw9Yc",
		"curl":         "Bq5!rTz8Mx",
		"docker":       "Wd3nLq8Zx7",
		"npm":          "f7Hq2Lz9Vm4Xb8Nc1Rt5Wy3Kp",
		"in-ids":       "Yr6tPz2Qm8",
	}
	withSecret := "DEPLOY_PASSWORD=" + secrets["in-ids"]
	ts := func(m string) string { return "2026-06-03T09:" + m + ":00Z" }
	events := []map[string]any{
		{"role": "user", "content": "Rotate the mail relay credentials. For the record, the AWS secret is " + secrets["prose"] + " until Friday.", "ts": ts("00")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"PGPASSWORD=` + secrets["inline"] + ` psql -h db.internal -U relay -c 'select 1'"}`, "tool_result": "1", "ts": ts("01")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"cat relay.env"}`,
			"tool_result": "PRIMARY_DB_PASSWORD=" + secrets["extra-words"] + "\nSESSION_SECRET=" + secrets["symbol-first"] + "\nCOOKIE_SECRET=" + secrets["bracket"] +
				"\nSENDGRID_API_KEY=" + secrets["sendgrid"] + "\n//registry.npmjs.org/:_authToken=" + secrets["npm"], "ts": ts("02")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"vault login ` + secrets["vault"] + `"}`, "tool_result": "Success! You are now authenticated.", "ts": ts("03")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"curl -s -u relay-admin:` + secrets["curl"] + ` https://relay.internal/api/rotate"}`,
			"error": "curl: (22) The requested URL returned error: 403", "ts": ts("04")},
		{"role": "tool", "tool_name": "bash", "tool_args": `{"cmd":"docker login -u relay -p ` + secrets["docker"] + ` registry.internal"}`, "tool_result": "Login Succeeded", "ts": ts("05")},
		{"role": "assistant", "content": "The rotate endpoint refused relay-admin with 403; the registry login worked.", "ts": ts("06")},
		{"role": "user", "content": "From now on rotate relay credentials through the vault CLI, never through the relay API.", "ts": ts("07")},
	}
	end := call[mcpserver.EndOutput](t, session, mcpserver.ToolEnd, map[string]any{"session_id": "s-" + withSecret, "user_id": "u-ana",
		"agent": "agent-" + withSecret, "project": "/src/" + withSecret, "events": events, "wait": true})
	if end.Status != "completed" {
		t.Fatalf("session_end = %+v", end)
	}
	call[mcpserver.DecisionOutput](t, session, mcpserver.ToolStore, map[string]any{
		"content": "On staging, relay-admin signs in with the password " + secrets["curl"] + " as well.", "kind": "fact", "task_type": "relay " + withSecret, "user_id": "u-ana", "scope": "user"})
	rec := call[mcpserver.RecallOutput](t, session, mcpserver.ToolRecall, map[string]any{"query": "how do I rotate the relay credentials, PGPASSWORD=" + secrets["inline"] + "?",
		"user_id": "u-ana", "top_k": 10})
	if len(rec.Results) == 0 {
		t.Fatalf("recall returned nothing: %+v", rec)
	}

	q := st.runtime.Store.(interface {
		QueryReadOnly(context.Context, string, io.Writer, clickhouse.QueryOptions) error
	})
	var tables bytes.Buffer
	if err := q.QueryReadOnly(ctx, "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View'", &tables, clickhouse.QueryOptions{Format: clickhouse.FormatTSV}); err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	names := strings.Fields(tables.String())[1:]
	if !slices.Contains(names, "events") || !slices.Contains(names, "memory_versions") {
		t.Fatalf("the store's tables: %v", names)
	}
	for _, table := range names {
		if err := q.QueryReadOnly(ctx, "SELECT * FROM "+table, &dump, clickhouse.QueryOptions{Format: clickhouse.FormatTSV, MaxRows: 100000}); err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
	}
	if !strings.Contains(dump.String(), "⟨secret:") {
		t.Fatal("the store holds no placeholder; is the session stored?")
	}
	for _, c := range []memory.Collection{memory.CollectionMemories, memory.CollectionEpisodes} {
		docs, err := st.runtime.Index.List(ctx, c, memory.VectorFilter{Tenant: memory.DefaultTenant}, "", 10000)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(docs)
		dump.Write(raw)
	}
	x, err := service.Export(ctx, st.runtime.Store, memory.DefaultTenant, "u-ana", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Events) == 0 {
		t.Fatalf("the export holds no session of u-ana: %+v", x)
	}
	raw, _ := json.Marshal(x)
	dump.Write(raw)
	raw, _ = json.Marshal(rec)
	dump.Write(raw)
	d := dump.String()
	for name, s := range secrets {
		if i := strings.Index(d, s); i >= 0 {
			t.Errorf("the %s secret %q is stored, exported or recalled: …%s…", name, s, d[max(0, i-160):min(len(d), i+60)])
		}
	}
}
