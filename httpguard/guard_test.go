package httpguard

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func policy(t *testing.T, c Config) *Policy {
	t.Helper()
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A DNS-rebinding page reaches a loopback listener with its own name in
// the Host header (and, as its own origin, in Origin): both are refused,
// whatever the path. The listener's own addresses and configured names
// are served.
func TestHostsOfALoopbackListener(t *testing.T) {
	p := policy(t, Config{Listen: "127.0.0.1:8765", Hosts: []string{"memory.example.com", "proxy.internal:9000"}})
	for host, want := range map[string]bool{
		"127.0.0.1:8765":          true,
		"localhost:8765":          true,
		"LOCALHOST:8765":          true,
		"[::1]:8765":              true,
		"memory.example.com":      true, // configured without a port: any port
		"memory.example.com:443":  true,
		"proxy.internal:9000":     true,
		"proxy.internal:9001":     false,
		"attacker.example:8765":   false, // DNS rebinding
		"127.0.0.1:9999":          false,
		"localhost.attacker:8765": false,
		"":                        false,
		"10.0.0.7:8765":           false, // an address it does not listen on
	} {
		if got := p.AllowsHost(host); got != want {
			t.Errorf("AllowsHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// A wildcard listener (in a container, a pod) answers for this machine's
// own addresses on its port, which probes and scrapers use, and for the
// configured names; never for a name it was not given.
func TestHostsOfAWildcardListener(t *testing.T) {
	p := policy(t, Config{Listen: "0.0.0.0:8080", Hosts: []string{"hindsight-mcp"}})
	p.local = func(a netip.Addr) bool { return a == netip.MustParseAddr("10.1.2.3") }
	for host, want := range map[string]bool{
		"10.1.2.3:8080":      true,
		"127.0.0.1:8080":     true,
		"10.1.2.4:8080":      false,
		"10.1.2.3:9090":      false,
		"hindsight-mcp":      true,
		"hindsight-mcp:8765": true,
		"evil.example:8080":  false,
	} {
		if got := p.AllowsHost(host); got != want {
			t.Errorf("AllowsHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// Origins are checked against the configured origins and the hosts the
// listener serves, never against the request's Host: a page on
// attacker.example rebinding to 127.0.0.1 sends Host and Origin
// attacker.example:8765, which match each other and nothing configured.
func TestOrigins(t *testing.T) {
	p := policy(t, Config{Listen: "127.0.0.1:8765", Origins: []string{"https://console.example.com/"}, Hosts: []string{"memory.example.com"}})
	for origin, want := range map[string]bool{
		"http://127.0.0.1:8765":          true,
		"http://localhost:8765":          true,
		"https://console.example.com":    true,
		"https://memory.example.com":     true,
		"http://attacker.example:8765":   false,
		"null":                           false,
		"file://":                        false,
		"http://127.0.0.1:9999":          false,
		"http://localhost.evil.example":  false,
		"https://console.example.com.ev": false,
		"ftp://127.0.0.1:8765":           false,
	} {
		if got := p.AllowsOrigin(origin); got != want {
			t.Errorf("AllowsOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := p.Wrap(ok)
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:8765", "", http.StatusNoContent},
		{"127.0.0.1:8765", "http://127.0.0.1:8765", http.StatusNoContent},
		{"attacker.example:8765", "", http.StatusMisdirectedRequest},
		{"attacker.example:8765", "http://attacker.example:8765", http.StatusMisdirectedRequest},
		{"127.0.0.1:8765", "http://attacker.example:8765", http.StatusForbidden},
		{"127.0.0.1:8765", "null", http.StatusForbidden},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			r := httptest.NewRequest(method, "/ui/memories", nil)
			r.Host = c.host
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Errorf("%s Host %q Origin %q: %d, want %d", method, c.host, c.origin, w.Code, c.want)
			}
		}
	}
}

// X-Forwarded-Proto says a request came over TLS only from a configured
// proxy.
func TestSecureBehindATrustedProxy(t *testing.T) {
	p := policy(t, Config{Listen: "0.0.0.0:8765", TrustedProxies: []string{"10.0.0.0/8", "192.0.2.7"}})
	for _, c := range []struct {
		remote, header, value string
		tls, want             bool
	}{
		{remote: "10.2.3.4:5555", header: "X-Forwarded-Proto", value: "https", want: true},
		{remote: "192.0.2.7:5555", header: "Forwarded", value: `for=198.51.100.1;proto=https`, want: true},
		{remote: "10.2.3.4:5555", header: "X-Forwarded-Proto", value: "http", want: false},
		{remote: "203.0.113.9:5555", header: "X-Forwarded-Proto", value: "https", want: false}, // not a proxy of ours
		{remote: "203.0.113.9:5555", tls: true, want: true},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		if c.header != "" {
			r.Header.Set(c.header, c.value)
		}
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if got := p.Secure(r); got != c.want {
			t.Errorf("Secure(from %s, %s: %s, tls %v) = %v, want %v", c.remote, c.header, c.value, c.tls, got, c.want)
		}
	}
}

func TestBadConfigurationSaysWhatToFix(t *testing.T) {
	for _, c := range []Config{
		{Listen: "nope"},
		{Listen: "127.0.0.1:1", Hosts: []string{"https://memory.example.com"}},
		{Listen: "127.0.0.1:1", Origins: []string{"console.example.com"}},
		{Listen: "127.0.0.1:1", TrustedProxies: []string{"10.0.0.300"}},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted it", c)
		}
	}
}
