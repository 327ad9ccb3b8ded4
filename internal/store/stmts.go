package store

import (
	"context"
	"database/sql"
	"fmt"
)

// rowsSQL is a multi-row statement: its text for n rows of cols parameters each.
type rowsSQL struct {
	cols int
	text func(n int) string
}

// maxChunkRows bounds the rows of one multi-row statement.
const maxChunkRows = 512

// chunkRows is the largest power of two of rows of cols parameters one statement takes.
func (s *Store) chunkRows(cols int) int {
	step := 1
	for step*2 <= min(maxChunkRows, s.dialect.maxParams()/cols) {
		step *= 2
	}
	return step
}

// chunked calls fn over consecutive [lo, hi) slices of n rows of cols parameters, each
// within the driver's limit. On SQLite each slice has a power-of-two length, so that a
// multi-row statement takes few distinct shapes, each prepared at Open; on PostgreSQL, where
// each statement is a round trip, slices are as long as the limit allows.
func (s *Store) chunked(n, cols int, fn func(lo, hi int) error) error {
	step := s.chunkRows(cols)
	for lo := 0; lo < n; {
		size := min(step, n-lo)
		for s.stmts != nil && size&(size-1) != 0 {
			size &= size - 1 // down to the highest power of two in it
		}
		if err := fn(lo, lo+size); err != nil {
			return err
		}
		lo += size
	}
	return nil
}

// prepareIngest prepares every shape of Ingest's statements on SQLite, where parsing a
// statement of hundreds of placeholders costs more than running it. It runs at Open, before
// any transaction: preparing later would need a second connection while a transaction holds
// one (an in-memory database has only one). PostgreSQL's driver caches prepared statements
// per connection by itself.
func (s *Store) prepareIngest(ctx context.Context) error {
	if s.dialect.name() != SQLite {
		return nil
	}
	s.stmts = map[string]*sql.Stmt{}
	for _, q := range ingestSQL {
		for n := s.chunkRows(q.cols); n >= 1; n /= 2 {
			text := q.text(n)
			st, err := s.db.PrepareContext(ctx, text)
			if err != nil {
				return fmt.Errorf("store: prepare: %w", err)
			}
			s.stmts[text] = st
		}
	}
	return nil
}

// closeStmts closes the prepared statements.
func (s *Store) closeStmts() {
	for _, st := range s.stmts {
		_ = st.Close()
	}
}

// execPrepared runs a statement of Ingest in tx: prepared at Open when it was, else as text.
func (s *Store) execPrepared(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st, ok := s.stmts[query]; ok {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return s.exec(ctx, tx, query, args...)
}

// queryPrepared runs a query of Ingest in tx: prepared at Open when it was, else as text.
func (s *Store) queryPrepared(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	if st, ok := s.stmts[query]; ok {
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return s.query(ctx, tx, query, args...)
}
