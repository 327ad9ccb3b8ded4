package githubsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// WebhookMode selects how deliveries are sent.
type WebhookMode int

const (
	// WebhooksSync sends each delivery before the REST call or Server method that caused it returns.
	WebhooksSync WebhookMode = iota
	// WebhooksAsync sends deliveries in order from a background goroutine; see WaitWebhooks.
	WebhooksAsync
)

// DeliveryState is what happened to a webhook delivery.
type DeliveryState string

// Delivery states.
const (
	DeliveryDelivered DeliveryState = "delivered"  // the receiver answered (see StatusCode)
	DeliveryFailed    DeliveryState = "failed"     // the request failed (see Error)
	DeliveryQueued    DeliveryState = "queued"     // held by PauseWebhooks
	DeliveryPending   DeliveryState = "pending"    // waiting for the async sender
	DeliveryDropped   DeliveryState = "dropped"    // lost on purpose (DropWebhooks)
	DeliveryNoWebhook DeliveryState = "no_webhook" // no webhook URL was set
	DeliveryTooLarge  DeliveryState = "too_large"  // over MaxWebhookPayloadBytes: never sent
)

// MaxWebhookPayloadBytes is GitHub's cap on webhook payloads (25 MB): GitHub does not deliver a
// larger payload at all. The simulator records such an event as a delivery in state
// DeliveryTooLarge, without its body, and never sends it (nor redelivers it).
const MaxWebhookPayloadBytes = 25 << 20

// hookEvent is a webhook payload ready to be delivered.
type hookEvent struct {
	event  string
	action string
	body   []byte
}

// Delivery is one recorded webhook delivery.
type Delivery struct {
	ID         string        // X-GitHub-Delivery, kept by redeliveries
	Event      string        // X-GitHub-Event, for example "pull_request"
	Action     string        // the payload's "action", if any
	Body       []byte        // the exact bytes sent
	Header     http.Header   // the headers sent, signatures included
	URL        string        // the webhook URL when the delivery was recorded
	State      DeliveryState // what happened last
	StatusCode int           // the receiver's status code of the last attempt
	Error      string        // the transport error of the last attempt
	Attempts   int           // how many times it was sent
	At         time.Time     // when it was recorded or last sent
}

type hookBus struct {
	mu      sync.Mutex
	url     string
	secret  string
	mode    WebhookMode
	paused  bool
	drop    bool
	events  map[string]bool
	log     []*Delivery
	queued  []*Delivery
	pending []*Delivery
	running bool
	wg      sync.WaitGroup
	client  *http.Client
	now     func() time.Time
	hookID  int64
	appID   int64
}

func newHookBus(client *http.Client, now func() time.Time, appID int64) *hookBus {
	return &hookBus{client: client, now: now, hookID: 4242, appID: appID}
}

// SetWebhook sets the App's webhook URL and secret ("" URL stops sending).
func (s *Server) SetWebhook(url, secret string) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.url, s.hooks.secret = url, secret
}

// SetWebhookMode switches between synchronous and asynchronous delivery.
func (s *Server) SetWebhookMode(m WebhookMode) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.mode = m
}

// SetWebhookEvents limits deliveries to the given events, like an App's
// subscription; no arguments subscribes to every event.
func (s *Server) SetWebhookEvents(events ...string) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.events = nil
	if len(events) > 0 {
		s.hooks.events = map[string]bool{}
		for _, e := range events {
			s.hooks.events[e] = true
		}
	}
}

// PauseWebhooks holds new deliveries in a queue until ResumeWebhooks.
func (s *Server) PauseWebhooks() {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.paused = true
}

// ResumeWebhooks sends the held deliveries in order and stops holding.
func (s *Server) ResumeWebhooks() {
	b := s.hooks
	b.mu.Lock()
	b.paused = false
	queued := b.queued
	b.queued = nil
	b.mu.Unlock()
	for _, d := range queued {
		b.dispatch(d)
	}
}

// DropWebhooks makes new deliveries get lost (recorded as dropped; they
// can still be sent with Redeliver).
func (s *Server) DropWebhooks(drop bool) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.drop = drop
}

// WaitWebhooks waits until asynchronous deliveries have been sent.
func (s *Server) WaitWebhooks() { s.hooks.wait() }

// Deliveries returns a copy of every recorded delivery, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	out := make([]Delivery, 0, len(s.hooks.log))
	for _, d := range s.hooks.log {
		out = append(out, copyDelivery(d))
	}
	return out
}

// DeliveryStates is Deliveries without the bodies: what waiting for deliveries to be handled
// needs, without copying every payload.
func (s *Server) DeliveryStates() []Delivery {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	out := make([]Delivery, 0, len(s.hooks.log))
	for _, d := range s.hooks.log {
		c := *d
		c.Body, c.Header = nil, d.Header.Clone()
		out = append(out, c)
	}
	return out
}

