package fix

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/kodustech/kodyls/agents/tools"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/rules"
)

// A fix never changes kodyls's own configuration: kodus-config.yml decides
// which files a prompt may read (its ignorePaths) and how reviews run, and
// the rule files (Kody Rules, the assistants' instruction files kodyls
// imports) and prompt overrides say what later prompts ask of the model.
// A fix that emptied ignorePaths would let the next prompt read what it
// protected. Such edits are refused as edits to the build's definition
// are: never written, never built, shown for the user to make.

// OwnConfigurationReason begins the reason of every edit refused because it
// changes kodyls's own configuration.
const OwnConfigurationReason = "kodyls never applies a change to its own configuration"

// ErrOwnConfiguration marks edits refused because they change kodyls's
// own configuration.
var ErrOwnConfiguration = errors.New("edits to kodyls's own configuration are refused")

// ruleSources are the rule files kodyls reads.
var ruleSources = rules.DefaultRegistry()

// kodyDirs are the directories that hold kodyls's configuration only.
var kodyDirs = []string{".kody", ".kody-rules"}

// knownNames are the path components of kodyls's configuration files, in
// the case kodyls reads them: a path is matched against them whatever its
// case, since a case-insensitive file system opens .KODY/rules/x.md as
// .kody/rules/x.md.
var knownNames = func() map[string]string {
	m := map[string]string{}
	add := func(p string) {
		for part := range strings.SplitSeq(p, "/") {
			m[strings.ToLower(part)] = part
		}
	}
	for _, p := range ruleSources.WatchPaths() {
		add(p)
	}
	for _, p := range append(kodyDirs, kodusconfig.FileNames...) {
		add(p)
	}
	return m
}()

// ownConfiguration says why the edit of rel (clean, slash-separated,
// relative to root) would change kodyls's own configuration, as named or
// where its symbolic links lead, or returns "".
func ownConfiguration(root, rel string) string {
	if what := configKind(canonicalCase(rel)); what != "" {
		return fmt.Sprintf("%s: it is %s", OwnConfigurationReason, what)
	}
	if real, ok := (tools.Workspace{Root: root}).Resolve(rel); ok && real != rel {
		if what := configKind(canonicalCase(real)); what != "" {
			return fmt.Sprintf("%s: it leads to %s, %s", OwnConfigurationReason, real, what)
		}
	}
	return ""
}

// canonicalCase spells the components of rel that name a configuration
// file or directory, in any case, as kodyls reads them.
func canonicalCase(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if known, ok := knownNames[strings.ToLower(p)]; ok {
			parts[i] = known
		}
	}
	return strings.Join(parts, "/")
}

// configKind says what kind of kodyls configuration rel is, or "".
func configKind(rel string) string {
	base := path.Base(rel)
	for _, n := range kodusconfig.FileNames {
		if base == n {
			return "the configuration of the review and of the files prompts may read"
		}
	}
	first, _, _ := strings.Cut(rel, "/")
	for _, d := range kodyDirs {
		if first == d {
			if src, ok := ruleSources.SourceOf(rel); ok {
				return fmt.Sprintf("a rule file (%s)", src.Name())
			}
			return "a file of " + d + "/, which holds Kody Rules and prompt overrides"
		}
	}
	if src, ok := ruleSources.SourceOf(rel); ok {
		return fmt.Sprintf("a rule file kodyls imports (%s)", src.Name())
	}
	return ""
}
