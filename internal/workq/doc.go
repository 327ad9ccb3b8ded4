// Package workq is the app's work queue: webhooks and the resync name keys of work (an
// environment, a control plane's main, a promotion, a pull request's preview…) and workers
// run them, reading the current state from GitHub and git rather than from the event.
//
// It is client-go's keyed, deduplicating, rate-limited work queue
// (k8s.io/client-go/util/workqueue) with what the app adds on top:
//
//   - At most one run and one pending run per key: client-go never hands a key to two workers
//     at once, and adds of a key that is already waiting coalesce into it. The queue is
//     bounded by the number of distinct keys waiting, not by the number of adds.
//   - Needs: an add may say what the next run must do besides converging (for an environment,
//     which branch heads get a check run); the needs of coalesced adds merge.
//   - Rounds: a delivery, or a resync, is done when every key it added, and every key those
//     runs added in turn, has run. The app logs a delivery as processed then.
//   - Retries: a failed run is tried again with exponential backoff, a bounded number of
//     times, keeping its needs and rounds; each retry and the final failure are logged.
package workq
