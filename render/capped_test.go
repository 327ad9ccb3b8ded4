package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// runBounded executes text as an executor of an engine with limits l does, output included.
func runBounded(t *testing.T, l Limits, text string, data any) (string, error) {
	t.Helper()
	e := NewEngine(&scheduling.Snapshot{}, WithLimits(l))
	x := e.acquire()
	x.b.reset()
	x.buf.Reset()
	tpl, err := template.New("t").Funcs(x.funcMap()).Option("missingkey=default").Parse(text)
	require.NoError(t, err)
	addTicks(tpl)
	err = tpl.Execute(x.out, data)
	return x.buf.String(), err
}

// requireLimit asserts that err is a LimitError of the given setting.
func requireLimit(t *testing.T, err error, setting string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, ErrLimit)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	require.Equal(t, setting, le.Setting, err.Error())
	require.Contains(t, err.Error(), setting, "the message names the setting")
}

// TestCappedFunctionsRefuseBeforeAllocating: each function whose output size an argument
// chooses fails with the limit's error instead of making the value (each of these would take
// gigabytes or hours unbounded).
func TestCappedFunctionsRefuseBeforeAllocating(t *testing.T) {
	cases := map[string]struct{ text, setting string }{
		"until":            {`{{ until 10001 }}`, SettingMaxListLength},
		"until negative":   {`{{ until -10001 }}`, SettingMaxListLength},
		"untilStep":        {`{{ untilStep 0 3000000000 1 }}`, SettingMaxListLength},
		"untilStep down":   {`{{ untilStep 0 -3000000000 -2 }}`, SettingMaxListLength},
		"seq":              {`{{ seq 3000000000 }}`, SettingMaxListLength},
		"seq three":        {`{{ seq 0 1 3000000000 }}`, SettingMaxListLength},
		"repeat":           {`{{ repeat 1500000000 "x" | len }}`, SettingMaxFunctionBytes},
		"repeat huge":      {`{{ repeat 3000000000 "x" }}`, SettingMaxFunctionBytes},
		"indent":           {`{{ indent 1000000000 "a\nb" }}`, SettingMaxFunctionBytes},
		"nindent":          {`{{ nindent 1000000000 "a" }}`, SettingMaxFunctionBytes},
		"wrap":             {`{{ wrap 1 (repeat 6000000 "x ") }}`, SettingMaxFunctionBytes},
		"mustRegex":        {`{{ mustRegexReplaceAll "" (repeat 100000 "x") (repeat 1000 "r") }}`, SettingMaxFunctionBytes},
		"mustRegexLiteral": {`{{ mustRegexReplaceAllLiteral "" (repeat 100000 "x") (repeat 1000 "r") }}`, SettingMaxFunctionBytes},
		"wrapWith":         {`{{ wrapWith 1 (repeat 100000 "s") (repeat 100000 "x ") }}`, SettingMaxFunctionBytes},
		"replace empty":    {`{{ replace "" (repeat 100000 "n") (repeat 100000 "x") }}`, SettingMaxFunctionBytes},
		"regexReplaceAll":  {`{{ regexReplaceAll "" (repeat 100000 "x") (repeat 1000 "r") }}`, SettingMaxFunctionBytes},
		"regex literal":    {`{{ regexReplaceAllLiteral "x" (repeat 100000 "x") (repeat 1000 "r") }}`, SettingMaxFunctionBytes},
		"join separator":   {`{{ join (repeat 10000 "s") (until 10000) }}`, SettingMaxFunctionBytes},
		"printf width":     {`{{ printf "%0999999999d" 1 }}`, SettingMaxFunctionBytes},
		"printf star":      {`{{ printf "%*d" 999999999 1 }}`, SettingMaxFunctionBytes},
		"cat doubling":     {`{{ $s := "xxxxxxxx" }}{{ range until 100 }}{{ $s = cat $s $s }}{{ end }}`, SettingMaxFunctionBytes},
		"print doubling":   {`{{ $s := "xxxxxxxx" }}{{ range until 100 }}{{ $s = print $s $s }}{{ end }}`, SettingMaxFunctionBytes},
		"b64enc growth":    {`{{ $s := "xxxxxxxx" }}{{ range until 1000 }}{{ $s = b64enc $s }}{{ end }}`, SettingMaxFunctionBytes},
		"html growth":      {`{{ $s := "&&&&&&&&" }}{{ range until 3000 }}{{ $s = html $s }}{{ end }}`, SettingMaxFunctionBytes},
		"list of refs":     {`{{ $s := repeat 1000000 "x" }}{{ $l := list }}{{ range until 1000 }}{{ $l = append $l $s }}{{ end }}{{ toJson $l | len }}`, SettingMaxFunctionBytes},
		"splitList":        {`{{ splitList "" (repeat 20000 "x") | len }}`, SettingMaxListLength},
		"concat doubling":  {`{{ $l := until 10 }}{{ range until 100 }}{{ $l = concat $l $l }}{{ end }}`, SettingMaxListLength},
		"map in itself":    {`{{ $d := dict }}{{ $_ := set $d "a" $d }}{{ $d }}`, SettingMaxFunctionBytes},
		"merge in itself":  {`{{ $d := dict "x" 1 }}{{ $_ := merge $d (dict "a" $d) }}{{ toYaml $d }}`, SettingMaxFunctionBytes},
		"toYaml of refs":   {`{{ $s := repeat 1000000 "x" }}{{ toYaml (list $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s) }}`, SettingMaxFunctionBytes},
		"dict of refs":     {`{{ $s := repeat 4000000 "x" }}{{ dict "a" $s "b" $s "c" $s "d" $s "e" $s }}`, SettingMaxFunctionBytes},
		"stringify":        {`{{ $s := repeat 9000000 "x" }}{{ stringify (list $s $s) }}`, SettingMaxFunctionBytes},
		"output of a loop": {`{{ range until 10000 }}{{ repeat 1000 "x" }}{{ end }}`, SettingMaxAssignmentBytes},
	}
	for _, fn := range CappedFuncs() {
		tested := false
		for _, c := range cases {
			tested = tested || strings.Contains(c.text, "{{ "+fn+" ") || strings.Contains(c.text, "("+fn+" ")
		}
		assert.True(t, tested, "capped function %s has a case", fn)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := runBounded(t, Limits{MaxAssignmentBytes: 1 << 20}, c.text, nil)
			requireLimit(t, err, c.setting)
			assert.Less(t, time.Since(start), 10*time.Second)
		})
	}
}

