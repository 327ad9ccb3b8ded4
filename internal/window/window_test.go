package window

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustWindow(t *testing.T, name string, kind Kind, schedule string, d time.Duration, tz string) Window {
	t.Helper()
	w, err := New(name, kind, schedule, d, tz)
	require.NoError(t, err)
	return w
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// Europe/Paris moves from CET (+01:00) to CEST (+02:00) at 2026-03-29 02:00 local and back at
// 2026-10-25 03:00 local; America/New_York moves at 2026-03-08 02:00 and 2026-11-01 02:00.
func TestDecideTimeZonesAndDaylightSaving(t *testing.T) {
	businessHours := func(t *testing.T) []Window {
		return []Window{mustWindow(t, "business-hours", Allow, "0 9 * * 1-5", 8*time.Hour, "Europe/Paris")}
	}
	nineOClock := func(t *testing.T) []Window {
		return []Window{mustWindow(t, "nine", Allow, "0 9 * * *", time.Hour, "Europe/Paris")}
	}
	nightly := func(t *testing.T) []Window {
		return []Window{mustWindow(t, "night", Deny, "30 2 * * *", time.Hour, "Europe/Paris")}
	}
	overnight := func(t *testing.T) []Window {
		return []Window{mustWindow(t, "overnight", Deny, "0 1 * * *", 3*time.Hour, "Europe/Paris")}
	}
	tests := []struct {
		name    string
		windows func(t *testing.T) []Window
		now     string
		open    bool
		by      string // the deciding window's name, "" for none
		until   string // RFC3339, "" for zero
	}{
		{"inside business hours in winter", businessHours, "2026-03-27T08:00:00Z", true, "business-hours", "2026-03-27T16:00:00Z"},
		{"after business hours on Friday opens Monday in summer time", businessHours, "2026-03-27T16:30:00Z", false, "business-hours", "2026-03-30T07:00:00Z"},
		{"weekend", businessHours, "2026-03-28T10:00:00Z", false, "business-hours", "2026-03-30T07:00:00Z"},
		{"nine CET is 08:00 UTC the day before the change", nineOClock, "2026-03-28T08:30:00Z", true, "nine", "2026-03-28T09:00:00Z"},
		{"nine CEST is 07:00 UTC the day of the change", nineOClock, "2026-03-29T08:30:00Z", false, "nine", "2026-03-30T07:00:00Z"},
		{"the day of the change the window starts at 07:00 UTC", nineOClock, "2026-03-29T07:00:00Z", true, "nine", "2026-03-29T08:00:00Z"},
		{"back to CET in autumn", nineOClock, "2026-10-25T07:30:00Z", false, "nine", "2026-10-25T08:00:00Z"},
		{"a start in the skipped hour does not happen that day", nightly, "2026-03-29T00:45:00Z", true, "", ""},
		{"the nightly deny the day before the change", nightly, "2026-03-28T01:45:00Z", false, "night", "2026-03-28T02:30:00Z"},
		{"a start in the repeated hour happens in CEST, then again in CET", nightly, "2026-10-25T00:45:00Z", false, "night", "2026-10-25T02:30:00Z"},
		{"the CET start of the repeated hour", nightly, "2026-10-25T01:45:00Z", false, "night", "2026-10-25T02:30:00Z"},
		{"a duration is elapsed time across the change", overnight, "2026-03-29T02:30:00Z", false, "overnight", "2026-03-29T03:00:00Z"},
		{"it ends three hours after its start", overnight, "2026-03-29T03:00:00Z", true, "", ""},
		{"New York business hours after its own change", func(t *testing.T) []Window {
			return []Window{mustWindow(t, "ny", Allow, "0 9 * * 1-5", 8*time.Hour, "America/New_York")}
		}, "2026-03-09T13:30:00Z", true, "ny", "2026-03-09T21:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Decide(tc.windows(t), at(t, tc.now))
			require.Equal(t, tc.open, v.Open, v.String())
			if tc.by == "" {
				require.Nil(t, v.By, v.String())
			} else {
				require.NotNil(t, v.By)
				require.Equal(t, tc.by, v.By.Name)
			}
			if tc.until == "" {
				require.True(t, v.Until.IsZero(), v.Until.String())
			} else {
				require.True(t, at(t, tc.until).Equal(v.Until), "until %s, want %s", v.Until.UTC(), tc.until)
			}
		})
	}
}

