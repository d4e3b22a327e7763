package activities_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/memory"
)

type brokenExtractor struct{}

func (brokenExtractor) Extract(context.Context, memory.Transcript) (memory.Extraction, error) {
	return memory.Extraction{}, memory.Misconfiguredf("offline: extract", "classifier model user was trained with features f9, this build computes f10")
}

// TestMisconfiguredExtractorFailsOnce makes a broken deployment (a model
// that does not match the build) fail the activity for good, with the
// reason, instead of retrying it until the session times out.
func TestMisconfiguredExtractorFailsOnce(t *testing.T) {
	f := newFixture(t)
	f.acts.Extractor = brokenExtractor{}
	ctx := context.Background()
	must(t, f.store.AppendEvents(ctx, []memory.Event{{ID: "e0", Tenant: "acme", SessionID: "s1", Role: memory.RoleUser, Content: "hi", TS: time.Now()}}))
	_, err := f.env.ExecuteActivity(f.acts.ExtractEpisode, activities.ExtractInput{Session: activities.SessionRef{Tenant: "acme", SessionID: "s1"}})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || !strings.Contains(err.Error(), "f10") {
		t.Fatalf("ExtractEpisode with a broken model: %v", err)
	}
}