// TestCappedFunctionsWithinLimits: below the limits the capped functions give sprig's bytes.
func TestCappedFunctionsWithinLimits(t *testing.T) {
	texts := []string{
		`{{ until 5 }}{{ until -3 }}{{ until 0 }}{{ until 10000 | len }}`,
		`{{ untilStep 0 10 3 }}{{ untilStep 10 0 -4 }}{{ untilStep 0 10 0 }}{{ untilStep 5 1 2 }}{{ untilStep 1 5 -1 }}`,
		`{{ seq 5 }}|{{ seq -3 }}|{{ seq 0 }}|{{ seq 2 6 }}|{{ seq 6 2 }}|{{ seq 0 2 9 }}|{{ seq 9 -3 0 }}|{{ seq 9 2 0 }}|{{ seq }}|{{ seq 1 2 3 4 }}`,
		`{{ repeat 3 "ab" }}{{ repeat 0 "x" }}`,
		`{{ indent 2 "a\nb" }}|{{ nindent 4 "a\n\nb" }}|{{ indent 0 "" }}`,
		`{{ wrap 3 "abc def ghi" }}|{{ wrapWith 4 "|" "abcdefgh ij" }}`,
		`{{ replace "a" "bb" "banana" }}|{{ replace "" "-" "héllo" }}`,
		`{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}|{{ regexReplaceAllLiteral "a" "aaa" "$1" }}`,
		`{{ join ", " (list "a" 1 "b") }}|{{ printf "%5d|%-4s|%.2f|%*d" 42 "x" 3.14159 3 7 }}`,
		`{{ cat "a" "b" 1 }}|{{ print "a" 1 }}|{{ println "x" }}|{{ html "<a>" }}|{{ js "'" }}|{{ urlquery "a b" }}`,
		`{{ toJson (dict "a" (list 1 2)) }}|{{ toYaml (dict "b" "c") }}|{{ stringify (dict "l" (list 1)) }}`,
		`{{ splitList "," "a,b" }}|{{ b64enc "hello" }}|{{ upper "x" }}|{{ add 1 2 }}|{{ trunc 2 "abc" }}`,
	}
	for _, text := range texts {
		got, err := runBounded(t, Limits{}, text, nil)
		require.NoError(t, err, text)
		want, err := execTemplate(t, text, nil)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
	}
}

