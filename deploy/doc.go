// Package deploy holds Hindsight's production deployment and the tests that
// keep it valid: the container image (Dockerfile), the Kubernetes manifests
// for the worker and the MCP server (kubernetes/, applied with kustomize),
// the Temporal dynamic configuration (temporal/), and, from the repository
// root, docker-compose.yml with .env.example.
//
// There is no Go code to import here. No schema-validator binary can be
// fetched on the build machines, so the tests are the validator: every
// manifest is decoded strictly into the real Kubernetes API types
// (k8s.io/api; an unknown or misspelt field fails), the dynamic config is
// loaded with the Temporal server's own loader, docker-compose.yml is checked
// by `docker-compose config` and by the invariants the deployment promises
// (probes, resources, non-root, pinned images, secrets only from .env or a
// Secret, ports on 127.0.0.1), and the files are checked against each other
// (ports, user IDs, binary path, environment variables).
package deploy
