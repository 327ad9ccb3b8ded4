package render

// Files are the files of an assignment's folder: the reconciler, the namespace and, unless it
// rendered empty, the platform config. Each file is kept as a skeleton (skeleton.go): its
// content with every occurrence of the assignment's namespace cut out. Files of assignments
// that differ only by their namespace share one skeleton (the reconciler of a deployment
// target on every cluster type, the platform config of a cluster type for every target), so
// an environment's outputs take a fraction of their size. The representation is canonical:
// the same contents and namespace give equal (reflect.DeepEqual) Files however they were
// rendered. The zero value has no files.
type Files struct {
	ns            string    // what the skeletons' cuts stand for; "" when they have none
	rec, nsf, cfg *skeleton // the reconciler, namespace and platform config; nil cfg: no platform config
	shell         bool      // the platform config is platform-config.sh, not platform-config.yaml
}

// NewFiles makes the files of a folder from their contents; an empty platform config is
// left out.
func NewFiles(reconciler, namespace, config []byte, shell bool) Files {
	var c cutter
	return c.files([3][]byte{reconciler, namespace, config}, "", shell, nil, nil)
}

// File returns the content of the named file, nil when the folder has no such file (a file
// that exists and is empty is an empty, non-nil slice). The content must not be modified.
func (f Files) File(name string) []byte {
	if s := f.skeleton(name); s != nil {
		return s.content(f.ns)
	}
	return nil
}

// Len is the number of files.
func (f Files) Len() int {
	switch {
	case f.rec == nil:
		return 0
	case f.cfg != nil:
		return 3
	default:
		return 2
	}
}

// Each calls fn for every file in name order. The contents of one call share one
// allocation; they must not be modified.
func (f Files) Each(fn func(name string, content []byte) error) error {
	if f.rec == nil {
		return nil
	}
	names := [3]string{NamespaceFile, f.configName(), ReconcilerFile}
	skels := [3]*skeleton{f.nsf, f.cfg, f.rec}
	size := 0
	for _, s := range skels {
		if s != nil && s.cuts() > 0 {
			size += s.size(f.ns)
		}
	}
	buf := make([]byte, 0, size)
	for i, s := range skels {
		if s == nil {
			continue
		}
		content := s.text()
		if s.cuts() > 0 {
			start := len(buf)
			buf = s.appendTo(buf, f.ns)
			content = buf[start:len(buf):len(buf)]
		}
		if err := fn(names[i], content); err != nil {
			return err
		}
	}
	return nil
}

// Map returns the files as a map of name to content.
func (f Files) Map() map[string][]byte {
	out := make(map[string][]byte, f.Len())
	_ = f.Each(func(name string, content []byte) error {
		out[name] = content
		return nil
	})
	return out
}

func (f Files) skeleton(name string) *skeleton {
	if f.rec == nil {
		return nil
	}
	switch name {
	case ReconcilerFile:
		return f.rec
	case NamespaceFile:
		return f.nsf
	case f.configName():
		return f.cfg
	}
	return nil
}

func (f Files) configName() string {
	if f.shell {
		return ConfigFileSh
	}
	return ConfigFileYAML
}
