package docscheck

import (
	"fmt"
	"html"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads Markdown the way GitHub renders it, as far as the checks
// need: which lines are code, the fenced blocks with their info strings, the
// links of the prose and the anchors of the headings. It follows CommonMark
// where that matters for a link or a heading and approximates the rest
// (lists are tracked only to tell an indented code block from a list item's
// continuation).

// A finding is one problem, at a line of a file (a slash path relative to
// the root checked). Col is 0 when unknown.
type finding struct {
	file      string
	line, col int
	msg       string
}

func (f finding) String() string {
	if f.line == 0 {
		return fmt.Sprintf("%s: %s", f.file, f.msg)
	}
	if f.col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", f.file, f.line, f.col, f.msg)
	}
	return fmt.Sprintf("%s:%d: %s", f.file, f.line, f.msg)
}

func sortFindings(fs []finding) []finding {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.line != b.line {
			return a.line < b.line
		}
		if a.col != b.col {
			return a.col < b.col
		}
		return a.msg < b.msg
	})
	out := fs[:0]
	for i, f := range fs {
		if i == 0 || f != fs[i-1] {
			out = append(out, f)
		}
	}
	return out
}

func findingStrings(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// A fence is a fenced code block: the line of its opening fence (1-based),
// its info string and its body, one string a line, the first at line+1.
type fence struct {
	line   int
	indent int // the opening fence's indentation, removed from the body's lines
	info   string
	body   []string
	closed bool
}

// lang is the fence's language tag: the info string's first word.
func (f fence) lang() string {
	w, _, _ := strings.Cut(f.info, " ")
	w, _, _ = strings.Cut(w, "\t")
	return strings.TrimSpace(w)
}

// An mdFile is a parsed Markdown file.
type mdFile struct {
	lines  []string
	skip   []bool // code block (fences included), HTML comment block or front matter: not prose
	fences []fence
}

// indentOf returns the width of line's leading white space (tabs to stops
// of 4) and the rest of the line.
func indentOf(line string) (int, string) {
	w := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w, line[i:]
		}
	}
	return w, ""
}

// dropIndent removes up to n columns of leading white space.
func dropIndent(line string, n int) string {
	w := 0
	for i := 0; i < len(line); i++ {
		if w >= n {
			return line[i:]
		}
		switch line[i] {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return line[i:]
		}
	}
	return ""
}

var (
	listItemRE = regexp.MustCompile(`^([-+*]|[0-9]{1,9}[.)])([ \t]|$)`)
	atxRE      = regexp.MustCompile(`^#{1,6}([ \t]|$)`)
	setextRE   = regexp.MustCompile(`^(=+|-+)[ \t]*$`)
)

// fenceOpen reports whether rest (a line without its indentation) opens a
// fence, and with what character, run length and info string.
func fenceOpen(rest string) (ch byte, n int, info string, ok bool) {
	if rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0, "", false
	}
	ch = rest[0]
	for n < len(rest) && rest[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, "", false
	}
	info = strings.TrimSpace(rest[n:])
	if ch == '`' && strings.Contains(info, "`") {
		return 0, 0, "", false
	}
	return ch, n, info, true
}

// stripQuote takes up to limit block quote markers (">", and a space after
// each) off the start of line (all of them if limit < 0), and returns how
// many it took and the rest.
func stripQuote(line string, limit int) (int, string) {
	n := 0
	for limit < 0 || n < limit {
		w, rest := indentOf(line)
		if w > 3 || !strings.HasPrefix(rest, ">") {
			break
		}
		line = strings.TrimPrefix(rest[1:], " ")
		n++
	}
	return n, line
}

