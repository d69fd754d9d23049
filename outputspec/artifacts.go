package outputspec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// Artifacts (DESIGN.md §7): every submitted path resolves, symlinks
// included, inside the working directory and names a regular file that
// exists now; each is typed (a given type wins, else sniffed by content,
// with the extension deciding where sniffing knows only "text" or "bytes",
// and for markup the sniffer does not know), hashed and sized. Declared
// artifacts are matched by name: each required one must be there, and a
// declared type must match what the file is (its sniffed type), not what
// the model says it is. Any problem refuses the whole submission; all of
// them are listed.

// sniffLen is how much of a file the type sniffer reads (mimetype's
// default limit).
const sniffLen = 3072

// extTypes are extensions the sniffer cannot recognise by content.
var extTypes = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".json":     "application/json",
	".xml":      "application/xml",
	".star":     "text/x-starlark",
	".txt":      "text/plain",
}

// typeAliases fold the spellings of a type to one, for comparison.
var typeAliases = map[string]string{
	"text/x-markdown":    "text/markdown",
	"text/yaml":          "application/yaml",
	"text/x-yaml":        "application/yaml",
	"application/x-yaml": "application/yaml",
	"application/x-toml": "application/toml",
	"text/json":          "application/json",
	"text/xml":           "application/xml",
}

func (c *Contract) checkArtifacts(root string, refs []artifactRef, overwritten []string) ([]Artifact, []string) {
	var problems []string
	arts := []Artifact{}
	var actual []string // what each of arts is, for the declared types
	if len(refs) > 0 {
		realRoot, err := realRoot(root)
		if err != nil {
			return nil, []string{err.Error()}
		}
		byName := map[string]string{} // name → path as given, for duplicates
		for _, ref := range refs {
			a, sniffed, problem := artifact(root, realRoot, ref)
			if problem != "" {
				problems = append(problems, fmt.Sprintf("artifact %q %s", ref.Path, problem))
				continue
			}
			if p, dup := byName[a.Name]; dup {
				problems = append(problems, fmt.Sprintf("artifacts %q and %q are both named %q: give each its own name", p, ref.Path, a.Name))
				continue
			}
			byName[a.Name] = ref.Path
			if c.keepExisting() && isOverwritten(realRoot, a.Path, overwritten) {
				problems = append(problems, fmt.Sprintf("artifact %q replaced a file that existed before this run, and overwrite_artifacts is false: write the artifact to a new path", ref.Path))
				continue
			}
			arts = append(arts, a)
			actual = append(actual, contentType(sniffed, a.MimeType))
		}
	}
	for _, d := range c.spec.Artifacts {
		i := slices.IndexFunc(arts, func(a Artifact) bool { return a.Name == d.Name })
		switch {
		case i < 0 && d.Required:
			problems = append(problems, fmt.Sprintf("the required artifact %q is missing: add {\"name\": %q, \"path\": \"...\"} to artifacts", d.Name, d.Name))
		case i >= 0 && d.Type != "" && !typeMatches(d.Type, actual[i]):
			is := actual[i]
			if given := arts[i].MimeType; given != is {
				is += fmt.Sprintf(" by its content (not %s as given)", given)
			}
			problems = append(problems, fmt.Sprintf("artifact %q (%s) is %s, but %q is declared %s", d.Name, arts[i].Path, is, d.Name, d.Type))
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return arts, nil
}

// KeepsExisting reports whether overwrite_artifacts = false is in effect:
// no artifact may replace a file that existed before the run, and
// write_file and edit_file refuse to change one before they write
// (engine.Call).
func (c *Contract) KeepsExisting() bool { return c.keepExisting() }

// keepExisting reports whether overwrite_artifacts = false is in effect.
func (c *Contract) keepExisting() bool {
	return c.spec.OverwriteArtifacts != nil && !*c.spec.OverwriteArtifacts
}

// isOverwritten reports whether the artifact at rel (relative to realRoot)
// is one of the files the run overwrote.
func isOverwritten(realRoot, rel string, overwritten []string) bool {
	p := filepath.Join(realRoot, filepath.FromSlash(rel))
	for _, o := range overwritten {
		if r, err := filepath.EvalSymlinks(o); err == nil {
			o = r
		}
		if filepath.Clean(o) == p {
			return true
		}
	}
	return false
}

func realRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("no file can be handed back: this session has no working directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("the working directory cannot be resolved: %v", err)
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("the working directory cannot be resolved: %v", err)
	}
	return r, nil
}

// artifact checks one reference; the problem completes `artifact "PATH" ...`.
// sniffed is the file's type by its content and extension, whatever type
// the reference gives.
func artifact(root, realRoot string, ref artifactRef) (a Artifact, sniffed, problem string) {
	p := ref.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	absRoot, _ := filepath.Abs(root)
	if !within(absRoot, p) && !within(realRoot, p) {
		return Artifact{}, "", "is outside the working directory"
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Artifact{}, "", "does not exist (or is a broken link): write the file first, then submit"
		}
		return Artifact{}, "", "cannot be read: " + unwrapPath(err)
	}
	if !within(realRoot, real) {
		return Artifact{}, "", "resolves outside the working directory through a symbolic link"
	}
	rel, _ := filepath.Rel(realRoot, real)
	// The file is looked at through an os.Root of the working directory, so
	// that a symlink swapped in since EvalSymlinks cannot lead outside.
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return Artifact{}, "", "cannot be read: " + unwrapPath(err)
	}
	defer r.Close()
	info, err := r.Stat(rel)
	if err != nil {
		return Artifact{}, "", "cannot be read: " + unwrapPath(err)
	}
	if info.IsDir() {
		return Artifact{}, "", "is a directory, not a file"
	}
	if !info.Mode().IsRegular() {
		return Artifact{}, "", "is not a regular file"
	}
	a = Artifact{Name: ref.Name, Path: filepath.ToSlash(rel)}
	if a.Name == "" { // named as the model named it, even through a link
		base := filepath.Base(p)
		a.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if ref.Type != "" {
		t, _, err := mime.ParseMediaType(ref.Type)
		if err != nil || !strings.Contains(t, "/") || strings.Contains(t, "*") {
			return Artifact{}, "", fmt.Sprintf("has type %q, which is not a MIME type (like text/markdown)", ref.Type)
		}
		a.MimeType = t
	}
	if sniffed, err = describe(r, rel, &a); err != nil {
		return Artifact{}, "", "cannot be read: " + unwrapPath(err)
	}
	return a, sniffed, ""
}

