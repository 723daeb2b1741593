package main

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// fourLetter sends a ZooKeeper four-letter word to the first server of a
// connect string ("h1:p1,h2:p2/chroot").
func fourLetter(connect, cmd string) (string, error) {
	hosts, _, _ := strings.Cut(connect, "/")
	first, _, _ := strings.Cut(hosts, ",")
	conn, err := net.DialTimeout("tcp", first, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return "", err
	}
	if strings.Contains(string(b), "is not executed because it is not in the whitelist") {
		return "", fmt.Errorf("%s is not in the server's 4lw.commands.whitelist", cmd)
	}
	return string(b), nil
}

// watchesUnder counts the (path, session) data watches the servers hold
// on nodes under path (path is relative to the connect string's chroot),
// over every server of the connect string: a session's watches live on
// the server it is connected to.
func watchesUnder(connect string, path string) (int, error) {
	hosts, chroot := splitChroot(connect)
	prefix := chroot + path + "/"
	n := 0
	for _, host := range strings.Split(hosts, ",") {
		out, err := fourLetter(host, "wchp")
		if err != nil {
			return 0, err
		}
		in := false
		for _, line := range strings.Split(out, "\n") {
			switch t := strings.TrimSpace(line); {
			case strings.HasPrefix(t, "/"):
				in = strings.HasPrefix(t, prefix)
			case in && strings.HasPrefix(t, "0x"):
				n++
			}
		}
	}
	return n, nil
}

// serverVersion is the first line of srvr ("Zookeeper version: ...").
func serverVersion(connect string) string {
	out, err := fourLetter(connect, "srvr")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	first, _, _ := strings.Cut(out, "\n")
	v := strings.TrimSpace(strings.TrimPrefix(first, "Zookeeper version:"))
	v, _, _ = strings.Cut(v, ",")   // drop the build date
	v, _, _ = strings.Cut(v, "-${") // Debian's build leaves the git id unexpanded
	return v
}
