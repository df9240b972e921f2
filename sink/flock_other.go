//go:build !unix

package sink

import "errors"

func flock(path string) (release func(), ok bool, err error) {
	return nil, false, errors.New("lock " + path + ": file locks need a unix system")
}
