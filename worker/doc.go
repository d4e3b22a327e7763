// Package worker runs Hindsight's Temporal worker: it registers the
// workflows and activities, with the interceptors that heartbeat running
// activities and count workflows, and applies the maintenance schedules.
// Package app builds what it runs.
package worker
