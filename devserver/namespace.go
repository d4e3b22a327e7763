package devserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// ensureNamespace registers c.Namespace, or brings an existing one's
// retention to c.Retention. It goes through the public API rather than
// writing rows into SQLite so that it works the same on any data directory
// the server accepts, whatever version created it.
//
// It registers before it describes: a lookup of a namespace that does not
// exist yet would leave a "not found" in the frontend's namespace cache for a
// second, and the calls right after registration would see it.
func ensureNamespace(ctx context.Context, tc client.Client, c Config) error {
	ws := tc.WorkflowService()
	_, err := ws.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        c.Namespace,
		Description:                      "Created by hindsight dev",
		WorkflowExecutionRetentionPeriod: durationpb.New(c.Retention),
	})
	var exists *serviceerror.NamespaceAlreadyExists
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &exists):
		return fmt.Errorf("devserver: register namespace %q: %w", c.Namespace, err)
	}
	desc, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: c.Namespace})
	if err != nil {
		return fmt.Errorf("devserver: describe namespace %q: %w", c.Namespace, err)
	}
	if desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() == c.Retention {
		return nil
	}
	// Fields left unset in Config are left as they are by the server.
	_, err = ws.UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: c.Namespace,
		Config:    &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(c.Retention)},
	})
	if err != nil {
		return fmt.Errorf("devserver: set retention of namespace %q to %v: %w", c.Namespace, c.Retention, err)
	}
	return nil
}

// ensureSearchAttributes waits until the frontend serves c.Namespace, then
// registers the search attributes of c that it lacks. Temporal cannot change
// an attribute's type, so one that exists with another type is an error
// naming both.
func ensureSearchAttributes(ctx context.Context, tc client.Client, c Config) error {
	have, err := listSearchAttributes(ctx, tc, c.Namespace)
	if err != nil {
		return err
	}
	missing := make(map[string]enums.IndexedValueType)
	// Sorted so that of several conflicts, the error always names the same.
	for _, name := range slices.Sorted(maps.Keys(c.SearchAttributes)) {
		want := c.SearchAttributes[name]
		got, ok := have.GetCustomAttributes()[name]
		if !ok {
			got, ok = have.GetSystemAttributes()[name]
		}
		switch {
		case !ok:
			missing[name] = want
		case got != want:
			return fmt.Errorf("devserver: search attribute %q exists in namespace %q as %v, not %v; rename it or use a new data directory",
				name, c.Namespace, got, want)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = tc.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        c.Namespace,
		SearchAttributes: missing,
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("devserver: add search attributes %v to %q: %w", slices.Sorted(maps.Keys(missing)), c.Namespace, err)
	}
	return nil
}

// listSearchAttributes lists the search attributes of namespace, retrying
// while the frontend does not know the namespace yet: the namespace cache of
// each service catches up with a new namespace within a second or two.
func listSearchAttributes(ctx context.Context, tc client.Client, namespace string) (*operatorservice.ListSearchAttributesResponse, error) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		resp, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		var notFound *serviceerror.NamespaceNotFound
		if err == nil || !errors.As(err, &notFound) {
			if err != nil {
				return nil, fmt.Errorf("devserver: list search attributes of %q: %w", namespace, err)
			}
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("devserver: namespace %q was registered but is not served: %w", namespace, err)
		case <-tick.C:
		}
	}
}
