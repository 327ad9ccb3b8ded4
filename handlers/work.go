package handlers

import (
	"context"
	"fmt"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// Work runs one key with what its coalesced adds need; the work queue calls it, one run per
// key at a time. An error is retried by the queue with backoff, the need kept. The decisions
// it records in the audit trail name what made the run due (see workContext).
func (c *Core) Work(ctx context.Context, key workq.Key, need workq.Need) error {
	ctx = workContext(ctx, key)
	switch key.Kind {
	case KindBranch:
		return c.workBranch(ctx, key)
	case KindEnvironment:
		reports, _ := need.(Reports)
		return c.workEnvironment(ctx, envOfKey(key), reports)
	case KindMain:
		reports, _ := need.(Reports)
		return c.workMain(ctx, key.Inst, repoOfKey(key), reports)
	case KindPromotion:
		return c.workPromotion(ctx, envOfKey(key))
	case KindPreview:
		return c.workPreview(ctx, key)
	case KindClick:
		clicks, _ := need.(Clicks)
		return c.workClicks(ctx, key, clicks)
	case KindIndex:
		n, _ := need.(IndexNeed)
		return c.workIndex(ctx, key.Inst, n)
	case KindInstallations:
		return c.workInstallations(ctx)
	}
	return workq.Permanent(fmt.Errorf("unknown kind of work %q", key.Kind))
}

// workContext is the context of a key's run: its logger names the key, and the decisions it
// records in the audit trail name the run's origin (a delivery, "resync" or "poll").
func workContext(ctx context.Context, key workq.Key) context.Context {
	return audit.WithDelivery(keyLogger(ctx, key), workq.OriginOf(ctx))
}

// keyLogger adds the key's installation and repository to the context's logger.
func keyLogger(ctx context.Context, key workq.Key) context.Context {
	lc := zerolog.Ctx(ctx).With().Str("work", key.String())
	if key.Inst != 0 {
		lc = lc.Int64(githubapp.LogKeyInstallationID, key.Inst)
	}
	if key.Repo != "" {
		repo := repoOfKey(key)
		lc = lc.Str(githubapp.LogKeyRepositoryOwner, repo.Owner).Str(githubapp.LogKeyRepositoryName, repo.Name)
	}
	l := lc.Logger()
	return l.WithContext(ctx)
}
