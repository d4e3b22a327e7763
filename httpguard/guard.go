package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Policy is what a listener accepts.
type Policy struct {
	// port is the listener's port; wildcard is set when it listens on every
	// address, whose local addresses it then serves.
	port     string
	wildcard bool
	// hosts are the host:port values served exactly, and anyPort the host
	// names served on whatever port a request names (configured without a
	// port: a proxy's public name).
	hosts   map[string]bool
	anyPort map[string]bool
	// origins are the configured browser origins, scheme://host[:port].
	origins []string
	proxies []netip.Prefix
	// local reports whether an address is one of this machine's (a
	// wildcard listener serves them); net.InterfaceAddrs by default.
	local func(netip.Addr) bool
}

// Config configures a Policy.
type Config struct {
	// Listen is the address the listener is bound to (its real one, after
	// a port of 0 was chosen).
	Listen string
	// Hosts are further names (or name:port) the listener answers for:
	// HINDSIGHT_ALLOWED_HOSTS, the names clients and proxies use.
	Hosts []string
	// Origins are browser origins allowed besides those of the hosts:
	// HINDSIGHT_ALLOWED_ORIGINS.
	Origins []string
	// TrustedProxies are the addresses (or CIDR ranges) of proxies whose
	// X-Forwarded-Proto is believed: HINDSIGHT_TRUSTED_PROXIES.
	TrustedProxies []string
}

// New returns the policy of a listener; a configured value that does not
// parse is an error that names it.
func New(c Config) (*Policy, error) {
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", c.Listen, err)
	}
	p := &Policy{port: port, hosts: map[string]bool{}, anyPort: map[string]bool{}, local: isLocalAddr}
	switch ip, err := netip.ParseAddr(strings.Trim(host, "[]")); {
	case host == "" || (err == nil && ip.IsUnspecified()):
		p.wildcard = true
		p.addLoopback()
	case host == "localhost" || (err == nil && ip.IsLoopback()):
		p.addLoopback()
		p.hosts[net.JoinHostPort(strings.ToLower(host), port)] = true
	default:
		p.hosts[net.JoinHostPort(strings.ToLower(strings.Trim(host, "[]")), port)] = true
	}
	for _, h := range c.Hosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h == "" {
			continue
		}
		if strings.ContainsAny(h, "/@?#") || strings.Contains(h, "://") {
			return nil, fmt.Errorf("allowed host %q: give a host name or host:port, not a URL (HINDSIGHT_ALLOWED_HOSTS)", h)
		}
		if hh, pp, err := net.SplitHostPort(h); err == nil {
			p.hosts[net.JoinHostPort(strings.Trim(hh, "[]"), pp)] = true
		} else {
			p.anyPort[strings.Trim(h, "[]")] = true
		}
	}
	for _, o := range c.Origins {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
			return nil, fmt.Errorf("allowed origin %q: give scheme://host[:port], e.g. https://console.example.com (HINDSIGHT_ALLOWED_ORIGINS)", o)
		}
		p.origins = append(p.origins, strings.ToLower(o))
	}
	for _, s := range c.TrustedProxies {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		pre, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q: give an address or a CIDR range, e.g. 10.0.0.0/8 (HINDSIGHT_TRUSTED_PROXIES)", s)
			}
			pre = netip.PrefixFrom(a, a.BitLen())
		}
		p.proxies = append(p.proxies, pre.Masked())
	}
	return p, nil
}

// Loopback is the policy of a loopback listener on any port: for handlers
// used without a listener's own policy (tests, embedding).
func Loopback() *Policy {
	p := &Policy{hosts: map[string]bool{}, anyPort: map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true}, local: isLocalAddr}
	return p
}

func (p *Policy) addLoopback() {
	for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
		p.hosts[net.JoinHostPort(h, p.port)] = true
	}
}

// AllowsHost reports whether the listener serves requests that name host
// (a Host header: name or address, with or without a port; without one it
// is the default port of HTTP).
func (p *Policy) AllowsHost(host string) bool {
	host = strings.ToLower(strings.TrimSpace(host))
	if host == "" {
		return false
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = strings.Trim(host, "[]"), "80"
	}
	if p.anyPort[name] || p.hosts[net.JoinHostPort(name, port)] {
		return true
	}
	if p.wildcard && port == p.port {
		if ip, err := netip.ParseAddr(name); err == nil {
			// A wildcard listener answers for this machine's addresses: a
			// browser sends an address as the Host only when it was told
			// to reach that address, never for a page's own DNS name.
			return ip.IsLoopback() || p.local(ip.Unmap())
		}
	}
	return false
}

// AllowsOrigin reports whether a browser page of origin may call the
// listener: the origin is configured, or names a host the listener serves.
// "null", file: and other schemes never may.
func (p *Policy) AllowsOrigin(origin string) bool {
	o := strings.ToLower(strings.TrimRight(origin, "/"))
	if slices.Contains(p.origins, o) {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	host := u.Host
	switch {
	case u.Scheme == "https" && u.Port() == "":
		host = net.JoinHostPort(u.Hostname(), "443")
	case u.Scheme == "http":
	default:
		return false
	}
	return p.AllowsHost(host)
}

// Secure reports whether r reached the deployment over TLS: on a TLS
// connection of this server, or, from a trusted proxy, with
// X-Forwarded-Proto: https (or Forwarded: proto=https).
func (p *Policy) Secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !p.trusted(r.RemoteAddr) {
		return false
	}
	if v := r.Header.Get("X-Forwarded-Proto"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		return strings.EqualFold(strings.TrimSpace(first), "https")
	}
	for part := range strings.SplitSeq(r.Header.Get("Forwarded"), ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok && strings.EqualFold(k, "proto") {
			first, _, _ := strings.Cut(v, ",")
			return strings.EqualFold(strings.Trim(strings.TrimSpace(first), `"`), "https")
		}
	}
	return false
}

func (p *Policy) trusted(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, pre := range p.proxies {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// Wrap checks every request before next sees it: a Host the listener does
// not serve gets 421 (Misdirected Request), a browser origin it does not
// allow 403, each with what to configure.
func (p *Policy) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.AllowsHost(r.Host) {
			http.Error(w, "misdirected request: this server does not answer for host "+quote(r.Host)+
				"; a name clients or a proxy use to reach it belongs in HINDSIGHT_ALLOWED_HOSTS", http.StatusMisdirectedRequest)
			return
		}
		if o, sent := r.Header["Origin"]; sent && (len(o) != 1 || !p.AllowsOrigin(o[0])) {
			http.Error(w, "forbidden: origin "+quote(strings.Join(o, ","))+
				" may not call this server; a browser page that must reach it needs its origin in HINDSIGHT_ALLOWED_ORIGINS", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// quote shows a header value in an error, short and without control
// characters.
func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return "\"" + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s) + "\""
}

// isLocalAddr reports whether a is one of this machine's addresses.
func isLocalAddr(a netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// List splits a comma-separated setting into its values.
func List(s string) []string {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
