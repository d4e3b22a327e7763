package devserver

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

const (
	// dbFileName is the SQLite database inside DataDir.
	dbFileName = "temporal.db"
	// clusterName is persisted in the database (cluster metadata and every
	// namespace's replication config) on first start, so it must never
	// change or existing data directories stop working.
	clusterName = "active"
	// storeName names the one data store in the server config.
	storeName = "sqlite-default"
)

// dynamicConfig is the server's dynamic configuration, kept in code so that
// `hindsight dev` needs no config file. Settings that are already on by
// default in this server version are still listed when Hindsight depends on
// them, so that a server upgrade that flips a default cannot silently take a
// feature away; TestFeatures exercises each of them.
func dynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Workflow Update, and the "wait for Accepted" form the SDK uses,
		// are how workflows/ takes appends into a running session.
		// (UpdateWithStart, i.e. ExecuteMultiOperation, has no switch any
		// more in v1.32: it is on whenever Update is.)
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key():              true,
		dynamicconfig.FrontendEnableUpdateWorkflowExecutionAsyncAccepted.Key(): true,
		// Schedules run consolidation and decay.
		dynamicconfig.FrontendEnableSchedules.Key(): true,
		dynamicconfig.WorkerEnableScheduler.Key():   true,
		// Search attributes registered at start (HindsightTenant) must be
		// usable by the very next StartWorkflow, not after the cache's
		// refresh interval. Costs a DB read per lookup, which a dev server
		// can afford and a production cluster should not.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		// The UI polls list and count queries on every page; the default of
		// 10 per second per namespace makes it show rate-limit errors.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
	}
}

// ensureSchema creates the SQLite schema if the database file does not exist
// yet. An existing file is left alone: running the schema again would fail on
// the tables it already has, and it holds the workflows of earlier runs.
func ensureSchema(sqlCfg *config.SQL) error {
	_, err := os.Stat(sqlCfg.DatabaseName)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("devserver: check database file: %w", err)
	}
	if err := sqliteschema.SetupSchema(sqlCfg); err != nil {
		// Without this, the half-made file would be taken for a complete one
		// on the next start.
		_ = os.Remove(sqlCfg.DatabaseName)
		return fmt.Errorf("devserver: create schema in %s: %w", sqlCfg.DatabaseName, err)
	}
	return nil
}

// serverConfig builds the static configuration of a single-process cluster
// with one history shard on SQLite.
func serverConfig(c Config, ports internalPorts) *config.Config {
	frontend := net.JoinHostPort(c.Host, strconv.Itoa(c.FrontendPort))
	rpc := func(grpcPort int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: grpcPort, BindOnIP: c.Host}}
	}
	services := map[string]config.Service{
		// The frontend's HTTP API (and Nexus, which needs it) is not used by
		// Hindsight, but without it the server warns on every start.
		string(primitives.FrontendService): {RPC: config.RPC{
			GRPCPort: c.FrontendPort, HTTPPort: ports.frontendHTTP, BindOnIP: c.Host,
		}},
		string(primitives.HistoryService):  rpc(ports.history),
		string(primitives.MatchingService): rpc(ports.matching),
		string(primitives.WorkerService):   rpc(ports.worker),
	}

	sqlCfg := &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: filepath.Join(c.DataDir, dbFileName),
		// Write-ahead logging: a commit appends to the log and syncs it once,
		// where the default rollback journal syncs the journal and the
		// database file, and holds the one connection meanwhile. Every
		// workflow step is a commit, so this is the server's hot path.
		// synchronous=full keeps every commit durable, as before.
		ConnectAttributes: map[string]string{"mode": "rwc", "journal_mode": "wal", "synchronous": "full"},
	}

	return &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: c.Host},
			// Metrics stay nil: the server then uses a no-op handler and
			// opens no Prometheus port.
		},
		Persistence: config.Persistence{
			DefaultStore:     storeName,
			VisibilityStore:  storeName,
			NumHistoryShards: 1,
			DataStores:       map[string]config.DataStore{storeName: {SQL: sqlCfg}},
		},
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {
					Enabled:                true,
					InitialFailoverVersion: 1,
					RPCAddress:             frontend,
					HTTPAddress:            net.JoinHostPort(c.Host, strconv.Itoa(ports.frontendHTTP)),
				},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services:            services,
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{
			Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			},
		},
		// The worker service's system workflows (schedules among them) reach
		// the frontend through this address.
		PublicClient: config.PublicClient{HostPort: frontend},
	}
}

// newTemporalServer builds, but does not start, the server for cfg.
func newTemporalServer(cfg *config.Config, logger serverLogger) (temporal.Server, error) {
	authorizer, err := authorization.GetAuthorizerFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("devserver: authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&cfg.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("devserver: claim mapper: %w", err)
	}
	// Static membership: every service is this process, so ringpop's gossip
	// (and its ports) would only add start-up time.
	hosts := make(map[primitives.ServiceName]static.Hosts, len(cfg.Services))
	for name, svc := range cfg.Services {
		addr := net.JoinHostPort(svc.RPC.BindOnIP, strconv.Itoa(svc.RPC.GRPCPort))
		hosts[primitives.ServiceName(name)] = static.SingleLocalHost(addr)
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dynamicConfig()),
	)
	if err != nil {
		return nil, fmt.Errorf("devserver: build temporal server: %w", err)
	}
	return srv, nil
}
