package release

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The values each build is given for the version, the commit and the date.
const (
	testVersion = "v9.8.7"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
	testDate    = "2030-01-02T03:04:05Z"
)

// buildCommand is a go build invocation reduced to what decides the binary.
type buildCommand struct {
	Env     []string // CGO_ENABLED=…, GOTOOLCHAIN=…
	Flags   []string // -trimpath …
	LDFlags []string // -s -w -X …
	Main    string   // ./cmd/kalypso
}

// words splits a shell command line into words, honouring double and single quotes.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// parseGoBuild reads a `[VAR=x ...] go build [flags] [-ldflags "..."] [-o out] ./pkg` line.
func parseGoBuild(t *testing.T, line string, env []string) buildCommand {
	t.Helper()
	w := words(line)
	i := 0
	for ; i < len(w) && strings.Contains(w[i], "=") && !strings.HasPrefix(w[i], "-"); i++ {
		if strings.HasPrefix(w[i], "CGO_ENABLED=") || strings.HasPrefix(w[i], "GOTOOLCHAIN=") {
			env = append(env, w[i])
		}
	}
	if i+1 >= len(w) || w[i+1] != "build" {
		t.Fatalf("not a go build command: %q", line)
	}
	b := buildCommand{Env: env}
	for i += 2; i < len(w); i++ {
		switch {
		case w[i] == "-ldflags":
			i++
			b.LDFlags = words(w[i])
		case w[i] == "-o":
			i++
		case strings.HasPrefix(w[i], "-"):
			b.Flags = append(b.Flags, w[i])
		default:
			b.Main = w[i]
		}
	}
	return b
}

// normalize sorts what order does not matter for.
func (b buildCommand) normalize() buildCommand {
	slices.Sort(b.Env)
	slices.Sort(b.Flags)
	return b
}

// makeBuild is what `make build` runs, from make's dry run.
func makeBuild(t *testing.T) buildCommand {
	out := mustRun(t, root, nil, "make", "--no-print-directory", "-n", "build", "VERSION="+testVersion,
		"COMMIT="+testCommit, "BUILD_DATE="+testDate, "BIN="+filepath.Join(t.TempDir(), "kalypso"))
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " build ") {
			return parseGoBuild(t, line, nil)
		}
	}
	t.Fatalf("no go build in make -n build:\n%s", out)
	return buildCommand{}
}

// dockerBuild is the Dockerfile's go build, with its ENV and build arguments applied.
func dockerBuild(t *testing.T) buildCommand {
	text := strings.ReplaceAll(readFile(t, "Dockerfile"), "\\\n", " ")
	var env []string
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "ENV "); ok {
			env = append(env, words(rest)...)
		}
		rest, ok := strings.CutPrefix(line, "RUN ")
		if !ok || !strings.Contains(rest, "go build") {
			continue
		}
		rest = strings.NewReplacer("${VERSION}", testVersion, "${COMMIT}", testCommit, "${BUILD_DATE}", testDate).Replace(rest)
		rest = regexp.MustCompile(`GOOS=\S+ GOARCH=\S+ `).ReplaceAllString(rest, "")
		var kept []string
		for _, e := range env {
			if strings.HasPrefix(e, "CGO_ENABLED=") || strings.HasPrefix(e, "GOTOOLCHAIN=") {
				kept = append(kept, e)
			}
		}
		return parseGoBuild(t, rest, kept)
	}
	t.Fatal("no RUN go build in the Dockerfile")
	return buildCommand{}
}

// goreleaserBuild is the build of .goreleaser.yaml, its templates filled in.
func goreleaserBuild(t *testing.T) buildCommand {
	var cfg struct {
		Builds []struct {
			Main    string   `json:"main"`
			Env     []string `json:"env"`
			Flags   []string `json:"flags"`
			LDFlags []string `json:"ldflags"`
		} `json:"builds"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, ".goreleaser.yaml")), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) != 1 {
		t.Fatalf("want one build in .goreleaser.yaml, got %d", len(cfg.Builds))
	}
	b := cfg.Builds[0]
	fill := strings.NewReplacer("{{ .Tag }}", testVersion, "{{ .FullCommit }}", testCommit, "{{ .Date }}", testDate)
	var ld []string
	for _, l := range b.LDFlags {
		ld = append(ld, words(fill.Replace(l))...)
	}
	return buildCommand{Env: b.Env, Flags: b.Flags, LDFlags: ld, Main: b.Main}
}

// make build, the Dockerfile and GoReleaser build the same binary: static, -trimpath, the same
// linker flags stamping the same version, commit and date.
func TestBuildFlagsAgree(t *testing.T) {
	want := makeBuild(t).normalize()
	if !slices.Contains(want.Env, "CGO_ENABLED=0") || !slices.Contains(want.Flags, "-trimpath") || want.Main != "./cmd/kalypso" {
		t.Fatalf("make build: %+v", want)
	}
	pkg := "github.com/kalypso-gitops/kalypso/internal/version."
	for _, stamp := range []string{pkg + "version=" + testVersion, pkg + "commit=" + testCommit, pkg + "date=" + testDate} {
		if !slices.Contains(want.LDFlags, stamp) {
			t.Errorf("make build does not stamp %s: %v", stamp, want.LDFlags)
		}
	}
	docker := dockerBuild(t).normalize()
	docker.Env = slices.DeleteFunc(docker.Env, func(e string) bool { return strings.HasPrefix(e, "GOTOOLCHAIN=") })
	if !equalBuild(want, docker) {
		t.Errorf("the Dockerfile builds differently from make build:\n make:       %+v\n Dockerfile: %+v", want, docker)
	}
	gr := goreleaserBuild(t).normalize()
	gr.Env = slices.DeleteFunc(gr.Env, func(e string) bool { return strings.HasPrefix(e, "GOTOOLCHAIN=") })
	if !equalBuild(want, gr) {
		t.Errorf("GoReleaser builds differently from make build:\n make:       %+v\n GoReleaser: %+v", want, gr)
	}
}

func equalBuild(a, b buildCommand) bool {
	return slices.Equal(a.Env, b.Env) && slices.Equal(a.Flags, b.Flags) && slices.Equal(a.LDFlags, b.LDFlags) && a.Main == b.Main
}

// The comparison notices a difference.
func TestBuildFlagsComparisonNoticesADifference(t *testing.T) {
	a := parseGoBuild(t, `CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X a.b=c" -o x ./cmd/kalypso`, nil)
	b := parseGoBuild(t, `CGO_ENABLED=0 go build -trimpath -ldflags "-s -X a.b=c" -o y ./cmd/kalypso`, nil)
	if equalBuild(a.normalize(), b.normalize()) {
		t.Fatal("-w missing went unnoticed")
	}
	if !equalBuild(a.normalize(), parseGoBuild(t, `CGO_ENABLED=0 go build -ldflags '-s -w -X a.b=c' -trimpath -o z ./cmd/kalypso`, nil).normalize()) {
		t.Fatal("the order of flags or the quotes should not matter")
	}
}
