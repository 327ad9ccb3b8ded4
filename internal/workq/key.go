package workq

import "fmt"

// Lane is the pool of workers a key runs in: previews have their own, so that they never
// delay reconciles and promotions.
type Lane int

// Lanes.
const (
	LaneMain    Lane = iota // reconciles, validations, promotions, routing
	LanePreview             // previews of pull requests
)

// Key names one unit of work. Two adds of equal keys are the same work.
type Key struct {
	Lane Lane
	Kind string // what the work is, e.g. "environment"
	Inst int64  // the installation
	Repo string // owner/name of the repository the work is about
	Name string // what within it: an environment, a branch, a pull request number…
}

// String formats the key for logs.
func (k Key) String() string {
	s := fmt.Sprintf("%s/%d", k.Kind, k.Inst)
	if k.Repo != "" {
		s += "/" + k.Repo
	}
	if k.Name != "" {
		s += "/" + k.Name
	}
	return s
}

// Need is what an add asks of the next run of its key besides converging. The needs of adds
// that coalesce are merged; nil asks nothing more.
type Need interface {
	// Merge returns the need that asks both this and later (which may be nil).
	Merge(later Need) Need
}

// merge combines two needs, either of which may be nil.
func merge(a, b Need) Need {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return a.Merge(b)
}
