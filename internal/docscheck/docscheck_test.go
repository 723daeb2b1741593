package docscheck

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// markdownFiles returns the Markdown files of the repository at root, as
// slash paths relative to it: git's list (tracked files, and new ones git
// does not ignore, so that a doc being written is checked before its
// commit), or without git every file found; directories named testdata (this
// package's fixtures break links on purpose) or vendor are left out.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	excluded := func(rel string) bool {
		for _, seg := range strings.Split(path.Dir(rel), "/") {
			if seg == "testdata" || seg == "vendor" {
				return true
			}
		}
		return false
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.md", "*.markdown")
	cmd.Dir = root
	out, err := cmd.Output()
	if err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" && !excluded(f) && fileExists(filepath.Join(root, filepath.FromSlash(f))) {
				files = append(files, f)
			}
		}
	} else {
		t.Logf("git ls-files: %v; walking the directory instead", err)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); p != root && (n == ".git" || n == "testdata" || n == "vendor") {
					return filepath.SkipDir
				}
				return nil
			}
			if isMarkdown(p) {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// checkLinks returns the broken links of files (slash paths relative to
// root).
func checkLinks(root string, files []string) []finding {
	c := newLinkChecker(root)
	var out []finding
	for _, f := range files {
		out = append(out, c.check(f)...)
	}
	return sortFindings(out)
}

// goBlocksOf returns the go blocks of files (slash paths relative to root)
// and the findings of the blocks that are not whole files.
func goBlocksOf(t *testing.T, root string, files []string) ([]goBlock, []finding) {
	t.Helper()
	var (
		blocks []goBlock
		out    []finding
	)
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		b, fs := goBlocks(f, parseMarkdown(string(src)))
		blocks = append(blocks, b...)
		out = append(out, fs...)
	}
	return blocks, out
}

func diffFindings(t *testing.T, got []finding, want []string) {
	t.Helper()
	g := findingStrings(got)
	if slices.Equal(g, want) {
		return
	}
	var b strings.Builder
	for _, s := range g {
		if !slices.Contains(want, s) {
			b.WriteString("\n  unexpected: " + s)
		}
	}
	for _, s := range want {
		if !slices.Contains(g, s) {
			b.WriteString("\n  missing:    " + s)
		}
	}
	t.Errorf("findings differ:%s\ngot:\n  %s", b.String(), strings.Join(g, "\n  "))
}

func TestLinkFixtures(t *testing.T) {
	t.Parallel()
	got := checkLinks(filepath.Join("testdata", "links"), []string{"index.md", "other.md", "sub/page.md"})
	diffFindings(t, got, []string{
		"index.md:7: link missing.md: no file or directory missing.md",
		"index.md:9: link #nowhere: no heading or anchor #nowhere in index.md",
		"index.md:9: link other.md#no-such-heading: no heading or anchor #no-such-heading in other.md",
		"index.md:17: link other.md#setup-3: no heading or anchor #setup-3 in other.md",
		"index.md:19: link other.md#not-a-heading: no heading or anchor #not-a-heading in other.md",
		"index.md:21: link other.md#Setup: no heading or anchor #Setup in other.md (anchors are lower case: #setup)",
		"index.md:44: link gone.md: no file or directory gone.md",
		"index.md:46: link other.md#nope2: no heading or anchor #nope2 in other.md",
		"index.md:47: link missing.png: no file or directory missing.png",
		"index.md:52: link ../outside.md: points outside the repository",
		"index.md:54: link Other.md: no file Other.md (there is other.md: the case differs, which GitHub does not forgive)",
		"index.md:57: link missing2.md: no file or directory missing2.md",
		"index.md:59: link missing3.md: no file or directory missing3.md",
		"index.md:61: link missing4.md: no file or directory missing4.md",
		"index.md:65: link missing5.md: no file or directory missing5.md",
		"index.md:65: link other_file.md: no file or directory other_file.md",
		"sub/page.md:3: link ../index.md#missing-heading: no heading or anchor #missing-heading in index.md",
	})
}

func TestSlugs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ heading, slug string }{
		{"Quickstart", "quickstart"},
		{"Testing your own code: `testing/zktest`", "testing-your-own-code-testingzktest"},
		{"Inspecting a lock: `gocurator`", "inspecting-a-lock-gocurator"},
		{"Curator to Go", "curator-to-go"},
		{"The `NewMutex` API: locks & fencing!", "the-newmutex-api-locks--fencing"},
		{"What's new (v0.2.0)?", "whats-new-v020"},
		{"C++ / Java", "c--java"},
		{"Café & Ünïcode: Straße", "café--ünïcode-straße"},
		{"See [the guide](docs/guide.md) now", "see-the-guide-now"},
		{"**Bold** and *italic*", "bold-and-italic"},
		{"The _fast_ path, snake_case and __init__", "the-fast-path-snake_case-and-init"},
		{"foo_ bar", "foo_-bar"},
		{"Escaped \\_ and \\*", "escaped-_-and-"},
		{"`a_b_` code", "a_b_-code"},
		{"Tom &amp; Jerry", "tom--jerry"},
		{"<a name=\"x\"></a>Anchored", "anchored"},
		{"Trailing #'s are not the heading's", "trailing-s-are-not-the-headings"},
		{"Emoji 🚀 launch", "emoji--launch"},
		{"1.2.3 release", "123-release"},
	} {
		if got := slugify(headingText(c.heading)); got != c.slug {
			t.Errorf("heading %q: slug %q, want %q", c.heading, got, c.slug)
		}
	}

	md := parseMarkdown("# A\n\n## A\n\n## A-1\n\n### A\n\nB\n=\n\n```\n# A\n```\n\n    # A\n\n## Closed ##\n\n#NotAHeading\n")
	var got []string
	for a := range md.anchors() {
		got = append(got, a)
	}
	slices.Sort(got)
	// GitHub: a, a-1, then "A-1" is taken so it becomes a-1-1, then a-2.
	want := []string{"a", "a-1", "a-1-1", "a-2", "b", "closed"}
	if !slices.Equal(got, want) {
		t.Errorf("anchors %q, want %q", got, want)
	}
}

