package scheduling

// docs/reference.md documents every kind and field from the types of this package: their doc
// comments and their default and example tags. Regenerate it after a change (make docs);
// internal/refdoc's tests fail when it is stale or a field lacks documentation.
//go:generate go run ../internal/refdoc/gen -src . -out ../docs/reference.md
