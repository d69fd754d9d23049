package engine

// SetBeforeRecordWrite sets the hook the record's writer calls before each
// file, until the test ends.
func SetBeforeRecordWrite(t interface{ Cleanup(func()) }, f func(path string)) {
	beforeRecordWrite.Store(&f)
	t.Cleanup(func() { beforeRecordWrite.Store(nil) })
}
