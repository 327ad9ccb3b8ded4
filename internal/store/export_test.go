package store

import "context"

// TamperAuditForTest rewrites an entry's body behind the chain's back.
func TamperAuditForTest(ctx context.Context, s *Store, seq int64, body string) error {
	_, err := s.exec(ctx, s.db, `UPDATE audit SET body = ? WHERE seq = ?`, body, seq)
	return err
}

// NotifyRolledBackForTest announces a change of environment env of control plane cp in a
// transaction that it then rolls back.
func NotifyRolledBackForTest(ctx context.Context, s *Store, cp, env string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := s.notifyChanged(ctx, tx, []envKey{{cp, env}}); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Rollback()
}
