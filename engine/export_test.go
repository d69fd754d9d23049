package engine

// StageStatus is status.json, for tests that read it back.
type StageStatus = stageStatus
