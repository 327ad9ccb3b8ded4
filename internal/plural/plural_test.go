package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "error", "0 errors"},
		{1, "error", "1 error"},
		{2, "file", "2 files"},
		{1, "cluster type", "1 cluster type"},
		{4, "deployment target", "4 deployment targets"},
	} {
		if got := Count(tc.n, tc.noun); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
}

func TestCountAs(t *testing.T) {
	if got := CountAs(1, "policy", "policies"); got != "1 policy" {
		t.Errorf("CountAs(1) = %q", got)
	}
	if got := CountAs(3, "policy", "policies"); got != "3 policies" {
		t.Errorf("CountAs(3) = %q", got)
	}
}
