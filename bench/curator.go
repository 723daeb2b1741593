package main

import (
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The curator peer: Apache Curator 5.4 from Debian's jars, driven by our
// own Java program (curator/*.java, embedded in this binary), compiled with
// javac into a temporary directory before any measurement.

//go:embed curator/*.java
var curatorSources embed.FS

const (
	javaDir        = "/usr/share/java"
	installCurator = "apt-get install -y libcurator-recipes-java libcurator-framework-java libcurator-client-java libcurator-discovery-java zookeeper default-jdk-headless"
)

var curatorJars = []string{"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar", "slf4j-simple.jar",
	// the discovery workloads: curator-x-discovery and its Jackson
	"curator-x-discovery.jar", "jackson-databind.jar", "jackson-core.jar", "jackson-annotations.jar"}

// curatorPeer is the compiled Java peer.
type curatorPeer struct {
	java      string
	classpath string
	impl      string // "Apache Curator 5.4.0 (Java 17.0.15)"
	dir       string
}

// buildCurator compiles the Java peer into a new temporary directory, or
// says why it cannot (with the command that installs what is missing).
func buildCurator(ctx context.Context) (*curatorPeer, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return nil, fmt.Errorf("javac not found; install with: %s", installCurator)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("java not found; install with: %s", installCurator)
	}
	var jars []string
	for _, j := range curatorJars {
		p := filepath.Join(javaDir, j)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s not found; install with: %s", p, installCurator)
		}
		jars = append(jars, p)
	}
	dir, err := os.MkdirTemp("", "gocurator-bench-java-")
	if err != nil {
		return nil, err
	}
	srcs, _ := curatorSources.ReadDir("curator")
	args := []string{"-nowarn", "-encoding", "UTF-8", "-d", dir, "-cp", strings.Join(jars, ":")}
	for _, e := range srcs {
		b, _ := curatorSources.ReadFile("curator/" + e.Name())
		p := filepath.Join(dir, e.Name())
		if err := os.WriteFile(p, b, 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		args = append(args, p)
	}
	if out, err := exec.CommandContext(ctx, javac, args...).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("javac of the Curator peer: %v\n%s(Curator 5.4's jars? %s)", err, out, installCurator)
	}
	return &curatorPeer{
		java: java, classpath: dir + ":" + strings.Join(jars, ":"), dir: dir,
		impl: "Apache Curator " + jarVersion("curator-recipes") + " (Java " + javaVersion(java) + ")",
	}, nil
}

// command is the JVM command line of one peer process.
func (p *curatorPeer) command(javaOpts string, args []string) *exec.Cmd {
	a := strings.Fields(javaOpts)
	a = append(a,
		"-XX:-UsePerfData", // no /tmp/hsperfdata_* file left behind by a killed peer
		"-Dorg.slf4j.simpleLogger.logFile=System.err",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		// ZooKeeper 3.8 logs a stack trace at WARN for every normal close
		"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error",
		"-cp", p.classpath, "Bench")
	return exec.Command(p.java, append(a, args...)...)
}

func (p *curatorPeer) remove() { os.RemoveAll(p.dir) }

// jarVersion reads the version from Debian's versioned jar name.
func jarVersion(name string) string {
	m, _ := filepath.Glob(filepath.Join(javaDir, name+"-*.jar"))
	for _, f := range m {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), name+"-"), ".jar")
		if v != "" && v[0] >= '0' && v[0] <= '9' {
			return v
		}
	}
	return "(version unknown)"
}

func javaVersion(java string) string {
	out, _ := exec.Command(java, "-version").CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n")
	if _, v, ok := strings.Cut(first, `"`); ok {
		v, _, _ = strings.Cut(v, `"`)
		return v
	}
	return strings.TrimSpace(first)
}
