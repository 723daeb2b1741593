package zktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// process is one running server JVM.
type process struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when Wait has returned
	err     error         // Wait's result, valid after done
	logFrom int64         // size of zk.out when this run started
	started time.Time
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL to the JVM (which has no children) and waits for it.
// ZooKeeper is crash safe, and what it wrote is in the page cache.
// os.Process.Kill cannot hit a recycled pid once the JVM has been reaped.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// launch starts the JVM for the server in dir (dir/zoo.cfg), logging to
// dir/zk.out. The JVM is killed if this process dies.
func launch(inst *install, cfg *config, dir string) (*process, error) {
	logPath := dir + "/zk.out"
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var from int64
	if st, err := f.Stat(); err == nil {
		from = st.Size()
	}
	fmt.Fprintf(f, "==== zktest: starting server at %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(inst.java, cfg.jvmArgs(inst, dir+"/zoo.cfg")...)
	cmd.Dir = dir // hs_err files, if any, land in the temp dir
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = append(os.Environ(), "ZOO_LOG_DIR="+dir)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("zktest: starting %s: %w", inst.java, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logFrom: from, started: time.Now()}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// errBind marks a start that failed because a port was taken.
var errBind = errors.New("port already in use")

// waitServing polls srvr on port until it reports a Mode accepted by ok,
// the process exits, or ctx ends. It checks with conf that the answering
// server is ours (its dataDir is dataDir), not a stranger that took the port.
func waitServing(ctx context.Context, p *process, port int, dataDir, logPath string, ok func(mode string) bool) error {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	tick := time.NewTimer(0)
	defer tick.Stop()
	var last string
	for {
		select {
		case <-p.done:
			tail := logTail(logPath, p.logFrom, 30)
			if isBindFailure(tail) {
				return fmt.Errorf("zktest: server exited (%v): %w; log tail:\n%s", p.err, errBind, tail)
			}
			return fmt.Errorf("zktest: server exited before serving (%v); log tail (%s):\n%s", p.err, logPath, tail)
		case <-ctx.Done():
			return fmt.Errorf("zktest: server on %s not serving after %v (last srvr: %q): %w; log tail (%s):\n%s",
				addr, time.Since(p.started).Round(time.Millisecond), strings.TrimSpace(last), ctx.Err(), logPath, logTail(logPath, p.logFrom, 30))
		case <-tick.C:
		}
		reply, err := fourLetter(addr, "srvr", time.Second)
		if err == nil {
			last = reply
			if mode, found := parseMode(reply); found && ok(mode) {
				conf, err := fourLetter(addr, "conf", time.Second)
				if err == nil && strings.Contains(conf, "dataDir="+dataDir+"/") {
					return nil
				}
				if err == nil && strings.Contains(conf, "dataDir=") {
					if !p.exited() {
						p.kill()
					}
					return fmt.Errorf("zktest: another server answers on %s: %w", addr, errBind)
				}
			}
		}
		tick.Reset(25 * time.Millisecond)
	}
}

func isBindFailure(log string) bool {
	return strings.Contains(log, "Address already in use") || strings.Contains(log, "BindException")
}

// logTail returns the last n lines written to path since offset from.
func logTail(path string, from int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	const max = 64 << 10
	st, err := f.Stat()
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	start := from
	if st.Size()-start > max {
		start = st.Size() - max
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return "(no log: " + err.Error() + ")"
	}
	b, _ := io.ReadAll(io.LimitReader(f, max))
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
