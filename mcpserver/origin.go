package mcpserver

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CheckOrigin wraps next so that a request carrying an Origin header (a
// browser's) is served only when that origin is the server's own (the
// same host and port the request was sent to) or in allowed, as the MCP
// specification requires of streamable HTTP servers: otherwise a web page
// the user visits could call the server through the user's browser (DNS
// rebinding). Other requests get 403 with what to configure. Requests
// without an Origin (MCP clients, curl) are not browsers and pass.
func CheckOrigin(next http.Handler, allowed []string) http.Handler {
	allow := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if a = strings.TrimRight(strings.TrimSpace(a), "/"); a != "" {
			allow = append(allow, strings.ToLower(a))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || sameOrigin(origin, r.Host) || slices.Contains(allow, strings.ToLower(strings.TrimRight(origin, "/"))) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "forbidden: origin "+quoteOrigin(origin)+" may not call this server; a browser page that must reach it needs its origin in HINDSIGHT_ALLOWED_ORIGINS", http.StatusForbidden)
	})
}

// sameOrigin reports whether origin names the host:port the request was
// sent to.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null", file:, garbage
	}
	return strings.EqualFold(u.Host, host)
}

func quoteOrigin(o string) string {
	if len(o) > 100 {
		o = o[:100] + "…"
	}
	return "\"" + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, o) + "\""
}
