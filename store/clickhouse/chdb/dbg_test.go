package chdb

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestDbgHello(t *testing.T) {
	eng, err := acquireEngine(os.ExpandEnv("$HOME/.cache/hindsight/chdb/26.7.3-stable.1/libchdb.so"), t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.release()
	tr := &transport{eng: eng}
	req, _ := http.NewRequestWithContext(context.Background(), "POST", "http://x/?default_format=Native&client_protocol_version=54460", strings.NewReader(helloQuery))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	t.Logf("%d %q", resp.StatusCode, b)
}
