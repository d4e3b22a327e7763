package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCheckOrigin(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := CheckOrigin(ok, []string{"https://console.example.com/"})
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusNoContent}, // an MCP client, not a browser
		{"http://127.0.0.1:8765", http.StatusNoContent},
		{"https://console.example.com", http.StatusNoContent},
		{"http://evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"http://localhost.evil.example", http.StatusForbidden},
		{"http://127.0.0.1:9999", http.StatusForbidden}, // another port is another origin
		{"file://", http.StatusForbidden},
	} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			r := httptest.NewRequest(method, "http://127.0.0.1:8765/mcp", nil)
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Errorf("%s with Origin %q: %d, want %d", method, c.origin, w.Code, c.want)
			}
		}
	}
}
