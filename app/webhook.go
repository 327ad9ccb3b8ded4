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
	RejectQueueFull    = "queue_full"    // queueSize events already waiting
	RejectShuttingDown = "shutting_down" // the server drains
)

// errShuttingDown refuses deliveries that arrive while the server drains.
var errShuttingDown = errors.New("app: shutting down")

// webhook receives deliveries: it checks what it can from the headers, reads
// the body into a bounded buffer, checks the signature and hands the event to
// a bounded queue of workers, so GitHub gets its answer before the event is processed.
type webhook struct {
	s        *Server
	handlers map[string]githubapp.EventHandler
	queue    githubapp.Scheduler
	bodies   *bodySlots
}

// newWebhookHandler builds the POST /api/github/hook handler.
func (s *Server) newWebhookHandler() *webhook {
	queue := githubapp.QueueAsyncScheduler(s.cfg.QueueSize, s.cfg.Workers,
		githubapp.WithSchedulingMetrics(s.registry),
		githubapp.WithAsyncErrorCallback(s.onAsyncError),
		githubapp.WithContextDeriver(s.deriveContext),
	)
	handlers := map[string]githubapp.EventHandler{}
	for i := len(s.opts.handlers) - 1; i >= 0; i-- { // the first handler of an event type wins
		for _, event := range s.opts.handlers[i].Handles() {
			handlers[event] = s.opts.handlers[i]
		}
	}
	return &webhook{
		s:        s,
		handlers: handlers,
		queue:    &drainingScheduler{inner: queue, s: s},
		bodies:   newBodySlots(s.cfg.Server.MaxConcurrentBodies, maxPayloadBytes),
	}
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

// dispatch queues a valid delivery: 200 for a handled event or ping, 202 for
// an event type without a handler, 503 when the queue is full or the server drains.
func (h *webhook) dispatch(ctx context.Context, w http.ResponseWriter, r *http.Request, logger *zerolog.Logger, label, event string, payload []byte) {
	logger.Info().Msg("Received webhook event")
	handler, ok := h.handlers[event]
	if !ok {
		if event == "ping" {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	err := h.queue.Schedule(ctx, githubapp.Dispatch{
		Handler:    handler,
		EventType:  event,
		DeliveryID: r.Header.Get("X-GitHub-Delivery"),
		Payload:    payload,
	})
	switch {
	case err == nil:
		w.WriteHeader(http.StatusOK)
	case errors.Is(err, githubapp.ErrCapacityExceeded):
		h.reject(w, logger, label, http.StatusServiceUnavailable, RejectQueueFull, "queue full, retry later", nil)
	case errors.Is(err, errShuttingDown):
		h.reject(w, logger, label, http.StatusServiceUnavailable, RejectShuttingDown, "shutting down, retry later", nil)
	default:
		h.s.counter(MetricWebhooksFailed, "event", label).Inc(1)
		logger.Error().Str("error", h.s.tokens.redact(err.Error())).Msg("webhook dispatch failed")
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
	}
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
