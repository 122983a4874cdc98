package redact

import (
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
	patterns []string // lower case, validated
}

// NewIgnore returns an Ignore with DefaultIgnore and extra, the
// ignorePaths of the kodus configuration: doublestar globs relative to the
// workspace root. A bad pattern is an error that names it.
func NewIgnore(extra []string) (*Ignore, error) {
	ig := &Ignore{}
	for _, list := range [][]string{DefaultIgnore, extra} {
		for _, p := range list {
			q := strings.ToLower(strings.TrimSpace(p))
			q = strings.TrimPrefix(q, "./")
			q = strings.TrimPrefix(q, "/")
			if q == "" {
				continue
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
				return nil, fmt.Errorf("redact: bad ignore pattern %q", p)
			}
			ig.patterns = append(ig.patterns, q)
		}
	}
	return ig, nil
}

// Match reports whether relPath (slash-separated, relative to the
// workspace) is ignored. As in .gitignore:
//   - a pattern without '/' matches a file or directory name at any depth
//     (".env" ignores "sub/.env", "secrets" ignores "a/secrets/x.txt");
//   - a pattern that matches a directory ignores everything under it;
//   - matching ignores letter case, since macOS and Windows file systems
//     do ("SERVER.PEM" is a key file too).
func (i *Ignore) Match(relPath string) bool {
	p := strings.ToLower(path.Clean(strings.ReplaceAll(relPath, `\`, "/")))
	p = strings.TrimPrefix(p, "./")
	p = strings.TrimPrefix(p, "/")
	if p == "." || p == "" {
		return false
	}
	for _, pat := range i.patterns {
		basename := !strings.Contains(pat, "/")
		// Try the path and each of its parent directories.
		for dir := p; ; {
			if matchOne(pat, dir, basename) {
				return true
			}
			k := strings.LastIndexByte(dir, '/')
			if k < 0 {
				break
			}
			dir = dir[:k]
		}
	}
	return false
}

func matchOne(pat, p string, basename bool) bool {
	if basename {
		p = path.Base(p)
	}
	ok, _ := doublestar.Match(pat, p) // patterns were validated
	return ok
}
