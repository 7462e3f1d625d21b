package controller_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// internalDir is the internal/ tree, from this package's directory; troubleshooting is the page
// that must explain every reason.
const (
	internalDir     = ".."
	troubleshooting = "../../docs/troubleshooting.md"
)

// reasonName matches the names of reason constants: ReasonX, exported, or reasonX.
var reasonName = regexp.MustCompile(`^[Rr]eason[A-Z]`)

// reasonConst is a reason constant and where it is declared.
type reasonConst struct {
	value, name, file string
}

func TestTroubleshootingMentionsEveryReason(t *testing.T) {
	doc, err := os.ReadFile(troubleshooting)
	if err != nil {
		t.Fatal(err)
	}
	reasons, reasonFiles := reasonConstants(t)
	if reasonFiles < 7 {
		t.Fatalf("found %d reasons.go files under internal/, want at least the 7 of the controllers and the fleet", reasonFiles)
	}
	for _, r := range reasons {
		if !strings.Contains(string(doc), "`"+r.value+"`") {
			t.Errorf("docs/troubleshooting.md does not mention the reason `%s` (%s in %s): say on which kind it shows, what it means and what to do",
				r.value, r.name, r.file)
		}
	}
	t.Logf("%d reason constants, %d distinct values", len(reasons), len(distinct(reasons)))
}

// reasonConstants parses every Go file under internal/ (tests, testdata and other modules left
// out) and returns its string constants named like reasons, and how many reasons.go files it read.
func reasonConstants(t *testing.T) ([]reasonConst, int) {
	t.Helper()
	var out []reasonConst
	reasonFiles := 0
	fset := token.NewFileSet()
	err := filepath.WalkDir(internalDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || path != internalDir && exists(filepath.Join(path, "go.mod")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if d.Name() == "reasons.go" {
			reasonFiles++
		}
		rel := filepath.ToSlash(filepath.Join("internal", strings.TrimPrefix(path, internalDir+string(filepath.Separator))))
		out = append(out, constantsOf(f, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, reasonFiles
}

// constantsOf returns the reason constants f declares with a string value, written as a literal
// ("X") or converted (controller.Reason("X")).
func constantsOf(f *ast.File, file string) []reasonConst {
	var out []reasonConst
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !reasonName.MatchString(name.Name) || i >= len(vs.Values) {
					continue
				}
				if v, ok := stringValue(vs.Values[i]); ok {
					out = append(out, reasonConst{value: v, name: name.Name, file: file})
				}
			}
		}
	}
	return out
}

// stringValue is the value of a string literal, or of a conversion of one.
func stringValue(e ast.Expr) (string, bool) {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		e = call.Args[0]
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

func distinct(reasons []reasonConst) []string {
	var values []string
	for _, r := range reasons {
		values = append(values, r.value)
	}
	slices.Sort(values)
	return slices.Compact(values)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
