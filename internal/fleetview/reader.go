package fleetview

import (
	"context"
	"net/http"
)

// Reader returns the user signed in to the fleet view in r, and a check of whether that user
// can read a repository (OWNER/REPO), answered from a short cache: other pages, such as the
// hub's, sign in the same way. ErrNoSession when r has no valid session or sign-in is off.
func (s *Service) Reader(r *http.Request) (string, func(ctx context.Context, repo string) (bool, error), error) {
	if s.seal == nil || s.opts.OAuth == nil {
		return "", nil, ErrNoSession
	}
	sess, err := s.seal.fromRequest(r)
	if err != nil {
		return "", nil, err
	}
	return sess.Login, func(ctx context.Context, repo string) (bool, error) {
		return s.access.canRead(ctx, sess.Token, repo, s.opts.OAuth.canRead)
	}, nil
}
