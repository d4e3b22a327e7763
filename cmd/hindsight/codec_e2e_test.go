package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/payloadcodec"
)

// TestPayloadsEncrypted ends a session with HINDSIGHT_PAYLOAD_KEY set and
// reads the Temporal histories it wrote (the session's workflow and the
// tenant's ledger, which carries the candidate memories) through the
// Temporal client, raw: no memory text and no transcript text is there in
// plaintext, while the service still answers with it.
func TestPayloadsEncrypted(t *testing.T) {
	t.Setenv("HINDSIGHT_PAYLOAD_KEY", "0123456789abcdef-test-payload-key")
	st := startTestDev(t, filepath.Join(t.TempDir(), "data"))
	defer st.Close()
	session := connect(t, st.mcpURL())
	tr, evs := transcriptEvents(t, "01_csv_import_gbk.json")
	end := call[mcpserver.EndOutput](t, session, mcpserver.ToolEnd, map[string]any{
		"session_id": tr.SessionID, "events": evs, "wait": true, "task": "Import sales_2024.csv into the warehouse",
	})
	if end.Status != "completed" || len(end.Memories) == 0 {
		t.Fatalf("session_end = %+v", end)
	}
	var plain []string
	for _, m := range end.Memories {
		plain = append(plain, m.Content)
	}
	plain = append(plain, "Import sales_2024.csv into the warehouse")

	ctx := context.Background()
	for _, id := range []string{memory.SessionWorkflowID(memory.DefaultTenant, tr.SessionID), ledger.WorkflowID(memory.DefaultTenant)} {
		it := st.client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var raw strings.Builder
		n := 0
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			b, _ := proto.Marshal(ev)
			raw.Write(b)
			n++
		}
		if n == 0 {
			t.Fatalf("no history for %s", id)
		}
		for _, p := range plain {
			if strings.Contains(raw.String(), p) {
				t.Errorf("the history of %s holds %q in plaintext", id, p)
			}
		}
		if !strings.Contains(raw.String(), "binary/encrypted") {
			t.Errorf("the history of %s holds no encrypted payload", id)
		}
	}
}

// historyPayloads returns every payload in the history of workflow id
// (every run), read raw from the Temporal server, but the search
// attributes' (the tenant's name, which Temporal indexes and no codec
// sees).
func historyPayloads(t *testing.T, c client.Client, id string) []*commonpb.Payload {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []*commonpb.Payload
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		switch p := m.Interface().(type) {
		case *commonpb.Payload:
			out = append(out, p)
			return
		case *commonpb.SearchAttributes:
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Kind() == protoreflect.MessageKind:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(mv.Message())
					return true
				})
			case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind:
				walk(v.Message())
			}
			return true
		})
	}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		walk(ev.ProtoReflect())
	}
	if len(out) == 0 {
		t.Fatalf("the history of %s holds no payload", id)
	}
	return out
}

// storeOne stores a memory through a dev stack's MCP server.
func storeOne(t *testing.T, st *devStack, content string) {
	t.Helper()
	session := connect(t, st.mcpURL())
	defer session.Close()
	call[mcpserver.DecisionOutput](t, session, mcpserver.ToolStore, map[string]any{"content": content, "kind": "rule"})
}

// ledgerRun is the run ID of the default tenant's running ledger.
func ledgerRun(t *testing.T, st *devStack) string {
	t.Helper()
	d, err := st.client.DescribeWorkflowExecution(context.Background(), ledger.WorkflowID(memory.DefaultTenant), "")
	if err != nil {
		t.Fatal(err)
	}
	if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("the ledger is %v, want running", s)
	}
	return d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}