// TestSeqAndUntilMatchSprig compares the counted versions with sprig over many arguments.
func TestSeqAndUntilMatchSprig(t *testing.T) {
	fm := sprig.TxtFuncMap()
	seq, untilStep := fm["seq"].(func(...int) string), fm["untilStep"].(func(int, int, int) []int)
	c := capped{&budget{limits: DefaultLimits()}}
	c.b.reset()
	for a := -4; a <= 4; a++ {
		for b := -4; b <= 4; b++ {
			got, err := c.seq(a, b)
			require.NoError(t, err)
			require.Equal(t, seq(a, b), got, "seq %d %d", a, b)
			for s := -3; s <= 3; s++ {
				got, err := c.seq(a, s, b)
				require.NoError(t, err)
				require.Equal(t, seq(a, s, b), got, "seq %d %d %d", a, s, b)
				steps, err := c.untilStep(a, b, s)
				require.NoError(t, err)
				require.Equal(t, untilStep(a, b, s), steps, "untilStep %d %d %d", a, b, s)
			}
		}
		got, err := c.seq(a)
		require.NoError(t, err)
		require.Equal(t, seq(a), got, "seq %d", a)
	}
}

// TestUntilStepNearOverflow: sprig's untilStep loops forever when the step overflows an int;
// the counted version makes the right elements.
func TestUntilStepNearOverflow(t *testing.T) {
	out, err := runBounded(t, Limits{}, `{{ untilStep 9223372036854775800 9223372036854775807 5 }}`, nil)
	require.NoError(t, err)
	assert.Equal(t, "[9223372036854775800 9223372036854775805]", out)
}

// TestRepeatNegativeIsAnError: strings.Repeat panics on a negative count.
func TestRepeatNegativeIsAnError(t *testing.T) {
	for _, text := range []string{`{{ repeat -1 "x" }}`, `{{ indent -1 "x" }}`} {
		_, err := runBounded(t, Limits{}, text, nil)
		require.Error(t, err, text)
	}
}

// TestFunctionBudgetIsPerAssignment: the budget is reset for each assignment.
func TestFunctionBudgetIsPerAssignment(t *testing.T) {
	e := NewEngine(&scheduling.Snapshot{}, WithLimits(Limits{MaxFunctionBytes: 1000}))
	x := e.acquire()
	tpl := template.Must(template.New("t").Funcs(x.funcMap()).Parse(`{{ repeat 600 "x" | len }}`))
	for i := 0; i < 3; i++ {
		x.b.reset()
		x.buf.Reset()
		require.NoError(t, tpl.Execute(x.out, nil))
		assert.Equal(t, "600", x.buf.String())
	}
	x.buf.Reset()
	requireLimit(t, tpl.Execute(x.out, nil), SettingMaxFunctionBytes)
}

// TestDeadlineStopsLoopsWithoutCalls: once the deadline has passed, a loop that calls no
// function and prints nothing stops at its next iteration, as does a recursive template.
func TestDeadlineStopsLoopsWithoutCalls(t *testing.T) {
	for _, text := range []string{
		`{{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`,
		`{{ define "r" }}{{ template "r" }}{{ template "r" }}{{ end }}{{ template "r" }}`,
		`{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}`,
	} {
		e := NewEngine(&scheduling.Snapshot{}, WithLimits(Limits{Timeout: time.Second}))
		x := e.acquire()
		x.b.reset()
		tpl := template.Must(template.New("t").Funcs(x.funcMap()).Parse(text))
		addTicks(tpl)
		timer := time.AfterFunc(100*time.Millisecond, func() { e.expired.Store(true) })
		start := time.Now()
		err := tpl.Execute(x.out, nil)
		timer.Stop()
		requireLimit(t, err, SettingTimeout)
		assert.Less(t, time.Since(start), 20*time.Second, text)
	}
}

// TestLimitErrorMessage names what went over, the limit and its setting.
func TestLimitErrorMessage(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", listLimitError("until would make 20000 elements", DefaultLimits()))
	assert.True(t, errors.Is(err, ErrLimit))
	assert.Equal(t, "wrapped: until would make 20000 elements: over the limit of 10000 elements (setting render.maxListLength)", err.Error())
}
