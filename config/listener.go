package config

// DefaultMaxConnections is the default of server.maxConnections.
const DefaultMaxConnections = 1024

// listenerKeys lists the settings that bound what the public listener holds, in
// documentation order.
func listenerKeys() []Key {
	return []Key{
		key("server.maxConnections", "1024", "Connections the public listener serves at once; more wait, unread, in the operating system's queue until one closes. Each holds at most server.maxHeaderBytes of headers, so this bounds the memory anonymous clients can take.",
			integer(func(c *Config) *int { return &c.Server.MaxConnections })),
	}
}

// listenerProblems checks the public listener's bounds.
func (c *Config) listenerProblems() []string {
	return appendIf(nil, c.Server.MaxConnections < 1, "server.maxConnections", "must be at least 1")
}