func parseMarkdown(src string) *mdFile {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	lines := strings.Split(src, "\n")
	md := &mdFile{lines: lines, skip: make([]bool, len(lines))}

	start := 0
	if len(lines) > 0 && strings.TrimRight(lines[0], " \t") == "---" { // YAML front matter
		for j := 1; j < len(lines); j++ {
			if t := strings.TrimRight(lines[j], " \t"); t == "---" || t == "..." {
				for k := 0; k <= j; k++ {
					md.skip[k] = true
				}
				start = j + 1
				break
			}
		}
	}

	var (
		cur                          *fence
		fch                          byte
		flen, findent, fquote        int
		inComment                    bool
		inList                       bool
		prevBlank, prevCode, prevHdr = true, false, false
	)
	for i := start; i < len(lines); i++ {
		// Block quotes: their content is read as the rest is (a fence
		// opened in a quote takes as many markers off its lines, and ends
		// with the quote).
		if cur != nil && fquote > 0 {
			d, rest := stripQuote(lines[i], fquote)
			if d < fquote {
				md.fences = append(md.fences, *cur)
				cur = nil
			} else {
				lines[i] = rest
			}
		}
		quote := 0
		if cur == nil {
			quote, lines[i] = stripQuote(lines[i], -1)
		}
		line := lines[i]
		if cur != nil {
			md.skip[i] = true
			w, rest := indentOf(line)
			if w < findent+4 && strings.HasPrefix(rest, strings.Repeat(string(fch), flen)) &&
				strings.Trim(rest, string(fch)+" \t") == "" {
				cur.closed = true
				md.fences = append(md.fences, *cur)
				cur = nil
				prevBlank, prevCode, prevHdr = false, false, false
				continue
			}
			cur.body = append(cur.body, dropIndent(line, findent))
			continue
		}
		if inComment {
			md.skip[i] = true
			if strings.Contains(line, "-->") {
				inComment = false
			}
			continue
		}
		blank := strings.TrimSpace(line) == ""
		if blank {
			prevBlank, prevHdr = true, false
			continue
		}
		w, rest := indentOf(line)
		if w <= 3 || inList {
			if ch, n, info, ok := fenceOpen(rest); ok {
				md.skip[i] = true
				cur = &fence{line: i + 1, indent: w + 2*quote, info: info}
				fch, flen, findent, fquote = ch, n, w, quote
				continue
			}
		}
		if w >= 4 && !inList && (prevBlank || prevCode || prevHdr) { // indented code
			md.skip[i] = true
			prevBlank, prevCode, prevHdr = false, true, false
			continue
		}
		if w <= 3 && strings.HasPrefix(rest, "<!--") { // an HTML comment block
			md.skip[i] = true
			if !strings.Contains(rest[4:], "-->") {
				inComment = true
			}
			prevBlank, prevCode, prevHdr = false, false, false
			continue
		}
		switch {
		case (w <= 3 || inList) && listItemRE.MatchString(rest):
			inList = true
		case w <= 3 && atxRE.MatchString(rest):
			inList = false
		case w == 0 && prevBlank:
			inList = false
		}
		prevHdr = w <= 3 && atxRE.MatchString(rest)
		prevBlank, prevCode = false, false
	}
	if cur != nil { // an unclosed fence runs to the end
		md.fences = append(md.fences, *cur)
	}
	return md
}

// A unit is a run of prose lines that inline syntax (code spans, links) may
// span: a paragraph, a list item's lines, or one heading or table row.
type unit struct {
	line int // 1-based line of the first
	text string
}

func (u unit) lineAt(off int) int {
	return u.line + strings.Count(u.text[:off], "\n")
}

func (md *mdFile) units() []unit {
	var (
		out []unit
		cur []string
		at  int
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, unit{line: at + 1, text: strings.Join(cur, "\n")})
			cur = nil
		}
	}
	for i, line := range md.lines {
		if md.skip[i] || strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		w, rest := indentOf(line)
		single := w <= 3 && (atxRE.MatchString(rest) || strings.HasPrefix(rest, "|"))
		if single || listItemRE.MatchString(rest) {
			flush()
		}
		if len(cur) == 0 {
			at = i
		}
		cur = append(cur, line)
		if single {
			flush()
		}
	}
	flush()
	return out
}

