//go:build unix

package sinktest

import (
	"os"
	"os/exec"
	"syscall"
)

// setCredential makes cmd run as uid/gid with no supplementary groups
// (what runuser/setpriv would do, without depending on either).
func setCredential(cmd *exec.Cmd, uid, gid uint32) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
}

// fileOwner returns the uid owning the file fi describes.
func fileOwner(fi os.FileInfo) (uint32, bool) {
	uid, _, ok := fileOwnerGroup(fi)
	return uid, ok
}

// fileOwnerGroup returns the uid and gid of the file fi describes.
func fileOwnerGroup(fi os.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}
