//go:build !unix

package sinktest

import (
	"os"
	"os/exec"
)

// setCredential is never called off unix: os.Geteuid is -1 there.
func setCredential(cmd *exec.Cmd, uid, gid uint32) {}

func fileOwner(fi os.FileInfo) (uint32, bool) { return 0, false }

func fileOwnerGroup(fi os.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }
