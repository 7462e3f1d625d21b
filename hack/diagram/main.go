// Command diagram renders a Graphviz DOT file to SVG with Graphviz's own
// layout engine (compiled to WebAssembly, so no dot binary is needed):
//
//	go run . ../../docs/architecture.dot ../../docs/architecture.svg
//
// It is a module of its own so that Caravan's module does not depend on
// Graphviz; `make generate` runs it.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/goccy/go-graphviz"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: diagram IN.dot OUT.svg")
		os.Exit(2)
	}
	if err := render(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func render(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	ctx := context.Background()
	g, err := graphviz.New(ctx)
	if err != nil {
		return err
	}
	defer g.Close()
	graph, err := graphviz.ParseBytes(src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	defer graph.Close()
	var buf bytes.Buffer
	if err := g.Render(ctx, graph, graphviz.SVG, &buf); err != nil {
		return fmt.Errorf("rendering %s: %w", in, err)
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
