package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// changesChannel is the PostgreSQL notification channel on which a Store announces the
// environments whose inventory a committed transaction changed (reports stored, clusters
// retired), so that the replica holding an environment's promotion wait looks at once.
const changesChannel = "kalypso_hub_changes"

// maxNoticeBytes bounds one notification's payload (PostgreSQL's limit is 8000 bytes).
const maxNoticeBytes = 7000

// notice is one notification: who sent it and which environments changed.
type notice struct {
	Origin string      `json:"o"` // the sending Store, so that it skips its own notices
	Envs   [][2]string `json:"e"` // control plane, environment
}

// Changes receives the environments whose inventory another Store (another replica) changed.
type Changes struct {
	// Changed is called for each changed environment: control plane (OWNER/REPO) and name.
	Changed func(controlPlane, environment string)
	// Listening is called each time the listener is connected, at first and after a lost
	// connection (notices sent while it was lost are not delivered); nil: not called.
	Listening func()
	// Failed is called when the listener's connection fails; it connects again after a delay.
	Failed func(error)
}

// Listen delivers the changes other replicas commit until ctx ends, over a connection of its
// own that LISTENs on PostgreSQL; it returns nil when ctx ends. With SQLite (one replica,
// whose own writes wake its waits directly) it returns at once.
func (s *Store) Listen(ctx context.Context, c Changes) error {
	if s.dialect.name() != Postgres {
		return nil
	}
	delay := time.Second
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, c)
		if ctx.Err() != nil {
			break
		}
		if c.Failed != nil {
			c.Failed(fmt.Errorf("store: listen for changes: %w", err))
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
	return nil
}

// listenOnce connects, listens and delivers notices until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, c Changes) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return err
	}
	if c.Listening != nil {
		c.Listening()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var msg notice
		if json.Unmarshal([]byte(n.Payload), &msg) != nil || msg.Origin == s.origin {
			continue
		}
		for _, e := range msg.Envs {
			c.Changed(e[0], e[1])
		}
	}
}

// notifyChanged announces, in tx, the environments a transaction changes: PostgreSQL delivers
// the notices to every listener when tx commits, and drops them when it rolls back.
func (s *Store) notifyChanged(ctx context.Context, tx *sql.Tx, envs []envKey) error {
	if s.dialect.name() != Postgres || len(envs) == 0 {
		return nil
	}
	msg := notice{Origin: s.origin}
	size := 0
	flush := func() error {
		payload, err := json.Marshal(msg)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `SELECT pg_notify(?, ?)`, changesChannel, string(payload)); err != nil {
			return fmt.Errorf("notify changes: %w", err)
		}
		msg.Envs, size = nil, 0
		return nil
	}
	for _, e := range envs {
		n := len(e.cp) + len(e.env) + 8
		if size+n > maxNoticeBytes && len(msg.Envs) > 0 {
			if err := flush(); err != nil {
				return err
			}
		}
		msg.Envs, size = append(msg.Envs, [2]string{e.cp, e.env}), size+n
	}
	return flush()
}

// envsOf lists the distinct environments of reports, in their order.
func envsOf(reports []Report) []envKey {
	seen := map[envKey]bool{}
	var out []envKey
	for _, r := range reports {
		if k := (envKey{r.ControlPlane, r.Environment}); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
