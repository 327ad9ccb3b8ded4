package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shell returns the path of a shell the completion tests run; `make test` installs zsh and
// fish (`make shells`). It never skips.
func shell(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: run `make shells` (apt-get install zsh fish; `make test` does it first)", name)
	}
	return p
}

// script writes the completion script for a shell into a file.
func script(t *testing.T, sh string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "completion", sh)
	require.Equal(t, 0, code, stderr)
	p := filepath.Join(t.TempDir(), "kalypso."+sh)
	require.NoError(t, os.WriteFile(p, []byte(stdout), 0o644))
	return p
}

// bashComplete runs the bash completion function on a command line; the last word is the one
// being completed.
func bashComplete(t *testing.T, file string, words ...string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	prog := "source " + file + "; COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" +
		strconv.Itoa(len(words)-1) + "; _kalypso; printf '%s\\n' \"${COMPREPLY[@]}\""
	out, err := exec.Command(shell(t, "bash"), "-c", prog).CombinedOutput()
	require.NoError(t, err, string(out))
	return strings.Fields(string(out))
}

func TestBashCompletion(t *testing.T) {
	file := script(t, "bash")
	require.Equal(t, []string{"render"}, bashComplete(t, file, "kalypso", "ren"))
	require.Equal(t, []string{"validate", "version"}, bashComplete(t, file, "kalypso", "v"))
	require.Equal(t, []string{"--main-dir"}, bashComplete(t, file, "kalypso", "render", "--ma"))
	require.Equal(t, []string{"--accept-blast-radius"}, bashComplete(t, file, "kalypso", "plan", "--acc"))
	require.Equal(t, []string{"text", "json"}, bashComplete(t, file, "kalypso", "validate", "--output", ""))
	require.Equal(t, []string{"zsh"}, bashComplete(t, file, "kalypso", "completion", "z"))

	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "gitops"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gitfile"), nil, 0o644))
	require.Equal(t, []string{filepath.Join(dir, "gitops")}, bashComplete(t, file, "kalypso", "render", "--out", filepath.Join(dir, "git")),
		"a folder flag completes folders only")
}

func TestFishCompletion(t *testing.T) {
	file := script(t, "fish")
	complete := func(line string) string {
		t.Helper()
		out, err := exec.Command(shell(t, "fish"), "--no-config", "-c", "source "+file+"; complete -C '"+line+"'").CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	require.Regexp(t, `(?m)^render\twrite an environment`, complete("kalypso ren"))
	require.Regexp(t, `(?m)^--gitops-dir\t`, complete("kalypso plan --gitops"))
	out := complete("kalypso validate --output ")
	require.Regexp(t, `(?m)^json\t`, out)
	require.Regexp(t, `(?m)^text\t`, out)
}

func TestZshCompletion(t *testing.T) {
	file := script(t, "zsh")
	out, err := exec.Command(shell(t, "zsh"), "-n", file).CombinedOutput()
	require.NoError(t, err, "zsh parses the script: %s", out)
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(text), "#compdef kalypso\n"))
	for _, c := range completionCommands(context.Background()) {
		require.Contains(t, string(text), "'"+c.Name+":", c.Name)
		for _, f := range c.Flags {
			require.Contains(t, string(text), "'--"+f.Name+"[", c.Name+" --"+f.Name)
		}
	}
	require.Contains(t, string(text), "'--out[directory to write the GitOps tree into (created if missing; required)]:directory:_files -/'")
}

// The scripts list exactly the flags each command takes: a flag added to a command is completed
// without touching the scripts.
func TestCompletionFlagsAreTheCommandsFlags(t *testing.T) {
	byName := map[string]completionCommand{}
	for _, c := range completionCommands(context.Background()) {
		byName[c.Name] = c
	}
	require.Len(t, byName, len(commands()))
	var planFlags []string
	for _, f := range byName["plan"].Flags {
		planFlags = append(planFlags, f.Name)
		if f.Name == "diff" {
			require.Empty(t, f.Kind, "a boolean flag takes no value")
		}
		if f.Name == "gitops-dir" {
			require.Equal(t, "dir", f.Kind)
		}
	}
	require.Subset(t, planFlags, []string{"main-dir", "env-dir", "workloads-dir", "environment", "repo", "github-url", "gitops-dir", "diff", "accept-blast-radius", "output"})

	code, _, stderr := runCLI(t, "completion", "powershell")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `unknown shell "powershell" (bash, zsh or fish)`)
	code, _, _ = runCLI(t, "completion")
	require.Equal(t, 2, code)
}
