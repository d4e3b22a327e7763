package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/llm/openai"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
	"github.com/hindsight-memory/hindsight/store/local"
	"github.com/hindsight-memory/hindsight/store/milvus"
	"github.com/hindsight-memory/hindsight/workflows"
)

// envHelp documents every environment variable the binary reads; --help
// and the README's configuration reference show it.
var envHelp = map[string]string{
	"HINDSIGHT_DATA_DIR":             "data directory of the embedded stores and dev server (./data)",
	"HINDSIGHT_TENANT":               "default tenant: stdio callers and HTTP without a token file (default)",
	"HINDSIGHT_MCP_ADDR":             "listen address of the MCP HTTP server (127.0.0.1:8765)",
	"HINDSIGHT_TOKENS_FILE":          "file of \"tenant token\" lines; HTTP then requires Authorization: Bearer",
	"HINDSIGHT_HEALTH_ADDR":          "worker: listen address for /healthz, /readyz, /metrics (:8080)",
	"HINDSIGHT_TASK_QUEUE":           "Temporal task queue (hindsight)",
	"HINDSIGHT_LOG_LEVEL":            "debug, info, warn or error (info)",
	"HINDSIGHT_CACHE":                "cache of downloaded engines ($HOME/.cache/hindsight)",
	"HINDSIGHT_CHDB_LIB":             "path of libchdb.so (from the cache, see make chdb)",
	"HINDSIGHT_EMBED_DIM":            "dimension of the offline embedder, or of the embedding model (384)",
	"HINDSIGHT_MERGE_THRESHOLD":      "vector similarity a memory needs to reach the merge judge (0.15 offline, 0.85 neural)",
	"HINDSIGHT_URL":                  "client commands: the MCP endpoint of a running Hindsight",
	"HINDSIGHT_TOKEN":                "client commands: bearer token",
	"TEMPORAL_ADDR":                  "Temporal frontend host:port (worker, mcp; dev embeds its own)",
	"TEMPORAL_NAMESPACE":             "Temporal namespace (default)",
	"CLICKHOUSE_ADDR":                "ClickHouse server: host:9000 (native) or http(s)://host:8123; unset means embedded chDB",
	"CLICKHOUSE_DATABASE":            "ClickHouse database (hindsight)",
	"CLICKHOUSE_USER":                "ClickHouse user",
	"CLICKHOUSE_PASSWORD":            "ClickHouse password",
	"CLICKHOUSE_CLUSTER":             "ClickHouse cluster (remote_servers) of one shard: migrations run ON CLUSTER with Replicated engines; unset for one server",
	"CLICKHOUSE_RETENTION_DAYS":      "days raw events and episodes are kept; 0 keeps them (0)",
	"MILVUS_ADDR":                    "Milvus host:19530; unset means the embedded local vector index",
	"MILVUS_TOKEN":                   "Milvus token or user:password",
	"MILVUS_DATABASE":                "Milvus database (default)",
	"OPENAI_BASE_URL":                "OpenAI-compatible API root, e.g. https://api.openai.com/v1; unset means offline",
	"OPENAI_API_KEY":                 "API key of OPENAI_BASE_URL",
	"HINDSIGHT_LLM_MODEL":            "chat model of every stage (gpt-4o-mini)",
	"HINDSIGHT_EXTRACT_MODEL":        "chat model for extraction (HINDSIGHT_LLM_MODEL)",
	"HINDSIGHT_JUDGE_MODEL":          "chat model for merge verdicts (HINDSIGHT_LLM_MODEL)",
	"HINDSIGHT_SUMMARIZE_MODEL":      "chat model for consolidation summaries (HINDSIGHT_LLM_MODEL)",
	"HINDSIGHT_QUERY_MODEL":          "chat model for query parsing (HINDSIGHT_LLM_MODEL)",
	"HINDSIGHT_EMBED_MODEL":          "embedding model; unset means the offline embedder",
	"HINDSIGHT_LLM_QUERY_PARSING":    "let the LLM parse recall queries (false)",
	"HINDSIGHT_TIMEZONE":             "time zone of time words in recall queries (\"last week\", \"上周\") and of times and dates given without a zone, e.g. Asia/Shanghai (UTC)",
	"HINDSIGHT_RECALL_MIN_RELEVANCE": "absolute relevance a memory needs to be recalled, 0–1 (the relevance model's threshold; negative: off)",
	"HINDSIGHT_RECALL_RELEVANCE":     "how recall judges relevance: model (learned) or rule (the share of the query's terms a memory holds) (model)",
	"HINDSIGHT_PII_POLICY":           "personal data policy: CLASS=keep|mask|drop for email, phone, address, card, national_id, ip (cards and national IDs masked)",
	"HINDSIGHT_REDACTION_KEY":        "key of the hash in secret placeholders, 16+ characters, the same in every process; required with CLICKHOUSE_ADDR (embedded: the data directory's keys/redaction.key)",
	"HINDSIGHT_CONSOLE_KEY":          "key that signs the memory console's cookies, 16+ characters, the same in every MCP server; required with CLICKHOUSE_ADDR (embedded: keys/console.key)",
	"HINDSIGHT_SESSION_KEY":          "key that signs hindsight dev's MCP session IDs (unset: the data directory's keys/mcp-session.key)",
	"HINDSIGHT_ALLOWED_ORIGINS":      "browser origins allowed to call the MCP server besides its own, comma-separated (others get 403)",
	"HINDSIGHT_KEEP_RAW_EVENTS":      "tenants whose raw events are stored unredacted, comma-separated (episodes and memories are still redacted)",
	"HINDSIGHT_PAYLOAD_KEY":          "encrypt Temporal payloads with AES-256-GCM: keys (64 hex digits) or passphrases of 16+ characters, comma-separated, the newest first (it encrypts, all decrypt), the same in every process (unset: plaintext)",
	"HINDSIGHT_PAYLOAD_MODE":         "strict (default: with a payload key, payloads that are not encrypted are refused) or migrate (read them, while histories from before the key finish)",
	"HINDSIGHT_CODEC_TOKEN":          "codec-server: the bearer token every request must carry, 16+ characters",
}

var stackEnvs = []string{
	"HINDSIGHT_DATA_DIR", "HINDSIGHT_TENANT", "HINDSIGHT_MCP_ADDR", "HINDSIGHT_TOKENS_FILE", "HINDSIGHT_TASK_QUEUE",
	"HINDSIGHT_LOG_LEVEL", "HINDSIGHT_TIMEZONE", "HINDSIGHT_CACHE", "HINDSIGHT_CHDB_LIB", "HINDSIGHT_EMBED_DIM", "HINDSIGHT_MERGE_THRESHOLD", "HINDSIGHT_RECALL_MIN_RELEVANCE", "HINDSIGHT_RECALL_RELEVANCE",
	"HINDSIGHT_PII_POLICY", "HINDSIGHT_REDACTION_KEY", "HINDSIGHT_CONSOLE_KEY", "HINDSIGHT_SESSION_KEY", "HINDSIGHT_PAYLOAD_KEY", "HINDSIGHT_PAYLOAD_MODE", "HINDSIGHT_KEEP_RAW_EVENTS", "HINDSIGHT_ALLOWED_ORIGINS",
	"TEMPORAL_ADDR", "TEMPORAL_NAMESPACE",
	"CLICKHOUSE_ADDR", "CLICKHOUSE_DATABASE", "CLICKHOUSE_USER", "CLICKHOUSE_PASSWORD", "CLICKHOUSE_CLUSTER", "CLICKHOUSE_RETENTION_DAYS",
	"MILVUS_ADDR", "MILVUS_TOKEN", "MILVUS_DATABASE",
	"OPENAI_BASE_URL", "OPENAI_API_KEY", "HINDSIGHT_LLM_MODEL", "HINDSIGHT_EXTRACT_MODEL", "HINDSIGHT_JUDGE_MODEL",
	"HINDSIGHT_SUMMARIZE_MODEL", "HINDSIGHT_QUERY_MODEL", "HINDSIGHT_EMBED_MODEL", "HINDSIGHT_LLM_QUERY_PARSING",
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// stackFlags are the settings shared by dev, worker and mcp.
type stackFlags struct {
	dataDir    string
	tenant     string
	taskQueue  string
	mcpAddr    string
	tokensFile string
	logLevel   string
}

func (s *stackFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.dataDir, "data-dir", envOr("HINDSIGHT_DATA_DIR", "./data"), "data directory of the embedded stores")
	fs.StringVar(&s.tenant, "tenant", envOr("HINDSIGHT_TENANT", memory.DefaultTenant), "default tenant (stdio, and HTTP without a token file)")
	fs.StringVar(&s.taskQueue, "task-queue", envOr("HINDSIGHT_TASK_QUEUE", workflows.TaskQueue), "Temporal task queue")
	fs.StringVar(&s.mcpAddr, "mcp-addr", envOr("HINDSIGHT_MCP_ADDR", "127.0.0.1:8765"), "listen address of the MCP HTTP server")
	fs.StringVar(&s.tokensFile, "tokens-file", envOr("HINDSIGHT_TOKENS_FILE", ""), "file of \"tenant token\" lines; HTTP then requires a bearer token")
	fs.StringVar(&s.logLevel, "log-level", envOr("HINDSIGHT_LOG_LEVEL", "info"), "debug, info, warn or error")
}

