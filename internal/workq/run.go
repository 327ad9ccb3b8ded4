package workq

import (
	"context"
	"errors"
	"time"
)

// run is what a worker knows of the run in progress; it travels in the run's context.
type run struct {
	key     Key
	attempt int  // 1 for the first try
	last    bool // no retry follows a failure of this attempt
	after   time.Duration
}

type runKey struct{}

// Attempt returns the attempt number of the run in progress (1 for the first try) and whether
// it is the last one: a failure now is final. Outside a run it returns 1 and true.
func Attempt(ctx context.Context) (n int, last bool) {
	if r, ok := ctx.Value(runKey{}).(*run); ok {
		return r.attempt, r.last
	}
	return 1, true
}

// RequeueAfter asks for the key of the run in progress to run again after d, when the run
// ends without an error (a promotion that waits for clusters polls again). The shortest
// request wins. Outside a run it does nothing.
func RequeueAfter(ctx context.Context, d time.Duration) {
	if r, ok := ctx.Value(runKey{}).(*run); ok && d > 0 && (r.after == 0 || d < r.after) {
		r.after = d
	}
}

// permanent marks an error that a retry cannot heal.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as one no retry can heal: the run is not tried again.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err: err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}
