package render

// Files are the files of an assignment's folder, kept in one piece: the reconciler, the
// namespace and, unless it rendered empty, the platform config. The zero value has none.
type Files struct {
	data    []byte // the contents one after the other; nil for no files
	ns, cfg int    // where the namespace and the platform config start in data
	shell   bool   // the platform config is platform-config.sh, not platform-config.yaml
}

// NewFiles makes the files of a folder from their contents; an empty platform config is
// left out.
func NewFiles(reconciler, namespace, config []byte, shell bool) Files {
	data := make([]byte, 0, len(reconciler)+len(namespace)+len(config))
	data = append(append(append(data, reconciler...), namespace...), config...)
	return Files{data: data, ns: len(reconciler), cfg: len(reconciler) + len(namespace), shell: shell}
}

// File returns the content of the named file, nil when the folder has no such file (a file
// that exists and is empty is an empty, non-nil slice). The content must not be modified.
func (f Files) File(name string) []byte {
	if f.data == nil {
		return nil
	}
	switch name {
	case ReconcilerFile:
		return f.data[:f.ns:f.ns]
	case NamespaceFile:
		return f.data[f.ns:f.cfg:f.cfg]
	case f.configName():
		if f.cfg < len(f.data) {
			return f.data[f.cfg:]
		}
	}
	return nil
}

// Len is the number of files.
func (f Files) Len() int {
	switch {
	case f.data == nil:
		return 0
	case f.cfg < len(f.data):
		return 3
	default:
		return 2
	}
}

// Each calls fn for every file in name order.
func (f Files) Each(fn func(name string, content []byte) error) error {
	if f.data == nil {
		return nil
	}
	if err := fn(NamespaceFile, f.File(NamespaceFile)); err != nil {
		return err
	}
	if f.cfg < len(f.data) {
		if err := fn(f.configName(), f.data[f.cfg:]); err != nil {
			return err
		}
	}
	return fn(ReconcilerFile, f.File(ReconcilerFile))
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

func (f Files) configName() string {
	if f.shell {
		return ConfigFileSh
	}
	return ConfigFileYAML
}
