package prompts

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var versionsFile = filepath.Join("testdata", "versions.txt")

type versionRecord struct {
	version int
	hash    string
}

// sourceHash is what a prompt's version vouches for: its template source
// and, for the prompts that render the kodus-config defaults, those
// defaults, since changing them changes the rendered text as much as
// editing the template does.
func sourceHash(name string) string {
	h := sha256.New()
	// Line endings are normalised so that a checkout with CRLF endings
	// does not count as an edit.
	h.Write(bytes.ReplaceAll(Builtin().prompts[name].src, []byte("\r\n"), []byte("\n")))
	if ex, ok := Example(name); ok && rendersOverrides(ex) {
		h.Write([]byte("\n--- kodus_defaults.yml\n"))
		h.Write(bytes.ReplaceAll(defaultsYAML, []byte("\r\n"), []byte("\n")))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestVersions enforces the versioning rule: a prompt whose source changed
// must have a new version. testdata/versions.txt records the version and
// hash of every builtin; -update rewrites it, but never over a prompt that
// changed without a version bump, so the check cannot be skipped.
func TestVersions(t *testing.T) {
	recorded, err := readVersions(versionsFile)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatalf("%v (run go test ./prompts -update to create it)", err)
	}
	current := map[string]versionRecord{}
	for _, p := range Builtin().List() {
		current[p.Name] = versionRecord{p.Version, sourceHash(p.Name)}
	}

	blocking, stale := compareVersions(recorded, current)
	for _, m := range blocking {
		t.Error(m)
	}
	if !*update {
		for _, m := range stale {
			t.Error(m)
		}
		return
	}
	if len(blocking) > 0 {
		t.Logf("%s not rewritten until the versions above are bumped", versionsFile)
		return
	}
	if len(stale) > 0 || recorded == nil {
		if err := writeVersions(versionsFile, current); err != nil {
			t.Fatal(err)
		}
	}
}

// compareVersions compares the recorded versions with the current ones.
// blocking lists the prompts whose text changed without a version bump (or
// whose version went down): -update must not paper over them. stale lists
// differences that -update records.
func compareVersions(recorded, current map[string]versionRecord) (blocking, stale []string) {
	for _, name := range slices.Sorted(maps.Keys(current)) {
		cur := current[name]
		rec, ok := recorded[name]
		switch {
		case !ok:
			stale = append(stale, fmt.Sprintf("prompt %s is new: run go test ./prompts -update to record its version", name))
		case cur.hash != rec.hash && cur.version == rec.version:
			blocking = append(blocking, fmt.Sprintf("prompt %s changed; bump its version and run go test ./prompts -update", name))
		case cur.version < rec.version:
			blocking = append(blocking, fmt.Sprintf("prompt %s: version %d is lower than the recorded %d; versions only go up", name, cur.version, rec.version))
		case cur != rec:
			stale = append(stale, fmt.Sprintf("prompt %s: version %d is not recorded yet; run go test ./prompts -update", name, cur.version))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(recorded)) {
		if _, ok := current[name]; !ok {
			stale = append(stale, fmt.Sprintf("prompt %s no longer exists; run go test ./prompts -update to drop it from %s", name, versionsFile))
		}
	}
	return blocking, stale
}

func readVersions(file string) (map[string]versionRecord, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]versionRecord{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"name version sha256\", got %q", file, n, line)
		}
		v, err := strconv.Atoi(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: bad version %q", file, n, fields[1])
		}
		out[fields[0]] = versionRecord{v, fields[2]}
	}
	return out, sc.Err()
}

func writeVersions(file string, recs map[string]versionRecord) error {
	var b strings.Builder
	b.WriteString("# Versions of the builtin prompts and the SHA-256 of their sources\n")
	b.WriteString("# (with kodus_defaults.yml for the prompts that render it).\n")
	b.WriteString("# Written by go test ./prompts -update; a prompt whose hash changes\n")
	b.WriteString("# must get a new version first. Columns: name version sha256.\n")
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		fmt.Fprintf(&b, "%s %d %s\n", name, recs[name].version, recs[name].hash)
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

func TestCompareVersions(t *testing.T) {
	a1 := versionRecord{1, "aaaa"}
	tests := []struct {
		name              string
		recorded, current map[string]versionRecord
		blocking, stale   string // substrings expected, "" for none
	}{
		{"unchanged", map[string]versionRecord{"p": a1}, map[string]versionRecord{"p": a1}, "", ""},
		{"edited without bump", map[string]versionRecord{"p": a1}, map[string]versionRecord{"p": {1, "bbbb"}},
			"prompt p changed; bump its version and run go test ./prompts -update", ""},
		{"edited and bumped", map[string]versionRecord{"p": a1}, map[string]versionRecord{"p": {2, "bbbb"}}, "", "version 2 is not recorded"},
		{"bumped only", map[string]versionRecord{"p": a1}, map[string]versionRecord{"p": {2, "aaaa"}}, "", "version 2 is not recorded"},
		{"version down", map[string]versionRecord{"p": {3, "aaaa"}}, map[string]versionRecord{"p": {2, "bbbb"}}, "versions only go up", ""},
		{"new prompt", map[string]versionRecord{}, map[string]versionRecord{"p": a1}, "", "prompt p is new"},
		{"removed prompt", map[string]versionRecord{"p": a1}, map[string]versionRecord{}, "", "prompt p no longer exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocking, stale := compareVersions(tt.recorded, tt.current)
			check := func(kind string, got []string, want string) {
				t.Helper()
				if want == "" {
					if len(got) > 0 {
						t.Errorf("%s: got %q, want none", kind, got)
					}
					return
				}
				if len(got) != 1 || !strings.Contains(got[0], want) {
					t.Errorf("%s: got %q, want one containing %q", kind, got, want)
				}
			}
			check("blocking", blocking, tt.blocking)
			check("stale", stale, tt.stale)
		})
	}
}