func (s *stackFlags) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", s.logLevel)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})), nil
}

// workerConfig reads the adapters' configuration from the environment:
// servers when their addresses are set, the embedded engines under dataDir
// otherwise.
func (s *stackFlags) workerConfig(log *slog.Logger) (app.Config, error) {
	var cfg app.Config
	cfg.Logger = log
	scfg, err := serviceConfig(s)
	if err != nil {
		return cfg, err
	}
	cfg.Redactor, cfg.RedactionPolicy = scfg.Redactor, scfg.Policy
	cfg.Lexicon = lexicon.Default()
	if cfg.Lexicon == nil {
		log.Warn("dictionaries not installed: recall works without translations and synonyms (run make dicts)", "err", lexicon.Err())
	}
	retention, err := envInt("CLICKHOUSE_RETENTION_DAYS", 0)
	if err != nil {
		return cfg, err
	}
	chStore := clickhouse.Config{
		Database:  envOr("CLICKHOUSE_DATABASE", ""),
		Retention: clickhouse.Retention{Default: time.Duration(retention) * 24 * time.Hour},
		Logger:    log,
	}
	if addr := os.Getenv("CLICKHOUSE_ADDR"); addr != "" {
		c := chStore
		if strings.Contains(addr, "://") {
			c.DSN = addr
		} else {
			c.Addr = strings.Split(addr, ",")
		}
		c.Username, c.Password = os.Getenv("CLICKHOUSE_USER"), os.Getenv("CLICKHOUSE_PASSWORD")
		c.Cluster = os.Getenv("CLICKHOUSE_CLUSTER")
		cfg.ClickHouse = &c
	} else {
		if cl := os.Getenv("CLICKHOUSE_CLUSTER"); cl != "" {
			return cfg, fmt.Errorf("CLICKHOUSE_CLUSTER=%s needs CLICKHOUSE_ADDR: the embedded engine is one node", cl)
		}
		cfg.ChDB = &chdb.Config{DataDir: filepath.Join(s.dataDir, "chdb"), LibPath: chdbLib(), Store: chStore}
		// The embedded stack keeps its keys beside its data, where only
		// this user can read them; a server's deployment sets them in
		// the environment.
		cfg.Keys.Dir = filepath.Join(s.dataDir, "keys")
	}
	cfg.Keys.Env = os.Getenv

	dim, err := envInt("HINDSIGHT_EMBED_DIM", 0)
	if err != nil {
		return cfg, err
	}
	cfg.EmbedDim = dim
	if addr := os.Getenv("MILVUS_ADDR"); addr != "" {
		cfg.Milvus = &milvus.Config{Address: addr, Token: os.Getenv("MILVUS_TOKEN"), Database: os.Getenv("MILVUS_DATABASE"), Logger: log}
	} else {
		cfg.Local = &local.Config{Dir: filepath.Join(s.dataDir, "vectors"), Logger: log}
	}

	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		model := envOr("HINDSIGHT_LLM_MODEL", "gpt-4o-mini")
		oc := openai.Config{
			BaseURL: base, APIKey: os.Getenv("OPENAI_API_KEY"), Model: model,
			StageModels:    map[memory.Stage]string{},
			EmbeddingModel: os.Getenv("HINDSIGHT_EMBED_MODEL"), EmbeddingDim: dim,
		}
		for stage, env := range map[memory.Stage]string{
			memory.StageExtract: "HINDSIGHT_EXTRACT_MODEL", memory.StageJudge: "HINDSIGHT_JUDGE_MODEL",
			memory.StageSummarize: "HINDSIGHT_SUMMARIZE_MODEL", memory.StageQuery: "HINDSIGHT_QUERY_MODEL",
		} {
			if m := os.Getenv(env); m != "" {
				oc.StageModels[stage] = m
			}
		}
		cfg.OpenAI = &oc
		cfg.Recall.LLMQueryParsing, _ = strconv.ParseBool(os.Getenv("HINDSIGHT_LLM_QUERY_PARSING"))
	}
	if cfg.Recall.Location, err = timeZone(); err != nil {
		return cfg, err
	}
	if v := os.Getenv("HINDSIGHT_MERGE_THRESHOLD"); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || t <= 0 || t > 1 {
			return cfg, fmt.Errorf("HINDSIGHT_MERGE_THRESHOLD=%q: want a number in (0, 1]", v)
		}
		cfg.Merge.Threshold = t
	}
	if v := os.Getenv("HINDSIGHT_RECALL_MIN_RELEVANCE"); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || t > 1 {
			return cfg, fmt.Errorf("HINDSIGHT_RECALL_MIN_RELEVANCE=%q: want a number up to 1 (negative turns the threshold off)", v)
		}
		cfg.Recall.MinRelevance = t
	}
	switch v := os.Getenv("HINDSIGHT_RECALL_RELEVANCE"); v {
	case "", "model":
	case "rule":
		cfg.Recall.RuleRelevance = true
	default:
		return cfg, fmt.Errorf("HINDSIGHT_RECALL_RELEVANCE=%q: want model (the learned relevance model) or rule (the share of the query's terms a memory holds)", v)
	}
	return cfg, nil
}

// chdbLib is the chDB library the environment names (chdb.LibPathFromEnv);
// "" leaves it to the engine's default.
func chdbLib() string {
	p, _ := chdb.LibPathFromEnv()
	return p
}

// cacheDir is Hindsight's cache: HINDSIGHT_CACHE, else $HOME/.cache/hindsight.
func cacheDir() (string, error) {
	if c := os.Getenv("HINDSIGHT_CACHE"); c != "" {
		return c, nil
	}
	return chdb.DefaultCacheDir()
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number ≥ 0", name, v)
	}
	return n, nil
}

// timeZone is the deployment's time zone, HINDSIGHT_TIMEZONE (UTC): recall
// reads time words in it, and every time or date given without a zone
// (event timestamps, since and until) is read in it.
func timeZone() (*time.Location, error) {
	tz := os.Getenv("HINDSIGHT_TIMEZONE")
	if tz == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("HINDSIGHT_TIMEZONE=%q: %w (use an IANA name such as Asia/Shanghai)", tz, err)
	}
	return loc, nil
}
