package redact

import (
	"strings"
	"testing"
)

func TestIgnore(t *testing.T) {
	ig, err := NewIgnore([]string{"config/prod/**", "*.sqlite", "secrets/", "./deploy/vault.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		// Defaults.
		{".env", true},
		{"sub/.env", true},
		{"services/api/.env.production", true},
		{".env.example", true},
		{"certs/server.pem", true},
		{"certs/SERVER.PEM", true},
		{"tls/private.key", true},
		{"home/.ssh/id_rsa", true},
		{"id_rsa.pub", true},
		{"keys/id_ed25519", true},
		{"deploy/keystore.p12", true},
		{"android/app/release.keystore", true},
		{".npmrc", true},
		{"packages/web/.npmrc", true},
		{".pypirc", true},
		{".netrc", true},
		{".git-credentials", true},
		{"credentials.json", true},
		{"ops/.aws/credentials", true},
		{"config/secrets.yml", true},
		{"config/secrets.yaml", true},
		{"secrets.json", true},
		{"infra/prod.tfvars", true},
		{"infra/terraform.tfstate", true},
		{"infra/terraform.tfstate.backup", true},
		{".kube/config", true},
		// Extras: a glob with a directory, a basename glob, a directory
		// pattern and a leading "./".
		{"config/prod/app.yaml", true},
		{"config/staging/app.yaml", false},
		{"data/cache.sqlite", true},
		{"secrets/db.txt", true},
		{"app/secrets/db.txt", true},
		{"deploy/vault.hcl", true},
		{"./deploy/vault.hcl", true},
		// Ordinary files.
		{"main.go", false},
		{"lsp/server.go", false},
		{"docs/environment.md", false},
		{"src/env.ts", false},
		{"config/secrets_test.go", false},
		{"keys.go", false},
		{"credentials.go", false},
		{"README.md", false},
		{"", false},
	} {
		if got := ig.Match(c.path); got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestIgnoreDefaultsOnly(t *testing.T) {
	ig, err := NewIgnore(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ig.Match("a/b/.env.local") || ig.Match("config/prod/app.yaml") {
		t.Error("defaults wrong")
	}
	for _, p := range DefaultIgnore {
		if _, err := NewIgnore([]string{p}); err != nil {
			t.Errorf("default pattern %q: %v", p, err)
		}
	}
}

func TestIgnoreBadGlob(t *testing.T) {
	_, err := NewIgnore([]string{"ok/**", "broken/[a-"})
	if err == nil || !strings.Contains(err.Error(), `"broken/[a-"`) {
		t.Fatalf("err %v, want one naming the bad pattern", err)
	}
}
