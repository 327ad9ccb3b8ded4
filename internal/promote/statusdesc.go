package promote

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/plural"
)

// The descriptions of the kalypso/<env> status, written by the promoter and read back by it
// after a restart and by the fleet view. Each is made and read here, next to each other.

func waitingDesc(compliant, required int) string {
	return fmt.Sprintf("%d/%d %s", compliant, required, descDeploying)
}

func deployedDesc(clusters int) string { return "deployed to " + plural.Count(clusters, "cluster") }

func failedDesc(cluster string) string { return "cluster " + cluster + " failed" }

func timedOutDesc(after time.Duration, compliant, required int, missing string) string {
	return fmt.Sprintf("timed out after %s: %s%s", after, waitingDesc(compliant, required), missing)
}

var (
	waitingRE  = regexp.MustCompile(`^(\d{1,6})/(\d{1,6}) ` + descDeploying + `$`)
	deployedRE = regexp.MustCompile(`^deployed to (\d{1,6}) clusters?$`)
	failedRE   = regexp.MustCompile(`^cluster ([A-Za-z0-9._/:@+=~-]{1,200}) failed$`)
	timedOutRE = regexp.MustCompile(`^timed out after [0-9a-z.]+: (\d{1,6})/(\d{1,6}) ` + descDeploying)
)

// Progress is what a kalypso/<env> status description says of a promotion's clusters.
type Progress struct {
	Compliant, Expected int    // clusters compliant and expected, when the description counts them
	FailedCluster       string // the cluster that failed, when one did
}

// ReadProgress reads a description this package wrote for a status in state (pending,
// success or failure); anything else reads as no progress.
func ReadProgress(state, desc string) Progress {
	switch state {
	case "pending":
		if m := waitingRE.FindStringSubmatch(desc); m != nil {
			return Progress{Compliant: atoi(m[1]), Expected: atoi(m[2])}
		}
	case "success":
		if m := deployedRE.FindStringSubmatch(desc); m != nil {
			return Progress{Compliant: atoi(m[1]), Expected: atoi(m[1])}
		}
	case "failure":
		if m := failedRE.FindStringSubmatch(desc); m != nil {
			return Progress{FailedCluster: m[1]}
		}
		if m := timedOutRE.FindStringSubmatch(desc); m != nil {
			return Progress{Compliant: atoi(m[1]), Expected: atoi(m[2])}
		}
	}
	return Progress{}
}

// IsWaiting reports whether a pending description counts compliant clusters (the merge is done).
func IsWaiting(desc string) bool { return waitingRE.MatchString(desc) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
