package importer

// Memory. An import holds the plan's trials (about 140 bytes each) for the
// whole run and, while the snapshot is being created, the canonical plan
// twice more; its live heap peaks at about three times the plan file's
// size (38 MB for the 12 MB plan of 100,000 trials) and is about 18 MB
// while results are read. Go's default collector lets the heap grow to
// twice the live size before collecting, so that peak alone would cost
// about 100 MB of resident memory. A soft memory limit of four times the
// plan size, never below MinMemoryLimit, keeps the heap near what is live
// during the short peak at no measurable cost in time, and grows with the
// plan so that a plan too big for it is never starved (the limit is soft:
// the collector gives way rather than thrash).

// MinMemoryLimit is the smallest soft memory limit SoftMemoryLimit
// suggests.
const MinMemoryLimit = 48 << 20

// SoftMemoryLimit suggests a soft memory limit (runtime/debug
// SetMemoryLimit) for importing a plan file of planSize bytes. The
// command applies it only when GOMEMLIMIT is not set; a library never
// changes the runtime's settings on its own.
func SoftMemoryLimit(planSize int64) int64 {
	return max(MinMemoryLimit, 4*planSize)
}
