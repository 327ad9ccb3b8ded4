// Package preview measures and describes what a change does to an environment's GitOps tree:
// the blast radius checked against the environment's guard, and the per-assignment unified
// diff within a character budget. It is pure: trees in, text and figures out.
package preview
