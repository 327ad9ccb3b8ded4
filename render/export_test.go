package render

// CompiledRuns is how many manifests the engine's idle executors ran compiled.
func CompiledRuns(e *Engine) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, x := range e.free {
		n += x.ran
	}
	return n
}
