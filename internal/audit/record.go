// Package audit records every governance decision of promotions in the hub's hash-chained,
// append-only audit trail (see store.Store.AppendAudit), serves it at /api/v1/audit with
// filters and as JSON lines, and verifies its chain.
package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Kinds of decisions.
const (
	KindPin        = "pin"             // a commit pinned into an environment (automatically or approved)
	KindPromotion  = "promotion"       // a promotion's end: deployed to the clusters, or failed
	KindApproval   = "approval"        // a Promote click counted towards the quorum
	KindRefusal    = "refusal"         // a click or request that did not count, with why
	KindAcceptance = "acceptance"      // a blast radius accepted
	KindOverride   = "window-override" // an admin promoted despite a closed window
	KindWindowHold = "window-hold"     // a closed window held an automatic promotion
	KindRollback   = "rollback"        // a pin moved back to a previously deployed commit
	KindHold       = "hold"            // automatic promotion into and out of an environment stopped
	KindRelease    = "release"         // a hold released
)

// App is the actor of the decisions the app makes by itself.
const App = "kalypso"

// Record is what a decision says: who, about what (control plane, environment, commits),
// why, and from which webhook delivery. Its JSON is the audit entry's body, so the chain of
// hashes covers every field.
type Record struct {
	Actor        string `json:"actor"`
	ControlPlane string `json:"controlPlane"`
	Environment  string `json:"environment,omitempty"`
	Commit       string `json:"commit,omitempty"`   // the main commit decided on
	Previous     string `json:"previous,omitempty"` // the commit the environment pinned before
	Reason       string `json:"reason,omitempty"`
	Delivery     string `json:"delivery,omitempty"` // X-GitHub-Delivery of the webhook that caused it
}

// Subject names what a record is about: "<owner>/<repo>/<environment>@<commit>".
func (r Record) Subject() string {
	s := r.ControlPlane + "/" + r.Environment
	if r.Commit != "" {
		s += "@" + r.Commit
	}
	return s
}

// Appender appends to the audit trail (implemented by *store.Store).
type Appender interface {
	AppendAudit(ctx context.Context, kind, subject, body string) (store.AuditEntry, error)
}

// Append records a decision; the delivery comes from ctx when the record has none.
func Append(ctx context.Context, a Appender, kind string, r Record) error {
	r.Delivery = cmp.Or(r.Delivery, DeliveryOf(ctx))
	r.Actor = cmp.Or(r.Actor, App)
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	_, err = a.AppendAudit(ctx, kind, r.Subject(), string(body))
	return err
}

type deliveryKey struct{}

// WithDelivery marks ctx as the work of a webhook delivery.
func WithDelivery(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, deliveryKey{}, id)
}

// DeliveryOf returns the delivery WithDelivery marked ctx with, "" when none.
func DeliveryOf(ctx context.Context) string {
	id, _ := ctx.Value(deliveryKey{}).(string)
	return id
}

// Entry is an audit entry with its record decoded, as the API serves it.
type Entry struct {
	Seq      int64     `json:"seq"`
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Subject  string    `json:"subject"`
	Record             // the decision (empty for an entry that is not a decision record)
	PrevHash string    `json:"prevHash"`
	Hash     string    `json:"hash"`
}

// decode turns a stored entry into an Entry.
func decode(e store.AuditEntry) Entry {
	out := Entry{Seq: e.Seq, At: e.At, Kind: e.Kind, Subject: e.Subject, PrevHash: e.PrevHash, Hash: e.Hash}
	_ = json.Unmarshal([]byte(e.Body), &out.Record) // other bodies (not records) leave it empty
	return out
}
