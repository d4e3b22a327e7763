package clickhouse

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/hindsight-memory/hindsight/memory"
	chschema "github.com/hindsight-memory/hindsight/schema/clickhouse"
)

// Protocol is how the adapter talks to ClickHouse.
type Protocol string

// Protocols.
const (
	Native Protocol = "native" // the TCP protocol, port 9000 (9440 with TLS)
	HTTP   Protocol = "http"   // the HTTP interface, port 8123 (8443 with TLS)
)

// Config configures a Store. The zero value plus an address is a working
// configuration; WithDefaults fills in the rest.
type Config struct {
	// Addr lists servers as host:port. Ignored when DSN is set.
	Addr []string
	// DSN is a clickhouse-go DSN such as
	// clickhouse://user:pass@host:9000/db?secure=true or http://host:8123/db.
	// When set it supplies the addresses, protocol, database, credentials
	// and TLS; fields set here override it.
	DSN string
	// Protocol is Native (default) or HTTP.
	Protocol Protocol
	// Database holds Hindsight's tables; it is created when missing.
	// Default "hindsight".
	Database string
	Username string
	Password string
	// TLS enables TLS with this configuration; nil means plaintext.
	TLS *tls.Config

	DialTimeout time.Duration // default 10s
	ReadTimeout time.Duration // one read from the server; default 5m
	// QueryTimeout bounds each store call whose context has no deadline.
	// Default 30s.
	QueryTimeout    time.Duration
	MaxOpenConns    int           // default 10
	MaxIdleConns    int           // default 5
	ConnMaxLifetime time.Duration // default 1h

	// Cluster names the ClickHouse cluster (in the servers' remote_servers)
	// that holds the database. When set, Migrate creates the database and
	// runs every schema statement ON CLUSTER, with Replicated engines
	// (schema/clickhouse OnCluster), so that every replica has the schema
	// and the data. The cluster must have one shard: the tables are not
	// sharded (deploy/README.md says when that would be needed). Empty for
	// a single server, ClickHouse Cloud, or a Replicated database engine,
	// which replicate DDL themselves.
	Cluster string

	// Retention is how long episodic rows are kept; see Retention.
	Retention Retention
	// SkipMigrate stops Open from applying migrations; run Migrate (or
	// `hindsight migrate`) yourself.
	SkipMigrate bool
	// Settings are extra ClickHouse settings sent with every query.
	Settings map[string]any
	Logger   *slog.Logger

	// Transport carries HTTP requests to an in-process engine instead of
	// the network. store/clickhouse/chdb sets it; servers leave it nil.
	// It implies Protocol HTTP.
	Transport http.RoundTripper
}

// Retention says how long raw events and episodes are kept. The period is
// written into each row (rounded up to whole days) and a TTL deletes rows
// once it has passed; changing it affects rows written afterwards. Zero
// keeps rows until they are forgotten. Semantic memories and decisions are
// never expired: they are removed only by forgetting.
type Retention struct {
	Default time.Duration
	// Tenants overrides Default per tenant.
	Tenants map[string]time.Duration
}

// days returns the retention of tenant in days, 0 for forever.
func (r Retention) days(tenant string) uint16 {
	d, ok := r.Tenants[tenant]
	if !ok {
		d = r.Default
	}
	if d <= 0 {
		return 0
	}
	return uint16(math.Ceil(d.Hours() / 24))
}

