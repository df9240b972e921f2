package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/hrsync/hrsync/sync/onboard"
)

// groupMode is the results' files' mode when a group is named and no mode: the group reads them.
const groupMode fs.FileMode = 0o640

// resultAccess reads onboarding.group and onboarding.mode into who may read the results of the
// drop folder (onboard.Access): neither set, private. A group is a name or a numeric gid, one
// this machine knows and the process belongs to (or it runs as root), so that it can give files
// to it; a mode is octal, leaves the owner read and write, and others no write. An error names
// the key and says what to do, on one line.
func resultAccess(c OnboardingConfig) (onboard.Access, error) {
	group, mode := strings.TrimSpace(c.Group), strings.TrimSpace(c.Mode)
	if group == "" && mode == "" {
		return onboard.Access{}, nil
	}
	if runtime.GOOS == "windows" {
		return onboard.Access{}, errors.New("onboarding.group and onboarding.mode are Unix permissions: on Windows the results take the drop folder's access rights (its ACL, inherited): grant the HR group read on the folder instead, and unset them")
	}
	var a onboard.Access
	if group != "" {
		gid, err := lookupGroup(group)
		if err != nil {
			return onboard.Access{}, err
		}
		a.Group, a.SetGroup, a.Mode = gid, true, groupMode
	}
	if mode != "" {
		m, err := strconv.ParseUint(strings.TrimPrefix(mode, "0o"), 8, 32)
		switch {
		case err != nil || m > 0o777:
			return onboard.Access{}, fmt.Errorf("onboarding.mode %q: want permission bits in octal, such as 0640 (the group reads) or 0600 (private)", mode)
		case m&0o600 != 0o600:
			return onboard.Access{}, fmt.Errorf("onboarding.mode %q: hrsync must read and write its own results: want the owner's 6, as in 0640", mode)
		case m&0o002 != 0:
			return onboard.Access{}, fmt.Errorf("onboarding.mode %q: the results hold personal data: anyone may not write them; name a group (onboarding.group) and give it the bits, as in 0660", mode)
		}
		a.Mode = fs.FileMode(m)
	}
	return a, nil
}

// lookupGroup is the gid of group, a name or a number: a name must be known to this machine, and
// the process must be able to give files to the group (root, or a member).
func lookupGroup(group string) (int, error) {
	gid, err := strconv.Atoi(group)
	if err != nil {
		g, lerr := user.LookupGroup(group)
		if lerr != nil {
			return 0, fmt.Errorf("onboarding.group %q: no such group on this machine: name an existing group, or give its numeric gid", group)
		}
		if gid, err = strconv.Atoi(g.Gid); err != nil {
			return 0, fmt.Errorf("onboarding.group %q: its gid %q is not a number", group, g.Gid)
		}
	}
	if gid < 0 {
		return 0, fmt.Errorf("onboarding.group %q: want a group name or a gid of 0 or more", group)
	}
	if os.Geteuid() == 0 || gid == os.Getegid() {
		return gid, nil
	}
	if groups, err := os.Getgroups(); err == nil && slices.Contains(groups, gid) {
		return gid, nil
	}
	return 0, fmt.Errorf("onboarding.group %q: hrsync runs as a user (uid %d) not in the group, so it cannot give files to it: add that user to the group (then start hrsync again), or name one of its groups", group, os.Geteuid())
}
