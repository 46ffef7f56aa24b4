package importer

import (
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/wing"
)

// testProducers is the registry the importer's tests import with: Harbor
// only, as cmd/tpctl builds it with Harbor's line.
var testProducers = func() *producers.Registry {
	r, err := producers.NewRegistry(wing.New())
	if err != nil {
		panic(err)
	}
	return r
}()