// describe hashes, sizes and sniffs the file at path in r, and types it by
// the sniffed type when a.MimeType is unset.
func describe(r *os.Root, path string, a *Artifact) (sniffed string, err error) {
	f, err := r.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	head = head[:n]
	h := sha256.New()
	h.Write(head)
	rest, err := io.Copy(h, f)
	if err != nil {
		return "", err
	}
	a.Size = int64(n) + rest
	a.SHA256 = hex.EncodeToString(h.Sum(nil))
	sniffed = sniff(head, filepath.Ext(path))
	if a.MimeType == "" {
		a.MimeType = sniffed
	}
	return sniffed, nil
}

// contentType is what a file is, for a declared type: its sniffed type,
// which a given type may only refine where sniffing is generic. Bytes the
// sniffer does not know may be any type the model names (a format newer
// than the sniffer); text may be any text/* type, but not an image or a
// video.
func contentType(sniffed, given string) string {
	switch {
	case given == "" || given == sniffed:
	case sniffed == "application/octet-stream",
		sniffed == "text/plain" && strings.HasPrefix(given, "text/"):
		return given
	}
	return sniffed
}

// sniff types a file by its first bytes, letting the extension decide
// where content says only "text" or "bytes", and for the markup formats
// the sniffer cannot see (a Markdown file opening with an HTML comment
// sniffs as HTML).
func sniff(head []byte, ext string) string {
	sniffed := bare(mimetype.Detect(head).String())
	ext = strings.ToLower(ext)
	byExt := extTypes[ext]
	if byExt == "" && ext != "" {
		byExt = bare(mime.TypeByExtension(ext))
	}
	if byExt == "" {
		return sniffed
	}
	generic := sniffed == "text/plain" || sniffed == "application/octet-stream"
	markup := ext == ".md" || ext == ".markdown" || ext == ".yaml" || ext == ".yml" || ext == ".toml"
	if generic || (markup && strings.HasPrefix(sniffed, "text/")) {
		return byExt
	}
	return sniffed
}

// bare drops a media type's parameters ("; charset=utf-8") and lowers it.
func bare(t string) string {
	if t == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(t); err == nil {
		return mt
	}
	t, _, _ = strings.Cut(t, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// typeMatches reports whether actual satisfies the declared pattern:
// "*/*", "video/*" or an exact type, parameters and case ignored.
func typeMatches(pattern, actual string) bool {
	p, a := fold(bare(pattern)), fold(bare(actual))
	if p == "*/*" || p == "*" || p == a {
		return true
	}
	if major, ok := strings.CutSuffix(p, "/*"); ok {
		return strings.HasPrefix(a, major+"/")
	}
	// The sniffer knows some aliases (application/x-zip for application/zip).
	return mimetype.Lookup(a) != nil && mimetype.Lookup(a).Is(p)
}

func fold(t string) string {
	if a, ok := typeAliases[t]; ok {
		return a
	}
	return t
}

// within reports whether p is root or inside it (both clean and absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
