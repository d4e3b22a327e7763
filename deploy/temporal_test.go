package deploy

import (
	"path/filepath"
	"testing"

	"go.temporal.io/server/common/dynamicconfig"
)

// TestTemporalDynamicConfig loads deploy/temporal/dynamicconfig.yaml with
// the Temporal server's own loader (the server version in go.mod): a key the
// server does not know, or a value of the wrong type, is only a logged
// warning at server start, so it fails here instead.
func TestTemporalDynamicConfig(t *testing.T) {
	lr := dynamicconfig.LoadYamlFile(readFile(t, filepath.Join("temporal", "dynamicconfig.yaml")))
	for _, err := range lr.Errors {
		t.Errorf("dynamicconfig.yaml: %v", err)
	}
	for _, err := range lr.Warnings {
		t.Errorf("dynamicconfig.yaml: %v", err)
	}
	if len(lr.Map) == 0 {
		t.Fatal("dynamicconfig.yaml sets nothing")
	}

	// Hindsight depends on these; they must be set, unconstrained, to true.
	for _, key := range []string{
		"frontend.enableUpdateWorkflowExecution", // UpdateWithStart to the tenant ledger
		"frontend.enableSchedules",               // the worker creates schedules at start
		"worker.enableScheduler",
	} {
		cvs := lr.Map[dynamicconfig.MakeKey(key)]
		if len(cvs) != 1 || cvs[0].Value != true || cvs[0].Constraints != (dynamicconfig.Constraints{}) {
			t.Errorf("%s must be set to true for every namespace, is %+v", key, cvs)
		}
	}
}
