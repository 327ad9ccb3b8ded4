package promote

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/window"
)

// TestTwoWorkersWritingOneApprovalRunLeaveOne checks that two workers writing the check run of
// the same promotion at once (the push to main and the environment's step, say) leave one run:
// the fake holds each creation until the other worker creates too, which only a worker that
// did not wait for the first one's write does.
func TestTwoWorkersWritingOneApprovalRunLeaveOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "")
	var creating atomic.Int32
	both := make(chan struct{})
	w.gh.BeforeCall = func(method string) {
		if method != "CreateCheckRun" {
			return
		}
		if creating.Add(1) == 2 {
			close(both)
		}
		select { // meet the other creation, or give up once it is not coming
		case <-both:
		case <-time.After(200 * time.Millisecond):
		}
	}
	l := w.loc("dev", "cafe01")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			errs[i] = w.p.upsertApproval(context.Background(), w.gh, l, heldTitle, "held", heldButtons(window.Verdict{}, false))
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	n := 0
	for _, run := range w.gh.Runs[cp] {
		if run.GetName() == ApprovalCheckName("dev") && run.GetHeadSHA() == "cafe01" {
			n++
		}
	}
	require.Equal(t, 1, n, "one approval check run per commit and environment")
}
