package render

import (
	"text/template"
	"text/template/parse"
)

// Templates may change a dict they are given: sprig's set, unset, merge and mergeOverwrite (and
// their must forms) write into their first argument. The config data an assignment's templates
// see is shared, by the assignments of a selection, by the executors rendering them at once and
// by later renders; a write into it would reach other assignments' output, or race. A manifest
// that calls one of these functions therefore makes its assignment's own copy of the config
// data first, as if the data were made for the assignment alone (as the reference makes it):
// what it changes reaches only its own assignment. The dicts a template makes itself (dict, …) are changed in place as usual.

// mutatingFuncs are the functions that write into a dict given to them.
var mutatingFuncs = map[string]bool{
	"set": true, "unset": true, "merge": true, "mergeOverwrite": true, "mustMerge": true, "mustMergeOverwrite": true,
}

// mutates reports whether a parsed manifest, or a template it defines, calls a function that
// writes into a dict given to it. Functions are named in the text, never called by a name
// computed at run time, so reading the parse trees finds every call.
func mutates(t *template.Template) bool {
	for _, d := range t.Templates() {
		if d.Tree != nil && d.Tree.Root != nil && nodeMutates(d.Tree.Root) {
			return true
		}
	}
	return false
}

// nodeMutates reports whether a node of a parse tree names a mutating function.
func nodeMutates(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.ListNode:
		return n != nil && anyMutates(n.Nodes)
	case *parse.ActionNode:
		return nodeMutates(n.Pipe)
	case *parse.IfNode:
		return branchMutates(&n.BranchNode)
	case *parse.RangeNode:
		return branchMutates(&n.BranchNode)
	case *parse.WithNode:
		return branchMutates(&n.BranchNode)
	case *parse.TemplateNode:
		return n.Pipe != nil && nodeMutates(n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return false
		}
		for _, c := range n.Cmds {
			if nodeMutates(c) {
				return true
			}
		}
		return false
	case *parse.CommandNode:
		return anyMutates(n.Args)
	case *parse.ChainNode:
		return nodeMutates(n.Node)
	case *parse.IdentifierNode:
		return mutatingFuncs[n.Ident]
	}
	return false
}

func branchMutates(b *parse.BranchNode) bool {
	return nodeMutates(b.Pipe) || (b.List != nil && nodeMutates(b.List)) || (b.ElseList != nil && nodeMutates(b.ElseList))
}

func anyMutates(nodes []parse.Node) bool {
	for _, n := range nodes {
		if nodeMutates(n) {
			return true
		}
	}
	return false
}

// takeOwnConfig gives the assignment being rendered its own deep copy of the config data, once:
// what a manifest writes into it is seen by the assignment's later manifests, as in the
// reference, and by nothing else. The rest of the assignment runs through text/template,
// whose functions see the copy as it is (compiled manifests read the shared config).
func (x *executor) takeOwnConfig() {
	if !x.ownConfig {
		x.td.ConfigData, _ = copyValue(x.td.ConfigData).(map[string]any)
		x.ownConfig = true
	}
}

// copyValue deep-copies a config value as ParseConfigValue and MergeValue make them: its maps
// and lists are copied, its scalars are immutable.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = copyValue(x)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = copyValue(x)
		}
		return out
	}
	return v
}
