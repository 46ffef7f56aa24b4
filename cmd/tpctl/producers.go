package main

import (
	"github.com/tuneplane/tpctl/producers"
	harborwing "github.com/tuneplane/tpctl/producers/harbor/wing"
	"github.com/tuneplane/tpctl/producers/inspect"
	"github.com/tuneplane/tpctl/producers/lmeval"
)

// newRegistry is the registry of the producers tpctl reads, one line per
// producer, in the order plan init --root tries them (docs/layout.md,
// "Adding a producer"). It is built here, explicitly: no wing registers
// itself.
func newRegistry() (*producers.Registry, error) {
	return producers.NewRegistry(
		harborwing.New(),
		inspect.New(),
		lmeval.New(),
	)
}

// producers returns the app's registry, built on first use.
func (a *app) producers() *producers.Registry {
	if a.registry == nil {
		r, err := newRegistry()
		if err != nil {
			// Two producers of one format: a programming error that
			// TestRegistry catches before any release.
			panic(err)
		}
		a.registry = r
	}
	return a.registry
}