// TestPayloadKeyRotation rotates the payload key under a running
// history: the tenant's ledger runs on through a restart with a new key
// put first, replaying what the old key encrypted; what it writes after
// is encrypted with the new key; its history holds both keys' payloads
// and no plaintext, and decodes whole with both keys, not with the new
// one alone.
func TestPayloadKeyRotation(t *testing.T) {
	const oldKey, newKey = "an-old-payload-passphrase-0001", "c0ffee00112233445566778899aabbccddeeff00112233445566778899aabbcc"
	dataDir := filepath.Join(t.TempDir(), "data")
	t.Setenv("HINDSIGHT_PAYLOAD_MODE", "")
	t.Setenv("HINDSIGHT_PAYLOAD_KEY", oldKey)
	st := startTestDev(t, dataDir)
	storeOne(t, st, "Give report timestamps in UTC.")
	run := ledgerRun(t, st)
	st.Close()

	t.Setenv("HINDSIGHT_PAYLOAD_KEY", newKey+","+oldKey)
	st = startTestDev(t, dataDir)
	defer st.Close()
	storeOne(t, st, "Name release branches release/YYYY-MM.")
	if got := ledgerRun(t, st); got != run {
		t.Fatalf("the ledger's run changed from %s to %s across the rotation: the test wants one running history", run, got)
	}
	ps := historyPayloads(t, st.client, ledger.WorkflowID(memory.DefaultTenant))
	oldID, _ := payloadcodec.KeyID(oldKey)
	newID, _ := payloadcodec.KeyID(newKey)
	ids := map[string]int{}
	for _, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != payloadcodec.Encoding {
			t.Fatalf("the history holds a plaintext payload: %s", p.GetMetadata())
		}
		ids[string(p.GetMetadata()[payloadcodec.MetadataKeyID])]++
	}
	if ids[oldID] == 0 || ids[newID] == 0 || len(ids) != 2 {
		t.Fatalf("payloads by key = %v, want some of the old key %s and of the new %s", ids, oldID, newID)
	}
	both, err := payloadcodec.New(payloadcodec.Config{Keys: []string{newKey, oldKey}})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := both.Decode(ps)
	if err != nil {
		t.Fatalf("the history does not decode with both keys: %v", err)
	}
	var plain strings.Builder
	for _, p := range dec {
		plain.Write(p.GetData())
	}
	for _, want := range []string{"Give report timestamps in UTC.", "Name release branches release/YYYY-MM."} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("the decoded history lacks %q", want)
		}
	}
	onlyNew, _ := payloadcodec.New(payloadcodec.Config{Keys: []string{newKey}})
	if _, err := onlyNew.Decode(ps); err == nil || !strings.Contains(err.Error(), oldID) {
		t.Fatalf("the new key alone decoded the old key's payloads (or said nothing of the key they need): %v", err)
	}
}

// TestPlaintextHistoryMigrates turns encryption on under a running
// history written in plaintext: in the migration mode the ledger replays
// its plaintext payloads and encrypts what it writes after; a strict
// codec refuses that history, the migration mode's reads it.
func TestPlaintextHistoryMigrates(t *testing.T) {
	const key = "a-new-payload-passphrase-00001"
	dataDir := filepath.Join(t.TempDir(), "data")
	t.Setenv("HINDSIGHT_PAYLOAD_KEY", "")
	t.Setenv("HINDSIGHT_PAYLOAD_MODE", "")
	st := startTestDev(t, dataDir)
	storeOne(t, st, "Give report timestamps in UTC.")
	run := ledgerRun(t, st)
	st.Close()

	t.Setenv("HINDSIGHT_PAYLOAD_KEY", key)
	t.Setenv("HINDSIGHT_PAYLOAD_MODE", "migrate")
	st = startTestDev(t, dataDir)
	defer st.Close()
	storeOne(t, st, "Name release branches release/YYYY-MM.")
	if got := ledgerRun(t, st); got != run {
		t.Fatalf("the ledger's run changed from %s to %s: the test wants one running history", run, got)
	}
	ps := historyPayloads(t, st.client, ledger.WorkflowID(memory.DefaultTenant))
	plain, encrypted := 0, 0
	for _, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) == payloadcodec.Encoding {
			encrypted++
		} else {
			plain++
		}
	}
	if plain == 0 || encrypted == 0 {
		t.Fatalf("%d plaintext and %d encrypted payloads, want both", plain, encrypted)
	}
	strict, _ := payloadcodec.New(payloadcodec.Config{Keys: []string{key}})
	if _, err := strict.Decode(ps); err == nil {
		t.Fatal("a strict codec read a history with plaintext payloads")
	}
	migrate, _ := payloadcodec.New(payloadcodec.Config{Keys: []string{key}, AcceptPlaintext: true})
	if _, err := migrate.Decode(ps); err != nil {
		t.Fatalf("the migration mode's codec: %v", err)
	}
}

// TestCodecServerNeedsAToken: the codec server decodes only for a request
// that carries its token, and answers the UI's preflight without one.
func TestCodecServerNeedsAToken(t *testing.T) {
	const key, token = "a-codec-server-passphrase-001", "codec-token-0123456789abcdef"
	c, err := payloadcodec.New(payloadcodec.Config{Keys: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := converter.GetDefaultDataConverter().ToPayload("a memory's text")
	enc, _ := c.Encode([]*commonpb.Payload{p})
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	srv := httptest.NewServer(codecHandler(c, token, "http://127.0.0.1:8233"))
	defer srv.Close()
	post := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, auth := range []string{"", "Bearer wrong-token-0123456789abcdef", token, "Basic " + token} {
		if code, out := post(auth); code != http.StatusUnauthorized || strings.Contains(out, "YSBtZW1vcnkncyB0ZXh0") {
			t.Errorf("decode with Authorization %q: %d, want 401 and nothing decoded", auth, code)
		}
	}
	code, out := post("Bearer " + token)
	if code != http.StatusOK || !strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(`"a memory's text"`))) {
		t.Fatalf("decode with the token: %d %s", code, out)
	}
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("preflight: %v %v", resp, err)
	}
}
