package milvus

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

// Config configures the Milvus adapter. Zero fields take the defaults
// documented on each field; Validate says what is wrong with the rest.
type Config struct {
	// Address is host:port, or an http:// or https:// URL (https turns TLS
	// on). Required.
	Address string
	// Token is an API key (Zilliz Cloud) or "user:password". Optional.
	Token string
	// Username and Password authenticate when Token is empty. Optional.
	Username string
	Password string
	// TLS encrypts the connection, verifying the server against the system
	// roots.
	TLS bool
	// Database is the Milvus database; empty means "default". It must
	// exist: the adapter creates collections, not databases.
	Database string

	// CollectionPrefix names the collections "<prefix>_memories" and
	// "<prefix>_episodes". Default "hindsight".
	CollectionPrefix string
	// Dim is the embedder's dimension. Required. A collection created with
	// another dimension is refused at Open.
	Dim int
	// IndexType is the vector index: HNSW (default), IVF_FLAT, FLAT,
	// AUTOINDEX or DISKANN.
	IndexType string
	// Metric is COSINE (default), or IP for unit vectors.
	Metric string
	// IndexParams override the index's build parameters (HNSW: M=16,
	// efConstruction=200; IVF_FLAT: nlist=1024).
	IndexParams map[string]string
	// Ef is HNSW's search list size; a search of k uses max(Ef, k).
	// Default 64.
	Ef int
	// NProbe is the number of IVF lists a search visits. Default 16.
	NProbe int
	// Consistency is the read consistency: Strong (default), Bounded,
	// Session or Eventually. See the package documentation for why Strong.
	Consistency string
	// Shards is the number of shards of a new collection. Default 1.
	Shards int
	// Partitions is the number of partitions a new collection hashes
	// tenants onto (its partition key); 0 keeps the server's default.
	Partitions int

	// DialTimeout bounds connecting. Default 10s.
	DialTimeout time.Duration
	// RequestTimeout bounds each call to Milvus. Default 30s.
	RequestTimeout time.Duration
	// LoadTimeout bounds waiting for a collection to load at Open.
	// Default 5m.
	LoadTimeout time.Duration

	// Logger receives what Open did. Default slog.Default().
	Logger *slog.Logger
}

// consistencyLevels are the accepted Consistency values, by lower case.
var consistencyLevels = map[string]string{
	"strong": "Strong", "bounded": "Bounded", "session": "Session", "eventually": "Eventually",
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	o := c.schemaOptions()
	c.CollectionPrefix, c.IndexType, c.Metric, c.IndexParams = o.Prefix, o.IndexType, o.Metric, o.IndexParams
	if c.Ef == 0 {
		c.Ef = 64
	}
	if c.NProbe == 0 {
		c.NProbe = 16
	}
	if c.Consistency == "" {
		c.Consistency = "Strong"
	}
	if l, ok := consistencyLevels[strings.ToLower(c.Consistency)]; ok {
		c.Consistency = l
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.LoadTimeout == 0 {
		c.LoadTimeout = 5 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) schemaOptions() schema.Options {
	return schema.Options{
		Prefix: c.CollectionPrefix, Dim: c.Dim, IndexType: c.IndexType, Metric: c.Metric, IndexParams: c.IndexParams,
	}.WithDefaults()
}

// Validate reports every problem with c, after defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Address == "" {
		errs = append(errs, errors.New("address is required: set it to host:port of Milvus (19530 by default)"))
	}
	if c.Token != "" && (c.Username != "" || c.Password != "") {
		errs = append(errs, errors.New("set either a token or a username and password, not both"))
	}
	if err := c.schemaOptions().Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Ef < 1 || c.Ef > 32768 {
		errs = append(errs, fmt.Errorf("ef %d is out of range [1, 32768]", c.Ef))
	}
	if c.NProbe < 1 || c.NProbe > 65536 {
		errs = append(errs, fmt.Errorf("nprobe %d is out of range [1, 65536]", c.NProbe))
	}
	if _, ok := consistencyLevels[strings.ToLower(c.Consistency)]; !ok {
		errs = append(errs, fmt.Errorf("consistency %q is not one of Strong, Bounded, Session, Eventually", c.Consistency))
	}
	if c.Shards < 1 || c.Shards > 64 {
		errs = append(errs, fmt.Errorf("shards %d is out of range [1, 64]", c.Shards))
	}
	if c.Partitions < 0 || c.Partitions > 4096 {
		errs = append(errs, fmt.Errorf("partitions %d is out of range [0, 4096]", c.Partitions))
	}
	if c.DialTimeout < 0 || c.RequestTimeout < 0 || c.LoadTimeout < 0 {
		errs = append(errs, errors.New("timeouts must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("milvus: config: %w", err)
	}
	return nil
}
