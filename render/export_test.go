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

// TextTemplateSetUps is how many of the engine's idle executors made their bounded functions
// or their copies of a template's manifests, which only text/template needs.
func TextTemplateSetUps(e *Engine) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, x := range e.free {
		made := x.funcs != nil
		for _, c := range x.clones {
			made = made || c != nil
		}
		if made {
			n++
		}
	}
	return n
}

// OutputLayers is how many layers outputs have over their base (0 just after a compaction).
func OutputLayers(o Outputs) int { return len(o.layers) }
