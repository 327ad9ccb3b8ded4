// Package scheduling is the control-plane model of Kalypso: it decodes the objects of a
// control plane's main branch, an environment's branch and the registered workload
// repositories (Load, strictly, with every error at its file and line), assigns deployment
// targets to cluster types with the scheduling policies' label selectors (Schedule), tells what
// a change between two snapshots affects (Diff), and reads the promotion chain declared on
// the environments (PromotionChain).
//
// It is pure: it reads file systems given to it and does no other I/O, knows nothing of
// GitHub or git, and reads no clock.
package scheduling
