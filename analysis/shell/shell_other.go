//go:build !unix

package shell

import "os/exec"

// shellCommand runs command with the system's shell (cmd on Windows).
func shellCommand(command string) *exec.Cmd {
	return exec.Command("cmd", "/C", command)
}

// killGroup kills the shell; the processes it started may outlive it here,
// where there are no process groups to kill at once.
func killGroup(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
}
