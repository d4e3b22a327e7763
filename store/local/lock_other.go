//go:build !unix

package local

import "os"

// lockDir opens dir/LOCK; other systems get no inter-process lock.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
