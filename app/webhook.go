package app

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// maxPayloadBytes is GitHub's cap on webhook payloads (25 MB).
const maxPayloadBytes = 25 << 20

// signatureHeader is the only signature accepted: HMAC-SHA256 of the body.
// The SHA-1 X-Hub-Signature header is ignored.
const signatureHeader = "X-Hub-Signature-256"

// Content types GitHub delivers webhooks with.
const (
	contentJSON = "application/json"
	contentForm = "application/x-www-form-urlencoded"
)

// Reasons of kalypso_webhooks_rejected_total.
const (
	RejectSignature    = "signature"     // no, malformed or wrong X-Hub-Signature-256
	RejectBadRequest   = "bad_request"   // no event type, unsupported content type, unreadable body
	RejectTooLarge     = "too_large"     // over 25 MB
	RejectBusy         = "busy"          // server.maxConcurrentBodies bodies already being read
	RejectQueueFull    = "queue_full"    // queueSize distinct keys of work already waiting, none of them this delivery's
	RejectShuttingDown = "shutting_down" // the server drains
)

// errShuttingDown refuses deliveries that arrive while the server drains.
var errShuttingDown = errors.New("app: shutting down")

// webhook receives deliveries: it checks what it can from the headers, reads the body into a
// bounded buffer, checks the signature and routes the event to keys of the work queue, so
// GitHub gets its answer before the work is done. The queue is bounded by distinct keys, not
// by deliveries: a delivery whose work coalesces into keys already waiting is never refused.
type webhook struct {
	s      *Server
	seen   deliveryLRU
	bodies *bodySlots
}

// newWebhookHandler builds the POST /api/github/hook handler.
func (s *Server) newWebhookHandler() *webhook {
	return &webhook{s: s, bodies: newBodySlots(s.cfg.Server.MaxConcurrentBodies, maxPayloadBytes)}
}

// ServeHTTP answers one delivery. Everything decided from the headers is
// decided before the body is read: a missing or malformed X-Hub-Signature-256
// or event type (400), a Content-Length over 25 MB (413), and every body slot
// taken (503). Only then is the body read, within server.readTimeout, into the
// slot's buffer, and its signature checked; the payload is copied out only
// for a valid delivery.
func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	event := r.Header.Get("X-GitHub-Event")
	label := s.eventLabel(event)
	s.counter(MetricWebhooksReceived, "event", label).Inc(1)
	logger := s.logger.With().
		Str(githubapp.LogKeyEventType, event).
		Str(githubapp.LogKeyDeliveryID, r.Header.Get("X-GitHub-Delivery")).
		Logger()
	ctx := logger.WithContext(r.Context())
	reject := func(status int, reason, msg string, err error) {
		h.reject(w, &logger, label, status, reason, msg, err)
	}

	mac, err := parseSignature(r.Header.Get(signatureHeader))
	if err != nil {
		reject(http.StatusBadRequest, RejectSignature, "missing or malformed "+signatureHeader+" (HMAC-SHA256) header", err)
		return
	}
	if event == "" {
		reject(http.StatusBadRequest, RejectBadRequest, "missing X-GitHub-Event header", nil)
		return
	}
	contentType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (contentType != contentJSON && contentType != contentForm) {
		reject(http.StatusBadRequest, RejectBadRequest, "unsupported Content-Type: use application/json", err)
		return
	}
	if r.ContentLength > maxPayloadBytes {
		reject(http.StatusRequestEntityTooLarge, RejectTooLarge, "payload too large", fmt.Errorf("Content-Length %d over %d bytes", r.ContentLength, maxPayloadBytes))
		return
	}
	slot, ok := h.bodies.acquire()
	if !ok {
		reject(http.StatusServiceUnavailable, RejectBusy, "too many deliveries being received, retry later", nil)
		return
	}
	defer h.bodies.release(slot)

	body, err := slot.read(r.Body, r.ContentLength)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		reject(http.StatusRequestEntityTooLarge, RejectTooLarge, "payload too large", err)
		return
	case err != nil:
		reject(http.StatusBadRequest, RejectBadRequest, "could not read the body", err)
		return
	}
	if !validSignature(s.cfg.GitHub.App.WebhookSecret.Value(), body, mac) {
		reject(http.StatusBadRequest, RejectSignature, "invalid webhook signature", errors.New("X-Hub-Signature-256 does not match the body"))
		return
	}
	payload, err := extractPayload(contentType, body)
	if err != nil {
		reject(http.StatusBadRequest, RejectBadRequest, "invalid form payload", err)
		return
	}
	h.dispatch(ctx, w, r, &logger, label, event, payload)
}

