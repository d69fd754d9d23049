//go:build !linux

package store

// watchDir cannot watch here: WaitRun reads the record every
// recheckUnwatched.
func watchDir(string) (<-chan struct{}, func()) { return nil, func() {} }