// isASCIIPunct reports whether c is a character a backslash escapes.
func isASCIIPunct(c byte) bool {
	return c < utf8.RuneSelf && (unicode.IsPunct(rune(c)) || strings.IndexByte("$+<=>^`|~", c) >= 0)
}

// unescapeMD resolves the backslash escapes and the entities of a link
// destination.
func unescapeMD(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return html.UnescapeString(b.String())
}

// maskInline returns s with its code spans, HTML comments and backslash
// escapes overwritten (bytes other than newlines become 'x' or ' '), so
// that what remains is the syntax a link can be made of, at the same
// offsets.
func maskInline(s string) string {
	b := []byte(s)
	fill := func(from, to int, c byte) {
		for k := from; k < to; k++ {
			if b[k] != '\n' {
				b[k] = c
			}
		}
	}
	for i := 0; i < len(b); {
		switch {
		case b[i] == '\\' && i+1 < len(b) && isASCIIPunct(b[i+1]):
			fill(i, i+2, 'x')
			i += 2
		case b[i] == '`':
			n := 0
			for i+n < len(b) && b[i+n] == '`' {
				n++
			}
			end := -1
			for j := i + n; j < len(b); {
				if b[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < len(b) && b[j+m] == '`' {
					m++
				}
				if m == n {
					end = j + m
					break
				}
				j += m
			}
			if end < 0 { // no closing run: literal backticks
				i += n
				continue
			}
			fill(i, end, 'x')
			i = end
		case strings.HasPrefix(s[i:], "<!--"):
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				fill(i, len(b), ' ')
				return string(b)
			}
			fill(i, i+4+end+3, ' ')
			i += 4 + end + 3
		default:
			i++
		}
	}
	return string(b)
}

// A link is a link target written at a line.
type link struct {
	line   int
	target string
}

var (
	refDefRE   = regexp.MustCompile(`(?m)^ {0,3}\[([^\]]+)\]:[ \t]*(?:\n[ \t]*)?(<[^>\n]*>|\S+)`)
	htmlLinkRE = regexp.MustCompile(`(?is)<(?:a|img)\s[^>]*?\b(?:href|src)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)`)
	htmlIDRE   = regexp.MustCompile(`(?is)<[a-z][a-z0-9-]*\s[^>]*?\b(?:id|name)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)`)
)

func unquoteAttr(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		v = v[1 : len(v)-1]
	}
	return html.UnescapeString(v)
}

