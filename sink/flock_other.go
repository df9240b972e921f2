//go:build !unix

package sink

import (
	"errors"
	"os"
)

func flock(path string) (f *os.File, ok bool, err error) {
	return nil, false, errors.New("lock " + path + ": file locks need a unix system")
}
