package promote

import "sync"

// keyLocks serialises, within one process, the writes that read a check run and then create
// or update it: two workers (the push to main and the environment's promotion step, say) must
// not both find none and both create one. Replicas rely on ghport.FindCheckRun taking the
// newest run of an identity.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

// keyLock is the lock of one key and how many hold or wait for it.
type keyLock struct {
	mu    sync.Mutex
	users int
}

// lock takes the lock of key, waiting for it, and returns its release. A key's entry lives
// only while someone holds or waits for it.
func (k *keyLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyLock{}
	}
	l := k.m[key]
	if l == nil {
		l = &keyLock{}
		k.m[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
