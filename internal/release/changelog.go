package release

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// UnreleasedHeading starts the section of CHANGELOG.md that the next release takes.
const UnreleasedHeading = "## Unreleased"

// unreleased returns the text of the changelog's Unreleased section, which must say something.
func unreleased(changelog string) (string, error) {
	_, start, end, err := unreleasedBounds(changelog)
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(changelog[start:end])
	if text == "" {
		return "", errors.New("its " + UnreleasedHeading + " section is empty: say there what the release changes")
	}
	return text, nil
}

// unreleasedBounds returns where the Unreleased section's heading starts, where its text starts
// (after the heading's line) and where it ends (at the next second-level heading, or the end).
func unreleasedBounds(changelog string) (heading, start, end int, err error) {
	pos, heading, start := 0, -1, -1
	for _, line := range strings.SplitAfter(changelog, "\n") {
		text := strings.TrimRight(line, "\r\n")
		switch {
		case start < 0 && text == UnreleasedHeading:
			heading, start = pos, pos+len(line)
		case start >= 0 && strings.HasPrefix(text, "## "):
			return heading, start, pos, nil
		}
		pos += len(line)
	}
	if start < 0 {
		return 0, 0, 0, fmt.Errorf("no %q heading: the release takes what that section says", UnreleasedHeading)
	}
	return heading, start, len(changelog), nil
}

// release turns the changelog's Unreleased section into version's, dated now, under a new empty
// Unreleased section.
func release(changelog, version string, now time.Time) (string, error) {
	heading, start, _, err := unreleasedBounds(changelog)
	if err != nil {
		return "", err
	}
	return changelog[:heading] + UnreleasedHeading + "\n\n" +
		fmt.Sprintf("## %s - %s\n", version, now.UTC().Format(time.DateOnly)) + changelog[start:], nil
}
