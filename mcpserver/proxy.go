package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Proxy returns an MCP server that forwards every tool to a running
// Hindsight over streamable HTTP: its tools, schemas and annotations are
// the upstream's, read at start. It lets an MCP client that can only start
// a process (stdio) use the memory of `hindsight dev` or of a remote
// deployment, whose tenant comes from token.
func Proxy(ctx context.Context, url, token, version string) (*server.MCPServer, func() error, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "hindsight-proxy", Version: version}, nil)
	up, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: BearerClient(token)}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w (is hindsight dev running?)", url, err)
	}
	list, err := up.ListTools(ctx, nil)
	if err != nil {
		up.Close()
		return nil, nil, fmt.Errorf("list the tools of %s: %w", url, err)
	}
	s := server.NewMCPServer("hindsight", version, server.WithToolCapabilities(false), server.WithRecovery(), server.WithInstructions(instructions))
	for _, t := range list.Tools {
		tool, err := convert[mcp.Tool](t)
		if err != nil {
			up.Close()
			return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		name := t.Name
		s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := up.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: req.GetArguments()})
			if err != nil {
				return mcp.NewToolResultError(fmt.Sprintf("%s: the Hindsight server at %s failed: %v", name, url, err)), nil
			}
			out, err := convert[mcp.CallToolResult](res)
			if err != nil {
				return nil, err
			}
			return &out, nil
		})
	}
	return s, up.Close, nil
}

// convert moves an MCP message between the two SDKs through its JSON, the
// form both implement from the specification.
func convert[T any](v any) (T, error) {
	var out T
	raw, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(raw, &out)
}

// BearerClient returns an HTTP client that sends token as a bearer token
// (none when token is empty).
func BearerClient(token string) *http.Client {
	if token == "" {
		return &http.Client{}
	}
	return &http.Client{Transport: bearerTransport{token: token, next: http.DefaultTransport}}
}

type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