// links returns the link targets of the prose, and the ids and names its
// HTML tags declare (anchors a fragment may name).
func (md *mdFile) links() (links []link, ids []string) {
	for _, u := range md.units() {
		m := maskInline(u.text)
		for i := 0; i < len(m); i++ {
			if m[i] != '[' {
				continue
			}
			depth, j := 0, i
			for ; j < len(m); j++ {
				if m[j] == '[' {
					depth++
				} else if m[j] == ']' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(m) || j+1 >= len(m) || m[j+1] != '(' {
				continue
			}
			// The structure is read on the masked text, the destination
			// taken from the text itself.
			if from, to, ok := parseDestination(m, j+2); ok && to > from {
				links = append(links, link{line: u.lineAt(from), target: unescapeMD(u.text[from:to])})
			}
		}
		for _, sm := range refDefRE.FindAllStringSubmatchIndex(m, -1) {
			if strings.HasPrefix(m[sm[2]:sm[3]], "^") { // a footnote
				continue
			}
			dest := u.text[sm[4]:sm[5]]
			if strings.HasPrefix(dest, "<") {
				dest = strings.TrimSuffix(dest[1:], ">")
			}
			if dest != "" {
				links = append(links, link{line: u.lineAt(sm[4]), target: unescapeMD(dest)})
			}
		}
		for _, sm := range htmlLinkRE.FindAllStringSubmatchIndex(m, -1) {
			links = append(links, link{line: u.lineAt(sm[2]), target: unquoteAttr(u.text[sm[2]:sm[3]])})
		}
		for _, sm := range htmlIDRE.FindAllStringSubmatchIndex(m, -1) {
			ids = append(ids, unquoteAttr(u.text[sm[2]:sm[3]]))
		}
	}
	return links, ids
}

// parseDestination reads an inline link's destination and optional title
// from m[i:] up to the closing parenthesis. It returns the destination's
// offsets (inside the angle brackets of <dest>), or ok false if no link is
// written there.
func parseDestination(m string, i int) (from, to int, ok bool) {
	skipSpace := func() {
		for i < len(m) && (m[i] == ' ' || m[i] == '\t' || m[i] == '\n') {
			i++
		}
	}
	skipSpace()
	if i < len(m) && m[i] == '<' {
		end := strings.IndexAny(m[i+1:], ">\n")
		if end < 0 || m[i+1+end] != '>' {
			return 0, 0, false
		}
		from, to = i+1, i+1+end
		i += end + 2
	} else {
		depth, j := 0, i
		for ; j < len(m); j++ {
			c := m[j]
			if c == ' ' || c == '\t' || c == '\n' || c < 0x20 {
				break
			}
			if c == '(' {
				depth++
			} else if c == ')' {
				if depth == 0 {
					break
				}
				depth--
			}
		}
		from, to, i = i, j, j
	}
	skipSpace()
	if i < len(m) && (m[i] == '"' || m[i] == '\'' || m[i] == '(') {
		closer := m[i]
		if closer == '(' {
			closer = ')'
		}
		end := strings.IndexByte(m[i+1:], closer)
		if end < 0 {
			return 0, 0, false
		}
		i += end + 2
		skipSpace()
	}
	if i >= len(m) || m[i] != ')' {
		return 0, 0, false
	}
	return from, to, true
}

// headings returns the text of every heading, in order: ATX (# Title) and
// setext (Title underlined with === or ---).
func (md *mdFile) headings() []string {
	var out []string
	para := -1 // first line of the paragraph being read, or -1
	for i, line := range md.lines {
		w, rest := indentOf(line)
		if md.skip[i] || strings.TrimSpace(line) == "" {
			para = -1
			continue
		}
		if w <= 3 && atxRE.MatchString(rest) {
			t := strings.TrimLeft(rest, "#")
			t = strings.TrimRight(t, " \t")
			if s := strings.TrimRight(t, "#"); s == "" || strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\t") {
				t = s
			}
			out = append(out, strings.TrimSpace(t))
			para = -1
			continue
		}
		if w <= 3 && para >= 0 && setextRE.MatchString(rest) {
			var parts []string
			for _, l := range md.lines[para:i] {
				parts = append(parts, strings.TrimSpace(l))
			}
			out = append(out, strings.Join(parts, " "))
			para = -1
			continue
		}
		if w <= 3 && (listItemRE.MatchString(rest) || strings.HasPrefix(rest, "|")) {
			para = -1 // a list item or a table row: an underline after it is no heading's
			continue
		}
		if para < 0 {
			para = i
		}
	}
	return out
}

var (
	imageRE    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	inlineRE   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	refLinkRE  = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	htmlTagRE  = regexp.MustCompile(`</?[A-Za-z][^>]*>`)
	escapeRE   = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
	codeSpanRE = regexp.MustCompile("(`+)([^`]|[^`][\\s\\S]*?[^`])(`+)")
)

