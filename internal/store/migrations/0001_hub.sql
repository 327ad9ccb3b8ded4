-- The hub's schema. One text for both drivers: {{id}} is the dialect's auto-increment key.
-- Times are Unix milliseconds (UTC).

CREATE TABLE clusters (
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    name          TEXT NOT NULL,
    cluster_type  TEXT NOT NULL,
    first_seen    BIGINT NOT NULL,
    last_seen     BIGINT NOT NULL,
    retired_at    BIGINT,
    PRIMARY KEY (control_plane, environment, name)
);
CREATE INDEX clusters_by_type ON clusters (control_plane, environment, cluster_type);

-- Registered (not retired) clusters per environment, for the cap: one row locked per write.
CREATE TABLE environment_counts (
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    clusters      BIGINT NOT NULL,
    PRIMARY KEY (control_plane, environment)
);

-- Registrations, retirements and returns: nothing leaves the inventory silently.
CREATE TABLE cluster_events (
    id            {{id}},
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    cluster       TEXT NOT NULL,
    at            BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    detail        TEXT NOT NULL
);
CREATE INDEX cluster_events_by_env ON cluster_events (control_plane, environment, at);

-- The newest report of each reconciler object (Kustomization, Application) of each cluster.
CREATE TABLE cluster_state (
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    cluster       TEXT NOT NULL,
    object        TEXT NOT NULL,
    cluster_type  TEXT NOT NULL,
    source        TEXT NOT NULL,
    gitops_commit TEXT NOT NULL,
    state         TEXT NOT NULL,
    reason        TEXT NOT NULL,
    message       TEXT NOT NULL,
    event_at      BIGINT NOT NULL,
    received_at   BIGINT NOT NULL,
    since_at      BIGINT NOT NULL,
    PRIMARY KEY (control_plane, environment, cluster, object)
);
-- Covers the counts by cluster type, commit and state (one index scan, no sort).
CREATE INDEX cluster_state_counts ON cluster_state (control_plane, environment, cluster_type, gitops_commit, state, cluster, since_at);

-- Every accepted report, until store.retention.
CREATE TABLE reports (
    id            {{id}},
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    cluster       TEXT NOT NULL,
    object        TEXT NOT NULL,
    cluster_type  TEXT NOT NULL,
    source        TEXT NOT NULL,
    gitops_commit TEXT NOT NULL,
    state         TEXT NOT NULL,
    reason        TEXT NOT NULL,
    message       TEXT NOT NULL,
    event_at      BIGINT NOT NULL,
    received_at   BIGINT NOT NULL
);
CREATE INDEX reports_by_cluster ON reports (cluster, event_at);
CREATE INDEX reports_by_received ON reports (received_at);

-- Digests of accepted report bodies, kept for the replay window, shared by every replica.
-- A replayed body has the same event time, so the key leads with it: inserts append.
CREATE TABLE replay (
    event_at   BIGINT NOT NULL,
    digest     TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (event_at, digest)
);

-- What a GitOps commit deploys: the main commit it promotes and its source commits.
CREATE TABLE gitops_commits (
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    sha           TEXT NOT NULL,
    main_commit   TEXT NOT NULL,
    sources       TEXT NOT NULL,
    committed_at  BIGINT NOT NULL,
    PRIMARY KEY (control_plane, environment, sha)
);

-- Promotions of main commits into environments: the deployment history.
CREATE TABLE deployments (
    id            {{id}},
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    main_commit   TEXT NOT NULL,
    gitops_commit TEXT NOT NULL,
    sources       TEXT NOT NULL,
    committed_at  BIGINT NOT NULL,
    started_at    BIGINT NOT NULL,
    finished_at   BIGINT,
    state         TEXT NOT NULL,
    description   TEXT NOT NULL
);
CREATE UNIQUE INDEX deployments_once ON deployments (control_plane, environment, main_commit, gitops_commit);
CREATE INDEX deployments_by_env ON deployments (control_plane, environment, started_at);

-- Leases: a key held by one holder until it expires.
CREATE TABLE leases (
    key        TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- The audit trail: append-only, each entry chained to the previous one by its hash.
CREATE TABLE audit (
    seq       BIGINT PRIMARY KEY,
    at        BIGINT NOT NULL,
    kind      TEXT NOT NULL,
    subject   TEXT NOT NULL,
    body      TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
