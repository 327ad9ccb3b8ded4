//go:build !unix

package procstat

import "time"

// CPU is zero where the system does not say.
func CPU() time.Duration { return 0 }

// PeakRSS is zero where the system does not say.
func PeakRSS() int64 { return 0 }