// headingText reduces a heading's Markdown to the text GitHub renders:
// code spans to their content, links to their text, images and HTML tags
// to nothing, escapes and entities to their character, emphasis
// underscores dropped.
func headingText(s string) string {
	var codes []string
	s = codeSpanRE.ReplaceAllStringFunc(s, func(c string) string {
		sm := codeSpanRE.FindStringSubmatch(c)
		if len(sm[1]) != len(sm[3]) {
			return c
		}
		content := strings.ReplaceAll(sm[2], "\n", " ")
		if len(content) >= 2 && content[0] == ' ' && content[len(content)-1] == ' ' && strings.Trim(content, " ") != "" {
			content = content[1 : len(content)-1]
		}
		codes = append(codes, content)
		return string(rune(0xE000 + len(codes) - 1))
	})
	s = imageRE.ReplaceAllString(s, "")
	for {
		t := inlineRE.ReplaceAllString(s, "$1")
		t = refLinkRE.ReplaceAllString(t, "$1")
		if t == s {
			break
		}
		s = t
	}
	s = htmlTagRE.ReplaceAllString(s, "")
	s = dropEmphasisUnderscores(s)
	s = escapeRE.ReplaceAllString(s, "$1")
	s = html.UnescapeString(s)
	var b strings.Builder
	for _, r := range s {
		if r >= 0xE000 && int(r-0xE000) < len(codes) {
			b.WriteString(codes[r-0xE000])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// dropEmphasisUnderscores removes the runs of underscores that open and
// close emphasis (_a_, __a__), pairing each closer with the nearest opener
// as CommonMark does; runs inside words (snake_case), unpaired ones and
// escaped ones stay.
func dropEmphasisUnderscores(s string) string {
	rs := []rune(s)
	type run struct{ at, n, drop int }
	var runs []*run
	var open []*run
	wordy := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; i < len(rs); {
		if rs[i] == '\\' {
			i += 2
			continue
		}
		if rs[i] != '_' {
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j] == '_' {
			j++
		}
		before, after := ' ', ' '
		if i > 0 {
			before = rs[i-1]
		}
		if j < len(rs) {
			after = rs[j]
		}
		r := &run{at: i, n: j - i}
		runs = append(runs, r)
		opens := !unicode.IsSpace(after) && !wordy(before)
		closes := !unicode.IsSpace(before) && !wordy(after)
		if closes && len(open) > 0 {
			o := open[len(open)-1]
			open = open[:len(open)-1]
			k := min(o.n-o.drop, r.n)
			o.drop += k
			r.drop += k
		} else if opens {
			open = append(open, r)
		}
		i = j
	}
	drop := make([]bool, len(rs))
	for _, r := range runs {
		for k := 0; k < r.drop; k++ {
			drop[r.at+k] = true
		}
	}
	var b strings.Builder
	for i, r := range rs {
		if !drop[i] {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// slugify is GitHub's anchor for a heading's text (github-slugger): lower
// case, every character removed but letters, marks, decimal digits,
// connector punctuation (the underscore), hyphens and spaces, and each
// space turned to a hyphen.
func slugify(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) ||
			unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the set of fragments that name a place in md: the
// headings' slugs (repeats suffixed -1, -2... as GitHub does) and the ids
// and names of its HTML tags.
func (md *mdFile) anchors() map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range md.headings() {
		slug := slugify(headingText(h))
		orig := slug
		for {
			if _, dup := seen[slug]; !dup {
				break
			}
			seen[orig]++
			slug = fmt.Sprintf("%s-%d", orig, seen[orig])
		}
		seen[slug] = 0
		out[slug] = true
	}
	_, ids := md.links()
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// A linkChecker checks the links of Markdown files under root (the
// repository, or a fixture standing for one).
type linkChecker struct {
	root    string
	parsed  map[string]*mdFile           // by slash path relative to root
	anchors map[string]map[string]bool   // by slash path relative to root
	dirs    map[string]map[string]string // directory (slash, relative) -> lower-case name -> name
}

func newLinkChecker(root string) *linkChecker {
	return &linkChecker{root: root, parsed: map[string]*mdFile{}, anchors: map[string]map[string]bool{}, dirs: map[string]map[string]string{}}
}

func (c *linkChecker) parse(rel string) (*mdFile, error) {
	if md, ok := c.parsed[rel]; ok {
		return md, nil
	}
	src, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	md := parseMarkdown(string(src))
	c.parsed[rel] = md
	return md, nil
}

func (c *linkChecker) anchorsOf(rel string) (map[string]bool, error) {
	if a, ok := c.anchors[rel]; ok {
		return a, nil
	}
	md, err := c.parse(rel)
	if err != nil {
		return nil, err
	}
	a := md.anchors()
	c.anchors[rel] = a
	return a, nil
}

// lookup reports whether rel (a clean slash path relative to the root, not
// ".") exists with exactly that spelling; if it exists only in another
// case (which a case-insensitive file system would accept and GitHub would
// not), other is that spelling.
func (c *linkChecker) lookup(rel string) (exists bool, other string) {
	parts := strings.Split(rel, "/")
	dir, actual := ".", []string{}
	for _, p := range parts {
		names, ok := c.dirs[dir]
		if !ok {
			names = map[string]string{}
			entries, _ := os.ReadDir(filepath.Join(c.root, filepath.FromSlash(dir)))
			for _, e := range entries {
				names[e.Name()] = e.Name()
				if _, dup := names[strings.ToLower(e.Name())]; !dup {
					names[strings.ToLower(e.Name())] = e.Name()
				}
			}
			c.dirs[dir] = names
		}
		name, ok := names[p]
		if !ok {
			if name, ok = names[strings.ToLower(p)]; !ok {
				return false, ""
			}
		}
		actual = append(actual, name)
		dir = path.Join(dir, name)
	}
	if a := strings.Join(actual, "/"); a != rel {
		return false, a
	}
	return true, ""
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func isMarkdown(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".md" || ext == ".markdown"
}

// check returns the broken links of the Markdown file rel.
func (c *linkChecker) check(rel string) []finding {
	md, err := c.parse(rel)
	if err != nil {
		return []finding{{file: rel, line: 1, msg: err.Error()}}
	}
	links, _ := md.links()
	var out []finding
	for _, l := range links {
		if msg := c.checkTarget(rel, l.target); msg != "" {
			out = append(out, finding{file: rel, line: l.line, msg: fmt.Sprintf("link %s: %s", l.target, msg)})
		}
	}
	return out
}

// checkTarget returns what is wrong with the link target written in the
// file from, or "".
func (c *linkChecker) checkTarget(from, target string) string {
	if schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
		return "" // absolute URL
	}
	p, frag, hasFrag := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	up, err := url.PathUnescape(p)
	if err != nil {
		return "bad escape in the path"
	}
	file := from
	if up != "" {
		var joined string
		if strings.HasPrefix(up, "/") {
			joined = path.Clean(strings.TrimLeft(up, "/"))
		} else {
			joined = path.Join(path.Dir(from), up)
		}
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return "points outside the repository"
		}
		if joined != "." {
			ok, other := c.lookup(joined)
			if !ok {
				if other != "" {
					return fmt.Sprintf("no file %s (there is %s: the case differs, which GitHub does not forgive)", joined, other)
				}
				return fmt.Sprintf("no file or directory %s", joined)
			}
		}
		file = joined
	}
	if !hasFrag || frag == "" {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(file))); err != nil || fi.IsDir() || !isMarkdown(file) {
		return "" // a fragment of a directory or of another kind of file (#L10) is not checked
	}
	uf, err := url.PathUnescape(frag)
	if err != nil {
		return "bad escape in the fragment"
	}
	anchors, err := c.anchorsOf(file)
	if err != nil {
		return err.Error()
	}
	if anchors[uf] {
		return ""
	}
	msg := fmt.Sprintf("no heading or anchor #%s in %s", uf, file)
	if low := strings.ToLower(uf); anchors[low] {
		msg += fmt.Sprintf(" (anchors are lower case: #%s)", low)
	}
	return msg
}
