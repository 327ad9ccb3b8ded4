package store

import "context"

// TamperAuditForTest rewrites an entry's body behind the chain's back.
func TamperAuditForTest(ctx context.Context, s *Store, seq int64, body string) error {
	_, err := s.exec(ctx, s.db, `UPDATE audit SET body = ? WHERE seq = ?`, body, seq)
	return err
}
