package docscheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// goRule is the rule for go blocks, as every failure of the check states it
// for whoever writes the docs.
const goRule = "The rule (internal/docscheck): every ```go block in README.md and docs/ is a complete Go source file " +
	"that compiles and passes go vet on its own inside this module: it starts with a package clause " +
	"(comments may come first), declares its imports, has a func main if it is package main, and imports " +
	"no internal package. A deliberate fragment goes in a plain ``` block or a ```text block instead " +
	"(not ```go, and not ```go-fragment or the like), or is made whole."

// tmpPrefix names the directories the blocks are written to, under
// testdata/ (whose .gitignore lists it).
const tmpPrefix = "tmp-goblocks-"

// A goBlock is a go block of a Markdown file: a Go source file.
type goBlock struct {
	file   string // slash path of the Markdown file
	fence  int    // line of its opening fence: the source's line n is the file's fence+n
	indent int    // columns removed from each line (a fence in a list item)
	src    string
}

// goTagExceptions are tags starting with "go" and a separator that name
// other languages GitHub knows (go.mod, go.sum, go.work files).
var goTagExceptions = map[string]bool{
	"go.mod": true, "go-mod": true, "go.sum": true, "go-sum": true,
	"go.work": true, "go-work": true, "go.work.sum": true, "go-work-sum": true,
}

// goBlocks returns the go blocks of md (the file rel) that are whole files,
// and a finding for each that is not and for each look-alike tag.
func goBlocks(rel string, md *mdFile) (blocks []goBlock, out []finding) {
	for _, f := range md.fences {
		tag := strings.ToLower(f.lang())
		at := func(msg string) { out = append(out, finding{file: rel, line: f.line, msg: msg}) }
		switch {
		case tag == "go" || tag == "golang":
			if !f.closed {
				at("```go block never closed")
			}
			src := strings.Join(f.body, "\n") + "\n"
			if !startsWithPackage(src) {
				at("```go block is a fragment: it does not start with a package clause. " +
					"Make it a whole Go file, or put it in a plain ``` or ```text block")
				continue
			}
			blocks = append(blocks, goBlock{file: rel, fence: f.line, indent: f.indent, src: src})
		case len(tag) > 2 && strings.HasPrefix(tag, "go") && strings.ContainsRune("-_.:+,/", rune(tag[2])) && !goTagExceptions[tag]:
			at(fmt.Sprintf("```%s is not an exemption from the go block rule: "+
				"make the block a whole Go file tagged ```go, or tag it ```text or plain ```", f.lang()))
		}
	}
	return blocks, out
}

// startsWithPackage reports whether src's first token, comments aside, is
// the package keyword.
func startsWithPackage(src string) bool {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), []byte(src), nil, scanner.ScanComments)
	for {
		_, tok, _ := s.Scan()
		if tok != token.COMMENT {
			return tok == token.PACKAGE
		}
	}
}

// staticFindings checks what compiling a block alone does not: package main
// needs a func main (only the linker asks, and neither go list -export nor go
// vet links), and an internal package is out of a user's reach (the block is
// compiled inside the module, where it is not).
func staticFindings(b goBlock) []finding {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "block.go", b.src, parser.SkipObjectResolution)
	if err != nil {
		return nil // the compiler says it better
	}
	var out []finding
	at := func(pos token.Pos, msg string) {
		p := fset.Position(pos)
		out = append(out, finding{file: b.file, line: b.fence + p.Line, col: p.Column + b.indent, msg: msg})
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == "internal" || strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") {
			at(imp.Path.Pos(), fmt.Sprintf("imports %s, an internal package a user cannot import", p))
		}
	}
	if f.Name.Name == "main" {
		hasMain := false
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "main" {
				hasMain = true
			}
		}
		if !hasMain {
			at(f.Package, "package main has no func main")
		}
	}
	return out
}

