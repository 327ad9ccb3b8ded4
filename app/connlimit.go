package app

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// MetricConnectionsEvicted counts the public listener's connections closed to make room for
// a new one while every connection was taken.
const MetricConnectionsEvicted = "kalypso_public_connections_evicted_total"

// connLimiter is the public listener: it serves at most max connections at once. When all
// are taken, a new connection takes the place of the oldest one that is not serving a request
// (still sending its first request's headers, or idle between requests), which is closed;
// when every connection is serving a request, Accept waits until one ends. So clients that
// never finish their headers hold at most max connections, each with at most
// server.maxHeaderBytes of headers, and cannot keep a webhook out: it waits for no timeout.
//
// The HTTP server must report its connections' states to connState (http.Server.ConnState).
type connLimiter struct {
	net.Listener
	max     int
	evicted func() // called for each connection closed to make room

	mu      sync.Mutex
	freed   *sync.Cond                 // signalled when a connection ends
	conns   map[net.Conn]*list.Element // every open connection; nil element: serving a request
	spare   *list.List                 // the connections not serving a request, oldest first
	waiting int                        // Accept calls waiting for room
	closed  bool
}

// limitConnections wraps ln so that it serves at most max connections at once.
func limitConnections(ln net.Listener, max int, evicted func()) *connLimiter {
	l := &connLimiter{Listener: ln, max: max, evicted: evicted, conns: map[net.Conn]*list.Element{}, spare: list.New()}
	l.freed = sync.NewCond(&l.mu)
	return l
}

// Accept accepts the next connection, closing the oldest spare connection when all are taken,
// or waiting for one to end when none is spare.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.conns) >= l.max && !l.closed {
		if el := l.spare.Front(); el != nil {
			victim := el.Value.(net.Conn)
			l.forget(victim)
			_ = victim.Close() // its server goroutine ends on the read error
			l.evicted()
			continue
		}
		l.waiting++
		l.freed.Wait()
		l.waiting--
	}
	if l.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.conns[c] = l.spare.PushBack(c)
	return c, nil
}

// Close closes the listener and wakes an Accept waiting for room.
func (l *connLimiter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.freed.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// connState follows the HTTP server's connections: a connection serving a request is not
// spare; one that becomes idle is, as the newest spare one. A new connection is spare from
// Accept on, in the order it was accepted: its StateNew, reported later by its own goroutine,
// may come after a newer connection's and does not move it.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, open := l.conns[c]
	if !open {
		return // closed to make room, or not accepted here
	}
	switch state {
	case http.StateActive:
		if el != nil {
			l.spare.Remove(el)
			l.conns[c] = nil
		}
	case http.StateNew:
		if el == nil {
			l.conns[c] = l.spare.PushBack(c)
		}
	case http.StateIdle:
		if el != nil {
			l.spare.MoveToBack(el)
		} else {
			l.conns[c] = l.spare.PushBack(c)
		}
	case http.StateClosed, http.StateHijacked:
		l.forget(c)
		l.freed.Signal()
	}
}

// forget drops a connection; the caller holds l.mu.
func (l *connLimiter) forget(c net.Conn) {
	if el := l.conns[c]; el != nil {
		l.spare.Remove(el)
	}
	delete(l.conns, c)
}
