package engine

// StageStatus is status.json, for tests that read it back.
type StageStatus = stageStatus

// MaxArtifactCopy is the largest artifact a run's record keeps a copy of.
const MaxArtifactCopy = maxArtifactCopy