// Redeliver sends a recorded delivery again with the same ID, headers and
// body bytes, and returns its updated record.
func (s *Server) Redeliver(id string) (Delivery, error) {
	b := s.hooks
	b.mu.Lock()
	var found *Delivery
	for _, d := range b.log {
		if d.ID == id {
			found = d
		}
	}
	b.mu.Unlock()
	if found == nil {
		return Delivery{}, fmt.Errorf("githubsim: no delivery %s", id)
	}
	if found.State == DeliveryTooLarge {
		b.mu.Lock()
		defer b.mu.Unlock()
		return copyDelivery(found), fmt.Errorf("githubsim: delivery %s was never sent: %s", id, found.Error)
	}
	b.send(found)
	b.mu.Lock()
	defer b.mu.Unlock()
	return copyDelivery(found), nil
}

func copyDelivery(d *Delivery) Delivery {
	c := *d
	c.Body = append([]byte(nil), d.Body...)
	c.Header = d.Header.Clone()
	return c
}

func (b *hookBus) wait() { b.wg.Wait() }

// deliver records events and sends them according to the current mode.
func (b *hookBus) deliver(events []*hookEvent) {
	for _, e := range events {
		if e == nil {
			continue
		}
		if d := b.record(e); d != nil {
			b.dispatch(d)
		}
	}
}

func (b *hookBus) record(e *hookEvent) *Delivery {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.events != nil && !b.events[e.event] {
		return nil
	}
	d := &Delivery{ID: newGUID(), Event: e.event, Action: e.action, Body: e.body, URL: b.url, At: b.now()}
	if len(e.body) > MaxWebhookPayloadBytes {
		d.Body, d.Header, d.State = nil, http.Header{}, DeliveryTooLarge
		d.Error = fmt.Sprintf("payload of %d bytes is over GitHub's cap of %d bytes: not delivered", len(e.body), MaxWebhookPayloadBytes)
		b.log = append(b.log, d)
		return nil
	}
	d.Header = b.headers(d)
	b.log = append(b.log, d)
	return d
}

func (b *hookBus) headers(d *Delivery) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitHub-Hookshot/githubsim")
	h.Set("X-GitHub-Event", d.Event)
	h.Set("X-GitHub-Delivery", d.ID)
	h.Set("X-GitHub-Hook-ID", strconv.FormatInt(b.hookID, 10))
	h.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	h.Set("X-GitHub-Hook-Installation-Target-ID", strconv.FormatInt(b.appID, 10))
	if b.secret != "" {
		h.Set("X-Hub-Signature", "sha1="+hmacHex(sha1.New, b.secret, d.Body))
		h.Set("X-Hub-Signature-256", Sign(b.secret, d.Body))
	}
	return h
}

// dispatch sends, queues or drops a recorded delivery.
func (b *hookBus) dispatch(d *Delivery) {
	b.mu.Lock()
	switch {
	case d.URL == "":
		d.State = DeliveryNoWebhook
	case b.drop:
		d.State = DeliveryDropped
	case b.paused:
		d.State = DeliveryQueued
		b.queued = append(b.queued, d)
	case b.mode == WebhooksAsync:
		d.State = DeliveryPending
		b.pending = append(b.pending, d)
		b.wg.Add(1)
		if !b.running {
			b.running = true
			go b.worker()
		}
	default:
		b.mu.Unlock()
		b.send(d)
		return
	}
	b.mu.Unlock()
}

func (b *hookBus) worker() {
	for {
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		d := b.pending[0]
		b.pending = b.pending[1:]
		b.mu.Unlock()
		b.send(d)
		b.wg.Done()
	}
}

// send POSTs a delivery and records the outcome.
func (b *hookBus) send(d *Delivery) {
	b.mu.Lock()
	url, header, body := d.URL, d.Header.Clone(), d.Body
	if url == "" {
		url = b.url
		d.URL = url
	}
	b.mu.Unlock()
	status, errText := post(b.client, url, header, body)
	b.mu.Lock()
	defer b.mu.Unlock()
	d.Attempts++
	d.StatusCode, d.Error, d.At = status, errText, b.now()
	d.State = DeliveryDelivered
	if errText != "" {
		d.State = DeliveryFailed
	}
}

func post(client *http.Client, url string, header http.Header, body []byte) (int, string) {
	if url == "" {
		return 0, "no webhook URL"
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, ""
}

// Sign returns the X-Hub-Signature-256 value of body: "sha256=" + hex HMAC-SHA256.
func Sign(secret string, body []byte) string {
	return "sha256=" + hmacHex(sha256.New, secret, body)
}

func hmacHex(h func() hash.Hash, secret string, body []byte) string {
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// newGUID returns a random version 4 UUID, the format of X-GitHub-Delivery.
func newGUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
