package lsp

import "time"

// parentPoll is how often the editor's process is looked for.
const parentPoll = 2 * time.Second

// watchParent ends the server when the editor's process, named by
// initialize's processId, is gone: an editor that was killed may leave
// the server's input open (another process holding the pipe), and the
// protocol asks the server to exit then. A pid not visible at start (the
// editor on the host, the server in a container) is not watched.
func (s *Server) watchParent(pid int) {
	if pid <= 0 || !processAlive(pid) {
		return
	}
	ctx := s.ctx
	go func() {
		t := time.NewTicker(parentPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !processAlive(pid) {
					s.log.Info("the editor's process is gone; exiting", "processId", pid)
					s.exit()
					return
				}
			}
		}
	}()
}
