package importer

// Memory. An import holds the plan's trials (about 140 bytes each) for the
// whole run and, while the snapshot is created, the plan's canonical form
// too; its live heap peaks at under three times the plan file's size
// (about 33 MB for the 11.8 MB plan of 100,000 trials) and is about 18 MB
// while results are read. Go's default collector lets the heap grow to
// twice the live size before collecting, so that short peak alone would
// cost about 85 MB of resident memory. A soft limit of three times the
// plan size plus MemoryHeadroom, never below MinMemoryLimit, keeps the
// heap near what is live during the peak at no measurable cost in time
// (a limit below the live peak would make the collector run constantly),
// and grows with the plan, so a larger plan is never starved; the limit is
// soft, so the collector gives way rather than thrash.

// MinMemoryLimit is the smallest soft memory limit SoftMemoryLimit
// suggests.
const MinMemoryLimit = 32 << 20

// MemoryHeadroom is added to three times the plan size for what does not
// scale with the plan: read buffers of the workers, encoders, the runtime.
const MemoryHeadroom = 8 << 20

// SoftMemoryLimit suggests a soft memory limit (runtime/debug
// SetMemoryLimit) for importing a plan file of planSize bytes. The
// command applies it only when GOMEMLIMIT is not set; a library never
// changes the runtime's settings on its own.
func SoftMemoryLimit(planSize int64) int64 {
	return max(MinMemoryLimit, 3*planSize+MemoryHeadroom)
}
