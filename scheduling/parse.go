package scheduling

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A file is parsed in time linear in its size whatever it holds: it is split once into its
// documents at the `---` lines that start them, and each document is decoded once, on its own.
// A document with a syntax error is reported and left out (its kind and name recovered from
// its text when possible); the documents around it are read as usual.

// chunk is the text of one document of a file (or of several, separated by `...`), and the
// line it starts on.
type chunk struct {
	line int // 1-based line of the chunk's first line in the file
	text []byte
}

// splitDocuments cuts data before every line that starts a document (`---` followed by a
// blank or the end of the line). Lines end as YAML ends them: at "\r\n", "\n" or a lone "\r".
func splitDocuments(data []byte) []chunk {
	var out []chunk
	start, startLine, line := 0, 1, 1
	for i := 0; i < len(data); {
		if i > start && isDocumentStart(data[i:]) {
			out = append(out, chunk{line: startLine, text: data[start:i]})
			start, startLine = i, line
		}
		next := lineEnd(data, i)
		if next < len(data) || endsWithBreak(data[i:next]) {
			line++
		}
		i = next
	}
	return append(out, chunk{line: startLine, text: data[start:]})
}

// lineEnd returns the index just past the line break of the line starting at i.
func lineEnd(data []byte, i int) int {
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '\n':
			return j + 1
		case '\r':
			if j+1 < len(data) && data[j+1] == '\n' {
				return j + 2
			}
			return j + 1
		}
	}
	return len(data)
}

func endsWithBreak(line []byte) bool {
	return len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r')
}

// isDocumentStart reports whether a line is a YAML document start marker.
func isDocumentStart(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	return len(line) == 3 || strings.IndexByte(" \t\r\n", line[3]) >= 0
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseFile reads every YAML document of a file and adds the control-plane objects to objs.
func parseFile(file string, data []byte, objs *objects, errs *Errors) {
	parseFileUntil(file, data, objs, errs, nil)
}

// parseFileUntil is parseFile that stops before the next document once expired says so; it
// reports whether it read the whole file.
func parseFileUntil(file string, data []byte, objs *objects, errs *Errors, expired func() bool) bool {
	for _, c := range splitDocuments(data) {
		if expired != nil && expired() {
			return false
		}
		parseChunk(file, c, objs, errs)
	}
	return true
}

// parseChunk decodes the documents of one chunk. On a syntax error the chunk's objects are
// dropped: the error is reported at its line, with the kind and name found in the text.
func parseChunk(file string, c chunk, objs *objects, errs *Errors) {
	var found objects
	var foundErrs Errors
	err := decodeDocuments(file, c, &found, &foundErrs)
	if err == nil {
		objs.merge(&found)
		*errs = append(*errs, foundErrs...)
		return
	}
	line, msg := syntaxError(err)
	broken := recoverIdentity(strings.SplitAfter(string(c.text), "\n"), Pos{File: file, Line: c.line})
	errs.Add(Pos{File: file, Line: c.line + line - 1}, broken.Ref(), "YAML syntax error: %s", msg)
	if broken.Kind == "" {
		objs.unreadable = true
	} else {
		objs.broken = append(objs.broken, broken)
	}
}

// decodeDocuments decodes every document of a chunk; node lines are made lines of the file.
func decodeDocuments(file string, c chunk, objs *objects, errs *Errors) error {
	dec := yaml.NewDecoder(bytes.NewReader(c.text))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(doc.Content) > 0 {
			shiftLines(&doc, c.line-1)
			parseDocument(file, doc.Content[0], objs, errs)
		}
	}
}

// shiftLines adds offset to the line of every node of a document. Content makes a tree (an
// alias points at its anchor through Alias, not Content), so each node is visited once.
func shiftLines(n *yaml.Node, offset int) {
	if offset == 0 {
		return
	}
	n.Line += offset
	for _, c := range n.Content {
		shiftLines(c, offset)
	}
}

// syntaxError returns the line (within the chunk) and message of a YAML syntax error.
func syntaxError(err error) (int, string) {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 1, strings.TrimPrefix(err.Error(), "yaml: ")
}
