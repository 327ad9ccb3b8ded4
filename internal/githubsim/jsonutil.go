package githubsim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/google/go-github/v62/github"
)

func ptr[T any](v T) *T { return &v }

func ts(t time.Time) *github.Timestamp { return &github.Timestamp{Time: t.UTC()} }

// tsOrNil returns nil for the zero time.
func tsOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// toMap converts a go-github struct into a JSON object.
func toMap(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		return map[string]any{}
	}
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return map[string]any{}
	}
	return m
}

// withNulls sets each missing key of m to JSON null.
func withNulls(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
	return m
}

// fromMap converts a JSON object into a go-github struct.
func fromMap[T any](m map[string]any) *T {
	data, err := json.Marshal(m)
	if err != nil {
		return new(T)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		return new(T)
	}
	return out
}

// sortBy sorts items by an ordered key, keeping the order of equal keys.
func sortBy[T any, K cmp.Ordered](items []T, key func(T) K) {
	slices.SortStableFunc(items, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
}

func itoa(n int) string { return strconv.Itoa(n) }

var zeroTime time.Time

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func sortStrings(lists ...[]string) {
	for _, l := range lists {
		slices.Sort(l)
	}
}
