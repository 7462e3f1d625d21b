package runcmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/caravan-dev/caravan/internal/command"
)

// maxSourceBytes bounds a route file fetched from a URL.
const maxSourceBytes = 4 << 20

// fetchTimeout bounds the fetch of one route file.
const fetchTimeout = 30 * time.Second

// fetchURLSources downloads the files given as http(s) URLs, as kamel run takes them, into
// dir, and returns the file list with each URL replaced by its local copy, named as the URL's
// last path element. kamel's github: and gist: forms are refused, naming what to give instead.
func fetchURLSources(ctx context.Context, files []string, dir func() (string, error)) ([]string, error) {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f
		scheme, _, _ := strings.Cut(f, ":")
		switch scheme {
		case "github", "gist":
			return nil, command.WithExitCode(command.ExitUsage,
				fmt.Errorf("%s: %s: sources are not fetched by that name: give the https URL of the raw file", f, scheme))
		case "http", "https":
		default:
			continue
		}
		u, err := url.Parse(f)
		if err != nil || u.Host == "" {
			return nil, command.WithExitCode(command.ExitUsage, fmt.Errorf("%s: not a URL: %v", f, err))
		}
		name := path.Base(u.Path)
		if name == "/" || name == "." || name == "" {
			return nil, command.WithExitCode(command.ExitUsage,
				fmt.Errorf("%s: the URL names no file: it must end with the file's name, as …/route.yaml", f))
		}
		d, err := dir()
		if err != nil {
			return nil, err
		}
		local := filepath.Join(d, name)
		if _, err := os.Stat(local); err == nil {
			return nil, command.WithExitCode(command.ExitUsage,
				fmt.Errorf("%s: another URL names a file %s too: sources are stored by file name", f, name))
		}
		if err := fetch(ctx, f, local); err != nil {
			return nil, err
		}
		out[i] = local
	}
	return out, nil
}

// refuseRepeatedFiles refuses a file or URL given twice, which would run its routes twice.
func refuseRepeatedFiles(files []string) error {
	seen := map[string]string{}
	for _, f := range files {
		key := f
		if scheme, _, _ := strings.Cut(f, ":"); scheme != "http" && scheme != "https" {
			if abs, err := filepath.Abs(f); err == nil {
				key = abs
			}
		}
		if first, ok := seen[key]; ok {
			if first == f {
				return fmt.Errorf("%s is given twice: its routes would run twice", f)
			}
			return fmt.Errorf("%s and %s are the same file: its routes would run twice", first, f)
		}
		seen[key] = f
	}
	return nil
}

// fetch downloads u into file, refusing anything but a 200 and more than maxSourceBytes.
func fetch(ctx context.Context, u, file string) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", u, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching %s: the server answered %s", u, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSourceBytes+1))
	if err != nil {
		return fmt.Errorf("fetching %s: %w", u, err)
	}
	if len(data) > maxSourceBytes {
		return fmt.Errorf("fetching %s: more than %d bytes, too large for a route file", u, maxSourceBytes)
	}
	return os.WriteFile(file, data, 0o600)
}
