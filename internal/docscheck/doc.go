// Package docscheck holds no code, only tests that keep the repository's
// Markdown honest (go test ./internal/docscheck/, part of make test):
//
//   - Links (TestRepoLinks): in every Markdown file of the repository (git
//     ls-files, tracked or new and not ignored; directories named testdata or
//     vendor are left out), every relative link resolves. That covers inline
//     links and images [text](target), reference definitions [id]: target,
//     and <a href> and <img src> tags. The target, relative to the Markdown
//     file (or to the repository root if it starts with "/"), must be a file
//     or directory that exists, spelt in the same case, inside the
//     repository; a #fragment, alone or after a Markdown file, must name a
//     heading of that file by GitHub's anchor rules (the heading's text, its
//     code spans and links reduced to their text, lowercased, every character
//     but letters, digits, spaces, hyphens and underscores removed, spaces
//     turned to hyphens, and -1, -2... appended to repeats), or an HTML id or
//     name in it. Absolute URLs (scheme:..., //host) are not fetched. Links
//     in code blocks, code spans and HTML comments are not links.
//
//   - Go code (TestRepoGoBlocks): in README.md and docs/**/*.md, every code
//     block tagged go is a complete Go source file that compiles and passes
//     go vet on its own, inside this module (so it imports the module's
//     packages at the checked-out version): it begins with a package clause
//     (comments may come first), declares its imports, has a func main if it
//     is package main (any package name will do), and imports no internal
//     package, which a user could not. A deliberate fragment goes in a plain
//     fenced block or one tagged text, never in a go block; a tag such as
//     go-fragment is refused, since it only looks like an exemption.
//
// Each block is written to a directory of its own under testdata/ (named
// tmp-goblocks-*, ignored by git, removed at the end of the test and, if a
// run was killed, by a later run) and checked there with the go tool of
// the running toolchain, offline (GOPROXY=off): one go vet -json over all
// of them is enough when they load and type-check; when one does not, go list -e
// -export (which compiles without linking and goes on past a failing
// block) gives every load and compile error of every block, and go vet
// runs again on the blocks that compile. Errors are reported at the
// Markdown file's line numbers.
//
// The checker's own tests run it on the fixtures in testdata/links and
// testdata/goblocks and compare every finding.
package docscheck
