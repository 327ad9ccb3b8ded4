package render

import (
	"text/template"
	"text/template/parse"
)

// tickFunc is the function addTicks calls at the start of every loop iteration and of every
// defined template; executors bind it to their budget's deadline check.
const tickFunc = "kalypsoDeadlineCheck"

// tickAction is `{{ kalypsoDeadlineCheck }}`: it prints nothing, or fails once the
// environment's deadline has passed.
var tickAction = func() *parse.ActionNode {
	t := template.Must(template.New("tick").Funcs(template.FuncMap{tickFunc: func() string { return "" }}).Parse("{{" + tickFunc + "}}"))
	return t.Tree.Root.Nodes[0].(*parse.ActionNode)
}()

// addTicks makes every template of p check the deadline at the start of each iteration of
// each range and of each template it defines, so that loops that call no function and print
// nothing (`{{ range $l }}{{ range $l }}{{ end }}{{ end }}`) and recursive templates stop
// too once the environment's deadline has passed. text/template cannot be interrupted any
// other way.
func addTicks(p *template.Template) {
	for _, t := range p.Templates() {
		if t.Tree == nil || t.Tree.Root == nil {
			continue
		}
		tickList(t.Tree.Root)
		if t.Name() != p.Name() {
			prepend(t.Tree.Root)
		}
	}
}

func tickList(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.RangeNode:
			prepend(n.List)
			tickList(n.List)
			tickList(n.ElseList)
		case *parse.IfNode:
			tickList(n.List)
			tickList(n.ElseList)
		case *parse.WithNode:
			tickList(n.List)
			tickList(n.ElseList)
		case *parse.ListNode:
			tickList(n)
		}
	}
}

func prepend(l *parse.ListNode) {
	if l == nil {
		return
	}
	if len(l.Nodes) > 0 && l.Nodes[0] == parse.Node(tickAction) {
		return
	}
	l.Nodes = append([]parse.Node{tickAction}, l.Nodes...)
}
