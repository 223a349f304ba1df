//go:build !unix

package sandbox

import "errors"

type placeholder struct{}

func holdPlaceholder(string) (*placeholder, error) {
	return nil, errors.New("placeholders need a Unix system")
}

func (*placeholder) release() {}
