package workspace_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/analysis/workspace"
)

// TestStoreErrorBlamesSpaceOnlyForAFullDisk: a data directory that cannot
// be created under /proc, which reports no free space, fails with the real
// error, not with a full disk.
func TestStoreErrorBlamesSpaceOnlyForAFullDisk(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	getenv := func(k string) string {
		if k == "KODYLS_DATA_DIR" {
			return "/proc/kodyls"
		}
		return ""
	}
	svc := workspace.Open(context.Background(), workspace.Config{Getenv: getenv})
	defer svc.Close()
	if svc.StoreErr == nil {
		t.Fatal("a store opened under /proc")
	}
	msg := svc.StoreErr.Error()
	if strings.Contains(msg, "is full") || strings.Contains(msg, "free some space") || !strings.Contains(msg, "no such file or directory") {
		t.Errorf("store error %q: want the mkdir error, not a full disk", msg)
	}
}
