-- Holds of environments: while a row exists, no automatic promotion goes into or out of the
-- environment (set by a rollback, removed by a release; both recorded in the audit trail).
CREATE TABLE holds (
    control_plane TEXT NOT NULL,
    environment   TEXT NOT NULL,
    held_by       TEXT NOT NULL,
    main_commit   TEXT NOT NULL, -- the commit pinned when the hold was set (the rollback's)
    reason        TEXT NOT NULL,
    since         BIGINT NOT NULL,
    PRIMARY KEY (control_plane, environment)
);