func TestGoBlockFixtures(t *testing.T) {
	t.Parallel()
	blocks, out := goBlocksOf(t, filepath.Join("testdata", "goblocks"), []string{"blocks.md"})
	var dir string
	t.Run("compile", func(t *testing.T) {
		var found []finding
		found, dir = checkGoBlocks(t, blocks)
		out = sortFindings(append(out, found...))
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the blocks' directory %s is still there after the cleanup (%v)", dir, err)
	}
	fragment := ": ```go block is a fragment: it does not start with a package clause. " +
		"Make it a whole Go file, or put it in a plain ``` or ```text block"
	diffFindings(t, out, []string{
		"blocks.md:45:2: declared and not used: x",
		"blocks.md:46:14: undefined: nosuch",
		"blocks.md:52" + fragment,
		"blocks.md:58: ```go-fragment is not an exemption from the go block rule: " +
			"make the block a whole Go file tagged ```go, or tag it ```text or plain ```",
		"blocks.md:82:1: package main has no func main",
		"blocks.md:84:8: imports github.com/gocurator/curator/internal/layout, an internal package a user cannot import",
		"blocks.md:97:14: fmt.Printf format %d has arg \"not a number\" of wrong type string (go vet)",
		"blocks.md:108:27: undefined: undefinedInList",
		"blocks.md:116:8: no required module provides package example.com/nosuch; to add it: go get example.com/nosuch",
	})
	if n := len(blocks); n != 7 {
		t.Errorf("%d whole go blocks, want 7", n)
	}
}

// TestRepoLinks checks every relative link of the repository's Markdown.
func TestRepoLinks(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	files := markdownFiles(t, root)
	if len(files) == 0 {
		t.Fatal("no Markdown file found")
	}
	if out := checkLinks(root, files); len(out) > 0 {
		t.Errorf("%d broken links in the repository's Markdown (%d files checked; internal/docscheck says how links are resolved):\n%s",
			len(out), len(files), strings.Join(findingStrings(out), "\n"))
	}
}

// TestRepoGoBlocks checks every go block of README.md and docs/.
func TestRepoGoBlocks(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	var files []string
	for _, f := range markdownFiles(t, root) {
		if f == "README.md" || strings.HasPrefix(f, "docs/") {
			files = append(files, f)
		}
	}
	blocks, out := goBlocksOf(t, root, files)
	found, _ := checkGoBlocks(t, blocks)
	out = sortFindings(append(out, found...))
	if len(out) > 0 {
		t.Errorf("%d problems in the go blocks of README.md and docs/ (%d files, %d whole blocks):\n%s\n\n%s",
			len(out), len(files), len(blocks), strings.Join(findingStrings(out), "\n"), goRule)
	}
}

func TestParseMarkdown(t *testing.T) {
	t.Parallel()
	src := strings.Join([]string{
		"---",                        // 1 front matter
		"title: [x](front.md)",       // 2
		"---",                        // 3
		"````markdown",               // 4 a longer fence holds a shorter one
		"```go",                      // 5
		"[in](fence.md)",             // 6
		"```",                        // 7
		"````",                       // 8
		"",                           // 9
		"> Quoted [link](quoted.md)", // 10
		"> ```go",                    // 11
		"> package q",                // 12
		"> ```",                      // 13
		"",                           // 14
		"- item",                     // 15
		"",                           // 16
		"      [continued](list.md)", // 17: within the item, not code
		"",                           // 18
		"Paragraph",                  // 19
		"",                           // 20
		"    [code](indented.md)",    // 21
		"",                           // 22
		"~~~ Go  extra words",        // 23
		"package main",               // 24
		"~~~",                        // 25
		"",                           // 26
		"```text",                    // 27 never closed
		"[open](fence.md)",           // 28
	}, "\n")
	md := parseMarkdown(src)
	type fenceSummary struct {
		line   int
		lang   string
		body   string
		closed bool
	}
	var got []fenceSummary
	for _, f := range md.fences {
		got = append(got, fenceSummary{f.line, f.lang(), strings.Join(f.body, "|"), f.closed})
	}
	want := []fenceSummary{
		{4, "markdown", "```go|[in](fence.md)|```", true},
		{11, "go", "package q", true},
		{23, "Go", "package main", true},
		{27, "text", "[open](fence.md)", false},
	}
	if !slices.Equal(got, want) {
		t.Errorf("fences:\n got %v\nwant %v", got, want)
	}
	links, _ := md.links()
	wantLinks := []link{{10, "quoted.md"}, {17, "list.md"}}
	if !slices.Equal(links, wantLinks) {
		t.Errorf("links %v, want %v", links, wantLinks)
	}
}
