package onboard

import (
	"fmt"
	"io/fs"
	"os"
)

// Access is who may read what onboarding writes in the drop folder: processed/, failed/,
// reports/, the files it moves there and every report. The zero Access is private: files 0600
// and folders 0700, the account hrsync runs as alone. An operator who wants the people who drop
// the files (HR) to open their results names a group (onboarding.group) or a mode
// (onboarding.mode): files get Mode, folders Mode with the search bit wherever it has the read
// bit (0640 gives 0750), and, with SetGroup, the group Group. Both are applied whatever the
// umask, to each file as it is written or moved, and to the folders each time a file goes in
// (a folder made private by an earlier version opens to the group once one is configured).
// Group ownership is a Unix notion: the configuration refuses a group elsewhere.
type Access struct {
	// Mode is the files' permission bits; 0 is 0600.
	Mode fs.FileMode
	// Group is the group id the files and folders are given, when SetGroup.
	Group    int
	SetGroup bool
}

// private reports whether a is the default: the account hrsync runs as alone.
func (a Access) private() bool { return a.fileMode() == privateFile && !a.SetGroup }

// fileMode is the mode of a file onboarding writes or moves.
func (a Access) fileMode() fs.FileMode {
	if a.Mode == 0 {
		return privateFile
	}
	return a.Mode.Perm()
}

// folderMode is the mode of a folder onboarding makes: the files' mode, searchable by whoever
// may read it.
func (a Access) folderMode() fs.FileMode {
	m := a.fileMode()
	return m | (m&0o444)>>2
}

// gid is the group to give, or -1 to leave the group as it is (os.Chown's convention).
func (a Access) gid() int {
	if a.SetGroup {
		return a.Group
	}
	return -1
}

// String says the access as the logs and docs do: "private (0600)", "group 1001 (0640)".
func (a Access) String() string {
	if a.private() {
		return fmt.Sprintf("private (%#o)", a.fileMode())
	}
	if a.SetGroup {
		return fmt.Sprintf("group %d (%#o)", a.Group, a.fileMode())
	}
	return fmt.Sprintf("%#o", a.fileMode())
}

// apply gives the open file f the access's mode and group.
func (a Access) apply(f *os.File) error {
	if err := f.Chmod(a.fileMode()); err != nil {
		return err
	}
	if g := a.gid(); g >= 0 {
		if err := f.Chown(-1, g); err != nil {
			return err
		}
	}
	return nil
}

// applyFolder gives the folder name in root the access's folder mode and group.
func (a Access) applyFolder(root *os.Root, name string) error {
	if err := root.Chmod(name, a.folderMode()); err != nil {
		return err
	}
	if g := a.gid(); g >= 0 {
		if err := root.Lchown(name, -1, g); err != nil {
			return err
		}
	}
	return nil
}
