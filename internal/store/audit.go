package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// AuditEntry is one entry of the append-only audit trail. Hash covers the entry and the
// previous entry's hash, so that changing or removing an entry breaks the chain after it.
type AuditEntry struct {
	Seq      int64
	At       time.Time
	Kind     string // what was decided, such as "promotion"
	Subject  string // what it was about, such as "org/control-plane/dev@<sha>"
	Body     string // the decision's details (JSON)
	PrevHash string
	Hash     string
}

// ErrAuditChain reports an audit trail whose chain of hashes is broken.
var ErrAuditChain = errors.New("audit trail chain broken")

// maxAuditRetries bounds the retries of an append that lost a race for the next sequence.
const maxAuditRetries = 5

// AppendAudit appends an entry to the audit trail. Concurrent appends (several replicas)
// race for the next sequence number; the loser retries on the new end of the chain.
func (s *Store) AppendAudit(ctx context.Context, kind, subject, body string) (AuditEntry, error) {
	var err error
	for range maxAuditRetries {
		var e AuditEntry
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			e = AuditEntry{Seq: 1, At: s.now().UTC().Truncate(time.Millisecond), Kind: kind, Subject: subject, Body: body}
			row := s.queryRow(ctx, tx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`)
			if err := row.Scan(&e.Seq, &e.PrevHash); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			} else if err == nil {
				e.Seq++
			}
			e.Hash = e.digest()
			_, err := s.exec(ctx, tx, `INSERT INTO audit (seq, at, kind, subject, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				e.Seq, ms(e.At), e.Kind, e.Subject, e.Body, e.PrevHash, e.Hash)
			return err
		})
		if err == nil {
			return e, nil
		}
	}
	return AuditEntry{}, fmt.Errorf("store: append to the audit trail: %w", err)
}

// digest is the entry's hash over its fields and the previous hash.
func (e AuditEntry) digest() string {
	h := sha256.New()
	for _, f := range []string{e.PrevHash, strconv.FormatInt(e.Seq, 10), strconv.FormatInt(ms(e.At), 10), e.Kind, e.Subject, e.Body} {
		h.Write([]byte(strconv.Itoa(len(f))))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Audit lists the entries after seq, in order, at most limit.
func (s *Store) Audit(ctx context.Context, after int64, limit int) ([]AuditEntry, error) {
	rows, err := s.query(ctx, s.db, `SELECT seq, at, kind, subject, body, prev_hash, hash FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: read the audit trail: %w", err)
	}
	var out []AuditEntry
	err = eachRow(rows, func() error {
		var e AuditEntry
		var at int64
		err := rows.Scan(&e.Seq, &at, &e.Kind, &e.Subject, &e.Body, &e.PrevHash, &e.Hash)
		e.At = fromMS(at)
		out = append(out, e)
		return err
	})
	return out, err
}

// VerifyAudit checks the whole chain and returns ErrAuditChain naming the first entry
// whose hash or link does not hold.
func (s *Store) VerifyAudit(ctx context.Context) error {
	prev, next := "", int64(1)
	for {
		page, err := s.Audit(ctx, next-1, 1000)
		if err != nil {
			return err
		}
		for _, e := range page {
			if e.Seq != next || e.PrevHash != prev || e.digest() != e.Hash {
				return fmt.Errorf("%w at entry %d", ErrAuditChain, next)
			}
			prev, next = e.Hash, next+1
		}
		if len(page) < 1000 {
			return nil
		}
	}
}
