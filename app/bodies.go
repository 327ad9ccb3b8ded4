package app

import (
	"errors"
	"io"
	"net/http"
	"runtime/debug"
	"sync"
	"time"
)

const (
	// keptBodyBytes is the largest buffer a body slot keeps once deliveries stop:
	// common payloads fit, so a quiet server holds at most bound × 1 MiB.
	keptBodyBytes = 1 << 20
	// bodyTrimDelay is how long no body may be read before larger buffers are dropped.
	bodyTrimDelay = time.Second
	// firstChunkedBytes is the first buffer size for a body of unknown length.
	firstChunkedBytes = 32 << 10
)

// bodySlots bounds the webhook bodies read at the same time
// (server.maxConcurrentBodies). Each slot keeps its buffer between deliveries,
// so a flood of large bodies, signed or not, reuses the same bound × 25 MB
// instead of allocating (and leaving garbage) for each one. Once no body has
// been read for bodyTrimDelay, buffers over keptBodyBytes are dropped and the
// memory is returned to the operating system.
type bodySlots struct {
	limit        int
	returnMemory func() // gives freed memory back to the operating system

	mu    sync.Mutex
	free  []*bodySlot
	inUse int
	trim  *time.Timer
	trims int // trims that dropped a buffer, for tests
}

// bodySlot is one permission to read a body, with its reusable buffer.
type bodySlot struct {
	limit int
	buf   []byte
}

// newBodySlots returns n slots reading bodies of at most limit bytes.
func newBodySlots(n, limit int) *bodySlots {
	p := &bodySlots{limit: limit, returnMemory: debug.FreeOSMemory, free: make([]*bodySlot, n)}
	for i := range p.free {
		p.free[i] = &bodySlot{limit: limit}
	}
	return p
}

// acquire takes a free slot, or reports false at once when every slot is in use.
func (p *bodySlots) acquire() (*bodySlot, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return nil, false
	}
	slot := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.inUse++
	return slot, true
}

// release gives a slot back; when none is left in use and a large buffer is
// kept, a trim is scheduled.
func (p *bodySlots) release(slot *bodySlot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, slot)
	p.inUse--
	if p.inUse > 0 || cap(slot.buf) <= keptBodyBytes {
		return
	}
	if p.trim == nil {
		p.trim = time.AfterFunc(bodyTrimDelay, p.trimIdle)
		return
	}
	p.trim.Reset(bodyTrimDelay)
}

// trimIdle drops the buffers over keptBodyBytes if no body is being read,
// then returns the memory to the operating system.
func (p *bodySlots) trimIdle() {
	p.mu.Lock()
	if p.inUse > 0 {
		p.mu.Unlock()
		return // the last release will schedule the trim again
	}
	dropped := false
	for _, slot := range p.free {
		if cap(slot.buf) > keptBodyBytes {
			slot.buf = nil
			dropped = true
		}
	}
	if dropped {
		p.trims++
	}
	p.mu.Unlock()
	if dropped {
		p.returnMemory()
	}
}

// inUseCount returns how many slots are taken, for tests.
func (p *bodySlots) inUseCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inUse
}

// buffered returns the bytes held by the free slots' buffers, for tests.
func (p *bodySlots) buffered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, slot := range p.free {
		n += cap(slot.buf)
	}
	return n
}

// read reads the whole body into the slot's buffer and returns it; the result
// is valid until the slot is released. length is the request's Content-Length
// (already checked against the limit), or -1 when unknown: the buffer then
// grows up to the limit, and one byte more is an *http.MaxBytesError.
func (b *bodySlot) read(r io.Reader, length int64) ([]byte, error) {
	if length > int64(b.limit) {
		return nil, &http.MaxBytesError{Limit: int64(b.limit)}
	}
	if length >= 0 {
		if int64(cap(b.buf)) < length {
			b.buf = nil
			b.buf = make([]byte, length)
		}
		body := b.buf[:length]
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	body := b.buf[:0]
	if cap(body) < firstChunkedBytes {
		body = make([]byte, 0, firstChunkedBytes)
	}
	for {
		if len(body) == cap(body) {
			grown := make([]byte, len(body), min(2*cap(body), b.limit+1))
			copy(grown, body)
			body = grown
		}
		n, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		b.buf = body[:0]
		if len(body) > b.limit {
			return nil, &http.MaxBytesError{Limit: int64(b.limit)}
		}
		if errors.Is(err, io.EOF) {
			return body, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
