package deps

import (
	_ "github.com/ClickHouse/clickhouse-go/v2"
	_ "github.com/chdb-io/chdb-go/chdb"
	_ "github.com/mark3labs/mcp-go/server"
	_ "github.com/milvus-io/milvus-sdk-go/v2/client"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/temporalio/ui-server/v2/server"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/server/temporal"
	_ "go.temporal.io/server/temporaltest"
	_ "github.com/prometheus/client_golang/prometheus"
)
