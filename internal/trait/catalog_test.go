package trait

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEveryPropertyCaravanReadsIsCamelKs reads the parse functions of the traits Caravan acts on
// (parseContainer, ...) and fails when one reads a property, by a literal key, that Camel K's
// trait does not have: UnknownProperties would call a setting Caravan acts on a typo.
func TestEveryPropertyCaravanReadsIsCamelKs(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				name, isParse := strings.CutPrefix(fn.Name.Name, "parse")
				if !isParse {
					continue
				}
				known, acted := Properties(strings.ToLower(name))
				if !acted {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if recv, isIdent := sel.X.(*ast.Ident); !isIdent || recv.Name != "o" {
						return true
					}
					for _, arg := range call.Args {
						lit, ok := arg.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						key, _ := strconv.Unquote(lit.Value)
						if strings.ContainsAny(key, " ,") {
							continue // a message, not a key
						}
						checked++
						if !slices.Contains(known, key) {
							t.Errorf("%s reads %s.%s, which Camel K's trait does not have", fn.Name.Name, strings.ToLower(name), key)
						}
					}
					return true
				})
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d keys read: the parse functions were not found", checked)
	}
}
