// Package procstat reads what the process has used so far: CPU time and peak resident memory,
// for benchmarks and the reconcile phase log. Where the system does not say, both are zero.
package procstat