func TestDecideDenyWinsOverAllow(t *testing.T) {
	ws := []Window{
		mustWindow(t, "always", Allow, "0 0 * * *", 24*time.Hour, "UTC"),
		mustWindow(t, "freeze", Deny, "0 0 24 12 *", 72*time.Hour, "UTC"),
	}
	v := Decide(ws, at(t, "2026-12-25T12:00:00Z"))
	require.False(t, v.Open)
	require.Equal(t, "freeze", v.By.Name)
	require.True(t, at(t, "2026-12-27T00:00:00Z").Equal(v.Until), v.Until.String())
	require.Contains(t, v.String(), `closed by deny window "freeze" (0 0 24 12 * for 72h, UTC); opens 2026-12-27 00:00 UTC`)
	require.True(t, Decide(ws, at(t, "2026-12-27T00:00:00Z")).Open)
}

func TestDecideOpensAfterDenyOnlyWithinAnAllowWindow(t *testing.T) {
	ws := []Window{
		mustWindow(t, "mornings", Allow, "0 8 * * *", 4*time.Hour, "UTC"),
		mustWindow(t, "maintenance", Deny, "0 7 * * *", 2*time.Hour, "UTC"),
	}
	v := Decide(ws, at(t, "2026-05-01T08:30:00Z"))
	require.False(t, v.Open)
	require.Equal(t, "maintenance", v.By.Name)
	require.True(t, at(t, "2026-05-01T09:00:00Z").Equal(v.Until), v.Until.String())
	v = Decide(ws, at(t, "2026-05-01T13:00:00Z"))
	require.Equal(t, "mornings", v.By.Name)
	require.True(t, at(t, "2026-05-02T09:00:00Z").Equal(v.Until), "the next morning opens when the maintenance ends: %s", v.Until)
}

func TestDecideWithoutWindowsIsOpen(t *testing.T) {
	v := Decide(nil, time.Now())
	require.True(t, v.Open)
	require.Nil(t, v.By)
	require.Equal(t, "no promotion window applies", v.Short())
}

func TestDecideNeverOpening(t *testing.T) {
	ws := []Window{mustWindow(t, "forever", Deny, "* * * * *", 2*time.Minute, "UTC")}
	v := Decide(ws, at(t, "2026-05-01T08:30:00Z"))
	require.False(t, v.Open)
	require.True(t, v.Until.IsZero())
	require.Equal(t, "does not open within a year", v.Opens())
}

func TestNewRefusesBadWindows(t *testing.T) {
	for _, tc := range []struct {
		kind     Kind
		schedule string
		d        time.Duration
		tz       string
		want     string
	}{
		{"maybe", "0 9 * * *", time.Hour, "UTC", `kind "maybe"`},
		{Allow, "0 9 * *", time.Hour, "UTC", "expected exactly 5 fields"},
		{Allow, "0 9 * * *", 0, "UTC", "duration 0s is not positive"},
		{Allow, "0 9 * * *", time.Hour, "Mars/Olympus", `time zone "Mars/Olympus"`},
		{Allow, "0 9 * * *", time.Hour, "Local", `time zone "Local"`},
		{Allow, "CRON_TZ=Europe/Paris 0 9 * * *", time.Hour, "UTC", "write the time zone in timeZone"},
		{Allow, "@every 1h", time.Hour, "UTC", "no @every"},
	} {
		_, err := New("w", tc.kind, tc.schedule, tc.d, tc.tz)
		require.ErrorIs(t, err, ErrInvalid)
		require.Contains(t, err.Error(), tc.want)
		require.True(t, errors.Is(err, ErrInvalid))
	}
}
