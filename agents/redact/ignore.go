package redact

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DefaultIgnore lists the files that are never read into a prompt: files
// whose whole purpose is to hold credentials, where redacting the parts we
// recognise would still leak the rest. Patterns are doublestar globs over
// workspace-relative, slash-separated paths, matched case-insensitively.
var DefaultIgnore = []string{
	// Environment files, including .env.local, .env.production and the
	// .env.example templates (a template is rarely worth a review and is
	// often filled in by mistake).
	"**/.env", "**/.env.*", "**/*.env",
	// Private keys and key stores: PEM/DER keys, PKCS#12, Java key stores,
	// Apple .p8 keys, PuTTY keys, SSH identities (the .pub halves go too:
	// nothing to review there), GPG exports, KeePass databases.
	"**/*.pem", "**/*.key", "**/*.p8", "**/*.p12", "**/*.pfx", "**/*.ppk",
	"**/*.keystore", "**/*.jks", "**/*.gpg", "**/*.kdbx",
	"**/id_rsa*", "**/id_dsa*", "**/id_ecdsa*", "**/id_ed25519*",
	"**/.ssh/**", "**/.gnupg/**",
	// Client credential files of package managers, git, HTTP and databases.
	"**/.npmrc", "**/.yarnrc.yml", "**/.pypirc", "**/.netrc", "**/_netrc",
	"**/.git-credentials", "**/.pgpass", "**/.my.cnf", "**/.htpasswd",
	"**/.docker/config.json", "**/.kube/config", "**/kubeconfig",
	"**/.vault-token", "**/.terraformrc", "**/terraform.rc",
	// Cloud credentials: AWS shared credentials, Google service account
	// and OAuth client files, generic credential/secret files.
	"**/.aws/credentials", "**/credentials.json", "**/client_secret*.json",
	"**/service-account*.json", "**/*-sa-key.json",
	"**/secrets.{yml,yaml,json,toml}", "**/*.secret", "**/*.secrets",
	// Terraform variables and state hold provider keys and every secret
	// the infrastructure was created with.
	"**/*.tfvars", "**/*.tfvars.json", "**/*.tfstate", "**/*.tfstate.*",
}

// Ignore decides which workspace files may be read into a prompt.
type Ignore struct {
	patterns []ignorePattern // the extra patterns first, then DefaultIgnore
}

// ignorePattern is one compiled pattern of an Ignore.
type ignorePattern struct {
	glob  string // lower case, validated
	raw   string // as written
	extra bool   // one of NewIgnore's extra patterns, not DefaultIgnore
}

// ErrIgnoreNegation is wrapped by the error of an extra pattern that
// starts with "!": negation is not supported. Leaving such a pattern out
// never un-ignores a file another pattern ignores.
var ErrIgnoreNegation = errors.New(`negation with "!" is not supported; list only the paths to ignore`)

// ErrIgnoreRoot is wrapped by the error of an extra pattern that names the
// workspace root ("/", "./"), which would ignore every file.
var ErrIgnoreRoot = errors.New("names the workspace root, which would ignore every file")

// NewIgnore returns an Ignore with DefaultIgnore and extra, the
// ignorePaths of the kodus configuration: doublestar globs relative to the
// workspace root. A bad pattern is an error that names it; CompileIgnore
// keeps the good ones instead.
func NewIgnore(extra []string) (*Ignore, error) {
	ig, errs := CompileIgnore(extra)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return ig, nil
}

// CompileIgnore returns an Ignore with DefaultIgnore and every usable
// pattern of extra, and an error naming each pattern it left out: one that
// is not a valid glob, starts with "!" (ErrIgnoreNegation) or names the
// workspace root (ErrIgnoreRoot). A bad pattern never disables the good ones, so
// what they ignore stays ignored. Empty patterns are skipped.
func CompileIgnore(extra []string) (*Ignore, []error) {
	ig := &Ignore{}
	var errs []error
	for _, p := range extra {
		q, err := compileIgnore(p)
		switch {
		case err != nil:
			errs = append(errs, err)
		case q != "":
			ig.patterns = append(ig.patterns, ignorePattern{glob: q, raw: p, extra: true})
		}
	}
	for _, p := range DefaultIgnore {
		q, err := compileIgnore(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ig.patterns = append(ig.patterns, ignorePattern{glob: q, raw: p})
	}
	return ig, errs
}

// CheckIgnorePattern reports what is wrong with an ignore pattern, as
// CompileIgnore would: nil when it is usable or empty.
func CheckIgnorePattern(p string) error {
	_, err := compileIgnore(p)
	return err
}

// compileIgnore turns a pattern into the glob Match tries; "" for an empty
// pattern.
func compileIgnore(p string) (string, error) {
	q := strings.ToLower(strings.TrimSpace(p))
	if q == "" {
		return "", nil
	}
	if strings.HasPrefix(q, "!") {
		return "", fmt.Errorf("redact: ignore pattern %q: %w", p, ErrIgnoreNegation)
	}
	q = strings.TrimPrefix(q, "./")
	q = strings.TrimLeft(q, "/")
	if q == "" {
		return "", fmt.Errorf("redact: ignore pattern %q %w", p, ErrIgnoreRoot)
	}
	// "build/" means a directory of that name at any depth (as in
	// .gitignore), and everything under it.
	if strings.HasSuffix(q, "/") {
		if !strings.Contains(strings.TrimSuffix(q, "/"), "/") {
			q = "**/" + q
		}
		q += "**"
	}
	if !doublestar.ValidatePattern(q) {
		return "", fmt.Errorf("redact: bad ignore pattern %q: check for unbalanced [ ] or { } and a trailing \\", p)
	}
	return q, nil
}

// Match reports whether relPath (slash-separated, relative to the
// workspace) is ignored. As in .gitignore:
//   - a pattern without '/' matches a file or directory name at any depth
//     (".env" ignores "sub/.env", "secrets" ignores "a/secrets/x.txt");
//   - a pattern that matches a directory ignores everything under it;
//   - matching ignores letter case, since macOS and Windows file systems
//     do ("SERVER.PEM" is a key file too).
func (i *Ignore) Match(relPath string) bool {
	p, _ := i.Which(relPath)
	return p != ""
}

// Which returns the pattern, as written, that ignores relPath, and whether
// it is one of the extra patterns rather than one of DefaultIgnore; ""
// when relPath is not ignored. The extra patterns are tried first. A nil
// Ignore ignores nothing.
func (i *Ignore) Which(relPath string) (pattern string, extra bool) {
	if i == nil {
		return "", false
	}
	p := strings.ToLower(path.Clean(strings.ReplaceAll(relPath, `\`, "/")))
	p = strings.TrimPrefix(p, "./")
	p = strings.TrimLeft(p, "/")
	if p == "." || p == "" {
		return "", false
	}
	for _, pat := range i.patterns {
		basename := !strings.Contains(pat.glob, "/")
		// Try the path and each of its parent directories.
		for dir := p; ; {
			if matchOne(pat.glob, dir, basename) {
				return pat.raw, pat.extra
			}
			k := strings.LastIndexByte(dir, '/')
			if k < 0 {
				break
			}
			dir = dir[:k]
		}
	}
	return "", false
}

func matchOne(pat, p string, basename bool) bool {
	if basename {
		p = path.Base(p)
	}
	ok, _ := doublestar.Match(pat, p) // patterns were validated
	return ok
}
