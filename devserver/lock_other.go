//go:build !unix

package devserver

// dataDirLock is a no-op where flock is unavailable: there, nothing stops two
// dev servers from sharing a DataDir, and the caller must not do that.
type dataDirLock struct{}

func lockDataDir(string) (*dataDirLock, error) { return &dataDirLock{}, nil }

func (*dataDirLock) release() error { return nil }
