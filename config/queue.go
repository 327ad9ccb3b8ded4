package config

import (
	"strconv"
	"time"
)

// Queue holds the settings of the work queue: how failed work is tried again.
type Queue struct {
	MaxAttempts   int      `yaml:"maxAttempts"`   // tries of one key's work before it waits for the next event or resync
	RetryDelay    Duration `yaml:"retryDelay"`    // wait after the first failure; it doubles after each one
	MaxRetryDelay Duration `yaml:"maxRetryDelay"` // longest wait between two tries
}

// PreviewLane holds the settings of the previews' own lane of work.
type PreviewLane struct {
	Workers          int `yaml:"workers"`          // previews computed at the same time, apart from every other work
	PerAuthorPerHour int `yaml:"perAuthorPerHour"` // previews per pull request author and hour; 0: no bound
}

// Defaults of the work queue and the preview lane.
const (
	DefaultQueueMaxAttempts      = 6
	DefaultQueueRetryDelay       = time.Second
	DefaultQueueMaxRetryDelay    = time.Minute
	DefaultPreviewWorkers        = 1
	DefaultPreviewPerAuthorPerHr = 30
)

// defaultQueue returns the defaults of the queue settings.
func defaultQueue() Queue {
	return Queue{MaxAttempts: DefaultQueueMaxAttempts, RetryDelay: Duration(DefaultQueueRetryDelay), MaxRetryDelay: Duration(DefaultQueueMaxRetryDelay)}
}

// defaultPreviewLane returns the defaults of the preview lane.
func defaultPreviewLane() PreviewLane {
	return PreviewLane{Workers: DefaultPreviewWorkers, PerAuthorPerHour: DefaultPreviewPerAuthorPerHr}
}

// queueKeys lists the settings of the work queue and the preview lane, in documentation order.
func queueKeys() []Key {
	return []Key{
		key("workers", strconv.Itoa(DefaultWorkers), "Workers running the queued work (reconciles, validations, promotions), one key at a time each.",
			integer(func(c *Config) *int { return &c.Workers })),
		key("queueSize", strconv.Itoa(DefaultQueueSize), "Distinct keys of work waiting at most (environments, promotions, pull requests…); a delivery whose work coalesces into a waiting key is never refused, one that needs a new key beyond this is answered 503.",
			integer(func(c *Config) *int { return &c.QueueSize })),
		key("handlerTimeout", "5m", "Time limit of one run of a key of work.",
			dur(func(c *Config) *Duration { return &c.HandlerTimeout })),
		key("queue.maxAttempts", strconv.Itoa(DefaultQueueMaxAttempts), "Tries of one key's work before it waits for the next event or the resync.",
			integer(func(c *Config) *int { return &c.Queue.MaxAttempts })),
		key("queue.retryDelay", DefaultQueueRetryDelay.String(), "Wait after a key's first failure; it doubles after each one.",
			dur(func(c *Config) *Duration { return &c.Queue.RetryDelay })),
		key("queue.maxRetryDelay", "1m", "Longest wait between two tries of a key.",
			dur(func(c *Config) *Duration { return &c.Queue.MaxRetryDelay })),
		key("preview.workers", strconv.Itoa(DefaultPreviewWorkers), "Previews computed at the same time, by workers of their own that never delay reconciles and promotions.",
			integer(func(c *Config) *int { return &c.Preview.Workers })),
		key("preview.perAuthorPerHour", strconv.Itoa(DefaultPreviewPerAuthorPerHr), "Previews one pull request author gets per hour and installation; beyond it the check runs say so (neutral). 0: no bound.",
			integer(func(c *Config) *int { return &c.Preview.PerAuthorPerHour })),
	}
}

// queueProblems checks the settings of the work queue and the preview lane.
func (c *Config) queueProblems() []string {
	var p []string
	p = appendIf(p, c.Workers < 1, "workers", "must be at least 1")
	p = appendIf(p, c.QueueSize < 1, "queueSize", "must be at least 1")
	p = appendIf(p, c.HandlerTimeout <= 0, "handlerTimeout", "must be positive")
	p = appendIf(p, c.Queue.MaxAttempts < 1, "queue.maxAttempts", "must be at least 1")
	p = appendIf(p, c.Queue.RetryDelay <= 0, "queue.retryDelay", "must be positive")
	p = appendIf(p, c.Queue.MaxRetryDelay < c.Queue.RetryDelay, "queue.maxRetryDelay", "must be at least "+named("queue.retryDelay"))
	p = appendIf(p, c.Preview.Workers < 1, "preview.workers", "must be at least 1")
	return appendIf(p, c.Preview.PerAuthorPerHour < 0, "preview.perAuthorPerHour", "must not be negative (0: no bound)")
}