// goTool returns the go command of the toolchain running the test.
func goTool(t *testing.T) string {
	t.Helper()
	exe := "go"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	//lint:ignore SA1019 the toolchain that built this test is the one to check the docs with; go test puts it in GOROOT.
	if root := runtime.GOROOT(); root != "" {
		if p := filepath.Join(root, "bin", exe); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command, in GOROOT/bin or on PATH: %v", err)
	}
	return p
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// moduleRoot returns the directory of the go.mod above the working
// directory (the package's, under go test).
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// splitVetOutput separates go vet -json's output into its analyzers'
// findings ("file:line:col: message" lines) and the rest of the text.
func splitVetOutput(s string) (diags []string, text string) {
	var rest []string
	for s != "" {
		if s[0] == '{' {
			dec := json.NewDecoder(strings.NewReader(s))
			var v map[string]map[string]json.RawMessage
			if err := dec.Decode(&v); err == nil {
				for pkg, analyzers := range v {
					for name, raw := range analyzers {
						var ds []struct{ Posn, Message string }
						if err := json.Unmarshal(raw, &ds); err != nil {
							rest = append(rest, fmt.Sprintf("%s: %s: %s", pkg, name, raw))
							continue
						}
						for _, d := range ds {
							diags = append(diags, d.Posn+": "+d.Message)
						}
					}
				}
				s = strings.TrimLeft(s[dec.InputOffset():], " \t\r\n")
				continue
			}
		}
		line, after, _ := strings.Cut(s, "\n")
		rest = append(rest, line)
		s = after
	}
	return diags, strings.Join(rest, "\n")
}

// sweepStale removes block directories that a killed run left behind: a
// run takes seconds, so one a quarter of an hour old is nobody's.
func sweepStale(testdata string) {
	old, _ := filepath.Glob(filepath.Join(testdata, tmpPrefix+"*"))
	for _, d := range old {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > 15*time.Minute {
			os.RemoveAll(d)
		}
	}
}

// checkGoBlocks compiles and vets every block, each as a package of its
// own in a directory under testdata/ inside the module (dir, removed at
// t's cleanup), and returns what fails, at the Markdown files' lines.
func checkGoBlocks(t *testing.T, blocks []goBlock) (out []finding, dir string) {
	t.Helper()
	for _, b := range blocks {
		out = append(out, staticFindings(b)...)
	}
	if len(blocks) == 0 {
		return out, ""
	}
	mod := moduleRoot(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	testdata := filepath.Join(wd, "testdata")
	sweepStale(testdata)
	tmp, err := os.MkdirTemp(testdata, tmpPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(tmp); err != nil {
			t.Errorf("removing the blocks' directory: %v", err)
		}
	})
	rel, err := filepath.Rel(mod, tmp)
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, len(blocks))
	for i, b := range blocks {
		d := filepath.Join(tmp, fmt.Sprintf("b%03d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "block.go"), []byte(b.src), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs[i] = "./" + filepath.ToSlash(filepath.Join(rel, fmt.Sprintf("b%03d", i)))
	}

	posRE := regexp.MustCompile(`(?:\S*[/\\])?` + regexp.QuoteMeta(filepath.Base(tmp)) +
		`[/\\]b(\d+)[/\\]block\.go:(\d+)(?::(\d+))?:?\s*`)
	// blockRE finds a block named otherwise: by its directory or import path.
	blockRE := regexp.MustCompile(`\S*` + regexp.QuoteMeta(filepath.Base(tmp)) + `[/\\]b(\d+)(?:[/\\]block\.go)?`)
	// report turns the go command's messages about blocks (lines starting
	// with a block's file:line:col) into findings; a message that names no
	// position goes to the block's fence line, or, if it names no block, to
	// fallback's.
	report := func(text string, fallback int, suffix string) {
		last := -1 // index in out of the finding a continuation line belongs to
		for _, line := range strings.Split(text, "\n") {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "# ") {
				continue
			}
			line = strings.TrimPrefix(line, "vet: ")
			m := posRE.FindStringSubmatch(line)
			switch {
			case m != nil && strings.HasPrefix(line, m[0]):
				i, _ := strconv.Atoi(m[1])
				l, _ := strconv.Atoi(m[2])
				c, _ := strconv.Atoi(m[3])
				if c > 0 {
					c += blocks[i].indent
				}
				out = append(out, finding{file: blocks[i].file, line: blocks[i].fence + l, col: c, msg: line[len(m[0]):] + suffix})
				last = len(out) - 1
			case last >= 0 && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ")):
				out[last].msg = strings.TrimSuffix(out[last].msg, suffix) + " " + strings.TrimSpace(line) + suffix
			default:
				b := fallback
				if m := blockRE.FindStringSubmatch(line); m != nil {
					b, _ = strconv.Atoi(m[1])
					line = blockRE.ReplaceAllString(line, "the block")
				}
				if b < 0 {
					out = append(out, finding{file: "(go command)", msg: line})
				} else {
					out = append(out, finding{file: blocks[b].file, line: blocks[b].fence, msg: line + suffix})
				}
				last = len(out) - 1
			}
		}
	}

	goCmd := goTool(t)
	fillModuleCache(t, goCmd, mod)
	// run runs the go command in the module, offline.
	run := func(args ...string) (stdout, stderr string, err error) {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}
	// vet runs go vet -json on dirs: its analyzers' findings become
	// findings; if it fails (a block does not load or type-check), it
	// returns false and what it printed besides findings.
	vet := func(dirs []string) (bool, string) {
		stdout, stderr, err := run(append([]string{"vet", "-json", "--"}, dirs...)...)
		diags, text := splitVetOutput(stdout + "\n" + stderr)
		report(strings.Join(diags, "\n"), -1, " (go vet)")
		return err == nil, text
	}

	// One go vet says whether all is well, the usual case: vet loads and
	// type-checks each block, then runs its analyzers. But it stops at a
	// block whose imports do not load, and reports only the first type
	// error of a block; so if it fails, go list -e -export (which goes on
	// past a failing block, and compiles without linking) gives every load
	// and compile error of every block, and go vet runs again on the blocks
	// that compile.
	n := len(out)
	if ok, _ := vet(dirs); ok {
		return sortFindings(out), tmp
	}
	out = out[:n] // the second go vet finds them again
	listOut, listErr, err := run(append([]string{"list", "-e", "-export", "-json=ImportPath,Error,DepsErrors", "--"}, dirs...)...)
	if err != nil {
		t.Fatalf("go list over the blocks: %v\n%s", err, listErr)
	}
	type pkgError struct{ Pos, Err string }
	failed := map[int]bool{}
	dec := json.NewDecoder(strings.NewReader(listOut))
	for {
		var p struct {
			ImportPath string
			Error      *pkgError
			DepsErrors []*pkgError
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list's output: %v\n%s", err, listOut)
		}
		i, err := strconv.Atoi(strings.TrimPrefix(p.ImportPath[strings.LastIndex(p.ImportPath, "/")+1:], "b"))
		if err != nil || i < 0 || i >= len(blocks) {
			t.Fatalf("go list names a package that is no block: %s", p.ImportPath)
		}
		errs := p.DepsErrors
		if p.Error != nil {
			errs = append([]*pkgError{p.Error}, errs...)
		}
		for _, e := range errs {
			failed[i] = true
			msg := e.Err
			if e.Pos != "" && !strings.Contains(msg, e.Pos) {
				msg = e.Pos + ": " + msg
			}
			report(msg, i, "")
		}
	}
	var vetDirs []string
	for i, d := range dirs {
		if !failed[i] {
			vetDirs = append(vetDirs, d)
		}
	}
	if len(vetDirs) > 0 {
		if ok, text := vet(vetDirs); !ok {
			// go list found nothing wrong with these blocks, yet go vet
			// failed: say what it says.
			n := len(out)
			report(text, -1, " (go vet)")
			if len(out) == n {
				out = append(out, finding{file: "(go vet)", msg: "failed and said: " + text})
			}
		}
	}
	return sortFindings(out), tmp
}

var moduleCacheFilled sync.Once

// fillModuleCache has the go command fetch, once, the go.mod of every
// module in the module graph (go list -m all, online if GOPROXY allows).
// A block that imports a package no module provides makes the offline go
// command load the whole graph, go.mod files a build never reads
// included (go-logr/stdr's requirement of logr v1.2.2): on a fresh module
// cache the finding was "module lookup disabled" instead of the one the
// fixture expects. Failing here (no network) leaves the offline check to
// say what is missing.
func fillModuleCache(t *testing.T, goCmd, mod string) {
	moduleCacheFilled.Do(func() {
		cmd := exec.Command(goCmd, "list", "-m", "all")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("go list -m all (filling the module cache): %v\n%s", err, out)
		}
	})
}