// dispatch routes a valid delivery to its work: 200 for a routed event or ping, 202 for an
// event type without a route, 503 when its work needs new keys beyond queueSize or the server
// drains. A redelivery of a recent delivery (same X-GitHub-Delivery) is answered 200 and
// skipped; an echo of the app's own write is answered 200, counted and dropped.
func (h *webhook) dispatch(ctx context.Context, w http.ResponseWriter, r *http.Request, logger *zerolog.Logger, label, event string, payload []byte) {
	logger.Info().Msg("Received webhook event")
	s := h.s
	if !s.events[event] || s.opts.router == nil || event == "ping" {
		if event == "ping" {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := r.Header.Get("X-GitHub-Delivery")
	if !h.seen.firstTime(id) {
		eventLogger(ctx, payload).Info().Msg(msgDuplicateDelivery)
		w.WriteHeader(http.StatusOK)
		return
	}
	if !s.inflight.add() {
		h.seen.forget(id)
		h.reject(w, logger, label, http.StatusServiceUnavailable, RejectShuttingDown, "shutting down, retry later", nil)
		return
	}
	round := s.deliveryRound(ctx, event, id, payload, &h.seen)
	routeCtx := context.WithValue(workq.WithOrigin(workq.WithRound(zerolog.Ctx(ctx).WithContext(s.workCtx), round), id), deliveryKey{}, id)
	echo, err := s.opts.router.Route(routeCtx, event, payload)
	round.Release(err) // the keys added hold the round until their work is done
	switch {
	case echo:
		s.counter(MetricWebhooksEchoes, "event", label).Inc(1)
		logger.Debug().Msg("webhook dropped: an echo of the app's own write")
		w.WriteHeader(http.StatusOK)
	case errors.Is(err, workq.ErrFull):
		h.seen.forget(id)
		h.reject(w, logger, label, http.StatusServiceUnavailable, RejectQueueFull, "work queue full, retry later", err)
	case errors.Is(err, workq.ErrStopped):
		h.seen.forget(id)
		h.reject(w, logger, label, http.StatusServiceUnavailable, RejectShuttingDown, "shutting down, retry later", nil)
	default: // a payload that cannot be routed is logged as a failed delivery
		w.WriteHeader(http.StatusOK)
	}
}

type deliveryKey struct{}

// DeliveryID returns the X-GitHub-Delivery of the delivery being routed ("" elsewhere).
func DeliveryID(ctx context.Context) string {
	id, _ := ctx.Value(deliveryKey{}).(string)
	return id
}

// reject answers a delivery that is not queued, counts and logs it. Nothing
// more is read from the connection, which closes after the answer: otherwise
// net/http would read up to 256 KiB of a body left unread, before answering
// and again after, waiting for it up to server.readTimeout.
func (h *webhook) reject(w http.ResponseWriter, logger *zerolog.Logger, label string, status int, reason, msg string, err error) {
	h.s.counter(MetricWebhooksFailed, "event", label).Inc(1)
	h.s.counter(MetricWebhooksRejected, "reason", reason).Inc(1)
	logger.Warn().Int("status", status).Str("reason", reason).AnErr("cause", err).Msg("rejected webhook: " + msg)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	w.Header().Set("Connection", "close")
	http.Error(w, msg, status)
}

// parseSignature decodes "sha256=<64 hex digits>".
func parseSignature(v string) ([]byte, error) {
	if v == "" {
		return nil, errors.New("no " + signatureHeader + " header (X-Hub-Signature, SHA-1, is not accepted)")
	}
	hexMAC, ok := strings.CutPrefix(v, "sha256=")
	if !ok || len(hexMAC) != 2*sha256.Size {
		return nil, errors.New(signatureHeader + ` is not "sha256=" followed by 64 hexadecimal digits`)
	}
	mac, err := hex.DecodeString(hexMAC)
	if err != nil {
		return nil, errors.New(signatureHeader + ` is not "sha256=" followed by 64 hexadecimal digits`)
	}
	return mac, nil
}

// validSignature compares the body's HMAC-SHA256 with mac in constant time.
func validSignature(secret string, body, mac []byte) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(m.Sum(nil), mac)
}

// extractPayload copies the JSON payload out of the body, which belongs to a
// reusable buffer: the body itself for application/json, the "payload" form
// field for application/x-www-form-urlencoded.
func extractPayload(contentType string, body []byte) ([]byte, error) {
	if contentType == contentJSON {
		return bytes.Clone(body), nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	return []byte(form.Get("payload")), nil
}
