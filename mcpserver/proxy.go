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
	hooks := &server.Hooks{}
	// resources/list is the upstream's, page for page.
	hooks.AddAfterListResources(func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		page, err := up.ListResources(ctx, &sdk.ListResourcesParams{Cursor: string(req.Params.Cursor)})
		if err != nil {
			return
		}
		if out, err := convert[mcp.ListResourcesResult](page); err == nil {
			*res = out
		}
	})
	s := server.NewMCPServer("hindsight", version, server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false), server.WithHooks(hooks),
		server.WithCompletions(), server.WithPromptCompletionProvider(proxyCompleter{up}), server.WithResourceCompletionProvider(proxyCompleter{up}),
		server.WithRecovery(), server.WithInstructions(instructions))
	if err := proxyResourcesAndPrompts(ctx, s, up); err != nil {
		up.Close()
		return nil, nil, fmt.Errorf("%s: %w", url, err)
	}
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

// proxyResourcesAndPrompts registers the upstream's resource templates and
// prompts on s, each forwarding reads and gets to it.
func proxyResourcesAndPrompts(ctx context.Context, s *server.MCPServer, up *sdk.ClientSession) error {
	templates, err := up.ListResourceTemplates(ctx, nil)
	if err != nil {
		return fmt.Errorf("list the resource templates: %w", err)
	}
	for _, tt := range templates.ResourceTemplates {
		t, err := convert[mcp.ResourceTemplate](tt)
		if err != nil {
			return err
		}
		s.AddResourceTemplate(t, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			res, err := up.ReadResource(ctx, &sdk.ReadResourceParams{URI: req.Params.URI})
			if err != nil {
				return nil, err
			}
			var out []mcp.ResourceContents
			for _, c := range res.Contents {
				out = append(out, mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text})
			}
			return out, nil
		})
	}
	prompts, err := up.ListPrompts(ctx, nil)
	if err != nil {
		return fmt.Errorf("list the prompts: %w", err)
	}
	for _, pp := range prompts.Prompts {
		p, err := convert[mcp.Prompt](pp)
		if err != nil {
			return err
		}
		name := pp.Name
		s.AddPrompt(p, func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res, err := up.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: req.Params.Arguments})
			if err != nil {
				return nil, err
			}
			// The two SDKs' content types do not decode from each other's
			// JSON (mcp-go's is an interface); Hindsight's prompt speaks
			// text only.
			var msgs []mcp.PromptMessage
			for _, m := range res.Messages {
				if tc, ok := m.Content.(*sdk.TextContent); ok {
					msgs = append(msgs, mcp.NewPromptMessage(mcp.Role(m.Role), mcp.NewTextContent(tc.Text)))
				}
			}
			return mcp.NewGetPromptResult(res.Description, msgs), nil
		})
	}
	return nil
}

// proxyCompleter forwards completion/complete to the upstream.
type proxyCompleter struct{ up *sdk.ClientSession }

func (p proxyCompleter) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, c mcp.CompleteContext) (*mcp.Completion, error) {
	return p.complete(ctx, &sdk.CompleteReference{Type: "ref/prompt", Name: name}, arg, c)
}

func (p proxyCompleter) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, c mcp.CompleteContext) (*mcp.Completion, error) {
	return p.complete(ctx, &sdk.CompleteReference{Type: "ref/resource", URI: uri}, arg, c)
}

func (p proxyCompleter) complete(ctx context.Context, ref *sdk.CompleteReference, arg mcp.CompleteArgument, c mcp.CompleteContext) (*mcp.Completion, error) {
	res, err := p.up.Complete(ctx, &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: arg.Name, Value: arg.Value},
		Context: &sdk.CompleteContext{Arguments: c.Arguments}})
	if err != nil {
		return nil, err
	}
	return &mcp.Completion{Values: res.Completion.Values, Total: res.Completion.Total, HasMore: res.Completion.HasMore}, nil
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
