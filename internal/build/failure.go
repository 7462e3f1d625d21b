// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package build

import "errors"

// Failure is a build that failed on its input: retrying gives the same result.
type Failure struct {
	// Message says what failed, naming the dependency, with Maven's words.
	Message string
}

func (f *Failure) Error() string { return f.Message }

// IsFailure reports whether err is a Failure.
func IsFailure(err error) bool {
	var f *Failure
	return errors.As(err, &f)
}
