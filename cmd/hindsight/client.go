package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hindsight-memory/hindsight/mcpserver"
)

// clientFlags are the flags of commands that talk to a running Hindsight
// over MCP (streamable HTTP), like any agent would.
type clientFlags struct {
	url     string
	token   string
	timeout time.Duration
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	c.registerTimeout(fs, 3*time.Minute, "give up after this long")
}

// registerTimeout registers the flags with a default timeout of the
// command's own.
func (c *clientFlags) registerTimeout(fs *flag.FlagSet, timeout time.Duration, usage string) {
	fs.StringVar(&c.url, "url", envOr("HINDSIGHT_URL", "http://127.0.0.1:8765/mcp"), "the MCP endpoint of a running Hindsight")
	fs.StringVar(&c.token, "token", envOr("HINDSIGHT_TOKEN", ""), "bearer token, when the server has a token file")
	fs.DurationVar(&c.timeout, "timeout", timeout, usage)
}

var clientEnvs = []string{"HINDSIGHT_URL", "HINDSIGHT_TOKEN"}

// callTool connects to the server, calls one tool and decodes its
// structured result into out. A tool error becomes an error with the
// server's message.
func (c *clientFlags) callTool(ctx context.Context, name string, args map[string]any, out any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hc := mcpserver.BearerClient(c.token)
	client := mcp.NewClient(&mcp.Implementation{Name: "hindsight-cli", Version: version}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w (is `hindsight dev` running? set --url or HINDSIGHT_URL)", c.url, err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return decodeResult(name, res, out)
}

// decodeResult returns a tool result's text and decodes its structured
// content into out (when both are there); a tool error becomes an error
// with the server's message.
func decodeResult(name string, res *mcp.CallToolResult, out any) (string, error) {
	text := toolText(res)
	if res.IsError {
		return "", errors.New(text)
	}
	if out != nil && res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return "", fmt.Errorf("%s: decode result: %w", name, err)
		}
	}
	return text, nil
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func printJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
