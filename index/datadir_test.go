package index

import (
	"strings"
	"testing"
)

func TestDataDir(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		source  string
		wantErr bool
	}{
		{"env wins", map[string]string{"KODYLS_DATA_DIR": "/data/k", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/data/k", SourceEnv, false},
		{"env relative refused", map[string]string{"KODYLS_DATA_DIR": "rel/k", "HOME": "/home/u"}, "", "", true},
		{"env cleaned", map[string]string{"KODYLS_DATA_DIR": "/data/k/", "HOME": "/home/u"}, "/data/k", SourceEnv, false},
		{"xdg", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/kodyls", SourceXDG, false},
		{"xdg relative ignored", map[string]string{"XDG_DATA_HOME": "xdg", "HOME": "/home/u"}, "/home/u/.local/share/kodyls", SourceDefault, false},
		{"default", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/kodyls", SourceDefault, false},
		{"empty env ignored", map[string]string{"KODYLS_DATA_DIR": "", "XDG_DATA_HOME": "", "HOME": "/home/u"}, "/home/u/.local/share/kodyls", SourceDefault, false},
		{"nothing set", map[string]string{}, "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, source, err := DataDir(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				if err == nil {
					t.Fatalf("DataDir = %q, %q; want error", dir, source)
				}
				if v := tc.env["KODYLS_DATA_DIR"]; v != "" && (!strings.Contains(err.Error(), `KODYLS_DATA_DIR "`+v+`" is a relative path`) || !strings.Contains(err.Error(), "absolute path")) {
					t.Errorf("error %q: want the variable, its value and what to do", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dir != tc.want || source != tc.source {
				t.Errorf("DataDir = %q, %q; want %q, %q", dir, source, tc.want, tc.source)
			}
		})
	}
}
