// Package refdoc writes docs/reference.md, the reference of every kind a control plane holds,
// from the Go sources of package scheduling: the kinds (the Kind* constants, in their order),
// the spec type of each (the specTypes table the decoder uses), and for every field its YAML
// name, type, required and enum tags, its doc comment, and its default and example tags. The
// sources are read with go/parser, so the reference describes exactly the types the decoder
// fills, and a field without documentation is reported as a problem.
package refdoc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// source is what the generator knows of package scheduling.
type source struct {
	types      map[string]*typeInfo // declared types by name
	kinds      []string             // Kind* constants' values, in declaration order
	specs      map[string]string    // kind → spec type name, from specTypes
	apiVersion string               // APIGroupVersion
}

// typeInfo is one declared type.
type typeInfo struct {
	name string
	doc  string
	expr ast.Expr // the type's definition
}

// readSource parses the non-test Go files of dir.
func readSource(dir string) (*source, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	src := &source{types: map[string]*typeInfo{}, specs: map[string]string{}}
	consts := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, data, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok {
				src.readDecl(gd, consts)
			}
		}
	}
	src.apiVersion = consts["APIGroupVersion"]
	byValue := map[string]string{}
	for constName, typ := range src.specs {
		byValue[consts[constName]] = typ
	}
	src.specs = byValue
	if src.apiVersion == "" || len(src.kinds) == 0 || len(src.specs) == 0 {
		return nil, fmt.Errorf("refdoc: %s does not declare APIGroupVersion, the Kind constants and specTypes", dir)
	}
	return src, nil
}

// readDecl records types, string constants, the Kind constants and the specTypes table.
func (s *source) readDecl(gd *ast.GenDecl, consts map[string]string) {
	for _, spec := range gd.Specs {
		switch sp := spec.(type) {
		case *ast.TypeSpec:
			doc := sp.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			s.types[sp.Name.Name] = &typeInfo{name: sp.Name.Name, doc: doc.Text(), expr: sp.Type}
		case *ast.ValueSpec:
			s.readValue(gd.Tok, sp, consts)
		}
	}
}

func (s *source) readValue(tok token.Token, sp *ast.ValueSpec, consts map[string]string) {
	for i, name := range sp.Names {
		if i >= len(sp.Values) {
			continue
		}
		if lit, ok := sp.Values[i].(*ast.BasicLit); ok && tok == token.CONST && lit.Kind == token.STRING {
			v, _ := strconv.Unquote(lit.Value)
			consts[name.Name] = v
			if strings.HasPrefix(name.Name, "Kind") {
				s.kinds = append(s.kinds, v)
			}
		}
		if cl, ok := sp.Values[i].(*ast.CompositeLit); ok && name.Name == "specTypes" {
			s.readSpecTypes(cl)
		}
	}
}

// readSpecTypes reads `KindX: func() any { return &XSpec{} }` entries.
func (s *source) readSpecTypes(cl *ast.CompositeLit) {
	for _, elt := range cl.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, _ := kv.Key.(*ast.Ident)
		fn, _ := kv.Value.(*ast.FuncLit)
		if key == nil || fn == nil || len(fn.Body.List) != 1 {
			continue
		}
		ret, _ := fn.Body.List[0].(*ast.ReturnStmt)
		if ret == nil || len(ret.Results) != 1 {
			continue
		}
		if u, ok := ret.Results[0].(*ast.UnaryExpr); ok {
			if lit, ok := u.X.(*ast.CompositeLit); ok {
				if id, ok := lit.Type.(*ast.Ident); ok {
					s.specs[key.Name] = id.Name
				}
			}
		}
	}
}

// structOf returns the struct definition of a named type, or nil.
func (s *source) structOf(name string) *ast.StructType {
	if t := s.types[name]; t != nil {
		st, _ := t.expr.(*ast.StructType)
		return st
	}
	return nil
}

// paragraph joins the lines of a doc comment into one line.
func paragraph(doc string) string {
	return strings.Join(strings.Fields(doc), " ")
}