const maxRetention = math.MaxUint16 * 24 * time.Hour

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.DSN != "" {
		if o, err := ch.ParseDSN(c.DSN); err == nil { // Validate reports a bad DSN
			if c.Protocol == "" && o.Protocol == ch.HTTP {
				c.Protocol = HTTP
			}
			if c.Database == "" {
				c.Database = o.Auth.Database
			}
		}
	}
	if c.Protocol == "" {
		c.Protocol = Native
		if c.Transport != nil {
			c.Protocol = HTTP
		}
	}
	if c.Database == "" {
		c.Database = "hindsight"
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 5 * time.Minute
	}
	if c.QueryTimeout == 0 {
		c.QueryTimeout = 30 * time.Second
	}
	if c.MaxOpenConns == 0 {
		c.MaxOpenConns = 10
	}
	if c.MaxIdleConns == 0 {
		c.MaxIdleConns = 5
	}
	if c.ConnMaxLifetime == 0 {
		c.ConnMaxLifetime = time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Validate reports the first thing to fix in c (after WithDefaults).
func (c Config) Validate() error {
	const op = "clickhouse: config"
	switch {
	case c.DSN == "" && len(c.Addr) == 0 && c.Transport == nil:
		return memory.Invalidf(op, "no server: set Addr (host:9000) or DSN (clickhouse://host:9000/hindsight)")
	case c.Protocol != Native && c.Protocol != HTTP:
		return memory.Invalidf(op, "protocol %q is not %q or %q", c.Protocol, Native, HTTP)
	case c.Transport != nil && c.Protocol != HTTP:
		return memory.Invalidf(op, "an in-process transport speaks HTTP; protocol %q cannot be used with it", c.Protocol)
	case c.Cluster != "" && c.Transport != nil:
		return memory.Invalidf(op, "cluster %q: the in-process engine is one node and has no clusters", c.Cluster)
	case !identRE.MatchString(c.Database):
		return memory.Invalidf(op, "database %q is not valid: use 1-64 letters, digits or '_', not starting with a digit", c.Database)
	case c.DialTimeout < 0 || c.ReadTimeout < 0 || c.QueryTimeout < 0 || c.ConnMaxLifetime < 0:
		return memory.Invalidf(op, "timeouts must not be negative")
	case c.MaxOpenConns < 1 || c.MaxIdleConns < 0 || c.MaxIdleConns > c.MaxOpenConns:
		return memory.Invalidf(op, "pool sizes: need MaxOpenConns >= 1 and 0 <= MaxIdleConns <= MaxOpenConns (got %d and %d)", c.MaxOpenConns, c.MaxIdleConns)
	}
	if c.Cluster != "" {
		if err := chschema.ValidCluster(c.Cluster); err != nil {
			return memory.Invalidf(op, "%v", err)
		}
	}
	if c.DSN != "" {
		if _, err := ch.ParseDSN(c.DSN); err != nil {
			return memory.Invalidf(op, "DSN is not valid: %v", err)
		}
	}
	for _, a := range c.Addr {
		if a == "" {
			return memory.Invalidf(op, "an empty address in Addr")
		}
	}
	if c.Retention.Default < 0 || c.Retention.Default > maxRetention {
		return memory.Invalidf(op, "default retention %v is out of range (0 to %d days)", c.Retention.Default, math.MaxUint16)
	}
	for t, d := range c.Retention.Tenants {
		if err := memory.ValidateTenant(op, t); err != nil {
			return err
		}
		if d < 0 || d > maxRetention {
			return memory.Invalidf(op, "retention %v of tenant %s is out of range (0 to %d days)", d, t, math.MaxUint16)
		}
	}
	return nil
}

// options translates c into clickhouse-go options for database db ("" for
// the server's default database).
func (c Config) options(db string) (*ch.Options, error) {
	o := &ch.Options{}
	if c.DSN != "" {
		parsed, err := ch.ParseDSN(c.DSN)
		if err != nil {
			return nil, memory.Invalidf("clickhouse: config", "DSN: %v", err)
		}
		o = parsed
	} else {
		o.Addr = c.Addr
	}
	o.Protocol = ch.Native
	if c.Protocol == HTTP {
		o.Protocol = ch.HTTP
	}
	if c.Username != "" {
		o.Auth.Username, o.Auth.Password = c.Username, c.Password
	}
	if c.TLS != nil {
		o.TLS = c.TLS
	}
	o.Auth.Database = db
	o.DialTimeout = c.DialTimeout
	o.ReadTimeout = c.ReadTimeout
	o.MaxOpenConns = c.MaxOpenConns
	o.MaxIdleConns = c.MaxIdleConns
	o.ConnMaxLifetime = c.ConnMaxLifetime
	o.Logger = c.Logger
	o.ClientInfo.Products = append(o.ClientInfo.Products, struct{ Name, Version string }{"hindsight", "1"})
	if o.Settings == nil {
		o.Settings = ch.Settings{}
	}
	for k, v := range c.Settings {
		o.Settings[k] = v
	}
	if o.Protocol == ch.Native && o.Compression == nil {
		o.Compression = &ch.Compression{Method: ch.CompressionLZ4}
	}
	if c.Transport != nil {
		o.Protocol = ch.HTTP
		o.Addr = []string{"chdb.invalid"} // never dialled: the transport answers
		rt := c.Transport
		o.TransportFunc = func(*http.Transport) (http.RoundTripper, error) { return rt, nil }
	}
	return o, nil
}

// String describes where c points, without credentials.
func (c Config) String() string {
	switch {
	case c.Transport != nil:
		return fmt.Sprintf("in-process engine, database %s", c.Database)
	case c.DSN != "":
		o, err := ch.ParseDSN(c.DSN)
		if err != nil {
			return "invalid DSN"
		}
		return fmt.Sprintf("%v over %s, database %s%s", o.Addr, c.Protocol, c.Database, c.onCluster())
	}
	return fmt.Sprintf("%v over %s, database %s%s", c.Addr, c.Protocol, c.Database, c.onCluster())
}

func (c Config) onCluster() string {
	if c.Cluster == "" {
		return ""
	}
	return " on cluster " + c.Cluster
}
