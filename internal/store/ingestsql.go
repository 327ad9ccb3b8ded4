package store

// The multi-row statements of Ingest, by the number of rows they take; Open prepares each
// shape once (see stmts.go).
var (
	replaySQL = rowsSQL{cols: 3, text: func(n int) string {
		return `INSERT INTO replay (event_at, digest, expires_at) VALUES ` + placeholders(n, 3) +
			` ON CONFLICT (event_at, digest) DO NOTHING RETURNING digest`
	}}
	knownSQL = rowsSQL{cols: 1, text: func(n int) string {
		return `SELECT name, retired_at FROM clusters WHERE control_plane = ? AND environment = ? AND name IN ` +
			placeholders(1, n)
	}}
	joinSQL = rowsSQL{cols: 6, text: func(n int) string {
		return `INSERT INTO clusters (control_plane, environment, name, cluster_type, first_seen, last_seen) VALUES ` +
			placeholders(n, 6) + ` ON CONFLICT (control_plane, environment, name) DO UPDATE SET retired_at = NULL, last_seen = excluded.last_seen`
	}}
	joinEventsSQL = rowsSQL{cols: 6, text: func(n int) string {
		return `INSERT INTO cluster_events (control_plane, environment, cluster, at, kind, detail) VALUES ` + placeholders(n, 6)
	}}
	touchSQL = rowsSQL{cols: 6, text: func(n int) string {
		return `INSERT INTO clusters (control_plane, environment, name, cluster_type, first_seen, last_seen) VALUES ` +
			placeholders(n, 6) + ` ON CONFLICT (control_plane, environment, name) DO UPDATE SET
			last_seen = excluded.last_seen, cluster_type = excluded.cluster_type
			WHERE excluded.last_seen > clusters.last_seen + ? OR excluded.cluster_type <> clusters.cluster_type`
	}}
	stateSQL = rowsSQL{cols: 13, text: func(n int) string {
		return `INSERT INTO cluster_state (control_plane, environment, cluster, object, cluster_type, source,
			gitops_commit, state, reason, message, event_at, received_at, since_at) VALUES ` + placeholders(n, 13) + `
			ON CONFLICT (control_plane, environment, cluster, object) DO UPDATE SET
			cluster_type = excluded.cluster_type, source = excluded.source, gitops_commit = excluded.gitops_commit,
			state = excluded.state, reason = excluded.reason, message = excluded.message, event_at = excluded.event_at,
			received_at = excluded.received_at,
			since_at = CASE WHEN cluster_state.gitops_commit = excluded.gitops_commit THEN cluster_state.since_at ELSE excluded.since_at END
			WHERE excluded.event_at >= cluster_state.event_at`
	}}
	historySQL = rowsSQL{cols: 12, text: func(n int) string {
		return `INSERT INTO reports (control_plane, environment, cluster, object, cluster_type, source,
			gitops_commit, state, reason, message, event_at, received_at) VALUES ` + placeholders(n, 12)
	}}
)

// ingestSQL lists them all.
var ingestSQL = []rowsSQL{replaySQL, knownSQL, joinSQL, joinEventsSQL, touchSQL, stateSQL, historySQL}
